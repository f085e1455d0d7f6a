#include "formats/zstdio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "util/xalloc.h"

bool kp_zstd_magic(const void *buf, size_t len)
{
	static const unsigned char magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

	return len >= 4 && memcmp(buf, magic, 4) == 0;
}

/* ---- reading ---- */

struct kp_zstd_reader {
	FILE *in;
	FILE *fp;
	ZSTD_DStream *ds;
	ZSTD_inBuffer ib;
	void *inbuf;
	size_t inbuf_size;
	size_t frame_left; /* 0 when the last frame ended where the input did */
	bool eof;
	const char *error;
	char errbuf[128];
};

static ssize_t reader_read(void *cookie, char *buf, size_t size)
{
	struct kp_zstd_reader *r = cookie;
	ZSTD_outBuffer ob = {buf, size, 0};

	while (ob.pos == 0 && !r->error) {
		size_t ret;

		if (r->ib.pos == r->ib.size) {
			size_t n;

			if (r->eof)
				break;
			n = fread(r->inbuf, 1, r->inbuf_size, r->in);
			if (n == 0) {
				r->eof = true;
				if (ferror(r->in)) {
					snprintf(r->errbuf, sizeof(r->errbuf), "read error: %s",
						 strerror(errno ? errno : EIO));
					r->error = r->errbuf;
				} else if (r->frame_left) {
					r->error = "truncated (the compressed data ends inside a "
						   "frame)";
				}
				break;
			}
			r->ib = (ZSTD_inBuffer){r->inbuf, n, 0};
		}
		ret = ZSTD_decompressStream(r->ds, &ob, &r->ib);
		/* no memory for the frame's window: as util/xalloc.h does */
		if (ZSTD_isError(ret) && ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation)
			kp_oom(0);
		if (ZSTD_isError(ret)) {
			snprintf(r->errbuf, sizeof(r->errbuf), "not valid zstd data (%s)",
				 ZSTD_getErrorName(ret));
			r->error = r->errbuf;
			break;
		}
		r->frame_left = ret; /* 0: a frame just ended */
	}
	if (r->error && ob.pos == 0) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)ob.pos;
}

static int reader_close(void *cookie)
{
	(void)cookie;
	return 0;
}

struct kp_zstd_reader *kp_zstd_reader_new(FILE *in)
{
	struct kp_zstd_reader *r = kp_xcalloc(1, sizeof(*r));
	cookie_io_functions_t io = {.read = reader_read, .close = reader_close};

	r->in = in;
	r->ds = ZSTD_createDStream();
	r->inbuf_size = ZSTD_DStreamInSize();
	r->inbuf = kp_xmalloc(r->inbuf_size);
	r->fp = fopencookie(r, "r", io);
	if (!r->ds || !r->fp)
		kp_oom(0);
	ZSTD_initDStream(r->ds);
	return r;
}

FILE *kp_zstd_reader_file(struct kp_zstd_reader *r)
{
	return r->fp;
}

const char *kp_zstd_reader_error(const struct kp_zstd_reader *r)
{
	return r->error;
}

void kp_zstd_reader_free(struct kp_zstd_reader *r)
{
	if (!r)
		return;
	fclose(r->fp);
	ZSTD_freeDStream(r->ds);
	free(r->inbuf);
	free(r);
}

/* ---- writing ---- */

struct kp_zstd_writer {
	FILE *out;
	FILE *fp;
	ZSTD_CCtx *cs;
	void *outbuf;
	size_t outbuf_size;
	int err; /* first error, negative errno */
	char errmsg[128];
};

/* Compresses in (mode: continue, or end the frame) and writes what comes
 * out. Returns false once anything failed. */
static bool compress(struct kp_zstd_writer *w, ZSTD_inBuffer *in, ZSTD_EndDirective mode)
{
	size_t left;

	do {
		ZSTD_outBuffer ob = {w->outbuf, w->outbuf_size, 0};

		left = ZSTD_compressStream2(w->cs, &ob, in, mode);
		if (ZSTD_isError(left)) {
			w->err = -EIO;
			snprintf(w->errmsg, sizeof(w->errmsg), "cannot compress: %s",
				 ZSTD_getErrorName(left));
			return false;
		}
		if (ob.pos && fwrite(w->outbuf, 1, ob.pos, w->out) != ob.pos) {
			w->err = -(errno ? errno : EIO);
			snprintf(w->errmsg, sizeof(w->errmsg), "cannot write: %s",
				 strerror(-w->err));
			return false;
		}
	} while (mode == ZSTD_e_end ? left != 0 : in->pos < in->size);
	return true;
}

static ssize_t writer_write(void *cookie, const char *buf, size_t size)
{
	struct kp_zstd_writer *w = cookie;
	ZSTD_inBuffer in = {buf, size, 0};

	if (w->err || !compress(w, &in, ZSTD_e_continue)) {
		errno = -w->err;
		return -1;
	}
	return (ssize_t)size;
}

static int writer_close(void *cookie)
{
	(void)cookie;
	return 0;
}

struct kp_zstd_writer *kp_zstd_writer_new(FILE *out, int level)
{
	struct kp_zstd_writer *w = kp_xcalloc(1, sizeof(*w));
	cookie_io_functions_t io = {.write = writer_write, .close = writer_close};

	w->out = out;
	w->cs = ZSTD_createCCtx();
	w->outbuf_size = ZSTD_CStreamOutSize();
	w->outbuf = kp_xmalloc(w->outbuf_size);
	w->fp = fopencookie(w, "w", io);
	if (!w->cs || !w->fp)
		kp_oom(0);
	ZSTD_CCtx_setParameter(w->cs, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(w->cs, ZSTD_c_checksumFlag, 1);
	/* the cookie stream buffers too: give it a big buffer, fewer calls */
	setvbuf(w->fp, NULL, _IOFBF, 1 << 16);
	return w;
}

FILE *kp_zstd_writer_file(struct kp_zstd_writer *w)
{
	return w->fp;
}

/* v within the bounds zstd gives for parameter p. */
static int clamp_param(ZSTD_cParameter p, int v)
{
	ZSTD_bounds b = ZSTD_cParam_getBounds(p);

	return v < b.lowerBound ? b.lowerBound : v > b.upperBound ? b.upperBound : v;
}

void kp_zstd_writer_expect(struct kp_zstd_writer *w, size_t bytes)
{
	int log = 10;

	/* a window of twice the estimate, at most 2^27 (what decoders take
	 * unless told otherwise); the match tables one step bigger, as zstd's
	 * own tables for small inputs are: setting the window alone leaves
	 * them sized for any input (~90 MB at level 19) */
	while (log < 27 && ((size_t)1 << log) < 2 * bytes)
		log++;
	ZSTD_CCtx_setParameter(w->cs, ZSTD_c_windowLog, clamp_param(ZSTD_c_windowLog, log));
	ZSTD_CCtx_setParameter(w->cs, ZSTD_c_hashLog, clamp_param(ZSTD_c_hashLog, log + 1));
	ZSTD_CCtx_setParameter(w->cs, ZSTD_c_chainLog, clamp_param(ZSTD_c_chainLog, log + 1));
}

int kp_zstd_writer_finish(struct kp_zstd_writer *w, struct kp_diag *d)
{
	ZSTD_inBuffer none = {NULL, 0, 0};
	int err;

	if (fflush(w->fp) != 0 && !w->err)
		w->err = -(errno ? errno : EIO);
	if (!w->err)
		compress(w, &none, ZSTD_e_end);
	if (!w->err && fflush(w->out) != 0) {
		w->err = -(errno ? errno : EIO);
		snprintf(w->errmsg, sizeof(w->errmsg), "cannot write: %s", strerror(-w->err));
	}
	err = w->err;
	if (err)
		kp_diag_set(d, err, "%s", w->errmsg[0] ? w->errmsg : "cannot write");
	kp_zstd_writer_free(w);
	return err;
}

void kp_zstd_writer_free(struct kp_zstd_writer *w)
{
	if (!w)
		return;
	w->err = w->err ? w->err : -ECANCELED; /* the close's flush writes nothing */
	fclose(w->fp);
	ZSTD_freeCCtx(w->cs);
	free(w->outbuf);
	free(w);
}
