/* CPU list text (see cpulist.h). */
#include "util/cpulist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/xalloc.h"

int kp_cpulist_parse(const char *str, int **cpus)
{
	int *v = NULL;
	size_t n = 0, cap = 0;
	const char *p = str;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a > 65535)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b > 65535)
				goto bad;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			kp_xgrow(&v, &cap, n + 1, sizeof(*v));
			v[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto bad;
		else if (*p == '\n')
			break;
	}
	if (!n)
		goto bad;
	*cpus = v;
	return (int)n;
bad:
	free(v);
	return -EINVAL;
}

void kp_cpulist_format(const int *v, int n, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && len + 24 < size; i++) {
		int j = i;

		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		if (j > i)
			len += (size_t)snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "",
						v[i], v[j]);
		else
			len += (size_t)snprintf(buf + len, size - len, "%s%d", len ? "," : "",
						v[i]);
		i = j;
	}
}
