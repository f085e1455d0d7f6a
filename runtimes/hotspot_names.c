/* The names of a HotSpot JVM's Methods (hotspot.h): Method ->
 * ConstMethod (its name and signature indexes) -> ConstantPool (the
 * Symbols at those indexes, and the holder Klass, whose name is a Symbol
 * too), written as the JVM's perf map writes them (Method::external_name:
 * "int java.lang.String.indexOf(int, int)"). A Symbol's bytes are
 * modified UTF-8, read with their length capped, and escaped. */
#include <stdio.h>
#include <string.h>

#include "runtimes/hotspotP.h"
#include "util/textsafe.h"

/* Symbols are read up to this length (a class name longer is cut). */
#define MAX_SYMBOL 512
/* A name is at most this long, escapes included. */
#define MAX_METHOD_NAME 2048
/* Names cached before the cache starts over. */
#define MAX_NAMES 65536

static const char *const whys[] = {
	"",
	"its Method does not check out",
	"its ConstMethod does not check out",
	"its ConstantPool does not check out",
	"a Symbol of its name does not check out",
};

/* Reads the Symbol at sym into buf (NUL-terminated, cut at MAX_SYMBOL). */
static bool read_symbol(struct kp_hotspot *h, uint64_t sym, char *buf, size_t *len)
{
	uint16_t n;

	if (!hs_ptr_ok(sym) || !kp_hs_read(h, sym + h->f[F_SYM_LENGTH], &n, 2))
		return false;
	*len = n < MAX_SYMBOL ? n : MAX_SYMBOL;
	if (*len && !kp_hs_read(h, sym + h->f[F_SYM_BODY], buf, *len))
		return false;
	buf[*len] = 0;
	return memchr(buf, 0, *len) == NULL;
}

/* The Symbol at constant pool index idx (a u2 of the ConstMethod). */
static bool cp_symbol(struct kp_hotspot *h, uint64_t cp, int32_t cplen, uint16_t idx, char *buf,
		      size_t *len)
{
	uint64_t sym;

	if (idx == 0 || (cplen > 0 && idx >= cplen))
		return false;
	return kp_hs_u64(h, cp + h->t[T_CONSTANT_POOL] + 8 * (uint64_t)idx, &sym) &&
	       read_symbol(h, sym, buf, len);
}

/* One field type of a signature at s[*i..n) in Java's words ("int",
 * "java.lang.String", "byte[]") appended to out. */
static bool sig_type(const char *s, size_t n, size_t *i, char *out, size_t size, size_t *o)
{
	static const char *const prims[] = {
		['B'] = "byte", ['C'] = "char",	 ['D'] = "double",  ['F'] = "float", ['I'] = "int",
		['J'] = "long", ['S'] = "short", ['Z'] = "boolean", ['V'] = "void",
	};
	size_t dims = 0;
	const char *w = NULL;
	size_t wl = 0;

	while (*i < n && s[*i] == '[' && dims < 255) {
		dims++;
		(*i)++;
	}
	if (*i >= n)
		return false;
	if (s[*i] == 'L') {
		const char *end = memchr(s + *i, ';', n - *i);

		if (!end)
			return false;
		w = s + *i + 1;
		wl = (size_t)(end - w);
		*i = (size_t)(end - s) + 1;
	} else if ((unsigned char)s[*i] < sizeof(prims) / sizeof(prims[0]) &&
		   prims[(unsigned char)s[*i]]) {
		w = prims[(unsigned char)s[*i]];
		wl = strlen(w);
		(*i)++;
	} else {
		return false;
	}
	for (size_t k = 0; k < wl && *o + 1 < size; k++)
		out[(*o)++] = w[k] == '/' ? '.' : w[k];
	for (size_t k = 0; k < dims && *o + 3 < size; k++) {
		memcpy(out + *o, "[]", 2);
		*o += 2;
	}
	out[*o] = 0;
	return true;
}

/* "ret holder.name(params)" from the three Symbols, into out (raw). */
static void format_name(char *holder, size_t hl, const char *name, size_t nl, const char *sig,
			size_t sl, char *out, size_t size)
{
	char ret[MAX_SYMBOL + 64] = "", params[MAX_METHOD_NAME] = "";
	size_t i = 0, o = 0, close;
	const char *paren = sl && sig[0] == '(' ? memchr(sig, ')', sl) : NULL;

	for (size_t k = 0; k < hl; k++)
		if (holder[k] == '/')
			holder[k] = '.';
	if (paren) {
		close = (size_t)(paren - sig);
		i = close + 1;
		if (!sig_type(sig, sl, &i, ret, sizeof(ret), &o))
			ret[0] = 0;
		i = 1;
		o = 0;
		while (i < close && o + 3 < sizeof(params)) {
			if (o) {
				memcpy(params + o, ", ", 3);
				o += 2;
			}
			if (!sig_type(sig, close, &i, params, sizeof(params), &o))
				break;
		}
	}
	/* a name longer than out is cut there */
	if (snprintf(out, size, "%s%s%.*s.%.*s(%s)", ret, ret[0] ? " " : "", (int)hl, holder,
		     (int)nl, name, params) < 0)
		out[0] = 0;
}

/* Reads the name of method into buf; 0, or an index of whys. */
static int read_name(struct kp_hotspot *h, uint64_t method, char *buf, size_t size)
{
	char holder[MAX_SYMBOL + 1], name[MAX_SYMBOL + 1], sig[MAX_SYMBOL + 1];
	size_t hl, nl, sl;
	uint64_t cm, cp, klass, ksym;
	uint16_t ni, si;
	int32_t cplen = 0;

	if (!hs_ptr_ok(method) || !kp_hs_u64(h, method + h->f[F_M_CONST], &cm) || !hs_ptr_ok(cm))
		return 1;
	if (!kp_hs_u64(h, cm + h->f[F_CM_CONSTANTS], &cp) || !hs_ptr_ok(cp) ||
	    !kp_hs_read(h, cm + h->f[F_CM_NAME_IDX], &ni, 2) ||
	    !kp_hs_read(h, cm + h->f[F_CM_SIG_IDX], &si, 2))
		return 2;
	if (!kp_hs_u64(h, cp + h->f[F_CP_HOLDER], &klass) || !hs_ptr_ok(klass) ||
	    (h->have[F_CP_LENGTH] && !kp_hs_read(h, cp + h->f[F_CP_LENGTH], &cplen, 4)) ||
	    (h->have[F_CP_LENGTH] && (cplen <= 0 || cplen > 65536)))
		return 3;
	if (!kp_hs_u64(h, klass + h->f[F_K_NAME], &ksym) || !read_symbol(h, ksym, holder, &hl) ||
	    !cp_symbol(h, cp, cplen, ni, name, &nl) || !cp_symbol(h, cp, cplen, si, sig, &sl))
		return 4;
	format_name(holder, hl, name, nl, sig, sl, buf, size);
	return 0;
}

const char *kp_hotspot_method_name(struct kp_hotspot *h, uint64_t method, const char **why)
{
	char raw[MAX_METHOD_NAME], safe[MAX_METHOD_NAME];
	uint64_t v;
	int r;

	if (kp_u64map_get(&h->method_names, method, &v)) {
		if (v >> 32) {
			*why = whys[v >> 32];
			return NULL;
		}
		return kp_strtab_str(h->strs, (uint32_t)v);
	}
	h->st.methods++;
	if (kp_u64map_count(&h->method_names) >= MAX_NAMES)
		kp_u64map_fini(&h->method_names), kp_u64map_init(&h->method_names);
	r = read_name(h, method, raw, sizeof(raw));
	if (r) {
		kp_u64map_put(&h->method_names, method, (uint64_t)r << 32);
		*why = whys[r];
		return NULL;
	}
	kp_textsafe_copy(safe, sizeof(safe), raw, strlen(raw));
	v = kp_strtab_intern(h->strs, safe, strlen(safe));
	kp_u64map_put(&h->method_names, method, v);
	return kp_strtab_str(h->strs, (uint32_t)v);
}
