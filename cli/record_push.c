/* The pushes of kprof --every (record_every.h): each window encoded as
 * gzip'd pprof and handed to push/, which sends it in the background. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/messages.h"
#include "cli/record_every.h"
#include "formats/pprof.h"

struct kp_record_push {
	int unused;
};

int kp_record_push_new(struct kp_record_push **out, const struct kp_record_args *c,
		       const char *command)
{
	(void)command;
	*out = NULL;
	if (c->every.push.n) {
		kp_err("--push: not built yet");
		return 2;
	}
	return 0;
}

void kp_record_push_window(struct kp_record_push *p, const struct kp_window *w)
{
	(void)p;
	(void)w;
}

int kp_record_push_finish(struct kp_record_push *p)
{
	(void)p;
	return 0;
}

void kp_record_push_free(struct kp_record_push *p)
{
	free(p);
}
