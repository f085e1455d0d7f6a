#include "cli/args.h"

#include <stdlib.h>

#include "cli/messages.h"
#include "util/xalloc.h"

void kp_args_list_add(struct kp_args_list *l, const char *arg)
{
	kp_xgrow(&l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = arg;
}

void kp_args_list_free(struct kp_args_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

int kp_args_top(const char *cmd, const char *arg, size_t min, size_t max, size_t *out)
{
	char *end;
	long n = strtol(arg, &end, 10);

	if (*end || end == arg || n < (long)min || n > (long)max) {
		if (min == 0)
			kp_err("%s: --top: expected a count (0: all), not '%s'", cmd, arg);
		else
			kp_err("%s: --top: expected a count from %zu, not '%s'", cmd, min, arg);
		return -1;
	}
	*out = (size_t)n;
	return 0;
}

char *kp_args_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return kp_xasprintf("%s/kprof", xdg);
	if (home && home[0] == '/')
		return kp_xasprintf("%s/.cache/kprof", home);
	return NULL;
}
