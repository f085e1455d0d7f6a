# Whole Python stacks with CPython's perf trampolines (python -X perf,
# 3.12+): a function recursing 20 levels keeps every level, the module
# and the interpreter's C frames down to _start. The trampolines have no
# unwinding info and the interpreter keeps no frame pointer: kprof knows
# them by their bytes (docs/unwinding.md, "CPython's perf trampolines");
# before, the stack ended "bad frame" above the innermost Python frame.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

# Every python >= 3.12 on PATH and under pyenv (where CI machines have them)
pythons=()
for p in $(command -v python3.12 python3.13 python3.14 2>/dev/null) \
	"${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3.1[2-9] \
	/root/.pyenv/versions/3.1[2-9]*/bin/python3.1[2-9]; do
	[ -x "$p" ] || continue
	v=$("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
	case " ${seen:-} " in *" $v "*) continue ;; esac
	seen="${seen:-} $v"
	pythons+=("$p")
done
[ ${#pythons[@]} -gt 0 ] || skip "no python >= 3.12 (python -X perf) on PATH or under pyenv"

# whole FILE: "WHOLE SPIN": samples in spin, and of those the ones whose
# stack is whole: from _start through the module and 21 levels of f
whole() {
	awk '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		if (line !~ /;py::spin:[^;]*recurse\.py/) next
		spin += n
		if (line !~ /^[^;]*;_start;.*;py::<module>:[^;]*recurse\.py;/) next
		if (gsub(/;py::f:[^;]*recurse\.py;/, "&", line) != 21) next
		good += n
	} END { print good + 0, spin + 0 }' "$1"
}

py=$KP_TESTS/workloads/py/recurse.py
for p in "${pythons[@]}"; do
	v=$(basename "$p")
	out=$T/$v.folded
	timeout 60 "$KPROF" -F 499 -f folded -o "$out" -- "$p" -X perf "$py" 0.3 \
		>"$T/$v.out" 2>"$T/$v.err"
	check "$v: exit status 0" [ $? -eq 0 ]
	remove_map_of "$(sed -n 's/^pid //p' "$T/$v.out")"
	r=$(whole "$out")
	good=${r% *}
	spin=${r#* }
	echo "$v: $good of $spin samples in spin have their whole stack"
	check "$v: at least 20 samples in spin ($spin)" [ "$spin" -ge 20 ]
	check "$v: >= 95% of spin's samples whole, 21 levels of f ($good of $spin)" \
		at_least_pct "$good" "$spin" 95
	[ "$good" -ge "$spin" ] || grep ';py::spin:' "$out" | grep -v ';_start;' | head -3 | cut -c1-400
	check "$v -X perf: no note of missing Python frames" lacks "$T/$v.err" 'no Python function named'
done

# Without -X perf (and with a python that has none, Debian 12's 3.11) the
# summary says once what would name the Python functions.
others=("${pythons[0]}")
sys=$(PATH=/usr/bin:/bin command -v python3) && [ "$("$sys" -c 'import sys; print(sys.version_info < (3, 12))')" = True ] &&
	others+=("$sys")
for p in "${others[@]}"; do
	v=$(basename "$(readlink -f "$p")")
	timeout 60 "$KPROF" -F 499 -f folded -o "$T/plain.folded" -- "$p" "$py" 0.2 \
		>"$T/plain.out" 2>"$T/plain.err"
	check "$v without -X perf: exit status 0" [ $? -eq 0 ]
	check "$v without -X perf: the summary says once to run it with -X perf" \
		[ "$(grep -c "kprof: python3\.[0-9]*: no Python function named.*-X perf (python 3\.12" "$T/plain.err")" = 1 ]
done
finish
