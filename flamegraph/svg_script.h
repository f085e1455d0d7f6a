/* The inline JavaScript of kprof's flame-graph SVG (search, zoom, tooltips,
 * URL parameters). It reads its settings from a global kprofConfig object
 * that the writer emits just before it; see docs/flamegraph.md for the
 * element ids and the window.kprof API it exposes. */
#ifndef KP_FLAMEGRAPH_SVG_SCRIPT_H
#define KP_FLAMEGRAPH_SVG_SCRIPT_H

extern const char kp_svg_script[];

#endif
