/* kprof symbolize: names code addresses of one ELF file, as `addr2line -f
 * -i` does, with kprof's symbolizer (symbols, inline frames, demangling,
 * separate debuginfo, the build's saved index). Reads every address first,
 * so bad input fails before anything is written. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "symbolize/addr_text.h"
#include "symbolize/symbolize.h"
#include "util/outfile.h"

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
	      "to the innermost; [unknown: WHY] when nothing names it.\n"
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

struct symbolize_cli {
	struct kp_sym_options opts; /* --no-inline, --full-names */
	const char *exe, *output;   /* -e, -o */
	struct kp_args_list dirs;   /* --debuginfo-dir, repeatable */
	bool annotate, no_cache, lines;
};

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct symbolize_cli *c)
{
	int ch;

	while ((ch = getopt_long(argc, argv, "e:lo:h", long_opts, NULL)) != -1) {
		switch (ch) {
		case 'e':
			c->exe = optarg;
			break;
		case 'l':
			c->lines = true;
			break;
		case 'o':
			if (kp_output_once(&c->output, optarg, "symbolize"))
				return 2;
			break;
		case OPT_NO_INLINE:
			c->opts.no_inline = true;
			break;
		case OPT_FULL_NAMES:
			c->opts.full_names = true;
			break;
		case OPT_ANNOTATE:
			c->annotate = true;
			break;
		case OPT_DEBUGINFO_DIR:
			kp_args_list_add(&c->dirs, optarg);
			break;
		case OPT_NO_CACHE:
			c->no_cache = true;
			break;
		case 'h':
			print_help();
			return 0;
		default:
			fputs(usage_line, stderr);
			return 2;
		}
	}
	if (!c->exe) {
		kp_err("symbolize: which file? (-e FILE)");
		fputs(usage_line, stderr);
		return 2;
	}
	return -1;
}

int kp_cmd_symbolize(int argc, char **argv)
{
	struct symbolize_cli c = {0};
	struct kp_mapping m = {0};
	struct kp_outfile out = {0};
	struct kp_diag d = {{0}};
	struct kp_addrs a = {0};
	char *cache_dir = NULL, *abs = NULL;
	struct kp_symbolizer *sym = NULL;
	size_t nnotes;
	const char *const *notes;
	int status = parse_args(argc, argv, &c);

	if (status >= 0)
		goto out;
	status = 1;
	for (int i = optind; i < argc; i++) {
		uint64_t addr;

		if (!kp_addr_text_parse(argv[i], &addr)) {
			kp_err("not a hex address: \"%.60s\"", argv[i]);
			goto out;
		}
		kp_addrs_add(&a, addr);
	}
	abs = kp_addr_text_elf_path(c.exe, &d);
	if (!abs || (optind == argc && kp_addr_text_read(stdin, "stdin", &a, &d) != 0)) {
		kp_err("%s", d.msg);
		goto out;
	}
	if (kp_outfile_open(&out, c.output, &d) != 0) {
		kp_err("%s", d.msg);
		goto out;
	}
	c.opts.debuginfo_dirs = c.dirs.v;
	c.opts.n_debuginfo_dirs = c.dirs.n;
	c.opts.no_lines = !c.lines;
	if (!c.no_cache)
		c.opts.cache_dir = cache_dir = kp_args_cache_dir();
	sym = kp_sym_new(&c.opts);
	m.path = abs;
	kp_addr_text_write(out.fp, sym, kp_sym_object_get(sym, &m), &a, c.annotate, c.lines);
	notes = kp_sym_notes(sym, &nnotes);
	kp_warn_notes(notes, nnotes);
	if (kp_outfile_commit(&out, &d) != 0) {
		kp_err("%s", d.msg);
		goto out;
	}
	status = 0;
out:
	kp_outfile_abort(&out);
	kp_sym_free(sym);
	free(cache_dir);
	free(abs);
	free(a.v);
	kp_args_list_free(&c.dirs);
	return status;
}
