# A program run from memory (memfd_create + fexecve, as container runtimes
# and programs that re-execute themselves do) is named like a deleted
# binary: its maps and MMAP2 records say "/memfd:NAME (deleted)", kprof
# opens the ELF file through /proc/PID/map_files while the process lives,
# names it from its own symbols and DWARF, and counts it as user code, not
# JIT. A memfd that holds JIT code (not ELF) stays JIT code, named by the
# process's perf map.
#
# kp-e2e: whole-machine (it samples every CPU: no other end-to-end test
# runs beside it; tests/CMakeLists.txt)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

# (kprof reads /proc/PID/map_files, which needs CAP_SYS_ADMIN)
[ "$(id -u)" -eq 0 ] || skip "needs root for /proc/PID/map_files and -a"

launch=$KP_WORKLOADS/memfd_exec_fp
stack='main;spin_outer;spin_middle;spin_leaf'

# The comm the kernel gives a program run from a memfd named $1: the
# memfd's name on recent kernels ("memfd:kprof-mem"), the descriptor's
# number on older ones; as an extended regex.
comm_re() { # memfd name
	"$launch" -n "$1" /bin/cat /proc/self/comm | sed 's/[][\.*^$(){}+?|/]/\\&/g'
}

# Checks the samples of the program (root $2) in folded file $1: the
# exact stack $4 for >= 80%, never a [unknown] under __libc_start_call_main
# (what a memfd taken for JIT code gave), never a JIT frame.
assert_named() { # folded comm_re label stack_re
	local exact total
	exact=$(count_matching "$1" "^$2;(.*;)?$4\$")
	total=$(count_matching "$1" "^$2;")
	echo "$3: $total samples, $exact in $4"
	show_top "$1" 2
	check "$3: at least 100 samples ($total)" [ "$total" -ge 100 ]
	check "$3: $4 carries >= 80%" at_least_pct "$exact" "$total" 80
	check "$3: no [unknown] frame under __libc_start_call_main" \
		lacks "$1" "^$2;(.*;)?__libc_start_call_main;(.*;)?\\[unknown"
	check "$3: no frame counted as JIT" lacks "$1" "^$2;(.*;)?[^;]*_\\[j\\]( |;)"
	# user frames only: the kernel has functions named memfd_* (a memfd
	# mapped while sampled shows memfd_check_seals_mmap)
	sed -E 's/;[^;]*_\[k\]//g' "$1" >"$1.user"
	check "$3: no '(deleted)' or 'memfd' in frame names" lacks "$1.user" "^$2;(.*;)?[^;]*(\\(deleted\\)|memfd)"
}

# The summary on stderr: no distinct location left unresolved as JIT.
assert_no_jit() { # stderr label
	grep -E 'unresolved \(' "$1"
	check "$2: the summary counts no unresolved JIT location" grep -qE 'unresolved \(.*JIT 0[,)]' "$1"
}

# 1. spin_fp run from a memfd by the command kprof starts (MMAP2 records)
comm=$(comm_re kprof-memfd-test)
check "the launcher runs a program from a memfd ($comm)" [ -n "$comm" ]
"$KPROF" -F 499 -f folded --annotate -o "$T/spin.folded" -- "$launch" "$KP_WORKLOADS/spin_fp" 1.5 2>"$T/err"
check "spin from a memfd: exit status 0" [ $? -eq 0 ]
assert_named "$T/spin.folded" "$comm" "spin from a memfd" "$stack"
assert_no_jit "$T/err" "spin from a memfd"

# 2. a PIE with DWARF: inline frames come from the memfd'd ELF's own DWARF
# (inline_fp spins for wall time, not CPU time: a longer run on a busy
# machine)
"$KPROF" -F 499 -f folded --annotate -o "$T/inl.folded" -- "$launch" "$KP_WORKLOADS/inline_fp" 2.5 2>"$T/err"
check "inline from a memfd: exit status 0" [ $? -eq 0 ]
single='main;inl_single_caller_kprof;inl_single_kprof_\[i\]'
nested='main;inl_caller_kprof;inl_outer_kprof_\[i\];inl_inner_kprof_\[i\]'
assert_named "$T/inl.folded" "$comm" "inline from a memfd" "($single|$nested)"
total=$(count_matching "$T/inl.folded" "^$comm;")
# the program does the same work in both callers: each has about half
check "inline from a memfd: $single carries >= 10%" \
	at_least_pct "$(count_matching "$T/inl.folded" "^$comm;(.*;)?$single\$")" "$total" 10
check "inline from a memfd: $nested carries >= 10%" \
	at_least_pct "$(count_matching "$T/inl.folded" "^$comm;(.*;)?$nested\$")" "$total" 10
assert_no_jit "$T/err" "inline from a memfd"

# 3. a memfd name with a space and the text "(deleted)": the maps say
# "/memfd:kprof memfd (deleted) (deleted)"
ncomm=$(comm_re 'kprof memfd (deleted)')
"$KPROF" -F 499 -f folded --annotate -o "$T/name.folded" -- \
	"$launch" -n 'kprof memfd (deleted)' "$KP_WORKLOADS/spin_fp" 1.5 2>"$T/err"
check "odd memfd name: exit status 0" [ $? -eq 0 ]
assert_named "$T/name.folded" "$ncomm" "odd memfd name" "$stack"
assert_no_jit "$T/err" "odd memfd name"

# 4. two programs from memfds of the same name in one recording: the
# records carry a build-id and no inode, so the name alone must not make
# the second program the first one's object
"$KPROF" -F 499 -f folded --annotate -o "$T/two.folded" -- sh -c \
	"'$launch' '$KP_WORKLOADS/spin_fp' 1.5 & '$launch' '$KP_WORKLOADS/inline_fp' 1.5; wait" 2>"$T/err"
check "two programs, one memfd name: exit status 0" [ $? -eq 0 ]
assert_named "$T/two.folded" "$comm" "two programs, one memfd name" "($stack|$single|$nested)"
check "two programs, one memfd name: spin_fp's stack is there" grep -qE "^$comm;(.*;)?$stack " "$T/two.folded"
check "two programs, one memfd name: inline_fp's stacks are there" \
	grep -qE "^$comm;(.*;)?$nested " "$T/two.folded"

# 5. system-wide while the program runs: the process is described from
# /proc/PID/maps (an inode, no build-id), not from records
"$launch" "$KP_WORKLOADS/spin_fp" 3.5 &
bg=$!
sleep 0.3
# (--pid: this program's samples only, not those of another run of this
# test on the machine, whose programs have the same name)
"$KPROF" -a -F 499 -d 2 -f folded --annotate --pid -o "$T/all.folded" 2>"$T/err"
check "system-wide: exit status 0" [ $? -eq 0 ]
wait $bg
assert_named "$T/all.folded" "$comm-$bg" "system-wide" "$stack"

# 6. short-lived: ten runs of 50 ms, each gone before its first sample is
# processed (a round or two later) so its memfd is out of reach, then one
# run that lives: one build is one object (by the build-id of the MMAP2
# records), which gets its file from the run that lives and names them
# all. --no-cache, so no saved index of the build can name them instead.
"$KPROF" --no-cache -F 999 -f folded --annotate -o "$T/short.folded" -- sh -c \
	"for i in 1 2 3 4 5 6 7 8 9 10; do '$launch' '$KP_WORKLOADS/spin_fp' 0.05; done
	'$launch' '$KP_WORKLOADS/spin_fp' 0.4" 2>"$T/err"
check "short-lived: exit status 0" [ $? -eq 0 ]
assert_named "$T/short.folded" "$comm" "short-lived" "$stack"
assert_no_jit "$T/err" "short-lived"

# 7. a program from a memfd that is itself a JIT writing its code into
# another memfd (mapped twice, RW and RX): the program is user code, the
# code it wrote (not ELF) is JIT code named by its perf map
w=$KP_WORKLOADS/memfd_jit_fp
probe=$("$w" 0 2>/dev/null | sed -n 's/^pid //p')
if [ -z "$probe" ]; then
	echo "memfd_jit_fp has no code template for this architecture: JIT case not run"
	finish
fi
remove_map_of "$probe"
"$KPROF" -F 499 -f folded --annotate -o "$T/jit.folded" -- "$launch" "$w" 1.5 >"$T/out" 2>"$T/err"
rc=$?
remove_map_of "$(sed -n 's/^pid //p' "$T/out")"
check "JIT code in a memfd: exit status 0" [ $rc -eq 0 ]
jstack='main;run_memfd_jit_kprof;kprof_jit_memfd_spin_\[j\]'
exact=$(count_matching "$T/jit.folded" "^$comm;(.*;)?$jstack\$")
total=$(count_matching "$T/jit.folded" "^$comm;")
echo "JIT code in a memfd: $total samples, $exact in $jstack"
show_top "$T/jit.folded" 2
check "JIT code in a memfd: at least 100 samples ($total)" [ "$total" -ge 100 ]
check "JIT code in a memfd: $jstack carries >= 80%" at_least_pct "$exact" "$total" 80
check "JIT code in a memfd: the program's own frames are not JIT" \
	lacks "$T/jit.folded" "^$comm;(.*;)?(main|run_memfd_jit_kprof)_\\[j\\]"
assert_no_jit "$T/err" "JIT code in a memfd"
finish
