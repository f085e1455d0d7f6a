# .kprof recordings through `kprof report`: folded inputs (every other one
# of the FlameGraph collapsed files, a real recording) -> -f kprof -> -f folded
# and -f svg give the same bytes as from the input itself; the recorder's
# own .kprof (a command's; the whole machine's is e2e/record_system's)
# gives the folded text, SVG and top table the recording wrote, byte for
# byte; -o X.kprof chooses the
# format; stdin works; damaged recordings (truncated, another major
# version, a flipped bit, random bytes) exit 1 with one line naming the
# file and leave no output file.
. "$(dirname "$0")/lib.bash"
: "${KP_TESTS:?}"

# FILE read as folded text and as the recording made of it render the same
# bytes: folded (plain and annotated) and SVG. Four kprof runs a file: the
# recording, folded text and SVG of one reading (repeated -o).
same_reports() { # input
	local in=$1 ext
	"$KPROF" report -o "$T/c.kprof" -o "$T/a.folded" -o "$T/a.svg" "$in" 2>"$T/err.a" &&
		"$KPROF" report --annotate -f folded -o "$T/a.ann" "$in" 2>>"$T/err.a" &&
		"$KPROF" report -o "$T/b.folded" -o "$T/b.svg" "$T/c.kprof" 2>"$T/err.b" &&
		"$KPROF" report --annotate -f folded -o "$T/b.ann" "$T/c.kprof" 2>>"$T/err.b" || return 1
	for ext in folded ann svg; do
		cmp -s "$T/a.$ext" "$T/b.$ext" || { echo "  $ext differs for $in"; return 1; }
	done
}

# every other one of the collapsed files (the golden speedscope and pprof
# tests take every file through the profile model too); a hundred short
# runs, without ASan's leak check at each exit, as in the golden tests
# (tests/CMakeLists.txt): the recordings below keep it
n=0 bad=0 k=0
asan=${ASAN_OPTIONS-}
export ASAN_OPTIONS=${asan:+$asan:}detect_leaks=0
for f in "$KP_TESTS"/golden/data/collapsed/*.txt; do
	k=$((k + 1))
	[ $((k % 2)) -eq 1 ] || continue
	n=$((n + 1))
	same_reports "$f" || bad=$((bad + 1))
done
export ASAN_OPTIONS=$asan
check "$n FlameGraph collapsed files: folded -> .kprof -> folded/SVG unchanged ($bad differ)" \
	[ "$n" -ge 25 -a "$bad" -eq 0 ]

# the recorder's .kprof renders as the recording did, byte for byte: a
# command (with --tid roots: report takes them from the recording; the
# whole machine's: e2e/record_system)
mapfile -t o < <(record_outputs "$T/cmd")
"$KPROF" -F 499 --tid "${o[@]}" -- "$KP_WORKLOADS/spin_fp" 0.5 2 2>"$T/err"
check "recorded a command into four outputs" [ -s "$T/cmd.kprof" -a -s "$T/cmd.folded" ]
check "kprof -o X.kprof writes a recording" [ "$(head -c 5 "$T/cmd.kprof")" = KPROF ]
check "the command's .kprof: folded, SVG and top as recorded" same_as_recorded "$T/cmd"

# a real recording's folded stacks
"$KPROF" -F 499 -f folded -o "$T/rec.folded" -- "$KP_WORKLOADS/spin_fp" 1 2>/dev/null
check "recorded" [ -s "$T/rec.folded" ]
"$KPROF" report "$T/rec.folded" -o "$T/rec.kprof" 2>"$T/err"
check "-o X.kprof writes a recording" [ "$(head -c 5 "$T/rec.kprof")" = KPROF ]
check "recorded stacks: .kprof -> folded/SVG unchanged" same_reports "$T/rec.folded" "$T/rec.kprof"
"$KPROF" report -f folded - <"$T/rec.kprof" >"$T/stdin.folded" 2>"$T/err"
"$KPROF" report -f folded "$T/rec.folded" >"$T/direct.folded" 2>/dev/null
check "a recording on stdin" cmp -s "$T/stdin.folded" "$T/direct.folded"
"$KPROF" report -f kprof -o "$T/again.kprof" "$T/rec.kprof" 2>/dev/null
check ".kprof -> .kprof: the same bytes" cmp -s "$T/rec.kprof" "$T/again.kprof"
size_f=$(stat -c %s "$T/rec.folded") size_k=$(stat -c %s "$T/rec.kprof")
echo "folded: $size_f bytes, .kprof: $size_k bytes"

# damaged recordings: exit 1, one line naming the file, no output
refused() { # file expected-text
	rm -f "$T/out.svg"
	"$KPROF" report -o "$T/out.svg" "$1" >"$T/stdout" 2>"$T/err"
	local st=$?
	[ $st -eq 1 ] || { echo "  exit $st for $1"; return 1; }
	[ "$(wc -l <"$T/err")" -eq 1 ] || { echo "  stderr:"; cat "$T/err"; return 1; }
	grep -q "^kprof: $1: " "$T/err" && grep -qF "$2" "$T/err" ||
		{ echo "  stderr: $(cat "$T/err")"; return 1; }
	[ ! -e "$T/out.svg" ] && [ ! -s "$T/stdout" ]
}
size=$(stat -c %s "$T/rec.kprof")
head -c $((size - 10)) "$T/rec.kprof" >"$T/cut.kprof"
check "truncated: refused" refused "$T/cut.kprof" "truncated .kprof recording"
head -c 6 "$T/rec.kprof" >"$T/cut6.kprof"
check "truncated in the header: refused" refused "$T/cut6.kprof" \
	"truncated .kprof recording (in its header)"
{ printf 'KPROF\003\000\000'; tail -c +9 "$T/rec.kprof"; } >"$T/v3.kprof"
check "major version 3: refused" refused "$T/v3.kprof" \
	"kprof recording format 3.x; this kprof reads 1.x"
{ printf 'KPROF\001\007\000'; tail -c +9 "$T/rec.kprof"; } >"$T/v1.7.kprof"
"$KPROF" report -f folded "$T/v1.7.kprof" >"$T/v1.7.folded" 2>"$T/err"
check "minor version 1.7: read" cmp -s "$T/v1.7.folded" "$T/direct.folded"
python3 - "$T/rec.kprof" "$T/flip.kprof" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0x10
open(sys.argv[2], "wb").write(b)
EOF
check "a flipped bit: refused" refused "$T/flip.kprof" ".kprof recording"
"$KPROF" report -f pprof -o "$T/rec.pb.gz" "$T/rec.kprof" 2>/dev/null
check "a pprof file: refused" refused "$T/rec.pb.gz" "binary data"
python3 -c 'import random, sys; r = random.Random(11); sys.stdout.buffer.write(bytes(r.randrange(256) for _ in range(4096)))' >"$T/random.kprof"
check "random bytes: refused" refused "$T/random.kprof" ""
finish
