# The heatmap page (formats/heatmap.c) in a real browser: Debian's headless
# chromium driven by playwright-core (tests/browser/heatmap.test.js) on a
# recording of a program with phases (tests/workloads/phases.c): the
# heatmap drawn, selections made by dragging give the stacks of `kprof
# report --from --to` with the command the page shows, a fragment
# restores a selection, search and zoom, no script error, no request.
# Missing chromium or playwright-core is a failure: tests/browser/setup
# installs them.
# kp-e2e: not-under-asan (Chromium runs the page's script, the same in every
# build; its writer goes through ASan in unit/test_heatmap, kprof report
# --from --to in e2e/time_slices)
. "$(dirname "$0")/lib.bash"

if ! command -v node >/dev/null; then
	fail "node is installed (run tests/browser/setup)"
	finish
fi
"$KPROF" -F 999 -o "$T/run.kprof" -- "$KP_WORKLOADS/phases_fp" 0.3 "$T/phases" 2>"$T/rec.err" ||
	{ cat "$T/rec.err"; fail "the recording"; finish; }
# the test prints its own "N passed, N failed" and its exit status is ours
exec node "$KP_SRC/tests/browser/heatmap.test.js" "$T" "$T/run.kprof"
