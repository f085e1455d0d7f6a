#!/usr/bin/env bash
# kprof diff as a CI gate on a real benchmark (tests/workloads/diffbench.c:
# four functions of equal, fixed work; hash=60 makes db_hash_kprof do 60%
# more, 25% -> 34.8% of the time). Six recordings at the same speed and one
# with the slower function, 2.5 s of CPU each at 999 Hz (about 2,500
# samples):
#  - the five same-speed pairs pass --fail-above 5 (exit 0, no regression);
#  - the slower build fails (exit 3) and names db_hash_kprof, and only it;
#  - the other way round (a speed-up) is a significant shrink, no regression;
#  - the text, JSON and SVG outputs say the same; --value cpu (shares of the
#    period) fails the same way, the test still on sample counts; folded
#    text made from a recording diffs as the recording does;
#  - different commands and events are warned about, same-build pairs not;
#  - usage errors exit 2, unreadable, truncated or foreign inputs exit 1 with
#    one line naming the file; `kprof -- diff` still profiles a program
#    called diff.
# The margins: sampling noise in a share of 25% of 2,500 samples is about
# 0.9 points, so a same-speed difference passes 5 points about one time in
# 20,000 per function, and the regression (+9.8 points) falls under 5
# about one time in 10,000.
source "$(dirname "$0")/lib.bash"
W=$KP_WORKLOADS/diffbench_fp
ext=kprof

record() { # name [diffbench args]
	local name=$1
	shift
	"$KPROF" -F 999 -o "$T/$name.$ext" -- "$W" 2.5 "$@" 2>"$T/$name.rec.err" ||
		fail "recording $name: $(cat "$T/$name.rec.err")"
}
# the field of the JSON document a python expression names
json() { # file expression
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

for i in 0 1 2 3 4 5; do
	record "same$i"
done
record slow hash=60

for i in 1 2 3 4 5; do
	"$KPROF" diff --fail-above 5 -f json -o "$T/pair$i.json" "$T/same0.$ext" "$T/same$i.$ext" \
		2>"$T/pair$i.err"
	rc=$?
	check "same-speed pair $i passes (exit $rc): $(head -c 300 "$T/pair$i.err")" [ "$rc" -eq 0 ]
	check "same-speed pair $i: nothing to warn about" [ ! -s "$T/pair$i.err" ]
	check "same-speed pair $i: no regression in the JSON" \
		[ "$(json "$T/pair$i.json" 'd["gate"]["status"], len(d["gate"]["regressions"])')" = "('pass', 0)" ]
done

"$KPROF" diff --fail-above 5 -o "$T/slow.txt" "$T/same0.$ext" "$T/slow.$ext" 2>"$T/slow.err"
rc=$?
check "the slower build fails the gate (exit $rc)" [ "$rc" -eq 3 ]
check "the regression is named on stderr, once: $(cat "$T/slow.err")" \
	[ "$(grep -c 'kprof: regression: ' "$T/slow.err")" -eq 1 ]
check "the two commands differ (hash=60), and kprof says so" \
	grep -q "^kprof: warning: .*same0.$ext and .*slow.$ext are recordings of different commands (.*diffbench_fp 2.5', '.*diffbench_fp 2.5 hash=60')" "$T/slow.err"
check "the regression named is db_hash_kprof" grep -q '^kprof: regression: db_hash_kprof: total share' "$T/slow.err"
check "the text report's gate names it" grep -q 'FAIL: 1 function grew by more than 5 points' "$T/slow.txt"
check "the text report marks its change significant" \
	grep -Eq '^ +2[0-9]\.[0-9]+% +3[0-9]\.[0-9]+% +\+[0-9.]+ +[0-9.e+-]+ \* +db_hash_kprof$' "$T/slow.txt"

"$KPROF" diff --fail-above 5 -f json "$T/same0.$ext" "$T/slow.$ext" >"$T/slow.json" 2>/dev/null
check "json: exit 3 too" [ $? -eq 3 ]
check "json: the regressions are [db_hash_kprof]" \
	[ "$(json "$T/slow.json" '[r["function"] for r in d["gate"]["regressions"]]')" = "['db_hash_kprof']" ]
check "json: db_hash_kprof's total share grew 5 to 15 points, significantly" \
	[ "$(json "$T/slow.json" '[(5 < f["total"]["change"] < 15, f["total"]["significant"]) for f in d["functions"] if f["function"] == "db_hash_kprof"]')" = "[(True, True)]" ]
# each of the other three is expected to lose about 3.3 points, but with a
# spread of some 1.2 points each: together they lose what db_hash_kprof
# gained (more than 5 points, checked above), and none grows significantly
others='[f for f in d["functions"] if f["function"] in ("db_parse_kprof", "db_render_kprof", "db_sort_kprof")]'
check "json: the other three shrank together, none grew significantly" \
	[ "$(json "$T/slow.json" "len($others), sum(f['total']['change'] for f in $others) < -5, any(f['total']['significant'] and f['total']['change'] > 0 for f in $others)")" = "(3, True, False)" ]
check "json: counts are the sample counts" \
	[ "$(json "$T/slow.json" 'd["test"]["counts"], d["test"]["correction"], d["value"]["type"]')" = "('samples', 'holm', 'samples')" ]

# shares of cpu time (the period), the test still on sample counts
"$KPROF" diff --fail-above 5 --value cpu -f json -o "$T/cpu.json" "$T/same0.$ext" "$T/slow.$ext" 2>/dev/null
check "--value cpu: exit 3 too" [ $? -eq 3 ]
check "--value cpu: shares of cpu, counts of samples, db_hash_kprof the regression" \
	[ "$(json "$T/cpu.json" 'd["value"]["type"], d["test"]["counts"], [r["function"] for r in d["gate"]["regressions"]]')" = "('cpu', 'samples', ['db_hash_kprof'])" ]

# folded text is a profile too: made from a recording (kinds kept with
# --annotate), it diffs as the recording
"$KPROF" report --annotate -o "$T/slow.folded" "$T/slow.$ext"
"$KPROF" report --annotate -o "$T/same0.folded" "$T/same0.$ext"
"$KPROF" diff --fail-above 5 -f json -o "$T/mixed.json" "$T/same0.$ext" "$T/slow.folded" 2>/dev/null
check "recording against folded text: exit 3" [ $? -eq 3 ]
check "recording against folded text: the same shares and tests" \
	[ "$(json "$T/mixed.json" '[(f["function"], f["total"]) for f in d["functions"]]')" = "$(json "$T/slow.json" '[(f["function"], f["total"]) for f in d["functions"]]')" ]

# the other way round db_hash_kprof got faster: a significant shrink, never
# a regression (the other three's shares grow by 3.3 points, which sampling
# noise can take past 5 now and then: shares are relative, docs/diff.md)
"$KPROF" diff --fail-above 5 -f json -o "$T/rev.json" "$T/slow.$ext" "$T/same0.$ext" 2>/dev/null
check "a speed-up: db_hash_kprof's total share shrank by more than 5 points, significantly" \
	[ "$(json "$T/rev.json" '[(f["total"]["change"] < -5, f["total"]["significant"]) for f in d["functions"] if f["function"] == "db_hash_kprof"]')" = "[(True, True)]" ]
check "a speed-up: db_hash_kprof is no regression" \
	[ "$(json "$T/rev.json" '"db_hash_kprof" in [r["function"] for r in d["gate"]["regressions"]]')" = "False" ]

# the differential flame graph: NEW's shape, db_hash_kprof red, the others blue
"$KPROF" diff -o "$T/slow.svg" "$T/same0.$ext" "$T/slow.$ext" 2>/dev/null
check "svg: written (exit $?)" [ -s "$T/slow.svg" ]
"$KP_TESTS/tools/svg-frames" --fill "$T/slow.svg" >"$T/slow.frames"
check "svg: db_hash_kprof is red" \
	awk -F'\t' '$1 == "db_hash_kprof" && $6 ~ /^rgb\(255,[0-9]+,[0-9]+\)$/ && $6 != "rgb(255,255,255)" { f = 1 } END { exit !f }' "$T/slow.frames"
# (the one of the other three that lost most: each loses 3.3 points give or
# take 1.2, so one of them may by chance not shrink at all)
shrunk=$(json "$T/slow.json" "min($others, key=lambda f: f['total']['change'])['function']")
check "svg: $shrunk is blue" \
	awk -F'\t' -v fn="$shrunk" '$1 == fn && $6 ~ /^rgb\([0-9]+,[0-9]+,255\)$/ && $6 != "rgb(255,255,255)" { f = 1 } END { exit !f }' "$T/slow.frames"
check "svg: the tooltip says the change in points" \
	grep -Eq '<title>db_hash_kprof \([0-9,]+ samples, [0-9.]+%; self \+[0-9.]+, total \+[0-9.]+ points\)</title>' "$T/slow.svg"
"$KPROF" diff --base-shape -o "$T/base.svg" "$T/same0.$ext" "$T/slow.$ext" 2>/dev/null
"$KP_TESTS/tools/svg-frames" --fill "$T/base.svg" >"$T/base.frames"
check "svg --base-shape: BASE's counts, db_hash_kprof still red" \
	awk -F'\t' -v n="$(count_matching "$T/same0.folded" '.*;db_hash_kprof')" \
	'$1 == "db_hash_kprof" && $2 == n && $6 ~ /^rgb\(255,/ && $6 != "rgb(255,255,255)" { f = 1 } END { exit !f }' "$T/base.frames"

# usage and bad input
"$KPROF" diff "$T/same0.$ext" 2>"$T/usage.err"
check "one profile is a usage error (exit 2)" [ $? -eq 2 ]
"$KPROF" diff --fail-above x "$T/same0.$ext" "$T/same1.$ext" 2>/dev/null
check "a bad --fail-above is a usage error (exit 2)" [ $? -eq 2 ]
"$KPROF" diff "$T/same0.$ext" "$T/missing.$ext" 2>"$T/missing.err"
check "a missing file: exit 1" [ $? -eq 1 ]
check "a missing file: one line naming it" \
	[ "$(wc -l <"$T/missing.err")" -eq 1 -a -n "$(grep "missing.$ext" "$T/missing.err")" ]
# a recording of another event: warned about
"$KPROF" -e task-clock -F 999 -o "$T/task.$ext" -- "$W" 1 2>/dev/null
"$KPROF" diff "$T/same0.$ext" "$T/task.$ext" >/dev/null 2>"$T/event.err"
check "different events: a warning naming both" \
	grep -q "^kprof: warning: .*same0.$ext and .*task.$ext sampled different events (cpu-clock, task-clock)" "$T/event.err"
head -c "$(($(stat -c %s "$T/same1.$ext") / 2))" "$T/same1.$ext" >"$T/truncated.$ext"
"$KPROF" diff "$T/same0.$ext" "$T/truncated.$ext" 2>"$T/truncated.err"
rc=$?
check "a truncated recording: exit 1 ($rc), one line naming it: $(cat "$T/truncated.err")" \
	[ $rc -eq 1 -a "$(wc -l <"$T/truncated.err")" -eq 1 -a -n "$(grep "truncated.$ext" "$T/truncated.err")" ]
head -c 4096 /dev/urandom >"$T/garbage.bin"
"$KPROF" diff "$T/garbage.bin" "$T/same1.$ext" 2>"$T/garbage.err"
check "a foreign file: exit 1" [ $? -eq 1 ]
check "a foreign file: one line naming it: $(cat "$T/garbage.err")" \
	[ "$(wc -l <"$T/garbage.err")" -eq 1 -a -n "$(grep garbage.bin "$T/garbage.err")" ]

for bad in empty:'' zero:'a;b 0\n'; do
	printf "${bad#*:}" >"$T/${bad%%:*}.folded"
	"$KPROF" diff "$T/same1.$ext" "$T/${bad%%:*}.folded" 2>"$T/bad.err"
	rc=$?
	check "an ${bad%%:*} profile: exit 1 ($rc), one line naming it: $(cat "$T/bad.err")" \
		[ $rc -eq 1 -a "$(wc -l <"$T/bad.err")" -eq 1 -a -n "$(grep "${bad%%:*}.folded" "$T/bad.err")" ]
done
"$KPROF" diff --value nosuch "$T/same0.$ext" "$T/same1.$ext" 2>"$T/value.err"
rc=$?
check "a value the profiles lack: exit 1 ($rc), named: $(cat "$T/value.err")" \
	[ $rc -eq 1 -a -n "$(grep "no value 'nosuch'" "$T/value.err")" ]

# `kprof -- diff` profiles the program diff, and keeps its exit status
printf 'a\n' >"$T/f1"
printf 'b\n' >"$T/f2"
"$KPROF" -F 99 -o "$T/prog.folded" -- diff "$T/f1" "$T/f2" >"$T/prog.out" 2>"$T/prog.err"
check "kprof -- diff runs diff (its exit status 1)" [ $? -eq 1 ]
check "kprof -- diff: diff's output" grep -q '^< a$' "$T/prog.out"
finish
