# Stripped programs (Debian strips .symtab): a function no symbol names is
# named MODULE+0xSTART, START where its unwind table (.eh_frame) says it
# starts (symbolize/fde_start.h). tests/workloads/statics.c's static hot
# functions, built without frame pointers, recorded unstripped and as a
# copy stripped as dh_strip strips a program: in the stripped run they are
# statics+0xSTART, every START the address nm gives a function of the
# unstripped build, and its stacks, mapped through nm, have the shape of
# the unstripped run's (at most 5% of the samples apart). Then Debian's own
# bash, busy in a shell loop, recorded system-wide: at most 2% of its
# samples have a frame nothing named.
#
# kp-e2e: whole-machine (the bash loop is recorded with -a: no other
# end-to-end test runs beside it; tests/CMakeLists.txt)
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

command -v nm >/dev/null && command -v strip >/dev/null || skip "no binutils (nm, strip)"
mkdir -p "$T/plain" "$T/stripped"
cp "$KP_WORKLOADS/statics_nofp" "$T/plain/statics"
strip --remove-section=.comment --remove-section=.note -o "$T/stripped/statics" "$T/plain/statics"
check "the copy has no .symtab" sh -c "! LC_ALL=C readelf -S '$T/stripped/statics' | grep -q '\.symtab'"

# -F 2999 for 1 s of the workload's CPU time: about 3000 samples a run.
# --no-inline: the unstripped build's DWARF would add inline frames
# (kp_seconds) the stripped copy cannot have.
for v in plain stripped; do
	"$KPROF" -F 2999 --no-cache --no-inline -f folded -o "$T/$v.folded" -- "$T/$v/statics" 1 \
		2>"$T/$v.err"
	check "$v: exit status 0" [ $? -eq 0 ]
done
# the unstripped build's functions: ADDRESS (hex, no leading zeros, as
# kprof prints it) and name
nm "$T/plain/statics" | awk '$2 ~ /^[tTwW]$/ { a = $1; sub(/^0+/, "", a); print (a == "" ? "0" : a), $3 }' >"$T/nm"
check "nm lists the unstripped build's functions" grep -q ' st_hash$' "$T/nm"

# Every statics+0xSTART of the stripped run: its START and its nm name.
grep -oE 'statics\+0x[0-9a-f]+' "$T/stripped.folded" | sort -u >"$T/starts"
echo "stripped run's statics+0x frames: $(tr '\n' ' ' <"$T/starts")"
read -r nstarts nonstart < <(awk 'NR == FNR { nm[$1] = $2; next }
	{ a = $1; sub(/^statics\+0x/, "", a); n++; if (!(a in nm)) { bad++; print "not a start: " $1 > "/dev/stderr" } }
	END { print n + 0, bad + 0 }' "$T/nm" "$T/starts")
check "the stripped run names functions statics+0xSTART ($nstarts)" [ "$nstarts" -ge 5 ]
check "every START is a function start of the unstripped build ($nonstart not)" [ "$nonstart" -eq 0 ]
# the summary's line for the file: how its frames were named, and what
# would name them by name
check "the summary says statics' frames are named by their start, and what would name them" \
	sh -c "grep -qE '^kprof: .*/stripped/statics: of its [0-9]+ frames [0-9.]+% named by symbols, [1-9][0-9.]*% by unwind-table start \(statics\+0x\.\.\.\), [0-9.]+% unknown\$' '$T/stripped.err' &&
		grep -q '^kprof: debug symbols would name the rest of that file' '$T/stripped.err'"
# two stripped programs in one run: a line each, the hint said once
strip -o "$T/stripped/spin" "$KP_WORKLOADS/spin_fp"
"$KPROF" -F 999 --no-cache --no-inline -f folded -o "$T/two.folded" -- \
	sh -c "'$T/stripped/statics' 0.5; '$T/stripped/spin' 0.5" 2>"$T/two.err"
check "two stripped programs: a summary line each" \
	sh -c "grep -q 'stripped/statics: of its' '$T/two.err' && grep -q 'stripped/spin: of its' '$T/two.err'"
check "two stripped programs: the debug symbols hint said once ($(grep -c 'debug symbols would name' "$T/two.err"))" \
	[ "$(grep -c 'debug symbols would name' "$T/two.err")" -eq 1 ]
check "... and has no such line for the unstripped build" \
	sh -c "! grep -q 'plain/statics: of its' '$T/plain.err'"

# Each run's stacks as the program's own frames see them: each stack cut
# after its last frame of statics (what libc, the vDSO and the kernel do
# below it varies from run to run in many small stacks), the stripped
# run's statics+0xSTART replaced by their nm names; then half the sum over
# these stacks of the difference of their shares (with three stacks
# holding a quarter to a half each and 3000 samples a run, about 2% by
# chance; 5% is four standard deviations past that).
own_stacks() { # folded
	awk 'NR == FNR { nm["statics+0x" $1] = $2; own[$2] = 1; next }
	{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
	  k = split(line, f, ";"); out = f[1]; cut = f[1]
	  for (i = 2; i <= k; i++) {
		if (f[i] in nm) f[i] = nm[f[i]]
		out = out ";" f[i]
		if (f[i] in own) cut = out
	  }
	  print cut " " n }' "$T/nm" "$1"
}
own_stacks "$T/plain.folded" >"$T/plain.own"
own_stacks "$T/stripped.folded" >"$T/stripped.own"
read -r apart common < <(awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
	FILENAME == ARGV[1] { a[s] += n; ta += n; next } { b[s] += n; tb += n }
	END { for (s in a) u[s]; for (s in b) u[s]
	      for (s in u) { d = a[s] / ta - b[s] / tb; tv += d < 0 ? -d : d }
	      printf "%.4f %d\n", tv / 2, length(u) }' "$T/plain.own" "$T/stripped.own")
echo "the runs' own stacks are $apart of the samples apart ($common distinct stacks)"
for v in plain stripped; do
	echo "$v:"
	awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); c[s] += n } END { for (s in c) print c[s], s }' \
		"$T/$v.own" | sort -nr | head -6
done
check "the same shape, once mapped through nm (<= 5% apart: $apart)" \
	awk -v a="$apart" 'BEGIN { exit !(a <= 0.05) }'
total=$(total_count "$T/stripped.own")
for fn in "st_parse;st_hash" st_parse st_eval; do
	n=$(count_matching "$T/stripped.own" "^statics;(.*;)?main;st_run;$fn")
	check "main;st_run;$fn named in the stripped run (>= 15%: $n of $total)" at_least_pct "$n" "$total" 15
done
# main is not exported either: statics+0xMAIN in the stripped run
main=statics+0x$(awk '$2 == "main" { print $1 }' "$T/nm")
grep -F ";$main;" "$T/stripped.folded" >"$T/under-main.folded"
read -r unk all < <(frames_unknown "$T/under-main.folded" '^statics$')
check "no [unknown] frame under main ($main) in the stripped run ($unk of $all frames)" \
	[ "$all" -gt 1000 -a "$unk" -eq 0 ]

# Debian's bash, stripped, in a shell loop: its static functions named
# bash+0xSTART, hardly a sample with an unknown frame
record_beside_bash 'i=0; while :; do i=$((i+1)); done' 999 "$T/sys.folded" "$T/sys.err"
check "system-wide: exit status 0" [ "$status" -eq 0 ]
read -r bunk btotal < <(awk -v root="bash-$loop" '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
	k = split(line, f, ";"); if (f[1] != root) next; total += n
	for (i = 2; i <= k; i++) if (f[i] ~ /^\[unknown/) { unk += n; break } }
	END { print unk + 0, total + 0 }' "$T/sys.folded")
echo "bash loop: $btotal samples, $bunk with an unknown frame"
show_matching "$T/sys.folded" "^bash-$loop;.*bash\\+0x" 2
check "the loop is sampled ($btotal)" [ "$btotal" -ge 100 ]
check "bash's static functions are named bash+0xSTART" grep -qE "^bash-$loop;.*;bash\\+0x[0-9a-f]+(;| )" "$T/sys.folded"
check "<= 2% of bash's samples have an unknown frame ($bunk of $btotal)" \
	awk -v u="$bunk" -v t="$btotal" 'BEGIN { exit !(u <= t * 0.02) }'
finish
