# Jitdumps from another user (issue 28, items 1 and 2). Another user's
# processes map jitdumps, as a JIT maps its own for perf to find: eight
# of them one file of 600,000 loads in descending address order, one a
# file it grows at 20 MB/s with 64 KiB names. Before, the agent read that
# file once per process, quadratically (minutes), kept every name whole
# and never let go; SIGTERM waited for the read. Now:
#  - `kprof -a --every 1` names the file cut short by kprof's cap on
#    what it keeps with a window, ends promptly at SIGTERM with its
#    windows out and the file named in the summary, its RSS bounded;
#  - a `kprof -a` stopped by SIGTERM while the files are being read ends
#    promptly and writes its profile, having read each file once.
#
# kp-e2e: whole-machine (it samples every CPU: no other end-to-end test
# runs beside it; tests/CMakeLists.txt)
# kp-e2e: kernel-guards (make_other_user switches fs.protected_* off)
. "$(dirname "$0")/lib.bash"

[ "$(id -u)" -eq 0 ] || skip "needs root (another user's processes, a whole-machine recording)"
command -v setpriv >/dev/null || skip "needs setpriv"
command -v setsid >/dev/null || skip "needs setsid"
make_other_user

# what the other user runs and writes lives in a folder root can enter
# (CI's clone is in one other users cannot)
u=$(mktemp -d /tmp/kp-jitdump-atk.XXXXXX)
at_exit "rm -rf '$u'"
chmod 0755 "$u"
cp "$KP_WORKLOADS/jitdump_attack_fp" "$u/atk"
chmod 0755 "$u/atk"
mkdir "$u/d"
chown "$OTHER_UID:$OTHER_UID" "$u/d"
as_user "$u/atk" write "$u/d/jit-1.dump" 600000 desc 0 1
check "the other user's dump is written" [ -s "$u/d/jit-1.dump" ]

# each in a process group of its own (setsid), so that one kill ends it
# and the processes it forked
setsid setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups \
	"$u/atk" hold "$u/d/jit-1.dump" 8 60 &
hold=$!
at_exit "kill -- -$hold 2>/dev/null"
setsid setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups \
	"$u/atk" grow "$u/d/jit-2.dump" 20 65536 60 &
grow=$!
at_exit "kill -- -$grow 2>/dev/null"
sleep 1

# the agent, windows of 1 s, until a window's notes name the file cut
# short (a generous bound: before, it read for minutes and said nothing),
# then SIGTERM
"$KPROF" -a --every 1 --stats -o "$T/w-%H%M%S.folded" 2>"$T/every.err" &
kp=$!
for _ in $(seq 900); do
	grep -q "stopped reading" "$T/every.err" && break
	kill -0 "$kp" 2>/dev/null || break
	sleep 0.1
done
check "the file cut short by the cap is named, with its window" \
	grep -q "stopped reading $u/d/jit-1.dump at offset [0-9]*: .*kprof keeps at most 64 MiB" "$T/every.err"
stop_within "$kp" 200
check "SIGTERM ends the agent (within 20 s)" [ $? -eq 0 ]
wait "$kp"
rc=$?
check "exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "its windows came out" grep -qE '^kprof: [1-9][0-9]* windows? of 1 s' "$T/every.err"
check "no sanitizer report" lacks "$T/every.err" 'Sanitizer|runtime error'
check "the summary says a file was read in part" grep -q 'jitdump was read only in part' "$T/every.err"
# (ASan's shadow and quarantine take more: the bound is generous there)
max_rss=400
{ [ -n "${ASAN_OPTIONS-}" ] || ldd "$KPROF" 2>/dev/null | grep -q libasan; } && max_rss=1536
peak=$(sed -n 's/.*RSS \([0-9]*\)\.[0-9] MiB$/\1/p' "$T/every.err" | sort -n | tail -1)
at_most() { [ -n "$1" ] && [ "$1" -le "$2" ]; }
check "its RSS stays bounded (peak ${peak:-?} MiB, at most $max_rss)" at_most "$peak" "$max_rss"

# a recording stopped by SIGTERM while the files are read
"$KPROF" -a -d 60 --stats -o "$T/one.folded" 2>"$T/one.err" &
kp=$!
sleep 2
stop_within "$kp" 200
check "SIGTERM ends a recording (within 20 s)" [ $? -eq 0 ]
wait "$kp"
rc=$?
check "exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "its profile written" [ -s "$T/one.folded" ]
# loads are counted once per file: eight readings of the first file
# would be millions (the count of files may include other JITs the
# machine runs)
check "each file read once, whatever maps it" \
	grep -qE '^kprof: jitdumps: [0-9]{1,6} code loads read .* from [2-9] files' "$T/one.err"
finish
