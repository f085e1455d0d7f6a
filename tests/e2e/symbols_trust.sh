# A build-id is a claim, not a proof (issue 16, item 2). Another user runs
# a program that claims the build-id of root's own program (ld's
# --build-id=0xHEX) with other function names; root profiles it twice,
# which indexes the builds whose DWARF two runs needed. Before, the index
# saved under root's cache then named root's program with the other
# user's names in every later run and in `kprof symbolize`. Now:
#  - the other user's file is never indexed, nor marked as seen, and no
#    index names it: its own file does, in every run;
#  - in a whole-machine recording where both run (root's started during
#    it: its MMAP2 record carries the claimed build-id, which only the
#    other's object had), each keeps its own names;
#  - root's build is indexed from root's file, and names it on the run
#    that indexes it, on later runs and in `kprof symbolize`;
#  - a debug file the other user plants next to a root binary in a shared
#    folder (.gnu_debuglink, the same build-id) is ignored, with a note.
# The programs are static when the toolchain can link them so (the runs
# that index them then index no libc.so of ours too: 2 s under ASan), and
# the other's first runs record it as a command: the one whole-machine
# recording is the first of its cache, which indexes nothing of the
# machine's (the second took 15 s under ASan on a busy machine).
#
# kp-e2e: whole-machine (it samples every CPU: no other end-to-end test
# runs beside it; tests/CMakeLists.txt)
# kp-e2e: kernel-guards (make_other_user switches fs.protected_* off)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

[ "$(id -u)" -eq 0 ] || skip "needs root (another user's program, a whole-machine recording)"
command -v setpriv >/dev/null || skip "needs setpriv"
command -v objcopy >/dev/null || skip "needs objcopy"
make_other_user

bid=0x6b70726f662074727573740000000002 # the claimed build-id
hex=${bid#0x}
hot_program_source >"$T/prog.c"
# the other user's program lives in a folder of its own, open to root
u=$(mktemp -d /tmp/kp-trust.XXXXXX)
at_exit "rm -rf '$u'"
chmod 0755 "$u"
flags=(-O1 -g -fno-omit-frame-pointer "-Wl,--build-id=$bid")
echo 'int main(void) { return 0; }' >"$T/static.c"
"$CC" -static -o "$T/static" "$T/static.c" 2>/dev/null && flags+=(-static)
"$CC" "${flags[@]}" -DHOT=kptrust_root_hot -o "$T/kptrust_root" "$T/prog.c" &&
	"$CC" "${flags[@]}" -DHOT=kptrust_other_hot -o "$u/kptrust_other" "$T/prog.c" ||
	{
		fail "build the two programs"
		finish
	}
chown -R "$OTHER_UID:$OTHER_UID" "$u"
# the function's address as kprof symbolize prints it (0x, no leading zeros)
addr_of() { # file name [nm option]
	printf '0x%x' "0x$(nm ${3:-} "$1" | awk -v n="$2" '$3 == n { print $1 }')"
}
addr=$(addr_of "$T/kptrust_root" kptrust_root_hot)
[ "$addr" != 0x0 ] && [ "$addr" = "$(addr_of "$u/kptrust_other" kptrust_other_hot)" ] ||
	{
		fail "the two programs have the same layout"
		finish
	}
idx=$XDG_CACHE_HOME/kprof/symbols/$hex

# Names of the hot function in each program's stacks (folded, no --pid).
hot_of() { # folded comm
	grep -E "^$2;" "$1" | grep -oE 'kptrust_[a-z]+_hot' | sort -u | tr '\n' ' '
}

# 1. The other user's program alone, twice (root records it as a command
# run as that user): its names, from its own file; nothing of it goes to
# the cache, not even the marker that the build was seen (an index would
# then be made from the next file claiming it).
for run in alone1 alone2; do
	"$KPROF" -F 499 -f folded -o "$T/$run.folded" -- \
		setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups "$u/kptrust_other" 0.3 2>"$T/$run.err"
	check "$run: exit status 0" [ $? -eq 0 ]
	o=$(hot_of "$T/$run.folded" kptrust_other)
	check "$run: the other user's program is named from its file ($o)" [ "$o" = "kptrust_other_hot " ]
done
check "no index of the build it claims, no marker" test ! -e "$idx" -a ! -e "$idx.seen"

# 2. The machine: the other's program running, root's started during the
# recording. Each keeps its own names; root's build is marked as seen.
# (setpriv itself, not as_user: a function in the background is a subshell
# of its own, which a kill would leave the program running beside)
setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups "$u/kptrust_other" 60 &
other=$!
at_exit "kill $other 2>/dev/null"
sleep 0.2
"$KPROF" -a -F 199 -f folded -o "$T/both.folded" -- "$T/kptrust_root" 0.5 2>"$T/both.err"
check "both: exit status 0" [ $? -eq 0 ]
r=$(hot_of "$T/both.folded" kptrust_root)
o=$(hot_of "$T/both.folded" kptrust_other)
check "both: root's program keeps its names ($r)" [ "$r" = "kptrust_root_hot " ]
check "both: the other's keeps its own ($o)" [ "$o" = "kptrust_other_hot " ]
check "root's build is marked as seen" [ -e "$idx.seen" ]

# 3. Root's program again: this run indexes its build, from its own file,
# and the next is named from the index
for run in indexing later; do
	"$KPROF" -F 499 -f folded -o "$T/$run.folded" -- "$T/kptrust_root" 0.3 2>"$T/$run.err"
	r=$(hot_of "$T/$run.folded" kptrust_root)
	check "$run: root's program keeps its names ($r)" [ "$r" = "kptrust_root_hot " ]
	[ $run = indexing ] && check "the build is indexed" [ -s "$idx" ]
done
check "the index holds root's names" grep -q kptrust_root_hot "$idx"
check "and not the other's" lacks "$idx" kptrust_other_hot
kill $other 2>/dev/null
wait $other 2>/dev/null
# the index is not read for a file kprof does not trust (kprof symbolize
# opens a file as a recording does)
out=$("$KPROF" symbolize -e "$T/kptrust_root" $addr)
check "kprof symbolize: root's program ($out)" [ "$out" = "$addr kptrust_root_hot" ]
out=$("$KPROF" symbolize -e "$u/kptrust_other" $addr)
check "kprof symbolize: the other's ($out)" [ "$out" = "$addr kptrust_other_hot" ]
check "the index still holds root's names" grep -q kptrust_root_hot "$idx"

# 4. The other user plants a debug file for a root binary in a shared
# folder (sticky, writable by all): the binary's debuglink and build-id
# lead to it, and it names the code its way. It is ignored, and said.
s=$u/shared
mkdir -m 1777 "$s"
"$CC" -O1 -g -rdynamic -DHOT=kptrust_root_hot "-Wl,--build-id=0x${hex%??}03" -o "$s/kptrust_lib" "$T/prog.c" &&
	objcopy --only-keep-debug "$s/kptrust_lib" "$s/kptrust_lib.debug" &&
	objcopy --strip-debug --strip-unneeded --add-gnu-debuglink="$s/kptrust_lib.debug" "$s/kptrust_lib" &&
	rm "$s/kptrust_lib.debug" &&
	"$CC" -O1 -g -rdynamic -DHOT=kptrust_other_hot "-Wl,--build-id=0x${hex%??}03" -o "$T/planted" "$T/prog.c" &&
	objcopy --only-keep-debug "$T/planted" "$T/planted.debug" ||
	{
		fail "build the shared binary and the planted debug file"
		finish
	}
# handed over in its folder: the test's own may be closed to it (CI clones
# into a private folder)
install -m 644 "$T/planted.debug" "$u/planted.debug"
as_user cp "$u/planted.debug" "$s/kptrust_lib.debug"
laddr=$(addr_of "$s/kptrust_lib" kptrust_root_hot -D)
out=$("$KPROF" symbolize -e "$s/kptrust_lib" "$laddr" 2>"$T/planted.err")
check "the planted debug file names nothing ($out)" [ "$out" = "$laddr kptrust_root_hot" ]
check "and is said to be ignored" grep -q "ignored the debug file $s/kptrust_lib.debug" "$T/planted.err"
cat "$T/planted.err"
# the same file of root's is used: the symbols are the debug file's
chown 0:0 "$s/kptrust_lib.debug"
out=$("$KPROF" symbolize --no-cache -e "$s/kptrust_lib" "$laddr" 2>"$T/own.err")
check "a debug file of root's is used ($out)" [ "$out" = "$laddr kptrust_other_hot" ]
grep -q 'ignored the debug file' "$T/own.err"
check "without a note" [ $? -ne 0 ]
finish
