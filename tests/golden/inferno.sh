#!/usr/bin/env bash
# kprof flamegraph draws inferno's public test inputs as flamegraph.pl draws
# them (tests/golden/data/inferno, README.md there): for every case of
# cases.tsv, kprof flamegraph OPTIONS INPUTS exits 0 and its frames (name,
# samples, y exact; x and width within 0.1 px, as tests/tools/svg-frames
# prints them) are the rows of svg-frames/CASE.tsv, which are flamegraph.pl's
# geometry of inferno's expected SVG (or of a hand-written frame list where
# inferno has none for options kprof shares). The tables must also be what
# tests/tools/inferno-frames makes of their sources. Bad lines: one warning
# that counts them and names the first FILE:LINE; '#' lines: no warning.
set -u
: "${KPROF:?}" "${KP_TESTS:?}" "${KP_TMP:?}"
data=$KP_TESTS/golden/data/inferno
tmp=$KP_TMP/inferno
rm -rf "$tmp"
mkdir -p "$tmp"
fails=0
fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}
WANT_CASES=14

n=0
while IFS=$'\t' read -r name opts inputs _expected _test; do
	case $name in '#'* | '') continue ;; esac
	n=$((n + 1))
	[ "$opts" = - ] && opts=
	paths=()
	for f in $inputs; do paths+=("$data/input/$f"); done
	# shellcheck disable=SC2086 # options are words
	timeout 60 "$KPROF" flamegraph $opts -o "$tmp/$name.svg" "${paths[@]}" 2>"$tmp/$name.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$name ($inputs): kprof flamegraph $opts exited $rc: $(head -c 400 "$tmp/$name.err")"
		continue
	fi
	case $name in
	bad-lines)
		# two bad lines (the blank line is not one for kprof), the first on line 3
		want="kprof: warning: ignored 2 lines with invalid format; the first: ${paths[0]}:3: no count at the end of the line"
		{ [ "$(wc -l <"$tmp/$name.err")" -eq 1 ] && grep -qF "$want" "$tmp/$name.err"; } ||
			fail "$name ($inputs): want one warning \"$want ...\", got: $(cat "$tmp/$name.err")"
		;;
	*)
		[ -s "$tmp/$name.err" ] && fail "$name ($inputs): unexpected message: $(head -c 400 "$tmp/$name.err")"
		;;
	esac
done <"$data/cases.tsv"
[ "$n" -eq "$WANT_CASES" ] || fail "cases.tsv: $n cases, expected $WANT_CASES"

# --strict: the first bad line is an error and no file is written; comment
# lines are not bad lines
rm -f "$tmp/strict.svg"
if "$KPROF" flamegraph --strict -o "$tmp/strict.svg" "$data/input/bad-lines/bad-lines.txt" 2>"$tmp/strict.err"; then
	fail "bad-lines --strict: exit status 0"
fi
grep -qF "bad-lines.txt:3: no count" "$tmp/strict.err" || fail "bad-lines --strict: the error does not name line 3: $(cat "$tmp/strict.err")"
[ -e "$tmp/strict.svg" ] && fail "bad-lines --strict: wrote the output file"
"$KPROF" flamegraph --strict -o "$tmp/strict.svg" "$data/input/austin/flames.txt" 2>"$tmp/strict.err" ||
	fail "austin --strict: '#' lines made it fail: $(cat "$tmp/strict.err")"

# one Python for all comparisons: the two readers are loaded as modules
python3 - "$KP_TESTS/tools" "$data" "$tmp" <<'PY' || fails=$((fails + 1))
import collections, importlib.machinery, importlib.util, os, re, sys

tools, data, got_dir = sys.argv[1:4]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree


def load(name, path):
    loader = importlib.machinery.SourceFileLoader(name, path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    loader.exec_module(module)
    return module


svg_frames = load("svg_frames", os.path.join(tools, "svg-frames"))
inferno_frames = load("inferno_frames", os.path.join(tools, "inferno-frames"))
TOLERANCE = 0.1  # px, for x and width
cases = inferno_frames.read_cases(data)
try:
    renames = inferno_frames.read_renames(data)
except (OSError, ValueError) as e:
    print(f"FAIL differences.tsv: {e}")
    sys.exit(1)

used = set()
bad_cases = 0
for case in cases:
    name, opts, inputs, expected, _test = case
    used.update(inputs.split())
    label = f"{name} ({inputs}{'' if opts == '-' else ' ' + opts})"
    problems = []
    svg = os.path.join(got_dir, name + ".svg")
    if expected == "sum":
        # no frame table (inferno draws this input only with an option kprof
        # lacks): the root must hold every valid line's count, full width
        total = 0
        for f in inputs.split():
            for line in open(os.path.join(data, "input", f), encoding="utf-8"):
                m = re.search(r"\s(\d+)$", line.rstrip("\n"))
                total += int(m.group(1)) if m and not line.lstrip().startswith("#") else 0
        roots = [r for r in svg_frames.frames(svg) if r[0] == "all"] if os.path.exists(svg) else []
        if [list(r[1:3] + r[4:]) for r in roots] != [[str(total), "10.0", "1180.0"]]:
            problems.append(f"the root should be all {total} samples, x=10.0, width=1180.0: kprof draws {roots}")
        for p in problems:
            print(f"FAIL {label}: {p}")
        bad_cases += bool(problems)
        continue
    table = os.path.join(data, "svg-frames", name + ".tsv")
    want = [l.rstrip("\n").split("\t") for l in open(table, encoding="utf-8")]
    # the table is what the converter makes of its source
    try:
        made = inferno_frames.case_rows(data, case, renames)
    except (OSError, ValueError) as e:
        made = None
        problems.append(f"cannot read {expected}: {e}")
    if made is not None and sorted(want) != made:
        problems.append(f"svg-frames/{name}.tsv is not what tests/tools/inferno-frames makes of {expected} (run regenerate)")
    if not os.path.exists(svg):
        bad_cases += 1  # kprof failed: reported above
        continue
    try:
        got = [list(r) for r in svg_frames.frames(svg)]
    except Exception as e:
        print(f"FAIL {label}: cannot read kprof's SVG: {e}")
        bad_cases += 1
        continue
    # frames are matched by name and y, then in x order; a partial source
    # ("part:") holds some frames only: kprof may draw more
    partial = expected.startswith("part:")
    groups = collections.defaultdict(lambda: ([], []))
    for r in want:
        groups[(r[0], r[3])][0].append(r)
    for r in got:
        groups[(r[0], r[3])][1].append(r)
    for (fname, y), (w_rows, g_rows) in sorted(groups.items()):
        w_rows.sort(key=lambda r: float(r[2]))
        g_rows.sort(key=lambda r: float(r[2]))
        if partial:  # pair each expected frame with kprof's frame at its x
            pairs, left = [], list(g_rows)
            for w in w_rows:
                near = [g for g in left if abs(float(g[2]) - float(w[2])) <= TOLERANCE]
                if near:
                    left.remove(near[0])
                    pairs.append((w, near[0]))
                else:
                    problems.append(f"frame {fname!r} at y={y} x={w[2]} ({w[1]} samples) is missing")
            extra = []
        else:
            pairs = list(zip(w_rows, g_rows))
            for w in w_rows[len(g_rows):]:
                problems.append(f"frame {fname!r} at y={y} x={w[2]} ({w[1]} samples) is missing")
            extra = g_rows[len(w_rows):]
        for w, g in pairs:
            if w[1] != g[1] or abs(float(w[2]) - float(g[2])) > TOLERANCE or abs(float(w[4]) - float(g[4])) > TOLERANCE:
                problems.append(f"frame {fname!r} at y={y}: kprof draws samples={g[1]} x={g[2]} width={g[4]}, "
                                f"expected samples={w[1]} x={w[2]} width={w[4]}")
        for g in extra:
            problems.append(f"frame {fname!r} at y={y} x={g[2]} ({g[1]} samples) is not expected")
    for p in problems[:20]:
        print(f"FAIL {label}: {p}")
    if len(problems) > 20:
        print(f"FAIL {label}: ... and {len(problems) - 20} more")
    bad_cases += bool(problems)

inputs_dir = os.path.join(data, "input")
present = {os.path.relpath(os.path.join(d, f), inputs_dir) for d, _, fs in os.walk(inputs_dir) for f in fs}
for f in sorted(present - used):
    print(f"FAIL input/{f} is in no case of cases.tsv")
    bad_cases += 1
print(f"{len(cases) - bad_cases} of {len(cases)} cases draw the expected frames")
sys.exit(1 if bad_cases else 0)
PY
[ "$fails" -eq 0 ]
