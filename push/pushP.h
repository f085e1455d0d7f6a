/* What only push/'s files share: the targets, the labels, one request's
 * outcome, the spool. */
#ifndef KP_PUSH_PUSHP_H
#define KP_PUSH_PUSHP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "push/push_opts.h"
#include "util/diag.h"

enum kp_target_kind { KP_TARGET_PYROSCOPE, KP_TARGET_PARCA };

struct kp_target {
	enum kp_target_kind kind;
	char *url;    /* the base URL as given, trailing '/' removed */
	char *shown;  /* the same without user:password, for messages */
	uint64_t key; /* the checksum of "KIND=URL": names the target in spool files */
};

struct kp_label {
	char *name, *value;
};

/* labels.c: the service name and the labels, checked against the rules of
 * both servers (docs/push.md). */
int kp_labels_check_service(const char *s, struct kp_diag *d);
/* Splits "NAME=VALUE" into l (strings the caller frees) after checking both. */
int kp_labels_parse(const char *arg, struct kp_label *l, struct kp_diag *d);
/* Fills t from "KIND=URL"; its strings are freed with kp_labels_target_free. */
int kp_labels_target(const char *arg, struct kp_target *t, struct kp_diag *d);
void kp_labels_target_free(struct kp_target *t);
/* Checks "Name: value" (an HTTP token, a value with no control bytes);
 * what names where it came from in d ("--header", "--header-file F line
 * 3"), which never shows the value. */
int kp_labels_header(const char *arg, const char *what, struct kp_diag *d);
/* arg ("KIND=URL" or a URL) with the user:password of its URL replaced by
 * "***": for messages. Returns a new string the caller frees. */
char *kp_labels_hide_userinfo(const char *arg);
/* Gives t's URL the password of the user it names, when it names one
 * without a password: returns 1 then, 0 when it did not, or a negative
 * errno. */
int kp_labels_target_password(struct kp_target *t, const char *password);
const char *kp_labels_kind_name(enum kp_target_kind k);

/* auth.c: the secrets of o (token, password, header lines) read once and
 * made headers of p, or the password of its targets' URLs; after the
 * targets and the --header list are taken. */
struct kp_push;
int kp_auth_take(struct kp_push *p, const struct kp_push_opts *o, struct kp_diag *d);

/* request.c: what is sent. */
/* Pyroscope's URL: BASE/ingest?name=SERVICE{l=v,...}&from=S&until=S&format=pprof&spyName=kprof,
 * escaped. Returns a new string the caller frees. */
char *kp_request_pyroscope_url(const char *base, const char *service, const struct kp_label *l,
			       size_t nl, uint64_t from_ns, uint64_t until_ns);
/* Parca's WriteRaw JSON body (grpc-gateway's mapping of WriteRawRequest).
 * Returns a new string the caller frees (*len its length). */
char *kp_request_parca_body(const char *service, const struct kp_label *l, size_t nl,
			    const uint8_t *gz, size_t gzlen, size_t *len);

/* http.c: one POST. */
enum kp_http_result {
	KP_HTTP_OK,    /* 2xx */
	KP_HTTP_RETRY, /* 5xx, 429, 408, a transport failure: later */
	KP_HTTP_DROP,  /* another 4xx, a 3xx: never */
};

struct kp_http_req {
	const char *url;
	const char *content_type;
	const void *body;
	size_t len;
	const char *const *headers; /* "Name: value", the credentials among them */
	size_t nheaders;
	long timeout_ms;
	const _Atomic bool *abort; /* true: the transfer is cut */
};

/* Sends r; the outcome's short description ("HTTP 503 (first line)",
 * "connection refused", ...) goes to why. */
enum kp_http_result kp_http_post(const struct kp_http_req *r, char *why, size_t whylen);

/* spool.c: windows on disk (docs/push.md, "The spool"). */
struct kp_spool;

struct kp_spool_entry {
	char name[64];
	uint64_t from_ns, until_ns, len;
	uint32_t pending; /* bit i: targets[i] has not received it */
};

/* Opens (or creates, mode 0700) dir; max: the bytes it may hold. */
int kp_spool_open(struct kp_spool **out, const char *dir, uint64_t max, struct kp_diag *d);
void kp_spool_close(struct kp_spool *s);
/* Writes a window for the targets whose keys are given (all pending);
 * e->name gets its file name. */
int kp_spool_write(struct kp_spool *s, const uint8_t *data, size_t len, uint64_t from_ns,
		   uint64_t until_ns, const uint64_t *keys, size_t nkeys, struct kp_spool_entry *e,
		   struct kp_diag *d);
/* Marks the target of this key delivered in the file's header. */
void kp_spool_done(struct kp_spool *s, const char *name, uint64_t key);
void kp_spool_remove(struct kp_spool *s, const char *name, uint64_t len);
/* Reads the window back (checked); *data is the caller's to free. */
int kp_spool_read(struct kp_spool *s, const char *name, uint8_t **data, size_t *len,
		  struct kp_diag *d);
/* The windows left by a previous run, oldest first, matched to the current
 * targets' keys (e->pending: bit i for keys[i]). Files not ours or
 * damaged are skipped, with one message in notes (empty: none). Returns
 * the count; *out is the caller's to free. */
size_t kp_spool_load(struct kp_spool *s, const uint64_t *keys, size_t nkeys,
		     struct kp_spool_entry **out, char *notes, size_t notes_len);
/* Frees room for len more bytes: true when it fits under the bound. */
bool kp_spool_fits(const struct kp_spool *s, uint64_t len);

#endif
