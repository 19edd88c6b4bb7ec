/* SPDX-License-Identifier: MIT */
/*
 * The smallest llmio client: run a 4 KiB random-read job through the public API alone and
 * print IOPS, p99 and GB/s per core.  Usage: example_job FILE [ENGINE]
 */
#include <stdio.h>

#include <llmio/llmio.h>

int main(int argc, char **argv)
{
	struct llmio_job_opts opts;
	struct llmio_result *r;
	struct llmio_error e;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE [ENGINE]\n", argv[0]);
		return 2;
	}
	llmio_error_init(&e);
	llmio_job_opts_init(&opts);
	if (llmio_job_opts_set(&opts, "filename", argv[1], &e) ||
	    llmio_job_opts_set(&opts, "ioengine", argc > 2 ? argv[2] : "psync", &e) ||
	    llmio_job_opts_set(&opts, "rw", "randread", &e) ||
	    llmio_job_opts_set(&opts, "size", "8m", &e) ||
	    llmio_job_opts_set(&opts, "io_size", "4m", &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 2;
	}
	ret = llmio_job_run(&opts, &r, &e);
	if (ret) {
		fprintf(stderr, "llmio_job_run: %s\n", e.msg);
		llmio_result_destroy(r);
		return 1;
	}
	printf("%s: %llu reads, %.0f IOPS, p99 %llu ns, %.2f GB/s per core\n", opts.engine,
	       (unsigned long long)r->read.ios, r->read.iops,
	       (unsigned long long)llmio_hist_percentile(&r->read.clat, 99), r->gb_per_s_per_core);
	llmio_result_destroy(r);
	return 0;
}
