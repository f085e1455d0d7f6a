# A system-wide recording with Debian's bash busy in a shell loop: bash is
# built without frame pointers, so the kernel's frame-pointer walk gives
# towers of [unknown] up to the depth limit; the default mode unwinds it
# with CFI to its outermost frame, at a sane depth.
#
# kp-e2e: whole-machine (it samples every CPU: no other end-to-end test
# runs beside it; tests/CMakeLists.txt)
. "$(dirname "$0")/lib.bash"

record_beside_bash 'f() { : $((i++)); }; while :; do f; done' 499 "$T/sys.folded" "$T/err"
check "exit status 0" [ "$status" -eq 0 ]
cat "$T/err"

# stats over the loop's own stacks: samples; whole (root frame _start);
# deepest stack; the longest run of [unknown] frames; samples with
# [truncated]; samples whose first frame below the root is [unknown] (a
# tower from the root, the frame-pointer walk's signature)
read -r total whole depth run trunc rootunk < <(awk -v root="bash-$loop" '{
	n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
	k = split(line, f, ";")
	if (f[1] != root) next
	total += n
	if (f[2] == "_start") whole += n
	if (f[2] ~ /^\[unknown[]:]/) rootunk += n
	if (line ~ /\[truncated\]/) trunc += n
	if (k - 1 > depth) depth = k - 1
	r = 0
	for (i = 2; i <= k; i++) { if (f[i] ~ /^\[unknown[]:]/) { r++; if (r > run) run = r } else r = 0 }
} END { print total + 0, whole + 0, depth + 0, run + 0, trunc + 0, rootunk + 0 }' "$T/sys.folded")
echo "bash loop: $total samples, $whole from _start, depth <= $depth, longest [unknown] run $run, $trunc truncated, $rootunk with [unknown] under the root"
check "the loop is sampled ($total)" [ "$total" -ge 100 ]
check ">= 95% of its stacks are whole (from _start)" at_least_pct "$whole" "$total" 95
# bash's stacks for this loop are about 20-40 frames; a garbage walk runs
# to the kernel's limit (127)
check "a sane depth ($depth <= 80)" [ "$depth" -le 80 ]
check "no [unknown] tower under the root ($rootunk)" [ "$rootunk" -eq 0 ]
# stripped bash names its exported functions, its static ones by where
# their FDEs start (bash+0x...); a frame nothing names is [unknown], never
# a run as long as a garbage walk
check "no long run of [unknown] ($run <= 16)" [ "$run" -le 16 ]
check "the summary counts truncated stacks" grep -qE '[0-9]+ stacks truncated' "$T/err"
finish
