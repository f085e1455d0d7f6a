# Window names (kprof --every -o PATTERN --keep N; docs/security.md, "The
# spool and window files"): --keep leaves exactly the last N names written
# (the keep list's order, repeats included, is unit/test_keeplist's); and
# in a folder others can write (sticky, like /tmp), directories and a
# link another user (uid 65534) planted at the names of the windows to
# come are each a warning: the window goes to NAME.1.EXT beside it, the
# planted ones are left as they were, the run goes on and ends 0 (today
# kprof refused to start: "it is a directory").
. "$(dirname "$0")/lib.bash"

SPIN=$KP_WORKLOADS/spin_nofp

# --keep 2 over some 4 windows of distinct names: the last 2 stay
mkdir "$T/k"
"$KPROF" --every 1 --keep 2 -o "$T/k/w-%s.folded" -- "$SPIN" 3.5 2>"$T/err.keep"
status=$?
sed 's/^/  keep: /' "$T/err.keep"
n=$(sed -n 's/^kprof: \([0-9]*\) windows of 1 s.*/\1/p' "$T/err.keep")
ls "$T/k" | sed 's/^/  kept: /'
check "--keep 2: exit status 0 ($status), at least 3 windows (${n:-none})" [ $status -eq 0 -a "${n:-0}" -ge 3 ]
check "--keep 2: exactly 2 window files left" [ "$(ls "$T/k" | wc -l)" -eq 2 ]
# the newest window's file is among them (the last window ends the run)
newest=$(ls "$T/k" | sort | tail -1)
check "--keep 2: the last window's file kept ($newest)" [ -s "$T/k/$newest" ]

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "skip: the planted names need root and setpriv"
	finish
fi
d=$(mktemp -d /tmp/kprof-names.XXXXXX)
chmod 1777 "$d"
at_exit "rm -rf '$d'"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
now=$(date +%s)
# every name of the next 40 s a directory (the run takes some 4 s, more
# under load), one a link to a file of root's
for i in $(seq 0 40); do as_nobody mkdir "$d/w-$((now + i)).folded"; done
echo "root's" >"$T/target"
as_nobody rm -rf "$d/w-$((now + 2)).folded"
as_nobody ln -s "$T/target" "$d/w-$((now + 2)).folded"
"$KPROF" --every 1 -o "$d/w-%s.folded" -- "$SPIN" 2.5 2>"$T/err.planted"
status=$?
sed 's/^/  planted: /' "$T/err.planted"
ls -l "$d" | sed 's/^/  folder: /'
n=$(sed -n 's/^kprof: \([0-9]*\) windows\{0,1\} of 1 s.*/\1/p' "$T/err.planted")
check "planted: the run went on, exit status 0 ($status), ${n:-no} windows" [ $status -eq 0 -a "${n:-0}" -ge 2 ]
moved=$(grep -c "is in the way (a directory of uid 65534, not replaced): written to $d/w-[0-9]*\.1\.folded$" "$T/err.planted")
check "planted: a warning for each window whose name was taken ($moved of ${n:-?})" [ "$moved" -ge $((${n:-0} - 1)) -a "$moved" -ge 1 ]
written=$(ls "$d" | grep -c '^w-[0-9]*\.1\.folded$')
check "planted: the windows written beside them as NAME.1.folded ($written)" [ "$written" -eq "${n:-x}" ]
# (the last window may hold no sample: the command can end just after a
# window's cut, and an empty window's folded file is empty)
check "planted: each a folded file of root's, the command's samples in those not empty" sh -c "for f in '$d'/w-*.1.folded; do [ -f \"\$f\" ] && [ ! -L \"\$f\" ] && [ \"\$(stat -c %u \"\$f\")\" = 0 ] && { [ ! -s \"\$f\" ] || grep -q spin_leaf \"\$f\"; } || exit 1; done"
check "planted: the command's samples in its windows" sh -c "cat '$d'/w-*.1.folded | grep -q spin_leaf"
check "planted: the directories left as they were" [ "$(find "$d" -maxdepth 1 -type d -user 65534 | wc -l)" -eq 40 ]
check "planted: the link left, its target untouched" [ -L "$d/w-$((now + 2)).folded" -a "$(cat "$T/target")" = "root's" ]
finish
