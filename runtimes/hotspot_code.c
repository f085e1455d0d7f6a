/* The code cache of a HotSpot JVM (hotspot.h): its heaps, the code blob
 * holding a pc (found through the heap's segment map, as
 * CodeHeap::find_blob does), its kind and frame size, and an nmethod's
 * scopes at a pc (its PcDesc, then the chain of ScopeDescs in its debug
 * info: the inlined methods, innermost first). Every count, offset and
 * pointer read is checked against the blob it belongs to. */
#include <string.h>

#include "runtimes/hotspotP.h"
#include "util/xalloc.h"

/* A blob's header is read whole: the fields kprof reads lie below this. */
#define HEADER_READ 512
/* Segment-map hops: a blob of 64 MiB at 64-byte segments, 254 a hop. */
#define MAX_HOPS 4096
/* PcDescs of one nmethod read at most (the largest have a few thousand). */
#define MAX_PCDESCS 65536
/* Frames kept before the cache starts over. */
#define MAX_CACHED 65536
/* A frame larger than this is not a Java frame. */
#define MAX_FRAME_BYTES (1u << 20)

bool kp_hs_heaps_read(struct kp_hotspot *h)
{
	uint64_t arr, data;
	int32_t len;
	size_t n = 0;

	if (!kp_hs_u64(h, h->heaps_addr, &arr) || !hs_ptr_ok(arr) ||
	    !kp_hs_read(h, arr + h->f[F_GA_LEN], &len, 4) ||
	    !kp_hs_u64(h, arr + h->f[F_GA_DATA], &data) || !hs_ptr_ok(data) || len <= 0)
		return false;
	/* a JVM has a few heaps: a length past HS_MAX_HEAPS is not read on */
	for (int32_t i = 0; i < len && i < HS_MAX_HEAPS; i++) {
		struct hs_heap hp;
		uint64_t heap;
		int32_t log2;

		if (!kp_hs_u64(h, data + 8 * (uint64_t)i, &heap) || !hs_ptr_ok(heap) ||
		    !kp_hs_u64(h, heap + h->f[F_CH_MEMORY] + h->f[F_VS_LOW], &hp.low) ||
		    !kp_hs_u64(h, heap + h->f[F_CH_MEMORY] + h->f[F_VS_HIGH], &hp.high) ||
		    !kp_hs_u64(h, heap + h->f[F_CH_SEGMAP] + h->f[F_VS_LOW], &hp.segmap) ||
		    !kp_hs_read(h, heap + h->f[F_CH_LOG2], &log2, 4))
			continue;
		if (log2 < 4 || log2 > 16 || hp.low >= hp.high || !hs_ptr_ok(hp.segmap) ||
		    hp.high - hp.low > ((uint64_t)1 << 36))
			continue;
		hp.log2_seg = (uint32_t)log2;
		h->heaps[n++] = hp;
	}
	h->nheaps = n;
	return n > 0;
}

/* The start of the block holding pc in heap hp (0: a free segment or a map
 * that does not check out). */
static uint64_t block_start(struct kp_hotspot *h, const struct hs_heap *hp, uint64_t pc)
{
	uint64_t seg = (pc - hp->low) >> hp->log2_seg;
	unsigned char map[256];

	for (int hops = 0; hops < MAX_HOPS; hops++) {
		/* the map's bytes up to seg, a window of them at once */
		uint64_t lo = seg >= 255 ? seg - 255 : 0;
		unsigned char b;

		if (!kp_hs_read(h, hp->segmap + lo, map, (size_t)(seg - lo + 1)))
			return 0;
		for (;;) {
			b = map[seg - lo];
			if (b == 0xff)
				return 0; /* free */
			if (b == 0)
				return hp->low + (seg << hp->log2_seg);
			if (b > seg)
				return 0;
			seg -= b;
			if (seg < lo)
				break;
		}
	}
	return 0;
}

static int32_t hdr_i32(const unsigned char *hdr, uint64_t off)
{
	int32_t v;

	memcpy(&v, hdr + off, 4);
	return v;
}

static uint64_t hdr_u64(const unsigned char *hdr, uint64_t off)
{
	uint64_t v;

	memcpy(&v, hdr + off, 8);
	return v;
}

/* The blob's name (cached by its pointer: the names are static strings of
 * libjvm.so). */
static const char *blob_name(struct kp_hotspot *h, uint64_t p)
{
	char buf[96];
	uint64_t id;

	if (kp_u64map_get(&h->blob_names, p, &id))
		return kp_strtab_str(h->strs, (uint32_t)id);
	if (!kp_hs_read_str(h, p, buf, sizeof(buf)))
		return NULL;
	for (char *c = buf; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			*c = '?';
	id = kp_strtab_intern(h->strs, buf, strlen(buf));
	kp_u64map_put(&h->blob_names, p, id);
	return kp_strtab_str(h->strs, (uint32_t)id);
}

/* One int of the debug-info stream at p[*pos..n): JDK 17's CompressedStream
 * or later JDKs' UNSIGNED5 (both: a byte below L ends, up to 5 bytes). */
static bool stream_int(const struct kp_hotspot *h, const unsigned char *p, size_t n, size_t *pos,
		       uint32_t *out)
{
	const uint32_t x = h->jdk17_streams ? 0 : 1, l = 256 - 64 - x;
	uint32_t sum = 0;

	for (int i = 0, shift = 0; i < 5; i++, shift += 6) {
		uint32_t b;

		if (*pos >= n)
			return false;
		b = p[(*pos)++];
		if (b < x)
			return false;
		sum += (b - x) << shift;
		if (b < x + l || i == 4) {
			*out = sum;
			return true;
		}
	}
	return false;
}

/* The nmethod's layout, from its header. */
struct nm {
	uint64_t addr, code_begin, method;
	uint64_t pcs, pcs_end;		 /* PcDescs */
	uint64_t scopes, scopes_end;	 /* ScopeDesc stream */
	uint64_t metadata, metadata_end; /* Method* slots */
};

static bool nm_layout(struct kp_hotspot *h, const unsigned char *hdr, uint64_t blob, uint64_t size,
		      struct nm *nm)
{
	int32_t md = hs_int(h, hdr, F_NM_METADATA), pcs = hs_int(h, hdr, F_NM_SCOPES_PCS),
		deps = hs_int(h, hdr, F_NM_DEPS);

	nm->addr = blob;
	nm->method = hdr_u64(hdr, h->have[F_CM_METHOD] ? h->f[F_CM_METHOD] : h->f[F_NM_METHOD]);
	if (h->have[F_CM_SCOPES_DATA]) {
		nm->scopes = hdr_u64(hdr, h->f[F_CM_SCOPES_DATA]);
	} else {
		int32_t sd = hs_int(h, hdr, F_NM_SCOPES_DATA);

		nm->scopes = sd > 0 ? blob + (uint64_t)sd : 0;
	}
	if (md <= 0 || pcs <= 0 || deps <= 0 || (uint64_t)deps > size || pcs > deps)
		return false;
	nm->metadata = blob + (uint64_t)md;
	nm->metadata_end = nm->scopes;
	nm->scopes_end = blob + (uint64_t)pcs;
	nm->pcs = blob + (uint64_t)pcs;
	nm->pcs_end = blob + (uint64_t)deps;
	return nm->scopes >= nm->metadata && nm->scopes <= nm->scopes_end &&
	       !((nm->metadata_end - nm->metadata) & 7) && hs_ptr_ok(nm->method);
}

/* The scope decode offset of the PcDesc for pc: the one at its offset for
 * a return address, the first at or after it for the sampled pc. */
static bool find_pcdesc(struct kp_hotspot *h, const struct nm *nm, uint64_t pc, bool exact,
			int32_t *decode)
{
	unsigned char buf[HS_MAX_READ];
	uint64_t sz = h->t[T_PC_DESC], n = (nm->pcs_end - nm->pcs) / sz;
	int64_t off = (int64_t)(pc - nm->code_begin);
	size_t per = HS_MAX_READ / sz;

	if (n > MAX_PCDESCS)
		n = MAX_PCDESCS;
	for (uint64_t i = 0; i < n; i += per) {
		size_t k = n - i < per ? (size_t)(n - i) : per;

		if (!kp_hs_read(h, nm->pcs + i * sz, buf, k * sz))
			return false;
		for (size_t j = 0; j < k; j++) {
			int32_t po = hdr_i32(buf + j * sz, h->f[F_PC_PC]);

			if (po < off)
				continue;
			if (!exact && po != off)
				return false;
			*decode = hdr_i32(buf + j * sz, h->f[F_PC_SCOPE]);
			return true;
		}
	}
	return false;
}

/* The chain of scopes from decode offset d: each ScopeDesc is (sender's
 * offset, method's index in the metadata, bci). */
static const char *read_scopes(struct kp_hotspot *h, const struct nm *nm, int32_t d,
			       struct kp_hotspot_frame *f)
{
	uint64_t slen = nm->scopes_end - nm->scopes, nmeta = (nm->metadata_end - nm->metadata) / 8;

	f->nscopes = 0;
	/* 0: DebugInformationRecorder::serialized_null, no more senders */
	while (d > 0 && f->nscopes < KP_HOTSPOT_MAX_SCOPES) {
		unsigned char buf[16];
		size_t pos = 0, k;
		uint32_t sender, idx, bci;
		uint64_t m;

		if ((uint64_t)d >= slen)
			return "a scope lies outside its nmethod's debug info";
		k = slen - (uint64_t)d < sizeof(buf) ? (size_t)(slen - (uint64_t)d) : sizeof(buf);
		if (!kp_hs_read(h, nm->scopes + (uint64_t)d, buf, k))
			return "its nmethod's debug info is unreadable";
		if (!stream_int(h, buf, k, &pos, &sender) || !stream_int(h, buf, k, &pos, &idx) ||
		    !stream_int(h, buf, k, &pos, &bci))
			return "a scope of its nmethod does not decode";
		if (idx == 0 || idx > nmeta)
			return "a scope's method index is outside its nmethod's metadata";
		if (!kp_hs_u64(h, nm->metadata + 8 * (uint64_t)(idx - 1), &m) || !hs_ptr_ok(m))
			return "a scope's method does not check out";
		f->methods[f->nscopes++] = m;
		/* each sender is encoded before its callee */
		if (sender != 0 && (int32_t)sender >= d)
			return "a scope's sender does not precede it";
		d = (int32_t)sender;
	}
	return NULL;
}

/* Fills f for pc in the blob at blob of kind nmethod. */
static const char *compiled(struct kp_hotspot *h, const unsigned char *hdr, uint64_t blob,
			    uint64_t size, uint64_t code_begin, uint64_t pc, bool exact,
			    struct kp_hotspot_frame *f)
{
	struct nm nm;
	int32_t decode = 0;
	const char *why;

	nm.method = hdr_u64(hdr, h->have[F_CM_METHOD] ? h->f[F_CM_METHOD] : h->f[F_NM_METHOD]);
	f->nscopes = 1;
	f->methods[0] = nm.method;
	if (!h->scopes_ok) {
		if (!hs_ptr_ok(nm.method)) {
			f->nscopes = 0;
			return "its nmethod's method does not check out";
		}
		return NULL;
	}
	if (!nm_layout(h, hdr, blob, size, &nm)) {
		/* named by its own method still, when that checks out */
		f->nscopes = hs_ptr_ok(nm.method);
		return "its nmethod's layout does not check out";
	}
	nm.code_begin = code_begin;
	/* no PcDesc: the nmethod's own method, its inlined ones unknown */
	if (!find_pcdesc(h, &nm, pc, exact, &decode) || decode <= 0)
		return NULL;
	why = read_scopes(h, &nm, decode, f);
	if (why || !f->nscopes) {
		f->nscopes = 1;
		f->methods[0] = nm.method;
	}
	return why;
}

/* Reads what the JVM says of pc into f. */
static void read_frame(struct kp_hotspot *h, uint64_t pc, bool exact, struct kp_hotspot_frame *f)
{
	unsigned char hdr[HEADER_READ];
	const struct hs_heap *hp = NULL;
	uint64_t blob, code_begin;
	int32_t size, done, fsize;
	const char *name;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < h->nheaps && !hp; i++)
		if (pc >= h->heaps[i].low && pc < h->heaps[i].high)
			hp = &h->heaps[i];
	if (!hp)
		return; /* KP_HSF_NONE */
	f->kind = KP_HSF_BAD;
	blob = block_start(h, hp, pc);
	if (!blob) {
		f->why = "the pc is in no code blob of the code cache";
		return;
	}
	blob += h->t[T_HEAP_BLOCK];
	if (!kp_hs_read(h, blob, hdr, sizeof(hdr))) {
		f->why = "its code blob is unreadable";
		return;
	}
	size = hs_int(h, hdr, F_CB_SIZE);
	done = hs_int(h, hdr, F_CB_FRAME_DONE);
	fsize = hs_int(h, hdr, F_CB_FRAME_SIZE);
	code_begin = h->have[F_CB_CODE_BEGIN] ? hdr_u64(hdr, h->f[F_CB_CODE_BEGIN])
					      : blob + (uint64_t)hs_int(h, hdr, F_CB_CODE_OFF);
	name = blob_name(h, hdr_u64(hdr, h->f[F_CB_NAME]));
	if (size <= 0 || pc >= blob + (uint64_t)size || code_begin < blob || code_begin > pc ||
	    fsize < 0 || (uint64_t)fsize * 8 > MAX_FRAME_BYTES || !name) {
		f->why = "its code blob does not check out";
		return;
	}
	f->blob = name;
	f->frame_size = (uint32_t)fsize * 8;
	f->in_prologue = done > 0 && pc < code_begin + (uint64_t)done;
	if (strcmp(name, "Interpreter") == 0) {
		f->kind = KP_HSF_INTERPRETED;
	} else if (strcmp(name, "nmethod") == 0 || strcmp(name, "native nmethod") == 0) {
		f->kind = KP_HSF_COMPILED;
		f->why = compiled(h, hdr, blob, (uint64_t)size, code_begin, pc, exact, f);
		if (f->why && !f->nscopes)
			f->kind = KP_HSF_BAD;
	} else {
		f->kind = KP_HSF_STUB;
	}
}

const struct kp_hotspot_frame *kp_hotspot_frame_at(struct kp_hotspot *h, uint64_t pc, bool exact)
{
	uint64_t key = pc << 1 | exact, i;

	if (kp_u64map_get(&h->pcs, key, &i))
		return &h->frames[i];
	h->st.pcs++;
	if (h->nframes >= MAX_CACHED)
		kp_hotspot_flush(h);
	read_frame(h, pc, exact, &h->scratch);
	/* the blob's name lives in strs, which a flush above did not touch
	 * since: the frame can be kept */
	kp_xgrow(&h->frames, &h->capframes, h->nframes + 1, sizeof(*h->frames));
	h->frames[h->nframes] = h->scratch;
	kp_u64map_put(&h->pcs, key, h->nframes);
	return &h->frames[h->nframes++];
}
