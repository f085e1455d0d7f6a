/* /proc/kallsyms: "ADDR TYPE NAME[\t[MODULE]]" per line, unsorted for
 * modules, several names per address. Sorted once; lookups binary search
 * for the last symbol at or below the address. kallsyms has no sizes, so a
 * symbol reaches up to the next symbol of any type (data symbols end text
 * ranges), and at most KP_KALLSYMS_MAX_REACH when the next symbol is in
 * another module or there is none. The file is streamed through one small
 * buffer; the names a table keeps are copied into blocks it owns. */
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
#include "util/search.h"

struct ksym {
	uint64_t addr;
	const char *name; /* in the table's arena (in the read buffer while parsing) */
	uint32_t module;  /* strtab id, 0 for the core kernel */
	char type;
};

/* Append-only string storage in blocks that never move, so names can be
 * pointed at while more are added. */
struct block {
	struct block *next;
	size_t used, size;
	char data[];
};

struct kp_kallsyms {
	struct ksym *syms;
	size_t n, cap;
	struct block *names;	/* symbol names, newest block first */
	struct kp_strtab *strs; /* module names */
	uint64_t bad_lines;
	bool restricted;
	uint64_t *wanted; /* sparse table: the addresses it answers for (sorted) */
	size_t nwanted;
	/* the core kernel's text and init text, 0 when not seen */
	uint64_t stext, etext, sinittext, einittext;
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

/* Blocks start small (a sparse table keeps a few hundred names) and double
 * up to this size (a full table keeps ~100k names, a few MB). */
#define NAMES_MAX_BLOCK (1024 * 1024)

/* Copies s into ks's name blocks; the copy lives until kp_kallsyms_free. */
static const char *keep_name(struct kp_kallsyms *ks, const char *s)
{
	size_t len = strlen(s) + 1;
	struct block *b = ks->names;

	if (!b || b->size - b->used < len) {
		size_t size = !b			       ? 4096
			      : b->size >= NAMES_MAX_BLOCK / 2 ? NAMES_MAX_BLOCK
							       : b->size * 2;

		if (size < len)
			size = len;
		b = kp_xmalloc(sizeof(*b) + size);
		b->next = ks->names;
		b->used = 0;
		b->size = size;
		ks->names = b;
	}
	memcpy(b->data + b->used, s, len);
	b->used += len;
	return b->data + b->used - len;
}

static uint32_t intern_module(struct kp_kallsyms *ks, const char *mod)
{
	return mod ? kp_strtab_intern(ks->strs, mod, strlen(mod)) : 0;
}

/* A full load keeps every symbol, its name copied out of the read buffer. */
static void push_sym(struct kp_kallsyms *ks, const struct ksym *sym)
{
	kp_xgrow(&ks->syms, &ks->cap, ks->n + 1, sizeof(*ks->syms));
	ks->syms[ks->n++] = *sym;
}

/* A sparse load keeps, for each gap (w[j-1], w[j]] between the wanted
 * addresses, only its highest symbol (the best alias) and its lowest one:
 * that is all a lookup of a wanted address reads (the symbol at or below
 * it, and the next one above it, which ends its reach).
 *
 * Candidates change on almost every line (addresses mostly ascend), so a
 * new candidate's name and module stay in the read buffer ("fresh") and
 * only the candidates still standing when the buffer is about to be
 * reused are copied out, once per gap and buffer. */
struct gap {
	struct ksym hi, lo;
	const char *hi_mod, *lo_mod; /* in the read buffer while fresh */
	bool used, hi_fresh, lo_fresh;
};

struct sparse {
	struct gap *gaps; /* nwanted + 1 */
	size_t *fresh;	  /* indexes of the gaps with a fresh candidate */
	size_t nfresh;
};

static void gap_add(struct kp_kallsyms *ks, struct sparse *sp, const struct ksym *sym,
		    const char *mod)
{
	size_t i = kp_first_at_or_above(ks->wanted, ks->nwanted, sym->addr);
	struct gap *g = &sp->gaps[i];
	bool hi = !g->used || sym->addr > g->hi.addr ||
		  (sym->addr == g->hi.addr && ksym_cmp(sym, &g->hi) < 0);
	bool lo = !g->used || sym->addr < g->lo.addr ||
		  (sym->addr == g->lo.addr && ksym_cmp(sym, &g->lo) < 0);

	if (!hi && !lo)
		return;
	if (!g->hi_fresh && !g->lo_fresh)
		sp->fresh[sp->nfresh++] = i;
	g->used = true;
	if (hi) {
		g->hi = *sym;
		g->hi_mod = mod;
		g->hi_fresh = true;
	}
	if (lo) {
		g->lo = *sym;
		g->lo_mod = mod;
		g->lo_fresh = true;
	}
}

/* Copies the fresh candidates out of the read buffer before it is reused.
 * A gap's hi and lo that are the same line share one copy, so that
 * keep_for_wanted sees one symbol. */
static void keep_fresh(struct kp_kallsyms *ks, struct sparse *sp)
{
	for (size_t k = 0; k < sp->nfresh; k++) {
		struct gap *g = &sp->gaps[sp->fresh[k]];
		bool same = g->hi_fresh && g->lo_fresh && g->hi.name == g->lo.name;

		if (g->hi_fresh) {
			g->hi.name = keep_name(ks, g->hi.name);
			g->hi.module = intern_module(ks, g->hi_mod);
		}
		if (same) {
			g->lo.name = g->hi.name;
			g->lo.module = g->hi.module;
		} else if (g->lo_fresh) {
			g->lo.name = keep_name(ks, g->lo.name);
			g->lo.module = intern_module(ks, g->lo_mod);
		}
		g->hi_mod = g->lo_mod = NULL;
		g->hi_fresh = g->lo_fresh = false;
	}
	sp->nfresh = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Keeps what lookups of ks->wanted need: for each wanted address the
 * highest symbol at or below it and the lowest above it. */
static void keep_for_wanted(struct kp_kallsyms *ks, const struct gap *gaps)
{
	size_t m = ks->nwanted, last = SIZE_MAX, k, j;

	for (k = 0; k < m; k++) {
		if (gaps[k].used)
			last = k;
		if (last != SIZE_MAX)
			push_sym(ks, &gaps[last].hi);
		for (j = k + 1; j <= m && !gaps[j].used; j++)
			;
		if (j <= m)
			push_sym(ks, &gaps[j].lo);
	}
	if (ks->n) /* (syms is NULL when empty) */
		qsort(ks->syms, ks->n, sizeof(*ks->syms), ksym_cmp);
	/* the same symbol kept for several wanted addresses: once */
	for (k = 0, j = 0; k < ks->n; k++)
		if (!j || ks->syms[k].addr != ks->syms[j - 1].addr ||
		    ks->syms[k].name != ks->syms[j - 1].name)
			ks->syms[j++] = ks->syms[k];
	ks->n = j;
}

struct parse_state {
	struct kp_kallsyms *ks;
	struct sparse *sp; /* NULL for a full load */
	bool any, nonzero;
	const struct kp_kallsyms_opts *opts; /* for its tap, may be NULL */
};

/* Notes the bounds of the core kernel's text (kept or not). */
static void note_text_bounds(struct kp_kallsyms *ks, const struct ksym *sym, const char *mod)
{
	if (mod || sym->name[0] != '_' || (sym->type != 'T' && sym->type != 't'))
		return;
	if (strcmp(sym->name, "_stext") == 0)
		ks->stext = sym->addr;
	else if (strcmp(sym->name, "_etext") == 0)
		ks->etext = sym->addr;
	else if (strcmp(sym->name, "_sinittext") == 0)
		ks->sinittext = sym->addr;
	else if (strcmp(sym->name, "_einittext") == 0)
		ks->einittext = sym->addr;
}

/* One line, NUL-terminated, in the read buffer. */
static void take_line(struct parse_state *ps, char *line)
{
	struct kp_kallsyms *ks = ps->ks;
	struct ksym sym;
	const char *mod;

	if (!*line)
		return;
	ps->any = true;
	switch (parse_line(line, &ps->nonzero, &sym, &mod)) {
	case LINE_BAD:
		ks->bad_lines++;
		break;
	case LINE_SYM:
		note_text_bounds(ks, &sym, mod);
		if (ps->sp) {
			gap_add(ks, ps->sp, &sym, mod);
		} else {
			sym.name = keep_name(ks, sym.name);
			sym.module = intern_module(ks, mod);
			push_sym(ks, &sym);
		}
		break;
	case LINE_SKIP:
		break;
	}
}

/* Reads path through one buffer of bufsize bytes, reused for every read
 * (reading all of it first, 5 MB into a doubling buffer as procfs gives no
 * size, cost more in page faults on 15 MB of fresh memory than the
 * parsing). Complete lines are parsed in place; the unfinished last one
 * moves to the front of the buffer for the next read. A line of bufsize
 * bytes or more is malformed: skipped up to its newline and counted. */
static int read_lines(const char *path, int fd, size_t bufsize, struct parse_state *ps,
		      struct kp_diag *d)
{
	size_t len = 0;
	bool skipping = false;
	char *buf;
	int err = 0;

	buf = kp_xmalloc(bufsize + 1); /* + 1: a NUL after a last line without newline */
	for (;;) {
		ssize_t n = read(fd, buf + len, bufsize - len);
		char *p, *end, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = kp_diag_errno(d, -errno, "cannot read %s", path);
			goto out_buf;
		}
		if (n == 0)
			break;
		if (ps->opts && ps->opts->tap)
			ps->opts->tap(ps->opts->tap_arg, buf + len, (size_t)n);
		p = buf;
		end = buf + len + (size_t)n;
		if (skipping) {
			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl) {
				len = 0;
				continue;
			}
			ps->ks->bad_lines++;
			skipping = false;
			p = nl + 1;
		}
		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			*nl = '\0';
			take_line(ps, p);
			p = nl + 1;
		}
		if (ps->sp)
			keep_fresh(ps->ks, ps->sp);
		len = (size_t)(end - p);
		if (len == bufsize) {
			skipping = true;
			len = 0;
		} else {
			memmove(buf, p, len);
		}
	}
	if (skipping) {
		ps->ks->bad_lines++;
	} else if (len) {
		buf[len] = '\0';
		take_line(ps, buf);
		if (ps->sp)
			keep_fresh(ps->ks, ps->sp);
	}
out_buf:
	free(buf);
	return err;
}

static int load(const char *path, const uint64_t *wanted, size_t nwanted,
		const struct kp_kallsyms_opts *opts, struct kp_kallsyms **out, struct kp_diag *d)
{
	struct kp_kallsyms *ks = kp_xcalloc(1, sizeof(*ks));
	struct sparse sp = {0};
	struct parse_state ps = {.ks = ks, .opts = opts};
	size_t bufsize = opts && opts->read_size ? opts->read_size : KP_KALLSYMS_READ_SIZE;
	bool own_fd = !opts || !opts->from_fd;
	int fd = own_fd ? open(path, O_RDONLY | O_CLOEXEC) : opts->fd;
	int err;

	*out = NULL;
	ks->strs = kp_strtab_new();
	if (wanted) {
		ks->wanted = kp_xmalloc((nwanted ? nwanted : 1) * sizeof(*ks->wanted));
		memcpy(ks->wanted, wanted, nwanted * sizeof(*wanted));
		qsort(ks->wanted, nwanted, sizeof(*ks->wanted), cmp_u64);
		ks->nwanted = nwanted;
		sp.gaps = kp_xcalloc(nwanted + 1, sizeof(*sp.gaps));
		sp.fresh = kp_xmalloc((nwanted + 1) * sizeof(*sp.fresh));
		ps.sp = &sp;
	}
	if (fd < 0) {
		err = kp_diag_errno(d, -errno, "cannot open %s", path);
		goto out_sparse;
	}
	err = read_lines(path, fd, bufsize, &ps, d);
	if (own_fd)
		close(fd);
	if (err)
		goto out_sparse;
	ks->restricted = ps.any && !ps.nonzero;
	if (wanted)
		keep_for_wanted(ks, sp.gaps);
	else if (ks->n)
		qsort(ks->syms, ks->n, sizeof(*ks->syms), ksym_cmp);
	*out = ks;
	ks = NULL;
out_sparse:
	free(sp.fresh);
	free(sp.gaps);
	kp_kallsyms_free(ks);
	return err;
}

int kp_kallsyms_load(const char *path, struct kp_kallsyms **out, struct kp_diag *d)
{
	return load(path, NULL, 0, NULL, out, d);
}

int kp_kallsyms_load_for(const char *path, const uint64_t *addrs, size_t n,
			 struct kp_kallsyms **out, struct kp_diag *d)
{
	return load(path, addrs, n, NULL, out, d);
}

int kp_kallsyms_load_opts(const char *path, const uint64_t *addrs, size_t n,
			  const struct kp_kallsyms_opts *opts, struct kp_kallsyms **out,
			  struct kp_diag *d)
{
	return load(path, addrs, n, opts, out, d);
}

bool kp_kallsyms_covers(const struct kp_kallsyms *ks, uint64_t addr)
{
	size_t i;

	if (!ks->wanted)
		return true;
	i = kp_first_at_or_above(ks->wanted, ks->nwanted, addr);
	return i < ks->nwanted && ks->wanted[i] == addr;
}

void kp_kallsyms_free(struct kp_kallsyms *ks)
{
	if (!ks)
		return;
	kp_strtab_free(ks->strs);
	free(ks->wanted);
	free(ks->syms);
	while (ks->names) {
		struct block *next = ks->names->next;

		free(ks->names);
		ks->names = next;
	}
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

bool kp_kallsyms_in_core_text(const struct kp_kallsyms *ks, uint64_t addr)
{
	return (ks->stext && addr >= ks->stext && addr < ks->etext) ||
	       (ks->sinittext && addr >= ks->sinittext && addr < ks->einittext);
}

const char *kp_kallsyms_lookup(const struct kp_kallsyms *ks, uint64_t addr, const char **module)
{
	size_t lo, i, next;
	const struct ksym *s;
	uint64_t end;

	if (module)
		*module = NULL;
	if (ks->restricted)
		return NULL;
	lo = KP_FIRST_ABOVE(ks->syms, ks->n, addr, addr);
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
