/* Keeps the symbolize library non-empty while modules are added. */
int kp_symbolize_placeholder;
