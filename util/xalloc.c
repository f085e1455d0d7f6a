#include "util/xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void (*volatile oom_hook)(void);

void kp_set_oom_hook(void (*hook)(void))
{
	oom_hook = hook;
}

_Noreturn void kp_oom(size_t n)
{
	char buf[96];
	int len = n ? snprintf(buf, sizeof(buf), "kprof: out of memory (%zu bytes)\n", n)
		    : snprintf(buf, sizeof(buf), "kprof: out of memory\n");
	void (*hook)(void) = oom_hook;

	if (len > 0)
		(void)!write(2, buf, (size_t)len);
	if (hook)
		hook();
	_exit(1);
}

static void *oom(size_t n)
{
	kp_oom(n);
}

void *kp_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	return p ? p : oom(n);
}

void *kp_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	return p ? p : oom(size && nmemb > SIZE_MAX / size ? SIZE_MAX : nmemb * size);
}

void *kp_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	return q ? q : oom(n);
}

void kp_xgrow(void *pp, size_t *cap, size_t need, size_t elem)
{
	void **p = pp;
	size_t ncap = *cap ? *cap : 8;

	if (need <= *cap)
		return;
	while (ncap < need)
		ncap *= 2;
	*p = kp_xrealloc(*p, ncap * elem);
	*cap = ncap;
}

char *kp_xstrdup(const char *s)
{
	return kp_xstrndup(s, strlen(s));
}

char *kp_xstrndup(const char *s, size_t n)
{
	char *p = kp_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *kp_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = oom(0);
	va_end(ap);
	return s;
}

char *kp_xjoin(const char *first, char *const *v, size_t n)
{
	size_t len = strlen(first) + 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	s = kp_xmalloc(len);
	strcpy(s, first);
	for (size_t i = 0; i < n; i++) {
		strcat(s, " ");
		strcat(s, v[i]);
	}
	return s;
}
