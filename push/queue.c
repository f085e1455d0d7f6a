/* The windows waiting to be sent, the bounds on them, and the sender
 * thread: which window goes next, what an outcome does to it, and the one
 * line an operator reads per failure episode (docs/push.md, "Retries" and
 * "Messages"). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "push/queue.h"
#include "util/textsafe.h"
#include "util/xalloc.h"

uint64_t kp_queue_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void kp_queue_log(struct kp_push *p, const char *fmt, ...)
{
	char raw[1024], line[1024 * KP_TEXTSAFE_MAX_RATIO];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	len = len < 0 ? 0 : len >= (int)sizeof(raw) ? (int)sizeof(raw) - 1 : len;
	/* a server's words (its answer, a Location) and the labels are
	 * printed, not obeyed: every control byte, C1 and bidi control escaped
	 * (util/textsafe.h), so the line is one line whoever logs it */
	kp_textsafe_copy(line, sizeof(line), raw, (size_t)len);
	p->log(p->log_arg, line);
}

static void fmt_time(uint64_t ns, char *buf, size_t size)
{
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "s" for a count other than one */
static const char *s_(uint64_t n)
{
	return n == 1 ? "" : "s";
}

static const char *kind(const struct kp_queue_target *t)
{
	return kp_labels_kind_name(t->t.kind);
}

void kp_queue_append(struct kp_push *p, struct kp_queue_window *w)
{
	/* queued while a target fails: it waits out that failure too */
	for (size_t i = 0; i < p->nt; i++)
		if (p->tg[i].failing)
			w->held |= 1u << i;
	if (p->tail)
		p->tail->next = w;
	else
		p->head = w;
	p->tail = w;
	if (w->data)
		p->mem += w->len;
}

/* Unlinks w and frees it; its spool file goes when remove_file. */
static void remove_window(struct kp_push *p, struct kp_queue_window *w, bool remove_file)
{
	struct kp_queue_window **pp = &p->head, *prev = NULL;

	while (*pp && *pp != w) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	*pp = w->next;
	if (p->tail == w)
		p->tail = prev;
	if (w->data)
		p->mem -= w->len;
	if (w->spooled && remove_file)
		kp_spool_remove(p->spool, w->spool_name, w->len);
	free(w->data);
	free(w);
	if (!p->head)
		p->losing = false;
}

static uint64_t waiting(const struct kp_push *p, size_t i)
{
	uint64_t n = 0;

	for (const struct kp_queue_window *w = p->head; w; w = w->next)
		n += (w->pending >> i) & 1u;
	return n;
}

/* Windows held up by tg[i]'s failure still to settle for it. */
static bool holding(const struct kp_push *p, size_t i)
{
	for (const struct kp_queue_window *w = p->head; w; w = w->next)
		if (w->pending & w->held & (1u << i))
			return true;
	return false;
}

static struct kp_queue_window *oldest_for(const struct kp_push *p, size_t i)
{
	for (struct kp_queue_window *w = p->head; w; w = w->next)
		if (w->pending & (1u << i))
			return w;
	return NULL;
}

static void lose(struct kp_push *p, struct kp_queue_window *w, const char *why)
{
	char at[32];

	p->st.lost++;
	if (!p->losing) {
		fmt_time(w->from_ns, at, sizeof(at));
		kp_queue_log(p,
			     "push: %s: window of %s dropped unsent (and the oldest after it "
			     "while this lasts)",
			     why, at);
		p->losing = true;
	}
	remove_window(p, w, true);
}

void kp_queue_bound(struct kp_push *p)
{
	while (p->mem > p->max_memory) {
		struct kp_queue_window *w = p->head;

		/* the oldest data not being sent, the newest window kept */
		while (w && (!w->data || w->busy))
			w = w->next;
		if (!w || w == p->tail)
			return;
		if (w->spooled) {
			p->mem -= w->len;
			free(w->data);
			w->data = NULL;
		} else {
			char why[96];

			if (p->max_memory >= (1u << 20))
				snprintf(why, sizeof(why),
					 "more than %" PRIu64 " MiB waiting, no spool",
					 p->max_memory >> 20);
			else
				snprintf(why, sizeof(why),
					 "more than %" PRIu64 " bytes waiting, no spool",
					 p->max_memory);
			lose(p, w, why);
		}
	}
}

void kp_queue_spool(struct kp_push *p, struct kp_queue_window *w)
{
	uint64_t keys[KP_PUSH_MAX_TARGETS];
	struct kp_spool_entry e;
	struct kp_diag d;
	bool fits;
	int err;

	pthread_mutex_lock(&p->mu);
	/* the spool's bound: the oldest windows leave it first */
	while (!(fits = kp_spool_fits(p->spool, w->len))) {
		struct kp_queue_window *o = p->head;

		while (o && (!o->spooled || o->busy))
			o = o->next;
		if (!o)
			break;
		if (o->data) {
			kp_spool_remove(p->spool, o->spool_name, o->len);
			o->spooled = false;
		} else {
			lose(p, o, "the spool is full");
		}
	}
	pthread_mutex_unlock(&p->mu);
	if (!fits) {
		kp_queue_log(p,
			     "push: no room in the spool for a window of %zu bytes: kept in "
			     "memory only",
			     w->len);
		return;
	}
	for (size_t i = 0; i < p->nt; i++)
		keys[i] = p->tg[i].t.key;
	err = kp_spool_write(p->spool, w->data, w->len, w->from_ns, w->until_ns, keys, p->nt, &e,
			     &d);
	if (err == -EFBIG) {
		/* this window only: the spool itself works */
		kp_queue_log(p, "push: %s: kept in memory only", d.msg);
		return;
	}
	if (err < 0) {
		if (!p->spool_failing)
			kp_queue_log(p, "push: %s; windows kept in memory only until it works",
				     d.msg);
		p->spool_failing = true;
		return;
	}
	if (p->spool_failing)
		kp_queue_log(p, "push: the spool is written again");
	p->spool_failing = false;
	w->spooled = true;
	memcpy(w->spool_name, e.name, sizeof(w->spool_name));
}

void kp_queue_reload(struct kp_push *p)
{
	uint64_t keys[KP_PUSH_MAX_TARGETS];
	struct kp_spool_entry *e = NULL;
	char notes[512] = "";
	size_t n;

	for (size_t i = 0; i < p->nt; i++)
		keys[i] = p->tg[i].t.key;
	n = kp_spool_load(p->spool, keys, p->nt, &e, notes, sizeof(notes));
	if (*notes)
		kp_queue_log(p, "push: %s", notes);
	for (size_t k = 0; k < n; k++) {
		struct kp_queue_window *w = kp_xcalloc(1, sizeof(*w));

		w->len = e[k].len;
		w->from_ns = e[k].from_ns;
		w->until_ns = e[k].until_ns;
		w->pending = e[k].pending;
		w->spooled = true;
		memcpy(w->spool_name, e[k].name, sizeof(w->spool_name));
		kp_queue_append(p, w);
	}
	free(e);
	p->st.reloaded = n;
	if (n)
		kp_queue_log(p,
			     "push: %zu window%s left by a previous run in the spool: sent first",
			     n, s_(n));
}

/* A run of refusals with the same answer is reported once, its end with a count. */
static void end_drop_run(struct kp_push *p, struct kp_queue_target *t)
{
	if (t->drop_run > 1)
		kp_queue_log(p, "push to %s %s: %" PRIu64 " more window%s refused (%s)", kind(t),
			     t->t.shown, t->drop_run - 1, s_(t->drop_run - 1), t->drop_why);
	t->drop_run = 0;
	t->drop_why[0] = '\0';
}

static void report_drop(struct kp_push *p, struct kp_queue_target *t,
			const struct kp_queue_window *w, const char *why)
{
	char at[32];

	if (t->drop_run && strncmp(t->drop_why, why, sizeof(t->drop_why) - 1) == 0) {
		t->drop_run++;
		return;
	}
	end_drop_run(p, t);
	fmt_time(w->from_ns, at, sizeof(at));
	kp_queue_log(p, "push to %s %s: %s; window of %s dropped", kind(t), t->t.shown, why, at);
	/* only its start is compared: cut on purpose */
	snprintf(t->drop_why, sizeof(t->drop_why), "%.*s", (int)sizeof(t->drop_why) - 1, why);
	t->drop_run = 1;
}

/* "delivered again" says that windows held up by a failure reached the
 * server after all: none was (a clean start, windows left by a previous
 * run sent at once, the held ones refused or lost): no line. */
static void report_recovery(struct kp_push *p, struct kp_queue_target *t)
{
	if (!t->recovering)
		return;
	t->recovering = false;
	if (!t->sent_again)
		return;
	kp_queue_log(
		p, "push to %s %s: delivered again: %" PRIu64 " window%s sent after %" PRIu64 " s",
		kind(t), t->t.shown, t->sent_again, s_(t->sent_again), (t->outage_ms + 500) / 1000);
}

static void retry_later(struct kp_push *p, size_t i, const char *why, uint64_t now)
{
	struct kp_queue_target *t = &p->tg[i];
	unsigned jitter;
	uint64_t n;

	p->st.retries++;
	t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : p->bmin;
	if (t->backoff_ms > p->bmax)
		t->backoff_ms = p->bmax;
	/* up to a quarter more, so that agents restarted together spread out */
	jitter = (unsigned)rand_r(&p->rand) % (t->backoff_ms / 4 + 1);
	t->next_try_ms = now + t->backoff_ms + jitter;
	if (p->finishing && p->spool) {
		/* at exit, with a spool, one more try only: what it could not
		 * send stays in the spool (a stop does not wait out a server
		 * that is down); without one, tries go on until the deadline */
		t->next_try_ms = UINT64_MAX;
		pthread_cond_broadcast(&p->cv);
	}
	/* every window waiting for it now is held up by this failure */
	for (struct kp_queue_window *w = p->head; w; w = w->next)
		w->held |= w->pending & (1u << i);
	if (t->failing)
		return;
	report_recovery(p, t);
	t->failing = true;
	t->fail_since_ms = now;
	n = waiting(p, i);
	kp_queue_log(p, "push to %s %s: %s; %" PRIu64 " window%s waiting, retrying", kind(t),
		     t->t.shown, why, n, s_(n));
}

/* What the outcome of sending w to tg[i] does (mu held). */
static void settle(struct kp_push *p, struct kp_queue_window *w, size_t i, enum kp_http_result res,
		   const char *why)
{
	struct kp_queue_target *t = &p->tg[i];
	uint64_t now = kp_queue_now_ms();

	if (res == KP_HTTP_RETRY) {
		if (!atomic_load(&p->abort))
			retry_later(p, i, why, now);
		return;
	}
	w->pending &= ~(1u << i);
	/* the server answers: the failure is over, a refusal included */
	if (t->failing) {
		t->failing = false;
		t->recovering = true;
		t->outage_ms = now - t->fail_since_ms;
		t->sent_again = 0;
	}
	if (res == KP_HTTP_OK) {
		p->st.delivered[i]++;
		t->backoff_ms = 0;
		t->next_try_ms = 0;
		t->sent_again += (w->held >> i) & 1u;
		end_drop_run(p, t);
	} else {
		p->st.dropped++;
		report_drop(p, t, w, why);
	}
	if (w->pending == 0)
		remove_window(p, w, true);
	else if (w->spooled)
		kp_spool_done(p->spool, w->spool_name, t->t.key);
	if (t->recovering && !holding(p, i))
		report_recovery(p, t);
}

/* Sends data to tg[i] (mu not held). */
static enum kp_http_result deliver(struct kp_push *p, size_t i, const struct kp_queue_window *w,
				   const uint8_t *data, size_t len, char *why, size_t whylen)
{
	const struct kp_target *t = &p->tg[i].t;
	struct kp_http_req r = {.headers = (const char *const *)p->headers,
				.nheaders = p->nh,
				.timeout_ms = p->timeout_ms,
				.abort = &p->abort};
	enum kp_http_result res;
	char *url, *body = NULL;

	if (t->kind == KP_TARGET_PYROSCOPE) {
		url = kp_request_pyroscope_url(t->url, p->service, p->labels, p->nl, w->from_ns,
					       w->until_ns);
		r.content_type = "application/octet-stream";
		r.body = data;
		r.len = len;
	} else {
		url = kp_xasprintf("%s/api/profiles/writeraw", t->url);
		body = kp_request_parca_body(p->service, p->labels, p->nl, data, len, &r.len);
		r.content_type = "application/json";
		r.body = body;
	}
	r.url = url;
	res = kp_http_post(&r, why, whylen);
	free(url);
	free(body);
	return res;
}

/* Sends w to tg[i]: mu is let go meanwhile, w marked busy. */
static void send_one(struct kp_push *p, struct kp_queue_window *w, size_t i)
{
	uint8_t *data = w->data;
	size_t len = w->len;
	enum kp_http_result res;
	struct kp_diag d;
	char why[512];

	w->busy = true;
	pthread_mutex_unlock(&p->mu);
	if (!data && kp_spool_read(p->spool, w->spool_name, &data, &len, &d) < 0) {
		pthread_mutex_lock(&p->mu);
		w->busy = false;
		lose(p, w, d.msg);
		return;
	}
	res = deliver(p, i, w, data, len, why, sizeof(why));
	if (data != w->data)
		free(data);
	pthread_mutex_lock(&p->mu);
	w->busy = false;
	settle(p, w, i, res, why);
}

/* The next (window, target) due, round robin over the targets; else the
 * time the next one is due in *wake. */
static struct kp_queue_window *pick(struct kp_push *p, uint64_t now, size_t *ti, uint64_t *wake)
{
	for (size_t k = 0; k < p->nt; k++) {
		size_t i = (p->rr + k) % p->nt;
		struct kp_queue_window *w = oldest_for(p, i);

		if (!w)
			continue;
		if (p->tg[i].next_try_ms > now) {
			if (p->tg[i].next_try_ms < *wake)
				*wake = p->tg[i].next_try_ms;
			continue;
		}
		p->rr = (i + 1) % p->nt;
		*ti = i;
		return w;
	}
	return NULL;
}

void *kp_queue_sender(void *arg)
{
	struct kp_push *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		uint64_t wake = UINT64_MAX;
		size_t i = 0;
		struct kp_queue_window *w = pick(p, kp_queue_now_ms(), &i, &wake);

		if (w) {
			send_one(p, w, i);
			pthread_cond_broadcast(&p->cv);
		} else if (wake == UINT64_MAX) {
			pthread_cond_wait(&p->cv, &p->mu);
		} else {
			struct timespec ts = {.tv_sec = (time_t)(wake / 1000),
					      .tv_nsec = (long)(wake % 1000) * 1000000};

			pthread_cond_timedwait(&p->cv, &p->mu, &ts);
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void kp_queue_summary(struct kp_push *p)
{
	uint64_t pending = 0, spooled = 0;

	for (size_t i = 0; i < p->nt; i++) {
		report_recovery(p, &p->tg[i]);
		end_drop_run(p, &p->tg[i]);
	}
	for (const struct kp_queue_window *w = p->head; w; w = w->next) {
		pending++;
		spooled += w->spooled;
	}
	p->st.pending = pending;
	p->st.spooled = spooled;
}

void kp_queue_clear(struct kp_push *p)
{
	while (p->head)
		remove_window(p, p->head, false);
}
