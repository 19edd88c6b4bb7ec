/* SPDX-License-Identifier: MIT */
/*
 * Tensor lifetimes (src/migrate/lifetime.c, lifetime_g10.c) as `--workload migrate --lifetimes
 * FILE` reads them: an llmio-lifetimes file or a G10 operator graph (lt_read_file() tells them
 * apart), with the recipe's defaults for a G10 graph (batch 256, 312 TFLOPS, FP32).  A step
 * that loads goes through its inactive intervals and, when it is small enough for the
 * planners to be quick (kernels, tensors and uses bounded below), through every planner
 * policy (src/migrate/plan.c, policy_*.c): plan, check, simulate, write, at a fast-tier budget
 * of a quarter, a half, three quarters or all of the step's peak (from a hash of the input).
 * An llmio-lifetimes file that loads must read back the same from what lt_write() writes.
 */
#include "fuzz_common.h"

#include "migrate/plan.h"

#define MAX_KERNELS 1024
#define MAX_TENSORS 4096
#define MAX_USES    16384

static FILE *null_file(void)
{
	static FILE *null;

	if (!null && !(null = fopen("/dev/null", "we")))
		abort();
	return null;
}

/* The step's peak fast-tier bytes with unlimited memory: the most alive at any kernel. */
static uint64_t ideal_peak(const struct lt_step *s)
{
	uint64_t peak = 0;

	for (uint32_t k = 0; k < s->nkernels; k++) {
		uint64_t sum = 0;

		for (uint32_t i = 0; i < s->ntensors; i++)
			if (lt_alive(s, &s->tensors[i], k))
				sum += s->tensors[i].bytes;
		peak = sum > peak ? sum : peak;
	}
	return peak;
}

/* What lt_write() writes reads back as the same step. */
static void round_trip(const struct lt_step *s)
{
	struct llmio_error err = {0};
	struct lt_step again;
	int fd = memfd_create("llmio-fuzz-again", MFD_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;

	if (!f)
		abort();
	lt_init(&again);
	if (lt_write(s, f) || fflush(f) || fseek(f, 0, SEEK_SET))
		abort();
	if (lt_read_lines(&again, f, "again", &err) || again.nkernels != s->nkernels ||
	    again.ntensors != s->ntensors || again.nuses != s->nuses)
		abort(); /* lt_write() wrote what lt_read_lines() does not read back */
	for (uint32_t k = 0; k < s->nkernels; k++)
		if (again.kernels[k].dur_ns != s->kernels[k].dur_ns ||
		    strcmp(again.kernels[k].name, s->kernels[k].name))
			abort();
	for (uint32_t i = 0; i < s->ntensors; i++)
		if (again.tensors[i].bytes != s->tensors[i].bytes ||
		    again.tensors[i].created != s->tensors[i].created ||
		    again.tensors[i].nuses != s->tensors[i].nuses)
			abort();
	lt_release(&again);
	fclose(f);
}

static void plan_all(const struct lt_step *s, uint64_t budget)
{
	struct plan_cfg c;

	plan_cfg_init(&c, budget);
	for (size_t i = 0; i < plan_policy_count(); i++) {
		struct llmio_error err = {0};
		struct plan_sim sim;
		struct plan p;

		if (!plan_build(&p, plan_policy_at(i), s, &c, &err) &&
		    !plan_simulate(&p, s, &c, &sim, &err))
			plan_write(&p, s, null_file());
		plan_release(&p);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct lt_g10_opts g = {.batch = 256, .tflops = 312, .total_s = 0, .elem_bytes = 4};
	struct llmio_error err = {0};
	struct lt_interval *iv = NULL;
	struct lt_step s;
	uint32_t hash = 2166136261u;
	char path[64];
	size_t niv;
	int fd;

	for (size_t i = 0; i < size; i++)
		hash = (hash ^ data[i]) * 16777619u;
	fd = fuzz_file(data, size, path, sizeof(path));
	lt_init(&s);
	if (lt_read_file(&s, path, &g, &err))
		goto out;
	if (lt_intervals(&s, &iv, &niv, &err))
		goto out;
	free(iv);
	if (size && !(data[0] >= '0' && data[0] <= '9'))
		round_trip(&s);
	if (s.nkernels <= MAX_KERNELS && s.ntensors <= MAX_TENSORS && s.nuses <= MAX_USES) {
		uint64_t peak = ideal_peak(&s);
		uint64_t budget = peak / 4 * ((hash & 3) + 1);

		plan_all(&s, budget ? budget : 1);
	}
out:
	lt_release(&s);
	fuzz_file_close(fd);
	return 0;
}
