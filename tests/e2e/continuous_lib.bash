# Helpers shared by the tests/e2e/continuous_*.sh tests (sourced after lib.bash):
# local receivers standing in for Pyroscope and Parca
# (tests/tools/profile-receiver, written from their handlers' source), each
# on a port of its own, with a mode file to play an outage or a bad server.

RECEIVER=$KP_TESTS/tools/profile-receiver
# the CPU-bound workload kprof records: no frame pointers, spin_leaf hot
SPIN=$KP_WORKLOADS/spin_nofp

# start_receivers NAME...: a receiver for each NAME, saving into $T/NAME,
# its mode read from $T/NAME.mode at each request, pprof run once a profile
# whichever receivers get it; sets port_NAME. They are stopped at exit.
start_receivers() {
	local name i
	mkdir -p "$T/pprof-cache"
	for name in "$@"; do
		rm -f "$T/$name.port"
		"$RECEIVER" --dir "$T/$name" --port-file "$T/$name.port" --control-file "$T/$name.mode" \
			--pprof-cache "$T/pprof-cache" 2>"$T/$name.err" &
		at_exit "kill $! 2>/dev/null"
	done
	for name in "$@"; do
		for i in $(seq 200); do
			[ -s "$T/$name.port" ] && break
			sleep 0.05
		done
		[ -s "$T/$name.port" ] || { echo "receiver $name did not start: $(cat "$T/$name.err")"; exit 1; }
		printf -v "port_$name" %s "$(cat "$T/$name.port")"
	done
}
set_mode() { echo "$2" >"$T/$1.mode"; } # receiver mode

# url NAME: the receiver's base URL
url() { local p="port_$1"; echo "http://127.0.0.1:${!p}"; }

# saved NAME [SERVER]: one line a profile saved by receiver NAME, in the
# order received (its index): FILE SERVER FROM UNTIL QFROM QUNTIL SHA TOP
# LABELS (FROM and UNTIL the profile's time_nanos and its end, QFROM and
# QUNTIL Pyroscope's query's, "-" for Parca; SHA the profile's)
saved() { [ ! -e "$T/$1/index" ] || awk -v s="${2:-}" 's == "" || $2 == s' "$T/$1/index"; }

# windows_ok FILE COUNT [FROM_COLUMN [SLACK_NS]]: FILE's lines (saved's) are
# COUNT windows, each once (no profile twice), in order, each starting
# where the one before ended (within SLACK_NS): by the query's times
# (Pyroscope's, whole seconds) or, from column 3, by the profile's own
windows_ok() {
	awk -v want="$2" -v f="${3:-5}" -v slack="${4:-0}" '
		{ d = $f - until; if (d < 0) d = -d
		  if (NR > 1 && d > slack) { print "  window " NR " starts at " $f ", the one before ended at " until; bad = 1 }
		  if (seen[$7]++) { print "  profile " $7 " twice"; bad = 1 }
		  until = $(f + 1) }
		END { if (NR != want) { print "  " NR " windows, not " want; bad = 1 }; exit bad }' "$1"
}

# nsaved NAME SERVER: how many profiles receiver NAME saved from SERVER (no
# process started: cheap in a polling loop)
nsaved() {
	local f=("$T/$1"/*-"$2".json)
	[ -e "${f[0]}" ] && echo ${#f[@]} || echo 0
}

# requests NAME: receiver NAME's log of requests, one JSON line each
requests() { cat "$T/$1/requests.log" 2>/dev/null; }

# Runs the workload for SECONDS of CPU in the background (one thread: the
# other CPU is kprof's and the receivers'): sets spin (its pid); killed at
# exit.
start_spin() {
	"$SPIN" "$1" &
	spin=$!
	at_exit "kill $spin 2>/dev/null"
}

# pprof_top FILE COMM: the function `go tool pprof -top` puts first among
# the samples of the processes named COMM (kprof's comm label)
# the binary `go tool pprof` runs, started directly (half the time)
PPROF=$(go env GOTOOLDIR 2>/dev/null)/pprof
[ -x "$PPROF" ] || PPROF="go tool pprof"
pprof_top() {
	$PPROF -top -tagfocus="comm=$2" "$1" 2>/dev/null |
		awk 'f { print $6; exit } $1 == "flat" && $2 == "flat%" { f = 1 }'
}
# tops NAME SERVER COMM: pprof_top of each profile receiver NAME saved from SERVER
tops() {
	local f
	for f in $(saved "$1" "$2" | cut -d' ' -f1); do pprof_top "$T/$1/$f.pb.gz" "$3"; done
}

# known "description" command...: a check kprof is known to fail (said in
# the description); printed, not counted, until it passes: then it says so,
# to be made a check
known() {
	local what=$1
	shift
	if "$@"; then echo "ok (was known to fail: make it a check): $what"; else echo "KNOWN: $what"; fi
}
