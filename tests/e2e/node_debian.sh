# Debian's nodejs (node 18, V8 10.2: V8 and its metadata in libnode108,
# node's binary a small launcher), started with no flag and profiled as
# it runs: the metadata is found in libnode, the object on the stack
# that has it, and the JavaScript frames are named live from the heap.
# scripts/deps --test unpacks it into build-debian-node (scripts/debian-node:
# apt-get download, dpkg -x; never installed); run in a mount namespace
# of its own, which needs root.
. "$(dirname "$0")/lib.bash"

dir=${KPROF_DEBIAN_NODE:-$KP_SRC/build-debian-node}
[ -x "$dir/root/usr/bin/node" ] || skip "no Debian nodejs in $dir (scripts/deps --test fetches it)"
[ "$(id -u)" -eq 0 ] || skip "Debian's node runs in a mount namespace: root only"
libnode=$(echo "$dir"/root/usr/lib/*-linux-gnu/libnode.so.*)
nm -D "$(readlink -f "$dir/root/usr/bin/node")" | grep -q v8dbg_ && skip "this node's binary has the metadata: not the libnode case"
nm -D "$libnode" | grep -q v8dbg_ || skip "this libnode has no V8 metadata"
js=$KP_TESTS/workloads/js/service.js

# the runner execs node: its pid is node's
"$KP_SRC/scripts/debian-node" run "$dir" "$js" 20 >"$T/node.out" 2>"$T/node.err" &
npid=$!
for _ in $(seq 50); do grep -q '^pid ' "$T/node.out" && break; sleep 0.1; done
grep -q '^pid ' "$T/node.out" || {
	kill "$npid" 2>/dev/null
	wait "$npid" 2>/dev/null
	[ -s "$T/node.err" ] && cat "$T/node.err"
	skip "Debian's node did not start here (no overlay in a mount namespace?)"
}
check "node's pid is the runner's" grep -q "^pid $npid\$" "$T/node.out"
# past V8's first tiers: 1.5 s of node's own CPU, 6 s of the clock at most
hz=$(getconf CLK_TCK)
for _ in $(seq 60); do
	[ "$(awk '{ print $14 + $15 }' "/proc/$npid/stat" 2>/dev/null || echo 0)" -ge $((hz * 3 / 2)) ] && break
	sleep 0.1
done
"$KPROF" -p "$npid" -d 4 -F 999 --stats -f folded -o "$T/p.folded" 2>"$T/p.err"
check "exit status 0" [ $? -eq 0 ]
check "node runs on" kill -0 "$npid"
kill "$npid" 2>/dev/null
wait "$npid" 2>/dev/null
# the main thread's samples: all, the hot function named (its start
# line: V8 10.2's code has no source positions kprof reads), under its
# caller (or serveKprof, which TurboFan inlined the caller into), unknown
read -r total hot under unk <<<"$(awk '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
	if (line !~ /^node;/) next
	t += n
	if (line ~ /;JS:[*^~]scoreRequestKprof [^;]*service\.js:9(;|$)/) h += n
	if (line ~ /;JS:[*^~](handleRequestKprof|serveKprof) [^;]*service\.js:[0-9]+;JS:[*^~]scoreRequestKprof /) u += n
	if (line ~ /\[unknown: v8/) k += n
} END { print t + 0, h + 0, u + 0, k + 0 }' "$T/p.folded")"
echo "main thread $total samples; scoreRequestKprof named in $hot, under its caller in $under; [unknown: v8] in $unk"
show_top "$T/p.folded" 3
# why frames were not named, if any were not
awk '{ n = $NF; while (match($0, /\[unknown: v8[^]]*\]/)) { c[substr($0, RSTART, RLENGTH)] += n
	$0 = substr($0, RSTART + RLENGTH) } } END { for (k in c) print c[k], k }' "$T/p.folded"
grep 'node:' "$T/p.err"
check "named live, from libnode's metadata" grep -q "node: 1 processes named live" "$T/p.err"
check "no note of missing metadata" lacks "$T/p.err" "no usable V8 metadata"
# node gets a tenth of a core beside a loaded runner's other tests: 4 s
# at 999 Hz then gives it 200-400 samples
check "at least 150 samples ($total)" [ "$total" -ge 150 ]
check "the hot function named in >= 85%" at_least_pct "$hot" "$total" 85
check "under its caller in >= 80%" at_least_pct "$under" "$total" 80
check "[unknown: v8] in under 2%" [ "$((unk * 50))" -lt "$total" ]
check "no perf map was asked for" lacks "$T/p.err" "a perf map or jitdump would name them"
check "node's own JavaScript named (node:internal scripts)" grep -q ';JS:[~^*][^;]* node:internal/' "$T/p.folded"
finish
