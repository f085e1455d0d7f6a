# JIT code sampled in its prologue or epilogue keeps its caller: Node calls
# a tiny function (fibHotKernel) from a hot loop (jsBusyLoop) so often that
# many samples land before the callee's frame is set up, where the kernel's
# frame-pointer walk skips jsBusyLoop. kprof's default mode finds the return
# address on the stack snapshot.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

node=$(command -v node || command -v nodejs) || skip "node is not installed (scripts/deps --test installs nodejs)"
js=$KP_TESTS/workloads/js/calls.js

# share FILE: "UNDER LEAF": samples whose JS leaf is fibHotKernel, and of
# those the ones whose caller is jsBusyLoop
share() {
	awk '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		if (line !~ /fibHotKernel[^;]*_\[j\](;[^;]*_\[k\])*$/) next
		leaf += n
		if (line ~ /jsBusyLoop[^;]*_\[j\];[^;]*fibHotKernel[^;]*_\[j\](;[^;]*_\[k\])*$/) under += n
	} END { print under + 0, leaf + 0 }' "$1"
}

for mode in auto fp; do
	out=$T/$mode.folded
	"$KPROF" -g $mode -F 999 -f folded --annotate -o "$out" -- "$node" --perf-basic-prof --no-turbo-inlining "$js" 2 >"$T/$mode.out" 2>"$T/$mode.err"
	check "$mode: exit status 0" [ $? -eq 0 ]
	remove_map_of "$(sed -n 's/^pid //p' "$T/$mode.out")"
	r=$(share "$out")
	under=${r% *}
	leaf=${r#* }
	echo "$mode: $under of $leaf samples in fibHotKernel are directly under jsBusyLoop"
	eval "under_$mode=$under leaf_$mode=$leaf"
done
check "auto: at least 200 samples in fibHotKernel ($leaf_auto)" [ "$leaf_auto" -ge 200 ]
check "auto: >= 95% of fibHotKernel's samples have jsBusyLoop as their caller" \
	at_least_pct "$under_auto" "$leaf_auto" 95
finish
