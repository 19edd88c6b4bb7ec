/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/cpu.h"
#include "job/irq.h"

unsigned irq_of_disk(const char *disk_dir, unsigned *irqs, unsigned max)
{
	char path[PATH_MAX + 16], real[PATH_MAX];

	snprintf(path, sizeof(path), "%s/device", disk_dir);
	if (!realpath(path, real))
		return 0;
	/* virtio: .../0000:00:02.0/virtio1; NVMe: .../0000:01:00.0/nvme/nvme0: walk up */
	for (int up = 0; up < 4; up++) {
		struct dirent *de;
		unsigned n = 0;
		char *slash;
		DIR *d;

		snprintf(path, sizeof(path), "%s/msi_irqs", real);
		d = opendir(path);
		if (d) {
			while ((de = readdir(d)) && n < max)
				if (isdigit((unsigned char)de->d_name[0]))
					irqs[n++] = (unsigned)strtoul(de->d_name, NULL, 10);
			closedir(d);
			return n;
		}
		slash = strrchr(real, '/');
		if (!slash || slash == real)
			break;
		*slash = '\0';
	}
	return 0;
}

static int is_ours(unsigned long irq, const unsigned *irqs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (irqs[i] == irq)
			return 1;
	return 0;
}

int irq_counts(const unsigned *irqs, unsigned n, uint64_t *per_cpu)
{
	int col_cpu[IRQ_MAX_CPUS];
	unsigned ncols = 0;
	size_t cap = 0;
	char *line = NULL, *p;
	FILE *f = fopen("/proc/interrupts", "re");

	memset(per_cpu, 0, IRQ_MAX_CPUS * sizeof(*per_cpu));
	if (!f)
		return -errno;
	/* header: "           CPU0       CPU1 ...": offline CPUs have no column */
	if (getline(&line, &cap, f) > 0)
		for (p = strstr(line, "CPU"); p && ncols < IRQ_MAX_CPUS; p = strstr(p + 3, "CPU")) {
			long c = strtol(p + 3, NULL, 10);

			col_cpu[ncols++] = c >= 0 && c < IRQ_MAX_CPUS ? (int)c : -1;
		}
	while (getline(&line, &cap, f) > 0) {
		char *end;
		unsigned long irq = strtoul(line, &end, 10);

		if (end == line || *end != ':' || !is_ours(irq, irqs, n))
			continue;
		p = end + 1;
		for (unsigned c = 0; c < ncols; c++) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			if (col_cpu[c] >= 0)
				per_cpu[col_cpu[c]] += v;
			p = end;
		}
	}
	free(line);
	fclose(f);
	return 0;
}

void irq_share(const uint64_t *a, const uint64_t *b, uint64_t *total, char *cpus, size_t len)
{
	cpu_set_t set;

	*total = 0;
	for (unsigned c = 0; c < IRQ_MAX_CPUS; c++)
		*total += b[c] - a[c];
	CPU_ZERO(&set);
	for (unsigned c = 0; c < IRQ_MAX_CPUS && c < CPU_SETSIZE && *total; c++)
		if ((b[c] - a[c]) * 20 >= *total)
			CPU_SET(c, &set);
	cpu_list_format(&set, cpus, len);
}
