/* The counts of the frame namers of runtimes, HotSpot's Java frames
 * (hotspot_frames.h) and node's JavaScript frames (node.h): types alone,
 * so that the session's counts (session_types.h) hold them without
 * depending on the modules that fill them. */
#ifndef KP_PROFILER_RUNTIME_STATS_H
#define KP_PROFILER_RUNTIME_STATS_H

#include <stdint.h>

struct kp_hsframes_stats {
	uint64_t jvms, jvms_failed; /* readers made, JVMs that could not be read */
	uint64_t frames, bad;	    /* frames named, frames that did not check out */
	uint64_t reads;		    /* reads of JVMs' memory */
};

struct kp_node_stats {
	uint64_t processes; /* node processes named live */
	uint64_t frames, hits, unknown, reads;
	uint64_t shared;	 /* hits checked by a read made for an earlier sample */
	uint64_t samples;	 /* samples of those whose frames were named */
	uint64_t ns_p50, ns_p99; /* the cost of naming one sample's frames */
	uint64_t ns_total;	 /* of all of them */
};

#endif
