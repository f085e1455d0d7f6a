#include "util/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int kp_diag_set(struct kp_diag *d, int err, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return err;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	return err;
}

int kp_diag_errno(struct kp_diag *d, int err, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!d)
		return err;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
	len = strlen(d->msg);
	snprintf(d->msg + len, sizeof(d->msg) - len, ": %s", strerror(err < 0 ? -err : err));
	return err;
}
