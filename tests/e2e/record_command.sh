# Sampling a command: its exact stack carries most samples, with and
# without threads, in folded and SVG output.
. "$(dirname "$0")/lib.bash"

out=$T/spin.folded
"$KPROF" -F 499 -f folded -o "$out" -- "$KP_WORKLOADS/spin_fp" 1.5 >"$T/stdout" 2>"$T/err"
check "exit status 0" [ $? -eq 0 ]
check "summary line on stderr" grep -Eq "samples, .* lost, 1 process, " "$T/err"
total=$(count_matching "$out" '^spin_fp;')
leaf=$(count_matching "$out" '^spin_fp;(.*;)?main;spin_outer;spin_middle;spin_leaf$')
echo "samples of spin_fp: $total, in main;spin_outer;spin_middle;spin_leaf: $leaf"
check "some hundreds of samples" [ "$total" -ge 300 ]
check "the exact stack carries >= 80% of them" at_least_pct "$leaf" "$total" 80
check "folded lines are sorted" sh -c "LC_ALL=C sort -c '$out'"
check "with -o, nothing on stdout" [ ! -s "$T/stdout" ]
# without -o the profile is all that stdout gets: every line is folded
"$KPROF" -F 199 -f folded -- "$KP_WORKLOADS/spin_fp" 0.3 >"$T/stdout.folded" 2>/dev/null
check "without -o, stdout holds only folded lines" \
	awk 'NF < 2 || $NF !~ /^[0-9]+$/ { bad = 1 } END { exit bad || NR == 0 }' "$T/stdout.folded"

# threads are followed: two extra threads spin in the same functions
"$KPROF" -F 499 -f folded -o "$T/threads.folded" -- "$KP_WORKLOADS/spin_fp" 1 2 2>/dev/null
thr=$(count_matching "$T/threads.folded" '^spin_fp;(.*;)?start_thread;(.*;)?thread_main;spin_outer;spin_middle;spin_leaf$')
all=$(total_count "$T/threads.folded")
echo "samples in threads: $thr of $all"
# three spinning threads: two thirds of the samples are in the new ones
check "threads of the command are sampled" at_least_pct "$thr" "$all" 40

# --pid / --tid roots (and their --per-pid / --per-tid aliases)
"$KPROF" -F 199 -f folded --tid -o "$T/tid.folded" -- "$KP_WORKLOADS/spin_fp" 0.5 1 2>/dev/null
check "--tid root is comm-PID/TID" grep -qE '^spin_fp-[0-9]+/[0-9]+;' "$T/tid.folded"
check "--tid shows two threads" [ "$(cut -d';' -f1 "$T/tid.folded" | sort -u | wc -l)" -ge 2 ]
"$KPROF" -F 199 -f folded --per-pid -o "$T/pid.folded" -- "$KP_WORKLOADS/spin_fp" 0.5 2>/dev/null
check "--per-pid root is comm-PID" grep -qE '^spin_fp-[0-9]+;' "$T/pid.folded"

# children of the command are followed too
"$KPROF" -F 499 -f folded -o "$T/child.folded" -- sh -c "'$KP_WORKLOADS/spin_fp' 1; true" 2>/dev/null
child=$(count_matching "$T/child.folded" '^spin_fp;(.*;)?spin_leaf$')
all=$(total_count "$T/child.folded")
check "a child process of the command is sampled ($child of $all)" at_least_pct "$child" "$all" 80

# same profile, same bytes: the writer is deterministic
"$KPROF" -F 199 -o "$T/spin.svg" -- "$KP_WORKLOADS/spin_fp" 0.5 2>/dev/null
check "SVG output by default" grep -q '<svg' "$T/spin.svg"
check "SVG names the leaf" grep -q 'spin_leaf' "$T/spin.svg"
# one recording, several outputs, each in the format its extension names
"$KPROF" -F 499 -o "$T/multi.folded" -o "$T/multi.svg" -o "$T/multi.top" -- "$KP_WORKLOADS/spin_fp" 0.5 2>"$T/multi.err"
check "several -o: exit 0" [ $? -eq 0 ]
check "several -o: folded stacks" grep -Eq '^spin_fp;(.*;)?spin_leaf [0-9]+$' "$T/multi.folded"
check "several -o: an SVG" grep -q '<svg' "$T/multi.svg"
check "several -o: the top table" grep -q 'functions by self share' "$T/multi.top"
check "several -o: the same samples in each" [ "$(total_count "$T/multi.folded")" = "$(sed -n 's/^\([0-9]*\) samples in .*/\1/p' "$T/multi.top")" ]
check "several -o: the summary names them all" grep -q "profile in $T/multi.folded, $T/multi.svg, $T/multi.top" "$T/multi.err"
finish
