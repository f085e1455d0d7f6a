#include "symbolize/ksymcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cachefile.h"
#include "util/hash.h"
#include "util/xalloc.h"

struct range {
	uint64_t lo, hi;
};

struct kp_ksymcache {
	char *dir;
	char *path; /* dir/kallsyms-BOOT-HASH */
	char *tmp;  /* the copy being written, or NULL */
	struct range *mods;
	size_t nmods;
};

/* Reads a small procfs file whole into a new NUL-terminated string. */
static char *read_small(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = kp_xmalloc(cap + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			if (cap >= (16u << 20)) /* not a small file after all */
				break;
			cap *= 2;
			buf = kp_xrealloc(buf, cap + 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* "name size refs deps state 0xaddr [taint]" per line: each module's
 * [addr, addr + size), when addresses are shown. */
static void parse_modules(struct kp_ksymcache *c, const char *text)
{
	size_t cap = 0;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		unsigned long long size, addr;
		char name[64], refs[32], deps[4096], state[32];

		if (sscanf(p, "%63s %llu %31s %4095s %31s %llx", name, &size, refs, deps, state,
			   &addr) == 6 &&
		    addr && size && addr + size > addr) {
			kp_xgrow(&c->mods, &cap, c->nmods + 1, sizeof(*c->mods));
			c->mods[c->nmods++] = (struct range){addr, addr + size};
		}
		if (!nl)
			break;
		p = nl + 1;
	}
}

struct kp_ksymcache *kp_ksymcache_new(const char *dir)
{
	struct kp_ksymcache *c;
	char *boot, *mods;
	size_t blen;

	if (!dir || !*dir)
		return NULL;
	boot = read_small("/proc/sys/kernel/random/boot_id");
	if (!boot)
		return NULL;
	blen = strspn(boot, "0123456789abcdef-");
	if (blen < 16) {
		free(boot);
		return NULL;
	}
	mods = read_small("/proc/modules");
	c = kp_xcalloc(1, sizeof(*c));
	c->dir = kp_xstrdup(dir);
	c->path = kp_xasprintf("%s/kallsyms-%.*s-%016" PRIx64, dir, (int)blen, boot,
			       mods ? kp_hash_bytes(mods, strlen(mods), 0) : 0);
	if (mods)
		parse_modules(c, mods);
	free(mods);
	free(boot);
	return c;
}

void kp_ksymcache_free(struct kp_ksymcache *c)
{
	if (!c)
		return;
	if (c->tmp)
		unlink(c->tmp);
	free(c->tmp);
	free(c->mods);
	free(c->path);
	free(c->dir);
	free(c);
}

/* Does /proc/kallsyms show this user addresses now? kptr_restrict may have
 * been raised since the copy was made; the first line (a page of the
 * kernel's formatting) tells. */
static bool addresses_shown(void)
{
	char line[128];
	int fd = open(KP_PROC_KALLSYMS, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, line, sizeof(line) - 1) : -1;
	size_t hex;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	line[n] = '\0';
	hex = strspn(line, "0123456789abcdef");
	return hex && line[hex] == ' ' && strspn(line, "0") < hex;
}

int kp_ksymcache_open(const struct kp_ksymcache *c)
{
	struct stat st;

	if (!addresses_shown())
		return -1;
	return kp_cachefile_open(c->path, &st);
}

bool kp_ksymcache_stable(const struct kp_ksymcache *c, const struct kp_kallsyms *ks, uint64_t addr)
{
	if (kp_kallsyms_in_core_text(ks, addr))
		return true;
	for (size_t i = 0; i < c->nmods; i++)
		if (addr >= c->mods[i].lo && addr < c->mods[i].hi)
			return true;
	return false;
}

int kp_ksymcache_begin(struct kp_ksymcache *c)
{
	if (c->tmp)
		return -1;
	return kp_cachefile_begin(c->dir, "kallsyms", &c->tmp);
}

/* Removes the copies made for other boots or module lists. */
static void remove_others(const struct kp_ksymcache *c)
{
	const char *mine = strrchr(c->path, '/') + 1;
	DIR *d = opendir(c->dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "kallsyms-", 9) == 0 && strcmp(e->d_name, mine) != 0)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

void kp_ksymcache_commit(struct kp_ksymcache *c, int fd, bool ok)
{
	if (fd < 0 || !c->tmp)
		return;
	if (kp_cachefile_commit(&c->tmp, fd, ok, c->path))
		remove_others(c);
}
