/* SPDX-License-Identifier: MIT */
/*
 * A migration plan executed on the tensor store (src/migrate/exec.c), with hand-made plans: the
 * bytes moved per tier are the plan's, a kernel that waits names the tensor it waited for, a
 * step whose buffers cannot fit in this machine's memory is refused before any is allocated.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "migrate/exec.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/llmio-test-exec.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct llmio_store *open_store(void)
{
	const char *targets[] = {dir};
	struct llmio_store_opts o;
	struct llmio_store *s = NULL;
	struct llmio_error e = {0};

	llmio_store_opts_init(&o);
	snprintf(o.engine, sizeof(o.engine), "psync");
	o.targets = targets;
	o.ntargets = 1;
	o.capacity = 16u << 20;
	o.direct = false; /* /tmp may be tmpfs */
	if (llmio_store_create(&o, &s, &e))
		print_message("store: %s\n", e.msg);
	assert_non_null(s);
	return s;
}

/* Four kernels of no time; tensor A (bytes) created by kernel 0, used by kernel 3; the plan
 * evicts it to `tier` before kernel 1 (due before 2) and fetches it before 2 (due before 3). */
static void step_and_plan(struct lt_step *s, struct plan *p, uint64_t bytes, enum plan_tier tier)
{
	const uint32_t uses[] = {3};
	struct llmio_error e = {0};

	lt_init(s);
	for (int k = 0; k < 4; k++) {
		char name[8];

		snprintf(name, sizeof(name), "k%d", k);
		assert_int_equal(lt_add_kernel(s, name, 0, &e), 0);
	}
	assert_int_equal(lt_add_tensor(s, "A", bytes, LT_ACTIVATION, 0, uses, 1, &e), 0);
	assert_int_equal(lt_finish(s, &e), 0);
	assert_int_equal(plan_init(p, "hand", s, bytes, &e), 0);
	assert_int_equal(plan_add(p, s, 0, PLAN_OUT, tier, 1, 2, &e), 0);
	assert_int_equal(plan_add(p, s, 0, PLAN_IN, tier, 2, 3, &e), 0);
	plan_sort(p);
}

static void moves_the_plans_bytes(enum plan_tier tier)
{
	struct llmio_store *st = open_store();
	struct llmio_error e = {0};
	struct plan_exec r;
	struct lt_step s;
	struct plan p;

	step_and_plan(&s, &p, 3u << 20, tier);
	assert_int_equal(plan_execute(&p, &s, st, &r, &e), 0);
	assert_int_equal(r.m.bytes[tier][PLAN_OUT], 3u << 20);
	assert_int_equal(r.m.bytes[tier][PLAN_IN], 3u << 20);
	assert_int_equal(r.m.bytes[tier == PLAN_SSD ? PLAN_HOST : PLAN_SSD][PLAN_OUT], 0);
	assert_int_equal(r.m.transfers, 2);
	/* a kernel that waited waited for A; the host tier's copies never wait */
	for (uint32_t k = 0; k <= s.nkernels; k++)
		assert_true(r.stall_tensor[k] == UINT32_MAX || r.stall_tensor[k] == 0);
	if (tier == PLAN_HOST)
		assert_int_equal(r.stalled_kernels, 0);
	assert_true(r.m.step_s >= r.m.stall_s);
	assert_true(r.m.overlap_s >= 0 && r.m.overlap_s <= r.m.step_s);
	plan_exec_release(&r);
	plan_release(&p);
	lt_release(&s);
	llmio_store_destroy(st);
}

static void ssd_tier(void **state)
{
	(void)state;
	moves_the_plans_bytes(PLAN_SSD);
}

static void host_tier(void **state)
{
	(void)state;
	moves_the_plans_bytes(PLAN_HOST);
}

static void too_big_for_memory(void **state)
{
	struct llmio_store *st = open_store();
	struct llmio_error e = {0};
	struct plan_exec r;
	struct lt_step s;
	struct plan p;

	(void)state;
	step_and_plan(&s, &p, LT_MAX_TENSOR_BYTES, PLAN_SSD); /* 1 TiB */
	assert_int_equal(plan_execute(&p, &s, st, &r, &e), -ENOMEM);
	assert_non_null(strstr(e.msg, "more than half of this machine's"));
	assert_non_null(strstr(e.msg, "use a smaller --scale"));
	plan_exec_release(&r);
	plan_release(&p);
	lt_release(&s);
	llmio_store_destroy(st);
}

/* The calibration with a step: a burst of its tensor sizes (eight of 100 KiB in 1 MiB, cycling
 * over the step's one tensor) moves through the store and leaves nothing behind; without a step
 * one put and one get.  Both give a bandwidth and latencies; no figure is compared with a
 * threshold (the machine is shared). */
static void calibrate_with_the_steps_sizes(void **state)
{
	struct llmio_store *st = open_store();
	struct llmio_error e = {0};
	struct llmio_store_stats a = {.stats_size = sizeof(a)}, b = {.stats_size = sizeof(b)};
	struct plan_tier_spec t = {0}, u = {0};
	struct lt_step s;
	struct plan p;

	(void)state;
	step_and_plan(&s, &p, 100u << 10, PLAN_SSD);
	assert_int_equal(llmio_store_stats(st, &a), 0);
	assert_int_equal(plan_calibrate(st, &s, 1u << 20, &t, &e), 0);
	assert_int_equal(llmio_store_stats(st, &b), 0);
	assert_true(t.gbps > 0 && t.gbps < 1e6);
	assert_true(t.read_lat_ns > 0 && t.write_lat_ns > 0);
	/* nine 4 KiB round trips and the burst: ten puts of 100 KiB (1 MiB / 100 KiB) */
	assert_int_equal(b.puts - a.puts, 9 + 10);
	assert_int_equal(b.bytes_put - a.bytes_put, 9 * 4096 + 10 * (100u << 10));
	assert_int_equal(b.gets - a.gets, 9 + 10);
	assert_int_equal(plan_calibrate(st, NULL, 1u << 20, &u, &e), 0);
	assert_true(u.gbps > 0);
	/* the timer's lateness is a duration, not a promise: only that it is one */
	assert_true(plan_timer_late_ns(100000) < 1000000000ull);
	plan_release(&p);
	lt_release(&s);
	llmio_store_destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(ssd_tier),
	        cmocka_unit_test(host_tier),
	        cmocka_unit_test(calibrate_with_the_steps_sizes),
	        cmocka_unit_test(too_big_for_memory),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
