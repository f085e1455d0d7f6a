# Inline frames from DWARF: one always_inline function inlined into its
# caller, and two nested ones (inl_inner_kprof inlined into inl_outer_kprof
# inlined into inl_caller_kprof). Each is a frame of its own under its
# caller, in call order, marked _[i]; --no-inline removes them and the
# samples fall to the function that holds the code. A copy without
# .debug_aranges (optional; clang emits none by default) has the same
# frames: the units are then found by their own ranges.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

objcopy --remove-section=.debug_aranges "$KP_WORKLOADS/inline_fp" "$T/inl_noaranges"
check "the copy has no .debug_aranges" sh -c "! LC_ALL=C readelf -S '$T/inl_noaranges' | grep -q debug_aranges"
for w in inline_fp inline_nofp inl_noaranges; do
	bin=$KP_WORKLOADS/$w
	[ -e "$bin" ] || bin=$T/$w
	"$KPROF" -F 499 -f folded --annotate -o "$T/$w.folded" -- "$bin" 1.2 2>"$T/err"
	check "$w: exit status 0" [ $? -eq 0 ]
	total=$(count_matching "$T/$w.folded" "^$w;")
	single=$(count_matching "$T/$w.folded" "^$w;(.*;)?inl_single_caller_kprof;inl_single_kprof_\\[i\\]\$")
	nested=$(count_matching "$T/$w.folded" "^$w;(.*;)?inl_caller_kprof;inl_outer_kprof_\\[i\\];inl_inner_kprof_\\[i\\]\$")
	echo "$w: $total samples; $single in inl_single_caller_kprof;inl_single_kprof_[i]," \
		"$nested in inl_caller_kprof;inl_outer_kprof_[i];inl_inner_kprof_[i]"
	show_top "$T/$w.folded" 2
	check "$w: at least 100 samples ($total)" [ "$total" -ge 100 ]
	# inline.c gives each caller half of its CPU time
	check "$w: inl_single_caller_kprof;inl_single_kprof_[i] carries >= 25%" at_least_pct "$single" "$total" 25
	check "$w: inl_caller_kprof;inl_outer_kprof_[i];inl_inner_kprof_[i] carries >= 25%" at_least_pct "$nested" "$total" 25
	check "$w: the two exact stacks carry >= 80%" at_least_pct "$((single + nested))" "$total" 80
	check "$w: the callers are not marked inline" lacks "$T/$w.folded" 'inl_(single_)?caller_kprof_\[i\]'
done
# the frame-pointer build walks to main as well
main=$(count_matching "$T/inline_fp.folded" '^inline_fp;(.*;)?main;(inl_single_caller_kprof;inl_single_kprof_\[i\]|inl_caller_kprof;inl_outer_kprof_\[i\];inl_inner_kprof_\[i\])$')
check "inline_fp: main is the callers' caller (>= 80%)" at_least_pct "$main" "$(count_matching "$T/inline_fp.folded" '^inline_fp;')" 80

# without --annotate the names are plain
"$KPROF" -F 299 -f folded -o "$T/plain.folded" -- "$KP_WORKLOADS/inline_fp" 0.5 2>/dev/null
check "without --annotate: inl_single_caller_kprof;inl_single_kprof" \
	grep -qE '^inline_fp;(.*;)?inl_single_caller_kprof;inl_single_kprof [0-9]+$' "$T/plain.folded"
check "without --annotate: inl_caller_kprof;inl_outer_kprof;inl_inner_kprof" \
	grep -qE '^inline_fp;(.*;)?inl_caller_kprof;inl_outer_kprof;inl_inner_kprof [0-9]+$' "$T/plain.folded"

# --no-inline: the inlined functions vanish, the caller is the leaf
"$KPROF" -F 499 -f folded --annotate --no-inline -o "$T/noinl.folded" -- "$KP_WORKLOADS/inline_fp" 1 2>/dev/null
total=$(count_matching "$T/noinl.folded" '^inline_fp;')
leaf=$(count_matching "$T/noinl.folded" '^inline_fp;(.*;)?main;inl_(single_)?caller_kprof$')
echo "--no-inline: $total samples, $leaf with main;inl_caller_kprof or main;inl_single_caller_kprof as the leaf"
check "--no-inline: the callers are the leaves of >= 80%" at_least_pct "$leaf" "$total" 80
check "--no-inline: no inlined function named" lacks "$T/noinl.folded" 'inl_(inner|outer|single)_kprof'
check "--no-inline: no _[i] frame at all" lacks "$T/noinl.folded" '_\[i\]'
finish
