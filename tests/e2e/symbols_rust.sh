# Rust names demangled, in both manglings: v0 (rustc's default now) and
# legacy (_ZN...17h<hash>E, what older compilers and most crates on
# crates.io still produce). No ::h<hash> suffix, no [crate-hash]
# disambiguator; the generic method keeps its type.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

rustc=$(command -v rustc || echo "$HOME/.cargo/bin/rustc")
[ -x "$rustc" ] || skip "rustc is not installed (not in PATH nor ~/.cargo/bin)"
src=$KP_TESTS/workloads/rust/hot.rs
rflags=(--crate-name kprof_rust -O -g -C force-frame-pointers=yes)

builds=()
if "$rustc" "${rflags[@]}" -C symbol-mangling-version=v0 -o "$T/rust_v0" "$src" 2>"$T/rustc.err"; then
	builds+=(rust_v0)
else
	echo "SKIP: no v0-mangled build (rustc 1.59 or later): $(head -1 "$T/rustc.err")"
fi
# legacy mangling needs -Z unstable-options on a recent stable rustc
if "$rustc" "${rflags[@]}" -C symbol-mangling-version=legacy -o "$T/rust_legacy" "$src" 2>/dev/null ||
	RUSTC_BOOTSTRAP=1 "$rustc" "${rflags[@]}" -Z unstable-options -C symbol-mangling-version=legacy \
		-o "$T/rust_legacy" "$src" 2>"$T/rustc.err"; then
	builds+=(rust_legacy)
else
	echo "SKIP: no legacy-mangled build: $(head -1 "$T/rustc.err")"
fi
check "at least one mangling could be built" [ "${#builds[@]}" -ge 1 ]

for b in "${builds[@]+"${builds[@]}"}"; do
	f=$T/$b.folded
	"$KPROF" -F 499 -f folded --annotate -o "$f" -- "$T/$b" 1.2 2>"$T/err"
	check "$b: exit status 0" [ $? -eq 0 ]
	total=$(count_matching "$f" "^$b;")
	# the function itself, then maybe frames inlined into it (core's
	# iterator and comparison code)
	plain=$(count_matching "$f" "^$b;(.*;)?kprof_rust::main;kprof_rust::spin_rust_kprof(;[^;]*_\\[i\\])*\$")
	case $b in
	rust_v0) gname='<kprof_rust::Spinner<u32>>::spin_generic_kprof' ;;
	*) gname='kprof_rust::Spinner<T>::spin_generic_kprof' ;;
	esac
	gre=$(printf '%s' "$gname" | sed 's/[][\.*^$()+?{}|]/\\&/g')
	generic=$(count_matching "$f" "^$b;(.*;)?kprof_rust::main;$gre(;[^;]*_\\[i\\])*\$")
	echo "$b: $total samples; kprof_rust::spin_rust_kprof $plain, $gname $generic"
	show_top "$f" 2
	check "$b: at least 100 samples ($total)" [ "$total" -ge 100 ]
	# each gets half of the CPU time (hot.rs splits it by the thread's CPU
	# time); 20% is a margin neither load nor this CPU's loop costs can cross
	check "$b: kprof_rust::main;kprof_rust::spin_rust_kprof (>= 20%)" at_least_pct "$plain" "$total" 20
	check "$b: kprof_rust::main;$gname (>= 20%)" at_least_pct "$generic" "$total" 20
	check "$b: no ::h<hash> suffix" lacks "$f" '::h[0-9a-f]{16}'
	check "$b: no [crate-hash] disambiguator" lacks "$f" '\[[0-9a-f]{8,}\]'
	check "$b: no mangled name is left" lacks "$f" '(^|;)(_R|_ZN)[A-Za-z0-9_$.]+'
	check "$b: std's frames are demangled too" grep -qE '^[^ ]*;std::rt::lang_start_internal;' "$f"
done
finish
