# JIT code named from the process's own /tmp/perf-PID.map: a C program
# copies a function into anonymous executable memory and names the copies;
# a stale entry for the same range comes first and must lose to the later
# line, a garbage line is skipped, a name holding ';' and a control
# character stays one well-formed folded frame. Also: a map that grows while
# the process runs, a map the process deletes before it exits, a map with
# a 1.5 GiB tail, and a map not owned by the process's user (ignored).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

w=$KP_WORKLOADS/jitcopy_fp
[ -x "$w" ] || skip "no jitcopy_fp workload for this architecture"

# 1. the map is complete from the start
"$KPROF" -F 499 -f folded --annotate -o "$T/jit.folded" -- "$w" 1.5 >"$T/out" 2>"$T/err"
check "exit status 0" [ $? -eq 0 ]
remove_map_of "$(sed -n 's/^pid //p' "$T/out")"
total=$(count_matching "$T/jit.folded" '^jitcopy_fp;')
hot=$(count_matching "$T/jit.folded" '^jitcopy_fp;(.*;)?main;run_jit_kprof;kprof_jit_hot_spin_\[j\]$')
native=$(count_matching "$T/jit.folded" '^jitcopy_fp;(.*;)?main;native_spin_kprof$')
odd=$(count_matching "$T/jit.folded" '^jitcopy_fp;(.*;)?main;run_jit_kprof;kprof_jit:semi[^;]*ctl_\[j\]$')
echo "jitcopy_fp: $total samples; hot JIT $hot, native $native, odd name $odd"
show_top "$T/jit.folded" 4
check "at least 100 samples ($total)" [ "$total" -ge 100 ]
# jitcopy splits its CPU time: the hot copy a half, the native spin a third,
# the odd copy a sixth; each check leaves a margin of 2.5 times or more
check "main;run_jit_kprof;kprof_jit_hot_spin_[j] carries >= 20%" at_least_pct "$hot" "$total" 20
check "main;native_spin_kprof carries >= 15%" at_least_pct "$native" "$total" 15
check "the ';' in a JIT name became ':' and the frame is named (>= 5%)" at_least_pct "$odd" "$total" 5
check "the stale entry (same range, earlier line) never appears" lacks "$T/jit.folded" STALE
check "the garbage line named nothing" lacks "$T/jit.folded" 'garbage'
check "no control characters in the folded output" lacks "$T/jit.folded" '[[:cntrl:]]'
check "every line is 'frames COUNT'" sh -c "[ -s '$T/jit.folded' ] && ! grep -vqE '^[^ ].* [0-9]+$' '$T/jit.folded'"
check "JIT samples are not [unknown]" lacks "$T/jit.folded" '^jitcopy_fp;(.*;)?run_jit_kprof;\[unknown'
check "the template in the binary is not confused with its copies" \
	lacks "$T/jit.folded" 'kp_jit_template'
check "the garbage line is counted in the summary or a note" \
	grep -qiE 'malformed|garbage|skipped|bad line' "$T/err"
check "the summary counts no unresolved JIT frame" grep -qE 'unresolved \(.*JIT 0[,)]' "$T/err"
cat "$T/err"

# without --annotate the JIT frame carries no suffix
"$KPROF" -F 299 -f folded -o "$T/plain.folded" -- "$w" 0.5 >"$T/out" 2>/dev/null
remove_map_of "$(sed -n 's/^pid //p' "$T/out")"
check "without --annotate: run_jit_kprof;kprof_jit_hot_spin" \
	grep -qE '^jitcopy_fp;(.*;)?run_jit_kprof;kprof_jit_hot_spin [0-9]+$' "$T/plain.folded"

# 2. the map grows: at start only the stale entry (and the garbage line);
# the right entries are appended a third into the run. Names come from the
# map as it is when the process exits, so the stale name still loses.
"$KPROF" -F 499 -f folded --annotate -o "$T/grow.folded" -- "$w" 1.5 grow >"$T/out" 2>"$T/err"
remove_map_of "$(sed -n 's/^pid //p' "$T/out")"
total=$(count_matching "$T/grow.folded" '^jitcopy_fp;')
hot=$(count_matching "$T/grow.folded" '^jitcopy_fp;(.*;)?run_jit_kprof;kprof_jit_hot_spin_\[j\]$')
echo "grow: $total samples, hot JIT $hot"
check "grown map: the hot copy is named (>= 20%)" at_least_pct "$hot" "$total" 20
check "grown map: the stale name never appears" lacks "$T/grow.folded" STALE

# 2b. the map is deleted by the process just before it exits: it was
# there for the whole run, so it must have been read (or kept open) while
# the process lived
"$KPROF" -F 499 -f folded --annotate -o "$T/unlink.folded" -- "$w" 1 unlink >"$T/out" 2>"$T/err"
check "map deleted at exit: exit status 0" [ $? -eq 0 ]
total=$(count_matching "$T/unlink.folded" '^jitcopy_fp;')
hot=$(count_matching "$T/unlink.folded" '^jitcopy_fp;(.*;)?run_jit_kprof;kprof_jit_hot_spin_\[j\]$')
echo "map deleted at exit: $total samples, hot JIT $hot"
check "map deleted at exit: the workload removed it" [ ! -e "/tmp/perf-$(sed -n 's/^pid //p' "$T/out").map" ]
check "map deleted at exit: the hot copy is still named (>= 20%)" at_least_pct "$hot" "$total" 20

# 2c. a big map, as a long-lived JIT leaves one: the entries, then a
# 1.5 GiB hole (a sparse file: no disk). It is read after the recording,
# streamed, keeping only the names of the sampled addresses: the frames
# are named, every line is read (the hole is one malformed line; a reader
# that stopped at 1 GiB dropped it without a word), and kprof's memory
# stays far below the map's size.
timed=()
[ -x /usr/bin/time ] && timed=(/usr/bin/time -f "%M" -o "$T/big.rss")
"${timed[@]}" "$KPROF" -F 499 -f folded --annotate -o "$T/big.folded" -- "$w" 1 sparse=1536M \
	>"$T/out" 2>"$T/err"
check "big map: exit status 0" [ $? -eq 0 ]
pid=$(sed -n 's/^pid //p' "$T/out")
remove_map_of "$pid"
hot=$(count_matching "$T/big.folded" '^jitcopy_fp;(.*;)?run_jit_kprof;kprof_jit_hot_spin_\[j\]$')
odd=$(count_matching "$T/big.folded" '^jitcopy_fp;(.*;)?run_jit_kprof;kprof_jit:semi[^;]*ctl_\[j\]$')
echo "big map: hot JIT $hot, odd name $odd"
grep 'perf-' "$T/err"
check "big map: the hot copy is named" [ "$hot" -gt 0 ]
check "big map: the odd name too" [ "$odd" -gt 0 ]
check "big map: no JIT frame is [unknown]" lacks "$T/big.folded" 'run_jit_kprof;\[unknown'
check "big map: the stale name never appears" lacks "$T/big.folded" STALE
check "big map: the garbage line and the hole are the 2 malformed lines, said" \
	grep -q "/tmp/perf-$pid.map: skipped 2 malformed lines" "$T/err"
if [ -s "$T/big.rss" ]; then
	echo "big map: kprof's peak RSS $(cat "$T/big.rss") KB"
	# the map is 1.5 GiB; reading it whole took over 1 GB. 256 MB leaves
	# room for a sanitizer build.
	check "big map: kprof's peak RSS under 256 MB" [ "$(cat "$T/big.rss")" -lt 262144 ]
fi

# 3. security: a map owned by another user than the process's is not read
# (perf's rule: /tmp is world-writable). Someone (nobody) created
# /tmp/perf-PID.map before the process started; the process appends to it.
if [ "$(id -u)" -eq 0 ]; then
	"$KPROF" -F 299 -f folded --annotate -o "$T/own.folded" -- sh -c "
		f=/tmp/perf-\$\$.map
		rm -f \$f && : >\$f && chown 65534 \$f || exit 9
		exec '$w' 1 append" >"$T/own.out" 2>"$T/err"
	check "a map owned by another user: exit status 0" [ $? -eq 0 ]
	remove_map_of "$(sed -n 's/^pid //p' "$T/own.out")"
	check "a map owned by another user: no name from it" lacks "$T/own.folded" kprof_jit
	check "a map owned by another user: its frames are JIT [unknown: anonymous, no perf map]" \
		grep -qE '^jitcopy_fp;(.*;)?run_jit_kprof;\[unknown: anonymous, no perf map\]' "$T/own.folded"
	check "a map owned by another user: the summary counts unresolved JIT frames" \
		grep -qE 'unresolved \(.*JIT [1-9][0-9]*[,)]' "$T/err"
	check "a map owned by another user: the summary says what would name the JIT frames" \
		grep -qE '^kprof: JIT code of pid [0-9]+: of its [0-9]+ frames .*% unknown; a perf map or jitdump would name them' "$T/err"
	check "a map owned by another user: said once on stderr" \
		sh -c "[ \$(grep -c 'perf-[0-9]*\.map' '$T/err') -eq 1 ]"
	grep 'perf-' "$T/err"
fi
finish
