# pprof and speedscope outputs of a real recording, read by their readers.
# One run of the inline workload (inline.c: half of its CPU time in
# main -> inl_single_caller_kprof -> inl_single_kprof (inlined), half in
# main -> inl_caller_kprof -> inl_outer_kprof -> inl_inner_kprof (both
# inlined)) written at once as pprof, speedscope and folded text:
#   - go tool pprof -top: the two inlined leaves are the top functions,
#     each marked (inline), each >= 25%, together >= 80%;
#   - -lines: the top rows are inline.c lines inside those functions;
#   - -traces: the two exact stacks, under the comm label;
#   - -raw: one location holds the inline chain as three lines, innermost
#     first, each with inline.c and a line; the workload's mapping has its
#     build-id (readelf) and [FN][FL][LN][IN]; sample types samples/count
#     and cpu/nanoseconds; the period is 1e9/F;
#   - speedscope: valid against the schema, its stacks and weights those of
#     the folded output of the same run, its cpu profile's total that of
#     pprof's cpu/nanoseconds.
# go and python3-jsonschema are needed: skipped without, failures in CI.
. "$(dirname "$0")/lib.bash"

if ! command -v go >/dev/null || ! python3 -c 'import jsonschema' 2>/dev/null; then
	if [ "${CI:-}" = true ]; then
		fail "go (golang-go) and python3-jsonschema are installed in CI"
		finish
	fi
	echo "skip: go or python3-jsonschema not installed"
	exit 77
fi
export HOME=$T/home GOCACHE=$T/home/cache PPROF_TMPDIR=$T/home GOFLAGS=
mkdir -p "$HOME"
KP_TESTS=${KP_TESTS:-$(dirname "$0")/..}
src=$KP_TESTS/workloads/inline.c
bin=$KP_WORKLOADS/inline_fp
F=499

"$KPROF" -F $F -o "$T/run.pb.gz" -o "$T/run.speedscope.json" -o "$T/run.folded" -- "$bin" 1.2 2>"$T/err"
check "kprof exit status 0" [ $? -eq 0 ]
check "the pprof file is gzip" sh -c "file '$T/run.pb.gz' | grep -q 'gzip compressed'"

pprof() { go tool pprof "$@" "$T/run.pb.gz" 2>>"$T/pprof.err"; }

# the body of an inline function in inline.c: FIRST LAST line numbers
body() {
	awk -v fn="$1" '$0 ~ fn "\\(unsigned long n\\)$" { on = 1; first = NR } on && /^}/ { print first, NR; exit }' "$src"
}
read -r inner_first inner_last < <(body inl_inner_kprof)
read -r single_first single_last < <(body inl_single_kprof)
echo "inl_inner_kprof: inline.c:$inner_first-$inner_last, inl_single_kprof: inline.c:$single_first-$single_last"

pprof -top >"$T/top"
sed -n '/flat%/,$p' "$T/top" | head -6
total=$(sed -n 's/.*Total samples = \([0-9]*\).*/\1/p' "$T/top")
row() { awk -v name="$1" '{ line = $0; sub(/^ *[0-9.]+[a-z]* +[0-9.]+% +[0-9.]+% +[0-9.]+[a-z]* +[0-9.]+% +/, "", line) } line == name { print $1; exit }' "$T/top"; }
inner=$(row "inl_inner_kprof (inline)")
single=$(row "inl_single_kprof (inline)")
check "go tool pprof -top: $total samples, >= 100" [ "${total:-0}" -ge 100 ]
# pprof takes the first mapping for the main binary: the program, not
# ld.so or libc
check "-top: the header's File is the program ($(grep '^File:' "$T/top"))" grep -qx "File: inline_fp" "$T/top"
check "-top: the first two rows are the inlined leaves" \
	sh -c "sed -n '/flat%/{n;N;p;q}' '$T/top' | grep -c -E ' inl_(inner|single)_kprof \\(inline\\)\$' | grep -qx 2"
check "-top: inl_inner_kprof (inline) has >= 25% flat (${inner:-0})" at_least_pct "${inner:-0}" "$total" 25
check "-top: inl_single_kprof (inline) has >= 25% flat (${single:-0})" at_least_pct "${single:-0}" "$total" 25
check "-top: the two carry >= 80%" at_least_pct "$((${inner:-0} + ${single:-0}))" "$total" 80

# -lines: the top row's file and line are inside the function
pprof -top -lines >"$T/lines"
sed -n '/flat%/,$p' "$T/lines" | head -4
first=$(sed -n '/flat%/{n;p;q}' "$T/lines")
echo "-lines, first row: $first"
in_body() { # row
	local re='(inl_inner_kprof|inl_single_kprof) (/[^ ]*/inline\.c):([0-9]+) \(inline\)$'
	[[ $1 =~ $re ]] || return 1
	local fn=${BASH_REMATCH[1]} file=${BASH_REMATCH[2]} n=${BASH_REMATCH[3]}
	[ "$file" -ef "$src" ] || return 1
	if [ "$fn" = inl_inner_kprof ]; then
		[ "$n" -gt "$inner_first" ] && [ "$n" -lt "$inner_last" ]
	else
		[ "$n" -gt "$single_first" ] && [ "$n" -lt "$single_last" ]
	fi
}
check "-lines: the top row is a line of inline.c inside its function" in_body "$first"

# -traces: the exact stacks under the task's comm
pprof -traces >"$T/traces"
has_trace() { # frames (leaf first) as lines
	python3 - "$T/traces" "$@" <<'PY'
import sys
blocks = open(sys.argv[1]).read().split("-----------+-")
want = sys.argv[2:]
for b in blocks:
    lines = b.splitlines()[1:]
    labels = [l.strip() for l in lines if l.strip().startswith("comm:")]
    frames = [l[13:] for l in lines if len(l) > 13 and (l[:10].strip().isdigit() or not l[:13].strip())]
    if labels == ["comm:  inline_fp"] and frames[: len(want)] == want:
        sys.exit(0)
sys.exit(1)
PY
}
check "-traces: inl_inner_kprof (inline) < inl_outer_kprof (inline) < inl_caller_kprof < main" \
	has_trace "inl_inner_kprof (inline)" "inl_outer_kprof (inline)" inl_caller_kprof main
check "-traces: inl_single_kprof (inline) < inl_single_caller_kprof < main" \
	has_trace "inl_single_kprof (inline)" inl_single_caller_kprof main

# -raw: the structure
pprof -raw >"$T/raw"
check "-raw: sample types samples/count (default) and cpu/nanoseconds" \
	grep -qx 'samples/count\[dflt\] cpu/nanoseconds' "$T/raw"
check "-raw: period type cpu nanoseconds" grep -qx 'PeriodType: cpu nanoseconds' "$T/raw"
check "-raw: period 1e9/$F ns" grep -qx "Period: $(((1000000000 + F / 2) / F))" "$T/raw"
check "-raw: one location holds the inline chain, innermost first" python3 - "$T/raw" <<'PY'
import re, sys
text = open(sys.argv[1]).read().split("Locations\n", 1)[1].split("Mappings\n", 1)[0]
locs = re.split(r"\n(?= +\d+: )", text)
want = ["inl_inner_kprof", "inl_outer_kprof", "inl_caller_kprof"]
for loc in locs:
    lines = [l.strip() for l in loc.strip().splitlines()]
    if len(lines) != 3:
        continue
    lines[0] = re.sub(r"^\d+: 0x[0-9a-f]+ M=\d+ ", "", lines[0])
    got = [re.match(r"(\S+) (\S+):(\d+) s=", l) for l in lines]
    if all(got) and [g[1] for g in got] == want and all(g[2].endswith("/inline.c") and int(g[3]) > 0 for g in got):
        sys.exit(0)
sys.exit(1)
PY
build_id=$(LC_ALL=C readelf -n "$bin" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
check "-raw: the workload's mapping: its path, build-id $build_id, functions, files, lines, inlines" \
	grep -qE "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $bin $build_id \[FN\]\[FL\]\[LN\]\[IN\]\$" "$T/raw"

# speedscope: schema, and the stacks and weights of the folded output
check "speedscope: valid against the schema" "$KP_TESTS/tools/speedscope-check" "$T/run.speedscope.json"
"$KP_TESTS/tools/speedscope-check" --folded -p 0 "$T/run.speedscope.json" >"$T/back.folded"
check "speedscope: the stacks and weights of the folded output" cmp -s "$T/back.folded" "$T/run.folded"
pprof_cpu=$(pprof -raw -sample_index=cpu | awk '/^Samples:/ { on = 1; getline; next } on && /^ +[0-9]+ +[0-9]+:/ { s += $2 } /^Locations/ { on = 0 } END { print s }')
ss_cpu=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["profiles"][1]["endValue"])' "$T/run.speedscope.json")
check "speedscope: the cpu profile's total is pprof's ($ss_cpu ns, $pprof_cpu ns)" [ "$ss_cpu" = "$pprof_cpu" ]
finish
