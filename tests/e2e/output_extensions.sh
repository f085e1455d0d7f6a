# -o's extension chooses the format: an extension kprof does not write is a
# usage error before anything is sampled (not an SVG in x.png), a name
# without one keeps the default, -f writes any name; .zst after folded and
# speedscope writes them zstd-compressed, read back by kprof report.
. "$(dirname "$0")/lib.bash"

printf 'main;other 3\nmain;work;leaf 5\n' >"$T/in.folded"

# a recording: refused at once, before the command runs
timeout 20 "$KPROF" -F 99 -o "$T/x.png" -- sh -c "touch '$T/ran'" 2>"$T/err"
check "-o x.png: usage error (exit $?)" [ $? -eq 2 ]
check "-o x.png: says the extension is unknown ($(head -1 "$T/err"))" \
	grep -q "^kprof: -o $T/x.png: unknown extension" "$T/err"
check "-o x.png: lists the formats and their extensions" \
	sh -c "grep -q 'svg .*(-o .svg)' '$T/err' && grep -q 'folded .*\.folded\.zst' '$T/err'"
check "-o x.png: the command did not run" [ ! -e "$T/ran" ]
check "-o x.png: no file" [ ! -e "$T/x.png" ]
"$KPROF" report "$T/in.folded" -o "$T/y.kprof.zst" 2>"$T/err"
check "report -o y.kprof.zst: usage error (exit $?)" [ $? -eq 2 ]
check "report -o y.kprof.zst: no file" [ ! -e "$T/y.kprof.zst" ]

# -f writes any name; a name without an extension is the default, an SVG
"$KPROF" report -f folded "$T/in.folded" -o "$T/f.png" 2>"$T/err"
check "-f folded -o f.png: written (exit $?)" [ $? -eq 0 ]
check "-f folded -o f.png: folded text" cmp -s "$T/f.png" "$T/in.folded"
"$KPROF" report "$T/in.folded" -o "$T/plain" 2>"$T/err"
check "-o plain (no extension): written (exit $?)" [ $? -eq 0 ]
check "-o plain: an SVG" grep -q '<svg' "$T/plain"

# .folded.zst: zstd, the same stacks, read back by kprof report
"$KPROF" report "$T/in.folded" -o "$T/c.folded.zst" 2>"$T/err"
check "-o c.folded.zst: written (exit $?)" [ $? -eq 0 ]
check "-o c.folded.zst: zstd-compressed" sh -c "head -c 4 '$T/c.folded.zst' | od -An -tx1 | grep -q '28 b5 2f fd'"
"$KPROF" report -f folded "$T/c.folded.zst" -o "$T/back.folded" 2>"$T/err"
check "report reads c.folded.zst back: the same stacks" cmp -s "$T/back.folded" "$T/in.folded"
if command -v zstd >/dev/null; then
	check "zstd -d c.folded.zst: the same stacks" sh -c "zstd -dc '$T/c.folded.zst' | cmp -s - '$T/in.folded'"
fi
"$KPROF" report "$T/in.folded" -o "$T/s.speedscope.json" -o "$T/s.speedscope.json.zst" 2>"$T/err"
check "-o s.speedscope.json.zst: written (exit $?)" [ $? -eq 0 ]
if command -v zstd >/dev/null; then
	check "s.speedscope.json.zst: the speedscope JSON, compressed" \
		sh -c "zstd -dc '$T/s.speedscope.json.zst' | cmp -s - '$T/s.speedscope.json'"
fi
# a recording's .folded.zst
"$KPROF" -F 199 -o "$T/r.folded.zst" -- "$KP_WORKLOADS/spin_fp" 0.3 2>"$T/err"
check "recording -o r.folded.zst: written (exit $?)" [ $? -eq 0 ]
"$KPROF" report -f folded "$T/r.folded.zst" -o "$T/r.folded" 2>>"$T/err"
check "recording's r.folded.zst: read back, spin_fp's stacks" grep -q '^spin_fp;' "$T/r.folded"
finish
