/* SPDX-License-Identifier: MIT */
/*
 * llmio built without Open MPI (dist.h): one process, always.  mpirun can still start several
 * copies, but each runs alone; llmio says so once instead of pretending to cooperate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/ranks.h"

int ranks_init(int *argc, char ***argv, struct llmio_error *e)
{
	static bool warned;

	(void)argc;
	(void)argv;
	(void)e;
	if (getenv("OMPI_COMM_WORLD_SIZE") && !warned) {
		fprintf(stderr, "llmio: started by mpirun but built without MPI: this copy runs "
		                "alone (install libopenmpi-dev and rebuild; docs/mpi.md)\n");
		warned = true;
	}
	return 0;
}

bool ranks_active(void)
{
	return false;
}

unsigned ranks_rank(void)
{
	return 0;
}

unsigned ranks_size(void)
{
	return 1;
}

unsigned ranks_host_ranks(void)
{
	return 1;
}

void ranks_barrier(void)
{
}

double ranks_allreduce(double v, enum ranks_op op)
{
	(void)op;
	return v;
}

int ranks_gather(const void *buf, size_t len, void *all, struct llmio_error *e)
{
	(void)e;
	memcpy(all, buf, len);
	return 0;
}

int ranks_hosts(char *hosts, struct llmio_error *e)
{
	(void)e;
	snprintf(hosts, RANKS_HOST_MAX, "%s", ranks_host());
	return 0;
}

int ranks_fail(int code, const struct llmio_error *e)
{
	(void)e;
	return code;
}

int ranks_end(int code, bool stopped)
{
	(void)stopped;
	return code;
}
