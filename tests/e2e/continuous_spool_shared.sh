# Two agents given one --spool (docs/security.md, "The spool and window
# files"): the first holds the spool's lock; the second, started while the
# first records with its server down, refuses the spool in one line naming
# the first's pid and exits non-zero before sampling, and removes nothing:
# the first's spooled windows are all there when it stops, as many as it
# says it kept. Then, the first gone, a clean reload: its windows are
# delivered by a run whose server never failed, which says nothing of
# "delivered again" (that line is for an outage of that run).
#
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/continuous_lib.bash"

start_receivers srv other
set_mode srv down
set_mode other up
start_spin 60
push=(--every 1 --push-timeout 1 --service shared)

# agent 1: its server down, its windows spooled
"$KPROF" -p "$spin" "${push[@]}" --push "pyroscope=$(url srv)" --spool "$T/spool" 2>"$T/err1" &
kp1=$!
end=$((${EPOCHREALTIME/./} + 15000000))
while spooled=("$T"/spool/w-*.kpw) && [ ${#spooled[@]} -lt 2 ] && [ ${EPOCHREALTIME/./} -lt $end ]; do
	sleep 0.1
done
ls "$T/spool" | grep '^w-.*\.kpw$' >"$T/before"

# agent 2: another target (today it removed agent 1's windows as windows
# "for targets not given now"), the same spool
timeout 20 "$KPROF" -p "$spin" "${push[@]}" --push "pyroscope=$(url other)" --spool "$T/spool" \
	-d 1 -o "$T/second-%s.folded" 2>"$T/err2"
status=$?
sed 's/^/  agent 2: /' "$T/err2"
check "agent 2: refused, exit status non-zero ($status)" [ $status -ne 0 -a $status -ne 124 ]
check "agent 2: one line naming the spool and agent 1's pid ($kp1)" \
	[ "$(grep -c -- "--spool $T/spool: in use by another kprof (pid $kp1)" "$T/err2")" -eq 1 ]
check "agent 2: no window recorded" [ -z "$(ls "$T"/second-* 2>/dev/null)" ]
check "agent 2: nothing sent" [ -z "$(saved other)" ]
gone=$(cd "$T/spool" && while read -r f; do [ -e "$f" ] || echo "$f"; done <"$T/before")
check "agent 2: none of agent 1's $(wc -l <"$T/before") windows removed (${gone:-none gone})" [ -z "$gone" ]

kill -INT $kp1
wait $kp1
status=$?
sed 's/^/  agent 1: /' "$T/err1"
check "agent 1: exit status 0 ($status)" [ $status -eq 0 ]
kept=$(sed -n 's/.*, \([0-9]*\) kept in the spool for the next run$/\1/p' "$T/err1")
files=$(ls "$T/spool" | grep -c '^w-.*\.kpw$')
check "agent 1: the windows it says it kept ($kept) are in the spool ($files)" [ "${kept:-x}" = "$files" ]

# the lock died with agent 1: a new agent takes the spool, and with its
# server up from the start sends the windows left, with no "delivered
# again" (nothing failed in its run)
set_mode srv up
"$KPROF" -p "$spin" "${push[@]}" --push "pyroscope=$(url srv)" --spool "$T/spool" -d 1 2>"$T/err3"
status=$?
sed 's/^/  agent 3: /' "$T/err3"
check "agent 3: the spool taken once agent 1 is gone, exit status 0 ($status)" [ $status -eq 0 ]
check "agent 3: agent 1's $files windows sent" grep -q "^kprof: push: $files windows\{0,1\} left by a previous run in the spool: sent first" "$T/err3"
check "agent 3: no 'delivered again' after a clean reload" sh -c "! grep -q 'delivered again' '$T/err3'"
check "agent 3: the spool is empty of windows" [ "$(ls "$T/spool" | grep -c '^w-')" -eq 0 ]
finish
