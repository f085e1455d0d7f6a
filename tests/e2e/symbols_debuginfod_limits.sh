# Debuginfod servers that misbehave (issue 28, item 4): kprof bounds every
# download in size and time, and the run's downloads in all, says once
# which server failed, leaves nothing in libdebuginfod's cache that a
# later run would trust, and honours SIGTERM during a download, the
# profile written. Two stand-in servers on 127.0.0.1
# (tests/e2e/debuginfod_stub.py, each on a free port, exiting by itself
# after 240 s, the test's own bound): one streams a body that never ends, one accepts and says
# nothing; elfutils' debuginfod cannot be made to do either. The workload
# is a stripped copy of spin_fp with its build-id and no debuglink, whose
# debuginfo kprof must ask the servers for. Small limits from the
# environment (DEBUGINFOD_MAXSIZE, DEBUGINFOD_TIMEOUT,
# KPROF_DEBUGINFOD_RUN_MAXSIZE) keep it to a few seconds; before, the
# first run never ended and SIGTERM waited for libdebuginfod's timeout.
. "$(dirname "$0")/lib.bash"
skip() {
	echo "SKIP: $*"
	exit 77
}

command -v python3 >/dev/null || skip "python3 not installed"
command -v strip >/dev/null || skip "strip not installed (binutils)"
src=$KP_WORKLOADS/spin_fp
bid=$(LC_ALL=C readelf -n "$src" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$bid" ] || skip "$src has no build-id (linker without --build-id)"
mkdir -p "$T/bin"
strip --strip-all -o "$T/bin/spin_dinfod" "$src"
# a second program of another build, for the case where downloads go on
src2=$KP_WORKLOADS/spin_nofp
bid2=$(LC_ALL=C readelf -n "$src2" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
strip --strip-all -o "$T/bin/spin_dinfod2" "$src2"
unset DEBUGINFOD_MAXSIZE DEBUGINFOD_MAXTIME DEBUGINFOD_TIMEOUT DEBUGINFOD_RETRY_LIMIT \
	DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE KPROF_DEBUGINFOD_RUN_MAXSIZE KPROF_DEBUGINFOD_RUN_MAXTIME

# start_stub MODE: a stand-in server; sets port_MODE once it listens (10 s at most)
start_stub() {
	local mode=$1 i
	python3 "$(dirname "$0")/debuginfod_stub.py" "$mode" "$T/port.$mode" "$T/log.$mode" 240 &
	at_exit "kill $! 2>/dev/null"
	for i in $(seq 100); do
		[ -s "$T/port.$mode" ] && break
		sleep 0.1
	done
	eval "port_$mode=\$(cat '$T/port.$mode' 2>/dev/null)"
}
start_stub endless
start_stub huge
start_stub silent
check "the stand-in servers listen" test -n "$port_endless" -a -n "$port_huge" -a -n "$port_silent"
echo "endless body on port $port_endless, 10 GiB stated on port $port_huge, silent on port $port_silent"

# run NAME URL [VAR=VALUE...]: kprof on the stripped copy with a
# debuginfod cache of its own ($T/dc-NAME), 30 s at most (a hang is a
# FAIL, not a stalled suite); sets status (124: it did not end)
# run NAME URL [VAR=VALUE ...]: kprof on spin_dinfod for 0.3 s ($cmd
# another command)
cmd=("$T/bin/spin_dinfod" 0.3)
run() {
	local name=$1 url=$2
	shift 2
	env DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$T/dc-$name" "$@" \
		timeout -k 5 30 "$KPROF" -F 499 -f folded -o "$T/$name.folded" -- "${cmd[@]}" \
		2>"$T/$name.err"
	status=$?
	sed 's/^/  | /' "$T/$name.err"
}
# kprof ended by itself (timeout neither sent SIGTERM nor SIGKILL)
ended() { [ "$status" -ne 124 ] && [ "$status" -ne 137 ]; }
# requests the server MODE logged, for any build-id (the workload's or
# libc's, whichever kprof names first) or for the workload's alone
requests() { grep -c "GET /buildid/" "$T/log.$1"; } # MODE
requests_bid() { grep -c "GET /buildid/${2:-$bid}/debuginfo" "$T/log.$1"; } # MODE [BUILD-ID]
# the profile is there and names the workload's samples
written() { grep -qE '^spin_dinfod;' "$T/$1.folded"; }
# nothing of any build-id is left in the cache (each has a folder of its
# own there): neither a partial download nor libdebuginfod's "not found"
# mark, which a later run would trust
cache_clean() { [ -z "$(find "$T/dc-$1" -mindepth 1 -type d 2>/dev/null)" ]; }
cache_small() { [ "$(du -sk "$T/dc-$1" 2>/dev/null | cut -f1)" -lt 4096 ]; }

# (a) an endless body: cut at DEBUGINFOD_MAXSIZE (the server states no
# size: only the bytes received tell), the server named once, and no
# download after it
run endless "http://127.0.0.1:$port_endless" DEBUGINFOD_MAXSIZE=2000000
check "endless body: kprof ended (within 30 s)" ended
check "endless body: exit status 0" [ "$status" -eq 0 ]
check "endless body: the server was asked" [ "$(requests endless)" -ge 1 ]
check "endless body: the profile is written" written endless
check "endless body: one line names the server" \
	[ "$(grep -c "debuginfod server http://127.0.0.1:$port_endless sent a file over 1.9 MiB (DEBUGINFOD_MAXSIZE)" "$T/endless.err")" -eq 1 ]
check "endless body: no other line about a server" [ "$(grep -c 'debuginfod server' "$T/endless.err")" -eq 1 ]
check "endless body: one line says the downloads are over" \
	[ "$(grep -c 'no more debuginfod downloads this run: a server sent more than the limit without stating a size' "$T/endless.err")" -eq 1 ]
check "endless body: the cache stays small (under 4 MiB)" cache_small endless
check "endless body: nothing left in the cache" cache_clean endless
# a later run is not told "not found" by a mark of the cut: it asks again
# (kprof symbolize names the one file, so the same build-id is asked
# for both times)
sym() {
	env DEBUGINFOD_URLS="http://127.0.0.1:$port_endless" DEBUGINFOD_CACHE_PATH="$T/dc-sym" \
		DEBUGINFOD_MAXSIZE=2000000 timeout -k 5 30 "$KPROF" symbolize --no-cache \
		-e "$T/bin/spin_dinfod" 0x1000 >"$T/sym.out" 2>"$T/sym.err"
}
before=$(requests_bid endless)
sym
check "kprof symbolize: ended, named the address" grep -q '^0x1000 ' "$T/sym.out"
check "kprof symbolize: asked for $bid" [ "$(requests_bid endless)" -eq $((before + 1)) ]
sym
check "kprof symbolize, again: asked for $bid again" [ "$(requests_bid endless)" -eq $((before + 2)) ]
check "kprof symbolize: nothing left in the cache" cache_clean sym

# (a2) a size stated over the limit is refused at once, costing nothing:
# the server is named once, and the other files are still asked for
# (two programs of two builds, each sampled for sure: which of libc's,
# ld.so's and the vdso's files a short run asks for is a draw)
cmd=(sh -c '"$1" 0.2 && "$2" 0.2' sh "$T/bin/spin_dinfod" "$T/bin/spin_dinfod2")
run huge "http://127.0.0.1:$port_huge" DEBUGINFOD_MAXSIZE=2000000
cmd=("$T/bin/spin_dinfod" 0.3)
check "stated size: kprof ended (within 30 s), exit status 0" [ "$status" -eq 0 ]
check "stated size: the profile is written" written huge
check "stated size: one line names the server" \
	[ "$(grep -c "debuginfod server http://127.0.0.1:$port_huge sent a file over 1.9 MiB (DEBUGINFOD_MAXSIZE)" "$T/huge.err")" -eq 1 ]
check "stated size: the downloads go on (every file asked for, no line saying they are over)" \
	test "$(requests_bid huge)" -ge 1 -a "$(requests_bid huge "$bid2")" -ge 1 -a \
	"$(grep -c 'no more debuginfod downloads' "$T/huge.err")" -eq 0
check "stated size: nothing left in the cache" cache_clean huge

# (b) a server that accepts and says nothing: cut after DEBUGINFOD_TIMEOUT
# seconds without a byte, named once, and no more downloads this run
run silent "http://127.0.0.1:$port_silent" DEBUGINFOD_TIMEOUT=2
check "silent server: kprof ended (within 30 s)" ended
check "silent server: exit status 0" [ "$status" -eq 0 ]
check "silent server: the profile is written" written silent
check "silent server: one line names it" \
	[ "$(grep -c "debuginfod server http://127.0.0.1:$port_silent sent nothing for 2 s (DEBUGINFOD_TIMEOUT)" "$T/silent.err")" -eq 1 ]
check "silent server: one line says the downloads are over" \
	[ "$(grep -c 'no more debuginfod downloads this run: a server stalled' "$T/silent.err")" -eq 1 ]
check "silent server: nothing left in the cache" cache_clean silent

# (c) the run's budget (KPROF_DEBUGINFOD_RUN_MAXSIZE): spent within the
# first download, which is cut; one line, and no other download
: >"$T/log.endless"
run budget "http://127.0.0.1:$port_endless" KPROF_DEBUGINFOD_RUN_MAXSIZE=1000000
check "budget: kprof ended (within 30 s), exit status 0" [ "$status" -eq 0 ]
check "budget: the profile is written" written budget
check "budget: one line says it is spent" \
	[ "$(grep -c "no more debuginfod downloads this run: the run's budget of 1000000 bytes" "$T/budget.err")" -eq 1 ]
check "budget: no download after it" [ "$(grep -c 'GET /buildid/' "$T/log.endless")" -eq 1 ]
check "budget: the cache stays small" cache_small budget

# ... and its time (KPROF_DEBUGINFOD_RUN_MAXTIME), spent on the silent
# server before its 30 s of silence are
: >"$T/log.silent"
run budget_time "http://127.0.0.1:$port_silent" KPROF_DEBUGINFOD_RUN_MAXTIME=2
check "time budget: kprof ended (within 30 s), exit status 0" [ "$status" -eq 0 ]
check "time budget: the profile is written" written budget_time
check "time budget: one line says it is spent" \
	[ "$(grep -c "no more debuginfod downloads this run: the run's budget of 2048 MiB and 2 s" "$T/budget_time.err")" -eq 1 ]
check "time budget: no download after it" [ "$(requests silent)" -eq 1 ]

# (d) SIGTERM while a download waits on the silent server (its own limit
# 30 s): kprof ends within 5 s, the profile written, the rest unnamed.
# The signal goes to kprof itself (timeout(1) would add its own kill);
# kprof is killed after some 40 s whatever happens (and would end by
# itself at its 30 s limit).
: >"$T/log.silent"
DEBUGINFOD_URLS="http://127.0.0.1:$port_silent" DEBUGINFOD_CACHE_PATH="$T/dc-term" \
	"$KPROF" -F 499 -f folded -o "$T/term.folded" -- "$T/bin/spin_dinfod" 0.3 2>"$T/term.err" &
kp=$!
for i in $(seq 300); do
	grep -q "GET /buildid/" "$T/log.silent" && break
	sleep 0.1
done
check "SIGTERM: the download began" grep -q "GET /buildid/" "$T/log.silent"
sleep 0.3
kill -TERM "$kp"
t0=$SECONDS
for i in $(seq 100); do
	kill -0 "$kp" 2>/dev/null || break
	sleep 0.1
done
took=$((SECONDS - t0))
kill -0 "$kp" 2>/dev/null && alive=1 || alive=0
kill -KILL "$kp" 2>/dev/null
wait "$kp"
sed 's/^/  | /' "$T/term.err"
check "SIGTERM: kprof ended within 5 s of it (took ~${took} s)" test "$alive" -eq 0 -a "$took" -le 5
check "SIGTERM: the profile is written" written term
check "SIGTERM: nothing left in the cache" cache_clean term

# (e) a server's address is shown escaped: control bytes in
# DEBUGINFOD_URLS (nothing listens there) come out percent-encoded
run escape $'http://127.0.0.1:1/\e]0;x\a'
check "escape: the profile is written" written escape
check "escape: the server is named, escaped" grep -qF 'http://127.0.0.1:1/%1B]0;x%07' "$T/escape.err"
check "escape: no control byte on stderr" sh -c "! LC_ALL=C grep -q '[[:cntrl:]]' '$T/escape.err'"
finish
