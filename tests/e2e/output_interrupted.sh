# Writers ended before they finish leave no file at all: SIGKILL, SIGINT
# and SIGTERM to `kprof flamegraph` and `kprof collapse` while they write
# their output, SIGKILL to the recorder while it records. Nothing named like the
# output appears, not even an empty temporary.
. "$(dirname "$0")/lib.bash"

out=$T/out
mkdir -p "$out"
no_files() { [ -z "$(ls -A "$out")" ]; }

# interrupt SIG COMMAND...: runs COMMAND, and once it has a file open in
# $out (its output being written: an unnamed O_TMPFILE file shows as
# "$out/#NNN (deleted)") stops it, looks again (so that it cannot finish
# in between), sends SIG and lets it go on. A tight loop without forks
# looks every half millisecond. Prints "CAUGHT STATUS": yes or no, and
# the command's exit status (128 + N when signal N ended it).
interrupt() {
	python3 - "$out" "$@" <<'PY'
import os, signal, subprocess, sys, time
out, sig, cmd = sys.argv[1] + "/", sys.argv[2], sys.argv[3:]
p = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)

def has_output():
    try:
        fds = os.listdir(f"/proc/{p.pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{p.pid}/fd/{fd}").startswith(out):
                return True
        except OSError:
            pass
    return False

def stopped():
    try:
        with open(f"/proc/{p.pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t", "Z")
    except OSError:
        return True

caught = False
while p.poll() is None:
    if has_output():
        p.send_signal(signal.SIGSTOP)
        while not stopped():
            time.sleep(0.0002)
        if has_output():
            caught = True
            break
        p.send_signal(signal.SIGCONT)
    time.sleep(0.0005)
if caught:
    p.send_signal(getattr(signal, "SIG" + sig))
    p.send_signal(signal.SIGCONT)
st = p.wait()
print("yes" if caught else "no", 128 - st if st < 0 else st)
PY
}

# big inputs, so the writers are caught writing: 50,000 distinct stacks
# for the flame graph (its writing takes some 150 ms), 200,000 samples for
# collapse (whose writing is quicker: about 140 ms of folded text)
awk 'BEGIN { for (i = 0; i < 50000; i++) printf "main;f%d;g%d %d\n", i % 500, i, 1 + i % 7 }' >"$T/big.folded"
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "cc %d 1.0: 1 cycles:\n\tff g%d (/b)\n\tfe f%d (/b)\n\n", i, i, i % 500 }' >"$T/big.perf"
for sub in flamegraph collapse; do
	args=(flamegraph --minwidth 0 "$T/big.folded")
	[ "$sub" = collapse ] && args=(collapse "$T/big.perf")
	for sig in KILL INT TERM; do
		read -r caught st <<<"$(interrupt $sig "$KPROF" "${args[@]}" -o "$out/$sub.$sig")"
		check "$sub SIG$sig: caught while writing its output" [ "$caught" = yes ]
		check "$sub SIG$sig: ended by the signal (status $st)" [ "$st" -eq $((128 + $(kill -l $sig))) ]
		check "$sub SIG$sig: no file left ($(ls -A "$out" | tr '\n' ' '))" no_files
	done
done

# the recorder creates its output before recording: SIGKILL meanwhile
"$KPROF" -F 99 -o "$out/rec.svg" -- "$KP_WORKLOADS/spin_fp" 20 2>"$T/err" &
pid=$!
sleep 1.5
kill -KILL $pid
wait $pid
check "recorder SIGKILL: ended by the signal" [ $? -eq 137 ]
check "recorder SIGKILL: no file left ($(ls -A "$out" | tr '\n' ' '))" no_files
pkill -f "$KP_WORKLOADS/spin_fp 20" 2>/dev/null

# a complete run still writes its file, replacing the old one in one step
printf 'old\n' >"$out/keep.folded"
printf 'main;work 3\n' | "$KPROF" flamegraph -o "$out/keep.svg" 2>"$T/err"
check "flamegraph -o: written" grep -q 'main' "$out/keep.svg"
printf 'cc 1 1.0: 1 cycles:\n\tff f (/b)\n\n' | "$KPROF" collapse -o "$out/keep.folded" 2>"$T/err"
check "collapse -o: the old file replaced" [ "$(cat "$out/keep.folded")" = "cc;f 1" ]
check "only the two outputs are left" [ "$(ls -A "$out" | wc -l)" -eq 2 ]
finish
