# kprof --off-cpu at its edges:
#   a command that never blocks: exit 0, a profile written, in which it
#     only ever waits preempted (if the load preempts it at all);
#   a recording ended by SIGTERM while the command sleeps 5 s: the profile
#     is written, the sleep in it with the second it had lasted, counted
#     as still waiting, never negative;
#   -p of a process asleep all the time: no wait began, so nothing is
#     attributed: exit 0, an empty profile, a warning that says a wait
#     under way when the recording began is not counted (not that the
#     process never blocked);
#   waits all left out (--min-wait above them): the warning says so;
#   options that do not go together (--off-cpu -e, --off-cpu --wall,
#     --wall -e of an event that is not a clock) and bad values: exit 2
#     in a line naming them, before the command runs, no file written;
#   --wall -e task-clock: a clock, accepted, one tower a thread.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/offcpu_lib.bash"

# a command that never blocks
f=$T/spin.folded
"$KPROF" --off-cpu -o "$f" -o "$T/spin.svg" -- "$KP_WORKLOADS/spin_nofp" 0.1 2>"$T/spin.err"
check "never blocks: exit 0" [ $? -eq 0 ]
# the SVG says what was measured and how, not "every 0 events"
check "the SVG's title: Off-CPU Time Flame Graph" grep -q '>Off-CPU Time Flame Graph<' "$T/spin.svg"
check "the SVG's subtitle: off-CPU time of every wait, the stacks' event ($(grep -o 'class="info"[^<]*' "$T/spin.svg" | tail -1))" \
	sh -c "grep -q 'class=\"info\"[^>]*>off-CPU time of every wait (us), stacks from [a-z:_-]*; ' '$T/spin.svg' &&
		! grep -q 'every 0 events' '$T/spin.svg'"
cat "$T/spin.err"
check "never blocks: a profile written" [ -f "$f" ]
spun=$(count_matching "$f" ';spin_outer;')
check "never blocks: only preempted while it spins ($spun counts)" \
	[ "$(count_matching "$f" ";spin_outer;.*($SLEEPING|$UNINTERRUPTIBLE|$BLOCKED)")" -eq 0 ]
if [ ! -s "$f" ]; then
	check "never blocks: no wait at all, and kprof says so" grep -q "no off-CPU wait began" "$T/spin.err"
fi

# SIGTERM to kprof while the command sleeps (every switch is sampled at
# this rate: the sleep has its own stack)
f=$T/term.folded
"$KPROF" --off-cpu -d 10 -f folded -o "$f" -- "$OFFCPU" sleep 5 >"$T/term.out" 2>"$T/term.err" &
kp=$!
sleep 1
kill -TERM $kp
wait $kp
st=$?
cat "$T/term.err"
check "SIGTERM: kprof ends as its command does, by SIGTERM ($st)" [ $st -eq 143 ]
check "SIGTERM: the profile is written" [ -s "$f" ]
read -r waits secs <<<"$(offcpu_line "$T/term.err")"
rec=$(sed -n 's/^kprof: [0-9]* samples, .* process[es]*, \([0-9.]*\) s;.*/\1/p' "$T/term.err")
unit=$(counts_a_second "$f" "${secs:-0}")
slept=$(seconds "$(count_matching "$f" "^offcpu_nofp;$START;main;sleep_kprof;.*($SLEEPING|$BLOCKED)")" "${unit:-1e9}")
check "SIGTERM: the profile holds the summary's ${secs:-?} s" [ -n "$unit" ]
check "SIGTERM: the sleep is in it with $slept s of the ${rec:-?} s recorded" \
	between "$slept" "$(awk -v r="${rec:-9}" 'BEGIN { print r - 0.35 }')" "$(awk -v r="${rec:-0}" 'BEGIN { print r + 0.05 }')"
check "SIGTERM: counted as still waiting, or ended by the signal" \
	grep -Eq "^kprof: off CPU: [0-9]+ waits, [0-9.]+ s \([01] still waiting at the end\)" "$T/term.err"
check "SIGTERM: no negative count" lacks "$f" ' -[0-9]+$'

# -p of a process asleep all the time: wait until it sleeps in sleep_kprof
"$OFFCPU" sleep 5 >"$T/asleep.out" &
sp=$!
at_exit "kill $sp 2>/dev/null"
for _ in $(seq 100); do
	grep -q '^pid' "$T/asleep.out" && [ "$(awk '{ print $3 }' /proc/$sp/stat)" = S ] && break
	sleep 0.05
done
sleep 0.2
f=$T/asleep.folded
"$KPROF" --off-cpu -p $sp -d 0.5 -f folded -o "$f" 2>"$T/asleep.err"
check "-p asleep: exit 0" [ $? -eq 0 ]
cat "$T/asleep.err"
check "-p asleep: an empty profile" sh -c "[ -f '$f' ] && [ ! -s '$f' ]"
check "-p asleep: the summary counts no wait" grep -q "^kprof: off CPU: 0 waits, 0.000 s" "$T/asleep.err"
check "-p asleep: the warning says a wait under way is not counted" \
	grep -q "no off-CPU wait began in the .* s recorded: the threads sampled never left the CPU, or were waiting since before the recording started" "$T/asleep.err"
check "-p asleep: not that it never blocked" sh -c "! grep -q 'never blocked' '$T/asleep.err'"
kill $sp 2>/dev/null

# every wait left out by --min-wait (5 s)
"$KPROF" --off-cpu --min-wait 5000000 -f folded -o "$T/min.folded" -- "$OFFCPU" sleep 0.2 >/dev/null 2>"$T/min.err"
check "--min-wait above every wait: exit 0" [ $? -eq 0 ]
cat "$T/min.err"
check "--min-wait above every wait: the warning says they were left out" \
	grep -q "no off-CPU waits were kept: all [0-9]* were left out (the off-CPU line says why)" "$T/min.err"
check "--min-wait above every wait: the off-CPU line says why" grep -q "left out: [0-9]* under --min-wait" "$T/min.err"

# refused: exit 2, one line of kprof's naming what, the command never ran
says() { grep '^kprof: ' "$T/no.err" | grep -qF -- "$1"; }
refused() { # what message options...
	local what=$1 msg=$2
	shift 2
	rm -f "$T/ran" "$T/no.folded"
	"$KPROF" "$@" -f folded -o "$T/no.folded" -- touch "$T/ran" 2>"$T/no.err"
	st=$?
	check "$what: exit 2 ($st)" [ $st -eq 2 ]
	check "$what: says $msg" says "$msg"
	check "$what: one line of kprof's (and the usage)" [ "$(grep -c '^kprof: ' "$T/no.err")" -eq 1 ]
	check "$what: the command never ran, no file written" sh -c "[ ! -e '$T/ran' ] && [ ! -e '$T/no.folded' ]"
}
refused "--off-cpu -e cycles" "-e does not apply" --off-cpu -e cycles
refused "--off-cpu --wall" "--off-cpu and --wall cannot be combined" --off-cpu --wall
refused "--wall --off-cpu" "--off-cpu and --wall cannot be combined" --wall --off-cpu
refused "--wall -e page-faults" "-e cpu-clock or task-clock, not page-faults" --wall -e page-faults
refused "--switch-freq -1" "--switch-freq: invalid frequency '-1'" --off-cpu --switch-freq -1
refused "--min-wait abc" "--min-wait: invalid microseconds 'abc'" --off-cpu --min-wait abc
# a clock is accepted; one tower a thread (main and the two that hold the
# mutex and feed the pipe, which barely run: every switch is stacked, so
# that their waits have stacks; past --switch-freq, fdatasync's loop, a
# thread's one wait may go unchosen)
"$KPROF" --wall -e task-clock --switch-freq 0 -f folded -o "$T/clock.folded" -- "$OFFCPU" exact "$T" >"$T/clock.out" 2>"$T/clock.err"
check "--wall -e task-clock: accepted, exit 0" [ $? -eq 0 ]
pid=$(acct "$T/clock.out" pid)
roots=$(sed -n "s|^offcpu_nofp-$pid/\([0-9]*\);.*|\1|p" "$T/clock.folded" | sort -u | wc -l)
check "--wall: a tower for each of the 3 threads ($roots roots offcpu_nofp-$pid/TID)" [ "$roots" -eq 3 ]
finish
