#include "cli/args.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int kp_args_parse_u64(const char *arg, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || end == arg || arg[0] == '-' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int kp_args_parse_double(const char *arg, double min, double max, bool open_min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !isfinite(v) || v < min || v > max || (open_min && v == min))
		return -EINVAL;
	*out = v;
	return 0;
}

int kp_args_number(const char *cmd, const char *opt, const char *arg, double min, double max,
		   bool open_min, double *out)
{
	if (kp_args_parse_double(arg, min, max, open_min, out) < 0) {
		kp_err("%s: --%s: expected a number %s %g to %g, not '%s'", cmd, opt,
		       open_min ? "above" : "from", min, max, arg);
		return -1;
	}
	return 0;
}

int kp_args_number_or_percent(const char *cmd, const char *opt, const char *arg, double min,
			      double max, double pmax, bool *percent, double *out)
{
	size_t len = strlen(arg);
	char num[64];

	*percent = len > 1 && len < sizeof(num) && arg[len - 1] == '%';
	if (!*percent)
		return kp_args_number(cmd, opt, arg, min, max, false, out);
	memcpy(num, arg, len - 1); /* the number before its sign */
	num[len - 1] = '\0';
	return kp_args_number(cmd, opt, num, min, pmax, false, out);
}

void kp_args_unknown(const char *cmd, char **argv)
{
	if (optopt > 0 && optopt < 128)
		kp_err("%s: option -%c: unknown or missing its value", cmd, optopt);
	else
		kp_err("%s: unknown option or missing value: %s", cmd, argv[optind - 1]);
	fprintf(stderr, "Try 'kprof %s --help'.\n", cmd);
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

void kp_opts_help(const struct kp_opt *v, size_t n, FILE *out)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].help)
			fputs(v[i].help, out);
}
