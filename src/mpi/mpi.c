/* SPDX-License-Identifier: MIT */
/*
 * The one file that calls MPI (dist.h, docs/mpi.md).  MPI is joined only when mpirun started
 * this process (OMPI_COMM_WORLD_SIZE is set): a plain `llmio run` never initialises MPI, so
 * its path and output are those of a build without it.
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "mpi/ranks.h"

static bool active;
static int my_rank, nranks = 1;
static unsigned host_ranks = 1;

int ranks_init(int *argc, char ***argv, struct llmio_error *e)
{
	char *hosts = NULL;
	int ret, provided;

	if (active || !getenv("OMPI_COMM_WORLD_SIZE"))
		return 0;

	/* recipes run I/O threads, but only the main thread calls MPI */
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return llmio_err(e, -EIO,
		                 "MPI_Init failed: is this llmio started by Open MPI's mpirun?");
	/* a failed MPI call ends the job (the default, said here because the design relies on it)
	 */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	active = true;
	hosts = malloc((size_t)nranks * RANKS_HOST_MAX);
	if (!hosts)
		return llmio_err(e, -ENOMEM, "out of memory");
	ret = ranks_hosts(hosts, e);
	host_ranks = 0;
	for (int i = 0; !ret && i < nranks; i++)
		host_ranks += !strcmp(hosts + (size_t)i * RANKS_HOST_MAX, ranks_host());
	free(hosts);
	return ret;
}

bool ranks_active(void)
{
	return active;
}

unsigned ranks_rank(void)
{
	return (unsigned)my_rank;
}

unsigned ranks_size(void)
{
	return (unsigned)nranks;
}

unsigned ranks_host_ranks(void)
{
	return host_ranks;
}

/*
 * A barrier that naps while it waits: ranks oversubscribed on few cores must not spin on the
 * CPU the ranks still working need.
 */
void ranks_barrier(void)
{
	struct timespec nap = {0, 200000};
	MPI_Request req;
	int done = 0;

	if (!active)
		return;
	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done;
	     MPI_Test(&req, &done, MPI_STATUS_IGNORE))
		nanosleep(&nap, NULL);
}

double ranks_allreduce(double v, enum ranks_op op)
{
	double out = v;

	if (active)
		MPI_Allreduce(&v, &out, 1, MPI_DOUBLE,
		              op == RANKS_MIN   ? MPI_MIN
		              : op == RANKS_MAX ? MPI_MAX
		                                : MPI_SUM,
		              MPI_COMM_WORLD);
	return out;
}

int ranks_gather(const void *buf, size_t len, void *all, struct llmio_error *e)
{
	if (!active) {
		memcpy(all, buf, len);
		return 0;
	}
	if (len > (size_t)__INT_MAX__)
		return llmio_err(e, -E2BIG, "a record of %zu bytes is too large to gather", len);
	if (MPI_Gather(buf, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD) !=
	    MPI_SUCCESS)
		return llmio_err(e, -EIO, "MPI_Gather of the ranks' results failed");
	return 0;
}

int ranks_hosts(char *hosts, struct llmio_error *e)
{
	char mine[RANKS_HOST_MAX] = "";

	snprintf(mine, sizeof(mine), "%s", ranks_host());
	if (!active) {
		memcpy(hosts, mine, sizeof(mine));
		return 0;
	}
	if (MPI_Allgather(mine, RANKS_HOST_MAX, MPI_CHAR, hosts, RANKS_HOST_MAX, MPI_CHAR,
	                  MPI_COMM_WORLD) != MPI_SUCCESS)
		return llmio_err(e, -EIO, "MPI_Allgather of the host names failed");
	return 0;
}

int ranks_fail(int code, const struct llmio_error *e)
{
	if (!active)
		return code;
	fprintf(stderr, "llmio: rank %d on %s: %s\n", my_rank, ranks_host(), llmio_err_msg(e));
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
	return code;
}

int ranks_end(int code, bool stopped)
{
	if (!active)
		return code;
	fflush(stdout);
	fflush(stderr);
	/*
	 * Ctrl-C: mpirun has sent every rank SIGTERM and waits for them to end.  Every rank's
	 * record is gathered and written; ending as the signal would have keeps out of mpirun's
	 * teardown, where an MPI_Abort from each rank can leave mpirun waiting for ever.
	 */
	if (code && stopped)
		_exit(code);
	if (code)
		MPI_Abort(MPI_COMM_WORLD, code);
	else
		MPI_Finalize();
	active = false;
	return code;
}
