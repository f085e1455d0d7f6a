/* /proc/PID/status (procfs/status.h): kp_status_parse of the
 * input, given as kp_status_read gives it (a newline in front, a NUL
 * after). The pid found is positive or 0 (unknown). */
#include "fuzz.h"
#include "procfs/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 2);
	struct kp_status st;

	if (!text)
		abort();
	text[0] = '\n';
	if (size)
		memcpy(text + 1, data, size);
	text[size + 1] = '\0';
	FUZZ_CHECK(kp_status_parse(text, &st) == 0);
	FUZZ_CHECK(st.nspid >= 0);
	FUZZ_CHECK(st.tgid >= 0);
	free(text);
	return 0;
}
