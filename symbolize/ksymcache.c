#include "symbolize/ksymcache.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs/kernel.h"
#include "util/checksum.h"
#include "util/hash.h"
#include "util/xalloc.h"

struct range {
	uint64_t lo, hi;
};

/* "kprof-kallsyms 1 " then SIZE and XXH3, 16 hex digits each, a space
 * between, and a newline: the header's fixed length. The version is bumped
 * when what follows changes. */
#define KSYM_MAGIC   "kprof-kallsyms "
#define KSYM_VERSION "1 "
#define KSYM_HEADER  (sizeof(KSYM_MAGIC) - 1 + sizeof(KSYM_VERSION) - 1 + 16 + 1 + 16 + 1)

struct kp_ksymcache {
	struct kp_cachedir *dir;
	char *name; /* kallsyms-BOOT-HASH */
	struct range *mods;
	size_t nmods;
	/* the copy being read (fd) or written (fd, tmp) */
	int fd;
	char *tmp;
	struct kp_checksum_stream *sum;
	uint64_t size, want_size, want_sum;
	bool write_failed;
};

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

struct kp_ksymcache *kp_ksymcache_new(struct kp_cachedir *dir)
{
	struct kp_ksymcache *c;
	char *boot, *mods;
	size_t blen;

	if (!dir)
		return NULL;
	boot = kp_kernel_read("sys/kernel/random/boot_id");
	if (!boot)
		return NULL;
	blen = strspn(boot, "0123456789abcdef-");
	if (blen < 16) {
		free(boot);
		return NULL;
	}
	mods = kp_kernel_read("modules");
	c = kp_xcalloc(1, sizeof(*c));
	c->dir = dir;
	c->fd = -1;
	c->name = kp_xasprintf("kallsyms-%.*s-%016" PRIx64, (int)blen, boot,
			       mods ? kp_hash_bytes(mods, strlen(mods), 0) : 0);
	if (mods)
		parse_modules(c, mods);
	free(mods);
	free(boot);
	return c;
}

/* Ends reading or writing the copy: the new one is removed. */
static void close_copy(struct kp_ksymcache *c)
{
	if (c->tmp)
		kp_cachefile_commit(c->dir, &c->tmp, c->fd, false, c->name);
	else if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	kp_checksum_stream_free(c->sum);
	c->sum = NULL;
}

void kp_ksymcache_free(struct kp_ksymcache *c)
{
	if (!c)
		return;
	close_copy(c);
	free(c->mods);
	free(c->name);
	free(c);
}

const char *kp_ksymcache_name(const struct kp_ksymcache *c)
{
	return c->name;
}

/* Does /proc/kallsyms show this user addresses now? kptr_restrict may have
 * been raised since the copy was made; the first line (a page of the
 * kernel's formatting) tells. */
static bool addresses_shown(void)
{
	char line[128];
	size_t hex;

	if (kp_kernel_read_start("kallsyms", line, sizeof(line)) <= 0)
		return false;
	hex = strspn(line, "0123456789abcdef");
	return hex && line[hex] == ' ' && strspn(line, "0") < hex;
}

/* 16 lowercase hex digits at p, into *v. */
static bool parse_hex16(const char *p, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < 16; i++) {
		const char *d = strchr("0123456789abcdef", p[i]);

		if (!p[i] || !d)
			return false;
		*v = *v << 4 | (uint64_t)(d - "0123456789abcdef");
	}
	return true;
}

/* Checks the header hdr[0..n) of a copy of st_size bytes: 0, -ESTALE or
 * -EBADMSG; sets the size and checksum wanted of the rest. */
static int check_header(struct kp_ksymcache *c, const char *hdr, size_t n, uint64_t st_size)
{
	const size_t at = sizeof(KSYM_MAGIC) - 1 + sizeof(KSYM_VERSION) - 1;

	if (n < sizeof(KSYM_MAGIC) - 1 || memcmp(hdr, KSYM_MAGIC, sizeof(KSYM_MAGIC) - 1) != 0)
		/* a copy from before the header (it starts with an address) */
		return n && hdr[0] && strchr("0123456789abcdef", hdr[0]) ? -ESTALE : -EBADMSG;
	if (n < at || memcmp(hdr + sizeof(KSYM_MAGIC) - 1, KSYM_VERSION, 2) != 0)
		return n > at && hdr[at - 2] >= '0' && hdr[at - 2] <= '9' && hdr[at - 1] == ' '
			       ? -ESTALE
			       : -EBADMSG;
	if (n != KSYM_HEADER || !parse_hex16(hdr + at, &c->want_size) || hdr[at + 16] != ' ' ||
	    !parse_hex16(hdr + at + 17, &c->want_sum) || hdr[at + 33] != '\n' ||
	    c->want_size != st_size - KSYM_HEADER)
		return -EBADMSG;
	return 0;
}

/* The tap while the copy is read: its checksum, on the way. */
static void verify_tap(void *arg, const char *buf, size_t n)
{
	struct kp_ksymcache *c = arg;

	kp_checksum_stream_update(c->sum, buf, n);
	c->size += n;
}

int kp_ksymcache_open(struct kp_ksymcache *c, struct kp_kallsyms_opts *opts)
{
	char hdr[KSYM_HEADER];
	struct stat st;
	ssize_t n;
	int fd, err;

	if (c->fd >= 0 || !addresses_shown())
		return -ENOENT;
	fd = kp_cachefile_open(c->dir, c->name, &st);
	if (fd < 0)
		return -ENOENT;
	do
		n = read(fd, hdr, sizeof(hdr));
	while (n < 0 && errno == EINTR);
	err = n < 0 ? -EBADMSG : check_header(c, hdr, (size_t)n, (uint64_t)st.st_size);
	if (err) {
		close(fd);
		return err;
	}
	/* the parser reads on from the end of the header */
	c->fd = fd;
	c->sum = kp_checksum_stream_new();
	c->size = 0;
	memset(opts, 0, sizeof(*opts));
	opts->from_fd = true;
	opts->fd = fd;
	opts->tap = verify_tap;
	opts->tap_arg = c;
	return 0;
}

int kp_ksymcache_read_done(struct kp_ksymcache *c)
{
	bool ok = c->sum && c->size == c->want_size &&
		  kp_checksum_stream_digest(c->sum) == c->want_sum;

	close_copy(c);
	return ok ? 0 : -EBADMSG;
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

static bool write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* The tap while /proc/kallsyms is read: into the copy, and its checksum. */
static void write_tap(void *arg, const char *buf, size_t n)
{
	struct kp_ksymcache *c = arg;

	if (c->write_failed)
		return;
	if (!write_all(c->fd, buf, n))
		c->write_failed = true;
	kp_checksum_stream_update(c->sum, buf, n);
	c->size += n;
}

/* The header for size bytes of checksum sum after it. */
static void format_header(char hdr[KSYM_HEADER + 1], uint64_t size, uint64_t sum)
{
	snprintf(hdr, KSYM_HEADER + 1, "%s%s%016" PRIx64 " %016" PRIx64 "\n", KSYM_MAGIC,
		 KSYM_VERSION, size, sum);
}

bool kp_ksymcache_begin(struct kp_ksymcache *c, struct kp_kallsyms_opts *opts)
{
	char hdr[KSYM_HEADER + 1];

	if (c->fd >= 0)
		return false;
	c->fd = kp_cachefile_begin(c->dir, "kallsyms", &c->tmp);
	if (c->fd < 0)
		return false;
	/* a stand-in, rewritten when the size and checksum are known */
	format_header(hdr, 0, 0);
	c->write_failed = !write_all(c->fd, hdr, KSYM_HEADER);
	c->sum = kp_checksum_stream_new();
	c->size = 0;
	opts->tap = write_tap;
	opts->tap_arg = c;
	return true;
}

/* Removes the copies made for other boots or module lists. */
static void remove_others(const struct kp_ksymcache *c)
{
	DIR *d = kp_cachedir_list(c->dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "kallsyms-", 9) == 0 && strcmp(e->d_name, c->name) != 0)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

void kp_ksymcache_commit(struct kp_ksymcache *c, bool ok)
{
	char hdr[KSYM_HEADER + 1];

	if (!c->tmp)
		return;
	ok = ok && !c->write_failed;
	if (ok) {
		format_header(hdr, c->size, kp_checksum_stream_digest(c->sum));
		ok = pwrite(c->fd, hdr, KSYM_HEADER, 0) == (ssize_t)KSYM_HEADER;
	}
	kp_checksum_stream_free(c->sum);
	c->sum = NULL;
	ok = kp_cachefile_commit(c->dir, &c->tmp, c->fd, ok, c->name);
	c->fd = -1;
	if (ok)
		remove_others(c);
}
