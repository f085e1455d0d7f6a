# Writers ended before they finish leave no file at all: SIGKILL, SIGINT
# and SIGTERM to `kprof flamegraph` and `kprof collapse` while they write
# their output, SIGKILL to the recorder while it records. Nothing named like the
# output appears, not even an empty temporary.
. "$(dirname "$0")/lib.bash"

out=$T/out
mkdir -p "$out"
no_files() { [ -z "$(ls -A "$out")" ]; }

# Stops process $1 once it has a file open in $out (its output being
# written: an unnamed O_TMPFILE file shows as "$out/#NNN (deleted)"),
# looking with the process stopped, so it cannot finish in between: the
# signal sent next finds it writing. The caller sends SIGCONT after it.
writing() {
	local pid=$1 i fd
	for i in $(seq 1 20000); do
		kill -STOP "$pid" 2>/dev/null || return 1
		for fd in /proc/"$pid"/fd/*; do
			case $(readlink "$fd" 2>/dev/null) in "$out"/*) return 0 ;; esac
		done
		kill -CONT "$pid" 2>/dev/null
		sleep 0.002
	done
	return 1
}

# big inputs, so the writers are caught writing: 200,000 distinct stacks
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "main;f%d;g%d %d\n", i % 500, i, 1 + i % 7 }' >"$T/big.folded"
awk 'BEGIN { for (i = 0; i < 200000; i++) printf "cc %d 1.0: 1 cycles:\n\tff g%d (/b)\n\tfe f%d (/b)\n\n", i, i, i % 500 }' >"$T/big.perf"
for sub in flamegraph collapse; do
	args=(flamegraph --minwidth 0 "$T/big.folded")
	[ "$sub" = collapse ] && args=(collapse "$T/big.perf")
	for sig in KILL INT TERM; do
		# job control keeps SIGINT at its default in the background job
		set -m
		"$KPROF" "${args[@]}" -o "$out/$sub.$sig" 2>"$T/err" &
		pid=$!
		set +m
		caught=no
		writing $pid && caught=yes
		kill -$sig $pid 2>/dev/null
		kill -CONT $pid 2>/dev/null
		wait $pid
		st=$?
		check "$sub SIG$sig: caught while writing its output" [ $caught = yes ]
		check "$sub SIG$sig: ended by the signal (status $st)" [ $st -eq $((128 + $(kill -l $sig))) ]
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
