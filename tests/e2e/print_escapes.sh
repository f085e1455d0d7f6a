# What kprof prints is escaped (docs/security.md, "What kprof prints"):
# - another uid runs a stripped program from a folder named with a
#   terminal title, a clear screen, CSI as UTF-8 (U+009B) and a bidi
#   override (U+202E) while root records it: root's stderr holds none of
#   these bytes, and the path escaped in the stripped-binary warning and
#   the per-binary line; and a jitdump there that kprof stops reading,
#   named escaped in the note;
# - --label values and a push server's answer with the same bytes: escaped;
# - kprof diff of two recordings whose command holds
#   $'\n::set-env name=A::B' and functions named [click](https://...),
#   ![p](x) and a|b``c`<img src=x>: no line of the text report starts with
#   "::" (GitHub's workflow commands) and none holds a control byte; the
#   Markdown report, rendered by cmark and cmark-gfm (tables), has no link,
#   image or HTML from a name, each name a code span.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/symbols_lib.bash"

# the bytes no line of kprof's may hold: ESC, BEL, any other C0 but tab,
# C1 as UTF-8 (c2 80..9f), U+202E (e2 80 ae)
raw_bytes() { # file: true when it holds one
	LC_ALL=C grep -qaP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80\xae' "$1"
}
no_raw_bytes() { # file...: true when the files exist and none holds one
	local f
	for f; do [ -s "$f" ] && ! raw_bytes "$f" || return 1; done
}
esc_dir=$'evil\e]0;pwned\a\e[2J\xc2\x9b31m\xe2\x80\xaedir'
esc_shown='evil\x1b]0;pwned\x07\x1b[2J\u009b31m\u202edir'

# 1. Another user's stripped program, recorded by root.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && command -v strip >/dev/null; then
	make_other_user
	u=$(mktemp -d /tmp/kp-print.XXXXXX)
	at_exit "rm -rf '$u'"
	chmod 0755 "$u"
	chown "$OTHER_UID:$OTHER_UID" "$u"
	strip -o "$T/statics" "$KP_WORKLOADS/statics_nofp" && chmod 0755 "$T/statics"
	# root copies it in (the build folder may be closed to other users, as
	# CI's clone is) and hands it to the other user
	as_user mkdir "$u/$esc_dir" && cp "$T/statics" "$u/$esc_dir/statics" &&
		chown "$OTHER_UID:$OTHER_UID" "$u/$esc_dir/statics"
	check "the other user's folder is made" [ -x "$u/$esc_dir/statics" ]
	# the other user runs it; root records that process (-p: its files only)
	setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups "$u/$esc_dir/statics" 3 &
	prog=$!
	at_exit "kill $prog 2>/dev/null"
	for _ in $(seq 200); do
		case $(readlink "/proc/$prog/exe" 2>/dev/null) in */statics) break ;; esac
		sleep 0.02
	done
	"$KPROF" -p "$prog" -d 1 -F 999 --no-cache -o "$T/other.folded" 2>"$T/other.err"
	check "recorded: exit 0" [ $? -eq 0 ]
	check "root's stderr has no ESC, BEL, C1 or U+202E" no_raw_bytes "$T/other.err"
	check "the stripped-binary warning shows the path escaped" \
		grep -qF "$esc_shown/statics" "$T/other.err"
	check "... in the warning line" \
		sh -c "grep -F 'no debuginfo' '$T/other.err' | grep -qF '$esc_shown/statics'"
	check "... and in the per-binary line" \
		grep -qF "$esc_shown/statics: of its " "$T/other.err"
	grep -F "$esc_shown" "$T/other.err" | head -3
	kill "$prog" 2>/dev/null

	# a jitdump in that folder whose first record is too short: kprof
	# stops reading it and says so, naming it
	cat >"$T/jitw.c" <<'EOF2'
/* Writes jit-PID.dump in DIR as a JIT runtime does (perf's jitdump: a
 * header, then records) with a record shorter than a record's header,
 * maps it executable as runtimes do for perf to see, spins SECONDS. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static void put(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		exit(1);
}
int main(int argc, char **argv)
{
	uint32_t h[6] = {0x4A695444, 1, 40, 62, 0, (uint32_t)getpid()}, r[2] = {0, 8};
	uint64_t h2[2] = {1, 0}, rts = 2;
	char path[4096];
	struct timespec t0, t;
	volatile unsigned long s = 0;
	int fd;

	if (argc < 3)
		return 2;
	snprintf(path, sizeof(path), "%s/jit-%d.dump", argv[1], (int)getpid());
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0644)) < 0)
		return 1;
	put(fd, h, sizeof(h));
	put(fd, h2, sizeof(h2));
	put(fd, r, sizeof(r)); /* a code load of 8 bytes */
	put(fd, &rts, 8);
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED &&
	    mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			s += (unsigned long)i * i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 <
		 atof(argv[2]));
	return 0;
}
EOF2
	if "$CC" -O1 -o "$u/jitw" "$T/jitw.c" && chmod 0755 "$u/jitw"; then
		setpriv --reuid="$OTHER_UID" --regid="$OTHER_UID" --clear-groups "$u/jitw" "$u/$esc_dir" 3 &
		prog=$!
		at_exit "kill $prog 2>/dev/null"
		for _ in $(seq 200); do
			[ -e "$u/$esc_dir/jit-$prog.dump" ] && break
			sleep 0.02
		done
		"$KPROF" -p "$prog" -d 1 -F 999 -o "$T/jit.folded" 2>"$T/jit.err"
		check "jitdump: recorded, exit 0" [ $? -eq 0 ]
		grep -F "jit-$prog.dump" "$T/jit.err"
		check "jitdump: root's stderr has no ESC, BEL, C1 or U+202E" no_raw_bytes "$T/jit.err"
		check "jitdump: the note names the dump escaped" \
			grep -qF "$esc_shown/jit-$prog.dump" "$T/jit.err"
		kill "$prog" 2>/dev/null
	else
		fail "build the jitdump writer"
	fi
else
	echo "skipped the other user's part: needs root, setpriv and strip"
fi

# 2. --label values and a server's answer.
"$KPROF" --every 1 --push pyroscope=http://127.0.0.1:9 --label $'a=x\e]0;t\a' -- true 2>"$T/label1.err"
check "a label with ESC and BEL: refused (exit 2)" [ $? -eq 2 ]
"$KPROF" --every 1 --push pyroscope=http://127.0.0.1:9 --label $'b=\xc2\x9b\xe2\x80\xae{' -- true 2>"$T/label2.err"
check "a label with U+009B and U+202E: refused (exit 2)" [ $? -eq 2 ]
cat "$T/label1.err" "$T/label2.err"
check "the labels are printed escaped" \
	grep -qF "'a=x\\x1b]0;t\\x07'" "$T/label1.err"
check "... U+009B and U+202E too" grep -qF "'b=\\u009b\\u202e{'" "$T/label2.err"
check "... and no raw byte of them reaches stderr" \
	no_raw_bytes "$T/label1.err" "$T/label2.err"

# a server that refuses every profile with those bytes in its answer
python3 - "$T/port" <<'EOF' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"bad \xc2\x9b31m\xe2\x80\xaeevil \x1b]0;x\x07 end\n"
        self.send_response(400)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()
EOF
srv=$!
at_exit "kill $srv 2>/dev/null"
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
"$KPROF" --every 1 --push "pyroscope=http://127.0.0.1:$(cat "$T/port")" --push-timeout 2 \
	-- sleep 1.1 2>"$T/server.err" >/dev/null
cat "$T/server.err"
check "the server's answer is printed escaped" grep -qF 'bad \u009b31m\u202eevil' "$T/server.err"
check "... with no raw byte of it" no_raw_bytes "$T/server.err"
kill "$srv" 2>/dev/null

# the summary's "profile in PATH"
"$KPROF" -F 999 -o "$T/$esc_dir.folded" -- "$KP_WORKLOADS/spin_fp" 0.2 2>"$T/summary.err"
check "the summary names the output escaped, with no raw byte" \
	eval "grep -qF 'profile in $T/$esc_shown.folded' '$T/summary.err' && no_raw_bytes '$T/summary.err'"

# the top table of a profile whose names hold the same bytes (no ';' in
# them: folded text's separator; its reader makes C0 controls '?' already)
printf 'main;%s;leaf 5\nmain;plain 5\n' $'f\e[2J\a\xc2\x9b\xe2\x80\xaeg' >"$T/names.folded"
"$KPROF" report -f top "$T/names.folded" >"$T/names.top" 2>"$T/names.top.err"
check "report -f top: exit 0" [ $? -eq 0 ]
cat "$T/names.top"
check "report -f top: the name escaped, no raw byte" \
	eval "grep -qF 'f?[2J?\\u009b\\u202eg' '$T/names.top' && no_raw_bytes '$T/names.top'"

# 3. kprof diff of recordings with a hostile command and hostile names.
cat >"$T/names.c" <<'EOF'
#include <stdlib.h>
/* functions whose symbol names are Markdown and HTML (GNU as takes any
 * name in quotes) */
#define SPIN(fn, sym)                                                        \
	__attribute__((noinline)) unsigned long fn(unsigned long n) __asm__(sym); \
	unsigned long fn(unsigned long n)                                    \
	{                                                                    \
		volatile unsigned long s = 0;                                \
		for (unsigned long i = 0; i < n; i++)                        \
			s += i * i;                                          \
		return s;                                                    \
	}
SPIN(f_link, "\"[click](https://evil.example)\"")
SPIN(f_img, "\"![p](x)\"")
SPIN(f_pipe, "\"a|b``c`<img src=x>\"")
int main(int argc, char **argv)
{
	unsigned long heavy = strtoul(argv[2], 0, 10), r = 0;
	for (unsigned long k = strtoul(argv[1], 0, 10); k > 0; k--)
		r += f_link(heavy ? 800000 : 100000) + f_img(heavy ? 800000 : 100000) +
		     f_pipe(heavy ? 100000 : 800000);
	return (int)(r & 1);
}
EOF
if "$CC" -O1 -fno-omit-frame-pointer -o "$T/names" "$T/names.c"; then
	for side in 0 1; do
		# from $T, so that the command (cut at 200 bytes in the report)
		# is short in a clone of any path
		(cd "$T" && "$KPROF" -F 999 --no-cache -o "side$side.kprof" -- ./names 250 $side \
			$'\n::set-env name=A::B' $'##[add-mask]x' 2>"rec$side.err")
		check "recorded side $side" [ $? -eq 0 ]
	done
	"$KPROF" diff --fail-above 5 "$T/side0.kprof" "$T/side1.kprof" >"$T/diff.txt" 2>"$T/diff.err"
	check "diff: the gate fails (exit 3)" [ $? -eq 3 ]
	cat "$T/diff.txt" | head -12
	check "text: the command is there, escaped" grep -qF '\n::set-env name=A::B #\x23[add-mask]x' "$T/diff.txt"
	check "text: no line starts with :: (leading spaces aside)" lacks "$T/diff.txt" '^[[:space:]]*::'
	check "text: no ##[ anywhere" lacks "$T/diff.txt" '##\['
	check "text: no control byte" no_raw_bytes "$T/diff.txt"
	check "text: the gate's line for ![p](x) starts with kprof's words" grep -qE '^  - !\[p\]\(x\): total share' "$T/diff.txt"
	check "stderr: no line starts with :: and no ##[" lacks "$T/diff.err" '^[[:space:]]*::|##\['
	check "stderr: no control byte" no_raw_bytes "$T/diff.err"
	"$KPROF" diff --fail-above 5 -f github "$T/side0.kprof" "$T/side1.kprof" >"$T/diff.gh" 2>/dev/null
	check "github: every line is kprof's command" sh -c "! grep -vE '^::(error|warning|notice) title=kprof diff' '$T/diff.gh'"
	check "github: no ##[ anywhere" lacks "$T/diff.gh" '##\['
	"$KPROF" diff --fail-above 5 -f junit "$T/side0.kprof" "$T/side1.kprof" >"$T/diff.xml" 2>/dev/null
	check "junit: no ##[, no control byte" eval "lacks '$T/diff.xml' '##\\[' && no_raw_bytes '$T/diff.xml'"
	"$KPROF" diff --fail-above 5 -f markdown -o "$T/diff.md" "$T/side0.kprof" "$T/side1.kprof" 2>/dev/null
	cat "$T/diff.md" | head -12
	for r in cmark cmark-gfm; do
		if ! command -v $r >/dev/null; then
			[ "${CI:-}" = true ] && fail "$r is not installed (scripts/deps --test), and CI=true"
			echo "skipped rendering with $r: not installed"
			continue
		fi
		opts=()
		[ $r = cmark-gfm ] && opts=(-e table -e autolink -e strikethrough)
		$r "${opts[@]}" "$T/diff.md" >"$T/diff.$r.html"
		check "$r: no link, no image, no HTML of a name" \
			lacks "$T/diff.$r.html" '<a |<img|evil\.example"'
		check "$r: each name is code" sh -c "
			grep -qF '<code>![p](x)</code>' '$T/diff.$r.html' &&
			grep -qF '<code>[click](https://evil.example)</code>' '$T/diff.$r.html'"
	done
	command -v cmark-gfm >/dev/null &&
		check "cmark-gfm: the name with | and backticks is one cell's code" \
			grep -qF '<td><code>a|b``c`&lt;img src=x&gt;</code></td>' "$T/diff.cmark-gfm.html"
else
	fail "build the program with hostile names"
fi
finish
