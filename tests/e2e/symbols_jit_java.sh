# Java with -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer: HotSpot
# writes /tmp/perf-PID.map only when it exits, so the map must be read at
# the process's exit (or at the end of the run), not when the first JIT
# sample arrives. The hot method must show as a JIT frame by name.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

command -v javac >/dev/null && command -v java >/dev/null ||
	skip "javac/java not installed (scripts/deps --test installs default-jdk-headless)"

# (asked without turning it on: -version with it on would leave a map)
java -XX:+UnlockDiagnosticVMOptions -XX:+PrintFlagsFinal -version 2>/dev/null | grep -qw DumpPerfMapAtExit ||
	skip "this JVM has no -XX:+DumpPerfMapAtExit (JDK 17 or later): $(java -version 2>&1 | head -1)"
mkdir -p "$T/classes"
javac -d "$T/classes" "$KP_TESTS/workloads/java/HotKprof.java" 2>"$T/javac.err" ||
	{ cat "$T/javac.err"; fail "javac HotKprof.java"; finish; }
jopts=(-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer
	-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,HotKprof::hotMethodKprof
	-cp "$T/classes" HotKprof)

out=$T/java.folded
"$KPROF" -F 499 -f folded --annotate -o "$out" -- java "${jopts[@]}" 2 >"$T/out" 2>"$T/err"
check "exit status 0" [ $? -eq 0 ]
pid=$(sed -n 's/^pid //p' "$T/out")
remove_map_of "$pid"
check "HotSpot wrote its perf map at exit" grep -q 'HotKprof\.hotMethodKprof' "/tmp/perf-$pid.map"
grep -m1 'HotKprof\.hotMethodKprof' "/tmp/perf-$pid.map"
total=$(total_count "$out")
hot=$(count_matching "$out" '^java;(.*;)?[^;]*HotKprof\.hotMethodKprof[^;]*_\[j\](;[^;]*_\[k\])*$')
# with frame pointers preserved, the compiled main (or the interpreter
# running it) is the hot method's caller
under=$(count_matching "$out" '^java;(.*;)?[^;]*(HotKprof\.main|Interpreter)[^;]*;[^;]*HotKprof\.hotMethodKprof[^;]*_\[j\](;[^;]*_\[k\])*$')
echo "java: $total samples in all threads, $hot in HotKprof.hotMethodKprof, $under of them under main"
show_top "$out" 3
cat "$T/err"
check "at least 100 samples ($total)" [ "$total" -ge 100 ]
check "HotKprof.hotMethodKprof is a JIT leaf with >= 40% of all samples" at_least_pct "$hot" "$total" 40
check "its caller is found through the preserved frame pointers (>= 80% of it)" at_least_pct "$under" "$hot" 80
check "no JIT leaf left [unknown] in the main thread for more than 10%" \
	at_least_pct "$((total - $(count_matching "$out" '^java;(.*;)?\[unknown[^;]*\](_\[j\])?$')))" "$total" 90

finish
