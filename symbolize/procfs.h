/* The symbolizer's side of procfs/root.h: its mappings (struct
 * kp_sym_mapping) opened through kp_root_open_mapping. Internal to
 * symbolize/. */
#ifndef KP_SYMBOLIZE_PROCFS_H
#define KP_SYMBOLIZE_PROCFS_H

#include "procfs/root.h"
#include "symbolize/symbolize.h"

/* kp_root_open_mapping of mapping m (see procfs/root.h). */
static inline int kp_sym_proc_open_mapping(const struct kp_sym_mapping *m, char **debug_path)
{
	const struct kp_root_mapping rm = {
		.pid = m->pid,
		.path = m->path,
		.start = m->start,
		.end = m->end,
		.ino = m->ino,
		.maj = m->maj,
		.min = m->min,
		.memfd = m->path && kp_sym_path_is_memfd(m->path),
	};

	return kp_root_open_mapping(&rm, debug_path);
}

#endif
