#!/usr/bin/env bash
# kprof report -f speedscope: every output validates against speedscope's
# published schema (tests/speedscope, through tests/tools/speedscope-check),
# and its stacks and weights, read back from the JSON, are exactly the
# folded stacks of the same input (kprof report -f folded): the 54
# collapsed files of FlameGraph's test data, names that JSON must escape or
# carry as UTF-8 (quotes, backslashes, </script>, CJK, emoji, U+2028),
# decimal counts. Invalid UTF-8 becomes U+FFFD, one per invalid byte, and
# still validates. -o X.speedscope.json chooses the format.
#
# python3-jsonschema is needed: skipped without it, a failure when CI=true.
set -u
: "${KPROF:?}" "${KP_TESTS:?}" "${KP_TMP:?}"
check=$KP_TESTS/tools/speedscope-check
tmp=$KP_TMP/speedscope-golden
rm -rf "$tmp" && mkdir -p "$tmp"
fail=0 n=0

if ! python3 -c 'import jsonschema' 2>/dev/null; then
	if [ "${CI:-}" = true ]; then
		echo "FAIL: python3-jsonschema is not installed (scripts/deps --test), and CI=true"
		exit 1
	fi
	echo "skip: python3-jsonschema not installed"
	exit 77
fi

# round_trip NAME FILE [report options]: the speedscope JSON and the folded
# output of one reading (each -o in its extension's format); checked
# together by check_all, in one start of the checker
round_trip() {
	local name=$1 input=$2
	shift 2
	n=$((n + 1))
	if ! "$KPROF" report "$@" -o "$tmp/$name.speedscope.json" -o "$tmp/$name.report.folded" \
		"$input" 2>"$tmp/$name.err"; then
		echo "FAIL $name: kprof report exit status $?: $(cat "$tmp/$name.err")"
		fail=1
	fi
}
# every JSON validates, and its stacks read back equal the folded output
check_all() {
	local json name
	"$check" --folded-to .back "$tmp"/*.speedscope.json >"$tmp/check.out" 2>&1 || {
		echo "FAIL: not valid speedscope:"
		head -10 "$tmp/check.out"
		fail=1
	}
	for json in "$tmp"/*.speedscope.json; do
		name=$(basename "$json" .speedscope.json)
		[ -e "$json.back" ] || continue # reported above
		if ! cmp -s "$json.back" "$tmp/$name.report.folded"; then
			echo "FAIL $name: the stacks read back from the JSON differ from the folded output:"
			diff "$tmp/$name.report.folded" "$json.back" | head -6
			fail=1
		fi
	done
}

for input in "$KP_TESTS"/golden/data/collapsed/*.txt; do
	round_trip "$(basename "$input" .txt)" "$input"
done

# names JSON escapes or carries as UTF-8, and decimal counts
{
	printf '%s\n' 'q"uote;back\slash;</script><b>&amp;;tab	in;x 3'
	printf 'uni;\xe6\x97\xa5\xe6\x9c\xac;\xc3\xa9moji\xf0\x9f\x98\x80;\xd7\xa2\xd7\x91;line\xe2\x80\xa8sep 2\n'
	printf 'uni;\xe6\x97\xa5\xe6\x9c\xac;other 1\n'
} >"$tmp/hostile.folded"
round_trip hostile "$tmp/hostile.folded"
printf 'dec;a 0.25\ndec;b 1.5\ndec;c 3\n' >"$tmp/decimal.folded"
round_trip decimal "$tmp/decimal.folded"
check_all

# invalid UTF-8: U+FFFD for each invalid byte, the rest kept
printf 'bad;f\xff\xfe;t\xe2\x82;s\xed\xa0\x80;o\xc0\xaf;ok\xc3\xa9 4\n' >"$tmp/invalid.folded"
n=$((n + 1))
"$KPROF" report -f speedscope -o "$tmp/invalid.json" "$tmp/invalid.folded" 2>"$tmp/invalid.err" ||
	{ echo "FAIL invalid: exit status $?: $(cat "$tmp/invalid.err")"; fail=1; }
"$check" "$tmp/invalid.json" || { echo "FAIL invalid: not valid speedscope"; fail=1; }
python3 - "$tmp/invalid.json" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
names = [f["name"] for f in doc["shared"]["frames"]]
want = ["bad", "f\ufffd\ufffd", "t\ufffd\ufffd", "s\ufffd\ufffd\ufffd", "o\ufffd\ufffd", "ok\u00e9"]
if names != want:
    print(f"FAIL invalid: frames {names!r}, expected {want!r}")
    sys.exit(1)
PY

# the document's own fields
python3 - "$tmp/hostile.speedscope.json" "$("$KPROF" --version)" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
ok = True
def want(what, got, expected):
    global ok
    if got != expected:
        print(f"FAIL fields: {what} is {got!r}, expected {expected!r}")
        ok = False
want("$schema", doc["$schema"], "https://www.speedscope.app/file-format-schema.json")
want("exporter", doc["exporter"], sys.argv[2])
want("activeProfileIndex", doc["activeProfileIndex"], 0)
p = doc["profiles"]
want("profiles", [(x["type"], x["name"], x["unit"], x["startValue"], x["endValue"]) for x in p],
     [("sampled", "samples", "none", 0, 6)])
sys.exit(0 if ok else 1)
PY

[ "$n" -eq 57 ] || { echo "FAIL: checked $n outputs, expected 57"; fail=1; }
[ $fail -eq 0 ] && echo "all $n speedscope outputs valid, stacks and weights as in folded"
exit $fail
