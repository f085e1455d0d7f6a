# The spool (--spool DIR): windows that could not be sent survive a restart.
# A run with the server down is stopped by SIGINT (its current window is
# finished and spooled); the next run, with the server up, delivers every
# window of the first once, in order, from its start to the SIGINT, and
# leaves the spool empty. A spool directory that is a symlink, that another
# user owns, or that is full (a tiny tmpfs) is said so in a message, the
# recording goes on, and nothing is written outside the spool.
#
# kp-e2e: not-under-asan (the spool's code goes through ASan in its unit
# tests; these checks are the servers' view, the same in every build)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/push_lib.bash"

start_receiver srv
set_mode srv down
start_spin 60
push=(--every 1 --push "pyroscope=$(url srv)" --push "parca=$(url srv)" --service spooled)

# run 1: the server is down, stopped by SIGINT
start1=$(date +%s%N)
"$KPROF" -p "$spin" "${push[@]}" --spool "$T/spool" 2>"$T/err1" &
kp=$!
sleep 2.5
stop1=$(date +%s%N)
kill -INT $kp
wait $kp
check "run 1 (server down, SIGINT): exit status 0" [ $? -eq 0 ]
sed 's/^/  run 1: /' "$T/err1"
check "run 1: windows left in the spool" [ -n "$(ls -A "$T/spool")" ]
ls -l "$T/spool" | sed 's/^/  spool: /'
check "run 1: nothing delivered while the server was down" [ -z "$(saved srv)" ]

# run 2: the server is up
set_mode srv up
start2=$(date +%s%N)
"$KPROF" -p "$spin" "${push[@]}" --spool "$T/spool" -d 1.5 2>"$T/err2"
check "run 2 (server up): exit status 0" [ $? -eq 0 ]
sed 's/^/  run 2: /' "$T/err2"
for server in pyroscope parca; do
	saved srv $server >"$T/$server"
	sed "s/^/  $server: /" "$T/$server"
	awk -v s="$start2" '$3 < s' "$T/$server" >"$T/$server.1"
	n=$(wc -l <"$T/$server.1")
	check "$server: run 1's windows ($n) each once, in order, each from the last one's end" \
		windows_ok "$T/$server.1" "$n"
	check "$server: run 1's windows from its start to the SIGINT" awk -v a="$start1" -v b="$stop1" '
		NR == 1 { f = $3 } { u = $4 } END { exit !(NR >= 2 && f >= a && f < a + 1e9 && u > b - 3e8 && u < b + 5e8) }' \
		"$T/$server.1"
	check "$server: pprof puts spin_leaf first in every window" \
		awk '$7 != "spin_leaf" { exit 1 } END { exit NR == 0 }' "$T/$server"
	check "$server: run 2's windows after them" [ "$(awk -v s="$start2" '$3 >= s' "$T/$server" | wc -l)" -ge 1 ]
done
check "the spool is empty after run 2" [ -z "$(ls -A "$T/spool")" ]

# bad spool directories: said so, the recording goes on, nothing written
# outside the spool
mkdir "$T/real"
ln -s "$T/real" "$T/link"
mkdir "$T/theirs"
chown nobody "$T/theirs"
for case in link theirs; do
	"$KPROF" -p "$spin" "${push[@]}" --spool "$T/$case" -d 1 --service "$case" 2>"$T/err.$case"
	status=$?
	sed "s/^/  $case: /" "$T/err.$case"
	check "spool $case: exit status 0 (the recording goes on)" [ $status -eq 0 ]
	check "spool $case: a message names the spool" grep -qF -- "$T/$case" "$T/err.$case"
	check "spool $case: the window delivered" [ "$(saved srv pyroscope | grep -c "service_name=$case")" -eq 1 ]
done
check "spool link: nothing written where the link points" [ -z "$(ls -A "$T/real")" ]
check "spool theirs: nothing written in it" [ -z "$(ls -A "$T/theirs")" ]

# a full spool: a 4 KiB tmpfs (one page: one file), the server down for two windows
mkdir "$T/full"
mount -t tmpfs -o size=4k,mode=0700 kprof-test "$T/full" || fail "mount a tmpfs (root only)"
at_exit "umount '$T/full'"
set_mode srv down
"$KPROF" -p "$spin" "${push[@]}" --spool "$T/full" -d 3 --service full 2>"$T/err.full" &
kp=$!
sleep 2
set_mode srv up
wait $kp
check "spool full: exit status 0" [ $? -eq 0 ]
sed 's/^/  full: /' "$T/err.full"
check "spool full: a message says the spool is full" grep -qiE 'space|full' "$T/err.full"
saved srv pyroscope | grep 'service_name=full' >"$T/full.pyroscope"
check "spool full: the three windows delivered once each, in order" windows_ok "$T/full.pyroscope" 3
finish
