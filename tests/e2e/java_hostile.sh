# A process that pretends to be a JVM: a fake libjvm.so exporting the VM
# structs symbols, crafted (tests/workloads/java/fake_libjvm.c: tables
# with no end, wild pointers, a segment map that loops, a blob whose
# frame is 1 GiB, scopes that are their own senders, names of 64 KiB of
# terminal escapes), run by another user (nobody) while kprof records it
# as root. kprof must end normally in each case, in bounded memory (its
# peak within 64 MiB of recording a plain process), with
# the crafted structure named as the reason where a stack ends, every
# byte of a name escaped, and the fake left running (docs/java.md,
# "Safety").
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

[ "$(id -u)" = 0 ] || skip "needs root (the fake runs as another user)"
command -v setpriv >/dev/null || skip "no setpriv"
dir=$(mktemp -d /tmp/kprof-fakejvm.XXXXXX)
at_exit "rm -rf $dir"
chmod 755 "$dir"
"$CC" -O1 -shared -fPIC -o "$dir/libjvm.so" "$KP_TESTS/workloads/java/fake_libjvm.c" &&
	printf 'int fake_jvm_run(const char *);\nint main(int c, char **v) { return fake_jvm_run(v[1]); }\n' >"$T/main.c" &&
	"$CC" -o "$dir/fakejvm" "$T/main.c" -L"$dir" -ljvm -Wl,-rpath,"$dir" ||
	{ fail "building the fake JVM"; finish; }
chmod 755 "$dir"/*

# mode: the reason the stack must end with (a note for tables kprof
# refuses whole)
declare -A why=(
	[endless]='note:its VM structs table does not check out'
	[wild]='note:its VM structs table does not check out'
	[segmap]='\[unknown: hotspot: the pc is in no code blob of the code cache\]'
	[blob]='\[unknown: hotspot: its code blob does not check out\]'
	[scopes]='\[unknown: hotspot: [^]]*\]'
	[names]='x1b\[31m\\r\\n\\x07:\(' # the name, escaped (; is : in folded text)
	[deep]='Deep\.Deep\('
)
# kprof's peak memory recording a plain busy process, first, the third
# time (the second run that needs a library's DWARF indexes it whole and
# saves the index, docs/design.md): the fakes may not make it grow by
# more than 64 MiB
bash -c 'while :; do :; done' &
busy=$!
for _ in 1 2 3; do
	/usr/bin/time -f '%M' -o "$T/base.rss" "$KPROF" -p "$busy" -d 0.5 -F 499 -f folded \
		-o "$T/base.folded" 2>/dev/null
done
kill "$busy"
base=$(tail -1 "$T/base.rss")
echo "kprof's peak RSS recording a busy bash: $base KiB"
for mode in endless wild segmap blob scopes names deep; do
	setpriv --reuid=65534 --regid=65534 --clear-groups "$dir/fakejvm" "$mode" &
	fake=$!
	sleep 0.2
	out=$T/$mode.folded
	/usr/bin/time -f '%M' -o "$T/$mode.rss" timeout 60 "$KPROF" -p "$fake" -d 1 -F 499 \
		-f folded -o "$out" >"$T/$mode.out" 2>"$T/$mode.err"
	st=$?
	check "$mode: kprof exits 0 ($st)" [ "$st" -eq 0 ]
	check "$mode: the fake runs on" kill -0 "$fake"
	kill "$fake"
	wait "$fake" 2>/dev/null
	rss=$(tail -1 "$T/$mode.rss")
	echo "$mode: $(total_count "$out") samples, kprof's peak RSS $rss KiB"
	check "$mode: kprof's memory stays bounded ($rss KiB < $base + 64 MiB)" [ "$rss" -lt $((base + 65536)) ]
	w=${why[$mode]}
	case $w in
	note:*) check "$mode: one note says why ($w)" grep -q "java $fake: its VM structs were not read (${w#note:})" "$T/$mode.err" ;;
	*) check "$mode: $w" grep -qE "$w" "$out" ;;
	esac
	check "$mode: no control byte in the output" lacks "$out" $'[\x01-\x08\x0b-\x1f\x7f]'
	cut -c1-200 "$out" | head -2
done

# SIGTERM while kprof reads the fakes whose tables cost it most (a code
# cache that claims endless heaps, a stack of crafted frames): it ends
# within a second (3 s allowed: a loaded runner), its profile written
for mode in endless deep; do
	setpriv --reuid=65534 --regid=65534 --clear-groups "$dir/fakejvm" "$mode" &
	fake=$!
	sleep 0.2
	"$KPROF" -p "$fake" -F 499 -f folded -o "$T/$mode.term.folded" 2>"$T/$mode.term.err" &
	kp=$!
	sleep 1.5
	t0=$(date +%s%N)
	stop_within "$kp" 30
	ended=$?
	echo "$mode: kprof ended $((($(date +%s%N) - t0) / 1000000)) ms after SIGTERM"
	check "$mode: SIGTERM ends kprof (within 3 s)" [ "$ended" -eq 0 ]
	wait "$kp"
	check "$mode: its profile written after SIGTERM" [ -s "$T/$mode.term.folded" ]
	kill "$fake"
	wait "$fake" 2>/dev/null
done
finish
