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
	uint64_t *wanted; /* sparse table: the addresses it answers for (sorted) */
	size_t nwanted;
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

enum parsed { LINE_BAD, LINE_SKIP, LINE_SYM };

/* Parses one line (without its newline) into *out, module name in *mod
 * (NULL for the core kernel). */
static enum parsed parse_line(char *line, bool *nonzero, struct ksym *out, const char **modp)
{
	char *p = line, *end, *name, *mod = NULL;
	uint64_t addr;
	char type;
	size_t len;

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
		return LINE_BAD;
	p = end + 1;
	if (!isalpha((unsigned char)p[0]) || p[1] != ' ')
		return LINE_BAD;
	type = p[0];
	name = p + 2;
	len = strcspn(name, "\t ");
	if (len == 0)
		return LINE_BAD;
	if (name[len]) {
		char *m = name + len;

		*m++ = '\0';
		m += strspn(m, "\t ");
		if (*m == '[') {
			char *close = strchr(m, ']');

			if (!close || close == m + 1)
				return LINE_BAD;
			*close = '\0';
			mod = m + 1;
		} else if (*m) {
			return LINE_BAD;
		}
	}
	if (type == 'U' || type == 'u')
		return LINE_SKIP; /* undefined: no address to speak of */
	if (addr)
		*nonzero = true;
	if (type == 'a' || type == 'A')
		return LINE_SKIP; /* absolute (per-cpu offsets...): not code addresses */
	out->addr = addr;
	out->type = type;
	out->name = name;
	out->module = 0;
	*modp = mod;
	return LINE_SYM;
}

static void push_sym(struct kp_kallsyms *ks, const struct ksym *sym, const char *mod)
{
	struct ksym *s;

	kp_xgrow(&ks->syms, &ks->cap, ks->n + 1, sizeof(*ks->syms));
	s = &ks->syms[ks->n++];
	*s = *sym;
	s->module = mod ? kp_strtab_intern(ks->strs, mod, strlen(mod)) : 0;
}

/* One read of the whole file (procfs gives no size): names stay in this
 * buffer, cut in place. Returns its length or a negative errno. */
static ssize_t read_text(const char *path, char **text, struct kp_diag *d)
{
	size_t len = 0, cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return kp_diag_errno(d, -errno, "cannot open %s", path);
	for (;;) {
		ssize_t n;

		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 1 << 20;
			*text = kp_xrealloc(*text, cap + 1);
		}
		n = read(fd, *text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = kp_diag_errno(d, -errno, "cannot read %s", path);

			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	(*text)[len] = '\0';
	return (ssize_t)len;
}

/* A sparse load keeps, for each gap (w[j-1], w[j]] between the wanted
 * addresses, only its highest symbol (the best alias) and its lowest one:
 * that is all a lookup of a wanted address reads (the symbol at or below
 * it, and the next one above it, which ends its reach). */
struct gap {
	struct ksym hi, lo;
	const char *hi_mod, *lo_mod;
	bool used;
};

static size_t first_at_or_above(const uint64_t *w, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void gap_add(struct gap *g, const struct ksym *sym, const char *mod)
{
	if (!g->used) {
		g->hi = g->lo = *sym;
		g->hi_mod = g->lo_mod = mod;
		g->used = true;
		return;
	}
	if (sym->addr > g->hi.addr || (sym->addr == g->hi.addr && ksym_cmp(sym, &g->hi) < 0)) {
		g->hi = *sym;
		g->hi_mod = mod;
	}
	if (sym->addr < g->lo.addr || (sym->addr == g->lo.addr && ksym_cmp(sym, &g->lo) < 0)) {
		g->lo = *sym;
		g->lo_mod = mod;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Keeps what lookups of ks->wanted need: for each wanted address the
 * highest symbol at or below it and the lowest above it. */
static void keep_for_wanted(struct kp_kallsyms *ks, struct gap *gaps)
{
	size_t m = ks->nwanted, last = SIZE_MAX, k, j;

	for (k = 0; k < m; k++) {
		if (gaps[k].used)
			last = k;
		if (last != SIZE_MAX)
			push_sym(ks, &gaps[last].hi, gaps[last].hi_mod);
		for (j = k + 1; j <= m && !gaps[j].used; j++)
			;
		if (j <= m)
			push_sym(ks, &gaps[j].lo, gaps[j].lo_mod);
	}
	qsort(ks->syms, ks->n, sizeof(*ks->syms), ksym_cmp);
	/* the same symbol kept for several wanted addresses: once */
	for (k = 0, j = 0; k < ks->n; k++)
		if (!j || ks->syms[k].addr != ks->syms[j - 1].addr ||
		    ks->syms[k].name != ks->syms[j - 1].name)
			ks->syms[j++] = ks->syms[k];
	ks->n = j;
}

static int load(const char *path, const uint64_t *wanted, size_t nwanted, struct kp_kallsyms **out,
		struct kp_diag *d)
{
	struct kp_kallsyms *ks = kp_xcalloc(1, sizeof(*ks));
	struct gap *gaps = NULL;
	bool nonzero = false, any = false;
	char *p, *end;
	ssize_t len;

	*out = NULL;
	ks->strs = kp_strtab_new();
	len = read_text(path, &ks->text, d);
	if (len < 0) {
		int err = (int)len;

		kp_kallsyms_free(ks);
		return err;
	}
	if (wanted) {
		ks->wanted = kp_xmalloc((nwanted ? nwanted : 1) * sizeof(*ks->wanted));
		memcpy(ks->wanted, wanted, nwanted * sizeof(*wanted));
		qsort(ks->wanted, nwanted, sizeof(*ks->wanted), cmp_u64);
		ks->nwanted = nwanted;
		gaps = kp_xcalloc(nwanted + 1, sizeof(*gaps));
	}
	for (p = ks->text, end = ks->text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		struct ksym sym;
		const char *mod;

		if (nl)
			*nl = '\0';
		if (*p) {
			any = true;
			switch (parse_line(p, &nonzero, &sym, &mod)) {
			case LINE_BAD:
				ks->bad_lines++;
				break;
			case LINE_SYM:
				if (gaps)
					gap_add(&gaps[first_at_or_above(ks->wanted, nwanted,
									sym.addr)],
						&sym, mod);
				else
					push_sym(ks, &sym, mod);
				break;
			case LINE_SKIP:
				break;
			}
		}
		p = nl ? nl + 1 : end;
	}
	ks->restricted = any && !nonzero;
	if (gaps)
		keep_for_wanted(ks, gaps);
	else
		qsort(ks->syms, ks->n, sizeof(*ks->syms), ksym_cmp);
	free(gaps);
	*out = ks;
	return 0;
}

int kp_kallsyms_load(const char *path, struct kp_kallsyms **out, struct kp_diag *d)
{
	return load(path, NULL, 0, out, d);
}

int kp_kallsyms_load_for(const char *path, const uint64_t *addrs, size_t n,
			 struct kp_kallsyms **out, struct kp_diag *d)
{
	return load(path, addrs, n, out, d);
}

bool kp_kallsyms_covers(const struct kp_kallsyms *ks, uint64_t addr)
{
	size_t i;

	if (!ks->wanted)
		return true;
	i = first_at_or_above(ks->wanted, ks->nwanted, addr);
	return i < ks->nwanted && ks->wanted[i] == addr;
}

void kp_kallsyms_free(struct kp_kallsyms *ks)
{
	if (!ks)
		return;
	kp_strtab_free(ks->strs);
	free(ks->wanted);
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
