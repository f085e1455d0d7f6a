# Shared helpers for the end-to-end tests (sourced, not run).
set -u
: "${KPROF:?}" "${KP_WORKLOADS:?}" "${KP_TMP:?}"
T=$KP_TMP/$(basename "$0" .sh)
rm -rf "$T" && mkdir -p "$T"
# kprof's cache (the kallsyms copy, symbol indexes) starts empty in each
# test and never touches the user's
export XDG_CACHE_HOME=$T/cache
fails=0
passes=0

ok() { passes=$((passes + 1)); echo "ok: $*"; }
fail() { fails=$((fails + 1)); echo "FAIL: $*"; }
check() { # check "description" command...
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what"; fi
}
finish() {
	echo "$passes passed, $fails failed"
	[ "$fails" -eq 0 ]
	exit $?
}

# Sum of counts of folded lines matching an extended regex (whole line).
count_matching() { # file regex
	awk -v re="$2" '{ n = $NF; line = $0; sub(/ [0-9.]+$/, "", line); if (line ~ re) s += n } END { print s + 0 }' "$1"
}
total_count() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
# a >= b * pct / 100
at_least_pct() { [ "$(awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { print (a >= b * p / 100) ? 1 : 0 }')" = 1 ]; }

# -o PREFIX.EXT for every output format a recording writes, a word a line
# (mapfile -t o < <(record_outputs PREFIX); "$KPROF" "${o[@]}" ...).
record_outputs() { # prefix
	local ext
	for ext in kprof folded svg top; do printf -- '-o\n%s.%s\n' "$1" "$ext"; done
}
# PREFIX.kprof renders (kprof report) as the recording rendered PREFIX.folded,
# .svg and .top, byte for byte.
same_as_recorded() { # prefix [report options]
	local pre=$1 ext
	shift
	for ext in folded svg top; do
		"$KPROF" report "$@" -o "$T/re.$ext" "$pre.kprof" 2>"$T/err.re" || return 1
		cmp -s "$pre.$ext" "$T/re.$ext" || { echo "  $pre.$ext differs"; return 1; }
	done
}
