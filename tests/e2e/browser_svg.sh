# The flame-graph SVG in a real browser: Debian's headless chromium driven
# by playwright-core (tests/browser/svg.test.js): search, zoom, reset, URL
# parameters, hostile names, a recorded profile. Missing chromium or
# playwright-core is a failure: tests/browser/setup installs them.
# kp-e2e: not-under-asan (Chromium runs the SVG's script, the same in every
# build; kprof flamegraph goes through ASan in golden/svg_*)
. "$(dirname "$0")/lib.bash"

if ! command -v node >/dev/null; then
	fail "node is installed (run tests/browser/setup)"
	finish
fi
# the test prints its own "N passed, N failed" and its exit status is ours
exec node "$KP_SRC/tests/browser/svg.test.js" "$T"
