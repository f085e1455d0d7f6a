#include "cli/messages.h"

#include <stdarg.h>
#include <stdio.h>

void kp_err(const char *fmt, ...)
{
	va_list ap;

	fputs("kprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void kp_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("kprof: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void kp_warn_notes(const char *const *notes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kp_warn("%s", notes[i]);
}
