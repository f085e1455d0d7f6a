#!/usr/bin/env bash
# kprof flamegraph: hostile names stay inert, --inverted, --reverse,
# --minwidth, several inputs, bad input (malformed line, empty file,
# garbage, a 10 MB line) and bad option values.
set -u
: "${KPROF:?}" "${KP_TESTS:?}" "${KP_TMP:?}"
tmp=$KP_TMP/svg_options
rm -rf "$tmp"
mkdir -p "$tmp"
cd "$tmp" || exit 1
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
# Python starts slowly on a busy machine: the checks that need it are
# queued ("CHECK-NAME FILE") and run in one Python at the end.
: >checks.txt
check() { echo "$1 $2" >>checks.txt; }
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
check wellformed hostile.svg
[ "$(grep -c '<script' hostile.svg)" -eq 1 ] || fail "hostile names: a <script element came from the data"
grep -q '<img' hostile.svg && fail "hostile names: raw <img in the SVG"
check hostile hostile.svg

# the same input gives the same bytes (colours are hashed from names)
run -o again.svg --title '<b>T&T</b>' --subtitle '"sub" ]]>' --countname '<c>' --nametype '</script>' hostile.folded
cmp -s hostile.svg again.svg || fail "two runs on the same input differ"

# --inverted: the root at the top, the leaves below it
printf 'main;work;leaf 3\nmain;idle 1\n' >tree.folded
run --inverted tree.folded >inv.svg
grep -q '>Icicle Graph<' inv.svg || fail "--inverted: title is not Icicle Graph"
check inverted inv.svg
run tree.folded >up.svg
check upright up.svg

# --reverse: leaves become roots and merge
printf 'main;a;leaf 2\nmain;b;leaf 3\nmain;b;other 1\n' >rev.folded
run --reverse rev.folded >rev.svg
check reverse rev.svg

# --minwidth: tiny frames go, their time stays in the parent
{
	echo 'big;x 100000'
	for i in $(seq 1 50); do echo "big;tiny$i 1"; done
} >tiny.folded
run tiny.folded >tiny.svg
check minwidth tiny.svg
run --minwidth 0 tiny.folded >tiny0.svg
check minwidth0 tiny0.svg
run --minwidth 50% tiny.folded >tinyp.svg
check minwidth50 tinyp.svg
run --minwidth nope tiny.folded >/dev/null
[ "$rc" -ne 0 ] || fail "--minwidth nope accepted"

# several inputs merge; - is stdin
printf 'a;b 1\n' >one.folded
printf 'a;b 2\r\n' >two.folded
printf 'a;c 4\n' | run -o merged.svg one.folded two.folded -
check merged merged.svg

# a malformed line among good ones is skipped, as flamegraph.pl skips it,
# with one warning naming FILE:LINE; --strict makes it an error
printf 'a;b 1\n\nthis line has no count\nno count either\n' >bad.folded
run -o bad.svg bad.folded
[ "$rc" -eq 0 ] || fail "malformed line: status $rc: $(cat err.txt)"
grep -q 'ignored 2 lines with invalid format; the first: bad.folded:3: no count' err.txt ||
	fail "malformed line: no FILE:LINE warning in: $(cat err.txt)"
[ "$(wc -l <err.txt)" -eq 1 ] || fail "malformed line: more than one warning: $(cat err.txt)"
check wellformed bad.svg
run -o bad-strict.svg --strict bad.folded
[ "$rc" -eq 1 ] || fail "--strict: status $rc"
grep -q 'bad.folded:3:' err.txt || fail "--strict: no FILE:LINE in: $(cat err.txt)"
ls bad-strict.svg* >/dev/null 2>&1 && fail "--strict: an output file was left behind"
run -o bad2.svg --ignore-bad-lines bad.folded
[ "$rc" -eq 0 ] && cmp -s bad.svg bad2.svg || fail "--ignore-bad-lines: not the default's picture"

# '#' lines are comments, skipped without a word (austin's metadata)
printf '# austin: 3.3.0\n# interval: 100\nP1;T1;main 5\n' >austin.folded
run -o austin.svg austin.folded
[ "$rc" -eq 0 ] && [ ! -s err.txt ] || fail "comments: status $rc, $(cat err.txt)"

# an empty stack as the first line (undefined behaviour once)
printf ' 138\nmain 2\n' >emptystack.folded
run -o emptystack.svg emptystack.folded
[ "$rc" -eq 0 ] || fail "empty stack: status $rc: $(cat err.txt)"
grep -q '<title>all (140 samples, 100%)</title>' emptystack.svg || fail "empty stack: not in the total"

# counts stay exact integers past 2^53: the titles say so
printf 'x 9007199254740992\ny 9007199254740993\n' >big.folded
run -o big.svg big.folded
[ "$rc" -eq 0 ] || fail "big counts: status $rc: $(cat err.txt)"
grep -q '<title>all (18,014,398,509,481,985 samples, 100%)</title>' big.svg || fail "big counts: total not exact"
grep -q '<title>y (9,007,199,254,740,993 samples, ' big.svg || fail "big counts: frame count not exact"

# a directory is named as one
run -o dir.svg .
[ "$rc" -eq 1 ] && grep -q 'is a directory' err.txt || fail "directory input: $(cat err.txt)"

# an empty file: a clear error, no output
: >empty.folded
run -o empty.svg empty.folded
[ "$rc" -eq 1 ] && grep -q 'no stacks' err.txt || fail "empty input: status $rc, $(cat err.txt)"
[ -e empty.svg ] && fail "empty input: output file written"
run -o missing.svg does-not-exist.folded
[ "$rc" -eq 1 ] && grep -q 'does-not-exist.folded' err.txt || fail "missing file: $(cat err.txt)"

# binary garbage that is the same every run (kprof's own executable): the
# lines that happen to end in " DIGITS" are drawn, the rest skipped and
# named; or nothing is left, an error naming the file; never a crash
cp "$KPROF" garbage.bin
run -o garbage.svg garbage.bin
if [ "$rc" -eq 0 ]; then
	check wellformed garbage.svg
	grep -q 'the first: garbage.bin:' err.txt || fail "garbage: no warning naming the file: $(head -c 300 err.txt)"
else
	[ "$rc" -eq 1 ] && grep -q 'garbage.bin:' err.txt || fail "garbage: status $rc: $(head -c 300 err.txt)"
	[ -e garbage.svg ] && fail "garbage: output file written"
fi
run -o garbage-strict.svg --strict garbage.bin
[ "$rc" -eq 1 ] || fail "garbage --strict: status $rc"
[ -e garbage-strict.svg ] && fail "garbage --strict: output file written"

# a 10 MB line: without a count an error naming line 1, with one a frame
head -c 10485760 /dev/zero | tr '\0' x >long.folded
run -o long.svg long.folded
[ "$rc" -eq 1 ] && grep -q 'long.folded:1:' err.txt || fail "10 MB line: status $rc, $(head -c 200 err.txt)"
printf ' 9\nmain;short 1\n' >>long.folded
run -o long.svg long.folded
[ "$rc" -eq 0 ] || fail "10 MB frame: status $rc"
check wellformed long.svg

# negative and overflowing counts
printf 'a -3\n' >neg.folded
run -o neg.svg neg.folded
[ "$rc" -eq 1 ] && grep -q 'neg.folded:1: negative count' err.txt || fail "negative count: $(cat err.txt)"
printf 'a 1234567890123456789012345678901234567890\n' >huge.folded
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

python3 - "$KP_TESTS/tools/svg-frames" checks.txt <<'PY' || fails=$((fails + 1))
import importlib.machinery, importlib.util, sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
loader = importlib.machinery.SourceFileLoader("svg_frames", sys.argv[1])
spec = importlib.util.spec_from_loader("svg_frames", loader)
svg_frames = importlib.util.module_from_spec(spec)
loader.exec_module(svg_frames)

def rows(path):
    return [[str(v) for v in r] for r in svg_frames.frames(path)]

def ys(path):
    return {r[0]: int(r[3]) for r in rows(path)}

def hostile(path):
    names = {(r[0], r[1]) for r in rows(path)}
    assert ("<script>alert(1)</script>", "3") in names, names
    assert ("a&amp", "3") in names, "entity text not kept literally"
    assert ('"q\'uote"', "3") in names and ("x]]>y", "3") in names, names
    data = open(path, "rb").read()
    data.decode("utf-8")  # invalid UTF-8 was replaced
    assert "\ufffd".encode() in data

def inverted(path):
    y = ys(path)
    assert y["all"] == 36 and y["main"] == 52 and y["work"] == 68 and y["leaf"] == 84, y

def upright(path):
    y = ys(path)
    assert y["all"] > y["main"] > y["work"] > y["leaf"], y

def reverse(path):
    r = rows(path)
    assert ["leaf", "5", "10.0"] in [x[:3] for x in r], r
    assert sum(1 for x in r if x[0] == "main") == 3, r

def minwidth(path):
    r = rows(path)
    assert not [x for x in r if x[0].startswith("tiny")], "sub-0.1 px frames drawn"
    assert ["big", "100050", "10.0", "1180.0"] in [[x[0], x[1], x[2], x[4]] for x in r], r

def minwidth0(path):
    assert sum(1 for x in rows(path) if x[0].startswith("tiny")) == 50

def minwidth50(path):
    assert sorted(x[0] for x in rows(path)) == ["all", "big", "x"], rows(path)

def merged(path):
    assert ["all", "7"] in [x[:2] for x in rows(path)], rows(path)

def wellformed(path):
    ET.parse(path)

bad = 0
for line in open(sys.argv[2]):
    name, path = line.split()
    try:
        globals()[name](path)
    except Exception as e:
        print(f"FAIL: {name} {path}: {type(e).__name__}: {e}"[:2000])
        bad += 1
sys.exit(1 if bad else 0)
PY

if [ "$fails" -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "all svg option checks passed"
