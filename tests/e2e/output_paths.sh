#!/usr/bin/env bash
# -o as root in a folder other users can write (a sticky, world-writable one
# like /tmp), with the kernel's link and FIFO guards off: what another user
# plants at the output path is never followed, never written and never
# waited on; what root names itself (/dev/null, /dev/stdout, /dev/fd/N, a
# FIFO of its own) is written in place. docs/security.md.
# kp-e2e: kernel-guards
. "$(dirname "$0")/lib.bash"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "skip: needs root and setpriv (another user plants the files)"
	exit 77
fi
make_other_user
d=$(mktemp -d /tmp/kprof-outpaths.XXXXXX)
chmod 1777 "$d"
at_exit "rm -rf '$d'"
printf 'main;work;leaf 5\nmain;other 3\n' >"$T/in.folded"
echo "root's secret" >"$d/rootonly"
chmod 600 "$d/rootonly"
svg() { "$KPROF" flamegraph "$T/in.folded" "$@"; }
is_svg() { [ -f "$1" ] && [ ! -L "$1" ] && [ "$(stat -c %u "$1")" = 0 ] && grep -q '<svg' "$1"; }
untouched() { [ "$(cat "$d/rootonly")" = "root's secret" ]; }

# a link to a device (a loop device over a file of zeros) and to a file only
# root may write: the link is replaced by root's file, the target untouched
if img=$T/img && head -c 65536 /dev/zero >"$img" && dev=$(losetup --find --show "$img" 2>/dev/null); then
	at_exit "losetup -d '$dev'"
	as_user ln -s "$dev" "$d/dev.svg"
	svg -o "$d/dev.svg" 2>"$T/err"
	check "link to a device: written (exit $?)" [ $? -eq 0 ]
	check "link to a device: the device keeps its zeros" cmp -s -n 65536 "$dev" /dev/zero
	check "link to a device: replaced by root's SVG" is_svg "$d/dev.svg"
else
	echo "note: no loop device here (losetup), the device case is left to the file case"
fi
as_user ln -s "$d/rootonly" "$d/file.svg"
svg -o "$d/file.svg"
check "link to a root-only file: written" is_svg "$d/file.svg"
check "link to a root-only file: its target untouched" untouched

# a FIFO another user reads: refused at once, nothing handed over
as_user mkfifo "$d/fifo.svg"
as_user sh -c "exec cat '$d/fifo.svg' >'$d/stolen' 2>/dev/null" &
reader=$!
sleep 0.2
timeout 20 "$KPROF" flamegraph "$T/in.folded" -o "$d/fifo.svg" 2>"$T/err"
st=$?
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
check "planted FIFO with a reader: refused (exit $st)" [ $st -eq 1 ]
check "planted FIFO: the message names it and its owner" grep -q "not writing $d/fifo.svg: it is a FIFO owned by uid $OTHER_UID" "$T/err"
check "planted FIFO: nothing handed over" [ ! -s "$d/stolen" ]
# the reader's cat still waits in its open of the FIFO (the kill reached
# the subshell, not setpriv's cat): a writer's open and close lets it end
timeout 5 sh -c ": 1<>'$d/fifo.svg'" 2>/dev/null || true
# ... and with no reader: no wait, and the same for a recording, before it samples
timeout 20 "$KPROF" -F 99 -o "$d/fifo.svg" -- sleep 5 2>"$T/err"
st=$?
check "planted FIFO, no reader, recording: refused at once (exit $st)" [ $st -eq 1 ]

# links swapped (renameat2 RENAME_EXCHANGE) between /dev/null and a
# root-only file while root writes, as fast as the other user can: the file
# stays (the same race overwrote it in 8 of 30 writes before kprof stopped
# following links)
cat >"$d/swap.py" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
renameat2 = libc.renameat2
d = sys.argv[1]
a, b = (d + "/race.svg").encode(), (d + "/race.alt").encode()
stop = d + "/stop"
open(d + "/swapping", "w").close()
n = 0
while True:
    # the stop file, also while both links stand and every exchange
    # succeeds (planted again after root's last rm: it never ended)
    n += 1
    if n % 64 == 0 and os.path.exists(stop):
        break
    if renameat2(-100, a, -100, b, 2) != 0:
        # root's file (sticky folder: not ours to move) or none: plant again
        if os.path.exists(stop):
            break
        for path, target in ((a, b"/dev/null"), (b, (d + "/rootonly").encode())):
            try:
                os.symlink(target, path)
            except OSError:
                pass
PY
# Debian's python3 by its path: the test's PATH may lead to folders closed
# to the other user
as_user /usr/bin/python3 "$d/swap.py" "$d" &
swapper=$!
for _ in $(seq 50); do [ -e "$d/swapping" ] && break; sleep 0.1; done
check "the other user swaps links" [ -e "$d/swapping" ]
hits=0
for i in $(seq 30); do
	rm -f "$d/race.svg"
	sleep 0.02
	svg -o "$d/race.svg" 2>/dev/null
	if ! untouched; then
		hits=$((hits + 1))
		echo "root's secret" >"$d/rootonly"
	fi
done
touch "$d/stop"
rm -f "$d/race.svg"
wait "$swapper"
check "links swapped while root writes: the root-only file untouched in 30 writes ($hits overwritten)" [ $hits -eq 0 ]

# what root names itself is written in place
svg -o /dev/null
check "-o /dev/null: exit 0" [ $? -eq 0 ]
svg -o /dev/stdout >"$T/stdout.svg"
check "-o /dev/stdout: the SVG on stdout" grep -q '<svg' "$T/stdout.svg"
svg -o /dev/fd/3 3>"$T/fd3.svg"
check "-o /dev/fd/3: the SVG on descriptor 3" grep -q '<svg' "$T/fd3.svg"
svg -o /dev/fd/9 2>"$T/err"
check "-o /dev/fd/9 not open: an error naming it" grep -q "cannot write /dev/fd/9" "$T/err"
mkfifo "$d/own.fifo"
cat "$d/own.fifo" >"$T/own.svg" &
svg -o "$d/own.fifo"
wait
check "root's own FIFO: the SVG through it" grep -q '</svg>' "$T/own.svg"
finish
