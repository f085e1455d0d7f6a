# Helpers shared by the tests/e2e/symbols_*.sh tests (sourced after lib.bash).

# A test whose tool is missing is skipped with the reason, not failed.
# The exit status is 0 so ctest counts it as passed; the SKIP line says why.
skip() {
	echo "SKIP: $*"
	exit 77
}

CC=${CC:-cc}
CXX=${CXX:-c++}

# Perf maps that workloads leave in the real /tmp: removed at exit.
kp_maps_to_remove=()
remove_map_of() { # pid
	[ -n "$1" ] && kp_maps_to_remove+=("/tmp/perf-$1.map")
}
# Also the maps of dead processes that ran these workloads (a run that was
# killed, or whose kprof died before the workload printed its pid), once
# they are an hour old: a test running at the same time in another build
# still reads the map its workload left at exit.
remove_dead_workload_maps() {
	local f pid
	for f in $(find /tmp -maxdepth 1 -name 'perf-*.map' -mmin +60 2>/dev/null); do
		pid=${f#/tmp/perf-}
		pid=${pid%.map}
		case $pid in '' | *[!0-9]*) continue ;; esac
		[ -e "/proc/$pid" ] && continue
		grep -qE 'hotLoopKprof|HotKprof\.hotMethodKprof|kprof_jit_' "$f" 2>/dev/null && rm -f "$f"
	done
}
trap 'rm -f "${kp_maps_to_remove[@]}"; remove_dead_workload_maps' EXIT

# Frames in folded lines whose root frame matches comm_regex, weighted by
# count: prints "UNKNOWN TOTAL" (the root frame itself is not counted).
frames_unknown() { # file comm_regex
	awk -v re="$2" '{
		n = $NF; line = $0; sub(/ [0-9.]+$/, "", line)
		k = split(line, f, ";")
		if (f[1] !~ re) next
		for (i = 2; i <= k; i++) {
			total += n
			if (f[i] ~ /^\[unknown[]:]/) unknown += n
		}
	} END { print unknown + 0, total + 0 }' "$1"
}

# Lines of a folded file whose frames match a regex anywhere: prints them
# for the log (at most n).
show_matching() { # file regex [n]
	grep -E -- "$2" "$1" | head -"${3:-5}" | cut -c1-400
}

# A C program that calls HOT() (name it with -DHOT=NAME) in a loop for
# ARGV[1] seconds (default 1): its samples are main;NAME.
hot_program_source() {
	cat <<'EOF'
#include <stdlib.h>
#include <time.h>
#ifndef SPIN_CLOCK /* CLOCK_PROCESS_CPUTIME_ID: spin for CPU time, however loaded the machine */
#define SPIN_CLOCK CLOCK_MONOTONIC
#endif
volatile unsigned long sink;
__attribute__((noinline)) void HOT(void)
{
	for (int i = 0; i < 20000; i++)
		sink += (unsigned long)i * 7;
}
int main(int argc, char **argv)
{
	struct timespec t;
	double end;

	clock_gettime(SPIN_CLOCK, &t);
	end = t.tv_sec + t.tv_nsec / 1e9 + (argc > 1 ? atof(argv[1]) : 1);
	do {
		HOT();
		clock_gettime(SPIN_CLOCK, &t);
	} while (t.tv_sec + t.tv_nsec / 1e9 < end);
	return 0;
}
EOF
}
