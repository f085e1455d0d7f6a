#!/usr/bin/env bash
# kprof collapse on hostile input: never a crash or a hang, a defined exit
# status, lines it cannot use skipped and counted, no partial output file.
set -u
: "${KPROF:?}" "${KP_TESTS:?}" "${KP_TMP:?}"
data=$KP_TESTS/golden/data
tmp=$KP_TMP/collapse-bad
rm -rf "$tmp"
mkdir -p "$tmp"
fail=0

# run NAME EXPECTED_STATUS ARGS...: bounded time, no signal death
run() {
	local name=$1 want=$2 st
	shift 2
	timeout 60 "$KPROF" collapse "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	st=$?
	if [ $st -eq 124 ]; then
		echo "FAIL $name: still running after 60 s"; fail=1
	elif [ $st -ge 128 ]; then
		echo "FAIL $name: killed by signal $((st - 128))"; cat "$tmp/$name.err"; fail=1
	elif [ "$want" != any ] && [ $st -ne "$want" ]; then
		echo "FAIL $name: exit status $st, expected $want"; cat "$tmp/$name.err"; fail=1
	fi
	return 0
}
# every output line must be "stack count"
well_formed() {
	if grep -qav ' [0-9][0-9]*$' "$tmp/$1.out"; then
		echo "FAIL $1: malformed output line"; grep -av ' [0-9][0-9]*$' "$tmp/$1.out" | head -3; fail=1
	fi
}

# empty input: nothing out, success
: >"$tmp/empty.txt"
run empty 0 "$tmp/empty.txt"
[ -s "$tmp/empty.out" ] && { echo "FAIL empty: output not empty"; fail=1; }

# 4 MB of random bytes (fixed seed, so every run sees the same bytes)
if command -v python3 >/dev/null; then
	python3 -c 'import random,sys; r=random.Random(20261130); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(4<<20)))'
else
	perl -e 'srand(20261130); binmode STDOUT; print chr(int(rand(256))) for 1 .. 4 << 20'
fi >"$tmp/garbage.bin"
run garbage any "$tmp/garbage.bin"
well_formed garbage
grep -q "not perf script" "$tmp/garbage.err" || { echo "FAIL garbage: no note about skipped lines"; cat "$tmp/garbage.err"; fail=1; }

# pure garbage text: no sample at all -> error, exit 1, and -o leaves no file
printf 'this is not\nperf script output\n\x01\x02\x03\n' >"$tmp/text.txt"
run text 1 -o "$tmp/text-folded.txt" "$tmp/text.txt"
[ -e "$tmp/text-folded.txt" ] && { echo "FAIL text: -o file written on error"; fail=1; }
grep -q "text.txt:1" "$tmp/text.err" || { echo "FAIL text: message does not name file and line"; cat "$tmp/text.err"; fail=1; }

# 10 MB single lines: no newline at all; spaces and digits that keep the
# header matcher busy; a frame line with 10 MB of " (" pairs
head -c 10485760 /dev/zero | tr '\0' 'a' >"$tmp/long1.txt"
run long1 any "$tmp/long1.txt"
{ printf 'x'; head -c 10485760 /dev/zero | tr '\0' ' '; printf '1\n'; } >"$tmp/long2.txt"
run long2 any "$tmp/long2.txt"
{ printf 'cc 1 2.0: 1 cycles:\n\t'; yes '1 /2' | head -n 2097152 | tr '\n' ' '; printf '\n\n'; } >"$tmp/long3.txt"
run long3 any "$tmp/long3.txt"
{ printf 'cc 1 2.0: 1 cycles:\n\tff f'; yes ' (' | head -n 5242880 | tr -d '\n'; printf ')\n\n'; } >"$tmp/long4.txt"
run long4 0 "$tmp/long4.txt"
well_formed long4
# a long line followed by a good sample: the sample still counts
{ cat "$tmp/long1.txt"; printf '\ncc 1 2.0: 1 cycles:\n\tff main (/bin/c)\n\n'; } >"$tmp/long5.txt"
run long5 0 "$tmp/long5.txt"
grep -qx 'cc;main 1' "$tmp/long5.out" || { echo "FAIL long5: sample after the long line lost"; fail=1; }

# invalid UTF-8 and NUL bytes in names pass through as bytes (Perl does the same)
printf 'b\xff\xfe 7 1.0: 1 cycles:\n\tff f\xc3\x28oo (/bin/b)\n\tfe ma\x00in (/bin/b)\n\n' >"$tmp/utf8.txt"
run utf8 0 "$tmp/utf8.txt"
printf 'b\xff\xfe;ma\x00in;f\xc3 1\n' | cmp -s - "$tmp/utf8.out" || { echo "FAIL utf8: bytes changed"; od -c "$tmp/utf8.out" | head; fail=1; }

# CRLF line ends: same result as LF
sed 's/$/\r/' "$data/perf-script/perf-iperf-stacks-pidtid-01.txt" >"$tmp/crlf.txt"
run crlf 0 --tid "$tmp/crlf.txt"
cmp -s "$tmp/crlf.out" "$data/collapsed/perf-iperf-stacks-pidtid-01-collapsed-tid.txt" || { echo "FAIL crlf: differs from LF"; fail=1; }

# negative and overflowing periods: digits only are periods; a sum past
# 2^64 stays exact (Perl would print 3.68934881474191e+19, which no folded
# reader takes as a count); a period past 2^64 - 1 is not believed
printf 'cc 1 1.0: 18446744073709551615 cycles:\n\tff f (/b)\n\ncc 1 1.0: 18446744073709551615 cycles:\n\tff f (/b)\n\ncc 1 1.0: -5 cycles:\n\tff f (/b)\n\n' >"$tmp/period.txt"
run period 0 "$tmp/period.txt"
printf 'cc;f 36893488147419103231\n' | cmp -s - "$tmp/period.out" || { echo "FAIL period: got $(cat "$tmp/period.out")"; fail=1; }
"$KPROF" flamegraph "$tmp/period.out" >"$tmp/period.svg" 2>"$tmp/period.err" || { echo "FAIL period: kprof flamegraph refuses what collapse wrote: $(cat "$tmp/period.err")"; fail=1; }
printf 'cc 1 1.0: 18446744073709551616 cycles:\n\tff f (/b)\n\ncc 1 1.0: 2 cycles:\n\tff f (/b)\n\n' >"$tmp/period2.txt"
run period2 0 "$tmp/period2.txt"
printf 'cc;f 2\n' | cmp -s - "$tmp/period2.out" || { echo "FAIL period2: got $(cat "$tmp/period2.out")"; fail=1; }

# unreadable input: message names the file, exit 1, no output
run missing 1 "$tmp/does-not-exist.txt"
grep -q "does-not-exist.txt: No such file or directory" "$tmp/missing.err" || { echo "FAIL missing: $(cat "$tmp/missing.err")"; fail=1; }
run isdir 1 "$tmp"
# a second, unreadable input after a good one: no -o file at all
run missing2 1 -o "$tmp/partial.txt" "$data/perf-script/perf-dd-stacks-01.txt" "$tmp/nope.txt"
[ -e "$tmp/partial.txt" ] && { echo "FAIL missing2: partial output file left"; fail=1; }
ls "$tmp" | grep -q 'partial.txt.tmp' && { echo "FAIL missing2: temporary file left"; fail=1; }
# unwritable output
run unwritable 1 -o /proc/kprof-no/such "$data/perf-script/perf-dd-stacks-01.txt"

# usage errors
run badopt 2 --no-such-option
grep -q "usage: kprof collapse" "$tmp/badopt.err" || { echo "FAIL badopt: no usage line"; fail=1; }
run noarg 2 --event-filter
run help 0 --help
[ "$(grep -c -- '^  -' "$tmp/help.out")" -ge 9 ] || { echo "FAIL help: options missing"; fail=1; }

[ $fail -eq 0 ] && echo "bad input handled"
exit $fail
