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
 * 0600 in a 0700 directory, only a regular file owned by the user and
 * writable by nobody else is read, and only while /proc/kallsyms still
 * shows this user addresses (kernel.kptr_restrict can change). */
#ifndef KP_SYMBOLIZE_KSYMCACHE_H
#define KP_SYMBOLIZE_KSYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/kallsyms.h"

struct kp_ksymcache;

/* Reads the boot id and /proc/modules now. dir is the cache directory
 * (created when a copy is first written). Returns NULL when no cache can
 * be used (dir NULL, no boot id); free with kp_ksymcache_free. */
struct kp_ksymcache *kp_ksymcache_new(const char *dir);
void kp_ksymcache_free(struct kp_ksymcache *c);

/* Opens the copy for this boot and module list, or returns -1 when there
 * is none (or it is not to be trusted). The caller closes the fd. */
int kp_ksymcache_open(const struct kp_ksymcache *c);

/* Can the copy answer for addr, as loaded in ks (from the copy)? */
bool kp_ksymcache_stable(const struct kp_ksymcache *c, const struct kp_kallsyms *ks, uint64_t addr);

/* Starts a new copy: returns the fd to write it to, or -1. Finish with
 * kp_ksymcache_commit, which closes it. */
int kp_ksymcache_begin(struct kp_ksymcache *c);
/* ok: the whole file was written and is worth keeping (addresses not
 * hidden); the copy then replaces any older one. Otherwise it is dropped. */
void kp_ksymcache_commit(struct kp_ksymcache *c, int fd, bool ok);

#endif
