# A process of another user (uid 65534) that plays node to kprof: its
# executable exports V8's metadata, its stack holds a JavaScript-looking
# frame, and its heap is crafted (tests/workloads/v8_hostile.c): a
# function that is its own map and shared info, a cons string made of
# itself, line ends and a source that claim gigabytes, slots pointing at
# unmapped memory and into the kernel, a heap another thread rewrites all
# the time, a frame chain that loops. kprof must neither crash, hang nor
# grow, must leave the processes running, and must name what checks out
# and say unknown for what does not, never the name the crafted heap
# hides ("never").
. "$(dirname "$0")/lib.bash"

[ "$(id -u)" = 0 ] || skip "needs root (a process of another user)"
command -v setpriv >/dev/null || skip "needs setpriv"

u=$(mktemp -d /tmp/kp-v8-hostile.XXXXXX)
at_exit "rm -rf '$u'"
chmod 0755 "$u"
cp "$KP_WORKLOADS/v8_hostile_fp" "$u/node"
chmod 0755 "$u/node"
pids=
for v in selfmap conscycle hugelines bigsource unmapped kernel race loop; do
	setpriv --reuid=65534 --regid=65534 --clear-groups "$u/node" "$v" 20 >"$T/$v.out" &
	at_exit "kill $! 2>/dev/null"
done
for v in selfmap conscycle hugelines bigsource unmapped kernel race loop; do
	for _ in $(seq 50); do grep -q '^pid ' "$T/$v.out" && break; sleep 0.1; done
	pids=$pids${pids:+,}$(sed -n 's/^pid //p' "$T/$v.out")
done
echo "hostile processes: $pids"

/usr/bin/time -f "%M" -o "$T/rss" timeout 60 "$KPROF" -p "$pids" -d 3 -F 499 -f folded -o "$T/h.folded" 2>"$T/err"
status=$?
check "kprof ends by itself, exit status 0 ($status)" [ "$status" -eq 0 ]
rss=$(tail -1 "$T/rss")
echo "kprof's peak RSS: $rss KiB"
check "kprof's memory stays small (${rss} KiB < 200 MiB)" [ "${rss:-999999}" -lt 204800 ]
for p in ${pids//,/ }; do
	check "process $p runs on" kill -0 "$p"
	check "process $p is not stopped" sh -c "! grep -qE '^State:[[:space:]]+[tT] ' /proc/$p/status"
done
grep -o 'JS:[^;]*\|\[unknown: v8[^;]*' "$T/h.folded" | sort | uniq -c
check "a function its own shared info: unknown" grep -q '\[unknown: v8: no shared function info\]' "$T/h.folded"
check "a cons string of itself: unknown" grep -q '\[unknown: v8: string nested too deep\]' "$T/h.folded"
check "line ends past the heap: the name, no line" grep -qE ';JS:\*hostileLines /h/hostile\.js [0-9]+$|;JS:\*hostileLines /h/hostile\.js;' "$T/h.folded"
check "a source of 2^28 characters: read within the bound" grep -q ';JS:\*hostileSource /h/hostile\.js' "$T/h.folded"
check "a frame chain that loops: named" grep -q ';JS:\*loopFunction /h/hostile\.js' "$T/h.folded"
check "the name the crafted heap hides never shows" lacks "$T/h.folded" 'JS:[^;]*never'
check "no control byte in any frame" lacks "$T/h.folded" $'[\x01-\x08\x0b-\x1f\x7f]'

# SIGTERM while kprof reads the crafted heaps: it ends within a second
# (3 s allowed: a loaded runner, and this run is the second to use the
# fake's file, whose symbols the symbolizer indexes whole then: 0.7-1 s
# of the time measured here), its profile written
"$KPROF" -p "$pids" -F 499 -f folded -o "$T/term.folded" 2>"$T/term.err" &
kp=$!
sleep 1.5
t0=$(date +%s%N)
stop_within "$kp" 30
ended=$?
echo "kprof ended $((($(date +%s%N) - t0) / 1000000)) ms after SIGTERM"
check "SIGTERM ends kprof (within 3 s)" [ "$ended" -eq 0 ]
wait "$kp"
check "its profile written after SIGTERM" [ -s "$T/term.folded" ]
finish
