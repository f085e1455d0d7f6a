# Folded input that is not folded text (issue 16, items 5 and 6), plain and
# zstd-compressed, through `kprof report`, `kprof diff` and `kprof
# flamegraph`: 4 GiB of zeros in a 150 KB .zst, 4 GiB without a newline, a
# 20 MiB line in the middle of good ones, truncated compressed data. Each
# is refused at once: exit 1, one line naming FILE:LINE, no output file,
# peak RSS far below what the input claims (it was 4.1 GB and 48 s for the
# zeros; a line cut short by memory was taken for the end of the input,
# exit 0). Out of memory (prlimit --as) exits 1 with one line, not
# abort()'s 134: not under ASan, whose shadow memory needs terabytes of
# address space (that case is unit/test_xalloc's, which runs there too).
. "$(dirname "$0")/lib.bash"
for tool in zstd prlimit /usr/bin/time; do
	command -v "$tool" >/dev/null || {
		echo "$tool not found (scripts/deps --test): skipped"
		exit 77
	}
done
asan=0
grep -q __asan_init "$KPROF" && asan=1

# peak RSS of a refusal, in KB: some 5 MB for NUL bytes, 21 MB for the
# long lines (the 16 MiB buffered, zstd's window); ASan's shadow and
# quarantine take it to 30 and 85 MB
maxkb=$((asan ? 160000 : 64000))

printf 'main;a 10\nmain;b 20\n' >"$T/good.folded"
# 4 GiB claimed: stdin's 16 MiB in a frame, 256 times (zstd reads
# concatenated frames)
claim_4g() { # out
	zstd -q -1 -c >"$1"
	for _ in 1 2 3 4 5 6 7 8; do cat "$1" "$1" >"$1.2" && mv "$1.2" "$1"; done
}
head -c 16M /dev/zero | claim_4g "$T/zeros.zst"
head -c 16M /dev/zero | tr '\0' a | claim_4g "$T/endless.zst"
# a 20 MiB line (over the 16 MiB cap) between good lines
{
	printf 'main;a 10\nmain;b 20\n'
	head -c 20M /dev/zero | tr '\0' b
	printf ' 5\nmain;c 30\n'
} | zstd -q -1 -c >"$T/long.zst"
# good lines, cut inside the frame
seq 20000 | awk '{ print "main;f" $1 " " $1 }' | zstd -q -c >"$T/whole.zst"
head -c $(($(stat -c %s "$T/whole.zst") - 40)) "$T/whole.zst" >"$T/trunc.zst"

# refused CASE EXPECTED COMMAND...: exit 1, one line on stderr that
# matches the extended regex EXPECTED, peak RSS under maxkb, no output
# file (the commands write -o $T/out.*)
refused() {
	local what=$1 want=$2 rc kb
	shift 2
	rm -f "$T"/out.*
	/usr/bin/time -f %M -o "$T/rss" "$@" 2>"$T/err" >/dev/null
	rc=$?
	kb=$(tail -n 1 "$T/rss")
	# /usr/bin/time writes "Command exited with non-zero status N" first
	check "$what: exit 1 ($rc), one line: $(head -c 300 "$T/err")" \
		[ "$rc" -eq 1 -a "$(wc -l <"$T/err")" -eq 1 ]
	check "$what: the message says where and why" grep -Eq "$want" "$T/err"
	check "$what: peak RSS $kb KB < $maxkb KB" [ "$kb" -lt "$maxkb" ]
	check "$what: no output file" [ -z "$(find "$T" -name 'out.*' -print -quit)" ]
}

cd "$T" || exit 1
refused "report, zeros.zst" '^kprof: zeros\.zst:1: a NUL byte: binary data' \
	"$KPROF" report -o out.folded zeros.zst
refused "diff, zeros.zst as NEW" 'zeros\.zst:1: a NUL byte' \
	"$KPROF" diff -o out.txt good.folded zeros.zst
refused "diff, zeros.zst as BASE" 'zeros\.zst:1: a NUL byte' \
	"$KPROF" diff -o out.txt zeros.zst good.folded
refused "report, endless.zst" '^kprof: endless\.zst:1: a line longer than 16 MiB' \
	"$KPROF" report -o out.folded endless.zst
refused "diff, endless.zst" 'endless\.zst:1: a line longer than 16 MiB' \
	"$KPROF" diff -o out.svg good.folded endless.zst
refused "report, a 20 MiB line in the middle" '^kprof: long\.zst:3: a line longer than 16 MiB' \
	"$KPROF" report -o out.folded long.zst
refused "report --strict, a 20 MiB line" 'long\.zst:3: a line longer' \
	"$KPROF" report --strict -o out.folded long.zst
refused "diff, a 20 MiB line" 'long\.zst:3: a line longer' \
	"$KPROF" diff -o out.txt long.zst good.folded
refused "report, truncated .zst" '^kprof: trunc\.zst:[0-9]+: read error: truncated' \
	"$KPROF" report -o out.folded trunc.zst
refused "diff, truncated .zst" 'trunc\.zst:[0-9]+: read error: truncated' \
	"$KPROF" diff -o out.txt good.folded trunc.zst
# the plain reader, the same rules: flamegraph reads folded text only
zstd -q -d -c long.zst >long.folded
refused "flamegraph, a 20 MiB line" '^kprof: long\.folded:3: a line longer than 16 MiB' \
	"$KPROF" flamegraph -o out.svg long.folded
refused "report, a 20 MiB line, plain" 'long\.folded:3: a line longer' \
	"$KPROF" report -o out.svg long.folded
rm -f long.folded
# shellcheck disable=SC2016 # $0 is bash -c's, the kprof after the script
refused "flamegraph, zeros from stdin" '^kprof: stdin:1: a NUL byte' \
	bash -c 'zstd -q -d -c zeros.zst | "$0" flamegraph -o out.svg' "$KPROF"
# shellcheck disable=SC2016
refused "flamegraph, an endless line from stdin" '^kprof: stdin:1: a line longer than 16 MiB' \
	bash -c 'zstd -q -d -c endless.zst | "$0" flamegraph -o out.svg' "$KPROF"
check "the whole .zst still reads" "$KPROF" report -f folded -o out.folded whole.zst
check "... all of it" [ "$(total_count out.folded)" -eq 200010000 ]
rm -f out.folded

if [ "$asan" -eq 1 ]; then
	echo "ASan build: the prlimit --as cases skipped (ASan reserves terabytes of address space)"
else
	# the issue's case: the long line with 1 GB of address space
	refused "report, a 20 MiB line, --as 1 GB" 'long\.zst:3: a line longer' \
		prlimit --as=1000000000 "$KPROF" report -o out.folded long.zst
	# 16 distinct 4 MB frames (64 MB of names) in 50 MB of address space
	# (kprof reads a small file in 20 MB)
	head -c 4000000 /dev/zero | tr '\0' a >a4m
	for i in $(seq 16); do
		printf 'main;f%d' "$i"
		cat a4m
		printf ' 1\n'
	done | zstd -q -1 -c >big.zst
	maxkb=50000 # all it may have
	for cmd in "report -o out.folded big.zst" "diff -o out.txt good.folded big.zst"; do
		# shellcheck disable=SC2086
		refused "out of memory: $cmd" '^kprof: (.*: )?out of memory' \
			prlimit --as=50000000 "$KPROF" $cmd
	done
	# the named temporary (where there is no O_TMPFILE) is unit/test_xalloc's
fi
finish
