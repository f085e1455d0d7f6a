#!/usr/bin/env bash
# Remakes tests/fuzz/corpus/symidx/real-* from real symbol indexes, as
# needed after the index format changes:
#   tests/fuzz/make-symidx-seeds.sh BUILD    (a normal build, tests included)
# kprof indexes a build the second time it reads its DWARF, so each binary
# is symbolized twice with a fresh cache. A seed is fuzz_symidx's raw mode:
# a 2 byte (raw, the checksum made right after mutation), the build-id's
# length - 1, the build-id, then the index file.
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O2 -g -o "$tmp/cxx" "$here/../fixtures/sym/cxx.cpp"
for pair in "real-inline-c:$build/tests/workloads/inline_fp" "real-cxx:$tmp/cxx"; do
	seed=${pair%%:*} bin=${pair#*:}
	rm -rf "$tmp/cache"
	for _ in 1 2; do
		XDG_CACHE_HOME=$tmp/cache "$build/cli/kprof" symbolize -e "$bin" 1000 >/dev/null
	done
	idx=$(find "$tmp/cache/kprof/symbols" -type f -name '[0-9a-f]*' ! -name '*.seen' |
		while read -r f; do
			id=$(basename "$f")
			readelf -n "$bin" | grep -q "Build ID: $id" && echo "$f"
		done)
	[ -n "$idx" ] || { echo "no index made for $bin" >&2; exit 1; }
	python3 - "$idx" "$here/corpus/symidx/$seed" <<'PY'
import os, sys
bid = bytes.fromhex(os.path.basename(sys.argv[1]))
open(sys.argv[2], "wb").write(bytes([2, len(bid) - 1]) + bid + open(sys.argv[1], "rb").read())
PY
	echo "$seed: $(stat -c %s "$here/corpus/symidx/$seed") bytes"
done
