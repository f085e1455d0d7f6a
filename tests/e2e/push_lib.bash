# Helpers shared by the tests/e2e/push_*.sh tests (sourced after lib.bash):
# local receivers standing in for Pyroscope and Parca
# (tests/tools/profile-receiver, written from their handlers' source), each
# on a port of its own, with a mode file to play an outage or a bad server.

RECEIVER=$KP_TESTS/tools/profile-receiver
# the CPU-bound workload kprof records: no frame pointers, spin_leaf hot
SPIN=$KP_WORKLOADS/spin_nofp

# start_receiver NAME [options]: a receiver saving into $T/NAME, its mode
# read from $T/NAME.mode at each request; sets port_NAME. Stopped at exit.
start_receiver() {
	local name=$1 i
	shift
	rm -f "$T/$name.port"
	"$RECEIVER" --dir "$T/$name" --port-file "$T/$name.port" --control-file "$T/$name.mode" "$@" \
		2>"$T/$name.err" &
	at_exit "kill $! 2>/dev/null"
	for i in $(seq 100); do
		[ -s "$T/$name.port" ] && break
		sleep 0.05
	done
	[ -s "$T/$name.port" ] || { echo "receiver $name did not start: $(cat "$T/$name.err")"; exit 1; }
	printf -v "port_$name" %s "$(cat "$T/$name.port")"
}
set_mode() { echo "$2" >"$T/$1.mode"; } # receiver mode

# url NAME: the receiver's base URL
url() { local p="port_$1"; echo "http://127.0.0.1:${!p}"; }

# saved NAME [SERVER]: one line a profile saved by receiver NAME, in the
# order received: FILE SERVER FROM UNTIL TIME_NANOS DURATION TOP LABELS
saved() { "$RECEIVER" --list "$T/$1" | awk -v s="${2:-}" 's == "" || $2 == s'; }

# windows_ok FILE COUNT: FILE's lines (saved's) are COUNT windows, each
# once, in order, each starting where the one before ended
windows_ok() {
	awk -v want="$2" '
		{ if (NR > 1 && $3 != until) { print "  window " NR " starts at " $3 ", the one before ended at " until; bad = 1 }
		  if (seen[$3]++) { print "  window from " $3 " twice"; bad = 1 }
		  until = $4 }
		END { if (NR != want) { print "  " NR " windows, not " want; bad = 1 }; exit bad }' "$1"
}

# requests NAME: receiver NAME's log of requests, one JSON line each
requests() { cat "$T/$1/requests.log" 2>/dev/null; }

# Runs the workload for SECONDS of CPU on two threads in the background:
# sets spin (its pid); killed at exit.
start_spin() {
	"$SPIN" "$1" 2 &
	spin=$!
	at_exit "kill $spin 2>/dev/null"
}

# pprof_top FILE COMM: the function `go tool pprof -top` puts first among
# the samples of the processes named COMM (kprof's comm label)
pprof_top() {
	go tool pprof -top -tagfocus="comm=$2" "$1" 2>/dev/null |
		awk 'f { print $6; exit } $1 == "flat" && $2 == "flat%" { f = 1 }'
}
# tops NAME SERVER COMM: pprof_top of each profile receiver NAME saved from SERVER
tops() {
	local f
	for f in $(saved "$1" "$2" | cut -d' ' -f1); do pprof_top "$T/$1/$f.pb.gz" "$3"; done
}
