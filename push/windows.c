/* The pushes of a recording cut into windows (push/windows.h): each
 * window encoded as gzip'd pprof and handed to kp_push, which sends it in
 * the background to every target, with the service name and the secrets
 * gathered here (push/credentials.c; docs/push.md). */
#include "push/windows.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/pprof.h"
#include "push/credentials.h"
#include "util/xalloc.h"

struct kp_push_windows {
	struct kp_push *push;
	double timeout;
	size_t ntargets;
	unsigned encode_failures;
};

int kp_push_windows_new(struct kp_push_windows **out, const struct kp_push_windows_opts *o,
			struct kp_diag *d)
{
	struct kp_push_credentials sec;
	struct kp_push_opts po = o->push;
	struct kp_push_windows *p;
	char *service;
	int err;

	*out = NULL;
	service = kp_push_service_name(o->service, o->command);
	kp_push_credentials_take(&sec, o->token_file, o->password_file, o->header_file);
	p = kp_xcalloc(1, sizeof(*p));
	p->timeout = po.timeout > 0 ? po.timeout : 10;
	p->ntargets = po.ntargets;
	po.service = service;
	po.token = sec.token;
	po.password = sec.password;
	po.header_lines = sec.header_lines;
	po.timeout = p->timeout;
	err = kp_push_new(&p->push, &po, d);
	free(service);
	kp_push_credentials_free(&sec);
	if (err < 0) {
		kp_push_windows_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int kp_push_windows_add(struct kp_push_windows *p, const struct kp_profile *prof, unsigned index,
			uint64_t from_ns, uint64_t until_ns, struct kp_diag *d)
{
	struct kp_diag why = {""};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err = f ? kp_pprof_write(prof, NULL, f, &why) : -1;

	if (f && fclose(f) != 0)
		err = -1;
	if (err < 0) {
		/* a profile pprof cannot hold (a value past int64): said once */
		if (!p->encode_failures++)
			err = kp_diag_set(d, -EINVAL, "window %u cannot be pushed: %s", index,
					  why.msg[0] ? why.msg : "out of memory");
		else
			err = 0;
	} else {
		kp_push_window(p->push, (const uint8_t *)buf, len, from_ns, until_ns);
	}
	free(buf);
	return err < 0 ? err : 0;
}

int kp_push_windows_end(struct kp_push_windows *p, bool quiet, char *line, size_t size)
{
	struct kp_push_stats st;
	uint64_t delivered = 0;
	bool whole;

	line[0] = '\0';
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
	snprintf(line, size,
		 "pushed %llu window%s: %llu deliveries to %zu server%s, %llu refused by a "
		 "server for good, %llu lost, %llu kept in the spool for the next run",
		 (unsigned long long)st.queued, st.queued == 1 ? "" : "s",
		 (unsigned long long)delivered, p->ntargets, p->ntargets == 1 ? "" : "s",
		 (unsigned long long)st.dropped,
		 (unsigned long long)(st.lost +
				      (st.pending > st.spooled ? st.pending - st.spooled : 0)),
		 (unsigned long long)st.spooled);
	return whole ? 0 : 1;
}

void kp_push_windows_free(struct kp_push_windows *p)
{
	if (!p)
		return;
	kp_push_free(p->push);
	free(p);
}
