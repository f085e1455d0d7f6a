# kprof symbolize: every address of the inline workload's two callers is
# named as `addr2line -f -i` names it (function, then inlined callees),
# and with --lines each frame has the file:line addr2line gives it, in
# each state of the build's index (no cache, first run, indexing run,
# later runs: the same output); bad input fails with a line naming it and
# leaves no output file.
. "$(dirname "$0")/lib.bash"

command -v addr2line >/dev/null || skip "addr2line (binutils) is not installed"
bin=$KP_WORKLOADS/inline_fp
bid=$(LC_ALL=C readelf -n "$bin" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
# every byte of the functions that hold inlined code
LC_ALL=C nm -S "$bin" | python3 -c '
import sys
for line in sys.stdin:
    p = line.split()
    if len(p) == 4 and p[3] in ("inl_caller_kprof", "inl_single_caller_kprof"):
        s, n = int(p[0], 16), int(p[1], 16)
        for a in range(s, s + n): print("%x" % a)' >"$T/addrs"
n=$(wc -l <"$T/addrs")
check "the workload's callers have code ($n addresses)" [ "$n" -gt 20 ]

# addr2line -a -f -i: "0xADDR", then name and file:line per frame,
# innermost first; as kprof prints it: outermost first, joined by ';'
addr2line -a -f -i -e "$bin" <"$T/addrs" | python3 -c '
import re, sys
out, addr, names = [], None, []
def flush():
    if addr is not None:
        out.append("%s %s" % (addr, ";".join(reversed(names))))
for line in sys.stdin.read().splitlines():
    if line.startswith("0x"):
        flush()
        addr, names = hex(int(line, 16)), []
    elif not re.search(r":([0-9]+|\?)( \(discriminator [0-9]+\))?$", line):
        names.append(line)
flush()
print("\n".join(out))' >"$T/expect"
check "addr2line named them" [ "$(wc -l <"$T/expect")" -eq "$n" ]
# the same with each frame's FILE:LINE, as kprof symbolize --lines prints
# them: "??" for an unknown file, 0 for an unknown line (addr2line's "?"),
# no discriminators
addr2line -a -f -i -e "$bin" <"$T/addrs" | python3 -c '
import re, sys
out, addr, frames, name = [], None, [], None
def flush():
    if addr is not None:
        out.append("%s %s" % (addr, ";".join(reversed(frames))))
for line in sys.stdin.read().splitlines():
    if line.startswith("0x") and name is None:
        flush()
        addr, frames = hex(int(line, 16)), []
    elif name is None:
        name = line
    else:
        pos = re.sub(r" \(discriminator [0-9]+\)$", "", line)
        f, _, l = pos.rpartition(":")
        frames.append("%s %s:%s" % (name, f if f else "??", "0" if l == "?" else l))
        name = None
flush()
print("\n".join(out))' >"$T/expect-lines"
check "addr2line gave lines" grep -q ' inl_caller_kprof /[^ ]*/inline.c:[1-9][0-9]*;inl_outer_kprof /[^ ]*/inline.c:[1-9][0-9]*;inl_inner_kprof /[^ ]*/inline.c:[1-9][0-9]*$' "$T/expect-lines"

run() { # name [options...]
	local name=$1
	shift
	"$KPROF" symbolize -e "$bin" "$@" <"$T/addrs" >"$T/$name.out" 2>"$T/$name.err"
}
run nocache --no-cache
check "--no-cache: as addr2line names them" cmp "$T/expect" "$T/nocache.out"
grep -c ';inl_' "$T/nocache.out" | sed 's/^/addresses with inline frames: /'
check "inline frames under their callers" grep -q ' inl_caller_kprof;inl_outer_kprof;inl_inner_kprof$' "$T/nocache.out"
check "--no-cache: no cache directory" test ! -e "$XDG_CACHE_HOME/kprof"
run nocache-lines --no-cache --lines
check "--no-cache --lines: each frame at addr2line's file:line" cmp "$T/expect-lines" "$T/nocache-lines.out"
run first
check "first run: as addr2line names them" cmp "$T/expect" "$T/first.out"
check "first run: the build is marked" test -e "$XDG_CACHE_HOME/kprof/symbols/$bid.seen"
check "first run: no index yet" test ! -e "$XDG_CACHE_HOME/kprof/symbols/$bid"
run second
check "second run (indexing): as addr2line names them" cmp "$T/expect" "$T/second.out"
check "second run: the index is saved" test -s "$XDG_CACHE_HOME/kprof/symbols/$bid"
check "the index is private (0600)" [ "$(stat -c %a "$XDG_CACHE_HOME/kprof/symbols/$bid")" = 600 ]
run later
check "later run (from the index): as addr2line names them" cmp "$T/expect" "$T/later.out"
# --lines in each state of another cache: the index made by a run without
# --lines and by one with it answer lines alike
for state in first second later; do
	XDG_CACHE_HOME=$T/lines-cache "$KPROF" symbolize --lines -e "$bin" <"$T/addrs" >"$T/lines-$state.out"
	check "--lines, $state run: each frame at addr2line's file:line" cmp "$T/expect-lines" "$T/lines-$state.out"
done
run later-lines --lines
check "--lines from an index saved without --lines: the same" cmp "$T/expect-lines" "$T/later-lines.out"
# the index alone names them: a copy of the binary without its symbols
# and DWARF (the same build-id) is named as well
strip --strip-all -o "$T/inline_stripped" "$bin"
"$KPROF" symbolize -e "$T/inline_stripped" <"$T/addrs" >"$T/stripped.out" 2>"$T/stripped.err"
check "a stripped copy of the build is named from the index" cmp "$T/expect" "$T/stripped.out"
"$KPROF" symbolize --lines -e "$T/inline_stripped" <"$T/addrs" >"$T/stripped-lines.out"
check "... and its lines too" cmp "$T/expect-lines" "$T/stripped-lines.out"
"$KPROF" symbolize --no-cache -e "$T/inline_stripped" <"$T/addrs" >"$T/stripped_nocache.out" 2>"$T/stripped_nocache.err"
check "... and without the index it is not" sh -c "! grep -q inl_ '$T/stripped_nocache.out'"
check "... with a note that it is stripped" grep -q 'stripped' "$T/stripped_nocache.err"
# DWARF shared between builds by dwz (as Debian's dbgsym packages ship it:
# common DIEs in a separate file named by .gnu_debugaltlink) names the
# same frames, with and without the index
if command -v dwz >/dev/null; then
	mkdir -p "$T/dwz"
	cp "$KP_WORKLOADS/inline_fp" "$T/dwz/fp"
	cp "$KP_WORKLOADS/inline_nofp" "$T/dwz/nofp"
	dwz -m "$T/dwz/common.debug" -M "$T/dwz/common.debug" "$T/dwz/fp" "$T/dwz/nofp" 2>"$T/dwz.err"
	check "dwz moved DIEs to a common file" sh -c "LC_ALL=C readelf -S '$T/dwz/fp' | grep -q gnu_debugaltlink"
	for state in nocache first second later; do
		opt=; [ $state = nocache ] && opt=--no-cache
		XDG_CACHE_HOME=$T/dwz-cache "$KPROF" symbolize $opt -e "$T/dwz/fp" <"$T/addrs" >"$T/dwz-$state.out"
		check "dwz, $state: as addr2line names the original" cmp "$T/expect" "$T/dwz-$state.out"
	done
	XDG_CACHE_HOME=$T/dwz-cache "$KPROF" symbolize --lines -e "$T/dwz/fp" <"$T/addrs" >"$T/dwz-lines.out"
	"$KPROF" symbolize --no-cache --lines -e "$T/dwz/fp" <"$T/addrs" >"$T/dwz-lines-nocache.out"
	check "dwz --lines, from the index and without: the original's lines" sh -c "cmp '$T/expect-lines' '$T/dwz-lines.out' && cmp '$T/expect-lines' '$T/dwz-lines-nocache.out'"
else
	fail "dwz is not installed (scripts/deps --test installs it)"
fi
# a separate debug file names the same addresses (its code has no file
# offsets: the addresses are looked up as addresses)
objcopy --only-keep-debug "$bin" "$T/inline.debug"
"$KPROF" symbolize --no-cache -e "$T/inline.debug" <"$T/addrs" >"$T/debugfile.out"
check "a separate debug file: as addr2line names them" cmp "$T/expect" "$T/debugfile.out"
"$KPROF" symbolize --no-cache --lines -e "$T/inline.debug" <"$T/addrs" >"$T/debugfile-lines.out"
check "... with their lines" cmp "$T/expect-lines" "$T/debugfile-lines.out"
# a relative path is the same file
(cd "$(dirname "$bin")" && "$KPROF" symbolize --no-cache -e "./$(basename "$bin")" <"$T/addrs") >"$T/relative.out"
check "a relative path to the file: as addr2line names them" cmp "$T/expect" "$T/relative.out"
run annotate --annotate
check "--annotate marks inline frames _[i]" grep -q ' inl_caller_kprof;inl_outer_kprof_\[i\];inl_inner_kprof_\[i\]$' "$T/annotate.out"
run noinline --no-inline
check "--no-inline: the functions only" sh -c "! grep -q ';' '$T/noinline.out' && grep -q ' inl_caller_kprof$' '$T/noinline.out'"
"$KPROF" symbolize -e "$bin" 0x0 ffffffffffff >"$T/outside.out"
check "addresses outside the file: [unknown: in FILE, outside every symbol]" \
	[ "$(grep -c ' \[unknown: in inline_fp, outside every symbol\]$' "$T/outside.out")" -eq 2 ]

# bad input: one line naming it, non-zero exit, no output file
printf '%s\n' "$(head -1 "$T/addrs")" "not-an-address" | "$KPROF" symbolize -e "$bin" -o "$T/bad.out" 2>"$T/bad.err"
check "a bad line: non-zero exit" [ $? -ne 0 ]
check "a bad line: the message names stdin:2" grep -q '^kprof: stdin:2: not a hex address' "$T/bad.err"
check "a bad line: one line of error" [ "$(wc -l <"$T/bad.err")" -eq 1 ]
check "a bad line: no output file" test ! -e "$T/bad.out"
"$KPROF" symbolize -e /etc/hostname 0x10 -o "$T/notelf.out" 2>"$T/notelf.err"
check "not an ELF file: non-zero exit" [ $? -ne 0 ]
check "not an ELF file: said" grep -q '/etc/hostname: not an ELF file' "$T/notelf.err"
check "not an ELF file: no output file" test ! -e "$T/notelf.out"
"$KPROF" symbolize -e "$T/missing" 0x10 2>"$T/missing.err"
check "a missing file: non-zero exit" [ $? -ne 0 ]
check "a missing file: said" grep -q "$T/missing: No such file" "$T/missing.err"
"$KPROF" symbolize 0x10 2>"$T/noexe.err"
check "no -e: exit status 2" [ $? -eq 2 ]
# a cache that cannot be made (XDG_CACHE_HOME is a file) only costs speed
touch "$T/not-a-dir"
XDG_CACHE_HOME=$T/not-a-dir "$KPROF" symbolize -e "$bin" <"$T/addrs" >"$T/nodir.out" 2>"$T/nodir.err"
check "an unusable cache directory: still as addr2line names them" cmp "$T/expect" "$T/nodir.out"
check "an unusable cache directory: nothing said" test ! -s "$T/nodir.err"
# a damaged index is ignored (the build is read again) and replaced
printf 'garbage' >"$XDG_CACHE_HOME/kprof/symbols/$bid"
run damaged
check "a damaged index: still as addr2line names them" cmp "$T/expect" "$T/damaged.out"
finish
