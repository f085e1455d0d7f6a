# kprof --wall and --off-cpu on a program built without frame pointers
# whose main thread spends about 0.5 s in each of four phases, each timing
# itself (tests/workloads/offcpu.c): phase_spin on CPU, phase_sleep in
# nanosleep, phase_pipe reading a pipe another thread writes 0.5 s later,
# phase_fsync writing and fdatasync'ing a file of the test's own folder.
#   --wall: each phase's share of the main thread's wall-clock time is the
#     program's own within 3 points, and 95% of it is on whole stacks
#     (_start ... main;phase_X);
#   --off-cpu: the off-CPU time of sleep, pipe and fsync is what each
#     measured (wall - CPU time), never more than it lasted; spin has no
#     wait but being preempted; with tracefs, sleep and pipe sleep and
#     fsync is mostly uninterruptible;
#   both: the summary's off-CPU line counts the waits of the main thread
#     (its context switches since main began, getrusage's count) and the
#     seconds the profile holds.
# Which stack a wait is put on is checked with every switch stacked
# (--switch-freq 0): phase_fsync switches a few thousand times a second,
# past the default rate, where the profile is an unbiased estimate rather
# than exact (offcpu_shares checks the estimate; a storm is
# scripts/bench-offcpu's).
# Bounds hold on a loaded machine: waits are timed exactly, and whatever
# the load takes away from spin is preempted time in spin.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/offcpu_lib.bash"

tracefs=1
tracefs_ready || tracefs=0
PHASES="phase_spin phase_sleep phase_pipe phase_fsync"

# record NAME OPTIONS...: the workload's accounting in $T/NAME.out, its
# profile in $T/NAME.folded, kprof's messages in $T/NAME.err
record() {
	local name=$1
	shift
	"$KPROF" "$@" -f folded -o "$T/$name.folded" -- "$OFFCPU" phases "$T" >"$T/$name.out" 2>"$T/$name.err"
	check "$name: exit status 0" [ $? -eq 0 ]
	cat "$T/$name.out" "$T/$name.err"
}

# summary NAME: the off-CPU line counts at least the main thread's switches
# (the other thread's and those of exit come on top, and those of the
# thread's start before main)
summary() {
	local sw
	read -r waits secs <<<"$(offcpu_line "$T/$1.err")"
	sw=$(acct "$T/$1.out" main 4)
	# a wait whose end went unseen is counted apart (unpaired): the
	# kernel's sched_switch tracepoint shows a thread leaving twice without
	# coming back in between, a few times in thousands under load
	unpaired=$(sed -n 's/^kprof: off CPU: .* \([0-9]*\) unpaired .*/\1/p' "$T/$1.err")
	check "$1: the summary counts ${waits:-no} waits and ${unpaired:-0} unpaired, the main thread switched ${sw:-?} times" \
		between "$((${waits:-0} + ${unpaired:-0}))" "${sw:-1}" "$((${sw:-0} + 40))"
}

# wall NAME: the main thread's tower, rooted at comm-PID/TID
wall() {
	local name=$1 pid root total main_wall p any whole got want
	pid=$(acct "$T/$name.out" pid)
	root="offcpu_nofp-$pid/$pid"
	total=$(count_matching "$T/$name.folded" "^$root;")
	main_wall=$(acct "$T/$name.out" main)
	echo "$name: the main thread has $total counts"
	for p in $PHASES; do
		any=$(count_matching "$T/$name.folded" "^$root;(.*;)?main;$p(;.*)?\$")
		whole=$(count_matching "$T/$name.folded" "^$root;$START;main;$p(;.*)?\$")
		check "$name: >= 95% of $p's time on whole stacks ($whole of $any)" at_least_pct "$whole" "$any" 95
		read -r got want <<<"$(awk -v a="$any" -v t="$total" -v w="$(acct "$T/$name.out" "$p")" \
			-v m="$main_wall" 'BEGIN { printf "%.2f %.2f\n", t ? 100 * a / t : 0, 100 * w / m }')"
		check "$name: $p has $got% of the main thread's wall time, the program measured $want%" \
			between "$got" "$(awk -v w="$want" 'BEGIN { print w - 3 }')" "$(awk -v w="$want" 'BEGIN { print w + 3 }')"
	done
	# the phases cover main (the rest is the start of the process and
	# its exit)
	any=$(count_matching "$T/$name.folded" "^$root;$START;main;phase_")
	check "$name: the phases have >= 95% of the main thread's time ($any of $total)" at_least_pct "$any" "$total" 95
	summary "$name"
	[ "$fails" -eq 0 ] || show_top "$T/$name.folded" 8
}

record wall --wall -F 999 --switch-freq 0
wall wall

# --off-cpu: one root for the process; the main thread's stacks are those
# through main
record off --off-cpu --switch-freq 0
f=$T/off.folded
summary off
unit=$(counts_a_second "$f" "${secs:-0}")
check "off: the profile holds the summary's ${secs:-?} s (in ns or us: $(total_count "$f") counts)" [ -n "$unit" ]
unit=${unit:-1e9}
main_off=0
for p in phase_sleep phase_pipe phase_fsync; do
	got=$(seconds "$(count_matching "$f" "^offcpu_nofp;(.*;)?main;$p;.*")" "$unit")
	want=$(acct_off "$T/off.out" "$p")
	wall=$(acct "$T/off.out" "$p")
	sw=$(acct "$T/off.out" "$p" 4)
	main_off=$(awk -v a="$main_off" -v b="$want" 'BEGIN { print a + b }')
	# at least what the program measured, less 3%, 5 ms and 25 us a
	# switch, at most what the phase lasted. The switch records and the
	# thread's CPU clock part a few microseconds apart at each switch (the
	# kernel's switching work, the sample taken at it: the clock counts
	# some as CPU time, the records as a wait, or the other way), and
	# phase_fsync switches thousands of times.
	check "off: $p waited $got s, it measured $want s off CPU in $wall s ($sw switches)" \
		between "$got" "$(awk -v w="$want" -v n="$sw" 'BEGIN { print w * 0.97 - 0.005 - n * 25e-6 }')" \
		"$(awk -v w="$wall" 'BEGIN { print w * 1.03 + 0.005 }')"
done
check "off: the summary's ${secs:-?} s hold the main thread's $main_off s, and the other's 0.5 s at most" \
	between "${secs:-0}" "$(awk -v m="$main_off" -v n="$(acct "$T/off.out" main 4)" 'BEGIN { print m * 0.97 - n * 25e-6 }')" \
	"$(awk -v m="$(acct "$T/off.out" main)" 'BEGIN { print m + 0.6 }')"
spin_waits=$(count_matching "$f" "^offcpu_nofp;(.*;)?main;phase_spin;.*($SLEEPING|$UNINTERRUPTIBLE|$BLOCKED)")
check "off: phase_spin never waits but preempted ($spin_waits counts)" [ "$spin_waits" -eq 0 ]
if [ "$tracefs" = 1 ]; then
	check "off: sched_switch sampled (bpf or perf)" grep -qE "\((bpf|sched):sched_switch\)" "$T/off.err"
	check "off: no note about tracefs" sh -c "! grep -q tracefs '$T/off.err'"
	for p in phase_sleep phase_pipe; do
		all=$(count_matching "$f" "^offcpu_nofp;(.*;)?main;$p;.*")
		s=$(count_matching "$f" "^offcpu_nofp;(.*;)?main;$p;.*$SLEEPING")
		check "off: $p sleeps ($s of $all counts)" at_least_pct "$s" "$all" 95
	done
	all=$(count_matching "$f" "^offcpu_nofp;(.*;)?main;phase_fsync;.*")
	d=$(count_matching "$f" "^offcpu_nofp;(.*;)?main;phase_fsync;.*$UNINTERRUPTIBLE")
	check "off: phase_fsync is mostly uninterruptible ($d of $all counts)" at_least_pct "$d" "$all" 80
	b=$(count_matching "$f" "$BLOCKED")
	check "off: with tracefs, waits are sleeping, uninterruptible or preempted ($b counts blocked)" \
		[ "$((b * 100))" -le "$(total_count "$f")" ]
fi
[ "$fails" -eq 0 ] || show_top "$f" 8
finish
