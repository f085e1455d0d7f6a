# A JVM started with no flag, no agent and no perf map, profiled as it
# runs (kprof -p PID): its Java frames named from its VM structs
# (docs/java.md), the method C2 inlined as a frame of its own, the
# compiled frames (which keep no frame pointer) stepped so that stacks
# are whole from the thread's base, interpreted frames named too, and the
# JVM still running afterwards; Debian's JDK, and Temurin's JDK 25 where
# installed (its inlined methods are not read: docs/java.md). Before:
# every Java frame was "[unknown: anonymous, no perf map]" and every stack
# ended at the first of them.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

command -v javac >/dev/null && command -v java >/dev/null ||
	skip "javac/java not installed (scripts/deps --test installs default-jdk-headless)"
mkdir -p "$T/classes"
javac -d "$T/classes" "$KP_TESTS/workloads/java/JavaLive.java" 2>"$T/javac.err" ||
	{ cat "$T/javac.err"; fail "javac JavaLive.java"; finish; }

# live JAVA NAME INLINING: the service run by JAVA and recorded; INLINING
# (yes/no): the JDK's inlined methods are read (docs/java.md: not JDK 25's)
# A "container": the JVM in mount and pid namespaces of its own, its JDK
# bind-mounted at a path that outside holds nothing (an empty folder), its
# own pid 1. Starts JAVA so; prints the JVM's pid as the host sees it.
start_contained() { # java, output file, error file
	local home ns jvm
	home=$(dirname "$(dirname "$(readlink -f "$(command -v "$1")")")")
	mkdir -p "$T/jdk"
	unshare --mount --pid --fork --mount-proc sh -c \
		'mount --bind "$1" "$2" && mount -t tmpfs none "$1" && exec "$2/bin/java" -cp "$3" JavaLive 0 12' \
		sh "$home" "$T/jdk" "$T/classes" >"$2" 2>"$3" &
	ns=$!
	for _ in $(seq 100); do
		jvm=$(pgrep -P "$ns" | head -1)
		[ -n "$jvm" ] && grep -q '^pid 1$' "$2" && break
		sleep 0.1
	done
	echo "$jvm"
}

live() { # java, label, inlining read (yes/no), container (optional)
	local java=$1 v=$2 inlining=$3 jvm out main named inlined whole workers wrun deep
	# the service: runs until killed; its pid is its first line
	if [ "${4:-}" = container ]; then
		jvm=$(start_contained "$java" "$T/$v.java.out" "$T/$v.java.err")
		check "$v: the JVM started in its namespaces, as pid 1 there" grep -q '^pid 1$' "$T/$v.java.out"
		[ -n "$jvm" ] || return
		at_exit "kill $jvm 2>/dev/null"
		check "$v: its libjvm.so's path names no file outside" \
			sh -c "grep -q ' $T/jdk/lib/server/libjvm.so' /proc/$jvm/maps && [ ! -e $T/jdk/lib/server/libjvm.so ]"
	else
		"$java" -cp "$T/classes" JavaLive 0 12 >"$T/$v.java.out" 2>"$T/$v.java.err" &
		jvm=$!
		at_exit "kill $jvm 2>/dev/null"
		for _ in $(seq 100); do
			grep -q '^pid ' "$T/$v.java.out" && break
			sleep 0.1
		done
		check "$v: $v: the JVM started" grep -q "^pid $jvm\$" "$T/$v.java.out"
	fi
	remove_map_of "$jvm"
	# JIT warm-up: C2 compiles the hot loop in well under a second of its CPU
	sleep 1.5

	out=$T/$v.folded
	"$KPROF" -p "$jvm" -d 3 -F 999 -f folded --annotate -o "$out" >"$T/$v.out" 2>"$T/$v.err"
	check "$v: exit status 0" [ $? -eq 0 ]
	cat "$T/$v.err"
	check "$v: the JVM runs on" kill -0 "$jvm"
	check "$v: no perf map was written (none was asked for)" [ ! -e "/tmp/perf-$jvm.map" ]

	# the main thread's samples (its comm is java's)
	main=$(count_matching "$out" '^java;')
	named=$(count_matching "$out" '^java;.*JavaLive\.[a-zA-Z]+\([^;]*\)_\[j\]')
	inlined=$(count_matching "$out" '^java;.*long JavaLive\.loopKprof\(int\)_\[[ji]\];long JavaLive\.mixKprof\(long, int\)_\[i\]')
	whole=$(count_matching "$out" '^java;[^;]*clone[^;]*;start_thread;ThreadJavaMain;JavaMain;.*;void JavaLive\.main\(java\.lang\.String\[\]\)_\[j\];')
	echo "$v: main thread: $main samples, $named with Java methods named, $inlined in mixKprof inlined into loopKprof, $whole whole from start_thread through main"
	show_top "$out" 3
	check "$v: at least 50 samples of the main thread ($main)" [ "$main" -ge 50 ]
	check "$v: Java methods named in >= 90% of them ($named)" at_least_pct "$named" "$main" 90
	check "$v: stacks whole from the thread's base through main in >= 85% ($whole)" at_least_pct "$whole" "$main" 85
	if [ "$inlining" = yes ]; then
		check "$v: the inlined method is a frame of its own in >= 80% ($inlined)" at_least_pct "$inlined" "$main" 80
		check "$v: the 12 levels of handleKprof between main and the loop" \
			grep -qE '^java;.*(;long JavaLive\.handleKprof\(int, int\)_\[[ji]\]){13};long JavaLive\.loopKprof' "$out"
	fi
	# the workers: Thread.run (interpreted: run once) down to 600 levels of
	# compiled recursion
	workers=$(count_matching "$out" '^worker-[01];')
	wrun=$(count_matching "$out" '^worker-[01];[^;]*clone[^;]*;start_thread;.*;void java\.lang\.Thread\.run\(\)_\[j\];')
	echo "$v: workers: $workers samples, $wrun whole from start_thread through Thread.run"
	check "$v: the worker threads' stacks whole through Thread.run in >= 85% ($wrun of $workers)" \
		at_least_pct "$wrun" "$workers" 85
	# 600 compiled frames are more than the 16 KiB copy holds: the walk goes
	# on over the live stack (docs/java.md, "Deep stacks")
	# (a JDK whose inlined methods are not read shows fewer: C2 inlines
	# the recursion into itself)
	if [ "$inlining" = yes ]; then
		deep=$(awk '/^worker-[01];[^;]*clone[^;]*;start_thread;.*Thread\.run/ { n = $NF; if (gsub(/;long JavaLive\.deepKprof\(int\)_\[[ji]\]/, "&") > 600) s += n } END { print s + 0 }' "$out")
		check "$v: worker stacks 600 levels deep (past the copy) whole ($deep samples)" [ "$deep" -gt 0 ]
	fi
	# the main thread's stacks fit in the copy: none of their frames may
	# fail to check out (past the copy, the live stack the workers' deep
	# stacks are read on may have moved on: a stale return address there
	# is named as what it is, and counted against their 85% above)
	grep 'unknown: hotspot' "$out" | cut -c1-300 | head -3
	check "$v: no frame of the main thread left [unknown: hotspot: ...]" \
		lacks "$out" '^java;.*unknown: hotspot'
	# windows (--every): each window is a profile of its own, and the
	# location ids of Java frames cached for one are not the next one's
	# (they named other functions in the windows after the first, once
	# another process's frames made the windows' locations in other
	# orders: a shell loop beside the JVM here)
	if [ "${4:-}" != container ]; then
		local loop
		mkdir -p "$T/$v.win"
		bash -c 'i=0; while :; do i=$((i + 1)); x=$(printf "%d" "$i"); done' &
		loop=$!
		at_exit "kill $loop 2>/dev/null"
		"$KPROF" -p "$jvm,$loop" -d 3.5 --every 1 -F 999 -o "$T/$v.win/w-%H%M%S.kprof" 2>"$T/$v.win.err"
		check "$v: --every 1: exit status 0" [ $? -eq 0 ]
		for w in $(ls "$T/$v.win" | sed -n '2,$p'); do
			"$KPROF" report "$T/$v.win/$w" -f folded --annotate -o "$T/$v.win/$w.folded"
			main=$(count_matching "$T/$v.win/$w.folded" '^java;')
			named=$(count_matching "$T/$v.win/$w.folded" '^java;.*JavaLive\.[a-zA-Z]+\([^;]*\)_\[j\]')
			check "$v: window $w: Java methods named in >= 90% of the main thread's $main samples ($named)" \
				at_least_pct "$named" "$main" 90
			check "$v: window $w: no kprof function inside the JVM's stacks" \
				lacks "$T/$v.win/$w.folded" '^java;.*(kp_|mem_readv)'
		done
		kill "$loop"
	fi
	kill "$jvm"
}

# Debian's JDK (17: its inlined methods read), and Temurin's 25 where
# installed (named and whole, its inlined methods not read)
live java "$(java -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/jdk\1/p')" yes
# the same JVM in a container (docs/java.md, "Containers")
if [ "$(id -u)" -eq 0 ] && unshare --mount --pid --fork --mount-proc true 2>/dev/null; then
	live java "$(java -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/jdk\1/p')-container" yes container
else
	echo "the container run needs root and unshare --mount --pid: not here"
fi
for j in /usr/lib/jvm/temurin-25*/bin/java; do
	[ -x "$j" ] && live "$j" jdk25 no
done
finish
