/* A whole build flattened, unit by unit, through the lazy index's own
 * making of a unit (dwarf_indexP.h): what kp_dwarf_index_chain and its
 * line rows would find at every address, for the saved index. */
#include "symbolize/dwarf_flat.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/dwarf_indexP.h"
#include "util/search.h"
#include "util/strtab.h"
#include "util/xalloc.h"

struct qualified_rec {
	Dwarf_Die *die;
	char *plain; /* the qualified name, when the rule asked for it */
};

static char *record_qualified(void *arg, const char *plain)
{
	struct qualified_rec *r = arg;

	free(r->plain);
	r->plain = kp_dwarf_index_qualified_name(r->die, plain);
	return kp_xstrdup(r->plain);
}

/* The raw names of a scope, with the plain name qualified when the naming
 * rule would qualify it (which depends on its linkage name only). */
static void flat_names(struct kp_dwarf_scope *s, struct kp_dwarf_flat_scope *f)
{
	const char *plain = dwarf_diename(&s->die);

	f->link = kp_dwarf_index_linkage_name(&s->die);
	if (s->cxx && plain) {
		struct qualified_rec r = {&s->die, NULL};

		free(kp_dwarf_index_pick_name(f->link, plain, record_qualified, &r, false));
		if (r.plain) {
			f->plain = f->qualified_name = r.plain;
			f->qualified = true;
			return;
		}
	}
	f->plain = plain; /* libdw's string, alive as long as the Dwarf */
}

static void add_flat_piece(struct kp_dwarf_flat *out, size_t *cap, Dwarf_Addr lo, Dwarf_Addr hi,
			   uint32_t scope)
{
	struct kp_dwarf_flat_piece *last = out->npieces ? &out->pieces[out->npieces - 1] : NULL;

	if (lo >= hi)
		return;
	if (last && last->hi == lo && last->scope == scope) {
		last->hi = hi;
		return;
	}
	kp_xgrow(&out->pieces, cap, out->npieces + 1, sizeof(*out->pieces));
	out->pieces[out->npieces++] = (struct kp_dwarf_flat_piece){lo, hi, scope};
}

/* The pieces of one unit in global scope numbers (base + the unit's own):
 * each top-level piece filled with its function's inner pieces, the
 * function itself where none covers it, as kp_dwarf_index_chain finds them. */
static void flatten_cu(struct cu_index *cu, uint32_t base, struct kp_dwarf_flat *out, size_t *cap)
{
	for (size_t i = 0; i < cu->top.n; i++) {
		const struct piece *tp = &cu->top.v[i];
		const struct root *r = &cu->roots[tp->scope];
		const struct pieces *in = &r->inner;
		size_t k = KP_FIRST_ABOVE(in->v, in->n, lo, tp->lo);
		Dwarf_Addr at = tp->lo;

		if (k > 0 && in->v[k - 1].hi > tp->lo)
			k--; /* the inner piece reaching into this one */
		for (; k < in->n && in->v[k].lo < tp->hi; k++) {
			Dwarf_Addr lo = in->v[k].lo > at ? in->v[k].lo : at;
			Dwarf_Addr hi = in->v[k].hi < tp->hi ? in->v[k].hi : tp->hi;

			add_flat_piece(out, cap, at, lo, base + (uint32_t)r->scope);
			add_flat_piece(out, cap, lo, hi, base + (uint32_t)in->v[k].scope);
			if (hi > at)
				at = hi;
		}
		add_flat_piece(out, cap, at, tp->hi, base + (uint32_t)r->scope);
	}
}

static inline bool flat_less(const struct kp_dwarf_flat_piece *a,
			     const struct kp_dwarf_flat_piece *b)
{
	return a->lo < b->lo;
}

KP_MSORT(sort_flat, struct kp_dwarf_flat_piece, flat_less)

/* One unit's source files as ids in the build's table, made as they are
 * first needed. */
struct unit_files {
	Dwarf_Files *files;
	size_t nfiles;
	const char *comp_dir;
	bool v5;       /* files count from 0 */
	uint32_t *ids; /* by index in the unit's table, 0 until made */
	char *buf;     /* DIR/FILE while it is interned */
	size_t buf_cap;
};

static void unit_files_init(struct unit_files *uf, Dwarf_Die *cudie, const char *comp_dir)
{
	Dwarf_Half version = 0;

	memset(uf, 0, sizeof(*uf));
	uf->comp_dir = comp_dir;
	if (dwarf_cu_info(cudie->cu, &version, NULL, NULL, NULL, NULL, NULL, NULL) != 0 ||
	    dwarf_getsrcfiles(cudie, &uf->files, &uf->nfiles) != 0)
		uf->nfiles = 0;
	uf->v5 = version >= 5;
	uf->ids = kp_xcalloc(uf->nfiles ? uf->nfiles : 1, sizeof(*uf->ids));
}

static void unit_files_fini(struct unit_files *uf)
{
	free(uf->ids);
	free(uf->buf);
}

/* The build's id of file idx of the unit, 0 for none. */
static uint32_t unit_file_id(struct unit_files *uf, struct kp_strtab *t, Dwarf_Word idx)
{
	struct kp_dwarf_src src;
	const char *name;
	size_t len;

	if (idx >= uf->nfiles || (!uf->v5 && idx == 0))
		return 0;
	if (uf->ids[idx])
		return uf->ids[idx];
	name = dwarf_filesrc(uf->files, idx, NULL, NULL);
	if (!name)
		return 0;
	kp_dwarf_index_set_src(&src, uf->comp_dir, name, 0);
	len = (src.dir ? strlen(src.dir) + 1 : 0) + strlen(name);
	kp_xgrow(&uf->buf, &uf->buf_cap, len + 1, 1);
	snprintf(uf->buf, len + 1, "%s%s%s", src.dir ? src.dir : "", src.dir ? "/" : "", name);
	uf->ids[idx] = kp_strtab_intern(t, uf->buf, len);
	return uf->ids[idx];
}

static void add_flat_row(struct kp_dwarf_flat *out, size_t *cap, Dwarf_Addr lo, Dwarf_Addr hi,
			 uint32_t file, uint32_t line)
{
	struct kp_dwarf_flat_row *last = out->nrows ? &out->rows[out->nrows - 1] : NULL;

	if (last && last->hi == lo && last->file == file && last->line == line) {
		last->hi = hi;
		return;
	}
	kp_xgrow(&out->rows, cap, out->nrows + 1, sizeof(*out->rows));
	out->rows[out->nrows++] = (struct kp_dwarf_flat_row){lo, hi, file, line};
}

/* An address range of a unit, as find_cu sees them. */
struct unit_range {
	Dwarf_Off cu; /* the unit's DIE */
	Dwarf_Addr lo, hi;
};

static int unit_range_cmp(const void *pa, const void *pb)
{
	const struct unit_range *a = pa, *b = pb;

	if (a->cu != b->cu)
		return a->cu < b->cu ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* .debug_aranges by unit, or nothing when there is none. */
static struct unit_range *read_aranges(Dwarf *dw, size_t *n)
{
	Dwarf_Aranges *ar;
	size_t naranges = 0;
	struct unit_range *v;

	*n = 0;
	if (dwarf_getaranges(dw, &ar, &naranges) != 0 || !naranges)
		return NULL;
	v = kp_xmalloc(naranges * sizeof(*v));
	for (size_t i = 0; i < naranges; i++) {
		Dwarf_Arange *a = dwarf_onearange(ar, i);
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off cu;

		if (a && dwarf_getarangeinfo(a, &start, &len, &cu) == 0 && len)
			v[(*n)++] = (struct unit_range){cu, start, start + len};
	}
	if (*n > 1)
		qsort(v, *n, sizeof(*v), unit_range_cmp);
	return v;
}

/* Where find_cu finds the unit: its .debug_aranges entries, or for a unit
 * they leave out its own DIE's ranges; sorted, into *out (n returned). */
static size_t unit_coverage(Dwarf_Die *cudie, const struct unit_range *ar, size_t nar,
			    struct unit_range **out, size_t *cap)
{
	struct unit_range key = {dwarf_dieoffset(cudie), 0, 0};
	size_t lo = 0, hi = nar, n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (unit_range_cmp(&ar[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nar && ar[lo].cu == key.cu; lo++) {
		kp_xgrow(out, cap, n + 1, sizeof(**out));
		(*out)[n++] = ar[lo];
	}
	if (!n) {
		Dwarf_Addr base, rlo, rhi;
		ptrdiff_t r = 0;

		while ((r = dwarf_ranges(cudie, r, &base, &rlo, &rhi)) > 0) {
			if (rhi <= rlo)
				continue;
			kp_xgrow(out, cap, n + 1, sizeof(**out));
			(*out)[n++] = (struct unit_range){key.cu, rlo, rhi};
		}
		if (n > 1)
			qsort(*out, n, sizeof(**out), unit_range_cmp);
	}
	/* disjoint: overlapping and touching ranges merged */
	for (size_t i = 1, k = n ? 1 : 0; i <= n; i++) {
		if (i == n) {
			n = k;
			break;
		}
		if ((*out)[i].lo <= (*out)[k - 1].hi) {
			if ((*out)[i].hi > (*out)[k - 1].hi)
				(*out)[k - 1].hi = (*out)[i].hi;
		} else {
			(*out)[k++] = (*out)[i];
		}
	}
	return n;
}

/* The unit's line table as rows, where find_cu finds the unit: row i holds
 * from its address to the next row's, as dwarf_getsrc_die reads the table
 * (the last row at or before an address, none past an end of sequence,
 * the last of several at one address). Without the clipping, a row of
 * length 0 at a sequence's end, which libdw sorts after the end marker,
 * would reach to the unit's next sequence, over other units' code. */
static void flatten_lines(Dwarf_Die *cudie, struct unit_files *uf, const struct unit_range *cov,
			  size_t ncov, struct kp_dwarf_flat *out, size_t *cap)
{
	Dwarf_Lines *lines;
	size_t nlines, c = 0;
	Dwarf_Addr addr = 0, next;
	Dwarf_Line *l, *n;

	if (!ncov || dwarf_getsrclines(cudie, &lines, &nlines) != 0 || !nlines ||
	    !(l = dwarf_onesrcline(lines, 0)) || dwarf_lineaddr(l, &addr) != 0)
		return;
	/* a unit has about as many rows as lines: room once */
	kp_xgrow(&out->rows, cap, out->nrows + nlines, sizeof(*out->rows));
	for (size_t i = 0; i + 1 < nlines; i++, l = n, addr = next) {
		Dwarf_Files *files;
		size_t idx;
		bool end = true;
		int line = 0;
		uint32_t id;

		n = dwarf_onesrcline(lines, i + 1);
		if (!n || dwarf_lineaddr(n, &next) != 0)
			return;
		if (next <= addr || dwarf_lineendsequence(l, &end) != 0 || end ||
		    dwarf_line_file(l, &files, &idx) != 0 || dwarf_lineno(l, &line) != 0 ||
		    !(id = unit_file_id(uf, out->files, idx)))
			continue;
		/* [addr, next) within the unit's ranges (sorted, as the rows) */
		while (c > 0 && cov[c - 1].hi > addr)
			c--;
		for (; c < ncov && cov[c].lo < next; c++) {
			Dwarf_Addr lo = cov[c].lo > addr ? cov[c].lo : addr;
			Dwarf_Addr hi = cov[c].hi < next ? cov[c].hi : next;

			if (lo < hi)
				add_flat_row(out, cap, lo, hi, id, line > 0 ? (uint32_t)line : 0);
		}
	}
}

static inline bool row_less(const struct kp_dwarf_flat_row *a, const struct kp_dwarf_flat_row *b)
{
	return a->lo < b->lo;
}

KP_MSORT(sort_rows, struct kp_dwarf_flat_row, row_less)

/* Rows of units out of address order, or overlapping (broken DWARF):
 * sorted, and where two claim an address the one starting first keeps
 * it; neighbours at one file and line merged. */
static void normalize_rows(struct kp_dwarf_flat *out)
{
	struct kp_dwarf_flat_row *tmp = kp_xmalloc((out->nrows ? out->nrows : 1) * sizeof(*tmp));
	size_t k = 0;

	sort_rows(out->rows, tmp, out->nrows);
	free(tmp);
	for (size_t i = 0; i < out->nrows; i++) {
		struct kp_dwarf_flat_row r = out->rows[i];

		if (k && r.lo < out->rows[k - 1].hi)
			r.lo = out->rows[k - 1].hi;
		if (r.lo >= r.hi)
			continue;
		if (k && out->rows[k - 1].hi == r.lo && out->rows[k - 1].file == r.file &&
		    out->rows[k - 1].line == r.line)
			out->rows[k - 1].hi = r.hi;
		else
			out->rows[k++] = r;
	}
	out->nrows = k;
}

void kp_dwarf_flat_build(struct kp_dwarf_index *x, Dwarf *dw, struct kp_dwarf_flat *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0, scap = 0, rcap = 0, k = 0, nar, cov_cap = 0;
	bool sorted = true, rows_sorted = true;
	struct unit_range *ar, *cov = NULL;

	memset(out, 0, sizeof(*out));
	out->files = kp_strtab_new();
	ar = read_aranges(dw, &nar);
	/* unit by unit, each freed once flattened: the memory held is one
	 * unit's index and the output, whatever the size of the build */
	for (; dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0; off = next) {
		Dwarf_Die cudie;
		struct cu_index cu = {0};
		struct unit_files uf;
		uint32_t base = (uint32_t)out->nscopes;
		size_t first = out->npieces, first_row = out->nrows, ncov;

		if (!dwarf_offdie(dw, off + hsize, &cudie))
			continue;
		kp_dwarf_index_cu(x, &cudie, &cu);
		for (size_t i = 0; i < cu.nroots; i++)
			kp_dwarf_index_root(x, &cu, &cu.roots[i]);
		unit_files_init(&uf, &cudie, cu.comp_dir);
		kp_xgrow(&out->scopes, &scap, out->nscopes + cu.nscopes, sizeof(*out->scopes));
		for (size_t i = 0; i < cu.nscopes; i++) {
			struct kp_dwarf_scope *sc = &cu.scopes[i];
			struct kp_dwarf_flat_scope *f = &out->scopes[out->nscopes++];

			memset(f, 0, sizeof(*f));
			f->parent = sc->parent < 0 ? -1 : (int32_t)base + sc->parent;
			f->inlined = sc->inlined;
			flat_names(sc, f);
			if (sc->inlined) {
				Dwarf_Attribute attr;
				Dwarf_Word file = 0, line = 0;

				/* what kp_dwarf_index_call_site reads, in this unit */
				if (dwarf_formudata(dwarf_attr(&sc->die, DW_AT_call_file, &attr),
						    &file) == 0)
					f->call_file = unit_file_id(&uf, out->files, file);
				if (dwarf_formudata(dwarf_attr(&sc->die, DW_AT_call_line, &attr),
						    &line) == 0 &&
				    line <= INT32_MAX)
					f->call_line = (uint32_t)line;
			}
		}
		flatten_cu(&cu, base, out, &cap);
		if (first && out->npieces > first &&
		    out->pieces[first].lo < out->pieces[first - 1].hi)
			sorted = false;
		ncov = unit_coverage(&cudie, ar, nar, &cov, &cov_cap);
		flatten_lines(&cudie, &uf, cov, ncov, out, &rcap);
		if (first_row && out->nrows > first_row &&
		    out->rows[first_row].lo < out->rows[first_row - 1].hi)
			rows_sorted = false;
		unit_files_fini(&uf);
		kp_dwarf_index_cu_fini(&cu);
	}
	free(ar);
	free(cov);
	if (!rows_sorted)
		normalize_rows(out);
	if (!sorted) {
		/* units out of address order, or overlapping (broken DWARF): sort,
		 * and where two claim an address the one starting first keeps it */
		struct kp_dwarf_flat_piece *tmp = kp_xmalloc(out->npieces * sizeof(*tmp));

		sort_flat(out->pieces, tmp, out->npieces);
		free(tmp);
		for (size_t i = 0; i < out->npieces; i++) {
			struct kp_dwarf_flat_piece p = out->pieces[i];

			if (k && p.lo < out->pieces[k - 1].hi)
				p.lo = out->pieces[k - 1].hi;
			if (p.lo < p.hi)
				out->pieces[k++] = p;
		}
		out->npieces = k;
	}
}

void kp_dwarf_flat_fini(struct kp_dwarf_flat *f)
{
	for (size_t i = 0; i < f->nscopes; i++)
		free(f->scopes[i].qualified_name);
	free(f->scopes);
	free(f->pieces);
	free(f->rows);
	kp_strtab_free(f->files);
	memset(f, 0, sizeof(*f));
}
