# A binary deleted (or replaced) while it runs is still named: kprof must
# reach the file it ran (opened while the process lives, or through
# /proc/PID/map_files), not whatever sits at its path at the end.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

stack='main;spin_outer;spin_middle;spin_leaf'

assert_spin() { # folded comm label
	local exact total
	exact=$(count_matching "$1" "^$2;(.*;)?$stack\$")
	total=$(count_matching "$1" "^$2;")
	echo "$3: $total samples, $exact in $stack"
	show_top "$1" 2
	check "$3: $stack carries >= 80%" at_least_pct "$exact" "$total" 80
	check "$3: at least 100 samples ($total)" [ "$total" -ge 100 ]
}

# Waits (up to 10 s) until a process named $1 runs: its file may be
# removed or replaced only once executed. A fixed 0.2 s was too short
# under load for kprof under ASan to start its command, which then ran
# the replacement (seen once on a loaded machine).
wait_exec() {
	local i
	for i in $(seq 1 200); do
		pgrep -x "$1" >/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# 1. deleted shortly after it starts under kprof
cp "$KP_WORKLOADS/spin_fp" "$T/spin_deleted"
"$KPROF" -F 499 -f folded -o "$T/del.folded" -- "$T/spin_deleted" 1.5 2>"$T/err" &
kp=$!
check "deleted while recorded: the program started" wait_exec spin_deleted
sleep 0.1
rm "$T/spin_deleted"
wait $kp
check "deleted while recorded: exit status 0" [ $? -eq 0 ]
cat "$T/err"
assert_spin "$T/del.folded" spin_deleted "deleted while recorded"

# 2. replaced while it runs: deleted, and another program (syscalls_fp)
# copied to the same path; the names must come from the file that ran
cp "$KP_WORKLOADS/spin_fp" "$T/spin_replaced"
"$KPROF" -F 499 -f folded -o "$T/rep.folded" -- "$T/spin_replaced" 1.5 2>/dev/null &
kp=$!
check "replaced while recorded: the program started" wait_exec spin_replaced
sleep 0.1
rm "$T/spin_replaced"
cp "$KP_WORKLOADS/syscalls_fp" "$T/spin_replaced"
wait $kp
check "replaced while recorded: exit status 0" [ $? -eq 0 ]
assert_spin "$T/rep.folded" spin_replaced "replaced while recorded"
check "replaced while recorded: no name from the new file" lacks "$T/rep.folded" 'sys_reader'

# 2b. replaced before its first sample: the process sleeps, its file is
# replaced, then it spins. The path now leads to another program, so only
# the build-id (from MMAP2, or read when it was mapped) or map_files tell
# the file that runs.
cp "$KP_WORKLOADS/latespin_fp" "$T/late_replaced"
"$KPROF" -F 499 -f folded -o "$T/late.folded" -- "$T/late_replaced" 0.6 1.2 2>/dev/null &
kp=$!
check "replaced before its first sample: the program started" wait_exec late_replaced
rm "$T/late_replaced"
cp "$KP_WORKLOADS/syscalls_fp" "$T/late_replaced"
wait $kp
check "replaced before its first sample: exit status 0" [ $? -eq 0 ]
exact=$(count_matching "$T/late.folded" '^late_replaced;(.*;)?main;late_outer_kprof;late_leaf_kprof$')
total=$(count_matching "$T/late.folded" '^late_replaced;')
echo "replaced before its first sample: $total samples, $exact in main;late_outer_kprof;late_leaf_kprof"
show_top "$T/late.folded" 2
check "replaced before its first sample: main;late_outer_kprof;late_leaf_kprof carries >= 80%" \
	at_least_pct "$exact" "$total" 80
check "replaced before its first sample: no name from the new file" \
	lacks "$T/late.folded" '(^|;)sys_[a-z]+(;| )'

# 3. deleted before kprof attaches: /proc/PID/maps says "(deleted)"; only
# /proc/PID/map_files (or /proc/PID/exe) still reaches the file
cp "$KP_WORKLOADS/spin_fp" "$T/spin_gone"
"$T/spin_gone" 2.5 &
bg=$!
check "deleted before attaching: the program started" wait_exec spin_gone
rm "$T/spin_gone"
"$KPROF" -p $bg -F 499 -d 1.2 -f folded -o "$T/gone.folded" 2>"$T/err"
check "deleted before attaching: exit status 0" [ $? -eq 0 ]
wait $bg
cat "$T/err"
assert_spin "$T/gone.folded" spin_gone "deleted before attaching"
check "deleted before attaching: no '(deleted)' in frame names" lacks "$T/gone.folded" '\(deleted\)'
finish
