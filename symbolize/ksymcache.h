/* kp_ksymcache: a copy of /proc/kallsyms kept for the running boot, so the
 * kernel formats its 100k+ lines once per boot instead of once per run
 * (that formatting, in the read(2) calls, was the largest part of a short
 * kprof run). Internal to symbolize/.
 *
 * The copy is named DIR/kallsyms-BOOT_ID-MODULES_HASH: a reboot (new
 * addresses, KASLR) or a module loaded or unloaded (its lines and
 * addresses in /proc/modules) give another name, and the old copies are
 * removed when a new one is written. Code that comes and goes without
 * changing either (BPF programs, ftrace and kprobe trampolines) is not
 * trusted to the copy: only addresses in the core kernel's text or inside
 * a listed module are answered from it, anything else rereads the file.
 * The copy holds kernel addresses (a KASLR secret), so it is made mode
 * 0600 in kprof's private directory (util/cachefile.h has the rules), only
 * a regular file owned by the user and writable by nobody else is read,
 * and only while /proc/kallsyms still shows this user addresses
 * (kernel.kptr_restrict can change).
 *
 * The file is one header line, then the bytes of /proc/kallsyms as read:
 *   "kprof-kallsyms 1 SIZE XXH3\n"
 * (the format's version, then the size of what follows and its checksum,
 * util/checksum.h, as 16 lowercase hex digits each). The copy is streamed
 * through the parser and never held whole, so its checksum is computed as
 * it is read and the table made of it is trusted only at the end, when the
 * size and the checksum match; a damaged copy's table is thrown away
 * before any lookup, /proc/kallsyms is read instead and the copy written
 * anew. */
#ifndef KP_SYMBOLIZE_KSYMCACHE_H
#define KP_SYMBOLIZE_KSYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/kallsyms.h"
#include "util/cachefile.h"

struct kp_ksymcache;

/* Reads the boot id and /proc/modules now. dir is kprof's cache directory
 * (made when a copy is first written; owned by the caller, outlives c).
 * Returns NULL when no cache can be used (dir NULL, no boot id); free with
 * kp_ksymcache_free. */
struct kp_ksymcache *kp_ksymcache_new(struct kp_cachedir *dir);
void kp_ksymcache_free(struct kp_ksymcache *c);

/* Opens the copy for this boot and module list and reads its header: on 0,
 * opts is set to stream the rest of it through kp_kallsyms_load_opts (fd
 * and tap), after which kp_ksymcache_read_done tells whether it may be
 * used. Otherwise -ENOENT (none, not trusted, or addresses hidden now),
 * -ESTALE (another format: an older kprof's) or -EBADMSG (damaged). */
int kp_ksymcache_open(struct kp_ksymcache *c, struct kp_kallsyms_opts *opts);
/* Closes the copy opened above: 0 when all of it was read and matched its
 * size and checksum, else -EBADMSG (what was made of it is not to be used). */
int kp_ksymcache_read_done(struct kp_ksymcache *c);
/* The copy's name in the directory, for messages (owned by c). */
const char *kp_ksymcache_name(const struct kp_ksymcache *c);

/* Can the copy answer for addr, as loaded in ks (from the copy)? */
bool kp_ksymcache_stable(const struct kp_ksymcache *c, const struct kp_kallsyms *ks, uint64_t addr);

/* Starts a new copy: sets opts's tap so that every byte the parser reads
 * goes into it; false (opts untouched) when none can be written. Finish
 * with kp_ksymcache_commit. */
bool kp_ksymcache_begin(struct kp_ksymcache *c, struct kp_kallsyms_opts *opts);
/* ok: the whole file was read and is worth keeping (addresses not
 * hidden); the copy, when all of it was written, then replaces any older
 * one. Otherwise it is dropped. */
void kp_ksymcache_commit(struct kp_ksymcache *c, bool ok);

#endif
