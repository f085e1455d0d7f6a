/* Argument helpers the commands share, so that an option written by
 * several commands parses, and fails, one way: repeatable options, the
 * --top count, the default cache folder. Messages name the command
 * ("report: --top: ..."), as the commands' own do. */
#ifndef KP_CLI_ARGS_H
#define KP_CLI_ARGS_H

#include <stddef.h>

/* The values of a repeatable option (-o, --debuginfo-dir), in order. The
 * strings are argv's, not copied; free v only. */
struct kp_args_list {
	const char **v;
	size_t n, cap;
};

void kp_args_list_add(struct kp_args_list *l, const char *arg);
void kp_args_list_free(struct kp_args_list *l);

/* --top N for command cmd ("report"): a count from min (0 or 1; 0 means
 * all) to max. Returns 0, or -1 after printing "CMD: --top: expected a
 * count ..., not 'ARG'". */
int kp_args_top(const char *cmd, const char *arg, size_t min, size_t max, size_t *out);

/* $XDG_CACHE_HOME/kprof, else ~/.cache/kprof (an absolute XDG_CACHE_HOME
 * only, as the XDG spec says): where kprof keeps its kallsyms copy and
 * build indexes unless --no-cache. NULL without either. Returns a new heap
 * string. */
char *kp_args_cache_dir(void);

#endif
