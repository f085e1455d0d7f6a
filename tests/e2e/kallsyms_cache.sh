# The per-boot copy of /proc/kallsyms (symbolize/ksymcache.h): the first
# run leaves a private copy in $XDG_CACHE_HOME/kprof (a header line with
# its size and XXH3 checksum, then the file); the next run reads kernel
# names from it (shown by a name changed in the copy, its checksum made to
# match); a copy that is writable by others, a symbolic link, a copy for
# another boot, or --no-cache make kprof read /proc/kallsyms itself. A
# system-wide run is answered from the copy too (the idle task's
# start_kernel is init text). A copy changed without its checksum is
# damaged: not used, said once, and written anew.
#
# kp-e2e: whole-machine (it samples every CPU: no other end-to-end test
# runs beside it; tests/CMakeLists.txt)
. "$(dirname "$0")/lib.bash"

command -v xxhsum >/dev/null || { echo "SKIP: xxhsum is not installed (Debian package xxhash)"; exit 77; }

export XDG_CACHE_HOME=$T/cache
dir=$XDG_CACHE_HOME/kprof
boot=$(cat /proc/sys/kernel/random/boot_id)

run() { # name [kprof options...]
	local name=$1
	shift
	"$KPROF" -F 499 -f folded --annotate "$@" -o "$T/$name.folded" -- \
		"$KP_WORKLOADS/syscalls_fp" 0.5 2>"$T/$name.err"
}
copy() { ls "$dir"/kallsyms-"$boot"-* 2>/dev/null | head -1; }

run first
cache=$(copy)
check "first run: a copy for this boot was written" [ -n "$cache" ]
check "the copy is mode 0600" [ "$(stat -c %a "$cache")" = 600 ]
check "its directory is mode 0700" [ "$(stat -c %a "$dir")" = 700 ]
check "no temporary file is left" sh -c "! ls -A '$dir' | grep -q '^\.kallsyms-'"
check "the copy has its header" grep -qE '^kprof-kallsyms 1 [0-9a-f]{16} [0-9a-f]{16}$' <(head -1 "$cache")
check "then is like /proc/kallsyms" bash -c "cmp -s <(head -1000 /proc/kallsyms) <(tail -n +2 '$cache' | head -1000)"
lines=$(($(wc -l <"$cache") - 1))
live=$(wc -l </proc/kallsyms)
echo "copy: $lines lines, /proc/kallsyms: $live"
check "the copy is the whole file (within 1% for BPF programs coming and going)" \
	at_least_pct "$lines" "$live" 99

# the most frequent kernel frame of the first run, renamed in the copy
name=$(awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
	for (i = 2; i <= k; i++) if (f[i] ~ /_\[k\]$/) c[f[i]] += n }
	END { for (x in c) if (c[x] > best) { best = c[x]; top = x } sub(/_\[k\]$/, "", top); print top }' \
	"$T/first.folded")
echo "renaming $name in the copy"
check "the first run has kernel frames" [ -n "$name" ]
reseal() { # file: its header made to match the rest, as kprof writes it
	local sum
	sum=$(tail -n +2 "$1" | xxhsum -H3 | awk '{ print $NF }')
	{ printf 'kprof-kallsyms 1 %016x %s\n' "$(tail -n +2 "$1" | wc -c)" "$sum"; tail -n +2 "$1"; } >"$1.sealed"
	mv -f "$1.sealed" "$1"
}
doctor() { # rewrite the copy with $name renamed, mode 0600
	sed -E "s/^([0-9a-f]+ [tT] )$name\$/\1${name}_from_copy/" "$T/pristine" >"$cache.new"
	reseal "$cache.new"
	chmod 600 "$cache.new"
	mv -f "$cache.new" "$cache"
}
cp "$cache" "$T/pristine"
reseal "$T/pristine"
check "the checksum xxhsum computes is the one kprof wrote" cmp -s "$cache" "$T/pristine"
doctor
check "the doctored copy has the new name" grep -q " ${name}_from_copy\$" "$cache"

run second
check "second run: kernel names come from the copy" grep -q "${name}_from_copy_\[k\]" "$T/second.folded"
check "second run: the copy was not rewritten" grep -q "_from_copy" "$cache"

# a system-wide run: the idle task of the boot CPU has start_kernel (init
# text, freed after boot but still named) on its stack, which the copy
# answers for as it does for the kernel's text
doctor
"$KPROF" -a -F 499 -f folded -o "$T/system.folded" -- sleep 1 2>"$T/system.err"
# The boot CPU's idle task (under cpu_startup_entry but not start_secondary)
# runs only when that CPU has nothing else to do: a machine kept busy by
# other work may give it no time in the window, and then there is nothing
# to check.
grep -E '^swapper[^;]*;(.*;)?cpu_startup_entry;' "$T/system.folded" | grep -v ';start_secondary;' >"$T/boot_idle" || true
if [ -s "$T/boot_idle" ]; then
	check "system-wide: the boot CPU's idle task is named under start_kernel" grep -q ';start_kernel;' "$T/boot_idle"
else
	echo "SKIP: the boot CPU was never idle during the system-wide second (a busy machine): start_kernel not checked"
fi
check "system-wide: answered from the copy (not rewritten)" grep -q "_from_copy" "$cache"

doctor
chmod 620 "$cache"
run group_writable
check "a copy writable by others is not read" sh -c "! grep -q _from_copy '$T/group_writable.folded'"
check "... and is replaced by a fresh private copy" [ "$(stat -c %a "$cache")" = 600 ]
check "... without the changed name" sh -c "! grep -q _from_copy '$cache'"

doctor
run no_cache --no-cache
check "--no-cache reads /proc/kallsyms" sh -c "! grep -q _from_copy '$T/no_cache.folded'"
check "--no-cache leaves the copy alone" grep -q "_from_copy" "$cache"

# a symbolic link in place of the copy (another user's file, say)
mv "$cache" "$T/doctored"
ln -s "$T/doctored" "$cache"
run symlink
check "a symbolic link is not followed" sh -c "! grep -q _from_copy '$T/symlink.folded'"
check "... and is replaced by a regular file" sh -c "[ -f '$cache' ] && [ ! -L '$cache' ]"

# the name changed without the checksum: damaged, not used, said once,
# written anew
doctor
sed -i "s/${name}_from_copy\$/${name}_from_copX/" "$cache"
chmod 600 "$cache"
run damaged
check "a damaged copy is not read" sh -c "! grep -q _from_cop '$T/damaged.folded'"
check "... and the run says so once" [ "$(grep -c 'kallsyms.*was damaged' "$T/damaged.err")" = 1 ]
check "... and it is written anew" sh -c "! grep -q _from_cop '$cache' && grep -q '^kprof-kallsyms 1 ' '$cache'"
run after_damaged
check "the next run finds nothing damaged" sh -c "! grep -q 'was damaged' '$T/after_damaged.err'"

# a copy made for another boot is not read, and is removed
other=$dir/kallsyms-00000000-0000-0000-0000-000000000000-0000000000000000
doctor
mv "$cache" "$other"
run other_boot
check "a copy for another boot is not read" sh -c "! grep -q _from_copy '$T/other_boot.folded'"
check "... and is removed once this boot's copy is written" [ ! -e "$other" ]
check "... which is there" [ -n "$(copy)" ]
finish
