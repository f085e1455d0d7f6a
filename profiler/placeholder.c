/* Keeps the profiler library non-empty while modules are added. */
int kp_profiler_placeholder;
