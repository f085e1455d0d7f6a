# Node with --perf-prof writes a jitdump (jit-PID.dump in its current
# directory) and maps it for a profiler to find: kprof reads it while node
# runs and at its exit, and names the JIT code with its function, its
# script and the line of the sampled address (the caller at the line of
# its call). A tiny hot function (fibHotKernel) called from a hot loop
# (jsBusyLoop, --no-turbo-inlining keeps the two apart): the hot function
# and its caller are named with script and line, the hot function under
# its caller in >= 95% of its samples; with a perf map as well
# (--perf-basic-prof), the jitdump's names win.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

node=$(command -v node || command -v nodejs) || skip "node is not installed (scripts/deps --test installs nodejs)"
js=$KP_TESTS/workloads/js/calls.js
flags=(--perf-prof --interpreted-frames-native-stack --perf-prof-unwinding-info --no-turbo-inlining)

# counts FILE: "HOT HOT_LINED UNDER CALLER_LINED": samples whose JS leaf
# is fibHotKernel, of those named with script:line, of those directly
# under jsBusyLoop, and of those whose jsBusyLoop frame has its line
counts() {
	awk -v js="$js" '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		if (line !~ /fibHotKernel[^;]*_\[j\](;[^;]*_\[k\])*$/) next
		hot += n
		if (index(line, "fibHotKernel " js ":") && line ~ /fibHotKernel [^;]*\.js:[0-9]+_\[j\](;[^;]*_\[k\])*$/) lined += n
		if (line ~ /jsBusyLoop[^;]*_\[j\];[^;]*fibHotKernel[^;]*_\[j\](;[^;]*_\[k\])*$/) {
			under += n
			if (index(line, "jsBusyLoop " js ":") && line ~ /jsBusyLoop [^;]*\.js:[0-9]+_\[j\];[^;]*fibHotKernel/) caller += n
		}
	} END { print hot + 0, lined + 0, under + 0, caller + 0 }' "$1"
}

run() { # name cpu_seconds min_samples extra-node-flags...
	local name=$1 secs=$2 min=$3
	shift 3
	mkdir -p "$T/$name"
	(cd "$T/$name" && "$KPROF" -F 999 -f folded --annotate --stats -o "$T/$name.folded" -- \
		"$node" "${flags[@]}" "$@" "$js" "$secs" >"$T/$name.out" 2>"$T/$name.err")
	check "$name: exit status 0" [ $? -eq 0 ]
	pid=$(sed -n 's/^pid //p' "$T/$name.out")
	remove_map_of "$pid"
	check "$name: node wrote its jitdump in its directory" [ -s "$T/$name/jit-$pid.dump" ]
	read -r hot lined under caller <<<"$(counts "$T/$name.folded")"
	echo "$name: fibHotKernel $hot samples, $lined named with script:line, $under under jsBusyLoop, $caller of those with jsBusyLoop's line"
	show_matching "$T/$name.folded" 'fibHotKernel' 3
	check "$name: at least $min samples in fibHotKernel ($hot)" [ "$hot" -ge "$min" ]
	check "$name: >= 95% of fibHotKernel's samples named with script:line" at_least_pct "$lined" "$hot" 95
	check "$name: >= 95% of fibHotKernel's samples directly under jsBusyLoop" at_least_pct "$under" "$hot" 95
	check "$name: jsBusyLoop named with script:line in >= 95% of those" at_least_pct "$caller" "$under" 95
	check "$name: the call's line names the caller" grep -qF "jsBusyLoop $js:27_[j];" "$T/$name.folded"
	check "$name: --stats counts the jitdump's code loads" \
		grep -qE '^kprof: jitdumps: [1-9][0-9]* code loads read' "$T/$name.err"
	check "$name: no note of a refused or damaged jitdump" \
		bash -c "! grep -E 'jit-[0-9]+\.dump: (skipped|not|owned)|ignored .*jit-|stopped reading' '$T/$name.err'"
}

run jitdump 1.0 200
check "jitdump: no perf map was written (the names came from the jitdump)" [ ! -e "/tmp/perf-$pid.map" ]
run both 0.6 100 --perf-basic-prof
check "both: node also wrote its perf map" [ -s "/tmp/perf-$pid.map" ]
finish
