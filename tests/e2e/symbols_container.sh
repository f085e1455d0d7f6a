# A "container": a process in its own mount and pid namespaces, chrooted
# into a folder holding its static binary, is pid 1 there and writes its
# JIT map as /tmp/perf-1.map inside the chroot. A system-wide recording must
# name its native function (binary opened through /proc/PID/root: the path
# in its MMAP2 records does not exist outside) and its JIT code (the map
# found under the pid the process sees itself as).
#
# kp-e2e: whole-machine (it samples every CPU: no other end-to-end test
# runs beside it; tests/CMakeLists.txt)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

[ "$(id -u)" -eq 0 ] || skip "needs root for unshare, chroot and -a"
command -v unshare >/dev/null && command -v chroot >/dev/null || skip "unshare/chroot not installed (util-linux, coreutils)"
src=$KP_TESTS/workloads/jitcopy.c
comm=jitns_kprof

root=$T/root
mkdir -p "$root/tmp"
chmod 1777 "$root/tmp"
"$CC" -static -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$root/$comm" "$src" 2>"$T/cc.err" ||
	skip "cannot link a static binary (no libc.a?): $(head -1 "$T/cc.err")"
unshare --mount --pid --fork --mount-proc true 2>"$T/unshare.err" ||
	skip "unshare --mount --pid is not permitted here: $(head -1 "$T/unshare.err")"
[ ! -e "/$comm" ] || skip "/$comm exists outside the chroot; the test would prove nothing"

run_contained() { # seconds
	unshare --mount --pid --fork --mount-proc chroot "$root" "/$comm" "$1"
}

assert_named() { # folded file, label
	local f=$1 what=$2 total native jit stale
	total=$(count_matching "$f" "^$comm;")
	native=$(count_matching "$f" "^$comm;(.*;)?main;native_spin_kprof\$")
	jit=$(count_matching "$f" "^$comm;(.*;)?main;run_jit_kprof;kprof_jit_hot_spin_\\[j\\]\$")
	echo "$what: $total samples of $comm; native $native, JIT $jit"
	show_top "$f" 3
	check "$what: the contained process is sampled ($total)" [ "$total" -ge 100 ]
	check "$what: main;native_spin_kprof named through /proc/PID/root (>= 15%)" at_least_pct "$native" "$total" 15
	check "$what: kprof_jit_hot_spin_[j] named from /tmp/perf-1.map inside the chroot (>= 20%)" \
		at_least_pct "$jit" "$total" 20
	check "$what: the stale map entry never appears" lacks "$f" STALE
}

# 1. the process starts during the recording: its MMAP2 records carry the
# path as it sees it (/jitns_kprof), and it exits (taking its namespace and
# /proc/PID/root with it) before the recording ends.
"$KPROF" -a -F 299 -f folded --annotate -o "$T/start.folded" sleep 3 2>"$T/err" &
kp=$!
sleep 0.5
run_contained 1.5 >"$T/out1"
wait $kp
check "started during the recording: exit status 0" [ $? -eq 0 ]
check "the workload was pid 1 in its namespace" grep -qx 'pid 1' "$T/out1"
check "its map is /tmp/perf-1.map inside the chroot" grep -q kprof_jit_hot_spin "$root/tmp/perf-1.map"
cat "$T/err"
assert_named "$T/start.folded" "started during the recording"

# 2. the process runs before and after the recording: kprof learns of it
# from /proc and its map is read while it lives.
rm -f "$root/tmp/perf-1.map"
run_contained 3.5 >"$T/out2" &
bg=$!
sleep 0.5
"$KPROF" -a -F 299 -f folded --annotate -o "$T/running.folded" sleep 2 2>"$T/err"
check "running before the recording: exit status 0" [ $? -eq 0 ]
wait $bg
assert_named "$T/running.folded" "running before the recording"
finish
