/* The pushes of kprof --every (record_every.h): each window encoded as
 * gzip'd pprof and handed to push/, which sends it in the background to
 * every --push server, with the secrets push/credentials.c gathers
 * (docs/push.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/messages.h"
#include "cli/record_every.h"
#include "formats/pprof.h"
#include "push/credentials.h"
#include "push/push.h"
#include "util/xalloc.h"

struct kp_record_push {
	struct kp_push *push;
	double timeout;
	size_t ntargets;
	unsigned encode_failures;
};

/* push/'s messages: one line each, foreign bytes escaped by push/ already
 * (util/textsafe.h), so written as they are; called from its sender
 * thread too. */
static void push_log(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "kprof: %s\n", line);
}

int kp_record_push_new(struct kp_record_push **out, const struct kp_record_args *c,
		       const char *command)
{
	struct kp_push_credentials sec;
	const struct kp_every_args *e = &c->every;
	struct kp_record_push *p;
	struct kp_diag d = {""};
	char *service;
	int err;

	*out = NULL;
	if (!e->push.n)
		return 0;
	service = kp_push_service_name(e->service, command);
	kp_push_credentials_take(&sec, e->token_file, e->password_file, e->header_file);
	p = kp_xcalloc(1, sizeof(*p));
	p->timeout = e->push_timeout > 0 ? e->push_timeout : 10;
	p->ntargets = e->push.n;
	err = kp_push_new(&p->push,
			  &(struct kp_push_opts){
				  .targets = (const char *const *)e->push.v,
				  .ntargets = e->push.n,
				  .service = service,
				  .labels = (const char *const *)e->labels.v,
				  .nlabels = e->labels.n,
				  .headers = (const char *const *)e->headers.v,
				  .nheaders = e->headers.n,
				  .token = sec.token,
				  .password = sec.password,
				  .header_lines = sec.header_lines,
				  .spool_dir = e->spool,
				  .timeout = p->timeout,
				  .log = push_log,
			  },
			  &d);
	free(service);
	kp_push_credentials_free(&sec);
	if (err < 0) {
		kp_err("%s", d.msg);
		kp_record_push_free(p);
		return 2;
	}
	*out = p;
	return 0;
}

void kp_record_push_window(struct kp_record_push *p, const struct kp_window *w)
{
	struct kp_diag d = {""};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err = f ? kp_pprof_write(w->prof, NULL, f, &d) : -1;

	if (f && fclose(f) != 0)
		err = -1;
	if (err < 0) {
		/* a profile pprof cannot hold (a value past int64): said once */
		if (!p->encode_failures++)
			kp_warn("window %u cannot be pushed: %s", w->index,
				d.msg[0] ? d.msg : "out of memory");
	} else {
		kp_push_window(p->push, (const uint8_t *)buf, len, w->from_ns, w->until_ns);
	}
	free(buf);
}

int kp_record_push_finish(struct kp_record_push *p, bool quiet)
{
	struct kp_push_stats st;
	uint64_t delivered = 0;
	bool whole;

	/* what is queued gets one timeout's chance; the spool keeps the rest */
	kp_push_finish(p->push, p->timeout, &st);
	for (size_t i = 0; i < KP_PUSH_MAX_TARGETS; i++)
		delivered += st.delivered[i];
	/* a window spooled for the next run is not lost: exit 0 then */
	whole = !st.lost && !st.dropped && st.pending <= st.spooled && !p->encode_failures;
	if (quiet && whole && !st.pending)
		return 0;
	/* windows, not (window, server) pairs, but for the refusals; what
	 * was pending and not spooled is lost with kprof's exit */
	fprintf(stderr,
		"kprof: pushed %llu window%s: %llu deliveries to %zu server%s, %llu refused by a "
		"server for good, %llu lost, %llu kept in the spool for the next run\n",
		(unsigned long long)st.queued, st.queued == 1 ? "" : "s",
		(unsigned long long)delivered, p->ntargets, p->ntargets == 1 ? "" : "s",
		(unsigned long long)st.dropped,
		(unsigned long long)(st.lost +
				     (st.pending > st.spooled ? st.pending - st.spooled : 0)),
		(unsigned long long)st.spooled);
	return whole ? 0 : 1;
}

void kp_record_push_free(struct kp_record_push *p)
{
	if (!p)
		return;
	kp_push_free(p->push);
	free(p);
}
