# Exit status, command not found / not executable, bad options, SIGINT,
# attaching to running processes, and output files that are never partial.
# Its unprivileged checks follow perf_event_paranoid, which another test
# sets for its run: they run one after the other (tests/CMakeLists.txt).
# kp-e2e: perf-paranoid
. "$(dirname "$0")/lib.bash"

"$KPROF" -f folded -o "$T/x" -- "$KP_WORKLOADS/exitcode_fp" 3 2>/dev/null
check "the command's exit status is kprof's" [ $? -eq 3 ]
"$KPROF" -f folded -o "$T/x" -- "$KP_WORKLOADS/exitcode_fp" -15 2>/dev/null
check "killed by signal 15 -> 143" [ $? -eq 143 ]
# the end of -d is not the command's failure: kprof stopped it, exit 0 (as
# perf); a command that ends by itself within -d keeps its status
timeout 20 "$KPROF" -d 0.3 -f folded -o "$T/x" -- sleep 5 2>"$T/d.err"
check "-d ends the command: exit 0 (got $?)" [ $? -eq 0 ]
"$KPROF" -d 10 -f folded -o "$T/x" -- "$KP_WORKLOADS/exitcode_fp" -15 2>/dev/null
check "-d, the command killed by signal 15 by itself within it -> 143" [ $? -eq 143 ]

rm -f "$T/nf"
"$KPROF" -f folded -o "$T/nf" -- /nonexistent/prog 2>"$T/err"
check "command not found -> 127" [ $? -eq 127 ]
check "one-line error naming the command" grep -q "/nonexistent/prog: command not found" "$T/err"
check "no output file after a failed start" [ ! -e "$T/nf" ]
printf 'x' >"$T/notexec" && chmod -x "$T/notexec"
"$KPROF" -f folded -o "$T/nf" -- "$T/notexec" 2>/dev/null
check "not executable -> 126" [ $? -eq 126 ]

"$KPROF" --bogus-option true 2>"$T/err"
check "unknown option -> 2" [ $? -eq 2 ]
check "usage line" grep -q "usage: kprof" "$T/err"
"$KPROF" -e no-such-event true 2>"$T/err"
check "unknown event -> 2" [ $? -eq 2 ]
check "unknown event is named" grep -q "no-such-event" "$T/err"
"$KPROF" 2>/dev/null
check "nothing to sample -> 2" [ $? -eq 2 ]
"$KPROF" -f folded -o /nonexistent-dir/out -- true 2>"$T/err"
check "unwritable output -> 1" [ $? -eq 1 ]
check "names the output" grep -q "/nonexistent-dir/out" "$T/err"
check "--help lists options" sh -c "'$KPROF' --help | grep -q -- '--freq'"

# SIGINT and SIGTERM, and every other signal that would end kprof, stop the
# recording, reach the command (SIGPIPE, about kprof's own output, reaches
# it as SIGTERM) and still write the profile. Job control (set -m) keeps
# SIGINT at its default in the background job, as it is for a command typed
# at a terminal. ulimit -c 0: SIGQUIT's core dump would be slow.
# All six at once: the recordings overlap, so the test waits 1.5 s once.
# Six ASan builds writing at once under a loaded suite took more than 5 s
# to stop: "promptly" is well before the command's 60 s.
sigs="INT TERM QUIT USR1 ALRM PIPE"
declare -A kps
for sig in $sigs; do
	set -m
	(ulimit -c 0 && exec "$KPROF" -F 499 -f folded -o "$T/$sig.folded" -- "$KP_WORKLOADS/spin_fp" 60 2>/dev/null) &
	kps[$sig]=$!
	set +m
done
sleep 1.5
start=$(date +%s)
for sig in $sigs; do kill -$sig ${kps[$sig]}; done
for sig in $sigs; do
	wait ${kps[$sig]}
	st=$?
	want=$((128 + $(kill -l $sig)))
	[ $sig = PIPE ] && want=143
	check "SIG$sig: exit status of the interrupted command ($want), got $st" [ $st -eq $want ]
	check "SIG$sig: stopped promptly ($(($(date +%s) - start)) s, the command would run 60)" [ $(($(date +%s) - start)) -le 20 ]
	check "SIG$sig: complete profile written" grep -q 'spin_leaf' "$T/$sig.folded"
	check "SIG$sig: no temporary file left" sh -c "! ls '$T'/$sig.folded.tmp.* 2>/dev/null"
done

# kprof killed (SIGKILL, which it cannot catch): its command does not run on
"$KPROF" -F 99 -f folded -o "$T/KILL.folded" -- sleep 30 2>/dev/null &
kp=$!
sleep 0.5
child=$(pgrep -P $kp)
kill -KILL $kp
wait $kp 2>/dev/null
gone() { [ ! -e "/proc/$child" ] || [ "$(awk '{ print $3 }' "/proc/$child/stat" 2>/dev/null)" = Z ]; }
for _ in 1 2 3 4 5 6 7 8 9 10; do gone && break; sleep 0.1; done
check "SIGKILL: the command ($child) ends with kprof" gone
check "SIGKILL: no output, not even a partial one" [ ! -e "$T/KILL.folded" ]

# stderr closed (2>&-): the output does not become fd 2 and take kprof's
# messages (the summary, warnings)
"$KPROF" -F 499 -f folded -o "$T/closed.folded" -- "$KP_WORKLOADS/spin_fp" 0.3 2>&- >&-
check "stderr and stdout closed: exit 0" [ $? -eq 0 ]
check "stderr and stdout closed: only folded lines in the output" \
	sh -c "grep -q spin_leaf '$T/closed.folded' && ! grep -v -q -E '^[^ ].* [0-9]+$' '$T/closed.folded'"

# -o twice: report writes each in its format, the one-output commands refuse
"$KPROF" report "$T/INT.folded" -o "$T/two.folded" -o "$T/two.svg" 2>"$T/two.err"
check "report -o twice: both written" sh -c "grep -q spin_leaf '$T/two.folded' && grep -q '</svg>' '$T/two.svg'"
"$KPROF" flamegraph "$T/INT.folded" -o "$T/a.svg" -o "$T/b.svg" 2>"$T/two.err"
check "flamegraph -o twice: usage error" [ $? -eq 2 ]
check "flamegraph -o twice: says so" grep -q -- "-o given twice" "$T/two.err"
check "flamegraph -o twice: nothing written" sh -c "[ ! -e '$T/a.svg' ] && [ ! -e '$T/b.svg' ]"

# attach to a running process for a duration, and to one thread
"$KP_WORKLOADS/spin_fp" 8 1 &
bg=$!
sleep 0.2
"$KPROF" -p $bg -F 499 -d 1 -f folded -o "$T/p.folded" 2>"$T/p.err" || cat "$T/p.err"
check "-p -d: exit 0" [ $? -eq 0 ]
n=$(count_matching "$T/p.folded" '^spin_fp;(.*;)?spin_outer;spin_middle;spin_leaf$')
check "-p sees the process's stack ($n)" [ "$n" -ge 100 ]
check "-p sees only that process" [ "$(cut -d';' -f1 "$T/p.folded" | sort -u)" = spin_fp ]
tid=$(ls /proc/$bg/task | sort -n | tail -1)
"$KPROF" -t "$tid" -F 499 -f folded -o "$T/t.folded" --per-tid sleep 1 2>"$T/t.err" || cat "$T/t.err"
check "-t samples one thread" [ "$(cut -d';' -f1 "$T/t.folded" | sort -u)" = "spin_fp-$bg/$tid" ]
kill $bg
wait $bg

# -p of a process that exits ends the recording
"$KP_WORKLOADS/spin_fp" 0.5 &
bg=$!
start=$(date +%s)
"$KPROF" -p $bg -f folded -o "$T/p2.folded" 2>/dev/null
wait $bg
end=$(date +%s)
check "-p ends when the process exits" [ $((end - start)) -le 6 ]
# an unprivileged user: perf_event_paranoid decides. At 2 (Debian's default)
# the user's own command is sampled without kernel frames, and -a is refused
# with the reason.
# The user may not be able to enter the clone (under /root, or a private
# mktemp -d): what it runs, kprof and the workload, is copied to a folder of
# its own in /tmp, where it also works and keeps its cache.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	para=$(cat /proc/sys/kernel/perf_event_paranoid)
	u=$(mktemp -d /tmp/kprof-user.XXXXXX)
	trap 'rm -rf "$u"' EXIT
	cp "$KPROF" "$u/kprof"
	cp "$KP_WORKLOADS/spin_fp" "$u/spin_fp"
	chmod 755 "$u/kprof" "$u/spin_fp"
	chmod 777 "$u"
	asuser() { (cd "$u" && XDG_CACHE_HOME=$u/cache setpriv --reuid=65534 --regid=65534 --clear-groups "$@"); }
	asuser "$u/kprof" -F 499 -f folded -o "$u/u.folded" -- "$u/spin_fp" 0.5 2>"$T/uerr"
	st=$?
	if [ "$para" -ge 2 ]; then
		check "unprivileged command: sampled (exit $st)" [ $st -eq 0 ]
		check "unprivileged command: says kernel frames are excluded" grep -q "user space only" "$T/uerr"
		check "unprivileged command: user stack present" grep -q "spin_leaf" "$u/u.folded"
		check "unprivileged command: no kernel frames" sh -c "! grep -q 'entry_SYSCALL\|asm_sysvec' '$u/u.folded'"
	fi
	if [ "$para" -ge 1 ]; then
		asuser "$u/kprof" -a -f folded -o "$u/a.folded" sleep 0.1 2>"$T/aerr"
		check "unprivileged -a: refused with exit 1" [ $? -eq 1 ]
		check "unprivileged -a: names perf_event_paranoid and CAP_PERFMON" grep -q "perf_event_paranoid is $para.*CAP_PERFMON" "$T/aerr"
		check "unprivileged -a: no output file" [ ! -e "$u/a.folded" ]
	fi
	rm -rf "$u"
fi
finish
