#!/usr/bin/env bash
# Writes tests/fuzz/corpus/unwind/: fuzz_unwind's control bytes (see the
# comment at the top of fuzz_unwind.c). The samples themselves are taken
# by the target at start-up, so a seed names one and says how to damage
# it: run this again after a change of the control bytes.
#   tests/fuzz/make-unwind-seeds.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/corpus/unwind
rm -rf "$out"
mkdir -p "$out"
# seed NAME MODE CUT_LO CUT_HI MAX JIT VANISHED GONE REPL(3) DROP(3) [REST...]
seed() {
	local name=$1
	shift
	local b s=""
	for b in "$@"; do
		s+=$(printf '\\x%02x' "$b")
	done
	printf "$s" >"$out/$name"
}
names=(chain qsort recursion signal)
for i in 0 1 2 3; do
	n=${names[$i]}
	seed "$n-whole" $i 0xff 0xff 0 0 0 0 0 0 0 0 0 0
	# leaf repair, the chain's first return address from the copy
	seed "$n-leaf" $((i | 4)) 0xff 0xff 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
	# the copy cut mid-frame (200 bytes, 1 KiB + 3)
	seed "$n-cut-200" $i 200 0 0 0 0 0 0 0 0 0 0 0
	seed "$n-cut-1027" $i 0x03 0x04 0 0 0 0 0 0 0 0 0 0
	# every object without tables (JIT-like: the frame-pointer chain)
	seed "$n-jit" $i 0xff 0xff 0 0xff 0 0 0 0 0 0 0 0
done
# files vanished; the binary's mappings gone; 8 frames at most
seed chain-vanished 0 0xff 0xff 0 0 0xff 0 0 0 0 0 0 0
seed chain-gone 0 0xff 0xff 0 0 0 0x01 0 0 0 0 0 0
seed recursion-depth-8 2 0xff 0xff 8 0 0 0 0 0 0 0 0 0
# garbage bp (set to 0x10) and rbx (xor), a word of the copy overwritten
seed chain-garbage-bp 0 0xff 0xff 0 0 0 0 0x42 0 0 0 0 0 \
	0 0x55 0x55 0x55 0x55 0 0 0 0 2 0x10 0 0 0 0 0 0 0
seed signal-overwrite $((3 | 8)) 0xff 0xff 0 0 0 0 0 0 0 0 0 0 0x10 0 \
	0x41 0x41 0x41 0x41 0x41 0x41 0x41 0x41
# ip set to the walk's second frame, a return address (kind 4, frame 1)
seed chain-ip-return-address 0 0xff 0xff 0 0 0 0 0 1 0 0 0 0 4 1 0 0 0 0 0 0 0
seed recursion-ip-return-address 2 0xff 0xff 0 0 0 0 0 1 0 0 0 0 4 5 0 0 0 0 0 0 0
# no sp in the mask: no registers
seed chain-no-sp 0 0xff 0xff 0 0 0 0 0 0 0 0x80 0 0
