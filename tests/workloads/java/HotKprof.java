// A hot Java method with a distinctive name, kept out of its caller
// (-XX:CompileCommand=dontinline) so its compiled code is a frame of its
// own; -XX:+DumpPerfMapAtExit names it in /tmp/perf-PID.map at exit.
// Usage: java HotKprof SECONDS
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
		long end = System.nanoTime() + (long)(seconds * 1e9), sink = 0;
		while (System.nanoTime() < end)
			sink += hotMethodKprof(100000);
		if (sink == 42)
			System.out.println(sink);
	}
}
