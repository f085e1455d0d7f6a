# Losses said (docs/continuous.md): with --every, the records the kernel
# dropped are in the run's last line without --stats, with the line that
# says why, and in each window's metadata (a .kprof window's, read back by
# kprof report: its flame graph's info line; and pprof's comments). Rings
# of one page cannot hold a sample and its stack copy: every sample is
# lost, and the command's exit record brings the LOST record, so the run
# always loses records (if it ever did not, the checks still hold: the
# line says what the windows hold).
. "$(dirname "$0")/lib.bash"

"$KPROF" --every 1 -m 1 -F 999 -o "$T/w-%s.kprof" -- "$KP_WORKLOADS/spin_nofp" 1.5 2>"$T/err"
status=$?
sed 's/^/  /' "$T/err"
check "exit status 0 ($status)" [ $status -eq 0 ]
said=$(sed -n 's/^kprof: [0-9]* windows\{0,1\} of 1 s, [0-9]* samples, \([0-9]*\) lost.*/\1/p' "$T/err")
check "the run's line says the records lost, without --stats (${said:-nothing})" [ -n "$said" ]
# what the windows' metadata hold, summed
sum=0
for f in "$T"/w-*.kprof; do
	n=$("$KPROF" report -f svg "$f" | sed -n 's/.* samples, \([0-9]*\) lost.*/\1/p' | head -1)
	echo "  $(basename "$f"): ${n:-no metadata} lost"
	sum=$((sum + ${n:-0}))
done
check "the windows' metadata hold them: $sum in all, as the line says (${said:-none})" [ "$sum" = "${said:-x}" ]
check "records were lost (one-page rings)" [ "${said:-0}" -gt 0 ]
if [ "${said:-0}" -gt 0 ]; then
	check "the line that says why" grep -q "^kprof: $said records were lost: the rings (1 pages per CPU)" "$T/err"
fi
# the window pushed or written as pprof carries them in its comments
last=$(ls "$T"/w-*.kprof | tail -1)
"$KPROF" report -o "$T/last.pb.gz" "$last" 2>/dev/null
PPROF=$(go env GOTOOLDIR 2>/dev/null)/pprof
if [ -x "$PPROF" ]; then
	check "pprof's comments hold the window's lost count" \
		sh -c "'$PPROF' -comments '$T/last.pb.gz' 2>/dev/null | grep -qx 'lost=[0-9]*'"
fi
finish
