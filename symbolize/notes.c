#include "symbolize/notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void kp_sym_note(struct kp_sym_notelist *nl, const char *fmt, ...)
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

void kp_sym_note_update(struct kp_sym_notelist *nl, size_t *slot, const char *fmt, ...)
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

void kp_sym_notes_fini(struct kp_sym_notelist *nl)
{
	for (size_t i = 0; i < nl->n; i++)
		free(nl->v[i]);
	free(nl->v);
	memset(nl, 0, sizeof(*nl));
}
