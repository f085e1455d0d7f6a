#!/usr/bin/env bash
# Runs one fuzz target for a fixed number of inputs, from a fixed seed,
# over its seed corpus (what the fuzz/NAME tests do):
#   run-target.sh BINARY SEEDS RUNS [libFuzzer options...]
# reads tests/fuzz/corpus/SEEDS/ and tests/fuzz/SEEDS.dict. New inputs go
# to a scratch directory: the repository's corpus is only read. A crash,
# leak, UB report or timeout fails, its input saved under
# $KP_FUZZ_ARTIFACTS (default ./fuzz-artifacts).
set -euo pipefail
bin=$1 seeds=$2 runs=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
art=${KP_FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}
mkdir -p "$art"
args=(-runs="$runs" -seed=1 -timeout=10 -rss_limit_mb=2048 -error_exitcode=1
	-timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$art/$(basename "$bin")-")
[ -f "$here/$seeds.dict" ] && args+=(-dict="$here/$seeds.dict")
"$bin" "${args[@]}" "$@" "$work" "$here/corpus/$seeds"
