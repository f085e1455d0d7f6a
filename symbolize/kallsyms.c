/* /proc/kallsyms: "ADDR TYPE NAME[\t[MODULE]]" per line, unsorted for
 * modules, several names per address. Sorted once; lookups binary search
 * for the last symbol at or below the address. kallsyms has no sizes, so a
 * symbol reaches up to the next symbol of any type (data symbols end text
 * ranges), and at most KP_KALLSYMS_MAX_REACH when the next symbol is in
 * another module or there is none. */
#include "symbolize/kallsyms.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/strtab.h"
#include "util/xalloc.h"

struct ksym {
	uint64_t addr;
	const char *name; /* in the file's text */
	uint32_t module;  /* strtab id, 0 for the core kernel */
	char type;
};

struct kp_kallsyms {
	struct ksym *syms;
	size_t n, cap;
	char *text;		/* the whole file, names cut in place */
	struct kp_strtab *strs; /* module names */
	uint64_t bad_lines;
	bool restricted;
};

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static bool is_weak_type(char t)
{
	return t == 'w' || t == 'W' || t == 'v' || t == 'V';
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Orders by address, then puts the name perf would choose first among
 * aliases: text over data, non-weak over weak, global over local, fewer
 * leading underscores, longer name; finally by name for stable output. */
static int ksym_cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;
	const char *na, *nb;
	size_t ua, ub, la, lb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (is_text_type(a->type) != is_text_type(b->type))
		return is_text_type(a->type) ? -1 : 1;
	if (is_weak_type(a->type) != is_weak_type(b->type))
		return is_weak_type(a->type) ? 1 : -1;
	if (!!isupper((unsigned char)a->type) != !!isupper((unsigned char)b->type))
		return isupper((unsigned char)a->type) ? -1 : 1;
	na = a->name;
	nb = b->name;
	ua = leading_underscores(na);
	ub = leading_underscores(nb);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	la = strlen(na);
	lb = strlen(nb);
	if (la != lb)
		return la > lb ? -1 : 1;
	return strcmp(na, nb);
}

/* Parses one line (without its newline). Returns false when malformed. */
static bool parse_line(struct kp_kallsyms *ks, char *line, bool *nonzero)
{
	char *p = line, *end, *name, *mod = NULL;
	uint64_t addr;
	char type;
	size_t len;
	struct ksym *s;

	/* hex by hand: strtoull was a third of the load time */
	addr = 0;
	for (end = p; end - p < 16; end++) {
		char c = *end;
		unsigned v;

		if (c >= '0' && c <= '9')
			v = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = (unsigned)(c - 'A' + 10);
		else
			break;
		addr = addr << 4 | v;
	}
	if (end == p || *end != ' ')
		return false;
	p = end + 1;
	if (!isalpha((unsigned char)p[0]) || p[1] != ' ')
		return false;
	type = p[0];
	name = p + 2;
	len = strcspn(name, "\t ");
	if (len == 0)
		return false;
	if (name[len]) {
		char *m = name + len;

		*m++ = '\0';
		m += strspn(m, "\t ");
		if (*m == '[') {
			char *close = strchr(m, ']');

			if (!close || close == m + 1)
				return false;
			*close = '\0';
			mod = m + 1;
		} else if (*m) {
			return false;
		}
	}
	if (type == 'U' || type == 'u')
		return true; /* undefined: no address to speak of */
	if (addr)
		*nonzero = true;
	if (type == 'a' || type == 'A')
		return true; /* absolute (per-cpu offsets...): not code addresses */
	kp_xgrow(&ks->syms, &ks->cap, ks->n + 1, sizeof(*ks->syms));
	s = &ks->syms[ks->n++];
	s->addr = addr;
	s->type = type;
	s->name = name;
	s->module = mod ? kp_strtab_intern(ks->strs, mod, strlen(mod)) : 0;
	return true;
}

int kp_kallsyms_load(const char *path, struct kp_kallsyms **out, struct kp_diag *d)
{
	struct kp_kallsyms *ks;
	size_t len = 0, cap = 0;
	bool nonzero = false, any = false;
	char *p, *end;
	int fd, err = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kp_diag_errno(d, -errno, "cannot open %s", path);
	ks = kp_xcalloc(1, sizeof(*ks));
	ks->strs = kp_strtab_new();
	/* one read of the whole file (procfs gives no size): names stay in
	 * this buffer, cut in place */
	for (;;) {
		ssize_t n;

		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 1 << 20;
			ks->text = kp_xrealloc(ks->text, cap + 1);
		}
		n = read(fd, ks->text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = kp_diag_errno(d, -errno, "cannot read %s", path);
			goto out_file;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	ks->text[len] = '\0';
	for (p = ks->text, end = ks->text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (nl)
			*nl = '\0';
		if (*p) {
			any = true;
			if (!parse_line(ks, p, &nonzero))
				ks->bad_lines++;
		}
		p = nl ? nl + 1 : end;
	}
	ks->restricted = any && !nonzero;
	qsort(ks->syms, ks->n, sizeof(*ks->syms), ksym_cmp);
out_file:
	close(fd);
	if (err) {
		kp_kallsyms_free(ks);
		return err;
	}
	*out = ks;
	return 0;
}

void kp_kallsyms_free(struct kp_kallsyms *ks)
{
	if (!ks)
		return;
	kp_strtab_free(ks->strs);
	free(ks->syms);
	free(ks->text);
	free(ks);
}

bool kp_kallsyms_restricted(const struct kp_kallsyms *ks)
{
	return ks->restricted;
}

size_t kp_kallsyms_count(const struct kp_kallsyms *ks)
{
	return ks->n;
}

uint64_t kp_kallsyms_bad_lines(const struct kp_kallsyms *ks)
{
	return ks->bad_lines;
}

const char *kp_kallsyms_lookup(const struct kp_kallsyms *ks, uint64_t addr, const char **module)
{
	size_t lo = 0, hi = ks->n, i, next;
	const struct ksym *s;
	uint64_t end;

	if (module)
		*module = NULL;
	if (ks->restricted)
		return NULL;
	/* first symbol with address > addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	next = lo;
	i = lo - 1;
	/* the best alias sorts first among equal addresses */
	while (i > 0 && ks->syms[i - 1].addr == ks->syms[i].addr)
		i--;
	s = &ks->syms[i];
	if (!is_text_type(s->type))
		return NULL;
	end = s->addr + KP_KALLSYMS_MAX_REACH < s->addr ? UINT64_MAX
							: s->addr + KP_KALLSYMS_MAX_REACH;
	if (next < ks->n && (ks->syms[next].module == s->module || ks->syms[next].addr < end))
		end = ks->syms[next].addr;
	if (addr >= end)
		return NULL;
	if (module && s->module)
		*module = kp_strtab_str(ks->strs, s->module);
	return s->name;
}
