// A hot Java method with a distinctive name, kept out of its caller
// (-XX:CompileCommand=dontinline) so its compiled code is a frame of its
// own; -XX:+DumpPerfMapAtExit names it in /tmp/perf-PID.map at exit.
// Usage: java HotKprof CPU_SECONDS (CPU time of the main thread, not wall
// time, so that on a loaded machine the hot method still dwarfs start-up).
public class HotKprof {
	static long hotMethodKprof(int n) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += (i * (long)i) % 7;
		return s;
	}

	public static void main(String[] args) {
		double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 1.0;
		System.out.println("pid " + ProcessHandle.current().pid());
		java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
		long end = mx.getCurrentThreadCpuTime() + (long)(seconds * 1e9), sink = 0;
		while (mx.getCurrentThreadCpuTime() < end)
			sink += hotMethodKprof(100000);
		if (sink == 42)
			System.out.println(sink);
	}
}
