/* kprof symbolize: names code addresses of one ELF file, as `addr2line -f
 * -i` does, with kprof's symbolizer (symbols, inline frames, demangling,
 * separate debuginfo, the build's saved index). Reads every address first,
 * so bad input fails before anything is written. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "symbolize/symbolize.h"
#include "util/outfile.h"
#include "util/xalloc.h"

static const char usage_line[] =
	"usage: kprof symbolize -e FILE [--lines] [--no-inline] [--full-names] [--annotate]\n"
	"                       [--debuginfo-dir DIR]... [--no-cache] [-o OUT] [ADDR...]\n";

static void print_help(void)
{
	fputs(usage_line, stdout);
	fputs("Names the code at each ADDR of FILE (virtual addresses in hex, with or without\n"
	      "0x, as addr2line takes them), or at each address read from stdin, one per line.\n"
	      "Prints a line per address: the address, a space, then its frames outermost\n"
	      "first, separated by ';': the function, then the functions inlined into it down\n"
	      "to the innermost; [unknown] when nothing names it.\n"
	      "  -e, --exe=FILE          the ELF file (executable, shared library, debug file)\n"
	      "  -l, --lines             each frame followed by a space and its FILE:LINE, as\n"
	      "                          addr2line -i gives them (??:0 when unknown)\n"
	      "      --no-inline         the function only, no inline frames\n"
	      "      --full-names        keep parameter lists in demangled names\n"
	      "      --annotate          mark inline frames _[i]\n"
	      "      --debuginfo-dir=DIR also look for separate debuginfo under DIR (repeatable)\n"
	      "      --no-cache          neither read nor save the build's index in\n"
	      "                          $XDG_CACHE_HOME/kprof (~/.cache/kprof)\n"
	      "  -o, --output=OUT        write to OUT (replaced only when complete)\n"
	      "  -h, --help              show this help\n",
	      stdout);
}

enum {
	OPT_NO_INLINE = 256,
	OPT_FULL_NAMES,
	OPT_ANNOTATE,
	OPT_DEBUGINFO_DIR,
	OPT_NO_CACHE,
};

static const struct option long_opts[] = {
	{"exe", required_argument, NULL, 'e'},
	{"lines", no_argument, NULL, 'l'},
	{"no-inline", no_argument, NULL, OPT_NO_INLINE},
	{"full-names", no_argument, NULL, OPT_FULL_NAMES},
	{"annotate", no_argument, NULL, OPT_ANNOTATE},
	{"debuginfo-dir", required_argument, NULL, OPT_DEBUGINFO_DIR},
	{"no-cache", no_argument, NULL, OPT_NO_CACHE},
	{"output", required_argument, NULL, 'o'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

struct addrs {
	uint64_t *v;
	size_t n, cap;
};

/* Parses one address ("7f3a", "0x7f3a", surrounded by blanks); false when
 * the text is anything else. */
static bool parse_addr(const char *s, uint64_t *out)
{
	char *end;

	s += strspn(s, " \t");
	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 16);
	if (errno || end == s || (end - s == 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return false;
	end += strspn(end, " \t\r\n");
	return *end == '\0';
}

static void add_addr(struct addrs *a, uint64_t addr)
{
	kp_xgrow(&a->v, &a->cap, a->n + 1, sizeof(*a->v));
	a->v[a->n++] = addr;
}

/* The addresses on stdin, one per line (blank lines skipped). */
static int read_stdin(struct addrs *a)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		uint64_t addr;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (!parse_addr(line, &addr)) {
			line[strcspn(line, "\r\n")] = '\0';
			kp_err("stdin:%zu: not a hex address: \"%.60s\"", lineno, line);
			free(line);
			return -1;
		}
		add_addr(a, addr);
	}
	free(line);
	return 0;
}

int kp_cmd_symbolize(int argc, char **argv)
{
	struct kp_sym_options opts = {0};
	struct kp_sym_mapping m = {0};
	struct kp_sym_frames f = {0};
	struct kp_outfile out = {0};
	struct kp_diag d = {{0}};
	struct addrs a = {0};
	const char *exe = NULL, *output = NULL;
	struct kp_args_list dirs = {0}; /* --debuginfo-dir, repeatable */
	struct stat st = {0};
	char *cache_dir = NULL, *abs = NULL;
	bool annotate = false, no_cache = false, lines = false;
	struct kp_symbolizer *sym = NULL;
	size_t nnotes;
	const char *const *notes;
	uint32_t obj;
	int c, fd, status = 1;
	bool is_elf;

	while ((c = getopt_long(argc, argv, "e:lo:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			exe = optarg;
			break;
		case 'l':
			lines = true;
			break;
		case 'o':
			if (kp_output_once(&output, optarg, "symbolize"))
				return 2;
			break;
		case OPT_NO_INLINE:
			opts.no_inline = true;
			break;
		case OPT_FULL_NAMES:
			opts.full_names = true;
			break;
		case OPT_ANNOTATE:
			annotate = true;
			break;
		case OPT_DEBUGINFO_DIR:
			kp_args_list_add(&dirs, optarg);
			break;
		case OPT_NO_CACHE:
			no_cache = true;
			break;
		case 'h':
			print_help();
			kp_args_list_free(&dirs);
			return 0;
		default:
			fputs(usage_line, stderr);
			kp_args_list_free(&dirs);
			return 2;
		}
	}
	if (!exe) {
		kp_err("symbolize: which file? (-e FILE)");
		fputs(usage_line, stderr);
		kp_args_list_free(&dirs);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		uint64_t addr;

		if (!parse_addr(argv[i], &addr)) {
			kp_err("not a hex address: \"%.60s\"", argv[i]);
			goto out;
		}
		add_addr(&a, addr);
	}
	/* the symbolizer takes a mapping's absolute path, as a process maps
	 * it; a FIFO or device is refused without waiting on it */
	abs = realpath(exe, NULL);
	fd = abs ? open(abs, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	if (fd < 0) {
		kp_err("%s: %s", exe, strerror(errno));
		goto out;
	}
	is_elf = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && kp_sym_is_elf(fd);
	close(fd);
	if (!is_elf) {
		kp_err("%s: not an ELF file (%s)", exe,
		       S_ISREG(st.st_mode) ? "of this machine's byte order" : "not a regular file");
		goto out;
	}
	if (optind == argc && read_stdin(&a) != 0)
		goto out;
	if (kp_outfile_open(&out, output, &d) != 0) {
		kp_err("%s", d.msg);
		goto out;
	}
	opts.debuginfo_dirs = dirs.v;
	opts.n_debuginfo_dirs = dirs.n;
	opts.no_lines = !lines;
	if (!no_cache)
		opts.cache_dir = cache_dir = kp_args_cache_dir();
	sym = kp_sym_new(&opts);
	m.path = abs;
	obj = kp_sym_object_get(sym, &m);
	for (size_t i = 0; i < a.n; i++) {
		fprintf(out.fp, "0x%" PRIx64 " ", a.v[i]);
		kp_sym_resolve_vaddr(sym, obj, a.v[i], &f);
		for (size_t k = 0; k < f.n; k++) {
			if (k)
				putc(';', out.fp);
			fputs(f.frames[k].name, out.fp);
			if (annotate && f.frames[k].kind == KP_FRAME_INLINE)
				fputs("_[i]", out.fp);
			if (lines)
				fprintf(out.fp, " %s:%" PRIu32,
					f.frames[k].file ? f.frames[k].file : "??",
					f.frames[k].line);
		}
		putc('\n', out.fp);
	}
	notes = kp_sym_notes(sym, &nnotes);
	kp_warn_notes(notes, nnotes);
	if (kp_outfile_commit(&out, &d) != 0) {
		kp_err("%s", d.msg);
		goto out;
	}
	status = 0;
out:
	kp_outfile_abort(&out);

	kp_sym_frames_fini(&f);
	kp_sym_free(sym);
	free(cache_dir);
	free(abs);
	free(a.v);
	kp_args_list_free(&dirs);
	return status;
}
