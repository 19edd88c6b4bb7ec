/* SPDX-License-Identifier: MIT */
/*
 * The worker's batched path (src/job/worker.c: fill_batch, reap_counted) against its per-I/O
 * path: the same job must give the same I/O counts, bytes and histogram counts, and write the
 * same blocks with the same data, whichever path ran it.
 *
 * The batched path runs uniform random I/O into one file in one direction, with no rate
 * limit, on an engine with queue_batch (null, io_uring).  A rate far above anything a machine
 * reaches (1 PB/s: it never makes the worker sleep) sends the same job through the per-I/O
 * path; psync, which has no queue_batch, always takes it.  Latency values depend on the
 * clock, so histograms are compared by their counts; bucket-exact equality of the run adds
 * is tests/test_lat_run.c's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/hash.h"
#include "engine/engine.h"
#include "llmio/llmio.h"

#define PER_IO_RATE (1ull << 50) /* bytes/s: only turns the batched path off */

static char dir[4096];

#include "job_run.h"

static void same_op(const struct llmio_op_result *a, const struct llmio_op_result *b)
{
	assert_int_equal(a->ios, b->ios);
	assert_int_equal(a->bytes, b->bytes);
	assert_int_equal(a->clat.count, b->clat.count);
	assert_int_equal(a->lat.count, b->lat.count);
	assert_int_equal(a->slat.count, b->slat.count);
	/* every counted I/O has each of its latencies counted once */
	assert_int_equal(a->clat.count, a->ios);
	assert_int_equal(a->lat.count, a->ios);
	assert_int_equal(a->slat.count, a->ios);
}

/* Run o batched and per I/O; both must count exactly ios I/Os of the op rw asks for. */
static void both_paths(struct llmio_job_opts *o, uint64_t ios)
{
	struct llmio_result *batched, *per_io;
	const bool writes = o->rw == LLMIO_RW_RANDWRITE;

	o->rate = 0;
	batched = run_ok(o);
	o->rate = PER_IO_RATE;
	per_io = run_ok(o);
	o->rate = 0;
	same_op(&batched->read, &per_io->read);
	same_op(&batched->write, &per_io->write);
	assert_int_equal(writes ? batched->write.ios : batched->read.ios, ios);
	assert_int_equal(writes ? batched->read.ios : batched->write.ios, 0);
	assert_int_equal((writes ? batched->write.bytes : batched->read.bytes), ios * o->bs);
	llmio_result_destroy(batched);
	llmio_result_destroy(per_io);
}

static void null_paths(void **state)
{
	struct llmio_job_opts o;

	(void)state;
	base(&o, "null", NULL);
	o.size = 64 << 20;
	o.io_size = 8 << 20;
	o.iodepth = 32;
	o.numjobs = 2;
	o.rw = LLMIO_RW_RANDREAD;
	both_paths(&o, 2 * 2048);
	o.rw = LLMIO_RW_RANDWRITE;
	both_paths(&o, 2 * 2048);
	/* an io_size that is not a multiple of the batch: the last batch is cut short */
	o.io_size = (8 << 20) + 3 * 4096;
	o.numjobs = 1;
	o.rw = LLMIO_RW_RANDREAD;
	both_paths(&o, 2048 + 3);
}

static bool uring_runs(void)
{
	const struct engine_ops *e = engine_find("io_uring");
	char why[256];

	return e && e->probe(why, sizeof(why)) == 0;
}

static void uring_paths(void **state)
{
	struct llmio_job_opts o;

	(void)state;
	if (!uring_runs())
		skip();
	base(&o, "io_uring", "counts");
	o.size = 16 << 20;
	o.io_size = (4 << 20) + 4096;
	o.iodepth = 16;
	o.rw = LLMIO_RW_RANDREAD;
	both_paths(&o, 1025);
	o.rw = LLMIO_RW_RANDWRITE;
	both_paths(&o, 1025);
}

/* A hash of a whole file (each piece fread returns seeded by the last). */
static uint64_t file_hash(const char *path)
{
	uint64_t x = 0;
	unsigned char buf[65536];
	FILE *f = fopen(path, "rb");
	size_t n;

	assert_non_null(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		x = hash64(x, buf, n);
	fclose(f);
	return x;
}

/* Write 256 random blocks of a new 4 MiB file with engine (per I/O when rate) and hash it. */
static uint64_t written(const char *engine, const char *name, uint64_t rate)
{
	struct llmio_job_opts o;
	struct llmio_result *r;
	uint64_t h;

	base(&o, engine, name);
	unlink(o.filename);
	o.rw = LLMIO_RW_RANDWRITE;
	o.size = 4 << 20;
	o.io_size = 1 << 20;
	o.iodepth = 1; /* one write at a time: a block written twice ends with the later one */
	o.rate = rate;
	r = run_ok(&o);
	assert_int_equal(r->write.ios, 256);
	llmio_result_destroy(r);
	h = file_hash(o.filename);
	unlink(o.filename);
	return h;
}

/*
 * The offsets the batched path draws, and the data it stamps into each write, are the
 * per-I/O path's: io_uring batched, io_uring per I/O and psync write the same file.
 */
static void same_blocks(void **state)
{
	uint64_t batched, per_io, psync;

	(void)state;
	if (!uring_runs())
		skip();
	batched = written("io_uring", "blocks_batched", 0);
	per_io = written("io_uring", "blocks_per_io", PER_IO_RATE);
	psync = written("psync", "blocks_psync", 0);
	assert_true(batched == per_io);
	assert_true(batched == psync);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(null_paths),
	        cmocka_unit_test(uring_paths),
	        cmocka_unit_test(same_blocks),
	};
	const char *b = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/batch", b ? b : "/tmp/llmio-test");
	mkdir(b ? b : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
