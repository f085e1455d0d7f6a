#!/usr/bin/env bash
# kprof diff as a CI gate, the way the README's recipe runs it: a benchmark
# of fixed work (tests/workloads/cibench.c: parsing, a hash table bigger
# than the caches, a checksum at about 15% of the time, qsort, fsync'd
# writes; half its usual rounds here: about 550 samples a run at 999 Hz)
# recorded ten times at the same speed and five times with the checksum
# doing 60% more work, interleaved, so that whatever else the machine does
# (the rest of the suite) hits both alike:
#  - five runs against five of the same build pass --fail-above 2 (exit 0);
#  - five against five of the slower build fail (exit 3) naming
#    ci_checksum_kprof and nothing else, in one kprof diff that writes the
#    table, JSON, Markdown, JUnit, GitHub annotations and the differential
#    flame graph, which all say the same; its CPU time a run is about 1.6
#    times the base's;
#  - the time gate (--fail-above 15%) names the checksum by its CPU time a
#    run, passes the same build, refuses one run a side; the recordings
#    say their command ran to its end (end=exit);
#  - one run a side says that run-to-run variation was not measured and
#    warns that --fail-above 2 is below what one run resolves;
#  - --value cpu, folded text, and the errors of the one-file form as
#    before; a directory with no profile, with runs of other commands or
#    events, with a link planted in it; a directory of 100 runs read in
#    about the memory of one.
# The margins: with five runs a side the checksum's share moves about 0.8
# points from run to run, its growth here is 5 to 7 points (t about 8 to
# 15, where Holm's first step over the gate's family needs about 3.5, and
# the permutation test that replaces it at alpha 0.01 needs it among the 2
# most extreme of the 252 relabellings); a
# same-build pair at alpha 1e-4 needs a function to move more than 2
# points and some 5 of its standard errors.
source "$(dirname "$0")/lib.bash"
W=$KP_WORKLOADS/cibench_fp

record() { # path [cibench args]
	local path=$1
	shift
	"$KPROF" -F 999 -o "$path" -- "$W" rounds=20 dir="$T" "$@" 2>"$T/rec.err" ||
		fail "recording $path: $(cat "$T/rec.err")"
}
# the field of the JSON document a python expression names
json() { # file expression
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

mkdir -p "$T/base" "$T/same" "$T/slow"
for i in 1 2 3 4 5; do
	record "$T/base/run$i.kprof"
	record "$T/slow/run$i.kprof" checksum=60
	record "$T/same/run$i.kprof"
done

# the gate on five runs a side of the same build: it may fire falsely in
# alpha of the comparisons by design (docs/diff.md), so the test asks for
# alpha 1e-4 (a flaky test blocks every landing); the slower build's growth
# below needs nothing near that
"$KPROF" diff --fail-above 2 --alpha 0.0001 -f json -o "$T/same.json" "$T/base" "$T/same" 2>"$T/same.err"
rc=$?
check "same build, 5 + 5 runs: the gate passes (exit $rc): $(head -c 400 "$T/same.err")" [ "$rc" -eq 0 ]
check "same build: nothing to warn about but what the runs resolve" \
	[ "$(grep -vc '^kprof: warning: 5 + 5 runs resolve growths of total share from [0-9.]* points' "$T/same.err")" -eq 0 ]
check "same build: the JSON says pass, 5 + 5 runs, measured" \
	[ "$(json "$T/same.json" 'd["gate"]["status"], d["base"]["runs"], d["new"]["runs"], d["test"]["measured"]')" = "('pass', 5, 5, True)" ]

# the slower build: every output of one command
"$KPROF" diff --fail-above 2 -o - -o "$T/slow.json" -o "$T/slow.md" -o "$T/slow.xml" \
	-o "$T/slow.svg" "$T/base" "$T/slow" >"$T/slow.txt" 2>"$T/slow.err"
rc=$?
check "slower build, 5 + 5 runs: the gate fails (exit $rc)" [ "$rc" -eq 3 ] ||
	grep -E 'ci_checksum_kprof|ci_hash_kprof|runs|dispersion|prior' "$T/slow.txt" | head -12 # why, when not
check "the regression is named on stderr, once: $(cat "$T/slow.err")" \
	[ "$(grep -c 'kprof: regression: ' "$T/slow.err")" -eq 1 ]
check "the regression named is ci_checksum_kprof, with its CPU time a run" \
	grep -Eq '^kprof: regression: ci_checksum_kprof: total share .*; CPU a run [0-9.]+ -> [0-9.]+ (s|ms) \(\+[0-9]+%\)$' "$T/slow.err"
check "the two commands differ (checksum=60), and kprof says so" \
	grep -q "^kprof: warning: .*/base and .*/slow are recordings of different commands" "$T/slow.err"
check "text: the method is the measured one, over 5 + 5 runs" \
	grep -q "varied between the 5 + 5 runs" <(tr '\n' ' ' <"$T/slow.txt")
check "text: the gate names ci_checksum_kprof alone" \
	grep -q 'FAIL: 1 function whose total share grew by more than 2 points significantly' "$T/slow.txt"
check "text: what the runs can see, and the runs a side that resolve 2 points" \
	grep -Eq '^Seen: these runs catch a growth of [0-9.]+ points with 95% probability .*; ([0-9]+ runs? a side would resolve 2 points|more than)' "$T/slow.txt"
check "json: the gate is of shares, one-sided, with what it can see" \
	[ "$(json "$T/slow.json" 'd["gate"]["measure"], "one-sided" in d["gate"]["test"], d["gate"]["detectable"] > 0, d["gate"]["runs_needed"] is None or d["gate"]["runs_needed"] >= 1')" = "('share', True, True, True)" ]
check "the recordings say their command ran to its end (end=exit)" \
	[ "$(json "$T/slow.json" 'd["base"]["metadata"].get("end"), d["new"]["metadata"].get("end"), d["gate"]["ran_to_end"]')" = "('exit', 'exit', True)" ]
check "text: its change is significant, with the standard error and CPU a run" \
	grep -Eq '^ +[0-9.]+% +[0-9.]+% +\+[0-9.]+ +[0-9.]+ +[0-9.e+-]+ \* +[0-9.]+ -> [0-9.]+ (s|ms) \(\+[0-9]+%\) +ci_checksum_kprof$' "$T/slow.txt"
check "json: the regressions are [ci_checksum_kprof]" \
	[ "$(json "$T/slow.json" '[r["function"] for r in d["gate"]["regressions"]]')" = "['ci_checksum_kprof']" ]
check "json: its total share grew more than 2 points, significantly, on measured dispersion" \
	[ "$(json "$T/slow.json" '[(2 < f["total"]["change"] < 20, f["total"]["significant"], f["total"]["df"] is None or f["total"]["df"] >= 8) for f in d["functions"] if f["function"] == "ci_checksum_kprof"]')" = "[(True, True, True)]" ]
check "json: its CPU time a run grew about 60% (1.3 to 2 times)" \
	[ "$(json "$T/slow.json" '[1.3 < f["total"]["new_seconds"] / f["total"]["base_seconds"] < 2 for f in d["functions"] if f["function"] == "ci_checksum_kprof"]')" = "[True]" ]
check "markdown: the verdict and the function" \
	grep -q '^### kprof diff: FAIL, 1 regression$' "$T/slow.md"
check "markdown: a table row for ci_checksum_kprof" grep -q '^| ` ci_checksum_kprof ` | ' "$T/slow.md"
check "junit: one failure, ci_checksum_kprof's" \
	python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
f = [c.get("name") for c in r.iter("testcase") if c.find("failure") is not None]
sys.exit(0 if r.get("failures") == "1" and f == ["ci_checksum_kprof"] else 1)' "$T/slow.xml"
"$KP_TESTS/tools/svg-frames" --fill "$T/slow.svg" >"$T/slow.frames"
check "svg: ci_checksum_kprof is red" \
	awk -F'\t' '$1 == "ci_checksum_kprof" && $6 ~ /^rgb\(255,[0-9]+,[0-9]+\)$/ && $6 != "rgb(255,255,255)" { f = 1 } END { exit !f }' "$T/slow.frames"
check "svg: the tooltip says the change in points and the CPU time a run" \
	grep -Eq '<title>ci_checksum_kprof \([0-9,]+ samples, [0-9.]+%; self \+[0-9.]+, total \+[0-9.]+ points; the function: CPU a run [0-9.]+ -&gt; [0-9.]+ (s|ms), \+[0-9]+%\)</title>' "$T/slow.svg"
"$KPROF" diff --fail-above 2 -f github "$T/base" "$T/slow" >"$T/slow.gh" 2>/dev/null
check "github: exit 3, one ::error naming ci_checksum_kprof, a ::notice with the verdict" \
	[ $? -eq 3 -a "$(grep -c '^::error title=kprof diff%3A regression::ci_checksum_kprof: total share' "$T/slow.gh")" -eq 1 \
	-a "$(grep -c '^::notice title=kprof diff::FAIL: 1 function' "$T/slow.gh")" -eq 1 ]

# the time gate: CPU time a run, in percent (the checksum does 60% more
# work; the same build's runs take the same time)
"$KPROF" diff --fail-above 15% -f json -o "$T/time.json" "$T/base" "$T/slow" 2>"$T/time.err"
rc=$?
check "time gate (--fail-above 15%): the slower build fails (exit $rc): $(head -c 300 "$T/time.err")" [ "$rc" -eq 3 ]
check "time gate: ci_checksum_kprof named, of CPU time a run" \
	[ "$(json "$T/time.json" 'd["gate"]["measure"], [r["function"] for r in d["gate"]["regressions"]], [r["time_growth"] > 15 for r in d["gate"]["regressions"]]')" = "('time', ['ci_checksum_kprof'], [True])" ]
check "time gate: stderr names it by its CPU time a run" \
	grep -Eq '^kprof: regression: ci_checksum_kprof: CPU a run [0-9.]+ -> [0-9.]+ (s|ms) \(\+[0-9]+%\), more than 15%' "$T/time.err"
"$KPROF" diff --fail-above 15% --alpha 0.0001 -f json -o "$T/time-same.json" "$T/base" "$T/same" 2>/dev/null
rc=$?
check "time gate: the same build passes (exit $rc)" [ "$rc" -eq 0 ]
"$KPROF" diff --fail-above 15% "$T/base/run1.kprof" "$T/slow/run1.kprof" >/dev/null 2>"$T/time-one.err"
rc=$?
check "time gate: one run a side is refused (exit $rc): $(cat "$T/time-one.err")" \
	[ "$rc" -eq 1 ] && grep -q "needs two runs or more a side" "$T/time-one.err"

# one run a side: allowed, but the report says what it could not measure
"$KPROF" diff --fail-above 2 "$T/base/run1.kprof" "$T/slow/run1.kprof" >"$T/one.txt" 2>"$T/one.err"
rc=$?
check "one run a side: exit 0 or 3 ($rc)" [ "$rc" -eq 0 -o "$rc" -eq 3 ]
check "one run a side: the report says variation between runs was not measured" \
	grep -q "One run a side: how much shares vary between runs was not measured" <(tr '\n' ' ' <"$T/one.txt")
check "one run a side: --fail-above 2 below what it resolves is warned about: $(cat "$T/one.err")" \
	grep -q "^kprof: warning: 1 + 1 runs resolve growths of total share from [0-9.]* points .*--fail-above 2 can pass" "$T/one.err"

# shares of cpu time (the period), the test still on sample counts
"$KPROF" diff --fail-above 2 --value cpu -f json -o "$T/cpu.json" "$T/base" "$T/slow" 2>/dev/null
check "--value cpu: exit 3 too" [ $? -eq 3 ]
check "--value cpu: shares of cpu, counts of samples, ci_checksum_kprof the regression" \
	[ "$(json "$T/cpu.json" 'd["value"]["type"], d["test"]["counts"], [r["function"] for r in d["gate"]["regressions"]]')" = "('cpu', 'samples', ['ci_checksum_kprof'])" ]

# folded text is a profile too: made from the recordings (kinds kept with
# --annotate), a directory of it diffs as the recordings do (no CPU time)
mkdir -p "$T/slow-folded"
for i in 1 2 3 4 5; do
	"$KPROF" report --annotate -o "$T/slow-folded/run$i.folded" "$T/slow/run$i.kprof"
done
"$KPROF" diff --fail-above 2 -f json -o "$T/mixed.json" "$T/base" "$T/slow-folded" 2>/dev/null
check "recordings against folded text: exit 3" [ $? -eq 3 ]
check "recordings against folded text: the same shares and tests" \
	[ "$(json "$T/mixed.json" '[(f["function"], f["total"]["change"], f["total"]["p_adjusted"]) for f in d["functions"]]')" = "$(json "$T/slow.json" '[(f["function"], f["total"]["change"], f["total"]["p_adjusted"]) for f in d["functions"]]')" ]

# directories that are not runs of one build
mkdir -p "$T/empty" "$T/mixed" "$T/events" "$T/linked"
"$KPROF" diff "$T/base" "$T/empty" 2>"$T/bad.err"
rc=$?
check "a directory with no profile: exit 1 ($rc), one line naming it: $(cat "$T/bad.err")" \
	[ $rc -eq 1 -a "$(wc -l <"$T/bad.err")" -eq 1 -a -n "$(grep "empty: no profiles in the directory" "$T/bad.err")" ]
cp "$T/base/run1.kprof" "$T/base/run2.kprof" "$T/mixed/"
cp "$T/slow/run1.kprof" "$T/mixed/run3.kprof"
"$KPROF" diff "$T/base" "$T/mixed" 2>"$T/bad.err"
rc=$?
check "runs of different commands in a directory: exit 1 ($rc), one line naming both: $(cat "$T/bad.err")" \
	[ $rc -eq 1 -a "$(wc -l <"$T/bad.err")" -eq 1 -a -n "$(grep "mixed/run1.kprof and .*mixed/run3.kprof are recordings of different commands" "$T/bad.err")" ]
cp "$T/base/run1.kprof" "$T/events/"
"$KPROF" -e task-clock -F 999 -o "$T/events/run2.kprof" -- "$W" rounds=4 dir="$T" 2>/dev/null
"$KPROF" diff "$T/base" "$T/events" 2>"$T/bad.err"
rc=$?
check "runs of different events in a directory: exit 1 ($rc): $(cat "$T/bad.err")" \
	[ $rc -eq 1 -a -n "$(grep "sampled different events (cpu-clock, task-clock)" "$T/bad.err")" ]
cp "$T/same/run1.kprof" "$T/same/run2.kprof" "$T/linked/"
ln -s "$T/slow/run1.kprof" "$T/linked/run3.kprof"
mkfifo "$T/linked/run4.kprof"
timeout 60 "$KPROF" diff -f json -o "$T/linked.json" "$T/base" "$T/linked" 2>"$T/linked.err"
rc=$?
check "a link and a FIFO planted in a directory are not read (exit $rc): $(cat "$T/linked.err")" \
	[ $rc -eq 0 -a "$(json "$T/linked.json" 'd["new"]["runs"]')" = 2 ]
check "... and kprof says so once" \
	[ "$(grep -c "linked: 2 entries not a regular file .* not read; the first: run[34].kprof" "$T/linked.err")" -eq 1 ]

# a directory of 100 runs is read one run at a time: about the memory of one
# (under ASan, freed memory is quarantined instead of reused: not here)
mkdir -p "$T/hundred"
for i in $(seq 1 100); do ln "$T/base/run$((i % 5 + 1)).kprof" "$T/hundred/run$i.kprof"; done
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
/usr/bin/time -f %M -o "$T/rss1" "$KPROF" diff "$T/base/run1.kprof" "$T/same/run1.kprof" >/dev/null 2>&1
/usr/bin/time -f %M -o "$T/rss100" "$KPROF" diff "$T/hundred" "$T/hundred" >/dev/null 2>&1
rss1=$(tail -1 "$T/rss1")
rss100=$(tail -1 "$T/rss100")
check "100 runs a side in less than twice the memory of one ($rss100 KiB, $rss1 KiB)" \
	[ "$rss100" -lt $((2 * rss1)) ]

# the one-file form's usage and bad input
"$KPROF" diff "$T/base/run1.kprof" 2>"$T/usage.err"
check "one profile is a usage error (exit 2)" [ $? -eq 2 ]
"$KPROF" diff --fail-above x "$T/base" "$T/same" 2>/dev/null
check "a bad --fail-above is a usage error (exit 2)" [ $? -eq 2 ]
"$KPROF" diff -f nosuch "$T/base" "$T/same" 2>/dev/null
check "an unknown format is a usage error (exit 2)" [ $? -eq 2 ]
"$KPROF" diff "$T/base/run1.kprof" "$T/missing.kprof" 2>"$T/missing.err"
check "a missing file: exit 1" [ $? -eq 1 ]
check "a missing file: one line naming it" \
	[ "$(wc -l <"$T/missing.err")" -eq 1 -a -n "$(grep "missing.kprof" "$T/missing.err")" ]
head -c "$(($(stat -c %s "$T/same/run1.kprof") / 2))" "$T/same/run1.kprof" >"$T/truncated.kprof"
"$KPROF" diff "$T/base/run1.kprof" "$T/truncated.kprof" 2>"$T/truncated.err"
rc=$?
check "a truncated recording: exit 1 ($rc), one line naming it: $(cat "$T/truncated.err")" \
	[ $rc -eq 1 -a "$(wc -l <"$T/truncated.err")" -eq 1 -a -n "$(grep "truncated.kprof" "$T/truncated.err")" ]
mkdir -p "$T/damaged" && cp "$T/same/run1.kprof" "$T/truncated.kprof" "$T/damaged/"
"$KPROF" diff "$T/base" "$T/damaged" 2>"$T/truncated.err"
rc=$?
check "a truncated recording in a directory: exit 1 ($rc), one line naming it" \
	[ $rc -eq 1 -a "$(wc -l <"$T/truncated.err")" -eq 1 -a -n "$(grep "damaged/truncated.kprof" "$T/truncated.err")" ]
head -c 4096 /dev/urandom >"$T/garbage.bin"
"$KPROF" diff "$T/garbage.bin" "$T/same/run1.kprof" 2>"$T/garbage.err"
check "a foreign file: exit 1" [ $? -eq 1 ]
check "a foreign file: one line naming it: $(cat "$T/garbage.err")" \
	[ "$(wc -l <"$T/garbage.err")" -eq 1 -a -n "$(grep garbage.bin "$T/garbage.err")" ]
for bad in empty:'' zero:'a;b 0\n'; do
	printf "${bad#*:}" >"$T/${bad%%:*}.folded"
	"$KPROF" diff "$T/same/run1.kprof" "$T/${bad%%:*}.folded" 2>"$T/bad.err"
	rc=$?
	check "an ${bad%%:*} profile: exit 1 ($rc), one line naming it: $(cat "$T/bad.err")" \
		[ $rc -eq 1 -a "$(wc -l <"$T/bad.err")" -eq 1 -a -n "$(grep "${bad%%:*}.folded" "$T/bad.err")" ]
done
"$KPROF" diff --value nosuch "$T/base" "$T/same" 2>"$T/value.err"
rc=$?
check "a value the profiles lack: exit 1 ($rc), named: $(cat "$T/value.err")" \
	[ $rc -eq 1 -a -n "$(grep "has no value 'nosuch'" "$T/value.err")" ]
"$KPROF" diff -o "$T/nodir/out.json" "$T/base" "$T/same" 2>/dev/null
check "an output in a missing directory: exit 1, nothing written" [ $? -eq 1 -a ! -e "$T/nodir" ]

# `kprof -- diff` profiles the program diff, and keeps its exit status
printf 'a\n' >"$T/f1"
printf 'b\n' >"$T/f2"
"$KPROF" -F 99 -o "$T/prog.folded" -- diff "$T/f1" "$T/f2" >"$T/prog.out" 2>"$T/prog.err"
check "kprof -- diff runs diff (its exit status 1)" [ $? -eq 1 ]
check "kprof -- diff: diff's output" grep -q '^< a$' "$T/prog.out"
finish
