#!/usr/bin/env bash
# kprof report -f pprof, read by the real reader: `go tool pprof -traces`
# of each output shows exactly the stacks and counts of the folded output
# of the same input (the 54 collapsed files of FlameGraph's test data, and
# names with quotes, backslashes, CJK, emoji), the comm as the "comm" label
# (tests/tools/pprof-traces puts it back as the root frame); -top shows the
# top function; -o X.pb.gz chooses the format and writes gzip; decimal
# counts are refused with exit 1, one line naming the reason, no file.
#
# go (golang-go) is needed: skipped without it, a failure when CI=true.
set -u
: "${KPROF:?}" "${KP_TESTS:?}" "${KP_TMP:?}"
tmp=$KP_TMP/pprof-golden
rm -rf "$tmp" && mkdir -p "$tmp/home"
fail=0 n=0

if ! command -v go >/dev/null; then
	if [ "${CI:-}" = true ]; then
		echo "FAIL: go is not installed (golang-go, scripts/deps --test), and CI=true"
		exit 1
	fi
	echo "skip: go not installed"
	exit 77
fi
# go tool pprof needs a writable home and build cache, and must find no
# binaries to symbolize from
export HOME=$tmp/home GOCACHE=$tmp/home/cache PPROF_TMPDIR=$tmp/home PPROF_BINARY_PATH=$tmp/home
export GOFLAGS=

# same_stacks NAME FILE: pprof -traces of the output equals the folded output
same_stacks() {
	local name=$1 input=$2
	n=$((n + 1))
	# one reading, two outputs, each in its extension's format
	if ! "$KPROF" report -o "$tmp/$name.pb.gz" -o "$tmp/$name.report.folded" "$input" 2>"$tmp/$name.err"; then
		echo "FAIL $name: kprof report exit status $?: $(cat "$tmp/$name.err")"
		fail=1
		return
	fi
	if ! go tool pprof -traces "$tmp/$name.pb.gz" >"$tmp/$name.traces" 2>"$tmp/$name.err"; then
		echo "FAIL $name: go tool pprof cannot read it: $(head -3 "$tmp/$name.err")"
		fail=1
		return
	fi
	"$KP_TESTS/tools/pprof-traces" <"$tmp/$name.traces" >"$tmp/$name.back"
	if ! cmp -s "$tmp/$name.back" "$tmp/$name.report.folded"; then
		echo "FAIL $name: go tool pprof -traces shows other stacks than the folded output:"
		diff "$tmp/$name.report.folded" "$tmp/$name.back" | head -6
		fail=1
	fi
}

for input in "$KP_TESTS"/golden/data/collapsed/*.txt; do
	same_stacks "$(basename "$input" .txt)" "$input"
done
{
	printf '%s\n' 'q"uote;back\slash;</script>;std::vector<int>::push_back(int const&);x 3'
	printf 'uni;\xe6\x97\xa5\xe6\x9c\xac;\xc3\xa9moji\xf0\x9f\x98\x80 2\n'
} >"$tmp/hostile.folded"
same_stacks hostile "$tmp/hostile.folded"
[ "$n" -eq 55 ] || { echo "FAIL: checked $n outputs, expected 55"; fail=1; }

# gzip, and the top function of a known profile
file "$tmp/hostile.pb.gz" | grep -q 'gzip compressed' || { echo "FAIL: -o X.pb.gz is not gzip"; fail=1; }
go tool pprof -top "$tmp/perf-java-stacks-01-collapsed-pid.pb.gz" >"$tmp/top" 2>&1
top=$("$KPROF" report -f top --top 1 "$KP_TESTS/golden/data/collapsed/perf-java-stacks-01-collapsed-pid.txt" 2>/dev/null |
	awk '/by self share/ { getline; getline; print $NF; exit }')
grep -Eq "^ +[0-9]+ +[0-9.]+% +[0-9.]+% .* $top\$" <(sed -n '/flat%/{n;p;q}' "$tmp/top") ||
	{ echo "FAIL: go tool pprof -top's first function is not kprof's top one ($top):"; head -8 "$tmp/top"; fail=1; }

# decimals are refused, and no file is left
printf 'a;b 0.25\n' >"$tmp/decimal.folded"
if "$KPROF" report -o "$tmp/decimal.pb.gz" "$tmp/decimal.folded" 2>"$tmp/decimal.err"; then
	echo "FAIL: decimal counts written as pprof"
	fail=1
fi
[ -e "$tmp/decimal.pb.gz" ] && { echo "FAIL: a partial pprof file was left"; fail=1; }
grep -q "pprof values are integers, but the profile's 'samples' values have decimals (total 0.25)" \
	"$tmp/decimal.err" || { echo "FAIL: decimal message: $(cat "$tmp/decimal.err")"; fail=1; }
[ "$(wc -l <"$tmp/decimal.err")" -eq 1 ] || { echo "FAIL: more than one line for the error"; fail=1; }

[ $fail -eq 0 ] && echo "all $n pprof outputs read by go tool pprof with the folded stacks"
exit $fail
