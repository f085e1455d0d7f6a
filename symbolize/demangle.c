/* Demangling through libbfd (bfd_demangle = libiberty's cplus_demangle:
 * Rust legacy is tried before C++ in its auto mode, Rust v0 is "_R", D must
 * be asked for by style). */
#include "symbolize/demangle.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* bfd.h refuses to be included without these (config.h guard). */
#define PACKAGE		"kprof"
#define PACKAGE_VERSION "0"
#include <bfd.h>

/* From libiberty's demangle.h, which binutils-dev does not install. */
#define KP_DMGL_PARAMS	 (1 << 0)
#define KP_DMGL_ANSI	 (1 << 1)
#define KP_DMGL_RET_DROP (1 << 6)
#define KP_DMGL_AUTO	 (1 << 8)
#define KP_DMGL_DLANG	 (1 << 16)

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Operator tokens that contain brackets and must not count as nesting. */
static const char *const op_tokens[] = {"()", "[]", "<<=", ">>=", "<=>", "->*", "<<",
					">>", "<=", ">=",  "->",  "<",	 ">"};

/* Qualifiers that may follow a parameter list. */
static const char *const quals[] = {" const", " volatile", " &&",
				    " &",     " noexcept", " transaction_safe"};

/* The end of the operator name at name[i] ("operator" and, when one
 * follows, its bracket token, which must not count as nesting). */
static size_t skip_operator(const char *name, size_t i)
{
	size_t j = i + 8;

	for (size_t k = 0; k < sizeof(op_tokens) / sizeof(op_tokens[0]); k++) {
		if (starts(name + j, op_tokens[k])) {
			j += strlen(op_tokens[k]);
			break;
		}
	}
	return j;
}

/* The end of the top-level parameter list at name[i] ('('), with the
 * qualifiers that follow it, into *end; false when it is unbalanced (not
 * something we understand). */
static bool skip_params(const char *name, size_t len, size_t i, size_t *end)
{
	size_t depth = 0, j = i;

	for (; j < len; j++) {
		if (name[j] == '(')
			depth++;
		else if (name[j] == ')' && --depth == 0)
			break;
	}
	if (j >= len)
		return false;
	i = j + 1;
	for (bool again = true; again;) {
		again = false;
		for (size_t k = 0; k < sizeof(quals) / sizeof(quals[0]); k++) {
			size_t ql = strlen(quals[k]);

			if (starts(name + i, quals[k]) && !is_ident(name[i + ql])) {
				i += ql;
				again = true;
			}
		}
	}
	*end = i;
	return true;
}

/* Brackets kept open at once (deeper: the name is left whole). */
#define NEST_MAX 256

/* Follows the brackets that are kept (template arguments, nested
 * parentheses) on stack[0..*sp) of NEST_MAX; false when they nest too
 * deep. */
static bool track_nesting(char *stack, size_t *sp, char c)
{
	switch (c) {
	case '(':
	case '<':
	case '{':
	case '[':
		if (*sp == NEST_MAX)
			return false;
		stack[(*sp)++] = c;
		break;
	case '>':
		if (*sp && stack[*sp - 1] == '<')
			(*sp)--;
		break;
	case ')':
	case '}':
	case ']': {
		char open = c == ')' ? '(' : c == '}' ? '{' : '[';
		size_t k = *sp;

		while (k > 0 && stack[k - 1] != open)
			k--;
		if (k > 0)
			*sp = k - 1;
		break;
	}
	default:
		break;
	}
	return true;
}

char *kp_demangle_strip_params(const char *name)
{
	size_t len = strlen(name), o = 0, i = 0, sp = 0;
	char *out = kp_xmalloc(len + 1);
	char stack[NEST_MAX];

	while (i < len) {
		char c = name[i];

		if (c == 'o' && starts(name + i, "operator") &&
		    (i == 0 || !is_ident(name[i - 1])) && !is_ident(name[i + 8])) {
			size_t j = skip_operator(name, i);

			memcpy(out + o, name + i, j - i);
			o += j - i;
			i = j;
			continue;
		}
		if (c == ' ' && sp == 0 && starts(name + i, " [clone ")) {
			/* ".isra.0", ".constprop.0", ".cold": parts and copies of one
			 * function are one frame, as stackcollapse-perf.pl shows them */
			const char *close = strchr(name + i, ']');

			if (!close)
				goto give_up;
			i = (size_t)(close - name) + 1;
			continue;
		}
		if (c == '(' && sp == 0 && !starts(name + i, "(anonymous namespace)") &&
		    !(i > 0 && name[i - 1] == '!')) {
			/* a top-level parameter list: skip to its matching ')' */
			if (!skip_params(name, len, i, &i))
				goto give_up;
			continue;
		}
		if (!track_nesting(stack, &sp, c))
			goto give_up;
		out[o++] = c;
		i++;
	}
	/* a cut may leave a blank at the end */
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	return out;
give_up:
	memcpy(out, name, len + 1);
	return out;
}

char *kp_demangle(const char *sym, bool full_names)
{
	const char *at = strchr(sym, '@');
	const char *m;
	char *base, *dem, *res;
	int style = KP_DMGL_AUTO;

	/* "memcpy@GLIBC_2.2.5", "_ZNSt...@@GLIBCXX_3.4": the version is noise
	 * in a flame graph and stops the demangler; "@plt" (PLT stubs) stays */
	if (at && at != sym && strcmp(at, "@plt") == 0) {
		char *callee = kp_xstrndup(sym, (size_t)(at - sym));
		char *d = kp_demangle(callee, full_names);

		res = kp_xasprintf("%s@plt", d);
		free(d);
		free(callee);
		return res;
	}
	base = at && at != sym ? kp_xstrndup(sym, (size_t)(at - sym)) : kp_xstrdup(sym);
	m = base;
	while (*m == '.' || *m == '_')
		m++;
	/* "_Z", "__Z", "_R", "_D<digit>" */
	if (m - base < 1 || m - base > 2)
		return base;
	if (m[0] == 'D' && m[1] >= '0' && m[1] <= '9')
		style = KP_DMGL_DLANG;
	else if (m[0] != 'Z' && m[0] != 'R')
		return base;
	dem = bfd_demangle(NULL, base, KP_DMGL_PARAMS | KP_DMGL_ANSI | KP_DMGL_RET_DROP | style);
	if (!dem)
		return base;
	free(base);
	if (full_names) {
		res = kp_xstrdup(dem);
	} else {
		res = kp_demangle_strip_params(dem);
	}
	free(dem);
	return res;
}
