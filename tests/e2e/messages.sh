# What kprof says when a run cannot do what was asked, or did nothing: each
# message names the real cause.
#
# kp-e2e: whole-machine (it samples every CPU: no other end-to-end test
# runs beside it; tests/CMakeLists.txt)
# kp-e2e: perf-paranoid (it sets the level for a run of its own)
. "$(dirname "$0")/lib.bash"

online=$(cat /sys/devices/system/cpu/online)
# -h is --help, as for the subcommands; the help names every subcommand
"$KPROF" -h >"$T/h.out" 2>"$T/err"
check "kprof -h: exit 0 ($?)" [ $? -eq 0 ]
check "kprof -h: the help" grep -q '^  -o, --output FILE' "$T/h.out"
for sub in report diff collapse flamegraph symbolize; do
	check "kprof --help names kprof $sub" grep -q "kprof $sub" "$T/h.out"
done
# without a PMU the default event falls back to cpu-clock quietly (every
# run would say it); -e cycles asked for it: said, unless -q
"$KPROF" -F 99 -f folded -o "$T/d.folded" -- true 2>"$T/err"
check "default event: no word about a PMU ($(grep PMU "$T/err"))" sh -c "! grep -q PMU '$T/err'"
"$KPROF" -q -e cycles -F 99 -f folded -o "$T/d.folded" -- true 2>"$T/err"
check "-q -e cycles: no word about a PMU" sh -c "! grep -q PMU '$T/err'"
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

# -g takes a mode when the next word is one: a mode with a bad size is that
# mode's error, not a command to run
"$KPROF" -g dwarf,0 true 2>"$T/err"
check "-g dwarf,0: usage error (exit $?)" [ $? -eq 2 ]
check "-g dwarf,0: the size is named ($(head -1 "$T/err"))" grep -q "^kprof: -g: the stack copy size must be 64 to [0-9]* bytes, got 'dwarf,0'" "$T/err"

# a script whose interpreter is missing: the interpreter is named
printf '#!/usr/bin/kprof-no-such-interpreter -x\necho\n' >"$T/script.sh"
chmod +x "$T/script.sh"
"$KPROF" -f folded -o "$T/s.folded" -- "$T/script.sh" 2>"$T/err"
check "missing interpreter: exit 127 ($?)" [ $? -eq 127 ]
check "missing interpreter: named ($(cat "$T/err"))" grep -q "script.sh: its interpreter /usr/bin/kprof-no-such-interpreter (the script's #! line) is not found" "$T/err"

# rings too small for one sample: the records lost are the reason, not the
# length of the run
"$KPROF" -m 1 -F 999 -f folded -o "$T/m.folded" -- "$KP_WORKLOADS/spin_fp" 0.3 2>"$T/err"
check "-m 1: says every sample was lost to the small rings ($(grep 'no samples' "$T/err"))" \
	grep -q "no samples were recorded: all [0-9]* were lost, the rings (1 page per CPU) too small" "$T/err"
check "-m 1: not 'ran for less than one sampling period'" sh -c "! grep -q 'less than one sampling' '$T/err'"

# another user's process as a user, where the paranoid level allows it all:
# the reason is the ptrace rule, not the paranoid level
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && [ -w /proc/sys/kernel/perf_event_paranoid ]; then
	para=$(cat /proc/sys/kernel/perf_event_paranoid)
	u=$(mktemp -d /tmp/kprof-msg.XXXXXX)
	cp "$KPROF" "$u/kprof" && chmod 755 "$u" "$u/kprof"
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	(cd "$u" && setpriv --reuid=65534 --regid=65534 --clear-groups ./kprof -p 1 -d 0.2 -f folded -o /dev/null 2>"$u/err")
	st=$?
	echo "$para" >/proc/sys/kernel/perf_event_paranoid
	check "-p 1 as a user, paranoid -1: exit 1 ($st)" [ $st -eq 1 ]
	check "-p 1 as a user: another user's process, not the paranoid level ($(cat "$u/err"))" \
		sh -c "grep -q \"another user's\" '$u/err' && ! grep -q paranoid '$u/err'"
	rm -rf "$u"
fi

# -a samples kprof too: the note about stripped files leaves its own
# executable and libraries out (it is about the programs profiled)
"$KPROF" -a -d 0.5 -F 999 -f folded -o "$T/a.folded" 2>"$T/err"
own=$(ldd "$KPROF" | awk '$3 ~ /^\// && $3 !~ /libc\.so|ld-linux/ { print $3 }' | xargs -r readlink -f)
named=
for lib in $own; do grep 'stripped binar' "$T/err" | grep -qF "$lib" && named="$named $lib"; done
check "-a: the stripped-files note names none of kprof's own libraries ($named)" [ -z "$named" ]

# the summary's truncated stacks and their reasons agree: a stop of the
# unwinder at the end of a small copy that the kernel's chain carried on
# from (a frame-pointer build) is not a truncation; a build without frame
# pointers is cut there, and the summary says what keeps it whole
trunc_sum() { # err: "TRUNCATED REASONS-SUM"
	sed -n 's/.* \([0-9]*\) stacks truncated\(:[^;]*\)\{0,1\};.*/\1\2/p' "$1" |
		awk -F'[:,]' '{ s = 0; for (i = 2; i <= NF; i++) { n = split($i, w, " "); s += w[n] } print $1, s }'
}
"$KPROF" -F 499 -g auto,64 -f folded -o "$T/t.folded" -- "$KP_WORKLOADS/spin_fp" 0.3 2>"$T/err"
read -r cut why < <(trunc_sum "$T/err")
check "-g auto,64 of a frame-pointer build: the reasons sum to the truncated stacks ($(grep -o '[0-9]* stacks truncated[^;]*' "$T/err"))" \
	[ -n "$cut" -a "$cut" = "$why" ]
"$KPROF" -F 499 -g dwarf,256 -f folded -o "$T/t.folded" -- "$KP_WORKLOADS/spin_nofp" 0.3 2>"$T/err"
read -r cut why < <(trunc_sum "$T/err")
check "-g dwarf,256 without frame pointers: stacks truncated, the reasons summing to them ($(grep -o '[0-9]* stacks truncated[^;]*' "$T/err"))" \
	[ "${cut:-0}" -gt 0 -a "$cut" = "$why" ]
check "-g dwarf,256: says a larger copy keeps them whole ($(grep 'larger copy' "$T/err"))" \
	grep -q 'stacks went past the user-stack copy.*: a larger copy keeps more of them whole, -g dwarf,65528' "$T/err"

# symbolize -e of a FIFO: refused, not waited on
mkfifo "$T/fifo"
timeout 20 "$KPROF" symbolize -e "$T/fifo" 0x1000 2>"$T/err"
check "symbolize -e FIFO: exit 1, at once ($?)" [ $? -eq 1 ]
check "symbolize -e FIFO: not a regular file" grep -q "not a regular file" "$T/err"
finish
