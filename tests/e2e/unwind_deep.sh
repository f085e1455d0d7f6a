# A stack deeper than perf's 8 KiB copy and within kprof's default 16 KiB
# (tests/workloads/deepstack.c, no frame pointers: some 10 KiB from main to
# the leaf): the default copy unwinds it whole, from _start through 41
# levels of deep_kprof to deep_leaf_kprof; an 8 KiB copy (-g auto,8192)
# cuts it, which shows the test measures the copy (docs/unwinding.md,
# "The copy's size").
. "$(dirname "$0")/lib.bash"

w=$KP_WORKLOADS/deepstack_nofp
levels=$(printf 'deep_kprof;%.0s' $(seq 41))
whole="^deepstack_nofp;_start;__libc_start_main;__libc_start_call_main;main;${levels}deep_leaf_kprof(;.*)?$"

"$KPROF" -F 999 -f folded -o "$T/default.folded" -- "$w" 0.5 2>"$T/default.err"
check "default copy: exit status 0" [ $? -eq 0 ]
total=$(count_matching "$T/default.folded" 'deep_leaf_kprof')
full=$(count_matching "$T/default.folded" "$whole")
echo "default copy: $total samples in deep_leaf_kprof, $full of them whole from _start"
show_top "$T/default.folded" 2
check "default copy: at least 200 samples in the leaf ($total)" [ "$total" -ge 200 ]
check "default copy: >= 95% of the leaf's samples whole from _start through 41 levels" \
	at_least_pct "$full" "$total" 95

"$KPROF" -F 999 -g auto,8192 -f folded -o "$T/small.folded" -- "$w" 0.3 2>"$T/small.err"
check "8 KiB copy: exit status 0" [ $? -eq 0 ]
total=$(count_matching "$T/small.folded" 'deep_leaf_kprof')
cut=$(count_matching "$T/small.folded" '\[truncated\]')
echo "8 KiB copy: $total samples in deep_leaf_kprof, $cut truncated"
check "8 KiB copy: most of the leaf's stacks are cut ($cut of $total)" at_least_pct "$cut" "$total" 90
finish
