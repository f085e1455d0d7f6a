#include "cli/opts.h"

#include <getopt.h>
#include <stdlib.h>

#include "cli/messages.h"
#include "cli/svg_options.h"
#include "util/xalloc.h"

static bool takes_value(const struct kp_opt *o)
{
	return o->kind != KP_OPT_FLAG && o->kind != KP_OPT_ACTION && o->kind != KP_OPT_HELP;
}

/* getopt's value of row i: its letter, or 2000 + i */
static int opt_val(const struct kp_opts *t, size_t i)
{
	return t->v[i].letter ? t->v[i].letter : 2000 + (int)i;
}

/* Sets what row o says from arg. Returns -1 to go on, else the exit status. */
static int opt_apply(const struct kp_opts *t, const struct kp_opt *o, const char *arg, void *cli)
{
	char *field = (char *)cli + o->off;

	switch (o->kind) {
	case KP_OPT_FLAG:
		*(bool *)field = true;
		return -1;
	case KP_OPT_TEXT:
		*(const char **)field = arg;
		return -1;
	case KP_OPT_ONCE:
		if (*(const char **)field) {
			kp_err("%s: -o given twice (%s, %s): it writes one output; kprof report "
			       "writes several formats from one profile",
			       t->cmd, *(const char **)field, arg);
			return 2;
		}
		*(const char **)field = arg;
		return -1;
	case KP_OPT_LIST:
		kp_args_list_add((struct kp_args_list *)(void *)field, arg);
		return -1;
	case KP_OPT_NUMBER:
		return kp_args_number(t->cmd, o->name, arg, o->min, o->max, o->open_min,
				      (double *)(void *)field) < 0
			       ? t->usage_status
			       : -1;
	case KP_OPT_HELP:
		t->help(stdout);
		return 0;
	default:
		return o->set(cli, arg, o);
	}
}

int kp_opts_parse(const struct kp_opts *t, int argc, char **argv, void *cli,
		  struct kp_svg_opts *svg)
{
	struct option *own = kp_xcalloc(t->n + 1, sizeof(*own)), *opts = own;
	char shorts[64];
	size_t n = 0, len = 0;
	int c, status = -1;

	if (t->colon)
		shorts[len++] = ':';
	for (size_t i = 0; i < t->n; i++) {
		const struct kp_opt *o = &t->v[i];

		if (o->name)
			own[n++] = (struct option){o->name,
						   takes_value(o) ? required_argument : no_argument,
						   NULL, opt_val(t, i)};
		if (o->letter && len + 3 < sizeof(shorts)) {
			shorts[len++] = o->letter;
			if (takes_value(o))
				shorts[len++] = ':';
		}
	}
	shorts[len] = '\0';
	if (t->svg)
		opts = kp_svg_options_with(own, n);
	optind = 1;
	if (!t->getopt_says)
		opterr = 0;
	while (status < 0 && (c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		size_t i = 0;
		int r;

		while (i < t->n && opt_val(t, i) != c)
			i++;
		if (i < t->n) {
			status = opt_apply(t, &t->v[i], optarg, cli);
		} else if (c == '?' || c == ':' || !t->svg) {
			if (t->unknown)
				t->unknown(c, argv);
			else
				kp_args_unknown(t->cmd, argv);
			status = t->usage_status;
		} else if ((r = kp_svg_options_apply(c, optarg, svg)) <= 0) {
			if (r == 0)
				t->help(stderr);
			status = t->usage_status;
		}
	}
	if (opts != own)
		free(opts);
	free(own);
	if (status < 0 && (argc - optind < t->operands_min ||
			   (t->operands_max && argc - optind > t->operands_max))) {
		kp_err("%s", t->operands_wrong);
		status = 2;
	}
	return status;
}
