/* Bounds on libdebuginfod's downloads, through its own progress function:
 * libdebuginfod calls it after each wait of at most a second on the
 * transfers of a query (and once per file when it cleans its cache), with
 * the bytes received once it has chosen the server that answered first;
 * a non-zero return cuts the query, and libdebuginfod then removes its
 * partial file. Nothing here speaks HTTP. */
#include "symbolize/debuginfod.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/notes.h"
#include "util/xalloc.h"

/* libdebuginfod's own calls (debuginfod.h, elfutils 0.179 and later), found
 * in the library libdwfl loaded: kprof neither links it nor needs its
 * header, and without DEBUGINFOD_URLS nothing loads it. */
typedef int (*progressfn_t)(debuginfod_client *c, long a, long b);
static struct {
	int state; /* 0 not looked up yet, 1 found, -1 missing */
	void (*set_progressfn)(debuginfod_client *c, progressfn_t fn);
	void (*set_user_data)(debuginfod_client *c, void *data);
	void *(*get_user_data)(debuginfod_client *c);
	const char *(*get_url)(debuginfod_client *c);
	void (*set_verbose_fd)(debuginfod_client *c, int fd);
} api;

enum cut { CUT_NONE, CUT_REFUSED, CUT_STOP, CUT_BUDGET, CUT_SIZE, CUT_TIME, CUT_STALL };

struct kp_debuginfod {
	struct kp_notes *notes;
	struct kp_debuginfod_limits lim;
	char *servers; /* DEBUGINFOD_URLS, escaped: who to name when no server answered */
	kp_debuginfod_stop_fn stop;
	void *stop_arg;
	bool unbound; /* libdebuginfod lacks what kprof binds clients with */
	int devnull;  /* the clients' verbose descriptor */
	bool off;     /* no more downloads this run */
	/* the query under way (kp_debuginfod_begin .. _end) */
	bool in_query, may;
	double t_begin, t_progress, t_stop_check;
	time_t wall_begin;
	uint64_t bytes; /* of the file being received */
	bool stated;	/* the server stated the file's size */
	enum cut cut;
	char *cut_url; /* the server's URL at the cut, when one answered */
	/* the run */
	uint64_t run_bytes;
	double run_seconds;
	char **named; /* servers named in a note already */
	size_t nnamed;
	size_t off_slot; /* the note saying the downloads are over */
};

/* A variable as libdebuginfod reads it (atol); 0 when unset. */
static long env_long(const char *name)
{
	const char *s = getenv(name);

	return s ? atol(s) : 0;
}

void kp_debuginfod_limits_env(struct kp_debuginfod_limits *l)
{
	long v;

	v = env_long("DEBUGINFOD_MAXSIZE");
	l->file_bytes = v > 0 ? (uint64_t)v : KP_DEBUGINFOD_FILE_BYTES;
	v = env_long("DEBUGINFOD_MAXTIME");
	l->file_seconds = v > 0 ? (double)v : KP_DEBUGINFOD_FILE_SECONDS;
	v = env_long("DEBUGINFOD_TIMEOUT");
	l->stall_seconds = v > 0 ? (double)v : KP_DEBUGINFOD_STALL_SECONDS;
	v = env_long("KPROF_DEBUGINFOD_RUN_MAXSIZE");
	l->run_bytes = v > 0 ? (uint64_t)v : KP_DEBUGINFOD_RUN_BYTES;
	v = env_long("KPROF_DEBUGINFOD_RUN_MAXTIME");
	l->run_seconds = v > 0 ? (double)v : KP_DEBUGINFOD_RUN_SECONDS;
}

/* Appends s[0..len) to out (of cap bytes, NUL-terminated, at *n) with
 * every byte a URL may not hold raw (controls, space, non-ASCII)
 * percent-encoded: a server's address is shown, never its bytes; past
 * cap, "..." ends it. */
static void append_escaped(char *out, size_t cap, size_t *n, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		int w = ch > 0x20 && ch < 0x7f ? snprintf(out + *n, cap - *n, "%c", ch)
					       : snprintf(out + *n, cap - *n, "%%%02X", ch);

		if (w < 0 || (size_t)w >= cap - *n || *n + (size_t)w + 4 >= cap) {
			snprintf(out + *n, cap - *n, "...");
			*n += strlen(out + *n);
			return;
		}
		*n += (size_t)w;
	}
}

/* The servers of DEBUGINFOD_URLS (separated by spaces), escaped, ", " between. */
static char *escaped_servers(const char *urls)
{
	char out[512] = "";
	size_t n = 0;

	while (*urls) {
		size_t len;

		urls += strspn(urls, " \t\n");
		len = strcspn(urls, " \t\n");
		if (!len)
			break;
		if (n && n + 2 < sizeof(out)) {
			memcpy(out + n, ", ", 3);
			n += 2;
		}
		append_escaped(out, sizeof(out), &n, urls, len);
		urls += len;
	}
	return kp_xstrdup(out);
}

struct kp_debuginfod *kp_debuginfod_new(struct kp_notes *notes)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct kp_debuginfod *d;

	if (!urls || !urls[strspn(urls, " \t\n")])
		return NULL;
	d = kp_xcalloc(1, sizeof(*d));
	d->notes = notes;
	d->devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	kp_debuginfod_limits_env(&d->lim);
	d->servers = escaped_servers(urls);
	return d;
}

void kp_debuginfod_free(struct kp_debuginfod *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nnamed; i++)
		free(d->named[i]);
	free(d->named);
	free(d->cut_url);
	free(d->servers);
	if (d->devnull >= 0)
		close(d->devnull);
	free(d);
}

void kp_debuginfod_set_stop(struct kp_debuginfod *d, kp_debuginfod_stop_fn fn, void *arg)
{
	if (!d)
		return;
	d->stop = fn;
	d->stop_arg = arg;
}

void kp_debuginfod_off(struct kp_debuginfod *d)
{
	if (d)
		d->off = true;
}

/* Finds libdebuginfod's calls in the copy libdwfl loaded. */
static bool load_api(void)
{
	void *h;

	if (api.state)
		return api.state > 0;
	api.state = -1;
	h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return false;
	*(void **)&api.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&api.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&api.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&api.get_url = dlsym(h, "debuginfod_get_url");
	*(void **)&api.set_verbose_fd = dlsym(h, "debuginfod_set_verbose_fd");
	if (api.set_progressfn && api.set_user_data && api.get_user_data && api.get_url &&
	    api.set_verbose_fd)
		api.state = 1;
	return api.state > 0; /* the handle stays: libdwfl holds the library */
}

/* Records why the query is cut (the first reason) and says so to
 * libdebuginfod. */
static int cut(struct kp_debuginfod *d, enum cut why, const char *url)
{
	if (d->cut == CUT_NONE) {
		d->cut = why;
		free(d->cut_url);
		d->cut_url = url ? kp_xstrdup(url) : NULL;
	}
	return 1;
}

/* libdebuginfod's progress function: a is the bytes received once a
 * server answered (its URL known), else a count of waits; b the size the
 * server announced, or 0 or -1. Non-zero cuts the query. */
static int progress(debuginfod_client *c, long a, long b)
{
	struct kp_debuginfod *d = api.get_user_data(c);
	const char *url = api.get_url(c);
	double now = kp_clock_now_s();

	if (!d)
		return 1;
	if (!d->in_query || !d->may)
		return cut(d, CUT_REFUSED, url);
	if (url && a > 0 && (uint64_t)a > d->bytes) {
		d->bytes = (uint64_t)a;
		d->t_progress = now;
	}
	if (url && b > 0)
		d->stated = true;
	if (d->stop && now - d->t_stop_check >= 0.05) {
		d->t_stop_check = now;
		if (d->stop(d->stop_arg))
			return cut(d, CUT_STOP, url);
	}
	if (url && (d->bytes > d->lim.file_bytes || (b > 0 && (uint64_t)b > d->lim.file_bytes)))
		return cut(d, CUT_SIZE, url);
	if (d->run_bytes + d->bytes > d->lim.run_bytes ||
	    (url && b > 0 && d->run_bytes + (uint64_t)b > d->lim.run_bytes) ||
	    d->run_seconds + (now - d->t_begin) > d->lim.run_seconds)
		return cut(d, CUT_BUDGET, url);
	if (now - d->t_begin > d->lim.file_seconds)
		return cut(d, CUT_TIME, url);
	if (now - d->t_progress > d->lim.stall_seconds)
		return cut(d, CUT_STALL, url);
	return 0;
}

void kp_debuginfod_bind(struct kp_debuginfod *d, Dwfl *dwfl)
{
	debuginfod_client *c;

	if (!d || !dwfl || d->unbound)
		return;
	c = dwfl_get_debuginfod_client(dwfl);
	if (!c)
		return; /* no libdebuginfod: nothing downloads */
	if (!load_api()) {
		/* its downloads could not be bounded: kprof starts none */
		d->unbound = true;
		kp_notes_add(d->notes, "libdebuginfod lacks debuginfod_set_progressfn: kprof "
				       "cannot bound its downloads and makes none");
		return;
	}
	api.set_progressfn(c, progress);
	api.set_user_data(c, d);
	/* DEBUGINFOD_VERBOSE would print the servers' answers raw. Not -1:
	 * libdebuginfod 0.188 writes to it even then (with DEBUGINFOD_MAXSIZE
	 * or MAXTIME set), and glibc's dprintf leaks 8 KiB a call on a bad
	 * descriptor. */
	api.set_verbose_fd(c, d->devnull);
}

bool kp_debuginfod_may(const struct kp_debuginfod *d)
{
	return d && !d->unbound && !d->off && d->run_bytes < d->lim.run_bytes &&
	       d->run_seconds < d->lim.run_seconds && !(d->stop && d->stop(d->stop_arg));
}

void kp_debuginfod_begin(struct kp_debuginfod *d, bool may)
{
	if (!d)
		return;
	d->in_query = true;
	d->may = may;
	d->t_begin = d->t_progress = d->t_stop_check = kp_clock_now_s();
	d->wall_begin = time(NULL);
	d->bytes = 0;
	d->stated = false;
	d->cut = CUT_NONE;
}

/* Where libdebuginfod 0.188 keeps its cache (debuginfod-client.c):
 * $DEBUGINFOD_CACHE_PATH, else ~/.debuginfod_client_cache when it exists,
 * else $XDG_CACHE_HOME/debuginfod_client or ~/.cache/debuginfod_client.
 * Heap. */
static char *cache_path(void)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME") ? getenv("HOME") : "/";
	struct stat st;
	char *p;

	if (env && *env)
		return kp_xstrdup(env);
	p = kp_xasprintf("%s/.debuginfod_client_cache", home);
	if (stat(p, &st) == 0)
		return p;
	free(p);
	if (xdg && *xdg)
		return kp_xasprintf("%s/debuginfod_client", xdg);
	return kp_xasprintf("%s/.cache/debuginfod_client", home);
}

/* A query cut by its progress function ends as "not found" for
 * libdebuginfod, which then leaves an empty file where the debug file
 * would be: a mark that keeps every later query of the build-id from
 * asking a server for cache_miss_s (10 minutes). kprof's cut says nothing
 * of what the server has: the mark goes (only an empty regular file made
 * since the query began), and the build-id's folder when empty. */
static void forget_mark(const uint8_t *id, size_t len, time_t since)
{
	char hex[2 * 64 + 1], *cache;
	struct stat st;
	int cfd, dfd;

	if (!len || len >= 64)
		return; /* libdebuginfod asks for none such */
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	cache = cache_path();
	cfd = open(cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(cache);
	if (cfd < 0)
		return;
	dfd = openat(cfd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0) {
		if (fstatat(dfd, "debuginfo", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_size == 0 && st.st_mtime >= since - 1)
			unlinkat(dfd, "debuginfo", 0);
		close(dfd);
		unlinkat(cfd, hex, AT_REMOVEDIR); /* fails when not empty */
	}
	close(cfd);
}

/* n bytes for a note: "N MiB" ("N.N MiB"), or "N bytes" below one. */
static char *size_text(uint64_t n)
{
	if (n < (1u << 20))
		return kp_xasprintf("%llu bytes", (unsigned long long)n);
	if (n % (1u << 20) == 0)
		return kp_xasprintf("%llu MiB", (unsigned long long)(n >> 20));
	return kp_xasprintf("%.1f MiB", (double)n / (1u << 20));
}

/* The note naming a server that failed, once a server: the one whose URL
 * is url (the part before "/buildid/"), or those of DEBUGINFOD_URLS when
 * none answered. */
static void name_server(struct kp_debuginfod *d, const char *url, const char *what)
{
	char esc[320] = "";
	size_t n = 0;
	const char *end, *p;

	if (url) {
		for (end = NULL, p = url; (p = strstr(p, "/buildid/")); p++)
			end = p;
		append_escaped(esc, sizeof(esc), &n, url, end ? (size_t)(end - url) : strlen(url));
	} else {
		snprintf(esc, sizeof(esc), "%s", d->servers);
	}
	for (size_t i = 0; i < d->nnamed; i++)
		if (strcmp(d->named[i], esc) == 0)
			return;
	d->named = kp_xrealloc(d->named, (d->nnamed + 1) * sizeof(*d->named));
	d->named[d->nnamed++] = kp_xstrdup(esc);
	kp_notes_add(d->notes, "debuginfod server %s %s", esc, what);
}

/* No more downloads this run: one note, kept current. */
static void turn_off(struct kp_debuginfod *d, const char *why)
{
	d->off = true;
	kp_notes_update(d->notes, &d->off_slot, "no more debuginfod downloads this run: %s", why);
}

/* The run's budget is spent: no more downloads. */
static void budget_spent(struct kp_debuginfod *d)
{
	char *a = size_text(d->lim.run_bytes);
	char *b = kp_xasprintf("the run's budget of %s and %.0f s is spent "
			       "(KPROF_DEBUGINFOD_RUN_MAXSIZE, KPROF_DEBUGINFOD_RUN_MAXTIME)",
			       a, d->lim.run_seconds);

	turn_off(d, b);
	free(a);
	free(b);
}

/* What a cut or a failed query says, and what it turns off; url: the
 * server that answered, if one did. */
static void report(struct kp_debuginfod *d, const char *url, int fd)
{
	char *a = NULL, *msg = NULL;

	switch (d->cut) {
	case CUT_NONE:
		if (fd >= -1 || fd == -ENOENT || fd == -ENOSYS || fd == -ENOMEM)
			break; /* found, or not on the servers */
		msg = kp_xasprintf("failed: %s", strerror(-fd));
		name_server(d, url, msg);
		if (fd == -ETIME)
			turn_off(d, "a server timed out");
		break;
	case CUT_SIZE:
		a = size_text(d->lim.file_bytes);
		msg = kp_xasprintf("sent a file over %s (DEBUGINFOD_MAXSIZE): cut", a);
		name_server(d, d->cut_url, msg);
		/* a size stated over the limit costs nothing; bytes past it
		 * without one may come from every later download too */
		if (!d->stated)
			turn_off(d, "a server sent more than the limit without stating a size");
		break;
	case CUT_TIME:
		msg = kp_xasprintf("took over %.0f s for one file (DEBUGINFOD_MAXTIME): cut",
				   d->lim.file_seconds);
		name_server(d, d->cut_url, msg);
		turn_off(d, "a server was too slow");
		break;
	case CUT_STALL:
		msg = kp_xasprintf("sent nothing for %.0f s (DEBUGINFOD_TIMEOUT): cut",
				   d->lim.stall_seconds);
		name_server(d, d->cut_url, msg);
		turn_off(d, "a server stalled");
		break;
	case CUT_BUDGET:
		budget_spent(d);
		break;
	case CUT_STOP:
		d->off = true; /* the naming's own note says kprof stopped */
		break;
	case CUT_REFUSED:
		break;
	}
	free(a);
	free(msg);
}

void kp_debuginfod_end(struct kp_debuginfod *d, Dwfl *dwfl, const uint8_t *id, size_t len, int fd)
{
	debuginfod_client *c;

	if (!d || !d->in_query)
		return;
	d->in_query = false;
	d->run_seconds += kp_clock_now_s() - d->t_begin;
	d->run_bytes += d->bytes;
	if (d->cut != CUT_NONE)
		forget_mark(id, len, d->wall_begin);
	/* the client is there: kp_debuginfod_bind made it */
	c = api.state > 0 && dwfl ? dwfl_get_debuginfod_client(dwfl) : NULL;
	report(d, c ? api.get_url(c) : NULL, fd);
	if (!d->off && (d->run_bytes >= d->lim.run_bytes || d->run_seconds >= d->lim.run_seconds))
		budget_spent(d);
	free(d->cut_url);
	d->cut_url = NULL;
}
