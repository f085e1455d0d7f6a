# Frames in the vDSO are named from the vDSO's own symbols (it is no file
# on disk: kprof reads the image of the running kernel), and samples in PLT
# stubs are named NAME@plt, as objdump does, not after the symbol that
# precedes the PLT (perf prints "_init+0x30" there). Unwound with CFI (the
# default), the vDSO function and the PLT stub keep their callers, which a
# frame-pointer walk skips (neither sets up a frame).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

clk=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
w=vdso_fp
"$KPROF" -F 499 -f folded --annotate -o "$T/$w.folded" -- "$KP_WORKLOADS/$w" 1.5 2>"$T/err"
check "exit status 0" [ $? -eq 0 ]
f=$T/$w.folded
total=$(count_matching "$f" "^$w;")
vtime=$(count_matching "$f" "^$w;(.*;)?main;vdso_time_kprof;(__vdso_time|time)\$")
# libc's clock_gettime calls the vDSO's (which also exports the weak alias
# clock_gettime): either name is right for the vDSO frame
vclock=$(count_matching "$f" "^$w;(.*;)?main;vdso_coarse_kprof;(clock_gettime;__vdso_clock_gettime|__vdso_clock_gettime|clock_gettime;clock_gettime)\$")
vunk=$(count_matching "$f" "^$w;(.*;)?main;(vdso_[a-z]+_kprof;)?(clock_gettime;)?\\[unknown[^;]*\\]\$")
plt=$(count_matching "$f" "^$w;(.*;)?main;vdso_(time|coarse)_kprof;(time|clock_gettime)@plt\$")
echo "$w ($clk clocksource): $total samples; __vdso_time $vtime, __vdso_clock_gettime $vclock, [unknown] leaf $vunk, @plt $plt"
show_top "$f" 8
check "at least 100 samples ($total)" [ "$total" -ge 100 ]
check "main;vdso_time_kprof;__vdso_time named from the vDSO (>= 5%)" at_least_pct "$vtime" "$total" 5
check "main;vdso_coarse_kprof;clock_gettime;__vdso_clock_gettime named from the vDSO (>= 5%)" at_least_pct "$vclock" "$total" 5
check "a PLT stub is not named _init (main never calls _init)" lacks "$f" ";main;_init( [0-9]+|;.*)$"
# How many samples land in the two-instruction PLT stubs depends on where
# the program and the vDSO are mapped: in about one run in six (measured,
# also with -g fp) __vdso_time takes most of the time and the stubs get
# none. So up to three more runs, each with a layout of its own, until one
# samples a stub.
for again in 1 2 3; do
	[ "$plt" -gt 0 ] && break
	"$KPROF" -F 499 -f folded --annotate -o "$T/$w.$again.folded" -- "$KP_WORKLOADS/$w" 1.5 2>>"$T/err"
	plt=$(count_matching "$T/$w.$again.folded" "^$w;(.*;)?main;vdso_(time|coarse)_kprof;(time|clock_gettime)@plt\$")
	echo "run $again more: @plt $plt"
	check "run $again more: a PLT stub is not named _init" lacks "$T/$w.$again.folded" ";main;_init( [0-9]+|;.*)$"
done
check "the PLT stub is named time@plt or clock_gettime@plt, under its caller ($plt samples)" [ "$plt" -gt 0 ]
finish
