# kprof --off-cpu and --wall as a user without privileges (nobody), where
# perf_event_paranoid decides. The switch event samples in kernel mode:
#   at 2, a user may sample user space only: kprof exits 1 before the
#     command runs, in one line naming perf_event_paranoid and CAP_PERFMON,
#     and writes no file;
#   at 1, the user's own command is sampled, kernel included; tracefs may
#     not be read (root's alone), so kprof says so and samples the
#     context-switches event: waits are blocked or preempted, not told
#     apart as sleeping or uninterruptible.
# The level is set for the test and restored at exit; a test that reads it
# does not run beside this one (the line below; tests/CMakeLists.txt).
# kp-e2e: perf-paranoid
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/offcpu_lib.bash"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || [ ! -w /proc/sys/kernel/perf_event_paranoid ]; then
	if [ "${CI:-}" = true ]; then
		fail "root, setpriv and a writable perf_event_paranoid (CI runs the tests as root)"
		finish
	fi
	echo "SKIP: needs root, setpriv and a writable /proc/sys/kernel/perf_event_paranoid"
	exit 77
fi
para=$(cat /proc/sys/kernel/perf_event_paranoid)
at_exit "echo $para >/proc/sys/kernel/perf_event_paranoid"
# The user may not be able to enter the clone (CI's is closed to others):
# what it runs is copied to a folder of its own in /tmp, where it writes
u=$(mktemp -d /tmp/kprof-offcpu.XXXXXX)
at_exit "rm -rf '$u'"
cp "$KPROF" "$u/kprof" && cp "$OFFCPU" "$u/offcpu_nofp" && chmod 755 "$u/kprof" "$u/offcpu_nofp" && chmod 777 "$u" ||
	{ fail "copy kprof and the workload to $u"; finish; }
as_nobody() { (cd "$u" && XDG_CACHE_HOME=$u/cache setpriv --reuid=65534 --regid=65534 --clear-groups "$@"); }

echo 2 >/proc/sys/kernel/perf_event_paranoid
for mode in --off-cpu --wall; do
	as_nobody ./kprof $mode -f folded -o "$u/p2.folded" -- ./offcpu_nofp sleep 0.2 >"$T/p2.out" 2>"$T/p2.err"
	st=$?
	cat "$T/p2.err"
	check "paranoid 2, $mode: exit 1 ($st)" [ $st -eq 1 ]
	check "paranoid 2, $mode: one line naming perf_event_paranoid and CAP_PERFMON" \
		sh -c "[ \$(wc -l <'$T/p2.err') -eq 1 ] && grep -q 'perf_event_paranoid is 2.*CAP_PERFMON' '$T/p2.err'"
	check "paranoid 2, $mode: the command never ran" [ ! -s "$T/p2.out" ]
	check "paranoid 2, $mode: no output file" [ ! -e "$u/p2.folded" ]
done

# tracefs mounted (root's alone) or not there at all, the note says which
if tracefs_ready; then
	note="tracefs may not be read (root may): sampling the context-switches event"
else
	note="no tracefs with sched:sched_switch (root may mount it.*): sampling the context-switches event"
fi
# every switch sampled (the default at this rate): the sleep has its own
# stack
echo 1 >/proc/sys/kernel/perf_event_paranoid
f=$u/p1.folded
as_nobody ./kprof --off-cpu -f folded -o "$f" -- ./offcpu_nofp sleep 0.3 >"$T/p1.out" 2>"$T/p1.err"
st=$?
cat "$T/p1.out" "$T/p1.err"
check "paranoid 1: the user's own command is sampled (exit $st)" [ $st -eq 0 ]
check "paranoid 1: says why waits are only blocked or preempted (tracefs)" grep -q "$note" "$T/p1.err"
check "paranoid 1: the summary names context-switches" grep -q "(context-switches)" "$T/p1.err"
check "paranoid 1: says the waits are timed from perf's records, since BPF needs root" \
	grep -q "waits timed from perf's SWITCH records, not in the kernel: .*not permitted (it needs root" "$T/p1.err"
check "paranoid 1: waits are blocked or preempted only" \
	lacks "$f" '(\[off-cpu: sleeping\]|\[off-cpu: uninterruptible\]) [0-9]+$'
read -r waits secs <<<"$(offcpu_line "$T/p1.err")"
want=$(acct_off "$T/p1.out" sleep_kprof)
check "paranoid 1: the summary's ${secs:-?} s hold the ${want:-?} s sleep_kprof measured" \
	between "${secs:-0}" "$(awk -v w="$want" 'BEGIN { print w * 0.97 - 0.005 }')" 1.5
unit=$(counts_a_second "$f" "${secs:-0}")
slept=$(count_matching "$f" "^offcpu_nofp;$START;main;sleep_kprof;.*;schedule;$BLOCKED")
want_counts=$(awk -v w="$want" -v u="${unit:-1e9}" 'BEGIN { printf "%.0f", w * u }')
# a user's rings are small (perf_event_mlock_kb): on a machine busy
# enough to keep kprof off the CPU the kernel may drop the sleep's stack
# and, the recording ending, never write its LOST record; kprof then says
# so, and the sleep is on an earlier stack or under [no stack sampled]
if grep -q "switches out came without their stack" "$T/p1.err"; then
	echo "the kernel dropped switch stacks (the summary says so): the sleep's stack is not checked"
	check "paranoid 1: the sleep's time is in the profile, on some stack of main's thread" \
		at_least_pct "$(count_matching "$f" "^offcpu_nofp;.*$BLOCKED")" "$want_counts" 97
else
	check "paranoid 1: the sleep is a blocked wait under main;sleep_kprof, kernel frames included" \
		at_least_pct "$slept" "$want_counts" 97
fi
finish
