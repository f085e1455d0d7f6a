#!/usr/bin/env bash
# kprof flamegraph draws the frames flamegraph.pl draws: for each of the 54
# collapsed files in the shared test data, the frame geometry of kprof's SVG
# (name, samples, x, y, width as printed by tools/svg-frames) must equal
# flamegraph.pl's, x and width within 0.05 px.
set -u
: "${KPROF:?}" "${KP_SHARED:?}" "${KP_TMP:?}"
data=$KP_SHARED/testdata/flamegraph-compat
tmp=$KP_TMP/svg_geometry
mkdir -p "$tmp"
fail=0 n=0
for in in "$data"/collapsed/*.txt; do
	name=$(basename "$in" .txt)
	want=$data/svg-frames/$name.tsv
	n=$((n + 1))
	if ! "$KPROF" flamegraph -o "$tmp/$name.svg" "$in" 2>"$tmp/$name.err"; then
		echo "FAIL $name: kprof flamegraph failed: $(cat "$tmp/$name.err")"
		fail=$((fail + 1))
		continue
	fi
	if ! python3 "$KP_SHARED/tools/svg-frames" "$tmp/$name.svg" | LC_ALL=C sort >"$tmp/$name.got"; then
		echo "FAIL $name: svg-frames could not parse the SVG"
		fail=$((fail + 1))
		continue
	fi
	LC_ALL=C sort "$want" >"$tmp/$name.want"
	if ! python3 - "$tmp/$name.got" "$tmp/$name.want" "$name" <<'PY'; then
import sys
got = [l.rstrip("\n").split("\t") for l in open(sys.argv[1], encoding="utf-8")]
want = [l.rstrip("\n").split("\t") for l in open(sys.argv[2], encoding="utf-8")]
name = sys.argv[3]

def key(r):
    return (r[0], r[1], r[3], float(r[2]))

got.sort(key=key)
want.sort(key=key)
bad = 0
if len(got) != len(want):
    print(f"FAIL {name}: {len(got)} frames, flamegraph.pl draws {len(want)}")
    bad += 1
for g, w in zip(got, want):
    same = (g[0] == w[0] and g[1] == w[1] and g[3] == w[3]
            and abs(float(g[2]) - float(w[2])) <= 0.05
            and abs(float(g[4]) - float(w[4])) <= 0.05)
    if not same:
        print(f"FAIL {name}: got {g} want {w}")
        bad += 1
        if bad > 10:
            break
sys.exit(1 if bad else 0)
PY
		fail=$((fail + 1))
	fi
done
echo "$((n - fail)) of $n files draw flamegraph.pl's frames"
[ "$n" -eq 54 ] || { echo "FAIL: expected 54 inputs, found $n"; exit 1; }
[ "$fail" -eq 0 ]
