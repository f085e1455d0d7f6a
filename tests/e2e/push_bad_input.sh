# Bad push targets and bad servers. A URL that does not parse is refused at
# once: one clear line, exit status 2, nothing written. In one run of five
# windows, servers that answer slowly (past --push-timeout), with garbage,
# with a redirect, that close the connection mid-request, or answer 429 for
# a while, then well, get every window once, in order, and a message; a
# server answering 400 gets each window once and no retry, and the message
# names its answer; a server that is up all along gets every window at once
# (the recording and the other pushes go on).
#
# kp-e2e: not-under-asan (the HTTP client's paths go through ASan in its
# unit tests; these checks are the servers' view, the same in every build)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/push_lib.bash"

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
modes=(up slow garbage redirect close e429 e400)
for m in "${modes[@]}"; do start_receiver "$m"; done
set_mode slow slow:3
set_mode garbage garbage
set_mode redirect redirect
set_mode close close
set_mode e429 status:429
set_mode e400 status:400
targets=()
for m in "${modes[@]}"; do targets+=(--push "pyroscope=$(url "$m")"); done
"$KPROF" -p "$spin" --every 1 -d 4.5 --push-timeout 1 "${targets[@]}" --push "parca=$(url e400)" \
	2>"$T/err" &
kp=$!
sleep 2.5
for m in slow garbage redirect close e429; do set_mode "$m" up; done
wait $kp
check "exit status 0" [ $? -eq 0 ]
sed 's/^/  stderr: /' "$T/err"
for m in "${modes[@]}"; do
	echo "  $m: $(requests "$m" | wc -l) requests, $(saved "$m" | wc -l) windows saved"
done

saved up >"$T/up.saved"
check "up: five windows, each once, in order" windows_ok "$T/up.saved" 5
for m in slow garbage redirect close e429; do
	saved "$m" >"$T/$m.saved"
	check "$m: five windows, each once, in order, once the server is well" windows_ok "$T/$m.saved" 5
	check "$m: a message names the server" grep -qF "$(url "$m")" "$T/err"
done
check "slow: the message says it timed out" says slow '[Tt]ime'
check "e429: the message names the answer (429)" says e429 429
check "e400: nothing saved" [ -z "$(saved e400)" ]
e400=$(requests e400 | grep -c '"status": 400')
check "e400: each window sent once to each of its two servers, no retry ($e400 requests)" [ "$e400" -eq 10 ]
check "e400: the message names the answer (400 and the server's words)" \
	says e400 '400.*status 400 by control|status 400 by control.*400'
finish
