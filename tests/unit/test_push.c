/* push/: the requests each server is sent (Pyroscope's URL, Parca's JSON
 * read back with jansson), the checks of labels, targets and headers, and
 * the sender against a small HTTP server run in a thread here, which
 * answers from a script: 503 then 200, 400, 429, 302, an answer too slow
 * for the timeout, a connection closed mid-request, garbage. Backoffs are
 * shortened to milliseconds so the whole test takes about a second. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kp_test.h"
#include "push/credentials.h"
#include "push/push.h"
#include "push/pushP.h"

/* ---- the scripted server ---- */

#define MAX_REQ 64

struct req {
	char line[2048]; /* "POST /path?query HTTP/1.1" */
	char auth[256];	 /* the Authorization header's value */
	char ctype[128];
	char org[64]; /* X-Scope-OrgID */
	char *body;
	size_t len;
	bool answered_ok;
};

static struct {
	int fd, port;
	pthread_t th;
	pthread_mutex_t mu;
	const char *const *script; /* an action per request; the last one repeats */
	size_t nscript, n;
	struct req reqs[MAX_REQ];
	const char *failing; /* requests whose line holds this get 503, whatever the script */
	int parked[MAX_REQ]; /* connections left unanswered */
	size_t nparked;
	bool stop;
} srv = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void header_value(const char *head, const char *name, char *out, size_t size)
{
	const char *h = strcasestr(head, name);
	size_t n = 0;

	*out = '\0';
	if (!h)
		return;
	h += strlen(name);
	while (*h == ' ')
		h++;
	while (h[n] && h[n] != '\r' && n + 1 < size)
		n++;
	memcpy(out, h, n);
	out[n] = '\0';
}

/* Reads a whole request into r; false when the client went away. */
static bool read_request(int c, struct req *r)
{
	char head[8192];
	size_t n = 0, clen;
	char *end = NULL, v[32];

	while (!end && n + 1 < sizeof(head)) {
		ssize_t k = read(c, head + n, sizeof(head) - 1 - n);

		if (k <= 0)
			return false;
		n += (size_t)k;
		head[n] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	if (!end)
		return false;
	sscanf(head, "%2047[^\r]", r->line);
	header_value(head, "\nAuthorization:", r->auth, sizeof(r->auth));
	header_value(head, "\nContent-Type:", r->ctype, sizeof(r->ctype));
	header_value(head, "\nX-Scope-OrgID:", r->org, sizeof(r->org));
	header_value(head, "\nContent-Length:", v, sizeof(v));
	clen = (size_t)strtoull(v, NULL, 10);
	r->body = malloc(clen + 1);
	r->len = n - (size_t)(end + 4 - head);
	memcpy(r->body, end + 4, r->len);
	while (r->len < clen) {
		ssize_t k = read(c, r->body + r->len, clen - r->len);

		if (k <= 0)
			return false;
		r->len += (size_t)k;
	}
	r->body[r->len] = '\0';
	return true;
}

static void answer(int c, const char *action)
{
	char buf[512];
	int code = atoi(action);
	const char *text = strchr(action, ' ');

	if (!strcmp(action, "garbage")) {
		(void)!write(c, "hello there\r\n\r\n", 15);
		return;
	}
	text = text ? text + 1 : "";
	if (code == 302)
		snprintf(buf, sizeof(buf),
			 "HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n"
			 "Connection: close\r\n\r\n",
			 text);
	else
		snprintf(buf, sizeof(buf),
			 "HTTP/1.1 %d X\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
			 code, strlen(text), text);
	(void)!write(c, buf, strlen(buf));
}

static void *serve(void *arg)
{
	for (;;) {
		int c = accept(srv.fd, NULL, NULL);
		struct req r = {.len = 0};
		const char *action;
		bool got;

		if (c < 0 || srv.stop) {
			if (c >= 0)
				close(c);
			return NULL;
		}
		pthread_mutex_lock(&srv.mu);
		action = srv.script[srv.n < srv.nscript ? srv.n : srv.nscript - 1];
		pthread_mutex_unlock(&srv.mu);
		if (!strcmp(action, "close")) {
			char b[64];

			(void)!read(c, b, sizeof(b)); /* a part of the request, then gone */
			close(c);
			pthread_mutex_lock(&srv.mu);
			srv.n++;
			pthread_mutex_unlock(&srv.mu);
			continue;
		}
		/* recorded before the answer: the client may look as soon as it has it */
		got = read_request(c, &r);
		if (got && srv.failing && strstr(r.line, srv.failing))
			action = "503 down";
		r.answered_ok = got && atoi(action) >= 200 && atoi(action) < 300;
		pthread_mutex_lock(&srv.mu);
		if (srv.n < MAX_REQ)
			srv.reqs[srv.n] = r;
		else
			free(r.body);
		srv.n++;
		pthread_mutex_unlock(&srv.mu);
		if (got && !strcmp(action, "sleep")) {
			/* no answer, the connection kept open: the client's timeout */
			if (srv.nparked < MAX_REQ)
				srv.parked[srv.nparked++] = c;
			continue;
		}
		if (got)
			answer(c, action);
		close(c);
	}
}

static void server_start(const char *const *script, size_t n)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);

	srv.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bind(srv.fd, (struct sockaddr *)&a, sizeof(a));
	listen(srv.fd, 16);
	getsockname(srv.fd, (struct sockaddr *)&a, &al);
	srv.port = ntohs(a.sin_port);
	srv.script = script;
	srv.nscript = n;
	srv.n = 0;
	srv.stop = false;
	pthread_create(&srv.th, NULL, serve, NULL);
}

/* A new script for the server running, its requests forgotten. */
static void server_script(const char *const *script, size_t n)
{
	pthread_mutex_lock(&srv.mu);
	for (size_t i = 0; i < srv.n && i < MAX_REQ; i++)
		free(srv.reqs[i].body);
	memset(srv.reqs, 0, sizeof(srv.reqs));
	srv.script = script;
	srv.nscript = n;
	srv.n = 0;
	pthread_mutex_unlock(&srv.mu);
}

static void server_stop(void)
{
	srv.stop = true;
	shutdown(srv.fd, SHUT_RDWR);
	pthread_join(srv.th, NULL);
	close(srv.fd);
	while (srv.nparked)
		close(srv.parked[--srv.nparked]);
	for (size_t i = 0; i < srv.n && i < MAX_REQ; i++)
		free(srv.reqs[i].body);
	memset(srv.reqs, 0, sizeof(srv.reqs));
}

/* ---- the messages ---- */

static char logged[8192];
static int nlogged;

static void on_log(void *arg, const char *line)
{
	size_t n = strlen(logged);

	snprintf(logged + n, sizeof(logged) - n, "%s\n", line);
	nlogged++;
}

static void reset_log(void)
{
	logged[0] = '\0';
	nlogged = 0;
}

static struct kp_push_opts opts(const char *const *targets, size_t nt)
{
	struct kp_push_opts o = {.targets = targets,
				 .ntargets = nt,
				 .service = "svc",
				 .timeout = 5,
				 .log = on_log,
				 .backoff_min_ms = 10,
				 .backoff_max_ms = 40};
	return o;
}

static char url[128], url2[128];

static const char *const *pyro(void)
{
	static const char *t[1];

	snprintf(url, sizeof(url), "pyroscope=http://127.0.0.1:%d/", srv.port);
	t[0] = url;
	return t;
}

/* ---- what is sent ---- */

static void test_pyroscope_url(void)
{
	char n1[] = "env", v1[] = "prod", n2[] = "region", v2[] = "eu west";
	struct kp_label l[2] = {{n1, v1}, {n2, v2}};
	char *u = kp_request_pyroscope_url("http://h:4040", "my-svc", l, 2, 1700000000123456789ull,
					   1700000010123456789ull);

	CHECK_EQ_STR(u, "http://h:4040/ingest?name=my-svc%7Benv%3Dprod%2Cregion%3Deu%20west%7D"
			"&from=1700000000&until=1700000010&format=pprof&spyName=kprof");
	free(u);
	u = kp_request_pyroscope_url("https://h/p", "s", NULL, 0, 0, 999999999);
	CHECK_EQ_STR(u,
		     "https://h/p/ingest?name=s%7B%7D&from=0&until=0&format=pprof&spyName=kprof");
	free(u);
}

static void test_parca_body(void)
{
	char n1[] = "env", v1[] = "prod";
	struct kp_label l[1] = {{n1, v1}};
	uint8_t gz[300];
	unsigned char dec[512];
	size_t len;
	char *body;
	json_t *root, *labels, *s;
	json_error_t e;
	const char *b64;
	int n;

	for (size_t i = 0; i < sizeof(gz); i++)
		gz[i] = (uint8_t)(i * 7 + 0x1f);
	body = kp_request_parca_body("svc", l, 1, gz, sizeof(gz), &len);
	CHECK_EQ_INT(len, strlen(body));
	root = json_loads(body, 0, &e);
	CHECK(root != NULL);
	if (!root)
		return;
	s = json_array_get(json_object_get(root, "series"), 0);
	labels = json_object_get(json_object_get(s, "labels"), "labels");
	CHECK_EQ_INT(json_array_size(labels), 3);
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(labels, 0), "name")),
		     "__name__");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(labels, 0), "value")),
		     "process_cpu");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(labels, 1), "name")),
		     "service_name");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(labels, 1), "value")), "svc");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(labels, 2), "name")), "env");
	CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(labels, 2), "value")),
		     "prod");
	b64 = json_string_value(
		json_object_get(json_array_get(json_object_get(s, "samples"), 0), "rawProfile"));
	CHECK(b64 != NULL);
	n = b64 ? EVP_DecodeBlock(dec, (const unsigned char *)b64, (int)strlen(b64)) : -1;
	CHECK_EQ_INT(n, 300); /* 300 bytes: a multiple of 3, no padding */
	CHECK(n == 300 && memcmp(dec, gz, sizeof(gz)) == 0);
	CHECK(json_is_true(json_object_get(root, "normalized")));
	json_decref(root);
	free(body);
}

static bool label_ok(const char *arg)
{
	struct kp_label l = {NULL, NULL};
	struct kp_diag d;
	int err = kp_labels_parse(arg, &l, &d);

	free(l.name);
	free(l.value);
	return err == 0;
}

static void test_labels(void)
{
	struct kp_diag d;
	struct kp_target t;
	char *c;

	CHECK(label_ok("env=prod"));
	CHECK(label_ok("a_b9=x=y"));
	CHECK(label_ok("_x=Zürich"));
	CHECK(!label_ok("=x"));
	CHECK(!label_ok("noeq"));
	CHECK(!label_ok("1a=x"));
	CHECK(!label_ok("a.b=x"));
	CHECK(!label_ok("a-b=x"));
	CHECK(!label_ok("__x=y"));
	CHECK(!label_ok("service_name=x"));
	CHECK(!label_ok("env="));
	CHECK(!label_ok("env= x"));
	CHECK(!label_ok("env=a,b"));
	CHECK(!label_ok("env=a}b"));
	CHECK(!label_ok("env=a\tb"));
	CHECK(!label_ok("env=\xff"));
	CHECK(kp_labels_parse("a.b=x", &(struct kp_label){0}, &d) < 0 && strstr(d.msg, "a.b=x"));
	CHECK_EQ_INT(kp_labels_check_service("my-app/x.y_z", &d), 0);
	CHECK(kp_labels_check_service("a b", &d) < 0 && strstr(d.msg, "'a b'"));
	CHECK(kp_labels_check_service("", &d) < 0);
	c = kp_push_service_clean("g++ 1");
	CHECK_EQ_STR(c, "g___1");
	free(c);
	/* --service as given (kp_push_new checks it), else the command's base
	 * name cleaned, else the host's name (never empty) */
	c = kp_push_service_name("my app", "/usr/bin/x");
	CHECK_EQ_STR(c, "my app");
	free(c);
	c = kp_push_service_name(NULL, "/opt/g++ 1");
	CHECK_EQ_STR(c, "g___1");
	free(c);
	c = kp_push_service_name(NULL, NULL);
	CHECK(c[0] != '\0' && kp_labels_check_service(c, &d) == 0);
	free(c);
	CHECK_EQ_INT(kp_labels_header("X-Scope-OrgID: 1", "--header", &d), 0);
	CHECK(kp_labels_header("Bad Name: x", "--header", &d) < 0);
	CHECK(kp_labels_header("X: a\r\nY: b", "--header", &d) < 0);
	CHECK(kp_labels_header("NoColon", "--header", &d) < 0);
	/* a message never shows a header's value, nor a URL's user:password */
	CHECK(kp_labels_header("Authorization Bearer s3cr3t", "--header", &d) < 0 &&
	      !strstr(d.msg, "s3cr3t"));
	CHECK(kp_labels_header("Cookie: s3cr3t\x01", "--header", &d) < 0 &&
	      !strstr(d.msg, "s3cr3t"));
	CHECK(kp_labels_target("parca=ftp://u:s3cr3t@h", &t, &d) < 0 && !strstr(d.msg, "s3cr3t") &&
	      strstr(d.msg, "ftp://***@h"));
	CHECK(kp_labels_target("parca=http://u:s3cr3t@h/?q", &t, &d) < 0 &&
	      !strstr(d.msg, "s3cr3t"));
	CHECK(kp_push_header_secret("Authorization: x") && kp_push_header_secret("cookie: x") &&
	      kp_push_header_secret("X-Scope-OrgID: t") && kp_push_header_secret("X-Api-Key: k") &&
	      !kp_push_header_secret("X-Env: prod"));
	CHECK_EQ_INT(kp_labels_target("parca=http://user:pw@h:1/p/", &t, &d), 0);
	CHECK(t.kind == KP_TARGET_PARCA);
	CHECK_EQ_STR(t.shown, "http://h:1/p");
	CHECK_EQ_STR(t.url, "http://user:pw@h:1/p");
	kp_labels_target_free(&t);
	CHECK(kp_labels_target("foo=http://h", &t, &d) < 0 && strstr(d.msg, "pyroscope=URL"));
	CHECK(kp_labels_target("pyroscope=h:4040", &t, &d) < 0);
	CHECK(kp_labels_target("pyroscope=", &t, &d) < 0);
	CHECK(kp_labels_target("parca=ftp://h", &t, &d) < 0 && strstr(d.msg, "http or https"));
	CHECK(kp_labels_target("parca=http://h/?x=1", &t, &d) < 0 && strstr(d.msg, "query"));
	CHECK(kp_labels_target("parca=http://h o/", &t, &d) < 0);
}

/* ---- the sender ---- */

static uint8_t win[4][64];

static void push_windows(struct kp_push *p, int n, uint64_t first_s)
{
	for (int i = 0; i < n; i++) {
		memset(win[i % 4], 'a' + i, sizeof(win[0]));
		kp_push_window(p, win[i % 4], sizeof(win[0]),
			       (first_s + 10 * (uint64_t)i) * 1000000000u,
			       (first_s + 10 * (uint64_t)i + 10) * 1000000000u);
	}
}

/* The requests the server answered 2xx whose query holds from=FROM. */
static int delivered(const char *path, uint64_t from)
{
	char want[64];
	int n = 0;

	snprintf(want, sizeof(want), "from=%llu&", (unsigned long long)from);
	for (size_t i = 0; i < srv.n && i < MAX_REQ; i++)
		if (srv.reqs[i].answered_ok && strstr(srv.reqs[i].line, path) &&
		    (!strstr(path, "ingest") || strstr(srv.reqs[i].line, want)))
			n++;
	return n;
}

static void test_retry_then_deliver(void)
{
	static const char *const script[] = {"503 down for maintenance\nsecond line", "200"};
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p;
	struct kp_diag d;

	server_start(script, 2);
	o = opts(pyro(), 1);
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 3, 100);
	CHECK_EQ_INT(kp_push_finish(p, 3.0, &st), 0);
	kp_push_free(p);
	CHECK_EQ_INT(st.delivered[0], 3);
	CHECK_EQ_INT(st.retries, 1);
	CHECK_EQ_INT(st.pending, 0);
	CHECK_EQ_INT(srv.n, 4);
	/* each window once, oldest first */
	CHECK_EQ_INT(delivered("/ingest?", 100), 1);
	CHECK_EQ_INT(delivered("/ingest?", 110), 1);
	CHECK_EQ_INT(delivered("/ingest?", 120), 1);
	CHECK(strstr(srv.reqs[1].line, "from=100&") && strstr(srv.reqs[3].line, "from=120&"));
	CHECK(strstr(srv.reqs[1].line, "POST /ingest?name=svc%7B%7D&from=100&until=110&format=pprof"
				       "&spyName=kprof HTTP/1.1") != NULL);
	CHECK_EQ_STR(srv.reqs[1].ctype, "application/octet-stream");
	CHECK(srv.reqs[1].len == 64 && memcmp(srv.reqs[1].body, win[0], 64) == 0);
	/* one line for the episode, one for its end */
	CHECK_EQ_INT(nlogged, 2);
	CHECK(strstr(logged, "push to pyroscope http://127.0.0.1:") &&
	      strstr(logged, ": HTTP 503 (down for maintenance); "));
	CHECK(strstr(logged, " waiting, retrying\n"));
	CHECK(strstr(logged, "delivered again: 3 windows sent after 0 s\n"));
	if (kp_test_failed)
		fprintf(stderr, "%s", logged);
	server_stop();
}

static void test_outcomes(void)
{
	static const char *const script[] = {
		"400 bad label x", "429 slow down", "200",     "302 http://elsewhere/",
		"sleep",	   "close",	    "garbage", "200"};
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p;
	struct kp_diag d;

	server_start(script, 8);
	o = opts(pyro(), 1);
	o.timeout = 0.5; /* the "sleep" answer never comes */
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 4, 200);
	CHECK_EQ_INT(kp_push_finish(p, 4.0, &st), 1);
	kp_push_free(p);
	CHECK_EQ_INT(st.delivered[0], 2);
	CHECK_EQ_INT(st.dropped, 2);
	CHECK_EQ_INT(st.retries, 4);
	CHECK_EQ_INT(st.pending, 0);
	CHECK_EQ_INT(delivered("/ingest?", 210), 1);
	CHECK_EQ_INT(delivered("/ingest?", 230), 1);
	CHECK(strstr(logged, ": HTTP 400 (bad label x); window of 1970-01-01T00:03:20Z dropped\n"));
	CHECK(strstr(logged, ": HTTP 429 (slow down); ") && strstr(logged, " waiting, retrying\n"));
	CHECK(strstr(logged, ": HTTP 302 redirect to http://elsewhere/, not followed; window of "
			     "1970-01-01T00:03:40Z dropped\n"));
	CHECK(strstr(logged, "imed out")); /* libcurl's "Operation timed out after ..." */
	CHECK_EQ_INT(nlogged, 6);	   /* 2 drops, 2 episodes and their 2 ends */
	if (kp_test_failed)
		fprintf(stderr, "%s", logged);
	server_stop();
}

static char tmpdir[] = "/tmp/kp-push-XXXXXX";

static void test_parca_and_token(void)
{
	static const char *const script[] = {"200"};
	const char *targets[2], *headers[1] = {"X-Scope-OrgID: 7"};
	char tok[160], link[160];
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p;
	struct kp_diag d;
	int nparca = 0;

	server_start(script, 1);
	snprintf(url, sizeof(url), "pyroscope=http://127.0.0.1:%d", srv.port);
	snprintf(url2, sizeof(url2), "parca=http://127.0.0.1:%d/prefix/", srv.port);
	targets[0] = url;
	targets[1] = url2;
	snprintf(tok, sizeof(tok), "%s/token", tmpdir);
	kp_test_sh("printf 'secret-token  \\nsecond\\n' > %s && chmod 600 %s", tok, tok);
	o = opts(targets, 2);
	o.headers = headers;
	o.nheaders = 1;
	o.token = (struct kp_push_secret){.file = tok, .origin = "--token-file"};
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 2, 300);
	CHECK_EQ_INT(kp_push_finish(p, 3.0, &st), 0);
	kp_push_free(p);
	CHECK_EQ_INT(st.delivered[0], 2);
	CHECK_EQ_INT(st.delivered[1], 2);
	CHECK_EQ_INT(srv.n, 4);
	CHECK_EQ_INT(delivered("/ingest?", 300), 1);
	CHECK_EQ_INT(delivered("/ingest?", 310), 1);
	for (size_t i = 0; i < srv.n && i < MAX_REQ; i++) {
		CHECK_EQ_STR(srv.reqs[i].auth, "Bearer secret-token");
		CHECK_EQ_STR(srv.reqs[i].org, "7");
		if (strstr(srv.reqs[i].line, "POST /prefix/api/profiles/writeraw HTTP/1.1")) {
			nparca++;
			CHECK_EQ_STR(srv.reqs[i].ctype, "application/json");
			CHECK(strstr(srv.reqs[i].body, "\"normalized\":true") != NULL);
		}
	}
	CHECK_EQ_INT(nparca, 2);
	CHECK_EQ_INT(nlogged, 0);
	/* a token file behind a link, or both a token and an Authorization header: refused */
	snprintf(link, sizeof(link), "%s/token-link", tmpdir);
	CHECK_EQ_INT(symlink(tok, link), 0);
	o.token.file = link;
	CHECK(kp_push_new(&p, &o, &d) < 0 && strstr(d.msg, "--token-file"));
	headers[0] = "authorization: Bearer x";
	o.token.file = tok;
	CHECK(kp_push_new(&p, &o, &d) < 0 && strstr(d.msg, "give one"));
	server_stop();
}

/* kp_push_new refuses the credential file at path (made by the shell
 * command cmd) in one line that names it and says why, never its bytes. */
static bool refused_secret(const char *cmd, const char *path, const char *why)
{
	const char *const *t = pyro();
	struct kp_push_opts o = opts(t, 1);
	struct kp_push *p = NULL;
	struct kp_diag d = {""};
	int err;

	kp_test_sh("P=%s; rm -f $P; %s", path, cmd);
	o.token = (struct kp_push_secret){.file = path, .origin = "--token-file"};
	err = kp_push_new(&p, &o, &d);
	kp_push_free(p);
	if (err == 0 || !strstr(d.msg, path) || !strstr(d.msg, why) || strchr(d.msg, '\n') ||
	    strstr(d.msg, "tok-x")) {
		printf("  not refused as expected (%s): %s\n", why, d.msg);
		return false;
	}
	return true;
}

/* A credential file another user owns or could read or change is refused;
 * the token, the password and header lines each reach the server, from a
 * file or from the bytes given (the environment's). */
static void test_credentials(void)
{
	static const char *const script[] = {"200"};
	char tok[160], hdr[160], pw[160], target[128];
	const char *targets[1] = {target};
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p;
	struct kp_diag d;

	server_start(script, 1);
	snprintf(tok, sizeof(tok), "%s/cred", tmpdir);
	CHECK(refused_secret("printf tok-x > $P && chmod 644 $P", tok, "mode 0644"));
	CHECK(refused_secret("printf tok-x > $P && chmod 666 $P", tok, "mode 0666"));
	CHECK(refused_secret("printf tok-x > $P && chmod 640 $P", tok, "mode 0640"));
	CHECK(refused_secret("mkfifo -m 600 $P", tok, "not a regular file"));
	if (geteuid() == 0)
		CHECK(refused_secret("printf tok-x > $P && chmod 600 $P && chown 65534 $P", tok,
				     "owned by uid 65534"));
	/* from a file: header lines, the token; the password of the URL's user */
	snprintf(hdr, sizeof(hdr), "%s/headers", tmpdir);
	snprintf(pw, sizeof(pw), "%s/password", tmpdir);
	kp_test_sh("printf '# tenant\\n\\nX-Scope-OrgID: t-9\\r\\n' > %s && chmod 600 %s", hdr,
		   hdr);
	kp_test_sh("printf 'p@ss:w\\n' > %s && chmod 400 %s", pw, pw);
	snprintf(target, sizeof(target), "pyroscope=http://admin@127.0.0.1:%d", srv.port);
	o = opts(targets, 1);
	o.header_lines = (struct kp_push_secret){.file = hdr, .origin = "--header-file"};
	o.password = (struct kp_push_secret){.file = pw, .origin = "--password-file"};
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 1, 400);
	CHECK_EQ_INT(kp_push_finish(p, 3.0, &st), 0);
	kp_push_free(p);
	CHECK_EQ_INT(srv.n, 1);
	/* base64 of "admin:p@ss:w" */
	CHECK_EQ_STR(srv.reqs[0].auth, "Basic YWRtaW46cEBzczp3");
	CHECK_EQ_STR(srv.reqs[0].org, "t-9");
	/* the environment's bytes: a token and header lines */
	server_script(script, 1);
	snprintf(target, sizeof(target), "pyroscope=http://127.0.0.1:%d", srv.port);
	o = opts(targets, 1);
	o.token = (struct kp_push_secret){.value = "env-tok\n", .origin = "KPROF_PUSH_TOKEN"};
	o.header_lines = (struct kp_push_secret){.value = "X-Scope-OrgID: t-8",
						 .origin = "KPROF_PUSH_HEADERS"};
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 1, 410);
	CHECK_EQ_INT(kp_push_finish(p, 3.0, &st), 0);
	kp_push_free(p);
	CHECK_EQ_INT(srv.n, 1);
	CHECK_EQ_STR(srv.reqs[0].auth, "Bearer env-tok");
	CHECK_EQ_STR(srv.reqs[0].org, "t-8");
	/* a bad header line is named by its number, its value not shown; a
	 * password no URL can take, or two Authorization sources: refused */
	o.token = (struct kp_push_secret){0};
	o.header_lines.value = "X-Ok: 1\nAuthorization Bearer s3cr3t";
	CHECK(kp_push_new(&p, &o, &d) < 0 && strstr(d.msg, "KPROF_PUSH_HEADERS line 2") &&
	      !strstr(d.msg, "s3cr3t"));
	o.header_lines.value = NULL;
	o.password = (struct kp_push_secret){.value = "pw", .origin = "KPROF_PUSH_PASSWORD"};
	CHECK(kp_push_new(&p, &o, &d) < 0 && strstr(d.msg, "names its user"));
	o.password = (struct kp_push_secret){0};
	o.token = (struct kp_push_secret){.value = "a", .origin = "KPROF_PUSH_TOKEN"};
	o.header_lines.value = "Authorization: Basic eA==";
	CHECK(kp_push_new(&p, &o, &d) < 0 && strstr(d.msg, "give one"));
	server_stop();
}

/* Without a spool, windows beyond the memory bound are lost, the oldest first. */
static void test_memory_bound(void)
{
	static const char *const script[] = {"503 down"};
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p;
	struct kp_diag d;

	server_start(script, 1);
	o = opts(pyro(), 1);
	o.max_memory = 150; /* two windows of 64 bytes */
	o.backoff_min_ms = o.backoff_max_ms = 5000;
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 4, 400);
	CHECK_EQ_INT(kp_push_finish(p, 0, &st), 1);
	kp_push_free(p);
	CHECK(st.lost >= 2 && st.lost + st.pending == 4);
	CHECK(strstr(logged, "more than 150 bytes waiting, no spool: window of "));
	server_stop();
}

static int spool_files(const char *dir)
{
	return kp_test_sh("exit $(ls %s | grep -c '^w-.*\\.kpw$')", dir);
}

/* Windows the server refused for now stay in the spool at exit; the next
 * run sends them first, oldest first, each once, and empties the spool. A
 * damaged file is lost with a message, a foreign one skipped and left. */
static void test_spool_restart(void)
{
	static const char *const down[] = {"503 down"}, *const up[] = {"200"};
	char dir[160];
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p;
	struct kp_diag d;
	bool root = geteuid() == 0;

	snprintf(dir, sizeof(dir), "%s/spool", tmpdir);
	server_start(down, 1);
	o = opts(pyro(), 1);
	o.spool_dir = dir; /* made, 0700 */
	o.backoff_min_ms = o.backoff_max_ms = 5000;
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 4, 500);
	CHECK_EQ_INT(kp_push_finish(p, 0, &st), 1);
	kp_push_free(p);
	CHECK_EQ_INT(st.pending, 4);
	CHECK_EQ_INT(st.spooled, 4);
	CHECK_EQ_INT(spool_files(dir), 4);

	/* the third window's last byte flipped; a stranger's file beside */
	kp_test_sh("f=$(ls %s/w-* | sed -n 3p); printf 'x' | dd of=$f bs=1 seek=$(($(stat -c %%s "
		   "$f)-1)) "
		   "conv=notrunc status=none; echo junk > %s/junk.txt",
		   dir, dir);
	if (root)
		kp_test_sh("cp %s/$(ls %s | grep '^w-' | sed -n 1p) "
			   "%s/w-00000000000000000001-1-1.kpw && "
			   "chown nobody %s/w-00000000000000000001-1-1.kpw",
			   dir, dir, dir, dir);
	server_script(up, 1); /* the same URL: the spooled windows are for it */
	o.backoff_min_ms = 10;
	o.backoff_max_ms = 40;
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	CHECK_EQ_INT(kp_push_finish(p, 3.0, &st), 1);
	kp_push_free(p);
	CHECK_EQ_INT(st.reloaded, 4);
	CHECK_EQ_INT(st.delivered[0], 3);
	CHECK_EQ_INT(st.lost, 1);
	CHECK_EQ_INT(srv.n, 3);
	CHECK(strstr(srv.reqs[0].line, "from=500&") && strstr(srv.reqs[1].line, "from=510&") &&
	      strstr(srv.reqs[2].line, "from=530&"));
	CHECK(srv.reqs[0].len == 64 && memcmp(srv.reqs[0].body, "aaaa", 4) == 0);
	CHECK(strstr(logged, root ? "2 files skipped (left there), the first: "
				  : "1 files skipped (left there), the first: "));
	CHECK(strstr(logged, "4 windows left by a previous run in the spool: sent first\n"));
	CHECK(strstr(logged, "damaged (checksum)"));
	CHECK_EQ_INT(spool_files(dir), root ? 1 : 0);
	if (kp_test_failed)
		fprintf(stderr, "%s", logged);
	server_stop();
}

/* A spool directory kprof must not write in is refused, said in one line,
 * and the pushes go on without a spool (the recording matters more). */
static bool refused(struct kp_push_opts *o, const char *why)
{
	struct kp_push *p = NULL;
	struct kp_diag d;
	bool ok;

	reset_log();
	ok = kp_push_new(&p, o, &d) == 0 && p && nlogged == 1 && strstr(logged, why) &&
	     strstr(logged, "going on without a spool");
	if (p) {
		kp_push_finish(p, 0, NULL);
		kp_push_free(p);
	}
	return ok;
}

static void test_spool_refused(void)
{
	char dir[160], link[160];
	struct kp_push_opts o;

	snprintf(url, sizeof(url), "pyroscope=http://127.0.0.1:1");
	o = opts((const char *const[]){url}, 1);
	snprintf(dir, sizeof(dir), "%s/unsafe", tmpdir);
	snprintf(link, sizeof(link), "%s/link", tmpdir);
	kp_test_sh("mkdir -m 0700 %s && ln -s %s %s", dir, dir, link);
	o.spool_dir = link;
	CHECK(refused(&o, "a symbolic link, refused"));
	chmod(dir, 0770);
	o.spool_dir = dir;
	CHECK(refused(&o, "writable by group or others"));
	chmod(dir, 0700);
	if (geteuid() == 0) {
		kp_test_sh("chown nobody %s", dir);
		CHECK(refused(&o, "owned by uid"));
	}
	o.spool_dir = "/dev/null";
	CHECK(refused(&o, "not a directory"));
	CHECK(kp_test_sh("test -z \"$(ls -A %s)\"", dir) == 0); /* nothing written */
}

/* A full disk (a 64 KiB tmpfs, where mounting is allowed): one message,
 * the windows kept in memory. */
static void test_spool_full(void)
{
	static const char *const down[] = {"503 down"};
	static uint8_t big[40000];
	char dir[160];
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p;
	struct kp_diag d;

	snprintf(dir, sizeof(dir), "%s/small", tmpdir);
	if (kp_test_sh("mkdir -m 0700 %s && mount -t tmpfs -o size=64k,mode=0700 none %s "
		       "2>/dev/null",
		       dir, dir)) {
		printf("test_spool_full: no tmpfs mount here, skipped\n");
		return;
	}
	server_start(down, 1);
	o = opts(pyro(), 1);
	o.spool_dir = dir;
	o.backoff_min_ms = o.backoff_max_ms = 5000;
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	for (int i = 0; i < 3; i++)
		kp_push_window(p, big, sizeof(big), (uint64_t)(i + 1) * 1000000000u,
			       (uint64_t)(i + 2) * 1000000000u);
	kp_push_finish(p, 0, &st);
	kp_push_free(p);
	CHECK_EQ_INT(st.pending, 3);
	CHECK_EQ_INT(st.spooled, 1);
	CHECK(strstr(logged, "No space left on device; windows kept in memory only until it "
			     "works\n"));
	CHECK_EQ_INT(spool_files(dir), 1);
	kp_test_sh("umount %s", dir);
	server_stop();
}

/* The requests seen so far whose line holds s. */
static int seen(const char *s)
{
	int n = 0;

	pthread_mutex_lock(&srv.mu);
	for (size_t i = 0; i < srv.n && i < MAX_REQ; i++)
		n += strstr(srv.reqs[i].line, s) != NULL;
	pthread_mutex_unlock(&srv.mu);
	return n;
}

/* One target down does not hold back the other, and the spool remembers
 * which target has which window: the next run sends each only to the
 * target still missing it. */
static void test_spool_per_target(void)
{
	static const char *const ok[] = {"200"};
	const char *targets[2];
	char dir[160];
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p;
	struct kp_diag d;

	snprintf(dir, sizeof(dir), "%s/spool2", tmpdir);
	server_start(ok, 1);
	srv.failing = "/api/profiles/writeraw";
	snprintf(url, sizeof(url), "pyroscope=http://127.0.0.1:%d", srv.port);
	snprintf(url2, sizeof(url2), "parca=http://127.0.0.1:%d", srv.port);
	targets[0] = url;
	targets[1] = url2;
	o = opts(targets, 2);
	o.spool_dir = dir;
	o.backoff_min_ms = o.backoff_max_ms = 5000;
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 2, 600);
	/* the server has both; finish waits 0.3 s for their answers (Parca's
	 * target, still failing, keeps the queue from emptying) */
	for (int i = 0; i < 500 && seen("/ingest?") < 2; i++)
		usleep(10000);
	CHECK_EQ_INT(kp_push_finish(p, 0.3, &st), 1);
	kp_push_free(p);
	CHECK_EQ_INT(st.delivered[0], 2);
	CHECK_EQ_INT(st.delivered[1], 0);
	CHECK_EQ_INT(st.spooled, 2);
	CHECK_EQ_INT(spool_files(dir), 2);

	srv.failing = NULL;
	server_script(ok, 1);
	o.backoff_min_ms = 10;
	o.backoff_max_ms = 40;
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	CHECK_EQ_INT(kp_push_finish(p, 3.0, &st), 0);
	kp_push_free(p);
	CHECK_EQ_INT(st.reloaded, 2);
	CHECK_EQ_INT(st.delivered[0], 0);
	CHECK_EQ_INT(st.delivered[1], 2);
	CHECK_EQ_INT(seen("/ingest?"), 0);
	CHECK_EQ_INT(seen("POST /api/profiles/writeraw "), 2);
	CHECK_EQ_INT(spool_files(dir), 0);
	server_stop();
}

/* "delivered again" is said only when windows held up by a failure were
 * delivered later: not for a window pushed once the server answered
 * again (the one that failed was then refused: today "delivered again: 1
 * window"), not for windows a previous run left in the spool and sent at
 * once (nothing failed in this run). */
static void test_recovery_said(void)
{
	static const char *const script[] = {"503 down", "400 bad", "200"}, *const down[] = {"503"},
				 *const up[] = {"200"};
	char dir[160];
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p;
	struct kp_diag d;

	server_start(script, 3);
	o = opts(pyro(), 1);
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 1, 700);
	/* the refusal settled (its line logged) before the next window */
	for (int i = 0; i < 500 && __atomic_load_n(&nlogged, __ATOMIC_ACQUIRE) < 2; i++)
		usleep(10000);
	push_windows(p, 1, 800);
	CHECK_EQ_INT(kp_push_finish(p, 3.0, &st), 1);
	kp_push_free(p);
	CHECK_EQ_INT(st.delivered[0], 1);
	CHECK_EQ_INT(st.dropped, 1);
	CHECK(strstr(logged, " waiting, retrying\n") && strstr(logged, "HTTP 400 (bad)"));
	CHECK(!strstr(logged, "delivered again"));
	if (kp_test_failed)
		fprintf(stderr, "%s", logged);

	/* a clean reload */
	snprintf(dir, sizeof(dir), "%s/spool3", tmpdir);
	server_script(down, 1);
	o.spool_dir = dir;
	o.backoff_min_ms = o.backoff_max_ms = 5000;
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 2, 900);
	kp_push_finish(p, 0, &st);
	kp_push_free(p);
	CHECK_EQ_INT(st.spooled, 2);
	server_script(up, 1);
	reset_log();
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	CHECK_EQ_INT(kp_push_finish(p, 3.0, &st), 0);
	kp_push_free(p);
	CHECK_EQ_INT(st.reloaded, 2);
	CHECK_EQ_INT(st.delivered[0], 2);
	CHECK(!strstr(logged, "delivered again"));
	if (kp_test_failed)
		fprintf(stderr, "%s", logged);
	server_stop();
}

/* One agent a spool: a second kp_push_new on it (another agent: the lock
 * is per open file, so one process stands for two) stops with -EBUSY and
 * names the holder's pid; the first's windows stay. The lock goes with
 * the first, and a lock file that is not a regular file is refused. */
static void test_spool_locked(void)
{
	static const char *const down[] = {"503"};
	char dir[160], want[96];
	struct kp_push_opts o;
	struct kp_push_stats st;
	struct kp_push *p, *q = NULL;
	struct kp_diag d;

	snprintf(dir, sizeof(dir), "%s/spool4", tmpdir);
	server_start(down, 1);
	o = opts(pyro(), 1);
	o.spool_dir = dir;
	o.backoff_min_ms = o.backoff_max_ms = 5000;
	CHECK_EQ_INT(kp_push_new(&p, &o, &d), 0);
	push_windows(p, 2, 1000);
	snprintf(url2, sizeof(url2), "parca=http://127.0.0.1:%d", srv.port);
	o.targets = (const char *const[]){url2};
	reset_log();
	CHECK_EQ_INT(kp_push_new(&q, &o, &d), -EBUSY);
	CHECK(q == NULL);
	snprintf(want, sizeof(want), ": in use by another kprof (pid %d): ", (int)getpid());
	CHECK(strstr(d.msg, want) != NULL);
	CHECK_EQ_INT(spool_files(dir), 2);
	kp_push_finish(p, 0, &st);
	kp_push_free(p);
	CHECK_EQ_INT(st.spooled, 2);
	CHECK_EQ_INT(spool_files(dir), 2);
	/* the first gone, the spool is free (its windows, for another
	 * target, removed with a count) */
	CHECK_EQ_INT(kp_push_new(&q, &o, &d), 0);
	kp_push_finish(q, 0, NULL);
	kp_push_free(q);
	/* a FIFO at the lock's name: refused, never waited on */
	kp_test_sh("rm -f %s/kprof.lock && mkfifo %s/kprof.lock", dir, dir);
	reset_log();
	CHECK_EQ_INT(kp_push_new(&q, &o, &d), 0);
	CHECK(strstr(logged, "its lock file kprof.lock is not a regular file") &&
	      strstr(logged, "going on without a spool"));
	kp_push_finish(q, 0, NULL);
	kp_push_free(q);
	server_stop();
}

static void setup(void)
{
	CHECK(mkdtemp(tmpdir) != NULL);
}

static void cleanup(void)
{
	kp_test_sh("rm -rf %s", tmpdir);
}

/* The secrets the command line hides: a URL's user:password, a
 * credential header's value; a user alone and other headers are none. */
static void test_secrets_in_args(void)
{
	char with_pass[] = "pyroscope=http://me:pw@host:4040/x?a@b",
	     user[] = "parca=http://me@host", plain[] = "pyroscope=host:4040",
	     auth[] = "Authorization:  Bearer abc", other[] = "X-Trace: on", empty[] = "X-Api-Key:";
	size_t len = 0;
	char *at;

	at = kp_push_credentials_in_url(with_pass, &len);
	CHECK(at == with_pass + strlen("pyroscope=http://") && len == strlen("me:pw"));
	CHECK(kp_push_credentials_in_url(user, &len) == NULL);
	CHECK(kp_push_credentials_in_url(plain, &len) == NULL);
	at = kp_push_credentials_in_header(auth, &len);
	CHECK(at != NULL && strcmp(at, "Bearer abc") == 0 && len == 10);
	CHECK(kp_push_credentials_in_header(other, &len) == NULL);
	CHECK(kp_push_credentials_in_header(empty, &len) == NULL);
}

/* Hidden in argv itself: the secret becomes "***" (shorter: as many as
 * its bytes), the rest moved up and NUL-padded to the old length; the
 * copy is the value as given. */
static void test_secrets_hidden(void)
{
	char push_arg[] = "pyroscope=http://me:pw@host/", hdr[] = "Authorization: Bearer abc",
	     two[] = "X-Api-Key: ab", plain[] = "X-Trace: on";
	char *copy = kp_push_credentials_hide(push_arg, false);

	CHECK(copy && strcmp(copy, "pyroscope=http://me:pw@host/") == 0);
	CHECK(strcmp(push_arg, "pyroscope=http://***@host/") == 0);
	CHECK(push_arg[sizeof(push_arg) - 2] == '\0' && push_arg[sizeof(push_arg) - 3] == '\0');
	kp_push_credentials_wipe(copy);
	copy = kp_push_credentials_hide(hdr, true);
	CHECK(copy && strcmp(copy, "Authorization: Bearer abc") == 0);
	CHECK(strcmp(hdr, "Authorization: ***") == 0);
	kp_push_credentials_wipe(copy);
	copy = kp_push_credentials_hide(two, true);
	CHECK(copy && strcmp(two, "X-Api-Key: **") == 0);
	kp_push_credentials_wipe(copy);
	CHECK(kp_push_credentials_hide(plain, true) == NULL && strcmp(plain, "X-Trace: on") == 0);
}

KP_TEST_MAIN(setup, test_secrets_in_args, test_secrets_hidden, test_pyroscope_url, test_parca_body,
	     test_labels, test_retry_then_deliver, test_outcomes, test_parca_and_token,
	     test_credentials, test_memory_bound, test_spool_restart, test_spool_per_target,
	     test_spool_refused, test_spool_full, test_recovery_said, test_spool_locked, cleanup)
