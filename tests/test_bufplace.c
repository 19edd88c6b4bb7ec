/* SPDX-License-Identifier: MIT */
/*
 * Where host buffers start within their page (src/job/bufplace.h): page-aligned under
 * O_DIRECT and below 64 KiB; from 64 KiB through the page cache 64 bytes in on AMD CPUs (16
 * bytes in cost the kernel's copy 4.4x there) and 16 bytes in elsewhere.  And jobs through
 * the page cache with such buffers move exactly the job's bytes, with every I/O in the
 * histograms, and read back what they wrote (verify=crc32c), with psync and io_uring.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "job/bufplace.h"
#include "llmio/llmio.h"

static char dir[4096];

static void placement(void **state)
{
	(void)state;
	for (uint64_t bs = 512; bs <= (16u << 20); bs *= 2) {
		assert_int_equal(buf_page_offset(bs, true), 0);
		if (bs < (64u << 10)) {
			assert_int_equal(buf_page_offset(bs, false), 0);
			continue;
		}
#if defined(__x86_64__) || defined(__i386__)
		if (__builtin_cpu_is("amd")) {
			assert_int_equal(buf_page_offset(bs, false), 64);
			continue;
		}
#endif
		assert_int_equal(buf_page_offset(bs, false), 16);
	}
}

static struct llmio_result *run(const char *engine, enum llmio_rw rw, uint64_t bs, uint32_t verify)
{
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	struct llmio_error err = {0};
	int ret;

	llmio_job_opts_init(&o);
	snprintf(o.engine, sizeof(o.engine), "%s", engine);
	snprintf(o.filename, sizeof(o.filename), "%.4000s/bufplace", dir);
	o.rw = rw;
	o.bs = bs;
	o.size = 8u << 20;
	o.io_size = 8u << 20;
	o.iodepth = 4;
	o.verify = verify;
	ret = llmio_job_run(&o, &r, &err);
	if (ret)
		print_message("%s: %s\n", engine, err.msg);
	assert_int_equal(ret, 0);
	assert_non_null(r);
	return r;
}

static void page_cache_jobs(void **state)
{
	static const char *const engines[] = {"psync", "io_uring"};

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		for (uint64_t bs = 64u << 10; bs <= (1u << 20); bs *= 16) {
			struct llmio_result *r = run(engines[i], LLMIO_RW_WRITE, bs, 1);

			print_message("%s bs %llu\n", engines[i], (unsigned long long)bs);
			assert_int_equal(r->write.bytes, 8u << 20);
			assert_int_equal(r->write.ios, (8u << 20) / bs);
			assert_int_equal(r->write.clat.count, r->write.ios);
			llmio_result_destroy(r);
			r = run(engines[i], LLMIO_RW_READ, bs, 0);
			assert_int_equal(r->read.bytes, 8u << 20);
			assert_int_equal(r->read.ios, (8u << 20) / bs);
			assert_int_equal(r->read.clat.count, r->read.ios);
			assert_int_equal(r->read.lat.count, r->read.ios);
			llmio_result_destroy(r);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(placement),
	        cmocka_unit_test(page_cache_jobs),
	};
	const char *b = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/bufplace", b ? b : "/tmp/llmio-test");
	mkdir(b ? b : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
