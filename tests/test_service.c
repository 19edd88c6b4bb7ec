/* SPDX-License-Identifier: MIT */
/*
 * The page-cache verdict (llmio_service_classify) and the shared-disk and busy-machine flags
 * (llmio_result_judge) on synthetic facts: every branch and threshold of docs/metrics.md,
 * "Page cache or device".  The live witness is checked in tests/cli_witness.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "llmio/result.h"

#define MiB (1024ull * 1024)

static struct llmio_service_facts reads(uint64_t req, uint64_t witness)
{
	struct llmio_service_facts f = {.read_bytes = req, .fstype = "ext4", .device_known = true};

	f.witness.known = true;
	f.witness.read_bytes = witness;
	f.device_read_bytes = witness;
	return f;
}

static void read_thresholds(void **state)
{
	struct llmio_service_facts f;
	char why[192];

	(void)state;
	f = reads(1000 * MiB, 900 * MiB);
	assert_int_equal(llmio_service_classify(&f, why, sizeof(why)), LLMIO_SERVICE_DEVICE);
	assert_non_null(strstr(why, "device read 90.0% of"));
	f = reads(1000 * MiB, 899 * MiB);
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_MIXED);
	f = reads(1000 * MiB, 500 * MiB);
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_MIXED);
	f = reads(1000 * MiB, 499 * MiB);
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_PAGE_CACHE);
	/* the mmap page-cache point of the issue: 0.5 % of 38 GB from the device */
	f = reads(38000 * MiB, 190 * MiB);
	assert_int_equal(llmio_service_classify(&f, why, sizeof(why)), LLMIO_SERVICE_PAGE_CACHE);
	assert_non_null(strstr(why, "device read 0.5% of"));
}

/* The disk counted another program's reads: the witness decides, not the disk. */
static void witness_preferred(void **state)
{
	struct llmio_service_facts f = reads(1000 * MiB, 0);
	char why[192];

	(void)state;
	f.device_read_bytes = 5000 * MiB;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_PAGE_CACHE);
	/* no per-process accounting: the disk's counters, said so */
	f.witness.known = false;
	assert_int_equal(llmio_service_classify(&f, why, sizeof(why)), LLMIO_SERVICE_DEVICE);
	assert_non_null(strstr(why, "disk counters"));
	/* neither: unknown */
	f.device_known = false;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_UNKNOWN);
}

static void direct_memory_and_nothing(void **state)
{
	struct llmio_service_facts f = reads(1000 * MiB, 0);
	char why[192];

	(void)state;
	f.direct = true;
	assert_int_equal(llmio_service_classify(&f, why, sizeof(why)), LLMIO_SERVICE_DEVICE);
	assert_non_null(strstr(why, "O_DIRECT"));
	/* tmpfs takes O_DIRECT (Linux 6.6 and later) but the files are still in memory */
	f.fstype = "tmpfs";
	f.device_known = false;
	assert_int_equal(llmio_service_classify(&f, why, sizeof(why)), LLMIO_SERVICE_PAGE_CACHE);
	assert_non_null(strstr(why, "tmpfs"));
	f.direct = false;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_PAGE_CACHE);
	/* a network filesystem: no device, nothing read through the block layer */
	f.fstype = "nfs";
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_UNKNOWN);
	f.witness.read_bytes = 1000 * MiB;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_DEVICE);
	f = reads(0, 0);
	assert_int_equal(llmio_service_classify(&f, why, sizeof(why)), LLMIO_SERVICE_UNKNOWN);
	assert_string_equal(why, "no bytes moved");
}

/* Buffered writes: write_bytes is charged at dirtying, so only fsync or the disk count. */
static void buffered_writes(void **state)
{
	struct llmio_service_facts f = {.write_bytes = 100 * MiB, .fstype = "xfs"};

	(void)state;
	f.witness.known = true;
	f.witness.write_bytes = 100 * MiB; /* dirtied: proves nothing */
	f.device_known = true;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_PAGE_CACHE);
	f.device_write_bytes = 60 * MiB;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_MIXED);
	f.device_write_bytes = 95 * MiB;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_DEVICE);
	f.device_write_bytes = 0;
	f.fsyncs = 1;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_DEVICE);
	f.fsyncs = 0;
	f.device_known = false;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_UNKNOWN);
	/* randrw: device reads, page-cache writes -> mixed */
	f = reads(100 * MiB, 100 * MiB);
	f.write_bytes = 100 * MiB;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_MIXED);
	f.fsyncs = 4;
	assert_int_equal(llmio_service_classify(&f, NULL, 0), LLMIO_SERVICE_DEVICE);
}

static void names(void **state)
{
	(void)state;
	assert_string_equal(llmio_service_name(LLMIO_SERVICE_DEVICE), "device");
	assert_string_equal(llmio_service_name(LLMIO_SERVICE_PAGE_CACHE), "page-cache");
	assert_string_equal(llmio_service_name(LLMIO_SERVICE_MIXED), "mixed");
	assert_string_equal(llmio_service_name(LLMIO_SERVICE_UNKNOWN), "unknown");
}

static struct llmio_result *result(void)
{
	struct llmio_result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	snprintf(r->device.name, sizeof(r->device.name), "vda");
	snprintf(r->device.fstype, sizeof(r->device.fstype), "ext4");
	r->device.known = true;
	r->process_io.known = true;
	r->cpu.online_cpus = 2;
	r->read.bytes = 8 * MiB;
	r->process_io.read_bytes = 8 * MiB;
	r->device.read_bytes = 8 * MiB;
	return r;
}

/* The disk's counters against the witness: more than 1.5x + 8 MiB is another's I/O. */
static void shared_disk(void **state)
{
	struct llmio_result *r = result();

	(void)state;
	r->device.read_bytes = 20 * MiB; /* = 1.5 x 8 + 8: within the margin */
	llmio_result_judge(r);
	assert_false(r->shared_disk);
	assert_string_equal(r->shared_disk_warning, "");
	assert_int_equal(r->service, LLMIO_SERVICE_DEVICE);
	r->device.read_bytes = 2325 * MiB; /* the 8 MiB job on a shared disk */
	llmio_result_judge(r);
	assert_true(r->shared_disk);
	assert_non_null(strstr(r->shared_disk_warning, "vda read 2.27 GiB"));
	assert_non_null(strstr(r->shared_disk_warning, "this process read 8.00 MiB"));
	/* the verdict is the witness's: still the device */
	assert_int_equal(r->service, LLMIO_SERVICE_DEVICE);
	r->device.read_bytes = 8 * MiB;
	r->device.write_bytes = 100 * MiB; /* writes of someone else */
	llmio_result_judge(r);
	assert_true(r->shared_disk);
	/* nothing to compare without a witness */
	r->process_io.known = false;
	llmio_result_judge(r);
	assert_false(r->shared_disk);
	free(r);
}

/* Other work above a quarter of the online CPUs (at least half a core) is a busy machine. */
static void busy_system(void **state)
{
	struct llmio_result *r = result();

	(void)state;
	r->cpu.cores_busy = 0.5;
	r->cpu.system_cores_busy = 0.9; /* 0.4 beyond the job: quiet */
	llmio_result_judge(r);
	assert_false(r->busy_system);
	r->cpu.system_cores_busy = 1.95; /* the "system 1.95 of 2 cores" */
	llmio_result_judge(r);
	assert_true(r->busy_system);
	assert_non_null(strstr(r->busy_system_warning, "1.45 of 2 CPUs"));
	r->cpu.online_cpus = 64; /* 1.45 cores elsewhere of 64 is a quiet machine */
	llmio_result_judge(r);
	assert_false(r->busy_system);
	r->cpu.system_cores_busy = 17.0;
	llmio_result_judge(r);
	assert_true(r->busy_system);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(read_thresholds),
	        cmocka_unit_test(witness_preferred),
	        cmocka_unit_test(direct_memory_and_nothing),
	        cmocka_unit_test(buffered_writes),
	        cmocka_unit_test(names),
	        cmocka_unit_test(shared_disk),
	        cmocka_unit_test(busy_system),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
