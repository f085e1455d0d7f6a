#!/usr/bin/env bash
# Writes tests/fuzz/corpus/fdestart/: small stripped shared libraries
# (about 5 KB each, no libc linked, no build-id) built from
# tests/fixtures/sym/fdestart.c by gcc at -O2 and -O0, with -fexceptions
# (a CIE "zPLR": personality and LSDAs), and by clang (with lld: also
# 32-bit i386 and big-endian powerpc64); stripped as Debian strips a
# library (llvm-strip for the foreign ones). The fuzzer mutates whole files
# (fuzz_fdestart.c).
#   tests/fuzz/make-fdestart-seeds.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../fixtures/sym/fdestart.c
out=$here/corpus/fdestart
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed() {
	local name=$1 strip=strip
	shift
	case $* in *--target=*) strip=llvm-strip ;; esac
	"$@" -fPIC -shared -nostdlib -DKP_FDESTART_LIB -Wl,-z,noseparate-code \
		-Wl,--build-id=none -o "$work/$name" "$src"
	$strip --strip-unneeded --remove-section=.comment --remove-section=.note \
		-o "$out/$name" "$work/$name"
}
seed gcc-O2 gcc -O2
seed gcc-O0 gcc -O0
seed gcc-O2-eh gcc -O2 -fexceptions -DKP_FDESTART_CLEANUP
seed clang-O2 clang -O2 -Wno-unknown-attributes
seed clang-i386 clang --target=i386-linux-gnu -fuse-ld=lld -O2 -Wno-unknown-attributes
seed clang-ppc64be clang --target=powerpc64-linux-gnu -mabi=elfv2 -fuse-ld=lld -O2 \
	-Wno-unknown-attributes
chmod 644 "$out"/*
