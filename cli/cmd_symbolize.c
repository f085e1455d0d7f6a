/* kprof symbolize: names code addresses of one ELF file, as `addr2line -f
 * -i` does, with kprof's symbolizer (symbols, inline frames, demangling,
 * separate debuginfo, the build's saved index). Reads every address first,
 * so bad input fails before anything is written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/opts.h"
#include "cli/commands.h"
#include "cli/messages.h"
#include "symbolize/addr_text.h"
#include "symbolize/symbolize.h"
#include "util/notes.h"
#include "util/outfile.h"

static const char usage_line[] =
	"usage: kprof symbolize -e FILE [--lines] [--no-inline] [--full-names] [--annotate]\n"
	"                       [--debuginfo-dir DIR]... [--no-cache] [-o OUT] [ADDR...]\n";

struct symbolize_cli {
	struct kp_sym_options opts; /* --no-inline, --full-names */
	const char *exe, *output;   /* -e, -o */
	struct kp_args_list dirs;   /* --debuginfo-dir, repeatable */
	bool annotate, no_cache, lines;
};

static void say_usage(int c, char **argv)
{
	(void)c, (void)argv; /* getopt said why */
	fputs(usage_line, stderr);
}

#define AT(f) KP_OPT_AT(struct symbolize_cli, f)

static const struct kp_opt opts[] = {
	{"exe", 'e', KP_OPT_TEXT, AT(exe),
	 .help = "  -e, --exe=FILE          the ELF file (executable, shared library, debug "
		 "file)\n"},
	{"lines", 'l', KP_OPT_FLAG, AT(lines),
	 .help = "  -l, --lines             each frame followed by a space and its FILE:LINE, as\n"
		 "                          addr2line -i gives them (??:0 when unknown)\n"},
	{"no-inline", 0, KP_OPT_FLAG, AT(opts.no_inline),
	 .help = "      --no-inline         the function only, no inline frames\n"},
	{"full-names", 0, KP_OPT_FLAG, AT(opts.full_names),
	 .help = "      --full-names        keep parameter lists in demangled names\n"},
	{"annotate", 0, KP_OPT_FLAG, AT(annotate),
	 .help = "      --annotate          mark inline frames _[i]\n"},
	{"debuginfo-dir", 0, KP_OPT_LIST, AT(dirs),
	 .help = "      --debuginfo-dir=DIR also look for separate debuginfo under DIR "
		 "(repeatable)\n"},
	{"no-cache", 0, KP_OPT_FLAG, AT(no_cache),
	 .help = "      --no-cache          neither read nor save the build's index in\n"
		 "                          $XDG_CACHE_HOME/kprof (~/.cache/kprof)\n"},
	{"output", 'o', KP_OPT_ONCE, AT(output),
	 .help = "  -o, --output=OUT        write to OUT (replaced only when complete)\n"},
	{"help", 'h', KP_OPT_HELP, .help = "  -h, --help              show this help\n"},
};

static void print_help(FILE *out)
{
	fputs(usage_line, out);
	fputs("Names the code at each ADDR of FILE (virtual addresses in hex, with or without\n"
	      "0x, as addr2line takes them), or at each address read from stdin, one per line.\n"
	      "Prints a line per address: the address, a space, then its frames outermost\n"
	      "first, separated by ';': the function, then the functions inlined into it down\n"
	      "to the innermost; [unknown: WHY] when nothing names it.\n",
	      out);
	kp_opts_help(opts, sizeof(opts) / sizeof(opts[0]), out);
}

static const struct kp_opts table = {.cmd = "symbolize",
				     KP_OPTS_ROWS(opts),
				     .getopt_says = true,
				     .usage_status = 2,
				     .help = print_help,
				     .unknown = say_usage};

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct symbolize_cli *c)
{
	int status = kp_opts_parse(&table, argc, argv, c, NULL);

	if (status < 0 && !c->exe) {
		kp_err("symbolize: which file? (-e FILE)");
		fputs(usage_line, stderr);
		return 2;
	}
	return status;
}

int kp_cmd_symbolize(int argc, char **argv)
{
	struct symbolize_cli c = {0};
	struct kp_outfile out = {0};
	struct kp_diag d = {{0}};
	struct kp_addrs a = {0};
	struct kp_notes notes = {0};
	char *cache_dir = NULL, *abs = NULL;
	int status = parse_args(argc, argv, &c);

	if (status >= 0)
		goto out;
	status = 1;
	if (kp_addr_text_args(argv + optind, (size_t)(argc - optind), &a, &d) < 0 ||
	    !(abs = kp_addr_text_elf_path(c.exe, &d)) ||
	    (optind == argc && kp_addr_text_read(stdin, "stdin", &a, &d) != 0) ||
	    kp_outfile_open(&out, c.output, &d) != 0) {
		kp_err("%s", d.msg);
		goto out;
	}
	c.opts.debuginfo_dirs = c.dirs.v;
	c.opts.n_debuginfo_dirs = c.dirs.n;
	c.opts.no_lines = !c.lines;
	if (!c.no_cache)
		c.opts.cache_dir = cache_dir = kp_args_cache_dir();
	kp_addr_text_symbolize(out.fp, abs, &c.opts, &a, c.annotate, c.lines, &notes);
	kp_warn_each(&notes);
	if (kp_outfile_commit(&out, &d) != 0) {
		kp_err("%s", d.msg);
		goto out;
	}
	status = 0;
out:
	kp_outfile_abort(&out);
	kp_notes_fini(&notes);
	free(cache_dir);
	free(abs);
	free(a.v);
	kp_args_list_free(&c.dirs);
	return status;
}
