/* The secrets of the pushes (see credentials.h). */
#include "push/credentials.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/xalloc.h"

/* The places a secret may come from, in this order: the option's file,
 * the environment, systemd's credentials (LoadCredential=). */
struct source {
	const char *option, *file; /* "--token-file" and its FILE, NULL when not given */
	const char *env;	   /* KPROF_PUSH_TOKEN */
	const char *credential;	   /* kprof.push-token in $CREDENTIALS_DIRECTORY */
};

void kp_push_credentials_take(struct kp_push_credentials *c, const char *token_file,
			      const char *password_file, const char *header_file)
{
	const struct source src[3] = {
		{"--token-file", token_file, "KPROF_PUSH_TOKEN", "kprof.push-token"},
		{"--password-file", password_file, "KPROF_PUSH_PASSWORD", "kprof.push-password"},
		{"--header-file", header_file, "KPROF_PUSH_HEADERS", "kprof.push-headers"},
	};
	struct kp_push_secret *s[3];
	const char *dir = getenv("CREDENTIALS_DIRECTORY");
	struct stat st;

	memset(c, 0, sizeof(*c));
	s[0] = &c->token, s[1] = &c->password, s[2] = &c->header_lines;
	for (size_t i = 0; i < 3; i++) {
		char *v = getenv(src[i].env);

		if (v && *v) { /* empty: not given (a unit's "Environment=NAME=") */
			c->env_value[i] = kp_xstrdup(v);
			explicit_bzero(v, strlen(v));
		}
		unsetenv(src[i].env);
		if (src[i].file) {
			s[i]->file = src[i].file;
			s[i]->origin = src[i].option;
		} else if (c->env_value[i]) {
			s[i]->value = c->env_value[i];
			s[i]->origin = src[i].env;
		} else if (dir && dir[0] == '/') {
			c->cred_path[i] = kp_xasprintf("%s/%s", dir, src[i].credential);
			/* absent: not given (the unit's LoadCredential= found none) */
			if (lstat(c->cred_path[i], &st) == 0) {
				s[i]->file = c->cred_path[i];
				s[i]->origin = "systemd credential";
			}
		}
	}
}

void kp_push_credentials_free(struct kp_push_credentials *c)
{
	for (size_t i = 0; i < 3; i++) {
		if (c->env_value[i])
			explicit_bzero(c->env_value[i], strlen(c->env_value[i]));
		free(c->env_value[i]);
		free(c->cred_path[i]);
	}
}

/* Where a secret starts in a --push value: the user:password of its URL
 * (up to the last '@' of the authority), *len its length; NULL: none. */
char *kp_push_credentials_in_url(char *arg, size_t *len)
{
	char *sep = strstr(arg, "://"), *at = NULL;
	size_t end;

	if (!sep)
		return NULL;
	end = strcspn(sep + 3, "/?#");
	for (size_t i = 0; i < end; i++)
		if (sep[3 + i] == '@')
			at = sep + 3 + i;
	/* a user alone (http://USER@HOST, its password from --password-file)
	 * is no secret */
	if (!at || !memchr(sep + 3, ':', (size_t)(at - (sep + 3))))
		return NULL;
	*len = (size_t)(at - (sep + 3));
	return sep + 3;
}

/* The value of a --header whose name says it is a credential, or NULL. */
char *kp_push_credentials_in_header(char *arg, size_t *len)
{
	char *colon = strchr(arg, ':');

	if (!colon || !kp_push_header_secret(arg))
		return NULL;
	colon += 1 + strspn(colon + 1, " \t");
	*len = strlen(colon);
	return *len ? colon : NULL;
}

char *kp_push_credentials_hide(char *arg, bool header)
{
	size_t len = 0, total, at, shown;
	char *secret = header ? kp_push_credentials_in_header(arg, &len)
			      : kp_push_credentials_in_url(arg, &len);
	char *copy;

	if (!secret)
		return NULL;
	total = strlen(arg);
	at = (size_t)(secret - arg);
	copy = kp_xstrdup(arg);
	/* at least one '*' of the secret's own length when it is shorter */
	shown = len < 3 ? len : 3;
	memset(arg + at, '*', shown);
	memmove(arg + at + shown, arg + at + len, total - at - len + 1);
	memset(arg + total - (len - shown), '\0', len - shown);
	return copy;
}

void kp_push_credentials_wipe(char *copy)
{
	explicit_bzero(copy, strlen(copy));
	free(copy);
}
