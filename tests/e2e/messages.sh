# What kprof says when a run cannot do what was asked, or did nothing: each
# message names the real cause.
#
# kp-e2e: whole-machine (it samples every CPU: no other end-to-end test
# runs beside it; tests/CMakeLists.txt)
. "$(dirname "$0")/lib.bash"

online=$(cat /sys/devices/system/cpu/online)
"$KPROF" -C 4095 -f folded -o "$T/c.folded" -- true 2>"$T/err"
check "-C of a CPU that does not exist: exit 1" [ $? -eq 1 ]
check "-C: says the CPU does not exist and lists the online ones ($(cat "$T/err"))" \
	grep -qx "kprof: -C: CPU 4095 does not exist; the online CPUs are $online" "$T/err"
check "-C: no word about the sampling frequency" sh -c "! grep -q 'frequency\|sample_rate' '$T/err'"
check "-C: no output file" [ ! -e "$T/c.folded" ]

# an idle process: no samples, and the reason is that it used no CPU
sleep 30 &
idle=$!
"$KPROF" -p $idle -d 0.5 -f folded -o "$T/p.folded" 2>"$T/err"
check "-p idle: exit 0" [ $? -eq 0 ]
check "-p idle: says the process used no CPU ($(grep -i 'no samples' "$T/err"))" \
	grep -q 'no samples were recorded: the process sampled used no CPU in the 0.5 s recorded' "$T/err"
check "-p idle: nothing about a command" sh -c "! grep -q 'command' '$T/err'"
check "-p idle: one process, not '1 processes'" grep -q ' 0 lost, 1 process, ' "$T/err"
kill $idle
wait $idle 2>/dev/null
finish
