#!/usr/bin/env bash
# The benchmarks scripts/bench-gate measures the gate on
# (tests/workloads/reqpipe.c, memchase.c, sysheavy.c, strparse.c,
# multicall.c), on fewer rounds than their default (a quarter to a fifth:
# about 250 samples a run at 999 Hz):
#  - each runs to its end and says its usage for an argument it does not know;
#  - kprof names every stage function of each, without frame pointers
#    (from the CFI), and with them;
#  - NAME=300 makes the named function's total share grow (over two runs
#    a side, the slower side's share at least 1.5 times the base's): at
#    about 10-13% of a run, four times the work takes it to 30-40%, where
#    run-to-run noise (a point or two of share at these sample counts)
#    cannot bring the two sides within a factor 1.5.
# And the two shapes of real software, each where its program is: the
# sqlite3 CLI running tests/workloads/sqlite/sqlbench.sql with kp_slowhash
# loaded (built where sqlite3ext.h is): kp_slowhash_kprof named, and
# @kp_slow=300 growing its share as above; node running jsbench.js: a
# usage error for an unknown argument, and crcJsKprof named live as one
# name (TurboFan's frame on its one line) in a run long enough that most
# of its samples are named before it exits.
source "$(dirname "$0")/lib.bash"

# workload rounds knob function stages...
specs=(
	"reqpipe 20 crc rp_crc_kprof rp_round_kprof rp_handle_kprof rp_tokenize_kprof rp_lookup_kprof rp_format_kprof rp_write_kprof"
	"memchase 8 chase mc_chase_kprof mc_round_kprof mc_stream_kprof mc_scatter_kprof mc_compute_kprof"
	"sysheavy 25 stat sh_stat_kprof sh_round_kprof sh_pipe_kprof sh_null_kprof sh_ids_kprof sh_parse_kprof"
	"strparse 160 match sp_match_kprof sp_round_kprof sp_line_kprof sp_tokenize_kprof sp_lookup_kprof sp_parse_kprof sp_escape_kprof"
	"multicall 250 callee mu_callee_kprof mu_round_kprof mu_load_kprof mu_transform_kprof mu_store_kprof mu_sort_kprof"
)

record() { # out workload args...
	local out=$1 w=$2
	shift 2
	"$KPROF" -q -F 999 -f folded -o "$out" -- "$KP_WORKLOADS/$w" dir="$T" "$@" 2>"$T/rec.err" ||
		fail "recording $w $*: $(head -c 300 "$T/rec.err")"
}
# the total share, in percent, of a function in folded files (the stacks it
# is on)
share() { # function files...
	local fn=$1
	shift
	cat "$@" | awk -v fn="$fn" '{ n = $NF; line = $0; sub(/ [0-9]+$/, "", line); t += n
		k = split(line, f, ";"); for (i = 1; i <= k; i++) if (f[i] == fn) { s += n; break } }
		END { printf "%.2f\n", t ? 100 * s / t : 0 }'
}

for spec in "${specs[@]}"; do
	read -r w rounds knob fn stages <<<"$spec"
	"$KP_WORKLOADS/${w}_fp" rounds=1 dir="$T" bogus=1 2>"$T/usage.err"
	rc=$?
	check "$w: an unknown argument is a usage error (exit $rc)" \
		grep -q "^usage: $w .*$knob" "$T/usage.err"
	[ "$rc" -eq 2 ] || fail "$w: exit $rc for an unknown argument, not 2"

	record "$T/$w.nofp.folded" "${w}_nofp" rounds="$rounds"
	record "$T/$w.base1.folded" "${w}_fp" rounds="$rounds"
	record "$T/$w.slow1.folded" "${w}_fp" rounds="$rounds" "$knob=300"
	record "$T/$w.base2.folded" "${w}_fp" rounds="$rounds"
	record "$T/$w.slow2.folded" "${w}_fp" rounds="$rounds" "$knob=300"
	for f in $fn $stages; do
		for build in nofp base1; do
			check "$w ($build): $f is named" \
				[ "$(count_matching "$T/$w.$build.folded" "(^|;)$f(;|$)")" -gt 0 ]
		done
	done
	base=$(share "$fn" "$T/$w.base1.folded" "$T/$w.base2.folded")
	slow=$(share "$fn" "$T/$w.slow1.folded" "$T/$w.slow2.folded")
	check "$w: $knob=300 makes $fn's share grow ($base% -> $slow%)" \
		at_least_pct "$slow" "$base" 150
	check "$w: $fn holds some of the base's time ($base%)" \
		at_least_pct "$base" 3 100
done

sql=$KP_TESTS/workloads/sqlite/sqlbench.sql
if command -v sqlite3 >/dev/null && [ -e "$KP_WORKLOADS/kp_slowhash.so" ]; then
	sqlrec() { # out [sqlite3 argument]
		local out=$1
		shift
		"$KPROF" -q -F 999 -f folded -o "$out" -- sqlite3 -batch :memory: \
			".load $KP_WORKLOADS/kp_slowhash sqlite3_kpslowhash_init" "$@" ".read $sql" \
			>"$T/sql.out" 2>"$T/rec.err" || fail "recording sqlite3 $*: $(head -c 300 "$T/rec.err")"
	}
	sqlrec "$T/sql.base1.folded"
	sqlrec "$T/sql.slow1.folded" ".parameter set @kp_slow 300"
	sqlrec "$T/sql.base2.folded"
	sqlrec "$T/sql.slow2.folded" ".parameter set @kp_slow 300"
	check "sqlite: kp_slowhash_kprof is named under sqlite3VdbeExec" \
		[ "$(count_matching "$T/sql.base1.folded" ";sqlite3VdbeExec;kp_slowhash_kprof(;|$)")" -gt 0 ]
	base=$(share kp_slowhash_kprof "$T/sql.base1.folded" "$T/sql.base2.folded")
	slow=$(share kp_slowhash_kprof "$T/sql.slow1.folded" "$T/sql.slow2.folded")
	check "sqlite: @kp_slow=300 makes kp_slowhash_kprof's share grow ($base% -> $slow%)" \
		at_least_pct "$slow" "$base" 150
	check "sqlite: kp_slowhash_kprof holds some of the base's time ($base%)" \
		at_least_pct "$base" 3 100
else
	echo "note: sqlite shape not checked: no sqlite3 CLI, or kp_slowhash.so not built (no sqlite3ext.h)"
fi

js=$KP_TESTS/workloads/jsbench.js
if node=$(command -v node) && nm -D "$(readlink -f "$node")" 2>/dev/null | grep -q v8dbg_; then
	"$node" "$js" bogus=1 2>"$T/usage.err"
	rc=$?
	check "node: jsbench.js says its usage for an unknown argument (exit $rc)" \
		grep -q "^usage: node jsbench.js .*crc=PERCENT" "$T/usage.err"
	[ "$rc" -eq 2 ] || fail "node: exit $rc for an unknown argument, not 2"
	line=$(grep -n '^function crcJsKprof(' "$js" | cut -d: -f1)
	"$KPROF" -q -F 999 -f folded -o "$T/js.folded" -- "$node" "$js" rounds=4 \
		>"$T/js.out" 2>"$T/rec.err" || fail "recording node: $(head -c 300 "$T/rec.err")"
	check "node: crcJsKprof is named live as JS:*crcJsKprof $js:$line" \
		[ "$(count_matching "$T/js.folded" ";JS:[*]crcJsKprof [^;]*/jsbench[.]js:$line(;|$)")" -gt 0 ]
else
	echo "note: node shape not checked: no node with V8's metadata"
fi
finish
