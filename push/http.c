/* One POST with libcurl's easy interface, and what its outcome means for
 * the window (docs/push.md, "Retries"). Redirects are not followed: a
 * profiler that carries a token must not send it wherever a 30x points. */
#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "push/pushP.h"
#include "util/xalloc.h"

/* The answer's first bytes are kept for messages; reading stops past this
 * (a server that streams forever is cut here or by the timeout). */
#define KEEP	 200
#define READ_MAX (1u << 20)

struct answer {
	char keep[KEEP + 1];
	size_t kept, read;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t len = size * n;

	if (a->kept < KEEP) {
		size_t k = len < KEEP - a->kept ? len : KEEP - a->kept;

		memcpy(a->keep + a->kept, p, k);
		a->kept += k;
		a->keep[a->kept] = '\0';
	}
	a->read += len;
	return a->read > READ_MAX ? 0 : len;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const _Atomic bool *abort = arg;

	return abort && atomic_load(abort);
}

/* The answer's first line, printable, for a message. */
static void first_line(const struct answer *a, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < a->kept && o + 1 < size; i++) {
		unsigned char c = (unsigned char)a->keep[i];

		if (c == '\n' || c == '\r')
			break;
		out[o++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

static enum kp_http_result judge(CURL *h, CURLcode rc, const struct answer *a, const char *err,
				 char *why, size_t whylen)
{
	long status = 0;
	char line[128];
	char *loc = NULL;

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && status >= 200)) {
		if (rc == CURLE_ABORTED_BY_CALLBACK)
			snprintf(why, whylen, "stopped at exit");
		else
			snprintf(why, whylen, "%s", *err ? err : curl_easy_strerror(rc));
		return KP_HTTP_RETRY;
	}
	first_line(a, line, sizeof(line));
	if (status >= 200 && status < 300) {
		snprintf(why, whylen, "HTTP %ld", status);
		return KP_HTTP_OK;
	}
	if (status >= 300 && status < 400) {
		curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc);
		snprintf(why, whylen, "HTTP %ld redirect to %s, not followed", status,
			 loc ? loc : "(no Location)");
		return KP_HTTP_DROP;
	}
	snprintf(why, whylen, "HTTP %ld (%s)", status, *line ? line : "no answer text");
	if (status >= 500 || status == 429 || status == 408 || status < 100)
		return KP_HTTP_RETRY;
	return KP_HTTP_DROP;
}

static struct curl_slist *headers(const struct kp_http_req *r)
{
	struct curl_slist *h = NULL, *t;
	char *s = kp_xasprintf("Content-Type: %s", r->content_type);

	/* no "Expect: 100-continue" round trip before a large body */
	h = curl_slist_append(h, "Expect:");
	t = h ? curl_slist_append(h, s) : NULL;
	free(s);
	for (size_t i = 0; t && i < r->nheaders; i++)
		t = curl_slist_append(t, r->headers[i]);
	if (!t)
		kp_oom(0);
	return t;
}

enum kp_http_result kp_http_post(const struct kp_http_req *r, char *why, size_t whylen)
{
	char err[CURL_ERROR_SIZE] = "";
	struct answer a = {.kept = 0};
	struct curl_slist *hl;
	enum kp_http_result res;
	CURLcode rc;
	CURL *h;

	h = curl_easy_init();
	if (!h)
		kp_oom(0);
	hl = headers(r);
	curl_easy_setopt(h, CURLOPT_URL, r->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, r->timeout_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, r->timeout_ms);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "kprof");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)r->abort);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	rc = curl_easy_perform(h);
	res = judge(h, rc, &a, err, why, whylen);
	curl_easy_cleanup(h);
	/* the list holds the credentials: wiped before it is freed */
	for (struct curl_slist *i = hl; i; i = i->next)
		explicit_bzero(i->data, strlen(i->data));
	curl_slist_free_all(hl);
	return res;
}
