#!/usr/bin/env bash
# kprof flamegraph: hostile names stay inert, --inverted, --reverse,
# --minwidth, several inputs, bad input (malformed line, empty file,
# garbage, a 10 MB line) and bad option values.
set -u
: "${KPROF:?}" "${KP_SHARED:?}" "${KP_TMP:?}"
tmp=$KP_TMP/svg_options
rm -rf "$tmp"
mkdir -p "$tmp"
cd "$tmp" || exit 1
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
frames() { python3 "$KP_SHARED/tools/svg-frames" "$1"; }
wellformed() { python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1"; }
# kprof flamegraph ARGS...: exit status in $rc, stderr in err.txt
run() {
	timeout 60 "$KPROF" flamegraph "$@" 2>err.txt
	rc=$?
	[ "$rc" -lt 124 ] || fail "kprof flamegraph $* crashed or hung (status $rc): $(head -c 300 err.txt)"
}

# hostile names: markup, entities, quotes, CDATA end, invalid UTF-8
printf '%s\n' 'comm;<script>alert(1)</script>;a&amp;b;"q'"'"'uote";x]]>y;<img src=x onerror=alert(2)> 3' >hostile.folded
printf 'comm;bad\xff\xfeutf8;\xc3\x28;\xed\xa0\x80 2\n' >>hostile.folded
run -o hostile.svg --title '<b>T&T</b>' --subtitle '"sub" ]]>' --countname '<c>' --nametype '</script>' hostile.folded
[ "$rc" -eq 0 ] || fail "hostile names: status $rc: $(cat err.txt)"
wellformed hostile.svg || fail "hostile names: the SVG is not well-formed XML"
[ "$(grep -c '<script' hostile.svg)" -eq 1 ] || fail "hostile names: a <script element came from the data"
grep -q '<img' hostile.svg && fail "hostile names: raw <img in the SVG"
frames hostile.svg | grep -qF '<script>alert(1)</script>	3' ||
	fail "hostile names: the name did not survive escaping: $(frames hostile.svg | head -5)"
frames hostile.svg | grep -qF 'a&amp	3' || fail "hostile names: entity text not kept literally"
python3 - hostile.svg <<'PY' || fail "hostile names: invalid UTF-8 not replaced"
import sys
data = open(sys.argv[1], "rb").read()
data.decode("utf-8")  # raises on invalid UTF-8
assert "\ufffd".encode() in data
PY

# the same input gives the same bytes (colours are hashed from names)
run -o again.svg --title '<b>T&T</b>' --subtitle '"sub" ]]>' --countname '<c>' --nametype '</script>' hostile.folded
cmp -s hostile.svg again.svg || fail "two runs on the same input differ"

# --inverted: the root at the top, the leaves below it
printf 'main;work;leaf 3\nmain;idle 1\n' >tree.folded
run --inverted tree.folded >inv.svg
grep -q '>Icicle Graph<' inv.svg || fail "--inverted: title is not Icicle Graph"
python3 - inv.svg "$KP_SHARED/tools/svg-frames" <<'PY' || fail "--inverted: wrong frame order"
import subprocess, sys
rows = [l.split("\t") for l in subprocess.check_output([sys.executable, sys.argv[2], sys.argv[1]], text=True).splitlines()]
y = {r[0]: int(r[3]) for r in rows}
assert y["all"] == 36 and y["main"] == 52 and y["work"] == 68 and y["leaf"] == 84, y
PY
run tree.folded >up.svg
python3 - up.svg "$KP_SHARED/tools/svg-frames" <<'PY' || fail "default: wrong frame order"
import subprocess, sys
rows = [l.split("\t") for l in subprocess.check_output([sys.executable, sys.argv[2], sys.argv[1]], text=True).splitlines()]
y = {r[0]: int(r[3]) for r in rows}
assert y["all"] > y["main"] > y["work"] > y["leaf"], y
PY

# --reverse: leaves become roots and merge
printf 'main;a;leaf 2\nmain;b;leaf 3\nmain;b;other 1\n' >rev.folded
run --reverse rev.folded >rev.svg
frames rev.svg | LC_ALL=C sort >rev.tsv
grep -qP '^leaf\t5\t10.0\t' rev.tsv || fail "--reverse: leaf is not one root frame of 5: $(cat rev.tsv)"
[ "$(grep -cP '^main\t' rev.tsv)" -eq 3 ] || fail "--reverse: main is not at the top of 3 stacks"

# --minwidth: tiny frames go, their time stays in the parent
{
	echo 'big;x 100000'
	for i in $(seq 1 50); do echo "big;tiny$i 1"; done
} >tiny.folded
run tiny.folded >tiny.svg
frames tiny.svg >tiny.tsv
grep -q '^tiny' tiny.tsv && fail "--minwidth default: sub-0.1px frames drawn"
grep -qP '^big\t100050\t10.0\t\d+\t1180.0$' tiny.tsv || fail "--minwidth: parent lost width: $(grep ^big tiny.tsv)"
run --minwidth 0 tiny.folded >tiny0.svg
[ "$(frames tiny0.svg | grep -c '^tiny')" -eq 50 ] || fail "--minwidth 0: tiny frames missing"
run --minwidth 50% tiny.folded >tinyp.svg
[ "$(frames tinyp.svg | wc -l)" -eq 3 ] || fail "--minwidth 50%: expected all, big, x"
run --minwidth nope tiny.folded >/dev/null
[ "$rc" -ne 0 ] || fail "--minwidth nope accepted"

# several inputs merge; - is stdin
printf 'a;b 1\n' >one.folded
printf 'a;b 2\r\n' >two.folded
printf 'a;c 4\n' | run -o merged.svg one.folded two.folded -
frames merged.svg | grep -qP '^all\t7\t' || fail "inputs did not merge: $(frames merged.svg)"

# a malformed line: FILE:LINE, status 1, no output file
printf 'a;b 1\n\nthis line has no count\n' >bad.folded
run -o bad.svg bad.folded
[ "$rc" -eq 1 ] || fail "malformed line: status $rc"
grep -q 'bad.folded:3:' err.txt || fail "malformed line: no FILE:LINE in: $(cat err.txt)"
ls bad.svg* >/dev/null 2>&1 && fail "malformed line: an output file was left behind"
run -o bad.svg --ignore-bad-lines bad.folded
[ "$rc" -eq 0 ] || fail "--ignore-bad-lines: status $rc"
grep -q 'ignored 1 line' err.txt || fail "--ignore-bad-lines: no note: $(cat err.txt)"
wellformed bad.svg || fail "--ignore-bad-lines: no SVG"

# an empty file: a clear error, no output
: >empty.folded
run -o empty.svg empty.folded
[ "$rc" -eq 1 ] && grep -q 'no stacks' err.txt || fail "empty input: status $rc, $(cat err.txt)"
[ -e empty.svg ] && fail "empty input: output file written"
run -o missing.svg does-not-exist.folded
[ "$rc" -eq 1 ] && grep -q 'does-not-exist.folded' err.txt || fail "missing file: $(cat err.txt)"

# binary garbage: an error (or, skipping bad lines, whatever survives) and never a crash
python3 -c 'import random, sys; r = random.Random(7); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(300000)))' >garbage.bin
run -o garbage.svg garbage.bin
[ "$rc" -eq 1 ] || fail "garbage: status $rc"
[ -e garbage.svg ] && fail "garbage: output file written"
run -o garbage.svg --ignore-bad-lines garbage.bin
if [ "$rc" -eq 0 ]; then wellformed garbage.svg || fail "garbage: SVG not well-formed"; fi

# a 10 MB line: without a count an error naming line 1, with one a frame
python3 -c 'import sys; sys.stdout.write("x" * 10485760)' >long.folded
run -o long.svg long.folded
[ "$rc" -eq 1 ] && grep -q 'long.folded:1:' err.txt || fail "10 MB line: status $rc, $(head -c 200 err.txt)"
printf ' 9\nmain;short 1\n' >>long.folded
run -o long.svg long.folded
[ "$rc" -eq 0 ] && wellformed long.svg || fail "10 MB frame: status $rc"

# negative and overflowing counts
printf 'a -3\n' >neg.folded
run -o neg.svg neg.folded
[ "$rc" -eq 1 ] && grep -q 'neg.folded:1: negative count' err.txt || fail "negative count: $(cat err.txt)"
printf 'a 123456789012345678901234567890\n' >huge.folded
run -o huge.svg huge.folded
[ "$rc" -eq 1 ] && grep -q 'count too large' err.txt || fail "huge count: $(cat err.txt)"

# bad option values
for opt in "--width abc" "--width 5" "--height 0" "--colors nope" "--bgcolors pink" "--fontsize -1" "--total 0" "--fonttype a{b}"; do
	# shellcheck disable=SC2086
	run $opt tree.folded >/dev/null
	[ "$rc" -eq 1 ] && [ -s err.txt ] || fail "$opt: status $rc, no error"
done
run --help >help.txt
[ "$rc" -eq 0 ] && grep -q -- '--minwidth' help.txt || fail "--help"

if [ "$fails" -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "all svg option checks passed"
