/* The credentials of the pushes, given other than on the command line
 * (docs/push.md, "Credentials"): a bearer token, the password of the user
 * a --push URL names, and header lines, each from a checked file
 * (util/secret.h) or the environment's bytes, read once at start. Each
 * becomes a header of every request, or the password of a target's URL;
 * nothing here prints a secret: a message names where it came from. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "push/pushP.h"
#include "push/queue.h"
#include "util/secret.h"
#include "util/xalloc.h"

/* The secret's bytes (the caller wipes them with kp_secret_free), or NULL
 * when it was not given. */
static int load(const struct kp_push_secret *s, char **text, size_t *len, struct kp_diag *d)
{
	*text = NULL;
	*len = 0;
	if (s->file)
		return kp_secret_read(s->file, s->origin, text, len, d);
	if (s->value) {
		*text = kp_xstrdup(s->value);
		*len = strlen(s->value);
	}
	return 0;
}

/* The first line of text, in place, without its line end or the spaces
 * that end it; no control byte. */
static int first_line(char *text, const char *origin, struct kp_diag *d)
{
	size_t len = strcspn(text, "\r\n");

	while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t'))
		len--;
	text[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			return kp_diag_set(d, -EINVAL, "%s: its first line holds a control byte",
					   origin);
	if (len == 0)
		return kp_diag_set(d, -EINVAL, "%s: its first line is empty", origin);
	return 0;
}

static void add_header(struct kp_push *p, char *h)
{
	p->headers = kp_xrealloc(p->headers, (p->nh + 2) * sizeof(char *));
	p->headers[p->nh++] = h;
	p->headers[p->nh] = NULL;
}

/* Each line "Name: value" a header; blank lines and lines starting '#'
 * skipped. */
static int take_lines(struct kp_push *p, char *text, const char *origin, struct kp_diag *d)
{
	size_t no = 0;

	for (char *line = text, *next; line && *line; line = next) {
		size_t len = strcspn(line, "\n");
		char what[512];
		int err;

		next = line[len] ? line + len + 1 : NULL;
		line[len] = '\0';
		no++;
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (line[strspn(line, " \t")] == '\0' || line[0] == '#')
			continue;
		snprintf(what, sizeof(what), "%s line %zu", origin, no);
		if ((err = kp_labels_header(line, what, d)) < 0)
			return err;
		add_header(p, kp_xstrdup(line));
	}
	return 0;
}

/* Gives the password to every target whose URL names a user without one. */
static int take_password(struct kp_push *p, const char *pw, const char *origin, struct kp_diag *d)
{
	int given = 0;

	for (size_t i = 0; i < p->nt; i++) {
		int r = kp_labels_target_password(&p->tg[i].t, pw);

		if (r < 0)
			return kp_diag_set(d, r, "%s: the password does not fit in a URL", origin);
		given += r;
	}
	if (!given)
		return kp_diag_set(d, -EINVAL,
				   "%s: a password, but no --push URL names its user without one "
				   "(http://USER@HOST)",
				   origin);
	return 0;
}

/* One Authorization header at most, from one place. */
static int one_authorization(const struct kp_push *p, bool password, struct kp_diag *d)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nh; i++)
		if (strncasecmp(p->headers[i], "authorization:", 14) == 0)
			n++;
	if (n > 1 || (n && password))
		return kp_diag_set(d, -EINVAL,
				   "two credentials for the Authorization header (a token, a "
				   "password, an Authorization header): give one");
	return 0;
}

int kp_auth_take(struct kp_push *p, const struct kp_push_opts *o, struct kp_diag *d)
{
	char *tok = NULL, *pw = NULL, *lines = NULL;
	size_t ntok = 0, npw = 0, nlines = 0; /* the bytes to wipe: cut in place below */
	int err;

	if ((err = load(&o->token, &tok, &ntok, d)) < 0 ||
	    (err = load(&o->password, &pw, &npw, d)) < 0 ||
	    (err = load(&o->header_lines, &lines, &nlines, d)) < 0)
		goto out;
	if (lines && (err = take_lines(p, lines, o->header_lines.origin, d)) < 0)
		goto out;
	if (tok) {
		if ((err = first_line(tok, o->token.origin, d)) < 0)
			goto out;
		add_header(p, kp_xasprintf("Authorization: Bearer %s", tok));
	}
	if (pw && (err = first_line(pw, o->password.origin, d)) == 0)
		err = take_password(p, pw, o->password.origin, d);
	if (err == 0)
		err = one_authorization(p, pw != NULL, d);
out:
	kp_secret_free(tok, ntok + 1);
	kp_secret_free(pw, npw + 1);
	kp_secret_free(lines, nlines + 1);
	return err;
}
