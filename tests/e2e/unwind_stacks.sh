# Whole stacks with and without frame pointers (docs/unwinding.md): the
# same programs built both ways give the exact same stacks in the default
# mode (auto) and in -g dwarf; -g fp repairs a frameless leaf's caller.
#   tailcall: main -> tc_outer_kprof -> tc_dispatch_kprof -(jmp)-> tc_leaf_kprof
#   qsortcb:  main -> sort_outer_kprof -> qsort (glibc, no frame pointers)
#             -> ... -> cmp_kprof
#   jitcopy:  main -> run_jit_kprof -> kprof_jit_hot_spin (code copied into
#             anonymous memory: no unwind table, a frame pointer)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

# the outermost frames of a glibc program's main thread
START='_start;__libc_start_main[^;]*;__libc_start_call_main'
# kernel frames of an interrupt may follow any leaf
KTAIL='(;[^;]*_\[k\])*'

# share FILE ROOT LEAF_RE EXACT_RE: of the samples whose user leaf matches
# LEAF_RE, the share (percent) whose whole stack is ROOT;EXACT_RE; prints
# "EXACT LEAF"
leaf_exact() {
	local leaf exact
	leaf=$(count_matching "$1" "^$2;(.*;)?$3$KTAIL\$")
	exact=$(count_matching "$1" "^$2;$4$KTAIL\$")
	echo "$exact $leaf"
}

# run NAME MODE WORKLOAD ARGS...: records into $T/NAME.folded
run() {
	local name=$1 mode=$2
	shift 2
	"$KPROF" -g "$mode" -F 499 -f folded --annotate -o "$T/$name.folded" -- "$@" >"$T/$name.out" 2>"$T/$name.err"
	check "$name: exit status 0" [ $? -eq 0 ]
}

# expect NAME ROOT LEAF_RE EXACT_RE PCT [MIN]: at least PCT% of the leaf's
# samples have exactly that stack, and there are at least MIN (100) of them
expect() {
	local name=$1 root=$2 leaf=$3 exact=$4 pct=$5 min=${6:-100} r e l
	r=$(leaf_exact "$T/$name.folded" "$root" "$leaf" "$exact")
	e=${r% *}
	l=${r#* }
	echo "$name: $e of $l samples in $leaf have the exact stack"
	[ "$e" -lt "$l" ] && grep -E "^$root;" "$T/$name.folded" | grep -vE "^$root;$exact$KTAIL " | sort -t' ' -k2 -rn | head -3
	check "$name: at least $min samples in the leaf ($l)" [ "$l" -ge "$min" ]
	check "$name: >= $pct% of them exactly $root;$exact" at_least_pct "$e" "$l" "$pct"
}

for b in fp nofp; do
	for mode in auto dwarf; do
		run "tailcall_${b}_$mode" "$mode" "$KP_WORKLOADS/tailcall_$b" 1
		# the tail call leaves no frame of tc_dispatch_kprof
		expect "tailcall_${b}_$mode" "tailcall_$b" tc_leaf_kprof \
			"$START;main;tc_outer_kprof;tc_leaf_kprof" 97
		# (under main: a sample in ld.so's start-up, before libc's
		# mapping is known, may have an [unknown] leaf: seen in a fresh-clone run
		# under ASan; the tail call is what is checked)
		grep ';main;' "$T/tailcall_${b}_$mode.folded" >"$T/tailcall_${b}_$mode.main"
		check "tailcall_${b}_$mode: no [unknown] or [truncated] frame under main" \
			lacks "$T/tailcall_${b}_$mode.main" '\[(unknown[^];]*|truncated)\]'

		run "qsortcb_${b}_$mode" "$mode" "$KP_WORKLOADS/qsortcb_$b" 1
		# glibc 2.36: qsort tail-calls qsort_r, whose merge sort recurses
		# (msort_with_tmp inlined into its .part.0 clone)
		expect "qsortcb_${b}_$mode" "qsortcb_$b" cmp_kprof \
			"$START;main;sort_outer_kprof;qsort_r;(msort_with_tmp_\\[i\\];msort_with_tmp\\.part\\.0;)+cmp_kprof" 97

		# jitcopy runs for wall time, half of it in the hot copy: fewer
		# samples on a loaded machine
		run "jitcopy_${b}_$mode" "$mode" "$KP_WORKLOADS/jitcopy_$b" 2
		remove_map_of "$(sed -n 's/^pid //p' "$T/jitcopy_${b}_$mode.out")"
		# from the JIT frame (no table) along its frame pointer, then with
		# CFI again from run_jit_kprof on
		expect "jitcopy_${b}_$mode" "jitcopy_$b" 'kprof_jit_hot_spin_\[j\]' \
			"$START;main;run_jit_kprof;kprof_jit_hot_spin_\\[j\\]" 95 50
	done
done

# -g fp: the frame-pointer walk from a leaf without a frame skips its caller
# (main;tc_leaf_kprof, as perf -g shows it); the leaf's CFI puts it back
run tailcall_fp_fp fp "$KP_WORKLOADS/tailcall_fp" 1
expect tailcall_fp_fp tailcall_fp tc_leaf_kprof '__libc_start_call_main;main;tc_outer_kprof;tc_leaf_kprof' 97
check "fp: the summary counts stacks truncated" grep -qE '[0-9]+ stacks truncated' "$T/tailcall_fp_fp.err"

# -g fp on a program without frame pointers: the chain is cut where it
# leaves code, shown as one [truncated] frame, never a tower of [unknown]
run qsortcb_nofp_fp fp "$KP_WORKLOADS/qsortcb_nofp" 1
check "fp, no frame pointers: no two [unknown] frames in a row" \
	lacks "$T/qsortcb_nofp_fp.folded" '\[unknown[^;]*\];\[unknown'
check "fp, no frame pointers: at most one [truncated] per stack" \
	lacks "$T/qsortcb_nofp_fp.folded" '\[truncated\].*\[truncated\]'
finish
