/* Keeps the flamegraph library non-empty while modules are added. */
int kp_flamegraph_placeholder;
