// SPDX-License-Identifier: MIT
/*
 * Host facts for results.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "base/sysinfo.h"

/* Copy the value of a "key<tabs>: value" line of /proc/cpuinfo, trimmed. */
static bool cpuinfo_value(const char *line, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	const char *v;
	size_t n;

	if (strncmp(line, key, klen) != 0)
		return false;
	v = line + klen;
	while (*v == ' ' || *v == '\t')
		v++;
	if (*v != ':')
		return false;
	v++;
	while (isspace((unsigned char)*v))
		v++;
	n = strlen(v);
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (!n)
		return false;
	snprintf(out, len, "%.*s", (int)n, v);
	return true;
}

static void cpu_model(char *out, size_t len, const struct utsname *u)
{
	/* x86 names the model; arm64 kernels often do not, so fall back to what they offer. */
	static const char *const keys[] = {"model name", "Hardware", "cpu model", "cpu"};
	char line[512], found[sizeof(keys) / sizeof(keys[0])][128];
	size_t i;
	FILE *f;

	memset(found, 0, sizeof(found));
	f = fopen("/proc/cpuinfo", "re");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
				if (!found[i][0])
					cpuinfo_value(line, keys[i], found[i], sizeof(found[i]));
			if (found[0][0])
				break;
		}
		fclose(f);
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (found[i][0]) {
			snprintf(out, len, "%s", found[i]);
			return;
		}
	}
	snprintf(out, len, "%s", u ? u->machine : "");
}

void sysinfo_host(struct llmio_result *r)
{
	struct utsname u;
	bool have_uname = uname(&u) == 0;

	/* gethostname does not promise a terminator when the name is truncated. */
	if (gethostname(r->hostname, sizeof(r->hostname) - 1) != 0)
		r->hostname[0] = '\0';
	r->hostname[sizeof(r->hostname) - 1] = '\0';
	snprintf(r->kernel, sizeof(r->kernel), "%s", have_uname ? u.release : "");
	cpu_model(r->cpu_model, sizeof(r->cpu_model), have_uname ? &u : NULL);
}

unsigned sysinfo_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

int sysinfo_proc_io(uint64_t *read_bytes, uint64_t *write_bytes)
{
	char line[128];
	unsigned found = 0;
	FILE *f = fopen("/proc/self/io", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "read_bytes: %" SCNu64, read_bytes) == 1)
			found |= 1;
		else if (sscanf(line, "write_bytes: %" SCNu64, write_bytes) == 1)
			found |= 2;
	}
	fclose(f);
	return found == 3 ? 0 : -ENOTSUP;
}
