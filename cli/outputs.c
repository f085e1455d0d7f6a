/* The outputs of a command (output/): opened and written, what went wrong
 * said to the user. */
#include "cli/output.h"

#include <stdio.h>

#include "cli/messages.h"

int kp_outputs_open(struct kp_outputs *o, const struct kp_output_table *t, const char *fname,
		    const char *const *paths, size_t npaths, const char *cmd)
{
	struct kp_diag d = {{0}};
	int status = kp_outputs_create(o, t, fname, paths, npaths, cmd, &d);

	if (status)
		kp_outputs_say(t, o->unknown_ext, d.msg);
	return status;
}

void kp_outputs_say(const struct kp_output_table *t, bool unknown_ext, const char *msg)
{
	kp_err("%s", msg);
	if (unknown_ext) {
		kp_output_help(t, stderr);
		kp_say("a name without an extension is written as %s; -f NAME writes any name",
		       t->fallback->name);
	}
}

int kp_outputs_write(struct kp_outputs *o, const struct kp_output_ctx *ctx, char *where,
		     size_t wsize)
{
	struct kp_diag d = {{0}};

	if (!kp_outputs_commit(o, ctx, where, wsize, &d))
		return 0;
	kp_err("%s", d.msg);
	return 1;
}
