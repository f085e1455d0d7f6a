# Helpers shared by the tests/e2e/offcpu_*.sh tests (sourced after lib.bash).
# Their workload is tests/workloads/offcpu.c: each function of it prints
# "NAME WALL CPU", so WALL - CPU is the time its thread spent off CPU.

OFFCPU=$KP_WORKLOADS/offcpu_nofp

# The marker frames of profile/wait.h, as extended regexes of a whole
# folded line (its count left out, as count_matching sees it)
SLEEPING='\[off-cpu: sleeping\]$'
UNINTERRUPTIBLE='\[off-cpu: uninterruptible\]$'
PREEMPTED='\[off-cpu: preempted\]$'
BLOCKED='\[off-cpu: blocked\]$'
# the outermost frames of a glibc program's main thread
START='_start;__libc_start_main[^;]*;__libc_start_call_main'

# sched:sched_switch readable, so that waits are told apart as sleeping or
# uninterruptible: tracefs is mounted where it is not (root only; CI
# machines start without it). It is left mounted: a test running beside
# this one may be reading it. Returns 1 when it cannot be (not root, or no
# tracefs in the kernel): a failure in CI, where the tests run as root.
tracefs_ready() {
	local fmt=events/sched/sched_switch/format
	[ -r "/sys/kernel/tracing/$fmt" ] || [ -r "/sys/kernel/debug/tracing/$fmt" ] && return 0
	if [ "$(id -u)" -eq 0 ]; then
		# two tests starting at once mount it once
		(flock 9 && { [ -r "/sys/kernel/tracing/$fmt" ] ||
			mount -t tracefs nodev /sys/kernel/tracing; }) 9>"${TMPDIR:-/tmp}/kprof-tracefs.lock" 2>/dev/null
		[ -r "/sys/kernel/tracing/$fmt" ] && return 0
	fi
	if [ "${CI:-}" = true ]; then
		fail "tracefs is mounted (mount -t tracefs nodev /sys/kernel/tracing, as root)"
	else
		echo "note: no tracefs (not root?): sleeping and uninterruptible are not checked"
	fi
	return 1
}

# The program's own accounting: field 2 (WALL), 3 (CPU) or 4 of its line NAME.
acct() { awk -v n="$2" -v f="${3:-2}" '$1 == n { print $f }' "$1"; }
# Its off-CPU seconds: WALL - CPU of its line NAME.
acct_off() { awk -v n="$2" '$1 == n { printf "%.6f\n", $2 - $3 }' "$1"; }

# "WAITS SECONDS" of the summary's off-CPU line (stderr of a recording).
offcpu_line() { sed -n 's/^kprof: off CPU: \([0-9]*\) waits, \([0-9.]*\) s .*/\1 \2/p' "$1"; }

# Counts of a folded file a second, from its total and the summary's
# off-CPU seconds (nanoseconds or microseconds: folded text counts time in
# either, as profile/wait.h says). Prints nothing when neither fits.
counts_a_second() { # folded seconds
	awk -v t="$(total_count "$1")" -v s="$2" 'BEGIN {
		if (s <= 0) exit
		r = t / s
		if (r > 0.99e9 && r < 1.01e9) print 1e9
		else if (r > 0.99e6 && r < 1.01e6) print 1e6
	}'
}

# Seconds of COUNT at UNIT counts a second.
seconds() { awk -v c="$1" -v u="$2" 'BEGIN { printf "%.6f\n", c / u }'; }
# lo <= x <= hi, as numbers
between() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }
