# Whole off-CPU stacks of a program built without frame pointers
# (tests/workloads/offcpu.c, "exact"): three functions called from main
# wait 0.3 s each, blocked_in_futex on a mutex another thread holds,
# blocked_in_pipe on a pipe another thread writes, blocked_in_fsync in
# fdatasync. Each wait's stack is exactly
#   comm;_start;__libc_start_main;__libc_start_call_main;main;FUNCTION;
#   libc's frames (the mutex's lock, read, fdatasync);
#   the kernel's (futex_wait..., ...pipe_read, ...sync...) down to the
#   scheduler's;
#   the marker of its kind: sleeping for the mutex and the pipe,
#   uninterruptible for fdatasync (blocked without tracefs)
# and its time is what the function measured off CPU. fdatasync's loop
# switches a few thousand times a second, past --switch-freq's default,
# where the profile is an estimate (offcpu_shares checks it): here
# --switch-freq 0 stacks every switch, so each wait has the stack it began
# at and the profile holds every wait's exact time. Both ways of timing waits are checked: in the kernel (BPF,
# the default as root) and from perf's SWITCH records.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/offcpu_lib.bash"

kind_sleep=blocked kind_disk=blocked
if tracefs_ready; then kind_sleep=sleeping kind_disk=uninterruptible; fi


# stacks FUNC LIBC_RE KERNEL_RE KIND: prints "ALL WHOLE WAITING EXACT", the
# counts of the stacks through main;FUNC, of those whole (from _start),
# of those not preempted, and of those exactly as above
stacks() {
	awk -v fn="$1" -v libc="$2" -v kern="$3" -v marker="[off-cpu: $4]" '
	function whole() {
		return f[2] == "_start" && f[3] ~ /^__libc_start_main/ &&
			f[4] == "__libc_start_call_main" && f[5] == "main" && f[6] == fn
	}
	function exact(  i, user, kernel) {
		if (!whole() || f[k] != marker || f[k - 1] !~ /^_*schedule_\[k\]$/)
			return 0
		# libc (user frames, some inlined), then only kernel frames
		for (i = 7; i < k && f[i] !~ /_\[k\]$/; i++)
			if (f[i] ~ libc) user = 1
		for (; i < k; i++) {
			if (f[i] !~ /_\[k\]$/) return 0
			if (f[i] ~ kern) kernel = 1
		}
		return user && kernel
	}
	{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		if (index(line, ";main;" fn ";") == 0) next
		all += n
		if (whole()) w += n
		if (f[k] == "[off-cpu: preempted]") next
		waiting += n
		if (exact()) ex += n
	}
	END { printf "%.0f %.0f %.0f %.0f\n", all, w, waiting, ex }' "$f"
}

# expect FUNC LIBC_RE KERNEL_RE KIND PCT: PCT% of FUNC's waits (its time
# off CPU but preempted) have the exact stack, and its time is what it
# measured
expect() {
	local fn=$1 all whole waiting exact want sw
	read -r all whole waiting exact <<<"$(stacks "$1" "$2" "$3" "$4")"
	want=$(acct_off "$T/out" "$fn")
	sw=$(acct "$T/out" "$fn" 4)
	check "$fn: waited $(seconds "$all" "$unit") s, it measured ${want:-?} s off CPU ($sw switches)" \
		between "$(seconds "$all" "$unit")" \
		"$(awk -v w="${want:-9}" -v n="${sw:-0}" 'BEGIN { print w * 0.97 - 0.005 - n * 25e-6 }')" \
		"$(awk -v w="$(acct "$T/out" "$fn")" 'BEGIN { print w * 1.03 + 0.005 }')"
	check "$fn: its stacks are whole ($whole of $all counts)" at_least_pct "$whole" "$all" 99
	check "$fn: not only preempted ($waiting counts)" [ "$waiting" -gt 0 ]
	check "$fn: $5% of its waits are main;$fn;libc ($2);kernel ($3);schedule;[off-cpu: $4] ($exact of $waiting)" \
		at_least_pct "$exact" "$waiting" "$5"
	[ "$exact" -lt "$waiting" ] && grep -F ";main;$fn;" "$f" | grep -vF "[off-cpu: preempted]" | sort -t' ' -k2 -rn | head -3
	return 0
}

for src in bpf perf; do
	f=$T/exact-$src.folded
	"$KPROF" --off-cpu --switch-source "$src" --switch-freq 0 -f folded --annotate -o "$f" -- "$OFFCPU" exact "$T" \
		>"$T/out" 2>"$T/err"
	check "$src: exit status 0" [ $? -eq 0 ]
	cat "$T/out" "$T/err"
	check "$src: the waits were timed by $src" \
		grep -qE "\(($([ "$src" = bpf ] && echo bpf:sched_switch || echo 'sched:sched_switch|context-switches'))\)" "$T/err"
	read -r waits secs <<<"$(offcpu_line "$T/err")"
	unit=$(counts_a_second "$f" "${secs:-0}")
	check "$src: the profile holds the summary's ${secs:-?} s" [ -n "$unit" ]
	unit=${unit:-1e9}
	# one wait each on the mutex and the pipe; fdatasync's thousands, but
	# those in pwrite
	expect blocked_in_futex 'pthread_mutex_lock|lll_lock_wait' '^_*futex_wait' "$kind_sleep" 100
	expect blocked_in_pipe '^(__)?(libc_)?read' 'pipe_read' "$kind_sleep" 100
	expect blocked_in_fsync 'fdatasync' 'sync' "$kind_disk" 90
done
finish
