#include "cli/messages.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/notes.h"
#include "util/textsafe.h"

/* The message formatted, then written escaped as a whole: kprof's own
 * words hold no control byte and no backslash, so only what came from
 * outside (paths, names, a server's answer) is changed; then kprof's own
 * newline. stderr is unbuffered: the line is built in memory and written
 * in one call, so lines of two threads do not mix. */
static void say(const char *prefix, const char *fmt, va_list ap)
{
	char small[2048], *msg = small, *line = NULL;
	size_t size = 0;
	va_list aq;
	int len;
	FILE *mem;

	va_copy(aq, ap);
	len = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (len < 0)
		len = 0;
	if ((size_t)len >= sizeof(small)) {
		msg = malloc((size_t)len + 1);
		if (msg)
			vsnprintf(msg, (size_t)len + 1, fmt, ap);
		else
			msg = small, len = (int)sizeof(small) - 1;
	}
	mem = open_memstream(&line, &size);
	if (mem) {
		fputs(prefix, mem);
		kp_textsafe_write(mem, msg, (size_t)len);
		fputc('\n', mem);
	}
	if (mem && fclose(mem) == 0) {
		fwrite(line, 1, size, stderr);
	} else {
		fputs(prefix, stderr);
		kp_textsafe_write(stderr, msg, (size_t)len);
		fputc('\n', stderr);
	}
	free(line);
	if (msg != small)
		free(msg);
}

void kp_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("kprof: ", fmt, ap);
	va_end(ap);
}

void kp_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("kprof: warning: ", fmt, ap);
	va_end(ap);
}

void kp_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("kprof: ", fmt, ap);
	va_end(ap);
}

void kp_warn_notes(const char *const *notes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kp_warn("%s", notes[i]);
}

void kp_warn_bad_lines(uint64_t n, const char *first)
{
	kp_warn("ignored %llu line%s with invalid format; the first: %s", (unsigned long long)n,
		n == 1 ? "" : "s", first);
}

void kp_say_notes(const struct kp_notes *said)
{
	for (size_t i = 0; i < said->n; i++)
		kp_say("%s", said->v[i]);
}

void kp_warn_each(const struct kp_notes *nl)
{
	kp_warn_notes((const char *const *)nl->v, nl->n);
}
