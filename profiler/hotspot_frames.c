/* Java frames of HotSpot JVMs (hotspot_frames.h, docs/java.md). A JVM is
 * read with process_vm_readv, never stopped or attached to; what its
 * reader caches (code blobs by pc, Method names) and what this module
 * caches (a Method's profile location) is let go every FLUSH_NS, since
 * the JVM frees and reuses code and metadata as it runs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "profiler/hotspot_frames.h"
#include "profiler/profilerP.h"
#include "runtimes/hotspot.h"
#include "symbolize/symbolize.h"
#include "util/xalloc.h"

/* What is read of a JVM is read again after this long. */
#define FLUSH_NS 1000000000ull
/* JVMs read at once, at most (each holds a few MiB of caches at most). */
#define MAX_JVMS 256

enum jvm_state { JVM_SEEN, JVM_READY, JVM_FAILED };

struct jvm {
	pid_t pid;
	uint8_t state;	    /* enum jvm_state */
	uint64_t lib_start; /* libjvm.so's executable mapping */
	struct kp_hotspot *h;
	uint64_t flushed_ns;
	struct kp_u64map locs;	/* Method* | inlined -> profile location id */
	struct kp_u64map blobs; /* blob name pointer -> profile location id */
	uint64_t generation;	/* of the reader's caches, when blobs was filled */
	uint64_t profile;	/* hf->profile when locs and blobs were filled */
};

/* Pages of a JVM's live stack read above a sample's copy, per walk. */
#define MORE_PAGES 64

struct kp_hsframes {
	struct kp_session *s;
	pid_t more_pid;
	uint64_t more_addr[MORE_PAGES]; /* page address, 0: unused */
	bool more_ok[MORE_PAGES];
	unsigned char (*more_buf)[4096];
	size_t nmore;
	struct kp_u64map jvms; /* pid -> struct jvm * */
	/* the last walk's names: per depth, up to KP_HOTSPOT_MAX_SCOPES */
	uint32_t (*names)[KP_HOTSPOT_MAX_SCOPES];
	uint8_t *nnames;
	size_t *touched, ntouched;
	struct kp_hsframes_stats st;
	bool noted;
	uint64_t profile; /* the session's profiles so far: location ids are each one's */
};

struct kp_hsframes *kp_hsframes_new(struct kp_session *s)
{
	struct kp_hsframes *hf = kp_xcalloc(1, sizeof(*hf));

	hf->s = s;
	kp_u64map_init(&hf->jvms);
	hf->names = kp_xcalloc(KP_SESSION_MAX_FRAMES, sizeof(*hf->names));
	hf->nnames = kp_xcalloc(KP_SESSION_MAX_FRAMES, 1);
	hf->touched = kp_xcalloc(KP_SESSION_MAX_FRAMES, sizeof(*hf->touched));
	return hf;
}

static void jvm_free(struct jvm *j)
{
	kp_hotspot_free(j->h);
	kp_u64map_fini(&j->locs);
	kp_u64map_fini(&j->blobs);
	free(j);
}

void kp_hsframes_free(struct kp_hsframes *hf)
{
	size_t pos = 0;
	uint64_t k, v;

	if (!hf)
		return;
	while (kp_u64map_next(&hf->jvms, &pos, &k, &v))
		jvm_free((struct jvm *)(uintptr_t)v);
	kp_u64map_fini(&hf->jvms);
	free(hf->names);
	free(hf->nnames);
	free(hf->touched);
	free(hf->more_buf);
	free(hf);
}

void kp_hsframes_mapped(struct kp_hsframes *hf, const struct kp_mapping *m)
{
	const char *path = m->path, *base = strrchr(path, '/');
	pid_t pid = m->pid;
	struct jvm *j;
	uint64_t v;

	base = base ? base + 1 : path;
	if (strcmp(base, "libjvm.so") != 0)
		return;
	if (kp_u64map_get(&hf->jvms, (uint64_t)(uint32_t)pid, &v)) {
		j = (struct jvm *)(uintptr_t)v;
		if (j->lib_start == m->start)
			return;
		jvm_free(j);
	} else if (kp_u64map_count(&hf->jvms) >= MAX_JVMS) {
		return;
	}
	j = kp_xcalloc(1, sizeof(*j));
	j->pid = pid;
	j->lib_start = m->start;
	kp_u64map_init(&j->locs);
	kp_u64map_init(&j->blobs);
	kp_u64map_put(&hf->jvms, (uint64_t)(uint32_t)pid, (uint64_t)(uintptr_t)j);
}

void kp_hsframes_new_profile(struct kp_hsframes *hf)
{
	if (hf)
		hf->profile++;
}

void kp_hsframes_forget(struct kp_hsframes *hf, pid_t pid)
{
	uint64_t v;

	if (!kp_u64map_get(&hf->jvms, (uint64_t)(uint32_t)pid, &v))
		return;
	kp_u64map_del(&hf->jvms, (uint64_t)(uint32_t)pid);
	if (((struct jvm *)(uintptr_t)v)->h) {
		struct kp_hotspot_stats hs;

		kp_hotspot_stats(((struct jvm *)(uintptr_t)v)->h, &hs);
		hf->st.reads += hs.reads; /* of JVMs gone */
	}
	jvm_free((struct jvm *)(uintptr_t)v);
}

/* The JVM's memory, read as it is: one system call, no attach. */
static ssize_t read_jvm(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct jvm *j = arg;
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(j->pid, &local, 1, &remote, 1, 0);

	return n < 0 ? -errno : n;
}

/* Reads the JVM's VM structs: once; a failure is said once a run. */
static void jvm_open(struct kp_hsframes *hf, struct jvm *j)
{
	struct kp_session *s = hf->s;
	struct kp_mapping *m = kp_proctab_find_map(s->procs, j->pid, j->lib_start);
	struct kp_hotspot_syms syms;
	struct kp_diag d = {{0}};
	uint32_t obj;
	int fd;

	j->state = JVM_FAILED;
	obj = m ? kp_sample_map_object(s, m) : 0;
	fd = obj ? kp_sym_object_fd(s->opts.sym, obj) : -1;
	if (fd < 0)
		snprintf(d.msg, sizeof(d.msg), "libjvm.so could not be opened");
	else if (kp_hotspot_symbols(fd, m->start, m->pgoff, &syms, &d) == 0 &&
		 (j->h = kp_hotspot_new(&syms, read_jvm, j, &d)))
		j->state = JVM_READY;
	if (j->state == JVM_READY) {
		hf->st.jvms++;
		j->flushed_ns = 0;
		return;
	}
	hf->st.jvms_failed++;
	if (!hf->noted)
		kp_notes_add(
			&s->ev.notes,
			"java %d: its VM structs were not read (%s): its Java frames are named "
			"from a perf map only (jcmd PID Compiler.perfmap, or start it with "
			"-XX:+DumpPerfMapAtExit; docs/java.md)",
			(int)j->pid, d.msg);
	hf->noted = true;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The reader of pid, when it is a JVM that could be read. */
static struct jvm *jvm_of(struct kp_hsframes *hf, pid_t pid)
{
	struct jvm *j;
	uint64_t v, t;

	if (!kp_u64map_get(&hf->jvms, (uint64_t)(uint32_t)pid, &v))
		return NULL;
	j = (struct jvm *)(uintptr_t)v;
	if (j->state == JVM_SEEN)
		jvm_open(hf, j);
	if (j->state != JVM_READY)
		return NULL;
	t = now_ns();
	if (t - j->flushed_ns >= FLUSH_NS || j->profile != hf->profile) {
		if (j->flushed_ns)
			kp_hotspot_flush(j->h);
		j->generation = kp_hotspot_generation(j->h);
		kp_u64map_fini(&j->locs);
		kp_u64map_init(&j->locs);
		kp_u64map_fini(&j->blobs);
		kp_u64map_init(&j->blobs);
		j->flushed_ns = t;
		j->profile = hf->profile;
	}
	return j;
}

/* Adds a name to frame depth of the walk. */
static void add_name(struct kp_hsframes *hf, size_t depth, uint32_t loc)
{
	if (depth >= KP_SESSION_MAX_FRAMES || hf->nnames[depth] >= KP_HOTSPOT_MAX_SCOPES)
		return;
	if (!hf->nnames[depth] && hf->ntouched < KP_SESSION_MAX_FRAMES)
		hf->touched[hf->ntouched++] = depth;
	hf->names[depth][hf->nnames[depth]++] = loc;
}

static void name_text(struct kp_hsframes *hf, size_t depth, const char *text,
		      enum kp_frame_kind kind)
{
	add_name(hf, depth, kp_profile_named_location(hf->s->prof, text, strlen(text), kind));
}

/* Names a frame that did not check out; the walk ends at it. */
static enum kp_unwind_rtstep bad(struct kp_hsframes *hf, size_t depth, const char *why)
{
	char text[160];

	snprintf(text, sizeof(text), "[unknown: hotspot: %s]", why);
	if (depth < KP_SESSION_MAX_FRAMES)
		hf->nnames[depth] = 0; /* the reason replaces what was named */
	name_text(hf, depth, text, KP_FRAME_JIT);
	hf->st.bad++;
	return KP_UNWIND_RT_BAD;
}

/* Names Method method at depth (inlined: a frame inlined into another). */
static bool name_method(struct kp_hsframes *hf, struct jvm *j, size_t depth, uint64_t method,
			bool inlined, const char **why)
{
	uint64_t key = method | inlined, loc;
	const char *name;

	if (!kp_u64map_get(&j->locs, key, &loc)) {
		name = kp_hotspot_method_name(j->h, method, why);
		if (!name)
			return false;
		loc = kp_profile_named_location(hf->s->prof, name, strlen(name),
						inlined ? KP_FRAME_INLINE : KP_FRAME_JIT);
		kp_u64map_put(&j->locs, key, loc);
	}
	add_name(hf, depth, (uint32_t)loc);
	hf->st.frames++;
	return true;
}

/* A word of the snapshot, or of the live stack above it. */
static bool stack_word(const struct kp_unwind_input *in, const struct kp_unwind_rtframe *f,
		       uint64_t addr, uint64_t *v)
{
	if (addr < f->stack_start)
		return false;
	if (addr - f->stack_start + 8 <= in->stack_len) {
		memcpy(v, in->stack + (addr - f->stack_start), 8);
		return true;
	}
	return in->more && in->more(in->more_arg, addr, v, 8) == 8;
}

bool kp_hsframes_is_jvm(struct kp_hsframes *hf, pid_t pid)
{
	return jvm_of(hf, pid) != NULL;
}

ssize_t kp_hsframes_more(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct kp_hsframes *hf = arg;
	uint64_t page = addr & ~(uint64_t)4095;
	size_t i;

	/* one page at a time: a word never straddles two (8-aligned) */
	if (len > 4096 - (addr & 4095))
		return -EINVAL;
	for (i = 0; i < hf->nmore && hf->more_addr[i] != page; i++)
		;
	if (i == hf->nmore) {
		struct iovec local, remote = {(void *)(uintptr_t)page, 4096};

		if (hf->nmore == MORE_PAGES)
			return -ENOSPC;
		if (!hf->more_buf)
			hf->more_buf = kp_xmalloc(MORE_PAGES * sizeof(*hf->more_buf));
		local = (struct iovec){hf->more_buf[i], 4096};
		hf->more_addr[i] = page;
		hf->more_ok[i] = process_vm_readv(hf->more_pid, &local, 1, &remote, 1, 0) == 4096;
		hf->nmore++;
	}
	if (!hf->more_ok[i])
		return -EFAULT;
	memcpy(buf, hf->more_buf[i] + (addr & 4095), len);
	return (ssize_t)len;
}

static bool is_code(struct kp_hsframes *hf, pid_t pid, uint64_t addr)
{
	struct kp_mapping *m = kp_proctab_find_map(hf->s->procs, pid, addr);

	return m && m->kind != KP_MAPPING_OTHER;
}

/* A frame of size bytes (return address at sp + size - 8, the caller's
 * frame pointer below it); a leaf before its frame is set up returns
 * from sp (or from above the frame pointer it pushed). */
static enum kp_unwind_rtstep step_sized(struct kp_hsframes *hf, const struct kp_unwind_input *in,
					const struct kp_unwind_rtframe *f, uint32_t size,
					bool prologue, struct kp_unwind_rtframe *caller)
{
	uint64_t w0, w1;

	caller->bp = f->bp;
	if (prologue && f->exact) {
		if (!stack_word(in, f, f->sp, &w0) || !stack_word(in, f, f->sp + 8, &w1))
			return KP_UNWIND_RT_BEYOND;
		if (is_code(hf, in->pid, w0)) {
			caller->ip = w0;
			caller->sp = f->sp + 8;
		} else {
			caller->ip = w1;
			caller->sp = f->sp + 16;
			caller->bp = w0;
		}
		return KP_UNWIND_RT_STEP;
	}
	if (size < 16)
		return KP_UNWIND_RT_BAD;
	caller->sp = f->sp + size;
	if (!stack_word(in, f, caller->sp - 8, &caller->ip) ||
	    !stack_word(in, f, caller->sp - 16, &caller->bp))
		return KP_UNWIND_RT_BEYOND;
	return KP_UNWIND_RT_STEP;
}

/* An interpreted frame: its Method and its caller from its fp. */
static enum kp_unwind_rtstep step_interpreted(struct kp_hsframes *hf, struct jvm *j,
					      const struct kp_unwind_input *in,
					      const struct kp_unwind_rtframe *f,
					      struct kp_unwind_rtframe *caller)
{
	uint64_t fp = f->bp, method, sender;
	const char *why;

	if (fp < f->sp || (fp & 7))
		return bad(hf, f->depth, "an interpreted frame's frame pointer is below its stack");
	if (!stack_word(in, f, fp + 8 * (int64_t)kp_hotspot_interp_method_slot(j->h), &method) ||
	    !stack_word(in, f, fp + 8 * (int64_t)kp_hotspot_interp_sender_sp_slot(j->h), &sender) ||
	    !stack_word(in, f, fp, &caller->bp) || !stack_word(in, f, fp + 8, &caller->ip))
		return KP_UNWIND_RT_BEYOND;
	if (!name_method(hf, j, f->depth, method, false, &why))
		return bad(hf, f->depth, why);
	/* the sender's sp is where its frame ends (a compiled caller's
	 * frame size counts from it); an interpreted caller's is above fp */
	caller->sp = sender > fp ? sender : fp + 16;
	return KP_UNWIND_RT_STEP;
}

enum kp_unwind_rtstep kp_hsframes_step(void *arg, const struct kp_unwind_input *in,
				       const struct kp_unwind_rtframe *f,
				       struct kp_unwind_rtframe *caller)
{
	struct kp_hsframes *hf = arg;
	struct jvm *j = jvm_of(hf, in->pid);
	const struct kp_hotspot_frame *fr;
	const char *why = NULL;
	uint64_t loc;

	if (!j)
		return KP_UNWIND_RT_NONE;
	fr = kp_hotspot_frame_at(j->h, f->ip, f->exact);
	/* the reader starts over when its cache is full: the blob names'
	 * strings it held went with it */
	if (kp_hotspot_generation(j->h) != j->generation) {
		kp_u64map_fini(&j->blobs);
		kp_u64map_init(&j->blobs);
		j->generation = kp_hotspot_generation(j->h);
	}
	switch (fr->kind) {
	case KP_HSF_NONE:
		return KP_UNWIND_RT_NONE;
	case KP_HSF_BAD:
		return bad(hf, f->depth, fr->why);
	case KP_HSF_INTERPRETED:
		return step_interpreted(hf, j, in, f, caller);
	case KP_HSF_COMPILED:
		for (size_t i = 0; i < fr->nscopes; i++)
			if (!name_method(hf, j, f->depth, fr->methods[i], i + 1 < fr->nscopes,
					 &why))
				return bad(hf, f->depth, why);
		return step_sized(hf, in, f, fr->frame_size, fr->in_prologue, caller);
	default:
		/* a stub: named as the perf map names it, stepped by its size
		 * when it has one, else by its frame pointer */
		if (!kp_u64map_get(&j->blobs, (uint64_t)(uintptr_t)fr->blob, &loc)) {
			loc = kp_profile_named_location(hf->s->prof, fr->blob, strlen(fr->blob),
							KP_FRAME_JIT);
			kp_u64map_put(&j->blobs, (uint64_t)(uintptr_t)fr->blob, loc);
		}
		add_name(hf, f->depth, (uint32_t)loc);
		if (!fr->frame_size)
			return KP_UNWIND_RT_NONE;
		return step_sized(hf, in, f, fr->frame_size, fr->in_prologue, caller);
	}
}

const uint32_t *kp_hsframes_names(struct kp_hsframes *hf, size_t depth, size_t *n)
{
	*n = depth < KP_SESSION_MAX_FRAMES ? hf->nnames[depth] : 0;
	return *n ? hf->names[depth] : NULL;
}

void kp_hsframes_reset(struct kp_hsframes *hf, pid_t pid)
{
	hf->more_pid = pid;
	hf->nmore = 0;
	for (size_t i = 0; i < hf->ntouched; i++)
		hf->nnames[hf->touched[i]] = 0;
	hf->ntouched = 0;
}

bool kp_hsframes_any_jvm(const struct kp_hsframes *hf)
{
	return hf && kp_u64map_count(&hf->jvms) > 0;
}

void kp_hsframes_stats(const struct kp_hsframes *hf, struct kp_hsframes_stats *st)
{
	size_t pos = 0;
	uint64_t k, v;

	*st = hf->st;
	while (kp_u64map_next(&hf->jvms, &pos, &k, &v)) {
		struct jvm *j = (struct jvm *)(uintptr_t)v;
		struct kp_hotspot_stats hs;

		if (j->h) {
			kp_hotspot_stats(j->h, &hs);
			st->reads += hs.reads;
		}
	}
}
