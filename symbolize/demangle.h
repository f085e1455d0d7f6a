/* Readable function names: libbfd's demangler (C++, Rust legacy and v0, D)
 * and the parameter-list stripping stackcollapse-perf.pl users expect.
 * Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_DEMANGLE_H
#define KP_SYMBOLIZE_DEMANGLE_H

#include <stdbool.h>

/* Returns the display name of an ELF or DWARF symbol as a new heap string
 * (caller frees): the symbol-version suffix ("@GLIBC_2.2.5") dropped,
 * demangled when it is a mangled name, and, unless full_names, without
 * parameter lists and cv/ref qualifiers (templates, namespaces,
 * "(anonymous namespace)" and lambdas kept, " [clone .cold]" dropped). Names that
 * are not mangled come back unchanged. */
char *kp_demangle(const char *sym, bool full_names);

/* Returns a new heap string (caller frees): the demangled name without its
 * top-level parameter lists ("ns::f(int) const" -> "ns::f",
 * "f(int)::{lambda()#1}::operator()() const" -> "f::{lambda()#1}::operator()").
 * Parentheses inside template arguments, lambdas, "operator()" and
 * "(anonymous namespace)" are kept; " [clone .isra.0]"-style suffixes are
 * dropped so the parts of one function make one frame. */
char *kp_demangle_strip_params(const char *name);

#endif
