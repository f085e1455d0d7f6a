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
#include <unistd.h>

#include "push/push.h"
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

char *kp_push_service_name(const char *given, const char *command)
{
	char host[256] = "";

	if (given)
		return kp_xstrdup(given); /* checked by kp_push_new */
	if (command) {
		const char *slash = strrchr(command, '/');

		return kp_push_service_clean(slash ? slash + 1 : command);
	}
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	return kp_push_service_clean(host);
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

char *kp_labels_hide_userinfo(const char *arg)
{
	const char *sep = strstr(arg, "://"), *host, *at = NULL;
	size_t end;

	if (!sep)
		return kp_xstrdup(arg);
	host = sep + 3;
	end = strcspn(host, "/?#");
	/* the last '@' of the authority ends the userinfo (RFC 3986) */
	for (size_t i = 0; i < end; i++)
		if (host[i] == '@')
			at = host + i;
	if (!at)
		return kp_xstrdup(arg);
	return kp_xasprintf("%.*s***%s", (int)(host - arg), arg, at);
}

/* The URL without user:password, the trailing '/' removed; NULL when
 * libcurl cannot write it back. */
static char *url_without_userinfo(CURLU *u)
{
	char *s = NULL, *shown = NULL;

	curl_url_set(u, CURLUPART_USER, NULL, 0);
	curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
	if (curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK) {
		size_t n = strlen(s);

		while (n > 0 && s[n - 1] == '/')
			n--;
		shown = kp_xstrndup(s, n);
		curl_free(s);
	}
	return shown;
}

/* url as given, its display form without user:password; http and https
 * only. A message names the URL without its user:password either. */
static int check_url(const char *arg, const char *url, char **shown, struct kp_diag *d)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *q = NULL, *frag = NULL;
	char *safe = kp_labels_hide_userinfo(arg);
	int err = 0;

	if (!u) {
		free(safe);
		return kp_diag_set(d, -ENOMEM, "--push: out of memory");
	}
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
		err = kp_diag_set(d, -EINVAL, "--push '%s': not a URL (http://HOST[:PORT][/PATH])",
				  safe);
	else if (strcmp(scheme, "http") && strcmp(scheme, "https"))
		err = kp_diag_set(d, -EINVAL, "--push '%s': http or https URLs only", safe);
	else if (curl_url_get(u, CURLUPART_QUERY, &q, 0) == CURLUE_OK ||
		 curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK)
		err = kp_diag_set(d, -EINVAL, "--push '%s': the URL may not have a ?query or #part",
				  safe);
	if (err == 0 && !(*shown = url_without_userinfo(u)))
		err = kp_diag_set(d, -EINVAL, "--push '%s': not a URL", safe);
	free(safe);
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
	char *key, *plain;
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
	/* the spool's name of the target: the URL as given but its
	 * user:password, so that no secret is hashed to disk and moving the
	 * password off the command line keeps the windows spooled before */
	plain = kp_labels_hide_userinfo(t->url);
	key = kp_xasprintf("%s=%s", kp_labels_kind_name(t->kind), plain);
	t->key = kp_checksum(key, strlen(key));
	free(key);
	free(plain);
	return 0;
}

int kp_labels_target_password(struct kp_target *t, const char *password)
{
	CURLU *u = curl_url();
	char *user = NULL, *pass = NULL, *s = NULL;
	int r = 0;

	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, t->url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK && *user &&
	    curl_url_get(u, CURLUPART_PASSWORD, &pass, 0) != CURLUE_OK) {
		/* URL-encoded as it goes in: any byte of a password is kept */
		if (curl_url_set(u, CURLUPART_PASSWORD, password, CURLU_URLENCODE) != CURLUE_OK ||
		    curl_url_get(u, CURLUPART_URL, &s, 0) != CURLUE_OK) {
			r = -EINVAL;
		} else {
			size_t n = strlen(s);

			while (n > 0 && s[n - 1] == '/')
				n--;
			explicit_bzero(t->url, strlen(t->url));
			free(t->url);
			t->url = kp_xstrndup(s, n);
			explicit_bzero(s, strlen(s));
			r = 1;
		}
	}
	curl_free(user);
	curl_free(pass);
	curl_free(s);
	curl_url_cleanup(u);
	return r;
}

void kp_labels_target_free(struct kp_target *t)
{
	if (t->url)
		explicit_bzero(t->url, strlen(t->url)); /* it may hold user:password */
	free(t->url);
	free(t->shown);
}

/* Names whose value is a credential: HTTP's own, Pyroscope's and Mimir's
 * tenant, and any name that says key, token, secret, password, auth or
 * session (X-Api-Key, X-Auth-Token, ...). */
bool kp_push_header_secret(const char *arg)
{
	static const char *const exact[] = {"cookie", "x-scope-orgid", "x-grafana-org-id"};
	static const char *const part[] = {"auth",    "key",	"token",      "secret",	  "pass",
					   "session", "cookie", "credential", "signature"};
	size_t n = strcspn(arg, ":");
	char name[64];

	if (n >= sizeof(name))
		return true; /* not a name of any header in use: kept from view */
	for (size_t i = 0; i < n; i++)
		name[i] = (char)tolower((unsigned char)arg[i]);
	name[n] = '\0';
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strcmp(name, exact[i]) == 0)
			return true;
	for (size_t i = 0; i < sizeof(part) / sizeof(part[0]); i++)
		if (strstr(name, part[i]))
			return true;
	return false;
}

/* RFC 9110's token for the name; a value without CR, LF or other controls
 * (a header cannot smuggle another one in). The messages never show the
 * value: it may be a credential. */
int kp_labels_header(const char *arg, const char *what, struct kp_diag *d)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg)
		return kp_diag_set(d, -EINVAL, "%s: 'Name: value' expected", what);
	for (const char *c = arg; c < colon; c++)
		if (!isalnum((unsigned char)*c) && !strchr("!#$%&'*+-.^_`|~", *c))
			return kp_diag_set(d, -EINVAL, "%s: the name is not an HTTP token", what);
	for (const char *c = colon + 1; *c; c++)
		if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
			return kp_diag_set(d, -EINVAL,
					   "%s: the value of '%.*s' holds a control byte", what,
					   (int)(colon - arg), arg);
	return 0;
}
