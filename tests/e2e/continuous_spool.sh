# The spool (--spool DIR): windows that could not be sent survive a restart.
# A run with the server down is stopped by SIGINT in its third window (the
# window is finished and spooled); the next run, with the server up,
# delivers every window of the first once, in order, the last ending at the
# SIGINT, then its own, and leaves the spool empty. A spool directory that is a symlink or that
# another user owns is refused at start in one line, nothing written in it,
# and the recording goes on without a spool; one
# that fills up (a tiny tmpfs) is said so in one message, the recording
# goes on and every window is delivered once the server is back.
#
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/continuous_lib.bash"

start_receivers srv
set_mode srv down
start_spin 60
# --push-timeout 1: at exit kprof gives what is queued one timeout to go
push=(--every 1 --push "pyroscope=$(url srv)" --push "parca=$(url srv)" --service spooled --push-timeout 1)

# run 1: the server is down, stopped by SIGINT once two windows are spooled
"$KPROF" -p "$spin" "${push[@]}" --spool "$T/spool" 2>"$T/err1" &
kp=$!
end=$((${EPOCHREALTIME/./} + 15000000))
while spooled=("$T"/spool/w-*.kpw) && [ ${#spooled[@]} -lt 2 ] && [ ${EPOCHREALTIME/./} -lt $end ]; do
	sleep 0.1
done
sleep 0.3 # into the third window
stop1=$(date +%s%N)
kill -INT $kp
wait $kp
check "run 1 (server down, SIGINT): exit status 0" [ $? -eq 0 ]
sed 's/^/  run 1: /' "$T/err1"
n1=$(sed -n 's/^kprof: \([0-9]*\) windows of 1 s.*/\1/p' "$T/err1")
check "run 1: windows left in the spool" [ -n "$(ls -A "$T/spool" | grep '^w-')" ]
ls -l "$T/spool" | sed 's/^/  spool: /'
check "run 1: nothing delivered while the server was down" [ -z "$(saved srv)" ]

# run 2: the server is up
set_mode srv up
start2=$(date +%s%N)
"$KPROF" -p "$spin" "${push[@]}" --spool "$T/spool" -d 1 2>"$T/err2"
check "run 2 (server up): exit status 0" [ $? -eq 0 ]
sed 's/^/  run 2: /' "$T/err2"
for server in pyroscope parca; do
	saved srv $server >"$T/$server"
	sed "s/^/  $server: /" "$T/$server"
	# run 1's windows, sent first; run 2's start after its start
	head -n "${n1:-0}" "$T/$server" >"$T/$server.1"
	check "$server: the $n1 windows of run 1, each once, in order, each from the last one's end" \
		windows_ok "$T/$server.1" "${n1:-0}" 3 1000000
	check "$server: run 1's last window ends at the SIGINT" awk -v b="$stop1" '
		{ u = $4 } END { exit !(NR >= 3 && u > b - 2e8 && u < b + 1e9) }' "$T/$server.1"
	check "$server: pprof puts spin_leaf first in every window" \
		awk '$7 != "spin_leaf" { exit 1 } END { exit NR == 0 }' "$T/$server"
	check "$server: run 2's windows after them" sh -c "tail -n +$((${n1:-0} + 1)) '$T/$server' |
		awk -v s=$start2 '\$4 <= s { exit 1 } END { exit NR == 0 }'"
done
# (but its lock file, kept: removing it would race the next agent's lock)
check "the spool is empty after run 2" [ -z "$(ls -A "$T/spool" | grep -vx kprof.lock)" ]

# a spool directory that is a symbolic link or another user's is refused
# when kprof starts: one line naming it and why, nothing written in it or
# where it leads, and the recording goes on without a spool
mkdir "$T/real"
ln -s "$T/real" "$T/link"
mkdir "$T/theirs"
chown nobody "$T/theirs"
for case in link:'a symbolic link' theirs:'owned by uid'; do
	dir=$T/${case%%:*}
	"$KPROF" -p "$spin" "${push[@]}" --spool "$dir" -d 1 -o "$T/never-%s.kprof" 2>"$T/err.${case%%:*}"
	status=$?
	sed "s/^/  ${case%%:*}: /" "$T/err.${case%%:*}"
	check "spool ${case%%:*}: exit status 0, the recording went on ($status)" [ $status -eq 0 ]
	said=$(grep -F "kprof: --spool $dir: ${case#*:}" "$T/err.${case%%:*}")
	check "spool ${case%%:*}: one line naming the spool and why, going on without it" \
		[ "$(printf '%s\n' "$said" | grep -c "going on without a spool")" -eq 1 ]
done
check "spool link: nothing written where the link points" [ -z "$(ls -A "$T/real")" ]
check "spool theirs: nothing written in it" [ -z "$(ls -A "$T/theirs")" ]
check "bad spools: the windows recorded all the same" [ -n "$(ls "$T"/never-* 2>/dev/null)" ]

# a full spool: on a 4 KiB tmpfs (one page) that a file beside the spool
# fills, the server down until kprof says the spool is full
mkdir "$T/fs"
mount -t tmpfs -o size=4k,mode=0700 kprof-test "$T/fs" || fail "mount a tmpfs (root only)"
at_exit "umount '$T/fs'"
mkdir -m 0700 "$T/fs/spool"
echo filler >"$T/fs/filler"
set_mode srv down
# (4 s and a 5 s wait at exit: the windows held while the server was down
# go once it is up; with 2.5 s and 1 s, a loaded run could end with one
# still on its way, exit 1, one run in ten)
"$KPROF" -p "$spin" "${push[@]}" --spool "$T/fs/spool" -d 4 --push-timeout 5 --service full 2>"$T/err.full" &
kp=$!
while kill -0 $kp 2>/dev/null && ! grep -q 'No space' "$T/err.full"; do sleep 0.1; done
set_mode srv up
wait $kp
check "spool full: exit status 0" [ $? -eq 0 ]
sed 's/^/  full: /' "$T/err.full"
full=$(grep -c 'cannot write a window: No space left on device' "$T/err.full")
again=$(grep -c 'the spool is written again' "$T/err.full")
check "spool full: said once a time it fills ($full times, written again $again times)" \
	[ "$full" -ge 1 -a "$full" -le $((again + 1)) ]
check "spool full: no window written in it" [ -z "$(ls -A "$T/fs/spool" | grep -vx kprof.lock)" ]
saved srv pyroscope | grep 'service_name=full' >"$T/full.pyroscope"
check "spool full: the windows delivered once each, in order" windows_ok "$T/full.pyroscope" "$(sed -n 's/^kprof: \([0-9]*\) windows of 1 s.*/\1/p' "$T/err.full")"
finish
