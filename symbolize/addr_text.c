/* Code addresses as text (addr_text.h). */
#include "symbolize/addr_text.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/notes.h"
#include "util/textsafe.h"
#include "util/xalloc.h"

void kp_addrs_add(struct kp_addrs *a, uint64_t addr)
{
	kp_xgrow(&a->v, &a->cap, a->n + 1, sizeof(*a->v));
	a->v[a->n++] = addr;
}

bool kp_addr_text_parse(const char *s, uint64_t *out)
{
	char *end;

	s += strspn(s, " \t");
	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 16);
	if (errno || end == s || (end - s == 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return false;
	end += strspn(end, " \t\r\n");
	return *end == '\0';
}

int kp_addr_text_read(FILE *in, const char *name, struct kp_addrs *a, struct kp_diag *d)
{
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, in)) >= 0) {
		uint64_t addr;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if (!kp_addr_text_parse(line, &addr)) {
			line[strcspn(line, "\r\n")] = '\0';
			kp_diag_set(d, -EINVAL, "%s:%zu: not a hex address: \"%.60s\"", name,
				    lineno, line);
			free(line);
			return -EINVAL;
		}
		kp_addrs_add(a, addr);
	}
	free(line);
	return 0;
}

char *kp_addr_text_elf_path(const char *exe, struct kp_diag *d)
{
	char *abs = realpath(exe, NULL);
	int fd = abs ? open(abs, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	struct stat st = {0};
	bool is_elf;

	if (fd < 0) {
		kp_diag_set(d, -errno, "%s: %s", exe, strerror(errno));
		free(abs);
		return NULL;
	}
	is_elf = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && kp_sym_is_elf(fd);
	close(fd);
	if (!is_elf) {
		kp_diag_set(d, -EINVAL, "%s: not an ELF file (%s)", exe,
			    S_ISREG(st.st_mode) ? "of this machine's byte order"
						: "not a regular file");
		free(abs);
		return NULL;
	}
	return abs;
}

void kp_addr_text_write(FILE *out, struct kp_symbolizer *sym, uint32_t obj,
			const struct kp_addrs *a, bool annotate, bool lines)
{
	struct kp_sym_frames f = {0};

	for (size_t i = 0; i < a->n; i++) {
		fprintf(out, "0x%" PRIx64 " ", a->v[i]);
		kp_sym_resolve_vaddr(sym, obj, a->v[i], &f);
		for (size_t k = 0; k < f.n; k++) {
			if (k)
				putc(';', out);
			/* names and paths are the file's: escaped, one line an address */
			kp_textsafe_puts(out, f.frames[k].name);
			if (annotate && f.frames[k].kind == KP_FRAME_INLINE)
				fputs("_[i]", out);
			if (lines) {
				putc(' ', out);
				kp_textsafe_puts(out, f.frames[k].file ? f.frames[k].file : "??");
				fprintf(out, ":%" PRIu32, f.frames[k].line);
			}
		}
		putc('\n', out);
	}
	kp_sym_frames_fini(&f);
}

int kp_addr_text_args(char *const *args, size_t n, struct kp_addrs *a, struct kp_diag *d)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t addr;

		if (!kp_addr_text_parse(args[i], &addr))
			return kp_diag_set(d, -EINVAL, "not a hex address: \"%.60s\"", args[i]);
		kp_addrs_add(a, addr);
	}
	return 0;
}

void kp_addr_text_symbolize(FILE *out, const char *path, const struct kp_sym_options *opts,
			    const struct kp_addrs *a, bool annotate, bool lines,
			    struct kp_notes *notes)
{
	struct kp_symbolizer *sym = kp_sym_new(opts);
	struct kp_mapping m = {.path = path};
	const char *const *said;
	size_t n;

	kp_addr_text_write(out, sym, kp_sym_object_get(sym, &m), a, annotate, lines);
	said = kp_sym_notes(sym, &n);
	for (size_t i = 0; i < n; i++)
		kp_notes_add(notes, "%s", said[i]);
	kp_sym_free(sym);
}
