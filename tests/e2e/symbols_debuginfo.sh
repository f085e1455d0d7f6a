# Separate debuginfo for a stripped binary: the static functions of
# spin_fp (spin_leaf, spin_middle, spin_outer: in .symtab only, never in
# .dynsym) are named from a debug file found (a) by build-id under
# --debuginfo-dir DIR/.build-id/xx/rest.debug, (b) by .gnu_debuglink next
# to the binary and in its .debug/ folder. Controls: without the debug file
# they are not named, and a debug file of another program behind the right
# debuglink name is refused (no wrong names). (d) From a debuginfod server
# (elfutils' debuginfod on 127.0.0.1) when DEBUGINFOD_URLS names it;
# without it, libdebuginfod is not even loaded.
#
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

command -v objcopy >/dev/null && command -v strip >/dev/null || skip "objcopy/strip not installed (binutils)"
src=$KP_WORKLOADS/spin_fp
bid=$(LC_ALL=C readelf -n "$src" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$bid" ] || skip "$src has no build-id (linker without --build-id)"
echo "spin_fp build-id $bid"

# stripped copy named NAME in DIR (comm is NAME), debug file DBG
make_stripped() { # dir name
	mkdir -p "$1"
	strip --strip-all -o "$1/$2" "$src"
}
stack='main;spin_outer;spin_middle;spin_leaf'

# Each run has a cache of its own: the builds indexed by one run (all are
# spin_fp's build-id) would otherwise name the next run's frames without
# any debuginfo lookup.
record() { # name binary [kprof options...]
	local name=$1 bin=$2
	shift 2
	XDG_CACHE_HOME=$T/cache-$name "$KPROF" -F 999 -f folded "$@" -o "$T/$name.folded" -- "$bin" 0.4 2>"$T/$name.err"
}

named_share() { # name comm -> prints "exact total"
	echo "$(count_matching "$T/$1.folded" "^$2;(.*;)?$stack\$") $(count_matching "$T/$1.folded" "^$2;")"
}

# control: stripped, nothing to find
make_stripped "$T/none" spin_none
check "the stripped copy has no .symtab" sh -c "! LC_ALL=C readelf -S '$T/none/spin_none' | grep -q '\.symtab'"
check "spin_leaf is not in its .dynsym" sh -c "! LC_ALL=C readelf --dyn-syms '$T/none/spin_none' | grep -q spin_leaf"
record none "$T/none/spin_none"
check "control: without debuginfo spin_leaf is not named" lacks "$T/none.folded" spin_leaf
# nothing names them but the unwind table: where each starts
check "control: its static functions are named by their start (spin_none+0x...)" \
	grep -qE '(^|;)spin_none\+0x[0-9a-f]+(;| )' "$T/none.folded"
show_top "$T/none.folded" 2

# (a) by build-id under --debuginfo-dir
make_stripped "$T/a" spin_bid
mkdir -p "$T/dbg/.build-id/${bid:0:2}"
objcopy --only-keep-debug "$src" "$T/dbg/.build-id/${bid:0:2}/${bid:2}.debug"
record bid "$T/a/spin_bid" --debuginfo-dir "$T/dbg"
check "build-id: exit status 0" [ $? -eq 0 ]
read -r exact total <<<"$(named_share bid spin_bid)"
echo "build-id: $total samples, $exact in $stack"
show_top "$T/bid.folded" 2
check "build-id: $stack carries >= 80%" at_least_pct "$exact" "$total" 80
# --debuginfo-dir is repeatable: the right one second
record bid2 "$T/a/spin_bid" --debuginfo-dir "$T/none" --debuginfo-dir "$T/dbg"
read -r exact total <<<"$(named_share bid2 spin_bid)"
check "build-id: found in the second of two --debuginfo-dir ($exact of $total)" at_least_pct "$exact" "$total" 80
# the first run that needed the build's DWARF marked it; the second indexes
# it (symbols from the debug file, all of its DWARF) under its build-id;
# later runs name the frames from the index alone, even with the debug
# file gone
check "build-id: the first run marked the build" test -e "$T/cache-bid/kprof/symbols/$bid.seen"
check "build-id: the first run saved no index" test ! -e "$T/cache-bid/kprof/symbols/$bid"
XDG_CACHE_HOME=$T/cache-bid "$KPROF" -F 999 -f folded -o "$T/bid_second.folded" --debuginfo-dir "$T/dbg" -- "$T/a/spin_bid" 0.4 2>"$T/bid_second.err"
read -r exact total <<<"$(named_share bid_second spin_bid)"
check "build-id, second run (indexing the build): $stack carries >= 80% ($exact of $total)" at_least_pct "$exact" "$total" 80
check "build-id: the second run saved the build's index" test -s "$T/cache-bid/kprof/symbols/$bid"
check "build-id: ... and removed the marker" test ! -e "$T/cache-bid/kprof/symbols/$bid.seen"
mv "$T/dbg" "$T/dbg-away"
XDG_CACHE_HOME=$T/cache-bid "$KPROF" -F 999 -f folded -o "$T/bid_warm.folded" -- "$T/a/spin_bid" 0.4 2>"$T/bid_warm.err"
mv "$T/dbg-away" "$T/dbg"
read -r exact total <<<"$(named_share bid_warm spin_bid)"
check "build-id, from the saved index with no debug file: $stack carries >= 80% ($exact of $total)" at_least_pct "$exact" "$total" 80
record bid_nocache "$T/a/spin_bid" --no-cache
check "--no-cache saves no index" test ! -e "$T/cache-bid_nocache/kprof/symbols"

# (b) by .gnu_debuglink, next to the binary
make_stripped "$T/b" spin_dl
objcopy --only-keep-debug "$src" "$T/b/spin_dl.debug"
objcopy --add-gnu-debuglink="$T/b/spin_dl.debug" "$T/b/spin_dl"
record dl "$T/b/spin_dl"
read -r exact total <<<"$(named_share dl spin_dl)"
echo "debuglink: $total samples, $exact in $stack"
show_top "$T/dl.folded" 2
check "debuglink next to the binary: $stack carries >= 80%" at_least_pct "$exact" "$total" 80

# (b2) by .gnu_debuglink, in the binary's .debug/ folder
make_stripped "$T/b2" spin_dl2
mkdir -p "$T/b2/.debug"
objcopy --only-keep-debug "$src" "$T/b2/.debug/spin_dl2.debug"
(cd "$T/b2/.debug" && objcopy --add-gnu-debuglink=spin_dl2.debug "$T/b2/spin_dl2")
record dl2 "$T/b2/spin_dl2"
read -r exact total <<<"$(named_share dl2 spin_dl2)"
check "debuglink in .debug/: $stack carries >= 80% ($exact of $total)" at_least_pct "$exact" "$total" 80

# (c) the debuglink names a file that holds another program's debuginfo
# (inline_fp's): its build-id and CRC do not match, so it must not be used
make_stripped "$T/c" spin_bad
objcopy --only-keep-debug "$src" "$T/c/spin_bad.debug"
objcopy --add-gnu-debuglink="$T/c/spin_bad.debug" "$T/c/spin_bad"
objcopy --only-keep-debug "$KP_WORKLOADS/inline_fp" "$T/c/spin_bad.debug"
record bad "$T/c/spin_bad"
check "mismatched debuginfo: exit status 0" [ $? -eq 0 ]
check "mismatched debuginfo: no name from the other program" lacks "$T/bad.folded" '^spin_bad;.*(inl_|spin_leaf)'
show_top "$T/bad.folded" 2
# (d) debuginfod: a stripped copy with neither debuglink nor build-id file,
# its debug file served by elfutils' own debuginfod (package debuginfod),
# which indexes a directory of its own on a free local port with a
# database of its own, as a real server indexes a build farm's output
make_stripped "$T/d" spin_dinfod
mkdir -p "$T/d-srv"
objcopy --only-keep-debug "$src" "$T/d-srv/spin.debug"
dinfod_pid=
stop_debuginfod() {
	[ -n "$dinfod_pid" ] || return 0
	kill "$dinfod_pid" 2>/dev/null
	wait "$dinfod_pid" 2>/dev/null
	dinfod_pid=
}
# the server goes at exit whatever happens (the trap symbols_lib.bash set
# is kept, after it)
prev_trap=$(trap -p EXIT)
prev_trap=${prev_trap#trap -- }
eval "prev_trap=${prev_trap% EXIT}"
trap "stop_debuginfod; $prev_trap" EXIT
# one HTTP GET of PATH on the server, body on stdout; fails when nothing
# listens (bash's /dev/tcp: no client tool needed)
dinfod_get() { # path
	timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
		printf "GET %s HTTP/1.0\r\n\r\n" "$1" >&3 && cat <&3' "$port" "$1" 2>/dev/null
}
# ready: listening and the directory's one file scanned, no scan pending,
# within 10 s in all; 0.188 refuses port 0, so a port free a moment ago is
# taken, and a server that exits at once (its port lost to another
# process) is started again on another
start_debuginfod() {
	local end=$((SECONDS + 10)) try m
	for try in 1 2 3; do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		# timeout: never outlives a test killed past its trap
		timeout 120 debuginfod -F "$T/d-srv" -p "$port" -d "$T/d-db.sqlite" -t 0 -g 0 -v \
			>"$T/d-server.log" 2>&1 &
		dinfod_pid=$!
		while [ "$SECONDS" -lt "$end" ] && kill -0 "$dinfod_pid" 2>/dev/null; do
			m=$(dinfod_get /metrics)
			if grep -q '^scanned_files_total{source="file"} 1$' <<<"$m" &&
				grep -q '^thread_work_pending{role="scan"} 0$' <<<"$m"; then
				return 0
			fi
			sleep 0.1
		done
		stop_debuginfod
	done
	return 1
}
if ! command -v debuginfod >/dev/null; then
	echo "SKIP (d): debuginfod not installed (scripts/deps --test installs it)"
else
	t0=$(date +%s.%N)
	start_debuginfod
	check "debuginfod started and indexed its directory within 10 s" [ -n "$dinfod_pid" ]
	if [ -n "$dinfod_pid" ]; then
		echo "debuginfod: port $port, ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
	else
		tail -5 "$T/d-server.log"
	fi
	DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$T/d-cache" \
		record dinfod "$T/d/spin_dinfod"
	stop_debuginfod
	check "debuginfod: the server served $bid's debuginfo" \
		grep -qE "GET /buildid/$bid/debuginfo 200 " "$T/d-server.log"
	check "debuginfod: the debuginfo landed in DEBUGINFOD_CACHE_PATH" test -s "$T/d-cache/$bid/debuginfo"
	read -r exact total <<<"$(named_share dinfod spin_dinfod)"
	echo "debuginfod: $total samples, $exact in $stack"
	show_top "$T/dinfod.folded" 2
	check "debuginfod: $stack carries >= 80%" at_least_pct "$exact" "$total" 80
fi

# without DEBUGINFOD_URLS, libdebuginfod (and libcurl behind it) is not
# loaded: libdwfl would load it on every failed local lookup
(unset DEBUGINFOD_URLS; LD_DEBUG=files LD_DEBUG_OUTPUT="$T/ld" record nodinfod "$T/none/spin_none")
check "no DEBUGINFOD_URLS: libdebuginfod not loaded" sh -c "! cat '$T'/ld.* | grep -q 'file=libdebuginfod'"
check "no DEBUGINFOD_URLS: the LD_DEBUG log exists (the check above can fail)" sh -c "cat '$T'/ld.* | grep -q 'file=libdw'"
finish
