# kprof's private cache (util/cachefile.h, docs/symbolize.md) as a user
# meets it. (a) A cache directory that breaks the rule is not used and the
# run says so once: $XDG_CACHE_HOME/kprof or its symbols/ a symbolic link
# to elsewhere (nothing is written there), of mode 0777, or (as root)
# another user's; names are those of --no-cache. A link above it
# ($XDG_CACHE_HOME itself) is the user's choice and works. (b) A damaged
# index of a real build (the inline workload's): a bit flipped or a byte
# overwritten at every sixth byte of its header and at offsets spread through
# its tables, line table and strings (fixed seed) never changes a name or
# a source line: every address is named (--lines) as with --no-cache, the
# run says so once, and the index is rebuilt (the same bytes as before the
# damage).
. "$(dirname "$0")/lib.bash"

bin=$KP_WORKLOADS/inline_fp
bid=$(LC_ALL=C readelf -n "$bin" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
[ -n "$bid" ] || { echo "SKIP: $bin has no build-id"; exit 77; }
# every byte of the functions that hold inlined code, and main
LC_ALL=C nm -S "$bin" | python3 -c '
import sys
for line in sys.stdin:
    p = line.split()
    if len(p) == 4 and p[3] in ("inl_caller_kprof", "inl_single_caller_kprof", "main"):
        s, n = int(p[0], 16), int(p[1], 16)
        for a in range(s, s + n): print("%x" % a)' >"$T/addrs"
check "the workload's functions have code ($(wc -l <"$T/addrs") addresses)" [ "$(wc -l <"$T/addrs")" -gt 50 ]
"$KPROF" symbolize --no-cache -e "$bin" <"$T/addrs" >"$T/expect" 2>"$T/expect.err"
check "--no-cache names inline frames" grep -q ';inl_outer_kprof;inl_inner_kprof$' "$T/expect"
"$KPROF" symbolize --no-cache --lines -e "$bin" <"$T/addrs" >"$T/expect-lines"
check "--no-cache --lines gives lines" grep -q ';inl_inner_kprof /.*/inline.c:[0-9]*$' "$T/expect-lines"

sym() { # name [options...]: kprof symbolize with XDG_CACHE_HOME=$xdg
	local name=$1
	shift
	XDG_CACHE_HOME=$xdg "$KPROF" symbolize -e "$bin" "$@" <"$T/addrs" >"$T/$name.out" 2>"$T/$name.err"
}
rec() { # name: a short recording with kernel frames (the kallsyms copy)
	XDG_CACHE_HOME=$xdg "$KPROF" -F 499 -f folded -o "$T/$1.folded" -- \
		"$KP_WORKLOADS/syscalls_fp" 0.3 2>"$T/$1.err"
}
said() { grep -c 'not using the cache in' "$1"; }

# (a) each case: three symbolize runs (the second would index the build),
# one recording (it would write the kallsyms copy)
refused() { # case what-is-said where-nothing-may-appear
	local c=$1 what=$2 target=$3
	for i in 1 2 3; do
		sym "$c-$i"
		check "$c, run $i: named as with --no-cache" cmp -s "$T/expect" "$T/$c-$i.out"
		check "$c, run $i: says once that the cache is not used" [ "$(said "$T/$c-$i.err")" = 1 ]
	done
	check "$c: ... because it $what" grep -q "it $what" "$T/$c-1.err"
	rec "$c-rec"
	check "$c, recording: exit status 0" [ $? -eq 0 ]
	check "$c, recording: says once that the cache is not used" [ "$(said "$T/$c-rec.err")" = 1 ]
	check "$c: nothing written in $target" [ -z "$(ls -A "$target")" ]
}

xdg=$T/link-kprof
mkdir -p "$xdg" "$T/elsewhere"
ln -s "$T/elsewhere" "$xdg/kprof"
refused "kprof -> elsewhere" "is a symbolic link" "$T/elsewhere"

xdg=$T/link-symbols
mkdir -p "$xdg/kprof" "$T/elsewhere2"
chmod 700 "$xdg/kprof"
ln -s "$T/elsewhere2" "$xdg/kprof/symbols"
refused "symbols -> elsewhere" "is a symbolic link" "$T/elsewhere2"
check "symbols -> elsewhere: the kallsyms copy is still kept in kprof/" \
	sh -c "ls '$xdg/kprof' | grep -q '^kallsyms-'"

xdg=$T/wide
mkdir -p "$xdg/kprof"
chmod 777 "$xdg/kprof"
refused "kprof mode 0777" "has mode 0777" "$xdg/kprof"

xdg=$T/wide-symbols
mkdir -p "$xdg/kprof/symbols"
chmod 700 "$xdg/kprof"
chmod 777 "$xdg/kprof/symbols"
refused "symbols mode 0777" "has mode 0777" "$xdg/kprof/symbols"

if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	xdg=$T/owned
	mkdir -p "$xdg/kprof"
	chmod 700 "$xdg/kprof"
	chown nobody "$xdg/kprof"
	refused "kprof owned by nobody" "is owned by uid $(id -u nobody)" "$xdg/kprof"
	xdg=$T/owned-symbols
	mkdir -p "$xdg/kprof/symbols"
	chmod 700 "$xdg/kprof" "$xdg/kprof/symbols"
	chown nobody "$xdg/kprof/symbols"
	refused "symbols owned by nobody" "is owned by uid $(id -u nobody)" "$xdg/kprof/symbols"
else
	echo "skip: the other-owner cases need root and a user nobody"
fi

# $XDG_CACHE_HOME itself a link: the user's choice, used
mkdir -p "$T/real-xdg"
ln -s "$T/real-xdg" "$T/xdg-link"
xdg=$T/xdg-link
sym link-1
sym link-2
check "XDG_CACHE_HOME a link: the index is written behind it" test -s "$T/real-xdg/kprof/symbols/$bid"
check "... with nothing said" [ "$(said "$T/link-2.err")" = 0 ]
check "... private: 0700" [ "$(stat -c %a "$T/real-xdg/kprof")" = 700 ]

# (b) a damaged index
xdg=$T/damage
sym mark
sym index
idx=$xdg/kprof/symbols/$bid
check "the second run indexed the build" test -s "$idx"
check "... named as with --no-cache" cmp -s "$T/expect" "$T/index.out"
sym from-index
check "a run from the index names as --no-cache does" cmp -s "$T/expect" "$T/from-index.out"
cp "$idx" "$T/pristine"
size=$(stat -c %s "$idx")
echo "the index: $size bytes"
# the damaged copies, made at once: every sixth byte of the header (31 of
# 184), then 24 offsets through the rest, xorshift with a
# fixed seed; one bit flipped ("flip") or another value written ("set") in
# turn (fuzz/symidx damages indexes at every byte, at length: this is what
# a user meets, at a cost the suite can pay twice)
mkdir -p "$T/damaged"
python3 - "$T/pristine" "$T/damaged" >"$T/offsets" <<'EOF'
import sys
good = open(sys.argv[1], "rb").read()
offs, x = [], 0x9E3779B97F4A7C15
for off in range(0, 184, 6):
    flip = off // 6 % 2
    offs.append((off, flip, 1 << (off // 6 % 8) if flip else (off * 37 + 11) % 256))
for k in range(24):
    x ^= (x << 13) & (2**64 - 1); x ^= x >> 7; x ^= (x << 17) & (2**64 - 1)
    offs.append((184 + x % (len(good) - 184), k % 2, 1 << ((x >> 32) % 8) if k % 2 else (x >> 40) % 256))
for n, (off, flip, val) in enumerate(offs):
    b = bytearray(good)
    b[off] = b[off] ^ val if flip else (val if b[off] != val else val ^ 0xff)
    open("%s/%d" % (sys.argv[2], n), "wb").write(b)
    print(n, off, "flip" if flip else "set", val)
EOF
n=0 renamed=0 unsaid=0 kept=0
# 55 short runs without ASan's leak check at each exit (as the golden
# tests, tests/CMakeLists.txt): fuzz/symidx reads damaged indexes with it
asan=${ASAN_OPTIONS-}
export ASAN_OPTIONS=${asan:+$asan:}detect_leaks=0
while read -r k off how val; do
	cp -f "$T/damaged/$k" "$idx"
	chmod 600 "$idx"
	sym damaged --lines
	n=$((n + 1))
	if ! cmp -s "$T/expect-lines" "$T/damaged.out"; then
		renamed=$((renamed + 1))
		[ $renamed -le 3 ] && { echo "damage at $off ($how $val) changed names or lines:"; diff "$T/expect-lines" "$T/damaged.out" | head -4; }
	fi
	# the version and byte-order fields (8-15) read as another format:
	# rebuilt without a word
	if [ "$off" -ge 8 ] && [ "$off" -lt 16 ]; then
		[ "$(grep -c 'was damaged' "$T/damaged.err")" = 0 ] || unsaid=$((unsaid + 1))
	else
		[ "$(grep -c 'was damaged' "$T/damaged.err")" = 1 ] || unsaid=$((unsaid + 1))
	fi
	cmp -s "$idx" "$T/pristine" || kept=$((kept + 1))
done <"$T/offsets"
export ASAN_OPTIONS=$asan
echo "$n damaged indexes: $renamed changed a name or a line, $unsaid not said once, $kept not rebuilt"
check "$n damaged indexes tried" [ "$n" -eq 55 ]
check "no damaged index changed a name or a line" [ "$renamed" -eq 0 ]
check "each damaged index said once" [ "$unsaid" -eq 0 ]
check "each damaged index rebuilt as it was" [ "$kept" -eq 0 ]
grep -m1 'was damaged' "$T/damaged.err"
sym after
check "the next run names from the rebuilt index, with nothing said" \
	sh -c "cmp -s '$T/expect' '$T/after.out' && ! grep -q 'was damaged' '$T/after.err'"
finish
