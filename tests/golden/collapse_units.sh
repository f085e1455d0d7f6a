#!/usr/bin/env bash
# What the counts of `kprof collapse` are, carried to `kprof flamegraph`:
# perf script of cpu-clock with periods gives counts in nanoseconds, of
# cycles counts of cycles, without periods samples. The plain output stays
# stackcollapse-perf.pl's (no extra line: flamegraph.pl reads it clean) and
# stderr names the unit; --header writes "# countname: UNIT" first, which
# kprof flamegraph takes as its --countname (an explicit --countname wins).
set -u
: "${KPROF:?}" "${KP_TMP:?}"
T=$KP_TMP/collapse_units
rm -rf "$T" && mkdir -p "$T"
fails=0
check() { # description command...
	local what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

script() { # event period: two samples of perf script text
	local ev=$1 per=$2
	printf 'bench 100/100 [000] 10.000000: %s %s:\n' "$per" "$ev"
	printf '\t    55d0 leaf+0x10 (/usr/bin/bench)\n\t    55e0 main+0x20 (/usr/bin/bench)\n\n'
	printf 'bench 100/100 [000] 10.001000: %s %s:\n' "$per" "$ev"
	printf '\t    55e0 main+0x20 (/usr/bin/bench)\n\n'
}
script cpu-clock:ppp 1001001 >"$T/clock.txt"
script cycles:u 250000 >"$T/cycles.txt"
script cpu-clock "" >"$T/plain.txt"

"$KPROF" collapse "$T/clock.txt" >"$T/clock.folded" 2>"$T/clock.err"
check "plain collapse: exit 0, folded lines only" \
	[ $? -eq 0 -a "$(cat "$T/clock.folded")" = $'bench;main 1001001\nbench;main;leaf 1001001' ]
check "plain collapse: stderr names nanoseconds and --countname ns ($(cat "$T/clock.err"))" \
	grep -q 'nanoseconds.*--countname ns' "$T/clock.err"

"$KPROF" collapse --header "$T/clock.txt" >"$T/clock.h.folded" 2>"$T/clock.h.err"
check "--header: first line '# countname: ns' ($(head -1 "$T/clock.h.folded"))" \
	[ $? -eq 0 -a "$(head -1 "$T/clock.h.folded")" = "# countname: ns" ]
check "--header: then the same folded lines" \
	cmp -s <(tail -n +2 "$T/clock.h.folded") "$T/clock.folded"
check "--header: nothing on stderr" [ ! -s "$T/clock.h.err" ]

"$KPROF" collapse --header "$T/clock.txt" | "$KPROF" flamegraph >"$T/clock.svg" 2>"$T/fg.err"
check "collapse --header | flamegraph: the SVG counts ns" grep -q 'countname: "ns"' "$T/clock.svg"
check "collapse --header | flamegraph: no 'samples' in the titles" \
	sh -c "! grep -q '[0-9] samples' '$T/clock.svg'"
check "collapse --header | flamegraph: no warning ($(cat "$T/fg.err"))" [ ! -s "$T/fg.err" ]
"$KPROF" flamegraph --countname us "$T/clock.h.folded" >"$T/us.svg" 2>/dev/null
check "--countname wins over the header" grep -q 'countname: "us"' "$T/us.svg"

"$KPROF" collapse --header "$T/cycles.txt" >"$T/cycles.folded" 2>/dev/null
check "cycles:u with periods: '# countname: cycles'" \
	[ "$(head -1 "$T/cycles.folded")" = "# countname: cycles" ]
"$KPROF" flamegraph "$T/cycles.folded" >"$T/cycles.svg" 2>/dev/null
check "the SVG counts cycles" grep -q 'countname: "cycles"' "$T/cycles.svg"

"$KPROF" collapse "$T/plain.txt" >"$T/plain.folded" 2>"$T/plain.err"
check "no periods: samples, nothing on stderr ($(cat "$T/plain.err"))" [ ! -s "$T/plain.err" ]
"$KPROF" collapse --header "$T/plain.txt" >"$T/plain.h.folded" 2>/dev/null
check "no periods: '# countname: samples'" [ "$(head -1 "$T/plain.h.folded")" = "# countname: samples" ]

# the line as any writer puts it, read by kprof flamegraph
printf 'x;y 3\n# countname: ns\n' | "$KPROF" flamegraph >"$T/hand.svg" 2>/dev/null
check "a '# countname: ns' line names the SVG's counts" grep -q 'countname: "ns"' "$T/hand.svg"

# a hostile unit is not taken (the SVG's text and script carry it)
printf '# countname: a"<b>\nx;y 3\n' | "$KPROF" flamegraph >"$T/bad.svg" 2>/dev/null
check "a unit of other bytes is ignored: samples" grep -q 'countname: "samples"' "$T/bad.svg"

echo "$fails failed"
[ "$fails" -eq 0 ]
