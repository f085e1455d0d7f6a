# Node with --perf-basic-prof: V8 names its compiled code in
# /tmp/perf-PID.map; the hot JS function must show as a JIT frame, under
# the exact name V8 wrote, carrying most of the samples.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

node=$(command -v node || command -v nodejs) || skip "node is not installed (scripts/deps --test installs nodejs)"
js=$KP_TESTS/workloads/js/hot.js

for flag in --perf-basic-prof --perf-basic-prof-only-functions; do
	out=$T/node$flag.folded
	"$KPROF" -F 499 -f folded --annotate -o "$out" -- "$node" "$flag" "$js" 1.5 >"$T/out" 2>"$T/err"
	check "$flag: exit status 0" [ $? -eq 0 ]
	pid=$(sed -n 's/^pid //p' "$T/out")
	remove_map_of "$pid"
	# the name as V8 wrote it: "JS:*hotLoopKprof /path/hot.js:6:22" (node
	# >= 18) or "LazyCompile:*hotLoopKprof /path/hot.js:6" (older)
	name=$(grep -m1 -E ' [A-Za-z]+:\*hotLoopKprof ' "/tmp/perf-$pid.map" | cut -d' ' -f3-)
	echo "$flag: V8 named the optimized code '$name'"
	check "$flag: V8 wrote an optimized entry for hotLoopKprof" [ -n "$name" ]
	total=$(count_matching "$out" '^node;')
	# the hot function is the leaf (or under an interrupt's kernel frames)
	re_name=$(printf '%s' "$name" | sed 's/[][\.*^$()+?{}|]/\\&/g')
	hot=$(count_matching "$out" "^node;(.*;)?$re_name"'_\[j\](;[^;]*_\[k\])*$')
	anyhot=$(count_matching "$out" '^node;(.*;)?[A-Za-z]+:[*~^]?hotLoopKprof [^;]*hot\.js:[0-9:]+_\[j\](;[^;]*_\[k\])*$')
	unk=$(count_matching "$out" '^node;(.*;)?\[unknown[^;]*\](_\[j\])?$')
	echo "$flag: node $total samples; in '$name' $hot, in any tier of hotLoopKprof $anyhot, [unknown] leaf $unk"
	show_top "$out" 3
	check "$flag: at least 100 samples ($total)" [ "$total" -ge 100 ]
	check "$flag: the optimized hotLoopKprof, named as V8 wrote it, is a JIT leaf with >= 50%" \
		at_least_pct "$hot" "$total" 50
	check "$flag: hotLoopKprof in any tier carries >= 60%" at_least_pct "$anyhot" "$total" 60
	check "$flag: [unknown] leaves under 5%" [ "$((unk * 20))" -lt "$total" ]
	check "$flag: V8 builtins are named from the node binary" grep -qE '^node;(.*;)?Builtins_JSEntry' "$out"
done
finish
