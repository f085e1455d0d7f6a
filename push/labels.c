/* The service name, the labels, the targets and the headers, checked when
 * kprof starts so that no window is refused later for them. The rules are
 * those both servers apply (docs/push.md, "Labels"): Pyroscope's /ingest
 * parses name=SERVICE{k=v,...} with pkg/og/ingestion's labelset parser
 * (api/model/labelset/labelset.go, validate.go), Parca's WriteRaw checks
 * Prometheus label names and refuses duplicates
 * (pkg/normalizer/normalizer.go). */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "push/pushP.h"
#include "util/checksum.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* Pyroscope's limits (pkg/validation: MaxLabelNameLength 1024,
 * MaxLabelValueLength 2048) */
#define NAME_MAX_LEN  1024
#define VALUE_MAX_LEN 2048

const char *kp_labels_kind_name(enum kp_target_kind k)
{
	return k == KP_TARGET_PARCA ? "parca" : "pyroscope";
}

static bool service_byte(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-' || c == '/';
}

int kp_labels_check_service(const char *s, struct kp_diag *d)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0)
		return kp_diag_set(d, -EINVAL, "--service: the service name is empty");
	if (n > VALUE_MAX_LEN)
		return kp_diag_set(d, -EINVAL, "--service: longer than %d bytes", VALUE_MAX_LEN);
	for (size_t i = 0; i < n; i++)
		if (!service_byte((unsigned char)s[i]))
			return kp_diag_set(d, -EINVAL,
					   "--service '%s': '%c' is not allowed (letters, digits "
					   "and _ . - / only, Pyroscope's rule)",
					   s, isprint((unsigned char)s[i]) ? s[i] : '?');
	return 0;
}

char *kp_push_service_clean(const char *name)
{
	char *s;

	if (!name || !*name)
		return kp_xstrdup("unknown");
	s = kp_xstrndup(name, strnlen(name, VALUE_MAX_LEN));
	for (char *c = s; *c; c++)
		if (!service_byte((unsigned char)*c))
			*c = '_';
	return s;
}

/* Prometheus's legacy label name, which Parca checks
 * (model.LabelName.IsValid) and Pyroscope keeps as is (it would rewrite a
 * '.'); names starting "__" are reserved by both, service_name is --service. */
static int check_name(const char *arg, const char *name, size_t n, struct kp_diag *d)
{
	if (n == 0)
		return kp_diag_set(d, -EINVAL, "--label '%s': the name is empty (NAME=VALUE)", arg);
	if (n > NAME_MAX_LEN)
		return kp_diag_set(d, -EINVAL, "--label: a name longer than %d bytes",
				   NAME_MAX_LEN);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!(isalpha(c) || c == '_' || (i > 0 && isdigit(c))))
			return kp_diag_set(d, -EINVAL,
					   "--label '%s': the name may hold letters, digits and _ "
					   "only, and not start with a digit",
					   arg);
	}
	if (n >= 2 && name[0] == '_' && name[1] == '_')
		return kp_diag_set(d, -EINVAL, "--label '%s': names starting '__' are reserved",
				   arg);
	if (n == 12 && memcmp(name, "service_name", 12) == 0)
		return kp_diag_set(d, -EINVAL, "--label '%s': the service name is --service", arg);
	return 0;
}

/* Pyroscope's parser ends a value at ',' or '}' and trims spaces around
 * it; a control byte or invalid UTF-8 would not survive either server. */
static int check_value(const char *arg, const char *v, struct kp_diag *d)
{
	size_t n = strlen(v), clean_len;
	char *buf = NULL;
	size_t cap = 0;

	if (n == 0)
		return kp_diag_set(d, -EINVAL, "--label '%s': the value is empty", arg);
	if (n > VALUE_MAX_LEN)
		return kp_diag_set(d, -EINVAL, "--label: a value longer than %d bytes",
				   VALUE_MAX_LEN);
	if (isspace((unsigned char)v[0]) || isspace((unsigned char)v[n - 1]))
		return kp_diag_set(d, -EINVAL,
				   "--label '%s': the value starts or ends with a space", arg);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c < 0x20 || c == 0x7f || c == ',' || c == '{' || c == '}')
			return kp_diag_set(d, -EINVAL,
					   "--label '%s': the value may not hold a control byte "
					   "or , { }",
					   arg);
	}
	kp_utf8_clean(v, n, &buf, &cap, &clean_len);
	free(buf);
	if (buf)
		return kp_diag_set(d, -EINVAL, "--label '%s': the value is not valid UTF-8", arg);
	return 0;
}

int kp_labels_parse(const char *arg, struct kp_label *l, struct kp_diag *d)
{
	const char *eq = strchr(arg, '=');
	int err;

	if (!eq)
		return kp_diag_set(d, -EINVAL, "--label '%s': NAME=VALUE expected", arg);
	err = check_name(arg, arg, (size_t)(eq - arg), d);
	if (err == 0)
		err = check_value(arg, eq + 1, d);
	if (err)
		return err;
	l->name = kp_xstrndup(arg, (size_t)(eq - arg));
	l->value = kp_xstrdup(eq + 1);
	return 0;
}

/* url as given, its display form without user:password; http and https only. */
static int check_url(const char *arg, const char *url, char **shown, struct kp_diag *d)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *q = NULL, *frag = NULL;
	int err = 0;

	if (!u)
		return kp_diag_set(d, -ENOMEM, "--push: out of memory");
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
		err = kp_diag_set(d, -EINVAL, "--push '%s': not a URL (http://HOST[:PORT][/PATH])",
				  arg);
	else if (strcmp(scheme, "http") && strcmp(scheme, "https"))
		err = kp_diag_set(d, -EINVAL, "--push '%s': http or https URLs only", arg);
	else if (curl_url_get(u, CURLUPART_QUERY, &q, 0) == CURLUE_OK ||
		 curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK)
		err = kp_diag_set(d, -EINVAL, "--push '%s': the URL may not have a ?query or #part",
				  arg);
	if (err == 0) {
		char *s = NULL;

		curl_url_set(u, CURLUPART_USER, NULL, 0);
		curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
		if (curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK) {
			size_t n = strlen(s);

			while (n > 0 && s[n - 1] == '/')
				n--;
			*shown = kp_xstrndup(s, n);
			curl_free(s);
		} else {
			err = kp_diag_set(d, -EINVAL, "--push '%s': not a URL", arg);
		}
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(q);
	curl_free(frag);
	curl_url_cleanup(u);
	return err;
}

int kp_labels_target(const char *arg, struct kp_target *t, struct kp_diag *d)
{
	const char *eq = strchr(arg, '=');
	size_t n;
	char *key;
	int err;

	memset(t, 0, sizeof(*t));
	if (eq && (size_t)(eq - arg) == 9 && memcmp(arg, "pyroscope", 9) == 0)
		t->kind = KP_TARGET_PYROSCOPE;
	else if (eq && (size_t)(eq - arg) == 5 && memcmp(arg, "parca", 5) == 0)
		t->kind = KP_TARGET_PARCA;
	else
		return kp_diag_set(d, -EINVAL, "--push '%s': pyroscope=URL or parca=URL expected",
				   arg);
	err = check_url(arg, eq + 1, &t->shown, d);
	if (err)
		return err;
	n = strlen(eq + 1);
	while (n > 0 && eq[n] == '/')
		n--;
	t->url = kp_xstrndup(eq + 1, n);
	key = kp_xasprintf("%s=%s", kp_labels_kind_name(t->kind), t->url);
	t->key = kp_checksum(key, strlen(key));
	free(key);
	return 0;
}

void kp_labels_target_free(struct kp_target *t)
{
	free(t->url);
	free(t->shown);
}

/* RFC 9110's token for the name; a value without CR, LF or other controls
 * (a header cannot smuggle another one in). */
int kp_labels_header(const char *arg, struct kp_diag *d)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg)
		return kp_diag_set(d, -EINVAL, "--header '%s': 'Name: value' expected", arg);
	for (const char *c = arg; c < colon; c++)
		if (!isalnum((unsigned char)*c) && !strchr("!#$%&'*+-.^_`|~", *c))
			return kp_diag_set(d, -EINVAL,
					   "--header '%s': the name is not an HTTP token", arg);
	for (const char *c = colon + 1; *c; c++)
		if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
			return kp_diag_set(d, -EINVAL,
					   "--header: the value of '%.*s' holds a control "
					   "byte",
					   (int)(colon - arg), arg);
	return 0;
}
