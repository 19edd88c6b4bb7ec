/* SPDX-License-Identifier: MIT */
/*
 * cpuio: no I/O; each "I/O" burns a chunk of CPU and then sleeps, so that a thread uses
 * cpuload % of one CPU (fio's cpuio engine, engines/cpu.c): the compute beside a storage job,
 * or a loaded machine for one.
 *
 * A chunk is cpuchunks microseconds of this thread's own CPU time (CLOCK_THREAD_CPUTIME_ID),
 * where fio spins for that much wall time: on a busy machine a wall-time spin gets less CPU
 * than it asks for, a CPU-time one gets what cpuload says, and the CPU the run reports can be
 * checked against the kernel's counters.  The sleep after it is chunk * (100 - cpuload) /
 * cpuload, in slices that watch the job's stop flag so that a run ends on time.
 *
 * cpumode=noop spins on the clock; cpumode=qsort sorts 256 Ki random 32-bit numbers as fio
 * does (up, down, by byte, down again), round after round, until the chunk's CPU is spent.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "engine/engine.h"
#include "base/error.h"

struct cpuio_opts {
	int cpuload;
	int cpuchunks;
	int cpumode;
	int exit_on_io_done;
};

enum { MODE_NOOP, MODE_QSORT };

#define QSORT_N     (256u << 10) /* 32-bit numbers sorted per round, as fio */
#define SLEEP_SLICE 10000000ull  /* ns: how often a sleep looks at the stop flag */
#define SPIN_LOOPS  20000u       /* noop: some 10-50 us of user time between clock reads */

static const struct llmio_optdesc cpuio_options[] = {
        {
                .name = "cpuload",
                .type = OPTD_INT,
                OPTD_FIELD(struct cpuio_opts, cpuload),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .min = 0,
                .max = 100,
                .help = "percent of one CPU each thread uses (1-100; required)",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "cpuchunks",
                .type = OPTD_INT,
                OPTD_FIELD(struct cpuio_opts, cpuchunks),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "50000",
                .min = 1,
                .max = 10000000,
                .help = "microseconds of CPU one I/O burns before its sleep",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "cpumode",
                .type = OPTD_ENUM,
                OPTD_FIELD(struct cpuio_opts, cpumode),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "noop",
                .help = "how CPU is burnt: noop (a spin) or qsort (sorting, which also "
                        "loads the caches)",
                .choices = "noop|qsort",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "exit_on_io_done",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct cpuio_opts, exit_on_io_done),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "fio's end of a cpuio job when the I/O jobs end: not done (1 is "
                        "refused); give the cpuio job the I/O jobs' runtime",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {.name = NULL},
};

struct cpuio_data {
	struct cpuio_opts o;
	const atomic_int *stop;
	int32_t *sortbuf; /* qsort: QSORT_N numbers */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_up(const void *a, const void *b)
{
	const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

static int cmp_down(const void *a, const void *b)
{
	return cmp_up(b, a);
}

static int cmp_byte(const void *a, const void *b)
{
	return *(const int8_t *)a - *(const int8_t *)b;
}

static void sort_round(int32_t *v)
{
	qsort(v, QSORT_N, sizeof(*v), cmp_up);
	qsort(v, QSORT_N, sizeof(*v), cmp_down);
	qsort(v, QSORT_N * sizeof(*v), 1, cmp_byte);
	qsort(v, QSORT_N, sizeof(*v), cmp_down);
}

static int cpuio_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

static int cpuio_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	const struct cpuio_opts *o = s->opts;
	struct cpuio_data *d;
	/* Marsaglia's multiply-with-carry, seeded as fio's, for the numbers to sort */
	uint32_t w = 521288629u, z = 362436069u;

	if (!o || !o->cpuload)
		return llmio_err(e, -EINVAL,
		                 "engine cpuio needs cpuload=N, the percent of a CPU each thread "
		                 "uses (1-100)");
	if (o->exit_on_io_done)
		return llmio_err(e, -EINVAL,
		                 "engine cpuio: exit_on_io_done=1 is not done; give the cpuio job "
		                 "the runtime of the I/O jobs it runs beside");
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->o = *o;
	d->stop = s->stop;
	if (o->cpumode == MODE_QSORT) {
		d->sortbuf = malloc(QSORT_N * sizeof(*d->sortbuf));
		if (!d->sortbuf) {
			free(d);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < QSORT_N; i++) {
			z = 36969 * (z & 65535) + (z >> 16);
			w = 18000 * (w & 65535) + (w >> 16);
			d->sortbuf[i] = (int32_t)((z << 16) + w);
		}
	}
	snprintf(ctx->notes, sizeof(ctx->notes),
	         "cpuio: %d %% of a CPU per thread in chunks of %d us of thread CPU (%s)",
	         o->cpuload, o->cpuchunks, o->cpumode == MODE_QSORT ? "qsort" : "noop");
	ctx->priv = d;
	return 0;
}

static int cpuio_queue(struct engine_ctx *ctx, struct io_req *io)
{
	const struct cpuio_data *d = ctx->priv;
	const uint64_t t0 = thread_cpu_ns(), chunk = (uint64_t)d->o.cpuchunks * 1000;
	uint64_t used, rest;

	do {
		if (d->sortbuf)
			sort_round(d->sortbuf);
		else /* the thread's clock is a system call: spin in user space between reads */
			for (volatile unsigned k = 0; k < SPIN_LOOPS; k = k + 1)
				;
		used = thread_cpu_ns() - t0;
	} while (used < chunk);
	rest = used * (uint64_t)(100 - d->o.cpuload) / (uint64_t)d->o.cpuload;
	while (rest && !(d->stop && atomic_load_explicit(d->stop, memory_order_relaxed))) {
		const uint64_t ns = rest < SLEEP_SLICE ? rest : SLEEP_SLICE;
		struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
		                      .tv_nsec = (long)(ns % 1000000000ull)};

		nanosleep(&ts, NULL);
		rest -= ns;
	}
	io->res = io->len;
	return ENGINE_Q_COMPLETED;
}

static void cpuio_cleanup(struct engine_ctx *ctx)
{
	struct cpuio_data *d = ctx->priv;

	if (!d)
		return;
	free(d->sortbuf);
	free(d);
	ctx->priv = NULL;
}

const struct engine_ops engine_cpuio = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "cpuio",
        .summary = "no I/O: each thread burns cpuload % of a CPU (noop spin or qsort)",
        .caps = ENGINE_CAP_NO_IO,
        .opts = cpuio_options,
        .opts_size = sizeof(struct cpuio_opts),
        .probe = cpuio_probe,
        .init = cpuio_init,
        .queue = cpuio_queue,
        .cleanup = cpuio_cleanup,
};
