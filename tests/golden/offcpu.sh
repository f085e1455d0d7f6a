#!/usr/bin/env bash
# Off-CPU time in kprof's outputs (profile/wait.h's marker frames):
#  - kprof flamegraph of folded text with marker frames: each frame's
#    title says its off-CPU share as the stacks give it ("; 56% off-CPU",
#    ">99%", "<1%"; nothing for a frame without any), and the frames more
#    than half off-CPU, and only those, are in the io palette's blues (the
#    SVG parsed; the expected shares computed from the folded lines);
#  - the markers pass through folded text (report -f folded gives the
#    lines back) and kprof report -f svg colours them as flamegraph does;
#  - the profiles tests/unit/test_offcpu.c writes (tests/fixtures/offcpu):
#    microseconds in folded text, the SVG ("us") and the top table, every
#    value by --value, a value a file lacks named with those it has, diff's
#    default value the first and sides of other first values refused, all
#    value types in pprof (go tool pprof, when go is installed).
set -u
: "${KPROF:?}" "${KP_TESTS:?}" "${KP_TMP:?}"
T=$KP_TMP/offcpu
fx=$KP_TESTS/fixtures/offcpu
rm -rf "$T" && mkdir -p "$T/home"
fails=0
check() {
	local what=$1
	shift
	"$@" || {
		echo "FAIL: $what"
		fails=$((fails + 1))
	}
}

# a wall-clock profile's stacks, sorted as kprof writes them: serve is
# 5+40+30+15 = 90, 50 of them off CPU; a: 999 of 1000 off; b: 1 of 1000
cat >"$T/wall.folded" <<'EOF'
a;[off-cpu: sleeping] 999
a;x 1
b;[off-cpu: other] 1
b;y 999
server;main;idle_loop 10
server;main;serve;handle;[off-cpu: preempted] 5
server;main;serve;handle;compute 40
server;main;serve;read_request;read;entry_SYSCALL_64_[k];schedule_[k];[off-cpu: sleeping] 30
server;main;serve;write_log;fsync;io_schedule_[k];[off-cpu: uninterruptible] 15
EOF
"$KPROF" flamegraph -o "$T/fg.svg" "$T/wall.folded" 2>"$T/err"
check "kprof flamegraph: $(cat "$T/err")" [ $? -eq 0 ]
"$KPROF" report -f svg -o "$T/report.svg" "$T/wall.folded" 2>"$T/err"
check "kprof report -f svg: $(cat "$T/err")" [ $? -eq 0 ]
"$KPROF" report -f folded --annotate "$T/wall.folded" >"$T/back.folded" 2>"$T/err"
check "report -f folded keeps the marker frames: $(diff "$T/wall.folded" "$T/back.folded" | head -5)" \
	cmp -s "$T/wall.folded" "$T/back.folded"

python3 - "$T/wall.folded" "$T/fg.svg" "$T/report.svg" <<'PY' || fails=$((fails + 1))
import re, sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
folded, svgs = sys.argv[1], sys.argv[2:]

# the tree of the stacks: (depth, path) -> [total, off-CPU], depth 0 "all"
nodes = {}
for line in open(folded, encoding="utf-8"):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    off = re.fullmatch(r"\[off-cpu: [^]]+\]", frames[-1]) is not None
    for d in range(len(frames) + 1):
        n = nodes.setdefault(tuple(frames[:d]), [0, 0])
        n[0] += int(count)
        n[1] += int(count) if off else 0

def note(total, off):
    if not off:
        return None
    pct = 100 * off / total
    if off < total and pct >= 99.5:
        return ">99"
    if pct < 0.5:
        return "<1"
    return "%.0f" % pct

TITLE = re.compile(r"^(.*) \(([\d,]+) samples, [\d.]+%(?:; (<1|>99|\d+)% off-CPU)?\)$")
bad = 0
fills = {}
for svg in svgs:
    root = ET.parse(svg).getroot()
    frames = root.find(f".//{NS}g[@id='frames']")
    ys = sorted({float(g.find(f"{NS}rect").get("y")) for g in frames}, reverse=True)
    seen = 0
    for g in frames:
        title, rect = g.find(f"{NS}title").text, g.find(f"{NS}rect")
        depth = ys.index(float(rect.get("y")))
        m = TITLE.match(title)
        if not m:
            print(f"FAIL {svg}: title {title!r}")
            bad += 1
            continue
        name, count, pct = m.group(1), int(m.group(2).replace(",", "")), m.group(3)
        # the node of that name at that depth with that count
        cand = [(p, v) for p, v in nodes.items()
                if len(p) == depth and (depth == 0 or re.sub(r"_\[k\]$", "", p[-1]) == name)
                and v[0] == count]
        if len(cand) != 1:
            print(f"FAIL {svg}: frame {title!r} at depth {depth}: {len(cand)} nodes")
            bad += 1
            continue
        (path, (total, off)), = cand
        seen += 1
        if pct != note(total, off):
            print(f"FAIL {svg}: {title!r}: off-CPU {off} of {total}, expected {note(total, off)}")
            bad += 1
        fill = rect.get("fill")
        r, gr, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
        io = r == gr and 80 <= r < 140 and 190 <= b < 245
        if io != (2 * off > total):
            print(f"FAIL {svg}: {title!r} ({off} of {total} off-CPU) filled {fill}")
            bad += 1
        fills.setdefault(path, set()).add(fill)
    if seen != len(nodes):
        print(f"FAIL {svg}: {seen} frames checked of {len(nodes)}")
        bad += 1
# kprof report draws the folded file as kprof flamegraph does
for path, f in fills.items():
    if len(f) != 1:
        print(f"FAIL: {path[-1:]} filled {sorted(f)} by flamegraph and report")
        bad += 1
sys.exit(1 if bad else 0)
PY

# the recorded profiles: time in microseconds
"$KPROF" report -f top "$fx/offcpu.kprof" >"$T/top" 2>"$T/err"
check "report -f top of an off-CPU profile: $(head -4 "$T/top") $(cat "$T/err")" \
	grep -q '^50002 us of off-cpu in 4 distinct stacks, 100.00% of it off-CPU\.$' "$T/top"
check "report -f top: the columns say microseconds" grep -q '^    share    off-cpu (us)  function$' "$T/top"
# a wait's self time is in the function that waited, not in its kind's
# marker (the four kinds alone made the self table)
check "report -f top: the self table's first row is the function that waited, read" \
	sh -c "sed -n '/by self share/,/^\$/p' '$T/top' | sed -n 3p | grep -q ' read\$'"
check "report -f top: no marker among the self rows" \
	sh -c "! sed -n '/by self share/,/^\$/p' '$T/top' | grep -q 'off-cpu: '"
check "report -f top: the markers in the total table" \
	sh -c "sed -n '/by total share/,\$p' '$T/top' | grep -q '\[off-cpu: sleeping\]'"
# the SVG's default title says what was measured; a --title wins
title() { "$KPROF" report -f svg "$@" | grep -o '<text id="title"[^>]*>[^<]*<' | sed 's/.*>//; s/<$//'; }
check "off-CPU SVG: titled Off-CPU Time Flame Graph ($(title "$fx/offcpu.kprof"))" \
	[ "$(title "$fx/offcpu.kprof")" = "Off-CPU Time Flame Graph" ]
check "wall SVG: titled Wall-Clock Time Flame Graph ($(title "$fx/wall.kprof"))" \
	[ "$(title "$fx/wall.kprof")" = "Wall-Clock Time Flame Graph" ]
check "wall SVG --value cpu: a Flame Graph of CPU time" [ "$(title --value cpu "$fx/wall.kprof")" = "Flame Graph" ]
check "off-CPU SVG --title: the user's title" [ "$(title --title Mine "$fx/offcpu.kprof")" = "Mine" ]
"$KPROF" report -f folded "$fx/offcpu.kprof" >"$T/off.folded"
check "report -f folded: off-cpu in microseconds" \
	grep -qx 'server;main;serve;handle;\[off-cpu: preempted\] 5001' "$T/off.folded"
"$KPROF" report -f folded --value samples "$fx/offcpu.kprof" >"$T/off-samples.folded"
check "report --value samples: counts" \
	grep -qx 'server;main;serve;handle;\[off-cpu: preempted\] 7' "$T/off-samples.folded"
for v in wall:10000 cpu:10000 off-cpu:; do
	"$KPROF" report -f folded --value "${v%%:*}" "$fx/wall.kprof" >"$T/v.folded" 2>"$T/err"
	got=$(grep '^server;main;idle_loop ' "$T/v.folded" | cut -d' ' -f2)
	check "report --value ${v%%:*} of a wall profile: idle_loop '$got' us, expected '${v#*:}' $(cat "$T/err")" \
		[ "$got" = "${v#*:}" ]
done
"$KPROF" report --value wall "$fx/offcpu.kprof" >/dev/null 2>"$T/err"
rc=$?
check "a value the file lacks: exit 1 ($rc), the values it has: $(cat "$T/err")" \
	[ $rc -eq 1 -a "$(cat "$T/err")" = "kprof: report: $fx/offcpu.kprof has no value 'wall' (it has: off-cpu, samples)" ]
"$KPROF" report -f svg "$fx/wall.kprof" >"$T/wall.svg"
check "report -f svg: the count is us" grep -q 'countname: "us"}' "$T/wall.svg"
check "report -f svg: serve's title" grep -q '<title>serve (90,000 us, 90.00%; 56% off-CPU)</title>' "$T/wall.svg"

# diff: each profile's first value, unless told
"$KPROF" diff "$fx/wall.kprof" "$fx/wall.kprof" >"$T/diff.txt" 2>"$T/err"
check "diff of wall profiles: shares of wall: $(head -3 "$T/diff.txt") $(cat "$T/err")" grep -q "Shares of wall" "$T/diff.txt"
"$KPROF" diff -f svg "$fx/wall.kprof" "$fx/wall.kprof" >"$T/diff.svg" 2>/dev/null
check "diff -f svg of wall profiles: the count is us" grep -q 'countname: "us"}' "$T/diff.svg"
"$KPROF" diff "$T/wall.folded" "$fx/offcpu.kprof" >/dev/null 2>"$T/err"
rc=$?
check "diff of samples against off-cpu: exit 1 ($rc), --value named: $(cat "$T/err")" \
	[ $rc -eq 1 -a -n "$(grep -e "--value" "$T/err")" ]
"$KPROF" diff --value off-cpu "$fx/wall.kprof" "$fx/offcpu.kprof" >"$T/diff2.txt" 2>"$T/err"
check "diff --value off-cpu of a wall and an off-CPU profile: $(cat "$T/err")" grep -q "Shares of off-cpu" "$T/diff2.txt"

# pprof: every value type, the first the default
if command -v go >/dev/null; then
	export HOME=$T/home GOCACHE=$T/home/cache PPROF_TMPDIR=$T/home PPROF_BINARY_PATH=$T/home GOFLAGS=
	"$KPROF" report -o "$T/wall.pb.gz" "$fx/wall.kprof"
	go tool pprof -raw "$T/wall.pb.gz" >"$T/raw" 2>&1
	check "pprof: the four value types, wall the default: $(grep -m1 nanoseconds "$T/raw")" \
		grep -qx 'wall/nanoseconds\[dflt\] samples/count cpu/nanoseconds off-cpu/nanoseconds' "$T/raw"
	go tool pprof -top -sample_index=off-cpu "$T/wall.pb.gz" >"$T/ptop" 2>&1
	check "pprof -sample_index=off-cpu: the marker frame first" \
		grep -Eq '^ +30ms 60\.00% 60\.00% +30ms 60\.00%  \[off-cpu: sleeping\]$' "$T/ptop"
else
	echo "note: go not installed: pprof not read back"
fi
[ $fails -eq 0 ] && echo "off-CPU outputs: all checks passed"
[ $fails -eq 0 ]
