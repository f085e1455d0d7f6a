/* The queue of windows and the sender thread (docs/push.md). One thread
 * sends everything, one request at a time, each target's windows oldest
 * first: a window is sent to a target once, since nothing else sends. The
 * recording loop only copies a window in (kp_push_window) and, with a
 * spool, writes it there first. */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "push/push.h"
#include "push/pushP.h"
#include "push/queue.h"
#include "util/secret.h"
#include "util/xalloc.h"

#define DEFAULT_MEMORY	(64ull << 20)
#define DEFAULT_SPOOL	(1ull << 30)
#define DEFAULT_TIMEOUT 10.0
#define BACKOFF_MIN_MS	1000u
#define BACKOFF_MAX_MS	300000u

static int take_options(struct kp_push *p, const struct kp_push_opts *o, struct kp_diag *d)
{
	int err;

	if (!o->log)
		return kp_diag_set(d, -EINVAL,
				   "push: no log callback: its messages go to the caller");
	if (o->ntargets == 0 || o->ntargets > KP_PUSH_MAX_TARGETS)
		return kp_diag_set(d, -EINVAL, "push: 1 to %d targets (--push), not %zu",
				   KP_PUSH_MAX_TARGETS, o->ntargets);
	if (o->nlabels > KP_PUSH_MAX_LABELS)
		return kp_diag_set(d, -EINVAL, "--label: at most %d labels", KP_PUSH_MAX_LABELS);
	for (size_t i = 0; i < o->ntargets; i++) {
		if ((err = kp_labels_target(o->targets[i], &p->tg[i].t, d)) < 0)
			return err;
		p->nt++;
		for (size_t j = 0; j < i; j++)
			if (p->tg[j].t.key == p->tg[i].t.key)
				return kp_diag_set(d, -EINVAL, "--push %s=%s is given twice",
						   kp_labels_kind_name(p->tg[i].t.kind),
						   p->tg[i].t.shown);
	}
	if ((err = kp_labels_check_service(o->service, d)) < 0)
		return err;
	p->service = kp_xstrdup(o->service);
	for (size_t i = 0; i < o->nlabels; i++) {
		if ((err = kp_labels_parse(o->labels[i], &p->labels[i], d)) < 0)
			return err;
		p->nl++;
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->labels[j].name, p->labels[i].name) == 0)
				return kp_diag_set(d, -EINVAL, "--label %s is given twice",
						   p->labels[i].name);
	}
	p->headers = kp_xcalloc(o->nheaders + 1, sizeof(char *));
	for (size_t i = 0; i < o->nheaders; i++) {
		if ((err = kp_labels_header(o->headers[i], "--header", d)) < 0)
			return err;
		p->headers[p->nh++] = kp_xstrdup(o->headers[i]);
	}
	return kp_auth_take(p, o, d);
}

static void defaults(struct kp_push *p, const struct kp_push_opts *o)
{
	double t = o->timeout > 0 ? o->timeout : DEFAULT_TIMEOUT;

	p->max_memory = o->max_memory ? o->max_memory : DEFAULT_MEMORY;
	p->timeout_ms = (long)(t * 1000.0);
	if (p->timeout_ms < 1)
		p->timeout_ms = 1;
	p->bmin = o->backoff_min_ms ? o->backoff_min_ms : BACKOFF_MIN_MS;
	p->bmax = o->backoff_max_ms ? o->backoff_max_ms : BACKOFF_MAX_MS;
	if (p->bmax < p->bmin)
		p->bmax = p->bmin;
	p->log = o->log;
	p->log_arg = o->log_arg;
	p->rand = (unsigned)kp_queue_now_ms() ^ (unsigned)getpid();
}

static int start_thread(struct kp_push *p, struct kp_diag *d)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	p->locks_made = true;
	/* the sender takes no signal: SIGINT and SIGTERM stay the recorder's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&p->thread, NULL, kp_queue_sender, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return kp_diag_errno(d, -err, "push: cannot start the sender thread");
	p->started = true;
	return 0;
}

/* Another agent's spool (-EBUSY) stops kprof before recording: spooling
 * beside it would take its windows. Any other failure is said, and the
 * pushes go on without a spool (the recording matters more). */
static int open_spool(struct kp_push *p, const struct kp_push_opts *o, struct kp_diag *d)
{
	int err = kp_spool_open(&p->spool, o->spool_dir,
				o->spool_max ? o->spool_max : DEFAULT_SPOOL, d);

	if (err == -EBUSY)
		return err;
	if (err < 0) {
		kp_queue_log(p,
			     "%s; going on without a spool (windows not yet delivered are "
			     "kept in memory only)",
			     d->msg);
		p->spool = NULL;
	}
	return 0;
}

int kp_push_new(struct kp_push **out, const struct kp_push_opts *o, struct kp_diag *d)
{
	struct kp_push *p = kp_xcalloc(1, sizeof(*p));
	int err;

	*out = NULL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		free(p);
		return kp_diag_set(d, -EIO, "push: libcurl did not start");
	}
	defaults(p, o);
	err = take_options(p, o, d);
	if (err == 0 && o->spool_dir)
		err = open_spool(p, o, d);
	if (err == 0 && p->spool)
		kp_queue_reload(p);
	if (err == 0)
		err = start_thread(p, d);
	if (err < 0) {
		kp_push_free(p);
		return err;
	}
	*out = p;
	return 0;
}

void kp_push_window(struct kp_push *p, const uint8_t *gz, size_t len, uint64_t from_ns,
		    uint64_t until_ns)
{
	struct kp_queue_window *w = kp_xcalloc(1, sizeof(*w));

	w->data = kp_xmalloc(len ? len : 1);
	memcpy(w->data, gz, len);
	w->len = len;
	w->from_ns = from_ns;
	w->until_ns = until_ns;
	w->pending = (uint32_t)((1ull << p->nt) - 1);
	if (p->spool)
		kp_queue_spool(p, w);
	pthread_mutex_lock(&p->mu);
	p->st.queued++;
	kp_queue_append(p, w);
	kp_queue_bound(p);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static void stop_thread(struct kp_push *p)
{
	if (!p->started)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	atomic_store(&p->abort, true);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	p->started = false;
}

/* Every target with a window still to send gave up at exit (its one
 * more try failed). Called with p->mu held. */
static bool all_given_up(struct kp_push *p)
{
	for (const struct kp_queue_window *w = p->head; w; w = w->next)
		for (size_t i = 0; i < p->nt; i++)
			if ((w->pending >> i & 1) && p->tg[i].next_try_ms != UINT64_MAX)
				return false;
	return true;
}

int kp_push_finish(struct kp_push *p, double wait_seconds, struct kp_push_stats *st)
{
	uint64_t deadline;

	pthread_mutex_lock(&p->mu);
	deadline = kp_queue_now_ms() + (uint64_t)(wait_seconds > 0 ? wait_seconds * 1000.0 : 0);
	p->finishing = true;
	/* a target waiting out its backoff is tried once more at once */
	for (size_t i = 0; i < p->nt; i++)
		p->tg[i].next_try_ms = 0;
	pthread_cond_broadcast(&p->cv);
	while (p->head && kp_queue_now_ms() < deadline && !all_given_up(p)) {
		struct timespec ts = {.tv_sec = (time_t)(deadline / 1000),
				      .tv_nsec = (long)(deadline % 1000) * 1000000};

		pthread_cond_timedwait(&p->cv, &p->mu, &ts);
	}
	pthread_mutex_unlock(&p->mu);
	stop_thread(p);
	kp_queue_summary(p);
	if (st)
		*st = p->st;
	return p->st.pending || p->st.dropped || p->st.lost ? 1 : 0;
}

void kp_push_free(struct kp_push *p)
{
	if (!p)
		return;
	stop_thread(p);
	kp_queue_clear(p);
	for (size_t i = 0; i < p->nt; i++)
		kp_labels_target_free(&p->tg[i].t);
	for (size_t i = 0; i < p->nl; i++) {
		free(p->labels[i].name);
		free(p->labels[i].value);
	}
	for (size_t i = 0; i < p->nh; i++)
		kp_secret_free(p->headers[i], 0);
	free(p->headers);
	free(p->service);
	if (p->spool)
		kp_spool_close(p->spool);
	if (p->locks_made) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	}
	free(p);
	curl_global_cleanup();
}
