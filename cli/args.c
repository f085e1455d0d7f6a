#include "cli/args.h"

#include <stdlib.h>

#include "util/xalloc.h"

char *kp_args_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return kp_xasprintf("%s/kprof", xdg);
	if (home && home[0] == '/')
		return kp_xasprintf("%s/.cache/kprof", home);
	return NULL;
}
