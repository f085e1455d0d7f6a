# Bad input never crashes kprof nor corrupts its output: a perf map with
# hostile lines (a 200 KB name, NUL bytes, overflowing and empty ranges, no
# final newline), a running binary whose section headers are garbage, and a
# debug file at the right build-id path that is not an ELF file.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

well_formed() { # folded file: every line "frames COUNT", no control bytes
	[ -s "$1" ] && ! LC_ALL=C grep -vqE '^[^ ].* [0-9]+$' "$1" && ! LC_ALL=C grep -q '[[:cntrl:]]' "$1"
}
longest_line() { awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$1"; }

# 1. hostile perf-map lines, appended while the JIT workload runs (the map
# is complete and right before them; they must not break it)
w=$KP_WORKLOADS/jitcopy_fp
"$KPROF" -F 499 -f folded --annotate -o "$T/map.folded" -- "$w" 1.5 >"$T/out" 2>"$T/err" &
kp=$!
for _ in $(seq 100); do grep -q '^pid ' "$T/out" 2>/dev/null && break; sleep 0.02; done
pid=$(sed -n 's/^pid //p' "$T/out")
remove_map_of "$pid"
map=/tmp/perf-$pid.map
hot=$(awk '$3 == "kprof_jit_hot_spin" { print $1 }' "$map")
odd=$(awk '/kprof_jit;semi/ { print $1 }' "$map")
if [ -n "$hot" ] && [ -n "$odd" ]; then
	{
		# a huge name for the odd copy's range (sampled: a later line wins)
		printf '%s 10 %s\n' "$odd" "$(head -c 200000 /dev/zero | tr '\0' 'A')"
		printf '20000 10 with\0nul\0bytes\n'
		printf 'ffffffffffffffffffffffff 10 overflowing_start\n'
		printf 'ffffffffffffff00 1000 wrapping_end\n'
		printf '30000 0 empty_range\n'
		printf '\xff\xfe\xfd garbage bytes\n'
		printf '%s 10' "$hot" # an entry for the hot range without a name
		printf '\n40000 10 no_final_newline'
	} >>"$map"
fi
wait $kp
st=$?
check "hostile map: the workload's map was found ($map)" [ "${hot:+1}${odd:+1}" = 11 ]
check "hostile map: exit status 0 (got $st)" [ $st -eq 0 ]
check "hostile map: the output is well-formed" well_formed "$T/map.folded"
n=$(count_matching "$T/map.folded" '^jitcopy_fp;(.*;)?run_jit_kprof;kprof_jit_hot_spin_\[j\]$')
total=$(count_matching "$T/map.folded" '^jitcopy_fp;')
echo "hostile map: $total samples, $n in kprof_jit_hot_spin; longest line $(longest_line "$T/map.folded")"
check "hostile map: the good entry still names the hot copy (>= 20%)" at_least_pct "$n" "$total" 20
check "hostile map: the huge name was capped or skipped (no line over 128 KiB)" \
	[ "$(longest_line "$T/map.folded")" -le 131072 ]
grep -v '^kprof: warning: no hardware' "$T/err"

# 2. a running binary whose section headers are garbage (the kernel needs
# only the program headers to run it)
cp "$KP_WORKLOADS/spin_fp" "$T/spin_badsh"
read -r shoff shnum <<<"$(python3 -c '
import struct, sys
h = open(sys.argv[1], "rb").read(64)
print(struct.unpack_from("<Q", h, 0x28)[0], struct.unpack_from("<H", h, 0x3c)[0])' "$T/spin_badsh" 2>/dev/null)"
if [ -n "${shoff:-}" ] && [ "${shnum:-0}" -gt 0 ]; then
	head -c $((shnum * 64)) /dev/urandom | dd of="$T/spin_badsh" bs=1 seek="$shoff" conv=notrunc status=none
	"$KPROF" -F 499 -f folded -o "$T/badsh.folded" -- "$T/spin_badsh" 0.8 2>"$T/err"
	st=$?
	check "garbage section headers: exit status 0 (got $st)" [ $st -eq 0 ]
	check "garbage section headers: the output is well-formed" well_formed "$T/badsh.folded"
	check "garbage section headers: the process is there" grep -q '^spin_badsh;' "$T/badsh.folded"
	show_top "$T/badsh.folded" 2
else
	echo "SKIP: garbage section headers (python3 missing or no section headers)"
fi

# 3. a "debug file" at the right build-id path that is not an ELF file
bid=$(LC_ALL=C readelf -n "$KP_WORKLOADS/spin_fp" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
if [ -n "$bid" ]; then
	mkdir -p "$T/strip" "$T/dbg/.build-id/${bid:0:2}"
	strip --strip-all -o "$T/strip/spin_baddbg" "$KP_WORKLOADS/spin_fp"
	head -c 4096 /dev/urandom >"$T/dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	"$KPROF" -F 499 -f folded --debuginfo-dir "$T/dbg" -o "$T/baddbg.folded" -- "$T/strip/spin_baddbg" 0.8 2>"$T/err"
	st=$?
	check "corrupt debug file: exit status 0 (got $st)" [ $st -eq 0 ]
	check "corrupt debug file: the output is well-formed" well_formed "$T/baddbg.folded"
	check "corrupt debug file: the process is there" grep -q '^spin_baddbg;' "$T/baddbg.folded"
	show_top "$T/baddbg.folded" 2
fi
finish
