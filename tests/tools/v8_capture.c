/* v8_capture PID OUT: a fixture for unit/test_v8 from a running node.
 *
 * Stops the process's main thread a moment at a time (ptrace, this tool
 * only: kprof never stops a process) until its stack holds at least
 * three JavaScript frames kp_v8_name_frames names, then writes OUT:
 *   meta NAME VALUE     the V8 metadata kprof took from /proc/PID/exe
 *   regs SP FP          the stopped thread's stack and frame pointers
 *   frame IP CODE       each frame, leaf first (CODE: enum kp_v8_code)
 *   stack OFFSET HEX    the stack copy from SP, 64 bytes a line
 *   mem ADDR HEX        every read of the process the naming made
 *   name INDEX TEXT     the names it gave (frames not named: none)
 *   inline INDEX TEXT   the functions inlined into frame INDEX, outermost first
 * Run as root (or the process's user with ptrace allowed):
 *   cp tests/workloads/js/service.js /tmp/v8fix/ && node /tmp/v8fix/service.js 30 & sleep 2
 *   build-test/tests/v8_capture $! tests/fixtures/v8/service.capture */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtimes/v8.h"
#include "runtimes/v8meta.h"

#define STACK_COPY 16384
#define MAX_FR	   64
#define MAX_READS  4096

static pid_t pid;
static struct rec {
	uint64_t addr;
	size_t len;
	unsigned char *bytes;
} recs[MAX_READS];
static size_t nrecs;

static bool rec_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};

	(void)arg;
	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)len)
		return false;
	if (nrecs < MAX_READS) {
		recs[nrecs].addr = addr;
		recs[nrecs].len = len;
		recs[nrecs].bytes = malloc(len);
		memcpy(recs[nrecs++].bytes, buf, len);
	}
	return true;
}

/* What code addr is: anonymous executable memory, the builtins of the
 * executable, or other. */
static uint8_t code_of(uint64_t addr, const struct kp_v8meta *m)
{
	char path[64], line[512];
	FILE *f;
	uint8_t code = KP_V8_NOT_JS;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return code;
	while (fgets(line, sizeof(line), f)) {
		uint64_t lo, hi, off;
		char perms[8], file[256] = "";

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %255s", &lo, &hi,
			   perms, &off, file) < 4 ||
		    addr < lo || addr >= hi || perms[2] != 'x')
			continue;
		if (!file[0])
			code = KP_V8_JIT;
		else if (file[0] == '/' && addr - lo + off >= m->builtins_lo &&
			 addr - lo + off < m->builtins_hi)
			code = KP_V8_BUILTIN;
		break;
	}
	fclose(f);
	return code;
}

static void hex(FILE *out, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x", b[i]);
}

int main(int argc, char **argv)
{
	struct kp_v8meta m;
	char why[160], path[64];
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: v8_capture PID OUT\n");
		return 2;
	}
	pid = (pid_t)atoi(argv[1]);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((fd = open(path, O_RDONLY)) < 0 || kp_v8meta_read(fd, &m, why, sizeof(why)) < 0) {
		fprintf(stderr, "v8_capture: no metadata: %s\n", fd < 0 ? strerror(errno) : why);
		return 1;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) {
		perror("v8_capture: ptrace");
		return 1;
	}
	for (int attempt = 0; attempt < 200; attempt++) {
		struct user_regs_struct regs;
		static unsigned char stack[STACK_COPY];
		uint64_t ips[MAX_FR], fp;
		uint8_t code[MAX_FR];
		const char *names[MAX_FR];
		size_t n = 0, named = 0;
		struct iovec l = {stack, sizeof(stack)}, r;
		ssize_t got;
		int st;

		usleep(20000 + (unsigned)(attempt * 977 % 20000));
		if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 || waitpid(pid, &st, __WALL) < 0)
			return 1;
		ptrace(PTRACE_GETREGS, pid, 0, &regs);
		r = (struct iovec){(void *)(uintptr_t)regs.rsp, sizeof(stack)};
		got = process_vm_readv(pid, &l, 1, &r, 1, 0);
		ips[n++] = regs.rip;
		for (fp = regs.rbp;
		     n < MAX_FR && fp >= regs.rsp && fp + 16 <= regs.rsp + (uint64_t)got;) {
			uint64_t next, ret;

			memcpy(&next, stack + (fp - regs.rsp), 8);
			memcpy(&ret, stack + (fp - regs.rsp) + 8, 8);
			if (!ret)
				break;
			ips[n++] = ret;
			if (next <= fp)
				break;
			fp = next;
		}
		for (size_t i = 0; i < n; i++)
			code[i] = code_of(ips[i], &m);
		for (size_t i = 0; i < nrecs; i++)
			free(recs[i].bytes);
		nrecs = 0;
		{
			struct kp_v8 *v = kp_v8_new(&m, &(struct kp_v8_mem){rec_read, NULL, NULL});

			kp_v8_name_frames(v,
					  &(struct kp_v8_stack){regs.rsp, regs.rbp, stack,
								got > 0 ? (size_t)got : 0, ips,
								code, n, 0, 0},
					  names);
			for (size_t i = 0; i < n; i++)
				named += names[i] && strncmp(names[i], "JS:", 3) == 0;
			if (named >= 3) {
				FILE *out = fopen(argv[2], "w");
				const char *mn[128];
				int64_t mv[128];
				size_t nm = kp_v8meta_names(&m, mn, mv, 128);

				fprintf(out, "# v8_capture of a node (tests/tools/v8_capture.c)\n");
				for (size_t i = 0; i < nm; i++)
					fprintf(out, "meta v8dbg_%s %" PRId64 "\n", mn[i], mv[i]);
				fprintf(out, "regs %llx %llx\n", regs.rsp, regs.rbp);
				for (size_t i = 0; i < n; i++)
					fprintf(out, "frame %" PRIx64 " %u\n", ips[i], code[i]);
				for (ssize_t o = 0; o < got; o += 64) {
					fprintf(out, "stack %zx ", (size_t)o);
					hex(out, stack + o, got - o < 64 ? (size_t)(got - o) : 64);
					fputc('\n', out);
				}
				for (size_t i = 0; i < nrecs; i++) {
					fprintf(out, "mem %" PRIx64 " ", recs[i].addr);
					hex(out, recs[i].bytes, recs[i].len);
					fputc('\n', out);
				}
				for (size_t i = 0; i < n; i++) {
					size_t ni;
					const char *const *inl = kp_v8_inlined(v, i, &ni);

					if (names[i])
						fprintf(out, "name %zu %s\n", i, names[i]);
					for (size_t k = 0; k < ni; k++)
						fprintf(out, "inline %zu %s\n", i, inl[k]);
				}
				fclose(out);
				kp_v8_free(v);
				ptrace(PTRACE_DETACH, pid, 0, 0);
				printf("v8_capture: %zu frames, %zu named, %zu reads\n", n, named,
				       nrecs);
				return 0;
			}
			kp_v8_free(v);
		}
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);
	fprintf(stderr, "v8_capture: no stack with 3 named frames in 200 tries\n");
	return 1;
}
