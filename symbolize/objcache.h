/* kp_objcache: the binary objects seen in a run, one per distinct file:
 * the same build-id is one object whatever the path or process; files
 * without one are told apart by device, inode and path. Each object keeps
 * the file open from the moment it is registered. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_OBJCACHE_H
#define KP_SYMBOLIZE_OBJCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "procfs/mapping.h"
#include "util/notes.h"

struct kp_objcache;
struct kp_elf_object;

struct kp_objcache *kp_objcache_new(struct kp_notes *notes);
void kp_objcache_free(struct kp_objcache *oc);

/* Returns the object id (>= 1) for the mapping, registering the file on
 * first sight. */
uint32_t kp_objcache_get(struct kp_objcache *oc, const struct kp_mapping *m);
/* For a memfd's mapping (kp_sym_memfd_get): the object id when the file
 * behind it is ELF (or out of reach with a build-id), else 0 and nothing
 * registered. */
uint32_t kp_objcache_get_memfd(struct kp_objcache *oc, const struct kp_mapping *m);
/* The ELF object of id, with its file, or without one when it could not
 * be opened (then only the build's saved index can name it); NULL when
 * id is not an object or was released. Owned by the cache. */
struct kp_elf_object *kp_objcache_elf(struct kp_objcache *oc, uint32_t id);
/* The path the object was first seen under, or NULL for a bad id. */
const char *kp_objcache_path(const struct kp_objcache *oc, uint32_t id);
/* The object's build-id (*len bytes, 0 when unknown), or NULL for a bad
 * id. Owned by oc. */
const uint8_t *kp_objcache_build_id(const struct kp_objcache *oc, uint32_t id, size_t *len);
/* The file descriptor object id holds while its file has not been read
 * for symbols yet (during the recording), or -1 (kp_sym_object_fd). Owned
 * by the cache; do not close. */
int kp_objcache_fd(struct kp_objcache *oc, uint32_t id);
/* Closes object id's file and frees its symbol and DWARF indexes; it then
 * resolves as if the file could not be opened. */
void kp_objcache_release(struct kp_objcache *oc, uint32_t id);

/* A continuous recording's objects (kprof --every): kp_objcache_touch
 * marks object id used in the current window (kp_objcache_get does too);
 * kp_objcache_release_idle, between windows, releases every object not
 * used in the last `idle` windows and starts the next window. It returns
 * their number and their ids in *out (the caller frees it): their
 * mappings must ask kp_objcache_get again, which opens a released
 * object's file anew from the mapping (the same build only). */
void kp_objcache_touch(struct kp_objcache *oc, uint32_t id);
/* How many objects are held (not released). */
unsigned kp_objcache_held(const struct kp_objcache *oc);
size_t kp_objcache_release_idle(struct kp_objcache *oc, uint32_t idle, uint32_t **out);

#endif
