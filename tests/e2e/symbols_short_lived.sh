# 150 processes of about 20 ms each, run one after the other by a shell,
# each spending its time in a function of a shared library: each is gone
# long before the end of the run, yet under 5% of their frames may stay
# unresolved, the library's functions (one exported, one static) are
# named under main, and the summary counts the unresolved frames the
# profile holds.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

src=$KP_TESTS/workloads/shlib
flags=(-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer)
mkdir -p "$T/lib"
"$CC" "${flags[@]}" -fPIC -shared -o "$T/lib/libkpshort.so" "$src/kpshort_lib.c" &&
	"$CC" "${flags[@]}" -o "$T/kpshort" "$src/kpshort_main.c" -L"$T/lib" -lkpshort -Wl,-rpath,'$ORIGIN/lib' ||
	{ fail "build the library and its driver"; finish; }
"$T/kpshort" 0.001 || { fail "the driver runs"; finish; }

f=$T/short.folded
start=$(date +%s.%N)
"$KPROF" -F 499 -f folded --annotate -o "$f" -- sh -c \
	"i=0; while [ \$i -lt 150 ]; do '$T/kpshort' 0.02 || exit 1; i=\$((i + 1)); done" 2>"$T/err"
check "exit status 0" [ $? -eq 0 ]
cat "$T/err"
echo "recorded in $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"
procs=$(sed -n 's/.* \([0-9]*\) processes.*/\1/p' "$T/err")
check "the summary counts the 150 processes and the shell ($procs)" [ "${procs:-0}" -ge 151 ]

total=$(count_matching "$f" '^kpshort;')
lib=$(count_matching "$f" '^kpshort;(.*;)?main;kpshort_lib_kprof;kpshort_lib_leaf_kprof$')
read -r unk frames <<<"$(frames_unknown "$f" '^kpshort$')"
echo "kpshort: $total samples, $lib in main;kpshort_lib_kprof;kpshort_lib_leaf_kprof;" \
	"$unk of $frames frames [unknown]"
show_top "$f" 4
# 150 x 20 ms at 499 Hz is about 1500 samples
check "the short processes are sampled ($total >= 300 samples)" [ "$total" -ge 300 ]
check "main;kpshort_lib_kprof;kpshort_lib_leaf_kprof carries >= 60%" at_least_pct "$lib" "$total" 60
check "under 5% of the short processes' frames are [unknown]" [ "$((unk * 20))" -lt "$frames" ]
# the summary counts what the profile holds: its unresolved frames are the
# [unknown] frames of every process, the shell's too (how many of its
# samples there are depends on how long fork and exec take; only the short
# processes' share is bounded, above)
read -r unk_all _ <<<"$(frames_unknown "$f" '.')"
counted=$(sed -n 's/.*% of frames unresolved (kernel \([0-9]*\), user \([0-9]*\), JIT \([0-9]*\), other \([0-9]*\)).*/\1 \2 \3 \4/p' "$T/err" |
	awk '{ print $1 + $2 + $3 + $4 }')
check "the summary's unresolved frames are the profile's [unknown] frames (${counted:-none}, $unk_all)" \
	[ "${counted:-x}" = "$unk_all" ]
finish
