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
# A test whose tool is missing is skipped with the reason (ctest's
# SKIP_RETURN_CODE 77), not failed.
skip() {
	echo "SKIP: $*"
	exit 77
}
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
# Whole sums are printed whole: mawk prints 3e+09 for 3000000000, and
# counts of time pass 2^31 in a few seconds of nanoseconds.
count_matching() { # file regex
	awk -v re="$2" '{ n = $NF; line = $0; sub(/ [0-9.]+$/, "", line); if (line ~ re) s += n }
		END { if (s == int(s)) printf "%.0f\n", s; else print s }' "$1"
}
total_count() { awk '{ s += $NF } END { if (s == int(s)) printf "%.0f\n", s; else print s }' "$1"; }
# a >= b * pct / 100
at_least_pct() { [ "$(awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { print (a >= b * p / 100) ? 1 : 0 }')" = 1 ]; }

# Records the whole machine for 2 s (-F FREQ, --pid roots, folded into
# OUT, stderr into ERR) while Debian's bash runs LOOP in the background:
# sets loop (bash's pid: its root is bash-$loop) and status (kprof's).
record_beside_bash() { # loop freq out err
	bash -c "$1" &
	loop=$!
	sleep 0.3
	"$KPROF" -a -F "$2" --pid -f folded -o "$3" -- sleep 2 2>"$4"
	status=$?
	kill "$loop"
	wait "$loop" 2>/dev/null
}

# Top lines of a folded file by count, for the log when a check fails.
show_top() { # file [n]
	awk '{ print $NF "\t" $0 }' "$1" | sort -t'	' -k1,1 -n -r | head -"${2:-5}" | cut -f2- | cut -c1-400
}

# True when FILE exists, is not empty, and no line matches the extended
# regex: a missing or empty output never passes a "never appears" check.
stop_within() { # pid tenths: SIGTERM, then whether it ended in time (else SIGKILL)
	local i
	kill -TERM "$1"
	for i in $(seq "$2"); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$1"
	return 1
}

lacks() { # file regex
	[ -s "$1" ] && ! LC_ALL=C grep -qE -- "$2" "$1"
}

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

# Runs CMD at the end of the test, after those registered before it.
at_exit() { # cmd
	KP_AT_EXIT="${KP_AT_EXIT:-}$1;"
	trap "$KP_AT_EXIT" EXIT
}

# A user of its own for a test that plays another user of the machine (root
# only): a uid no account has, picked from the process id so that tests
# running at once differ, with no home, no groups and no entry in
# /etc/passwd (nothing to lock or to leave behind). as_user CMD... runs CMD
# as it. The kernel's own guards against planted links, FIFOs and files
# (fs.protected_*) are switched off for the test where they can be, as on
# hosts and containers without systemd's defaults, so that kprof is tested
# alone; they are restored at exit (the script says '# kp-e2e: kernel-guards':
# tests/CMakeLists.txt runs two such tests one after the other).
make_other_user() {
	local uid=$((60000 + $$ % 5000)) g
	while getent passwd "$uid" >/dev/null || getent group "$uid" >/dev/null; do uid=$((uid + 1)); done
	OTHER_UID=$uid
	for g in protected_symlinks protected_fifos protected_regular; do
		[ -w "/proc/sys/fs/$g" ] || continue
		at_exit "echo $(cat "/proc/sys/fs/$g") > /proc/sys/fs/$g"
		echo 0 >"/proc/sys/fs/$g"
	done
}
as_user() { setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups "$@"; }
