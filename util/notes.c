/* The note list (see notes.h). */
#include "util/notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void kp_notes_add(struct kp_notes *nl, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < nl->n; i++) {
		if (strcmp(nl->v[i], buf) == 0)
			return;
	}
	kp_xgrow(&nl->v, &nl->cap, nl->n + 2, sizeof(*nl->v));
	nl->v[nl->n++] = kp_xstrdup(buf);
	nl->v[nl->n] = NULL;
}

void kp_notes_update(struct kp_notes *nl, size_t *slot, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (*slot && *slot <= nl->n) {
		free(nl->v[*slot - 1]);
		nl->v[*slot - 1] = kp_xstrdup(buf);
		return;
	}
	kp_xgrow(&nl->v, &nl->cap, nl->n + 2, sizeof(*nl->v));
	nl->v[nl->n++] = kp_xstrdup(buf);
	nl->v[nl->n] = NULL;
	*slot = nl->n;
}

const char *const *kp_notes_list(const struct kp_notes *nl, size_t *n)
{
	*n = nl->n;
	return (const char *const *)nl->v;
}

void kp_notes_fini(struct kp_notes *nl)
{
	for (size_t i = 0; i < nl->n; i++)
		free(nl->v[i]);
	free(nl->v);
	memset(nl, 0, sizeof(*nl));
}
