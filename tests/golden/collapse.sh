#!/usr/bin/env bash
# kprof collapse against stackcollapse-perf.pl: 9 perf script inputs x 6
# options, each output compared byte for byte with what the Perl script
# wrote (tests/golden/data, see its README). Every mismatch is reported.
set -u
: "${KPROF:?}" "${KP_TESTS:?}" "${KP_TMP:?}"
data=$KP_TESTS/golden/data
tmp=$KP_TMP/collapse-golden
mkdir -p "$tmp"
fail=0 n=0
for input in "$data"/perf-script/*.txt; do
	name=$(basename "$input" .txt)
	for opt in pid tid kernel jit all addrs; do
		expected=$data/collapsed/$name-collapsed-$opt.txt
		got=$tmp/$name-$opt.txt
		[ -f "$expected" ] || { echo "missing expected file $expected"; fail=1; continue; }
		n=$((n + 1))
		if ! "$KPROF" collapse "--$opt" "$input" >"$got" 2>"$tmp/stderr"; then
			echo "FAIL $name --$opt: exit status $?"; cat "$tmp/stderr"
			fail=1
			continue
		fi
		if ! cmp -s "$got" "$expected"; then
			echo "FAIL $name --$opt: output differs from stackcollapse-perf.pl:"
			diff "$expected" "$got" | head -10
			fail=1
		fi
	done
done
# the same through stdin and -o (file written whole, same bytes)
input=$data/perf-script/perf-java-stacks-01.txt
"$KPROF" collapse --all -o "$tmp/out.txt" <"$input" 2>/dev/null || { echo "FAIL -o: exit $?"; fail=1; }
cmp -s "$tmp/out.txt" "$data/collapsed/perf-java-stacks-01-collapsed-all.txt" || { echo "FAIL stdin/-o output differs"; fail=1; }
[ "$n" -eq 54 ] || { echo "FAIL: compared $n files, expected 54"; fail=1; }
[ $fail -eq 0 ] && echo "all $n outputs identical to stackcollapse-perf.pl's"
exit $fail
