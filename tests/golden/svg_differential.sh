#!/usr/bin/env bash
# kprof flamegraph draws difffolded.pl's two-count lines ("stack BEFORE
# AFTER") as flamegraph.pl draws them:
#  1. geometry: each of the 54 collapsed files of tests/golden/data, made
#     differential (its count as AFTER, a made-up BEFORE), must draw exactly
#     the frames flamegraph.pl draws for the one-count file (widths come from
#     AFTER), and every frame's fill and "; +D%" must be flamegraph.pl's
#     color_scale of the frame's self delta (AFTER - BEFORE of the stack that
#     ends in it) against the largest stack delta; again with --negate;
#  2. inferno's differential test (tests/golden/data/differential): the
#     titles and fills of every frame equal inferno's expected SVGs, with and
#     without --negate, and the geometry of the one drawn in pixels matches.
set -u
: "${KPROF:?}" "${KP_TESTS:?}" "${KP_TMP:?}"
data=$KP_TESTS/golden/data
tmp=$KP_TMP/svg_differential
rm -rf "$tmp"
mkdir -p "$tmp"
fail=0

python3 - "$data/collapsed" "$tmp" <<'PY' || fail=1
import os, sys
src, out = sys.argv[1:3]
for name in sorted(os.listdir(src)):
    if not name.endswith(".txt"):
        continue
    with open(os.path.join(src, name), "rb") as f, open(os.path.join(out, name), "wb") as g:
        for i, line in enumerate(f):
            stack, _, count = line.rstrip(b"\n").rpartition(b" ")
            after = int(count)
            # some grew, some shrank, some are new (BEFORE 0), some equal
            before = (after * (i % 7 + 1)) // 4 if i % 5 else after
            g.write(b"%s %d %d\n" % (stack, before, after))
PY
n=0
for in in "$tmp"/*.txt; do
	name=$(basename "$in" .txt)
	n=$((n + 1))
	for neg in "" --negate; do
		if ! "$KPROF" flamegraph $neg -o "$tmp/$name$neg.svg" "$in" 2>"$tmp/$name.err"; then
			echo "FAIL $name $neg: kprof flamegraph failed: $(cat "$tmp/$name.err")"
			fail=1
		fi
	done
done
[ "$n" -eq 54 ] || {
	echo "FAIL: expected 54 inputs, found $n"
	exit 1
}

python3 - "$KP_TESTS/tools/svg-frames" "$data" "$tmp" <<'PY' || fail=1
import importlib.machinery, importlib.util, os, re, sys

tool, data, tmp = sys.argv[1:4]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
loader = importlib.machinery.SourceFileLoader("svg_frames", tool)
spec = importlib.util.spec_from_loader("svg_frames", loader)
svg_frames = importlib.util.module_from_spec(spec)
loader.exec_module(svg_frames)

def color_scale(value, mx, negate):
    """flamegraph.pl's color_scale."""
    r = g = b = 255
    if negate:
        value = -value
    if value > 0:
        g = b = int(210 * (mx - value) / mx)
    elif value < 0:
        r = g = int(210 * (mx + value) / mx)
    return "rgb(%d,%d,%d)" % (r, g, b)

def strip(frame):
    return re.sub(r"_\[[kwij]\]$", "", frame)

def key(r):
    return (r[0], r[1], r[3], float(r[2]))

bad_files = 0
names = sorted(f[:-4] for f in os.listdir(os.path.join(data, "svg-frames")) if f.endswith(".tsv"))
for name in names:
    # the self delta of each path, and the largest one (at least 1)
    deltas, maxdelta, total = {}, 1, 0
    for line in open(os.path.join(tmp, name + ".txt"), encoding="utf-8", errors="surrogateescape"):
        stack, before, after = line.rstrip("\n").rsplit(" ", 2)
        d = int(after) - int(before)
        maxdelta = max(maxdelta, abs(d))
        total += int(after)
        path = tuple(strip(f) for f in stack.split(";"))
        deltas[path] = None if path in deltas else d  # None: two paths look alike
    want = [l.rstrip("\n").split("\t")
            for l in open(os.path.join(data, "svg-frames", name + ".tsv"), encoding="utf-8")]
    want.sort(key=key)
    for neg in ("", "--negate"):
        svg = os.path.join(tmp, name + neg + ".svg")
        bad = 0
        try:
            boxes = list(svg_frames.boxes(svg))
        except Exception as e:
            print(f"FAIL {name}{neg}: cannot parse the SVG: {e}")
            bad_files += 1
            continue
        got = sorted(([*svg_frames.split_title(b[0]), b[1], b[2], b[3]] for b in boxes), key=key)
        if len(got) != len(want):
            print(f"FAIL {name}{neg}: {len(got)} frames, flamegraph.pl draws {len(want)}")
            bad += 1
        for g, w in zip(got, want):
            if not (g[:2] == w[:2] and g[3] == w[3] and abs(float(g[2]) - float(w[2])) <= 0.05
                    and abs(float(g[4]) - float(w[4])) <= 0.05):
                print(f"FAIL {name}{neg}: got {g} want {w}")
                bad += 1
        # each box's path: its parent is the box one level down that holds it
        rows = [(b[0], float(b[1]), float(b[2]), float(b[3]), b[4]) for b in boxes]
        rows.sort(key=lambda r: (-r[2], r[1]))
        paths, checked = {}, 0
        for i, (title, x, y, w, fill) in enumerate(rows):
            fname = svg_frames.split_title(title)[0]
            parent = [p for p in rows[:i] if p[2] == y + 16 and p[1] <= x + 0.01
                      and x + w <= p[1] + p[3] + 0.06]
            path = (paths[max(parent, key=lambda p: p[1])[:3]] if parent else ()) + (fname,)
            paths[(title, x, y)] = path if y != rows[0][2] else ()
            if y == rows[0][2]:
                if fill != "rgb(255,255,255)":
                    print(f"FAIL {name}{neg}: the root is {fill}, not white")
                    bad += 1
                continue
            d = deltas.get(path, 0)
            if d is None:
                continue
            checked += 1
            want_fill = color_scale(d, maxdelta, neg != "")
            shown = -d if neg else d
            pct = "%.2f" % (100 * shown / total)
            want_title = ("+" if shown > 0 else "") + pct + "%)"
            if fill != want_fill or not title.endswith("; " + want_title):
                print(f"FAIL {name}{neg}: {path[-3:]}: {title} {fill}, want ...; {want_title} {want_fill}")
                bad += 1
        if checked < len(rows) // 2:
            print(f"FAIL {name}{neg}: only {checked} of {len(rows)} colours checked")
            bad += 1
        bad_files += bad > 0
print(f"{2 * len(names) - bad_files} of {2 * len(names)} differential graphs draw flamegraph.pl's frames and colours")

# inferno's expected SVGs, as tab-separated title, x, y, width, fill
inp = os.path.join(data, "differential", "perf-cycles-instructions-01-collapsed-all-diff.txt")
for exp, neg in (("diff.tsv", ""), ("diff-negated.tsv", "--negate")):
    svg = os.path.join(tmp, "inferno" + neg + ".svg")
    if os.system(f"\"$KPROF\" flamegraph {neg} -o {svg} {inp}") != 0:
        print(f"FAIL inferno {exp}: kprof flamegraph failed")
        bad_files += 1
        continue
    got = {(b[0], b[2]): b for b in svg_frames.boxes(svg)}
    want = [l.rstrip("\n").split("\t") for l in open(os.path.join(data, "differential", exp))]
    bad = len(got) != len(want)
    if bad:
        print(f"FAIL inferno {exp}: {len(got)} frames, inferno draws {len(want)}")
    for title, x, y, w, fill in want:
        g = got.get((title, y))
        if not g or g[4] != fill:
            print(f"FAIL inferno {exp}: want {title} at y={y} in {fill}, got {g}")
            bad += 1
            continue
        if x.endswith("%"):
            # inferno draws in percent of the 1180 px between the pads
            px, pw = 10 + float(x[:-1]) * 11.8, float(w[:-1]) * 11.8
            if abs(float(g[1]) - px) > 0.06 or abs(float(g[3]) - pw) > 0.11:
                print(f"FAIL inferno {exp}: {title}: x {g[1]} width {g[3]}, inferno {px:.3f} {pw:.3f}")
                bad += 1
    bad_files += bad > 0
    print(f"inferno {exp}: {len(want)} frames checked")
sys.exit(1 if bad_files else 0)
PY
[ "$fail" -eq 0 ]
