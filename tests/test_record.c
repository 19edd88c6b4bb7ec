/* SPDX-License-Identifier: MIT */
/*
 * The record tables (src/stats/record.c): the CSV line and the job object written from a
 * result whose every value is known, compared byte for byte with the text the hand-written
 * writers produced before the tables, and the fields that are written only when they apply
 * (error_msg; the process witness cells).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "llmio/llmio.h"
#include "stats/record.h"
#include "stats/result_json.h"

static struct llmio_result *known_result(void)
{
	struct llmio_result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	snprintf(r->opts.engine, sizeof(r->opts.engine), "psync");
	r->opts.rw = LLMIO_RW_RANDRW;
	r->opts.bs = 4096;
	r->opts.iodepth = 8;
	r->opts.numjobs = 2;
	r->direct_in_effect = true;
	r->runtime_s = 1.25;
	r->read.iops = 1000.25;
	r->read.bw_bytes = 4097024.5;
	llmio_hist_init(&r->read.clat);
	llmio_hist_init(&r->write.clat);
	llmio_hist_add(&r->read.clat, 100);
	r->write.iops = 10.5;
	r->write.bw_bytes = 43008;
	r->cpu.usr_s = 0.125;
	r->cpu.sys_s = 0.5;
	r->cpu.cores_busy = 0.5;
	r->cpu.system_cores_busy = 1.75;
	r->gb_per_s_per_core = 0.0082;
	r->device.known = true;
	snprintf(r->device.name, sizeof(r->device.name), "vda");
	r->device.read_bytes = 9007199254740992ULL; /* 2^53: still exact */
	r->device.write_bytes = 512;
	r->error = -5;
	snprintf(r->error_msg, sizeof(r->error_msg), "read at 0: Input/output error");
	r->service = LLMIO_SERVICE_DEVICE;
	r->busy_system = true;
	return r;
}

static char *csv_of(const struct llmio_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(rec_csv_row(f, r), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Every column, as the printf of the hand-written writer formatted it. */
static void csv_row_bytes(void **state)
{
	struct llmio_result *r = known_result();
	char *line;

	(void)state;
	line = csv_of(r);
	assert_string_equal(line, "psync,randrw,4096,8,2,1,1.250000,1000.2,4097024.5,100,100,100,"
	                          "10.5,43008.0,0,0,0,0.125000,0.500000,0.5000,1.7500,0.0082,vda,"
	                          "9007199254740992,512,0,5,,,device,0,1\n");
	free(line);
	/* a known witness is written, zero included; an unknown device is an empty name */
	r->process_io.known = true;
	r->process_io.read_bytes = 7;
	r->device.known = false;
	line = csv_of(r);
	assert_non_null(strstr(line, ",0.0082,,9007199254740992,512,0,5,7,0,device,"));
	free(line);
	free(r);
}

/* The header is the table's columns in order, and each row has as many cells. */
static void csv_header_matches_rows(void **state)
{
	struct llmio_result *r = known_result();
	char *buf = NULL, *row;
	size_t len = 0, cols = 0, cells = 1;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(rec_csv_header(f), 0);
	assert_int_equal(fclose(f), 0);
	for (const struct rec_field *c = rec_fields(REC_KIND_CSV); c->key; c++)
		cols++;
	assert_int_equal(cols, 32);
	assert_memory_equal(buf, "engine,rw,bs,", 13);
	row = csv_of(r);
	for (const char *p = row; *p; p++)
		cells += *p == ',';
	assert_int_equal(cells, cols);
	free(row);
	free(buf);
	free(r);
}

/* error_msg is written only with an error; dotted keys land in their objects. */
static void job_json_fields(void **state)
{
	struct llmio_result *r = known_result();
	cJSON *j = result_job_json(r);
	const cJSON *cpu;

	(void)state;
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "error_msg")->valuestring,
	                    "read at 0: Input/output error");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, RK_ERROR)->valueint, 5);
	cpu = cJSON_GetObjectItemCaseSensitive(j, RK_CPU);
	assert_true(cJSON_GetObjectItemCaseSensitive(cpu, RK_CORES_BUSY)->valuedouble == 0.5);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, RK_BUSY_SYSTEM)));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, RK_SERVICE)->valuestring, "device");
	cJSON_Delete(j);
	r->error = 0;
	j = result_job_json(r);
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "error_msg"));
	/* every key of the table is written, in the table's order */
	{
		const cJSON *it = j->child;

		for (const struct rec_field *f = rec_fields(REC_KIND_JOB); f->key; f++) {
			const char *dot = strchr(f->key, '.');
			size_t n = dot ? (size_t)(dot - f->key) : strlen(f->key);

			if (!strcmp(f->key, "error_msg"))
				continue;
			if (it && (strlen(it->string) != n || strncmp(it->string, f->key, n)))
				it = it->next; /* the next top-level key */
			assert_non_null(it);
			assert_int_equal(strlen(it->string), n);
			assert_memory_equal(it->string, f->key, n);
		}
		assert_null(it->next);
	}
	cJSON_Delete(j);
	free(r);
}

/*
 * "engine_options" comes from what the job parsed (the result's engine_options), in its order,
 * an enum as its name; a result that no job made has none, whatever its engine.
 */
static void engine_options_from_result(void **state)
{
	struct llmio_result *r = known_result();
	cJSON *j = result_opts_json(r);
	char *text;

	(void)state;
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "engine_options"));
	cJSON_Delete(j);
	snprintf(r->opts.engine, sizeof(r->opts.engine), "no-such-engine"); /* never looked up */
	r->engine_options_known = true;
	r->nengine_options = 2;
	snprintf(r->engine_options[0].name, sizeof(r->engine_options[0].name), "madvise");
	snprintf(r->engine_options[0].choice, sizeof(r->engine_options[0].choice), "random");
	r->engine_options[0].value = 1;
	snprintf(r->engine_options[1].name, sizeof(r->engine_options[1].name), "stall");
	r->engine_options[1].value = 30000;
	j = result_opts_json(r);
	text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(j, "engine_options"));
	assert_string_equal(text, "{\"madvise\":\"random\",\"stall\":30000}");
	free(text);
	cJSON_Delete(j);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(csv_row_bytes),
	        cmocka_unit_test(csv_header_matches_rows),
	        cmocka_unit_test(job_json_fields),
	        cmocka_unit_test(engine_options_from_result),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
