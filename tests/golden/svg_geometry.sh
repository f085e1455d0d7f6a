#!/usr/bin/env bash
# kprof flamegraph draws the frames flamegraph.pl draws: for each of the 54
# collapsed files in tests/golden/data, the frame geometry of kprof's SVG
# (name, samples, x, y, width as printed by tests/tools/svg-frames) must equal
# flamegraph.pl's, x and width within 0.05 px. Every mismatch is reported.
set -u
: "${KPROF:?}" "${KP_TESTS:?}" "${KP_TMP:?}"
data=$KP_TESTS/golden/data
tmp=$KP_TMP/svg_geometry
rm -rf "$tmp"
mkdir -p "$tmp"
fail=0
n=0
for in in "$data"/collapsed/*.txt; do
	name=$(basename "$in" .txt)
	n=$((n + 1))
	if ! "$KPROF" flamegraph -o "$tmp/$name.svg" "$in" 2>"$tmp/$name.err"; then
		echo "FAIL $name: kprof flamegraph failed: $(cat "$tmp/$name.err")"
		fail=$((fail + 1))
	fi
done
[ "$n" -eq 54 ] || {
	echo "FAIL: expected 54 inputs, found $n"
	exit 1
}
# one Python for all files: svg-frames is loaded as a module
python3 - "$KP_TESTS/tools/svg-frames" "$data/svg-frames" "$tmp" <<'PY' || fail=$((fail + 1))
import importlib.machinery, importlib.util, os, sys

tool, want_dir, got_dir = sys.argv[1:4]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
loader = importlib.machinery.SourceFileLoader("svg_frames", tool)
spec = importlib.util.spec_from_loader("svg_frames", loader)
svg_frames = importlib.util.module_from_spec(spec)
loader.exec_module(svg_frames)

def key(r):
    return (r[0], r[1], r[3], float(r[2]))

bad_files = 0
names = sorted(f[:-4] for f in os.listdir(want_dir) if f.endswith(".tsv"))
for name in names:
    svg = os.path.join(got_dir, name + ".svg")
    if not os.path.exists(svg):
        bad_files += 1
        continue
    try:
        got = [[str(v) for v in row] for row in svg_frames.frames(svg)]
    except Exception as e:
        print(f"FAIL {name}: cannot parse the SVG: {e}")
        bad_files += 1
        continue
    want = [l.rstrip("\n").split("\t") for l in open(os.path.join(want_dir, name + ".tsv"), encoding="utf-8")]
    got.sort(key=key)
    want.sort(key=key)
    bad = 0
    if len(got) != len(want):
        print(f"FAIL {name}: {len(got)} frames, flamegraph.pl draws {len(want)}")
        bad += 1
    for g, w in zip(got, want):
        if not (g[0] == w[0] and g[1] == w[1] and g[3] == w[3]
                and abs(float(g[2]) - float(w[2])) <= 0.05
                and abs(float(g[4]) - float(w[4])) <= 0.05):
            print(f"FAIL {name}: got {g} want {w}")
            bad += 1
    bad_files += bad > 0
print(f"{len(names) - bad_files} of {len(names)} files draw flamegraph.pl's frames")
sys.exit(1 if bad_files else 0)
PY
[ "$fail" -eq 0 ]
