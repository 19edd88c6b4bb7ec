/* SPDX-License-Identifier: MIT */
/* The host name ranks are grouped by (dist.h), with or without MPI. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/ranks.h"

const char *ranks_host(void)
{
	static char name[RANKS_HOST_MAX];
	const char *env = getenv("LLMIO_HOSTNAME");

	/* the override lets one machine stand for several hosts (tests, docs/mpi.md) */
	if (env && env[0]) {
		strncpy(name, env, sizeof(name) - 1);
		return name;
	}
	if (gethostname(name, sizeof(name) - 1))
		strncpy(name, "unknown", sizeof(name) - 1);
	return name;
}
