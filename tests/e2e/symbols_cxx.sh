# C++ names demangled: by default without parameter lists (and without a
# function template's return type), as perf and stackcollapse-perf.pl show
# them, keeping namespaces, templates, "(anonymous namespace)" and a
# lambda's "{lambda(unsigned long)#1}" whole; --full-names keeps the
# parameter lists.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

command -v "$CXX" >/dev/null || skip "no C++ compiler ($CXX)"
bin=$T/names
"$CXX" -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$bin" \
	"$KP_TESTS/workloads/cxx/names.cpp" || { fail "build names.cpp"; finish; }

"$KPROF" -F 499 -f folded -o "$T/names.folded" -- "$bin" 1.5 2>"$T/err"
check "exit status 0" [ $? -eq 0 ]
f=$T/names.folded
total=$(count_matching "$f" '^names;')
anon=$(count_matching "$f" '^names;(.*;)?main;\(anonymous namespace\)::hot_anon(;.*)?$')
holder=$(count_matching "$f" '^names;(.*;)?main;Holder<int>::spin(;.*)?$')
tmpl=$(count_matching "$f" '^names;(.*;)?main;kpns::twice_kprof<long>(;.*)?$')
lambda=$(count_matching "$f" '^names;(.*;)?main;main::\{lambda\(unsigned long\)#1\}::operator\(\)(;.*)?$')
echo "names: $total samples; anon $anon, Holder<int>::spin $holder, kpns::twice_kprof<long> $tmpl, lambda $lambda"
show_top "$f" 4
check "at least 100 samples ($total)" [ "$total" -ge 100 ]
# names.cpp gives each a quarter of its CPU time: 10% is a margin neither
# load nor this CPU's loop costs can cross. A function's samples are its
# stacks with anything above it: on a loaded machine more of them end in
# the kernel's interrupt and rescheduling frames (a fresh-clone run on
# 2026-12-02 had 84.4% of --full-names' samples with the four as leaves)
check "main;(anonymous namespace)::hot_anon (>= 10%)" at_least_pct "$anon" "$total" 10
check "main;Holder<int>::spin (>= 10%)" at_least_pct "$holder" "$total" 10
check "main;kpns::twice_kprof<long>, no return type, no parameters (>= 10%)" at_least_pct "$tmpl" "$total" 10
check "main;main::{lambda(unsigned long)#1}::operator() (>= 10%)" at_least_pct "$lambda" "$total" 10
check "the four carry >= 85% together" at_least_pct "$((anon + holder + tmpl + lambda))" "$total" 85
check "no mangled name is left" lacks "$f" '(^|;)_Z[A-Za-z0-9_]+'

"$KPROF" -F 499 -f folded --full-names -o "$T/full.folded" -- "$bin" 1 2>/dev/null
f=$T/full.folded
total=$(count_matching "$f" '^names;')
anon=$(count_matching "$f" '^names;(.*;)?main;\(anonymous namespace\)::hot_anon\(unsigned long\)(;.*)?$')
holder=$(count_matching "$f" '^names;(.*;)?main;Holder<int>::spin\(int\)(;.*)?$')
tmpl=$(count_matching "$f" '^names;(.*;)?main;(long )?kpns::twice_kprof<long>\(long\)(;.*)?$')
lambda=$(count_matching "$f" '^names;(.*;)?main;main::\{lambda\(unsigned long\)#1\}::operator\(\)\(unsigned long\) const(;.*)?$')
echo "--full-names: $total samples; anon $anon, Holder $holder, template $tmpl, lambda $lambda"
show_top "$f" 4
check "--full-names: (anonymous namespace)::hot_anon(unsigned long)" [ "$anon" -gt 0 ]
check "--full-names: Holder<int>::spin(int)" [ "$holder" -gt 0 ]
check "--full-names: kpns::twice_kprof<long>(long) (the return type may stay)" [ "$tmpl" -gt 0 ]
check "--full-names: main::{lambda(unsigned long)#1}::operator()(unsigned long) const" [ "$lambda" -gt 0 ]
check "--full-names: the four carry >= 85% together" at_least_pct "$((anon + holder + tmpl + lambda))" "$total" 85
finish
