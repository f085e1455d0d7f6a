/* The heatmap page (heatmap.h): the data as one JSON object, gzip'd and
 * in base64 in a script element, the drawing in heatmap_page.c's script
 * (which inflates it with the browser's own DecompressionStream). */
#include "formats/heatmap.h"

#include <errno.h>
#include <inttypes.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "profile/folded.h"
#include "profile/run_meta.h"
#include "util/seqtab.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* Cells: 20 ms under columns of a second; past 10 minutes, a second
 * under columns of a minute. */
#define SHORT_SPAN_MS 600000u

struct page {
	const struct kp_profile *p;
	FILE *out;
	struct kp_folded *names; /* frame names, made safe as folded text's */
	struct kp_seqtab stacks; /* name-id sequences -> the page's stack id */
	uint32_t *stack_of;	 /* by profile sample */
	uint32_t *dense;	 /* folded frame id -> the page's name id (UINT32_MAX: none yet) */
	size_t dense_cap;
	uint32_t *fids; /* the page's name id -> folded frame id */
	size_t nnames, fids_cap;
	char *clean;
	size_t clean_cap;
	struct cell_count *cells; /* a timed profile's, in order */
	size_t ncells;
	uint32_t cell_ms, col_ms;
};

/* s as a JSON string that cannot end the script element ('/' escaped). */
static void json_str(struct page *w, const char *s, size_t len)
{
	size_t n;
	const char *c = kp_utf8_clean(s, len, &w->clean, &w->clean_cap, &n);

	fputc('"', w->out);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)c[i];

		if (ch == '"' || ch == '\\' || ch == '/')
			fprintf(w->out, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(w->out, "\\u%04x", ch);
		else
			fputc(ch, w->out);
	}
	fputc('"', w->out);
}

/* The page's id of folded frame id fid: dense, in the order first used. */
static uint32_t name_id(struct page *w, uint32_t fid)
{
	if (fid >= w->dense_cap) {
		size_t old = w->dense_cap;

		kp_xgrow(&w->dense, &w->dense_cap, (size_t)fid + 1, sizeof(*w->dense));
		memset(w->dense + old, 0xff, (w->dense_cap - old) * sizeof(*w->dense));
	}
	if (w->dense[fid] == UINT32_MAX) {
		kp_xgrow(&w->fids, &w->fids_cap, w->nnames + 1, sizeof(*w->fids));
		w->fids[w->nnames] = fid;
		w->dense[fid] = (uint32_t)w->nnames++;
	}
	return w->dense[fid];
}

/* Each profile sample's stack of names, interned: w->stack_of. */
static void name_stacks(struct page *w, const struct kp_fold_opts *fo)
{
	size_t ns = kp_profile_nsamples(w->p), cap = 0;
	uint32_t *st = NULL, unknown = UINT32_MAX;
	char rootbuf[160];

	w->stack_of = kp_xmalloc((ns + 1) * sizeof(*w->stack_of));
	for (size_t i = 0; i < ns; i++) {
		struct kp_profile_root root;
		size_t n, nf = 0;
		const uint32_t *locs = kp_profile_sample(w->p, i, &root, &n, NULL);
		bool added;

		kp_xgrow(&st, &cap, n + 1, sizeof(*st));
		if (root.comm || root.pid) {
			const char *name =
				kp_fold_root_name(w->p, &root, fo, rootbuf, sizeof(rootbuf));

			st[nf++] = name_id(
				w, kp_folded_frame_id(w->names, name, strlen(name), KP_FRAME_ROOT));
		}
		for (size_t j = 0; j < n; j++) {
			size_t nfr;
			const struct kp_profile_frame *fr =
				kp_profile_frames(w->p, locs[j], &nfr, NULL);

			kp_xgrow(&st, &cap, nf + (fr ? nfr : 1), sizeof(*st));
			if (!fr) {
				if (unknown == UINT32_MAX)
					unknown = kp_folded_frame_id(w->names, "[unknown]", 9,
								     KP_FRAME_USER);
				st[nf++] = name_id(w, unknown);
				continue;
			}
			for (size_t k = 0; k < nfr; k++) {
				size_t len;
				const char *name = kp_profile_str(
					w->p, kp_profile_function_at(w->p, fr[k].function)->name,
					&len);

				st[nf++] = name_id(
					w, kp_folded_frame_id(w->names, name, len,
							      (enum kp_frame_kind)fr[k].kind));
			}
		}
		w->stack_of[i] = (uint32_t)kp_seqtab_intern(&w->stacks, st, nf, &added);
	}
	free(st);
}

/* "names", "kinds" and "stacks": frame names by id, their kinds, and each
 * stack's name ids, root first. */
static void write_names(struct page *w)
{
	fputs("\"names\":[", w->out);
	for (size_t id = 0; id < w->nnames; id++) {
		size_t len;
		const char *name = kp_folded_frame_name(w->names, w->fids[id], &len);

		if (id)
			fputc(',', w->out);
		json_str(w, name ? name : "", name ? len : 0);
	}
	fputs("],\"kinds\":[", w->out);
	for (size_t id = 0; id < w->nnames; id++)
		fprintf(w->out, "%s%d", id ? "," : "", (int)kp_folded_frame_kind(w->fids[id]));
	fputs("],\"stacks\":[", w->out);
	for (size_t i = 0; i < kp_seqtab_count(&w->stacks); i++) {
		size_t n;
		const uint32_t *ids = kp_seqtab_words(&w->stacks, i, &n);

		fputs(i ? ",[" : "[", w->out);
		for (size_t k = 0; k < n; k++)
			fprintf(w->out, "%s%" PRIu32, k ? "," : "", ids[k]);
		fputc(']', w->out);
	}
	fputc(']', w->out);
}

/* A cell's samples of one stack (a wait: its ms in the cell). */
struct cell_count {
	uint32_t cell, count, stack;
};

/* The most cell counts the waits may give (192 MB): a wait gives one for
 * each cell it covers, and a recording's waits last no longer than it,
 * but a crafted one's could each last 49 days. */
#define MAX_CELL_COUNTS (16u << 20)

static int by_stack(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int by_cell_stack(const void *a, const void *b)
{
	const struct cell_count *x = a, *y = b;

	if (x->cell != y->cell)
		return x->cell < y->cell ? -1 : 1;
	return (x->stack > y->stack) - (x->stack < y->stack);
}

/* One cell's stack (its id after the cell's previous one, from 0) and
 * count: the difference doubled, plus 1 when a count other than 1 follows. */
static void write_pair(struct page *w, uint64_t delta, uint64_t count)
{
	if (count == 1)
		fprintf(w->out, ",%" PRIu64, delta << 1);
	else
		fprintf(w->out, ",%" PRIu64 ",%" PRIu64, delta << 1 | 1, count);
}

/* The cells the waits cover (events of more than 1 ms): a unit for each
 * of a wait's ms in each cell, in order of cell and stack. Returns them
 * (*n; the caller frees them), or NULL with d saying why when they would
 * pass MAX_CELL_COUNTS. Samples taken are streamed by write_cells. */
static struct cell_count *wait_counts(const struct page *w, size_t *n, struct kp_diag *d)
{
	size_t nev, k = 0;
	const struct kp_profile_event *ev = kp_profile_events(w->p, &nev);
	uint32_t cell_ms = w->cell_ms;
	struct cell_count *cc;
	uint64_t total = 0;

	for (size_t i = 0; i < nev; i++)
		if (ev[i].span > 1)
			total += ev[i].ms / cell_ms - (ev[i].ms + 1u - ev[i].span) / cell_ms + 1;
	if (total > MAX_CELL_COUNTS) {
		kp_diag_set(d, -E2BIG,
			    "its waits cover %llu cells of stacks, more than a page holds (%u)",
			    (unsigned long long)total, MAX_CELL_COUNTS);
		return NULL;
	}
	cc = kp_xmalloc((total ? total : 1) * sizeof(*cc));
	for (size_t i = 0; i < nev; i++) {
		uint64_t end = (uint64_t)ev[i].ms + 1, start = end - ev[i].span;

		if (ev[i].span <= 1)
			continue;
		for (uint64_t c = start / cell_ms; c * cell_ms < end; c++) {
			uint64_t a = c * cell_ms > start ? c * cell_ms : start,
				 b = (c + 1) * cell_ms < end ? (c + 1) * cell_ms : end;

			cc[k++] = (struct cell_count){(uint32_t)c, (uint32_t)(b - a),
						      w->stack_of[ev[i].sample]};
		}
	}
	/* waits end in time order, but reach back into earlier cells */
	qsort(cc, k, sizeof(*cc), by_cell_stack);
	*n = k;
	return cc;
}

/* One cell: the stacks of its samples taken (st[0..n), sorted) and of
 * its waits (wc[0..nw), sorted), merged, each stack once with its count. */
static void write_cell(struct page *w, const uint32_t *st, size_t n, const struct cell_count *wc,
		       size_t nw)
{
	size_t i = 0, j = 0;
	uint32_t last = 0;

	while (i < n || j < nw) {
		uint32_t stack = j == nw || (i < n && st[i] < wc[j].stack) ? st[i] : wc[j].stack;
		uint64_t count = 0;

		for (; i < n && st[i] == stack; i++)
			count++;
		for (; j < nw && wc[j].stack == stack; j++)
			count += wc[j].count;
		write_pair(w, stack - last, count);
		last = stack;
	}
}

/* How many distinct stacks st[0..n) and wc[0..nw) (both sorted) hold. */
static size_t distinct_of(const uint32_t *st, size_t n, const struct cell_count *wc, size_t nw)
{
	size_t i = 0, j = 0, k = 0;

	while (i < n || j < nw) {
		uint32_t stack = j == nw || (i < n && st[i] < wc[j].stack) ? st[i] : wc[j].stack;

		for (; i < n && st[i] == stack; i++)
			;
		for (; j < nw && wc[j].stack == stack; j++)
			;
		k++;
	}
	return k;
}

/* "cells": for each cell with samples, its index after the previous
 * one's (the first: from 0), how many stacks, then its stacks in order
 * (write_pair). Samples taken come in time order, a cell at a time; the
 * waits' cells (w->cells) are merged in. */
static void write_cells(struct page *w)
{
	size_t nev, i = 0, j = 0, cap = 0;
	const struct kp_profile_event *ev = kp_profile_events(w->p, &nev);
	uint32_t *st = NULL;
	uint64_t prev = 0;
	bool first = true;

	fputs("\"cells\":[", w->out);
	for (;;) {
		uint64_t cell = UINT64_MAX;
		size_t n = 0, j0;

		while (i < nev && ev[i].span > 1)
			i++;
		if (i < nev)
			cell = ev[i].ms / w->cell_ms;
		if (j < w->ncells && w->cells[j].cell < cell)
			cell = w->cells[j].cell;
		if (cell == UINT64_MAX)
			break;
		for (; i < nev && (ev[i].span > 1 || ev[i].ms / w->cell_ms == cell); i++)
			if (ev[i].span <= 1) {
				kp_xgrow(&st, &cap, n + 1, sizeof(*st));
				st[n++] = w->stack_of[ev[i].sample];
			}
		if (n > 1)
			qsort(st, n, sizeof(*st), by_stack);
		for (j0 = j; j < w->ncells && w->cells[j].cell == cell; j++)
			;
		fprintf(w->out, "%s%" PRIu64 ",%zu", first ? "" : ",", cell - prev,
			distinct_of(st, n, w->cells + j0, j - j0));
		first = false;
		prev = cell;
		write_cell(w, st, n, w->cells + j0, j - j0);
	}
	free(st);
	fputc(']', w->out);
}

/* An untimed profile: one cell of every sample, counting o->fold.value
 * (to the nearest integer past 2^53). */
static void write_one_cell(struct page *w, size_t value)
{
	size_t ns = kp_profile_nsamples(w->p), nst = kp_seqtab_count(&w->stacks);
	double *count = kp_xcalloc(nst + 1, sizeof(*count));
	size_t distinct = 0, last = 0;

	for (size_t i = 0; i < ns; i++) {
		const kp_count *values;

		kp_profile_sample(w->p, i, NULL, NULL, &values);
		count[w->stack_of[i]] += (double)values[value];
	}
	for (size_t s = 0; s < nst; s++)
		distinct += count[s] >= 1;
	fprintf(w->out, "\"cells\":[0,%zu", distinct);
	for (size_t s = 0; s < nst; s++)
		if (count[s] >= 1) {
			write_pair(w, s - last, (uint64_t)(count[s] + 0.5));
			last = s;
		}
	fputc(']', w->out);
	free(count);
}

static void write_data(struct page *w, const struct kp_heatmap_opts *o)
{
	bool timed = kp_profile_timed(w->p);
	uint32_t last = 0, cell_ms = w->cell_ms, col_ms = w->col_ms;
	size_t nev;
	const struct kp_profile_event *ev = kp_profile_events(w->p, &nev);
	struct kp_run_meta meta;
	const char *range;

	kp_run_meta_read(w->p, &meta);
	range = meta.range;
	if (nev)
		last = ev[nev - 1].ms;
	fprintf(w->out,
		"{\"timed\":%s,\"origin_ms\":%" PRIu64 ",\"cell_ms\":%" PRIu32
		",\"col_ms\":%" PRIu32 ",\"last_ms\":%" PRIu32 ",\"title\":",
		timed ? "true" : "false", kp_profile_time_origin(w->p) / 1000000u, cell_ms, col_ms,
		last);
	json_str(w, o->title ? o->title : "Heatmap", strlen(o->title ? o->title : "Heatmap"));
	fputs(",\"range\":", w->out);
	if (range)
		json_str(w, range, strlen(range));
	else
		fputs("null", w->out);
	fputs(",\"inputs\":[", w->out);
	for (size_t i = 0; i < o->ninputs; i++) {
		if (i)
			fputc(',', w->out);
		json_str(w, o->inputs[i], strlen(o->inputs[i]));
	}
	fputs("],", w->out);
	write_names(w);
	fputc(',', w->out);
	if (timed)
		write_cells(w);
	else
		write_one_cell(w, o->fold.value);
	fputc('}', w->out);
}

/* The page's data, and the stacks and cells it is made of. On failure
 * (d set) nothing is written. */
static int page_data(struct page *w, const struct kp_heatmap_opts *o, struct kp_diag *d)
{
	size_t nev;
	const struct kp_profile_event *ev = kp_profile_events(w->p, &nev);
	int err = 0;

	w->cell_ms = 20, w->col_ms = 1000;
	if (nev && ev[nev - 1].ms >= SHORT_SPAN_MS)
		w->cell_ms = 1000, w->col_ms = 60000;
	w->names = kp_folded_new();
	kp_seqtab_init(&w->stacks);
	name_stacks(w, &o->fold);
	if (kp_profile_timed(w->p) && !(w->cells = wait_counts(w, &w->ncells, d)))
		err = -E2BIG;
	else
		write_data(w, o);
	kp_folded_free(w->names);
	kp_seqtab_fini(&w->stacks);
	free(w->stack_of);
	free(w->dense);
	free(w->fids);
	free(w->clean);
	free(w->cells);
	return err;
}

int kp_heatmap_write_data(const struct kp_profile *p, const struct kp_heatmap_opts *o, FILE *out,
			  struct kp_diag *d)
{
	struct page w = {.p = p, .out = out};
	int err = page_data(&w, o, d);

	if (!err && ferror(out))
		return kp_diag_errno(d, errno ? -errno : -EIO, "cannot write the heatmap data");
	return err;
}

/* data[0..len) in base64 (RFC 4648, with padding) to out. */
static void base64(const uint8_t *data, size_t len, FILE *out)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char buf[4096];
	size_t k = 0;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16 |
			     (i + 1 < len ? (uint32_t)data[i + 1] << 8 : 0) |
			     (i + 2 < len ? data[i + 2] : 0);

		buf[k++] = abc[v >> 18 & 63];
		buf[k++] = abc[v >> 12 & 63];
		buf[k++] = i + 1 < len ? abc[v >> 6 & 63] : '=';
		buf[k++] = i + 2 < len ? abc[v & 63] : '=';
		if (k + 4 > sizeof(buf)) {
			fwrite(buf, 1, k, out);
			k = 0;
		}
	}
	fwrite(buf, 1, k, out);
}

/* The data gzip'd, in base64: JSON of digits and names compresses 5-10
 * times, so the page is smaller and the browser reads less of it. */
static int write_packed(const char *json, size_t len, FILE *out, struct kp_diag *d)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(KP_HEATMAP_LEVEL);
	uint8_t *gz;
	size_t gzlen;

	if (!c)
		return kp_diag_set(d, -ENOMEM, "heatmap: cannot set up gzip");
	gzlen = libdeflate_gzip_compress_bound(c, len);
	gz = kp_xmalloc(gzlen);
	gzlen = libdeflate_gzip_compress(c, json, len, gz, gzlen);
	libdeflate_free_compressor(c);
	if (!gzlen) {
		free(gz);
		return kp_diag_set(d, -EIO, "heatmap: gzip compression failed");
	}
	base64(gz, gzlen, out);
	free(gz);
	return 0;
}

int kp_heatmap_write(const struct kp_profile *p, const struct kp_heatmap_opts *o, FILE *out,
		     struct kp_diag *d)
{
	char *json = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&json, &len);
	int err;

	if (!mem)
		return kp_diag_errno(d, -errno, "heatmap: cannot hold the page's data");
	err = kp_heatmap_write_data(p, o, mem, d);
	if (fclose(mem) && !err)
		err = kp_diag_errno(d, -ENOMEM, "heatmap: cannot hold the page's data");
	if (err) {
		free(json);
		return err;
	}
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	      "<title>kprof heatmap</title>\n<style>\n",
	      out);
	fputs(kp_heatmap_style, out);
	fputs("</style></head><body>\n<script id=\"kprof-data\" type=\"application/gzip+base64\">",
	      out);
	err = write_packed(json, len, out, d);
	free(json);
	if (err)
		return err;
	fputs("</script>\n<script>\n", out);
	fputs(kp_heatmap_script, out);
	fputs("</script>\n</body></html>\n", out);
	if (ferror(out))
		return kp_diag_errno(d, errno ? -errno : -EIO, "cannot write the heatmap page");
	return 0;
}
