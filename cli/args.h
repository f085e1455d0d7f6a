/* Argument helpers the commands share, so that an option written by
 * several commands parses, and fails, one way. */
#ifndef KP_CLI_ARGS_H
#define KP_CLI_ARGS_H

/* $XDG_CACHE_HOME/kprof, else ~/.cache/kprof (an absolute XDG_CACHE_HOME
 * only, as the XDG spec says): where kprof keeps its kallsyms copy and
 * build indexes unless --no-cache. NULL without either. Returns a new heap
 * string. */
char *kp_args_cache_dir(void);

#endif
