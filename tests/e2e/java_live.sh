# A JVM started with no flag, no agent and no perf map, profiled as it
# runs (kprof -p PID): its Java frames named from its VM structs
# (docs/java.md), the method C2 inlined as a frame of its own, the
# compiled frames (which keep no frame pointer) stepped so that stacks
# are whole from the thread's base, interpreted frames named too, and the
# JVM still running afterwards. Before: every Java frame was "[unknown:
# anonymous, no perf map]" and every stack ended at the first of them.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

command -v javac >/dev/null && command -v java >/dev/null ||
	skip "javac/java not installed (scripts/deps --test installs default-jdk-headless)"
mkdir -p "$T/classes"
javac -d "$T/classes" "$KP_TESTS/workloads/java/JavaLive.java" 2>"$T/javac.err" ||
	{ cat "$T/javac.err"; fail "javac JavaLive.java"; finish; }

# the service: runs until killed; its pid is its first line
java -cp "$T/classes" JavaLive 0 12 >"$T/java.out" 2>"$T/java.err" &
jvm=$!
at_exit "kill $jvm 2>/dev/null"
for _ in $(seq 100); do
	grep -q '^pid ' "$T/java.out" && break
	sleep 0.1
done
check "the JVM started" grep -q "^pid $jvm\$" "$T/java.out"
remove_map_of "$jvm"
# JIT warm-up: C2 compiles the hot loop in well under a second of its CPU
sleep 1.5

out=$T/live.folded
"$KPROF" -p "$jvm" -d 3 -F 999 -f folded --annotate -o "$out" >"$T/out" 2>"$T/err"
check "exit status 0" [ $? -eq 0 ]
cat "$T/err"
check "the JVM runs on" kill -0 "$jvm"
check "no perf map was written (none was asked for)" [ ! -e "/tmp/perf-$jvm.map" ]

# the main thread's samples (its comm is java's)
main=$(count_matching "$out" '^java;')
named=$(count_matching "$out" '^java;.*JavaLive\.[a-zA-Z]+\([^;]*\)_\[j\]')
inlined=$(count_matching "$out" '^java;.*long JavaLive\.loopKprof\(int\)_\[[ji]\];long JavaLive\.mixKprof\(long, int\)_\[i\]')
whole=$(count_matching "$out" '^java;[^;]*clone[^;]*;start_thread;ThreadJavaMain;JavaMain;.*;void JavaLive\.main\(java\.lang\.String\[\]\)_\[j\];')
echo "main thread: $main samples, $named with Java methods named, $inlined in mixKprof inlined into loopKprof, $whole whole from start_thread through main"
show_top "$out" 3
check "at least 50 samples of the main thread ($main)" [ "$main" -ge 50 ]
check "Java methods named in >= 90% of them ($named)" at_least_pct "$named" "$main" 90
check "the inlined method is a frame of its own in >= 80% ($inlined)" at_least_pct "$inlined" "$main" 80
check "stacks whole from the thread's base through main in >= 85% ($whole)" at_least_pct "$whole" "$main" 85
check "the 12 levels of handleKprof between main and the loop" \
	grep -qE '^java;.*(;long JavaLive\.handleKprof\(int, int\)_\[[ji]\]){13};long JavaLive\.loopKprof' "$out"
# the workers: Thread.run (interpreted: run once) down to 600 levels of
# compiled recursion
workers=$(count_matching "$out" '^worker-[01];')
wrun=$(count_matching "$out" '^worker-[01];[^;]*clone[^;]*;start_thread;.*;void java\.lang\.Thread\.run\(\)_\[j\];')
echo "workers: $workers samples, $wrun whole from start_thread through Thread.run"
check "the worker threads' stacks whole through Thread.run in >= 85% ($wrun of $workers)" \
	at_least_pct "$wrun" "$workers" 85
# 600 compiled frames are more than the 16 KiB copy holds: the walk goes
# on over the live stack (docs/java.md, "Deep stacks")
deep=$(awk '/^worker-[01];[^;]*clone[^;]*;start_thread;.*Thread\.run/ { n = $NF; if (gsub(/;long JavaLive\.deepKprof\(int\)_\[[ji]\]/, "&") > 600) s += n } END { print s + 0 }' "$out")
check "worker stacks 600 levels deep (past the copy) whole ($deep samples)" [ "$deep" -gt 0 ]
check "no frame left [unknown: hotspot: ...]" lacks "$out" 'unknown: hotspot'
finish
