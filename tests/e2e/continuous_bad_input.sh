# Bad push targets and bad servers. A URL that does not parse is refused at
# once: one clear line, exit status 2, nothing written. In one run, servers
# that answer slowly (past --push-timeout), with garbage, that close the
# connection mid-request, or answer 429 for a while, then well, get every
# window once, in order, and one line when failing and one when well again;
# a server answering with a redirect or 400 gets each window once (no retry,
# no redirect followed), dropped with a message naming the answer; a
# server that is up all along gets every window (the recording and the
# other pushes go on).
#
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/continuous_lib.bash"

# says NAME REGEX: a line of kprof's stderr names receiver NAME and matches
says() { grep -F "$(url "$1")" "$T/err" | grep -qE "$2"; }

for bad in 'pyroscope=not a url' 'pyroscope=ftp://127.0.0.1/' 'pyroscope=http://' \
	'pyroscope=http://127.0.0.1:99999' 'pyrosc0pe=http://127.0.0.1/' 'pyroscope'; do
	"$KPROF" --every 1 -d 1 --push "$bad" --spool "$T/spool" -o "$T/never-%s.kprof" -- true 2>"$T/err"
	status=$?
	check "--push '$bad': exit status 2 ($status): $(head -c 200 "$T/err")" [ $status -eq 2 ]
	check "--push '$bad': one line" [ "$(wc -l <"$T/err")" -eq 1 ]
	check "--push '$bad': the line names the option" grep -q -- '--push' "$T/err"
done
check "bad URLs: nothing written" [ -z "$(ls -d "$T"/spool "$T"/never-* 2>/dev/null)" ]

start_spin 30
modes=(up slow garbage close e429 redirect e400)
start_receivers "${modes[@]}"
set_mode slow slow:4
set_mode garbage garbage
set_mode close close
set_mode e429 status:429
set_mode redirect redirect
# the stand-in answers as the servers' handlers do (their rules, not kprof's)
python3 - "$(url e400)" "$T/e400.mode" >"$T/receiver.out" <<'PY'
import base64, gzip, json, sys, urllib.request
base, mode = sys.argv[1], sys.argv[2]
open(mode, "w").write("up\n")
pb = gzip.compress(b"\x0a\x04\x08\x01\x10\x02\x32\x00\x32\x03cpu\x32\x0bnanoseconds")  # sample_type cpu/nanoseconds
def post(path, body, want, what):
    try:
        got = urllib.request.urlopen(urllib.request.Request(base + path, data=body), timeout=10).status
    except urllib.error.HTTPError as e:
        got = e.code
    print(("ok" if got == want else "FAIL") + ": receiver: %s: %d" % (what, got))
ing = "/ingest?format=pprof&from=1700000000&until=1700000010&name="
post(ing + "app%7Benv=x%7D", pb, 200, "Pyroscope takes a pprof")
post(ing + "", pb, 400, "Pyroscope: no service name")
post(ing + "a%20b", pb, 400, "Pyroscope: a space in the service name")
post(ing + "app%7Bk-x=1%7D", pb, 400, "Pyroscope: a '-' in a label name")
post(ing + "app%7B1k=1%7D", pb, 422, "Pyroscope: a label name starting with a digit (its distributor)")
post(ing + "app", b"not a profile", 422, "Pyroscope: a body that is not pprof")
def parca(labels, raw, want, what):
    series = [{"labels": {"labels": [{"name": n, "value": v} for n, v in labels]},
               "samples": [{"rawProfile": base64.b64encode(raw).decode()}]}]
    post("/api/profiles/writeraw", json.dumps({"series": series, "normalized": True}).encode(), want, what)
parca([("__name__", "process_cpu"), ("env", "x")], pb, 200, "Parca takes a pprof")
parca([("env", "x")], pb, 400, "Parca: no __name__")
parca([("__name__", "p"), ("env", "x"), ("env", "y")], pb, 400, "Parca: a label twice")
parca([("__name__", "p")], b"\x1f\x8b\x08garbage", 500, "Parca: a gzip that does not inflate")
parca([("__name__", "p")], b"\x00", 400, "Parca: not pprof")
post("/api/profiles/writeraw", b"{", 400, "Parca: not JSON")
PY
while read -r line; do
	case $line in ok:*) ok "${line#ok: }" ;; *) fail "${line#FAIL: }" ;; esac
done <"$T/receiver.out"
rm -f "$T"/e400/* # what kprof sends it starts from nothing
set_mode e400 status:400

targets=()
for m in "${modes[@]}"; do targets+=(--push "pyroscope=$(url "$m")"); done
"$KPROF" -p "$spin" --every 1 -d 3.5 --push-timeout 2 "${targets[@]}" 2>"$T/err" &
kp=$!
# a bad server turns good once kprof has said it failed
bad=(slow garbage close e429)
while kill -0 $kp 2>/dev/null && [ ${#bad[@]} -gt 0 ]; do
	still=()
	for m in "${bad[@]}"; do
		if grep -qF "$(url "$m")" "$T/err"; then set_mode "$m" up; else still+=("$m"); fi
	done
	bad=("${still[@]+"${still[@]}"}")
	sleep 0.1
done
wait $kp
status=$?
sed 's/^/  stderr: /' "$T/err"
check "exit status 1 (windows refused by a server: dropped)" [ $status -eq 1 ]
n=$(sed -n 's/^kprof: \([0-9]*\) windows of 1 s.*/\1/p' "$T/err")
for m in "${modes[@]}"; do
	echo "  $m: $(requests "$m" | wc -l) requests, $(saved "$m" | wc -l) windows saved"
done

# kp_push_finish gives what is queued one --push-timeout at exit, and one
# thread sends to the seven targets in turn: the last windows may reach
# only some of them (kprof counts them as not delivered); every other
# window reaches every target that took it
nd=$(sed -n 's/^kprof: pushed [0-9]* windows\{0,1\}: .*, \([0-9]*\) lost, .*/\1/p' "$T/err")
echo "  $n windows, ${nd:=0} not delivered to every target"
saved up >"$T/up.saved"
first=$(awk 'NR == 1 { print $5 }' "$T/up.saved")
got_all() { # file: from the first window on, each once, in order, one after the other
	local k
	k=$(wc -l <"$1")
	[ "$k" -ge $((n - nd)) ] && windows_ok "$1" "$k" && { [ "$k" -eq 0 ] ||
		[ "$(awk 'NR == 1 { print $5 }' "$1")" = "$first" ]; }
}
once_each() { # receiver status: the requests, each for another window (no retry)
	local r
	r=$(requests "$1" | grep -o '"body": "[0-9a-f]*"' | sort | uniq -d)
	[ -z "$r" ] && [ "$(requests "$1" | grep -c "\"status\": $2")" -ge $((n - nd)) ]
}
check "up: every window, each once, in order" got_all "$T/up.saved"
# a server well again gets its windows once kprof's backoff (1 s, 2 s, ...)
# comes round: on a loaded machine that may be after the end (counted as
# not delivered), but some server must get there
recovered=0
for m in slow garbage close e429; do
	saved "$m" >"$T/$m.saved"
	check "$m: once the server is well, the windows it got each once, in order, from the first" \
		got_all "$T/$m.saved"
	check "$m: one line when the pushes fail, and one when they succeed again if they do" \
		[ "$(grep -F "$(url "$m")" "$T/err" | grep -c retrying)" -eq 1 -a \
		"$(grep -cF "$(url "$m")" "$T/err")" -eq $((1 + $(grep -F "$(url "$m")" "$T/err" | grep -c 'delivered again'))) ]
	[ -s "$T/$m.saved" ] && recovered=$((recovered + 1))
done
check "$recovered of the 4 servers well again got windows before the end" [ $recovered -ge 1 ]
check "slow: the message says it timed out" says slow 'timed out.*retrying'
check "garbage: the message says the answer is not HTTP" says garbage 'HTTP/0.9.*retrying'
check "close: the message says nothing came back" says close 'Empty reply.*retrying'
check "e429: the message names the answer (429)" says e429 'HTTP 429.*retrying'
for m in redirect e400; do
	check "$m: nothing saved" [ -z "$(saved $m)" ]
	check "$m: one line for the first window refused, one counting the others" \
		[ "$(grep -cF "$(url "$m")" "$T/err")" -eq 2 ]
done
check "redirect: each window sent once, no retry" once_each redirect 307
check "redirect: the message says it was not followed, and where it pointed" \
	says redirect "307 redirect to $(url redirect)/ingest.*not followed"
check "e400: each window sent once, no retry" once_each e400 400
check "e400: the message names the answer (400 and the server's words)" \
	says e400 'HTTP 400 .*status 400 by control.*dropped'
check "e400: the windows refused after it counted" says e400 'more windows? refused \(HTTP 400'

finish
