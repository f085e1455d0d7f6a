#!/usr/bin/env bash
# The layering is enforced: in a copy of the tree, includes planted in the
# wrong direction make scripts/check-layers fail naming each FILE:LINE and
# edge (and one closing a circle between two modules of a folder: the loop
# and its includes), and make the compiler refuse the one the include paths
# can see (a "../" include compiles: that one only the check catches); a call into
# profiler/ declared by hand in a copy of kp_flamegraph's library makes
# check-layers --libraries fail naming the object and the symbol.
#   planted.sh FOLDER=LIB.a...    the built libraries, as CMake passes them
set -u
: "${KP_SRC:?}" "${KP_BUILD:?}" "${KP_TMP:?}" "${KP_CC:=cc}"
tmp=$KP_TMP/layers-planted
rm -rf "$tmp"
mkdir -p "$tmp"
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
tree=$tmp/tree
mkdir -p "$tree"
cp "$KP_SRC/layers.txt" "$tree/"
for folder in $(sed 's/#.*//; s/:.*//' "$KP_SRC/layers.txt"); do
	cp -r "$KP_SRC/$folder" "$tree/"
done
check=("$KP_SRC/scripts/check-layers" "$tree")

# the copy as it is passes
python3 "${check[@]}" >"$tmp/clean.out" 2>&1 || fail "the unchanged copy fails the check: $(cat "$tmp/clean.out")"

# plant LINE into FILE after its last #include; prints the line number
plant() { # file line
	local n
	n=$(grep -n '^#include' "$tree/$1" | tail -1 | cut -d: -f1)
	sed -i "${n}a $2" "$tree/$1"
	echo $((n + 1))
}
report=$(plant formats/top.c '#include "profiler/perf_record.h"')
svg=$(plant flamegraph/svg.c '#include "../profiler/perf_record.h"')
jit=$(plant symbolize/jit.c '#include <flamegraph/svg.h>')
hash=$(plant util/hash.c '#include "symbolize/symbolize.h"')
# above it in layers.txt, but not among what its line names
session=$(plant profiler/session.c '#include "formats/folded_write.h"')
# the circle issue 34 broke: the object cache using the symbolizer's
# header, whose .c uses the object cache
circle=$(plant symbolize/objcache.c '#include "symbolize/symbolize.h"')
python3 "${check[@]}" >"$tmp/planted.out" 2>&1
st=$?
cat "$tmp/planted.out"
[ "$st" -eq 1 ] || fail "check-layers exit status $st with planted includes, expected 1"
for want in \
	"formats/top.c:$report: #include \"profiler/perf_record.h\": forbidden edge formats -> profiler" \
	"flamegraph/svg.c:$svg: #include \"../profiler/perf_record.h\": forbidden edge flamegraph -> profiler" \
	"symbolize/jit.c:$jit: #include <flamegraph/svg.h>: forbidden edge symbolize -> flamegraph" \
	"util/hash.c:$hash: #include \"symbolize/symbolize.h\": forbidden edge util -> symbolize" \
	"profiler/session.c:$session: #include \"formats/folded_write.h\": forbidden edge profiler -> formats"; do
	grep -qF -- "$want" "$tmp/planted.out" || fail "not reported: $want"
done
[ "$(grep -c 'forbidden edge' "$tmp/planted.out")" -eq 5 ] || fail "expected exactly the 5 planted includes"
for want in \
	"include circle: symbolize/objcache -> symbolize/symbolize -> symbolize/objcache" \
	"  symbolize/objcache.c:$circle: #include \"symbolize/symbolize.h\"" \
	"  symbolize/symbolize.c:" \
	"check-layers: 1 include circle(s) between modules"; do
	grep -qF -- "$want" "$tmp/planted.out" || fail "not reported: $want"
done

# the compiler, with kp_formats' own flags, refuses the planted
# top.c and names it (and compiles the file as it was)
python3 - "$KP_BUILD/compile_commands.json" "$KP_SRC/formats/top.c" >"$tmp/cc.sh" <<'PY'
import json, shlex, sys
db, src = sys.argv[1:3]
for e in json.load(open(db)):
    if e["file"] == src:
        args = shlex.split(e["command"])
        i = args.index("-o")
        del args[i:i + 2]
        args = [a for a in args if a not in ("-c", src)]
        print("cd " + shlex.quote(e["directory"]) + " && " + " ".join(map(shlex.quote, args)) + ' -fsyntax-only "$1"')
        break
PY
if [ -s "$tmp/cc.sh" ]; then
	cp "$KP_SRC/formats/top.c" "$tmp/top-clean.c"
	bash "$tmp/cc.sh" "$tmp/top-clean.c" >"$tmp/cc-clean.err" 2>&1 ||
		fail "the unchanged top.c does not compile with kp_formats' flags: $(cat "$tmp/cc-clean.err")"
	bash "$tmp/cc.sh" "$tree/formats/top.c" >"$tmp/cc.err" 2>&1 && fail "the planted top.c compiled"
	cat "$tmp/cc.err"
	grep -q "formats/top.c:$report:.*profiler/perf_record.h" "$tmp/cc.err" ||
		fail "the compiler's error does not name formats/top.c:$report and profiler/perf_record.h"
else
	fail "no compile command for formats/top.c in $KP_BUILD/compile_commands.json"
fi

# a call declared by hand, with no include: the symbols' check
libs=("$@")
prof_lib='' fg_i=''
for i in "${!libs[@]}"; do
	case ${libs[$i]} in
	profiler=*) prof_lib=${libs[$i]#profiler=} ;;
	flamegraph=*) fg_i=$i ;;
	esac
done
if [ -n "$prof_lib" ] && [ -n "$fg_i" ]; then
	sym=$(nm -g --defined-only "$prof_lib" | awk '$2 == "T" && $3 ~ /^kp_/ { print $3; exit }')
	printf 'int %s(void); /* declared by hand */\nint kp_planted_call(void);\nint kp_planted_call(void) { return %s(); }\n' \
		"$sym" "$sym" >"$tmp/planted.c"
	cp "${libs[$fg_i]#flamegraph=}" "$tmp/libkp_flamegraph.a"
	if ! "$KP_CC" -c -o "$tmp/planted.o" "$tmp/planted.c" || ! ar rs "$tmp/libkp_flamegraph.a" "$tmp/planted.o" 2>/dev/null; then
		fail "cannot build the planted object"
	fi
	python3 "$KP_SRC/scripts/check-layers" --libraries "$tree" "${libs[@]}" >"$tmp/sym-clean.out" 2>&1 ||
		fail "the built libraries fail the symbols' check: $(cat "$tmp/sym-clean.out")"
	libs[fg_i]=flamegraph=$tmp/libkp_flamegraph.a
	python3 "$KP_SRC/scripts/check-layers" --libraries "$tree" "${libs[@]}" >"$tmp/sym.out" 2>&1
	st=$?
	cat "$tmp/sym.out"
	[ "$st" -eq 1 ] || fail "check-layers --libraries exit status $st with the planted call, expected 1"
	grep -qF "libkp_flamegraph.a(planted.o): $sym of profiler: forbidden edge flamegraph -> profiler" "$tmp/sym.out" ||
		fail "the planted call to $sym is not reported"
	[ "$(grep -c 'forbidden edge' "$tmp/sym.out")" -eq 1 ] || fail "expected exactly the planted call"
else
	fail "no profiler= and flamegraph= libraries given: $*"
fi

[ "$fails" -eq 0 ] || {
	echo "$fails failure(s)"
	exit 1
}
echo "planted includes and call: refused by the checks (and the include by the compiler)"
