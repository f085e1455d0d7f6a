#include "util/appendf.h"

#include <stdarg.h>
#include <stdio.h>

void kp_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!size || *len >= size - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = (size_t)n < size - *len ? *len + (size_t)n : size - 1;
}
