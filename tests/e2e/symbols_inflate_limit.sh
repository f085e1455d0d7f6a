# Compressed debug sections state what they inflate to, and a zstd or zlib
# stream can be made to claim anything (issue 16, item 3): a 150 KB
# program whose .debug_info is zstd-compressed zeros claiming 4 GiB cost
# `kprof symbolize` 68 s and 4.1 GB, and every whole-machine run of root's
# as much while another user ran it. Now what an object may inflate is
# limited (symbolize/debug_image.h: 32 times the size of its files, at
# least 16 MiB, at most 1 GiB; 4 GiB a run): over it, nothing is inflated,
# the code is named from the symbol table, and a note says so. Checked for
# the file's own DWARF (zstd, gABI), the dwz file its DWARF refers to
# (zlib; libdw 0.188 opened and inflated it on its own) and MiniDebugInfo
# (.gnu_debugdata, xz; libdwfl inflated it whole), each in `kprof
# symbolize` and a recording, in bounded time and memory.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

command -v objcopy >/dev/null || skip "needs objcopy"
[ -x /usr/bin/time ] || skip "needs /usr/bin/time"
py=/usr/bin/python3
[ -x $py ] || py=python3

hot_program_source >"$T/prog.c"
# it spins for 0.3 s of CPU time, not of the clock: some 300 samples at
# 999 Hz however loaded the machine (52 when it ran beside a loaded suite)
"$CC" -O1 -g -fno-omit-frame-pointer -DHOT=kpcap_hot -DSPIN_CLOCK=CLOCK_PROCESS_CPUTIME_ID -o "$T/plain" "$T/prog.c" || {
	fail "build the program"
	finish
}
addr=$(printf '0x%x' "0x$(nm "$T/plain" | awk '$3 == "kpcap_hot" { print $1 }')")

# bomb IN OUT SECTION zstd|zlib SIZE: IN with SECTION replaced by a
# compressed (gABI Chdr) run of SIZE zero bytes, appended to the file.
# zstd: a frame of 128 KiB RLE blocks, made by hand (128 KB for 4 GiB);
# zlib: deflate at level 9 (about 1030 to 1).
bomb() {
	$py - "$@" <<'EOF'
import struct, sys, zlib
src, dst, want, kind, size = sys.argv[1:6]
size = int(size)
d = bytearray(open(src, 'rb').read())
shoff, = struct.unpack_from('<Q', d, 0x28)
se, sn, si = struct.unpack_from('<HHH', d, 0x3a)
stroff = struct.unpack_from('<IIQQQQIIQQ', d, shoff + si * se)[4]
if kind == 'zstd':
    data = bytearray(struct.pack('<IB', 0xFD2FB528, 0xE0) + struct.pack('<Q', size))
    left = size
    while left:
        n = min(left, 128 << 10)
        left -= n
        data += struct.pack('<I', (n << 3) | (1 << 1) | (left == 0))[:3] + b'\0'
    ctype = 2
else:
    c, chunk, data = zlib.compressobj(9), bytes(1 << 20), bytearray()
    for _ in range(size >> 20):
        data += c.compress(chunk)
    data += c.flush()
    ctype = 1
blob = struct.pack('<IIQQ', ctype, 0, size, 1) + data
for i in range(sn):
    at = shoff + i * se
    s = list(struct.unpack_from('<IIQQQQIIQQ', d, at))
    if d[stroff + s[0]:d.index(b'\0', stroff + s[0])].decode() == want:
        while len(d) % 8:
            d.append(0)
        s[4], s[5], s[8] = len(d), len(blob), 1
        s[2] |= 0x800  # SHF_COMPRESSED
        d += blob
        struct.pack_into('<IIQQQQIIQQ', d, at, *s)
        break
else:
    sys.exit('no section ' + want)
open(dst, 'wb').write(d)
EOF
}

# symbolize NAME FILE FUNCTION [STEP]: kprof symbolize names every STEP-th
# byte (every byte) of FUNCTION in FILE FUNCTION alone (no inline frame:
# no DWARF), says the debug sections were not inflated, in under 5 s and
# 80 MB (ASan's own memory included: about 30 MB; the 4 GiB claim took
# 4.1 GB before).
symbolize() {
	local name=$1 file=$2 f=$3 step=${4:-1} e m n bad s size a
	read -r s size < <(nm -S "$file" | awk -v f="$f" '$4 == f { print $1, $2 }')
	for ((a = 0x${s:-0}; a < 0x${s:-0} + 0x${size:-0}; a += step)); do printf '0x%x\n' $a; done >"$T/$name.addrs"
	n=$(wc -l <"$T/$name.addrs")
	/usr/bin/time -f '%e %M' -o "$T/$name.time" "$KPROF" symbolize -e "$file" <"$T/$name.addrs" >"$T/$name.out" 2>"$T/$name.err"
	read -r e m <"$T/$name.time"
	echo "$name: kprof symbolize of $n addresses took $e s, $m KB"
	bad=$(awk -v f="$f" '$2 != f || NF != 2' "$T/$name.out" | wc -l)
	check "$name: $n addresses named $f alone ($bad otherwise)" [ "$n" -gt 0 ] && [ "$bad" -eq 0 ] &&
		[ "$(wc -l <"$T/$name.out")" -eq "$n" ]
	check "$name: the note says the sections were not inflated" \
		grep -q "the compressed debug sections of $file (.* MiB stated, .* MiB its limit) were not inflated" "$T/$name.err"
	check "$name: in under 5 s ($e)" awk -v e="$e" 'BEGIN { exit !(e < 5) }'
	check "$name: in under 80 MB ($m KB)" [ "$m" -lt 80000 ]
}

# 1. The program's own .debug_info: zstd zeros claiming 4 GiB, in a file
# of 150 KB (its limit: the floor, 16 MiB)
bomb "$T/plain" "$T/kpcap_zstd" .debug_info zstd $((4 << 30)) && chmod +x "$T/kpcap_zstd" ||
	fail "make the zstd bomb"
ls -l "$T/kpcap_zstd" | awk '{ print "the zstd bomb: " $5 " bytes" }'
symbolize zstd "$T/kpcap_zstd" kpcap_hot
cat "$T/zstd.err"

# ... and a recording of it: its frames named, the note in the summary
/usr/bin/time -f '%e %M' -o "$T/rec.time" "$KPROF" -F 999 -f folded -o "$T/rec.folded" -- "$T/kpcap_zstd" 0.3 2>"$T/rec.err"
check "a recording of it: exit status 0" [ $? -eq 0 ]
read -r e m <"$T/rec.time"
echo "the recording took $e s, $m KB"
n=$(count_matching "$T/rec.folded" '^kpcap_zstd;(.*;)?main;kpcap_hot$')
check "its samples are named main;kpcap_hot ($n of $(total_count "$T/rec.folded"))" [ "$n" -gt 50 ]
check "the summary has the note" grep -q "compressed debug sections of .*kpcap_zstd" "$T/rec.err"
check "in under 200 MB ($m KB)" [ "$m" -lt 200000 ]

# 2. The dwz file: two programs' common DIEs moved by dwz to a file their
# .gnu_debugaltlink names, whose .debug_info is then zlib zeros claiming
# 128 MiB (its DIEs, the inlined functions' names, are what lookups read)
if command -v dwz >/dev/null; then
	mkdir -p "$T/dwz"
	cp "$KP_WORKLOADS/inline_fp" "$T/dwz/fp"
	cp "$KP_WORKLOADS/inline_nofp" "$T/dwz/nofp"
	dwz -m "$T/dwz/common.debug" -M "$T/dwz/common.debug" "$T/dwz/fp" "$T/dwz/nofp" 2>/dev/null
	if LC_ALL=C readelf -S "$T/dwz/fp" | grep -q gnu_debugaltlink; then
		bomb "$T/dwz/common.debug" "$T/dwz/common.bomb" .debug_info zlib $((128 << 20)) &&
			mv "$T/dwz/common.bomb" "$T/dwz/common.debug" || fail "make the zlib bomb"
		ls -l "$T/dwz/common.debug" | awk '{ print "the dwz bomb: " $5 " bytes" }'
		# every 4th byte: some are inlined code whose names are there
		symbolize dwz "$T/dwz/fp" inl_caller_kprof 4
	else
		fail "dwz moved DIEs to a common file"
	fi
else
	echo "no dwz: the dwz file's case is not checked"
fi

# 3. MiniDebugInfo: a stripped program whose .gnu_debugdata is xz zeros
# of 96 MiB (libdwfl reads it for a file without .symtab, whole)
strip -o "$T/stripped" "$T/plain" &&
	$py -c 'import lzma, sys; sys.stdout.buffer.write(lzma.compress(bytes(96 << 20), preset=0))' >"$T/zeros.xz" &&
	objcopy --add-section .gnu_debugdata="$T/zeros.xz" "$T/stripped" "$T/kpcap_xz" &&
	chmod +x "$T/kpcap_xz" || fail "make the xz bomb"
ls -l "$T/kpcap_xz" | awk '{ print "the xz bomb: " $5 " bytes" }'
out=$(/usr/bin/time -f '%e %M' -o "$T/xz.time" "$KPROF" symbolize -e "$T/kpcap_xz" "$addr" 2>"$T/xz.err")
read -r e m <"$T/xz.time"
echo "xz: kprof symbolize took $e s, $m KB"
# the section hidden, nothing names it but its unwind table: where it starts
check "xz: a static function of a stripped file is named by its start only ($out)" \
	[ "$out" = "$addr kpcap_xz+$addr" ]
check "xz: the note says the section was not inflated" \
	grep -q "the compressed debug sections of $T/kpcap_xz (96 MiB stated, 16 MiB its limit) were not inflated" "$T/xz.err"
check "xz: in under 5 s ($e)" awk -v e="$e" 'BEGIN { exit !(e < 5) }'
check "xz: in under 80 MB ($m KB)" [ "$m" -lt 80000 ]
# an honest one is still read
objcopy --only-keep-debug "$T/plain" "$T/mini" && objcopy --strip-debug "$T/mini" &&
	$py -c 'import lzma, sys; sys.stdout.buffer.write(lzma.compress(open(sys.argv[1], "rb").read()))' "$T/mini" >"$T/mini.xz" &&
	objcopy --add-section .gnu_debugdata="$T/mini.xz" "$T/stripped" "$T/kpcap_mini" || fail "make MiniDebugInfo"
out=$("$KPROF" symbolize -e "$T/kpcap_mini" "$addr" 2>"$T/mini.err")
check "an honest MiniDebugInfo names the code ($out)" [ "$out" = "$addr kpcap_hot" ]
grep -q "were not inflated" "$T/mini.err"
check "without the note" [ $? -ne 0 ]
finish
