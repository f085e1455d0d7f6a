// A service-like Java program for profiling a JVM started with no flags
// (tests/e2e/java_live.sh, scripts/bench-java-live): the main thread
// serves "requests" through a stack of DEPTH calls to a compiled loop
// that calls a hot method (mixKprof, a loop of its own) C2 inlines into
// it, with a cold path (coldKprof, run once in 200 requests: interpreted
// for its first few hundred runs, C1's later);
// worker threads run a recursion deeper than kprof's stack copy (600 levels).
// Usage: java JavaLive CPU_SECONDS [DEPTH] (CPU time of the main thread).
public class JavaLive {
	static volatile long sink;

	// small and hot: C2 inlines it into loopKprof (its loop is long enough
	// to keep a safepoint poll, where HotSpot records the scopes of
	// inlined code: docs/java.md)
	static long mixKprof(long s, int n) {
		for (int i = 0; i < n; i++)
			s = s * 31 + (i ^ (s >>> 7));
		return s;
	}

	static long loopKprof(int n) {
		long s = 0;
		for (int k = 0; k < n; k++)
			s += mixKprof(s, 2000 + (k & 7));
		return s;
	}

	// rarely run: the interpreter runs it, until C1 compiles it
	static long coldKprof(int n) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += Integer.toString(i).length();
		return s;
	}

	static long handleKprof(int req, int depth) {
		if (depth > 0)
			return handleKprof(req, depth - 1) + 1;
		long s = loopKprof(10);
		if (req % 200 == 199)
			s += coldKprof(20);
		return s;
	}

	static long deepKprof(int depth) {
		if (depth > 0)
			return deepKprof(depth - 1) + 1;
		return loopKprof(100);
	}

	public static void main(String[] args) throws Exception {
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2.0;
		int depth = args.length > 1 ? Integer.parseInt(args[1]) : 12;
		for (int t = 0; t < 2; t++) {
			Thread w = new Thread(() -> {
				for (;;) {
					sink += deepKprof(600);
					try {
						Thread.sleep(2);
					} catch (InterruptedException e) {
						return;
					}
				}
			}, "worker-" + t);
			w.setDaemon(true);
			w.start();
		}
		System.out.println("pid " + ProcessHandle.current().pid());
		System.out.flush();
		java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
		long end = mx.getCurrentThreadCpuTime() + (long)(seconds * 1e9);
		for (int req = 0; seconds <= 0 || mx.getCurrentThreadCpuTime() < end; req++)
			sink += handleKprof(req, depth);
	}
}
