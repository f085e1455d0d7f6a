# A system-wide recording sees a busy background process, and its .kprof
# renders as the recording did, byte for byte (kernel frames, many
# processes, mappings, source lines); a syscall-heavy command shows its
# kernel frames. A whole-machine pprof names no program as its main file
# (go tool pprof's "File:"): the kernel's mapping comes first, as perf's
# converters write it, also when written again from the .kprof; a -p run's
# is still the program.
#
# kp-e2e: whole-machine (it samples every CPU: no other end-to-end test
# runs beside it; tests/CMakeLists.txt)
. "$(dirname "$0")/lib.bash"

"$KP_WORKLOADS/spin_fp" 4 &
bg=$!
sleep 0.3
"$KPROF" -a -F 199 -f folded -o "$T/sys.folded" sleep 2 2>"$T/err"
check "exit status 0" [ $? -eq 0 ]
wait $bg
busy=$(count_matching "$T/sys.folded" '^spin_fp;(.*;)?main;spin_outer;spin_middle;spin_leaf$')
total=$(total_count "$T/sys.folded")
echo "system-wide: $total samples, $busy in the background spinner"
# one busy process gets a CPU's worth of samples (half of them on an idle
# 2-CPU machine; less when other work competes)
check "the background spinner is seen" [ "$busy" -ge 100 ]
check "summary counts processes" grep -qE '[0-9]+ processes' "$T/err"

mapfile -t o < <(record_outputs "$T/sys")
"$KPROF" -a -F 499 "${o[@]}" -- sleep 1 2>"$T/err"
check "the machine's .kprof: folded, SVG and top as recorded" same_as_recorded "$T/sys"
ls -l "$T"/sys.* | awk '{ print "  " $5 " " $NF }'

# pprof's main file: the busiest program when recorded alone, none of them
# for the whole machine
"$KP_WORKLOADS/spin_fp" 60 &
bg=$!
at_exit "kill $bg 2>/dev/null"
sleep 0.3
"$KPROF" -a -F 199 -o "$T/all.pb.gz" -o "$T/all.kprof" -- sleep 0.8 2>"$T/err"
check "-a to pprof: exit status 0 ($(head -c 300 "$T/err"))" [ $? -eq 0 ]
"$KPROF" -p "$bg" -d 1 -F 199 -o "$T/p.pb.gz" 2>"$T/err"
check "-p to pprof: exit status 0 ($(head -c 300 "$T/err"))" [ $? -eq 0 ]
kill $bg
wait $bg 2>/dev/null
"$KPROF" report -o "$T/re.pb.gz" "$T/all.kprof" 2>"$T/err"
for f in all re p; do
	go tool pprof -top "$T/$f.pb.gz" 2>"$T/pprof.err" | grep '^File:' >"$T/$f.file"
	echo "$f.pb.gz: $(cat "$T/$f.file") $(head -c 200 "$T/pprof.err")"
done
check "-a: go tool pprof's File is the kernel ($(cat "$T/all.file"))" grep -qx 'File: \[kernel.kallsyms\]' "$T/all.file"
check "-a, written again from the .kprof: the kernel ($(cat "$T/re.file"))" grep -qx 'File: \[kernel.kallsyms\]' "$T/re.file"
check "-p: the program ($(cat "$T/p.file"))" grep -qx 'File: spin_fp' "$T/p.file"

"$KPROF" -F 499 -f folded --annotate -o "$T/k.folded" -- "$KP_WORKLOADS/syscalls_fp" 1.5 2>/dev/null
total=$(count_matching "$T/k.folded" '^syscalls_fp;')
# libc's read() has no frame pointer, so a frame-pointer walk skips its
# caller (sys_reader) as perf's does; the kernel frames must be there
kern=$(count_matching "$T/k.folded" '^syscalls_fp;(.*;)?main;(.*;)?(__read|read|sys_reader);(.*;)?[^;]*_\[k\]$')
echo "syscalls: $total samples, $kern ending in kernel frames under read"
check "kernel frames under the syscall site" at_least_pct "$kern" "$total" 50
check "the read path is named" grep -qE '(ksys_read|vfs_read|read_zero|__x64_sys_read)_\[k\]' "$T/k.folded"
finish
