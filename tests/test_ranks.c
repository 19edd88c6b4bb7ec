/* SPDX-License-Identifier: MIT */
/* The MPI layer's exact merge and shares (src/mpi), without MPI: results built here. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mpi/ranks.h"
#include "llmio/hist.h"
#include "workload/segsrc.h"

static void fill(struct llmio_result *r, uint64_t ios, uint64_t bs, uint64_t lat0, double start,
                 double run)
{
	memset(r, 0, sizeof(*r));
	llmio_hist_init(&r->write.clat);
	llmio_hist_init(&r->write.slat);
	llmio_hist_init(&r->write.lat);
	llmio_hist_init(&r->read.clat);
	llmio_hist_init(&r->read.slat);
	llmio_hist_init(&r->read.lat);
	llmio_hist_init(&r->sync_lat);
	for (uint64_t i = 0; i < ios; i++) {
		llmio_hist_add(&r->write.clat, lat0 + i * 1000);
		llmio_hist_add(&r->write.lat, lat0 + i * 1000 + 50);
	}
	r->write.ios = ios;
	r->write.bytes = ios * bs;
	r->start_epoch_ms = (uint64_t)(start * 1000);
	r->runtime_s = run;
	r->cpu.usr_s = 0.25;
	r->cpu.sys_s = 0.5;
	r->cpu.proc_s = 0.75;
	r->cpu.system_busy_s = 2;
	r->cpu.online_cpus = 2;
	r->device.known = true;
	r->device.write_bytes =
	        1000000; /* the whole disk's view: the same in every rank of a host */
	r->process_io.known = true;
	r->process_io.write_bytes = ios * bs;
}

/* Counts, bytes and histograms are the exact sums; device bytes once per host. */
static void merge_exact(void **state)
{
	struct llmio_result *r = calloc(4, sizeof(*r)), *agg = calloc(1, sizeof(*agg));
	const char *hosts[4] = {"a", "a", "b", "b"};
	struct ranks_rank ranks[4];
	struct ranks_summary s;
	struct llmio_hist want;
	uint64_t ios = 0;

	(void)state;
	llmio_hist_init(&want);
	for (unsigned i = 0; i < 4; i++) {
		fill(&r[i], 10 + i * 7, 4096, 1000 * (i + 1), 100.0 + i * 0.01, 2.0 - i * 0.1);
		llmio_hist_merge(&want, &r[i].write.clat);
		ios += r[i].write.ios;
		ranks[i] = (struct ranks_rank){.r = &r[i], .host = hosts[i], .rank = i};
	}
	assert_int_equal(ranks_merge(ranks, 4, agg, &s), 0);
	assert_int_equal(s.ranks, 4);
	assert_int_equal(s.hosts, 2);
	assert_int_equal(agg->write.ios, ios);
	assert_int_equal(agg->write.bytes, ios * 4096);
	assert_int_equal(agg->process_io.write_bytes, ios * 4096);
	assert_memory_equal(&agg->write.clat, &want, sizeof(want));
	assert_int_equal(agg->write.lat.count, ios);
	/* two hosts: the disk's counters of each counted once, not once per rank */
	assert_int_equal(agg->device.write_bytes, 2000000);
	assert_int_equal(agg->cpu.online_cpus, 4);
	assert_true(agg->cpu.system_busy_s == 4);
	assert_true(agg->cpu.proc_s == 3);
	/* IOR: earliest start (100.00) to latest end (rank 0: 102.0) */
	assert_true(s.phase_s > 1.999 && s.phase_s < 2.001);
	assert_true(s.start_skew_s > 0.029 && s.start_skew_s < 0.031);
	assert_true(agg->runtime_s == s.phase_s);
	assert_true(agg->write.bw_bytes == (double)(ios * 4096) / s.phase_s);
	assert_int_equal(ranks_merge(ranks, 0, agg, &s), -EINVAL);
	free(r);
	free(agg);
}

/* The "mpi" object: one entry per host and per rank, in rank order. */
static void json_per_rank(void **state)
{
	struct llmio_result *r = calloc(3, sizeof(*r)), *agg = calloc(1, sizeof(*agg));
	const char *hosts[3] = {"x", "y", "x"};
	struct ranks_rank ranks[3];
	struct ranks_summary s;
	cJSON *m, *per, *by;

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		fill(&r[i], 3, 512, 500, 50, 1);
		ranks[i] = (struct ranks_rank){.r = &r[i], .host = hosts[i], .rank = i};
	}
	assert_int_equal(ranks_merge(ranks, 3, agg, &s), 0);
	m = ranks_json(ranks, 3, &s, "shared-file");
	assert_non_null(m);
	per = cJSON_GetObjectItem(m, "per_rank");
	by = cJSON_GetObjectItem(m, "by_host");
	assert_int_equal(cJSON_GetArraySize(per), 3);
	assert_int_equal(cJSON_GetArraySize(by), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(per, 1), "host")->valuestring,
	                    "y");
	assert_int_equal(
	        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(by, 0), "ranks")), 2);
	assert_string_equal(cJSON_GetObjectItem(m, "file_layout")->valuestring, "shared-file");
	cJSON_Delete(m);
	free(r);
	free(agg);
}

/* A job on /tmp/f of `blocks` 4 KiB blocks (nothing is opened: shares are only computed). */
static void job(struct llmio_job_opts *o, uint64_t blocks, enum llmio_rw rw)
{
	llmio_job_opts_init(o);
	snprintf(o->filename, sizeof(o->filename), "/tmp/f");
	o->bs = 4096;
	o->size = blocks * 4096;
	o->rw = rw;
}

/* Shares: uneven block counts go to the first ranks; file per process gets IOR's suffix. */
static void shares(void **state)
{
	struct llmio_job_opts o;
	struct ranks_share sh;
	struct llmio_error e = {0};
	uint64_t total = 0;
	enum ranks_layout l;

	(void)state;
	for (unsigned r = 0; r < 3; r++) {
		job(&o, 5, LLMIO_RW_WRITE);
		assert_int_equal(ranks_job_share(&o, r, 3, RANKS_FILE_PER_PROCESS, 0, &sh, &e), 0);
		assert_int_equal(o.size, (r < 2 ? 2 : 1) * 4096);
		total += o.size;
		ranks_share_release(&sh);
	}
	assert_int_equal(total, 5 * 4096);
	assert_string_equal(o.filename, "/tmp/f.00000002");
	/* a shared file: rank 1's region starts after rank 0's two blocks */
	job(&o, 5, LLMIO_RW_READ);
	assert_int_equal(ranks_job_share(&o, 1, 3, RANKS_SHARED_FILE, 0, &sh, &e), 0);
	assert_non_null(o.io_source);
	assert_int_equal(((struct segsrc *)sh.segs)->segs[0].off, 2 * 4096);
	assert_int_equal(segsrc_bytes(sh.segs), 2 * 4096);
	ranks_share_release(&sh);
	/* --reorder: rank 1 of 3 reads rank 2's region */
	job(&o, 5, LLMIO_RW_READ);
	assert_int_equal(ranks_job_share(&o, 1, 3, RANKS_SHARED_FILE, 1, &sh, &e), 0);
	assert_int_equal(((struct segsrc *)sh.segs)->segs[0].off, 4 * 4096);
	ranks_share_release(&sh);
	/* more ranks than blocks: the rank without work is refused with the fix */
	job(&o, 2, LLMIO_RW_WRITE);
	assert_int_equal(ranks_job_share(&o, 2, 3, RANKS_FILE_PER_PROCESS, 0, &sh, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "raise --size"));
	assert_int_equal(ranks_layout_parse("shared-file", &l, &e), 0);
	assert_int_equal(l, RANKS_SHARED_FILE);
	assert_int_equal(ranks_layout_parse("fpp", &l, &e), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(merge_exact),
	        cmocka_unit_test(json_per_rank),
	        cmocka_unit_test(shares),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
