/* SPDX-License-Identifier: MIT */
/*
 * The tensor store (include/llmio/store.h, docs/store.md): tensors of random sizes at random
 * buffer alignments come back byte for byte on every host engine (psync, libaio, io_uring,
 * mmap) and on the GPU engines over the fake CUDA libraries, put by copy and by borrow, got
 * waiting and not; device bytes are exactly the aligned bytes moved; reads ahead along the
 * order hint turn gets into prefetch hits; staging and the read-ahead window are never
 * exceeded under a load many times their size; striping puts each stripe unit on its target;
 * and every error is named: an unknown or released handle, a full store, a user's file, a
 * target truncated under the store (the gets fail with the cause, the buffers are not
 * zero-filled), a raw device without consent.  Page-aligned buffers move with no staging copy
 * (the statistics show none, only a tensor's last partial 4 KiB unit is staged, and nothing
 * past a tensor is written); a put that fails with a prefetch and a get queued behind it fails
 * them with its cause and leaves the read-ahead window empty.  A get queued behind many puts
 * is served before them, and one behind its own tensor's queued put after it, correctly.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "llmio/llmio.h"
#include "store/store_internal.h"

#define STRIPE  (64u << 10)
#define STAGING (1u << 20)

static char dir[1024];

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((seed * 131 + i * 7 + (i >> 9)) ^ (seed >> 3));
}

static const char *at(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

static uint64_t aligned(uint64_t n)
{
	return (n + 4095) / 4096 * 4096;
}

/* Can engine run here?  Prints why not. */
static bool runs(const char *engine)
{
	const struct engine_ops *e = engine_find(engine);
	char why[512] = "";

	assert_non_null(e);
	if (e->probe && e->probe(why, sizeof(why))) {
		print_message("engine %s cannot run here, not tested: %s\n", engine, why);
		return false;
	}
	return true;
}

static struct llmio_store *open_store(const char *engine, const char *const *targets, unsigned n,
                                      uint64_t capacity, uint64_t staging, uint64_t readahead)
{
	struct llmio_store_opts o;
	struct llmio_store *s = NULL;
	struct llmio_error e = {0};
	int rc;

	llmio_store_opts_init(&o);
	snprintf(o.engine, sizeof(o.engine), "%s", engine);
	o.targets = targets;
	o.ntargets = n;
	o.capacity = capacity;
	o.stripe_size = STRIPE;
	o.staging_bytes = staging;
	o.readahead_bytes = readahead;
	o.iodepth = 8;
	rc = llmio_store_create(&o, &s, &e);
	if (rc)
		print_message("create on %s: %s\n", engine, e.msg);
	assert_int_equal(rc, 0);
	return s;
}

struct tensor {
	unsigned char *mem; /* allocation; the data starts at mem + shift */
	size_t shift;
	uint64_t len, handle;
};

static unsigned char *data_of(struct tensor *t)
{
	return t->mem + t->shift;
}

/* Wait (on the eventfd) until `want` events of `type` arrived for these tensors. */
static void await_events(struct llmio_store *s, int type, unsigned want)
{
	struct llmio_store_event ev[16];
	struct pollfd p = {.fd = llmio_store_eventfd(s), .events = POLLIN};
	unsigned got = 0;

	assert_true(p.fd >= 0);
	while (got < want) {
		int n = llmio_store_poll(s, ev, 16);

		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			if (ev[i].type == LLMIO_STORE_EV_ERROR)
				print_message("event error %d on %#llx\n", ev[i].res,
				              (unsigned long long)ev[i].handle);
			assert_int_not_equal(ev[i].type, LLMIO_STORE_EV_ERROR);
			if (ev[i].type == type)
				got++;
		}
		if (!n)
			assert_true(poll(&p, 1, 60000) == 1);
	}
}

/* Random sizes and alignments, put (copy and borrow), got (waiting and not), released. */
static void roundtrip(const char *engine)
{
	enum { N = 40 };
	struct tensor t[N];
	struct llmio_store_stats st = {.stats_size = sizeof(st)};
	struct llmio_error e = {0};
	char path[1100], sub[1200], work[1300];
	const char *tg[1] = {sub};
	struct llmio_store *s;
	uint64_t sum = 0, asum = 0;
	unsigned char *back;

	if (!runs(engine))
		return;
	snprintf(sub, sizeof(sub), "%s", at(path, sizeof(path), engine));
	mkdir(sub, 0755);
	s = open_store(engine, tg, 1, 16u << 20, STAGING, 0);
	for (unsigned i = 0; i < N; i++) {
		t[i].len = 1 + rnd() % (i % 4 == 0 ? 300000 : 70000);
		t[i].shift = rnd() % 64;
		t[i].mem = malloc(t[i].len + 64);
		assert_non_null(t[i].mem);
		fill(data_of(&t[i]), t[i].len, i + 1);
		assert_int_equal(llmio_store_put(s, data_of(&t[i]), t[i].len,
		                                 i % 2 ? LLMIO_STORE_BORROW : LLMIO_STORE_COPY,
		                                 &t[i].handle, &e),
		                 0);
		assert_true(t[i].handle != 0);
		if (i % 2 == 0) /* a copy: the buffer is ours again at once */
			memset(data_of(&t[i]), 0xee, t[i].len);
		sum += t[i].len;
		/* a borrowed put from host memory starts at its address's offset in its 4 KiB
		 * page (the GPU engines' staging is their own memory: no such placement) */
		asum += aligned(t[i].len + (i % 2 && !engine_find(engine)->buf_alloc
		                                    ? (uintptr_t)data_of(&t[i]) % 4096
		                                    : 0));
	}
	/* every put says when it is on storage; the borrowed buffers are free after that */
	await_events(s, LLMIO_STORE_EV_PUT, N);
	assert_int_equal(llmio_store_flush(s, &e), 0);
	for (unsigned i = 0; i < N; i++) {
		back = malloc(t[i].len);
		assert_non_null(back);
		memset(back, 0, t[i].len);
		assert_int_equal(llmio_store_get(s, t[i].handle, back, t[i].len, i % 3 != 0, &e),
		                 0);
		if (i % 3 == 0)
			await_events(s, LLMIO_STORE_EV_GOT, 1);
		fill(data_of(&t[i]), t[i].len, i + 1);
		assert_memory_equal(back, data_of(&t[i]), t[i].len);
		free(back);
	}
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.puts, N);
	assert_int_equal(st.gets, N);
	assert_int_equal(st.bytes_put, sum);
	assert_int_equal(st.bytes_got, sum);
	/* each tensor is written and read once, in whole alignment units */
	assert_int_equal(st.device_bytes_written, asum);
	assert_int_equal(st.device_bytes_read, asum);
	assert_true(st.peak_staging_bytes > 0 && st.peak_staging_bytes <= STAGING);
	assert_int_equal(st.prefetch_hits, 0);
	assert_true(st.cpu_ns > 0);
	assert_true(st.io_busy_ns > 0);
	/* released: the handle is gone, and its space serves new puts */
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(llmio_store_release(s, t[i].handle, &e), 0);
		assert_int_equal(llmio_store_get(s, t[i].handle, t[i].mem, t[i].len, true, &e),
		                 -ENOENT);
	}
	for (unsigned round = 0; round < 3; round++)
		for (unsigned i = 0; i < N; i++) {
			fill(data_of(&t[i]), t[i].len, i + 100 * round);
			assert_int_equal(
			        llmio_store_put(s, data_of(&t[i]), t[i].len, 0, &t[i].handle, &e),
			        0);
			back = malloc(t[i].len);
			assert_non_null(back);
			/* read right after the put: the get waits for the write, then reads */
			assert_int_equal(llmio_store_get(s, t[i].handle, back, t[i].len, true, &e),
			                 0);
			assert_memory_equal(back, data_of(&t[i]), t[i].len);
			free(back);
			assert_int_equal(llmio_store_release(s, t[i].handle, &e), 0);
		}
	llmio_store_destroy(s);
	for (unsigned i = 0; i < N; i++)
		free(t[i].mem);
	/* the store's file is gone with it */
	snprintf(work, sizeof(work), "%s/llmio-work", sub);
	if (access(work, F_OK) == 0) {
		char cmd[1400];

		snprintf(cmd, sizeof(cmd), "ls %s | grep -q '^store\\.%ld\\.'", work,
		         (long)getpid());
		assert_int_not_equal(system(cmd), 0);
	}
}

/* The engine-parametrized tests: the engine's name is the test's state. */
static void roundtrip_test(void **state)
{
	roundtrip(*state);
}
#define ROUNDTRIP(engine)                                                                          \
	{                                                                                          \
		"roundtrip_" engine, roundtrip_test, NULL, NULL, (void *)engine                    \
	}

/*
 * Page-aligned buffers: borrowed puts are written from the caller's memory and gets, waiting
 * and not waiting with llmio_store_wait, read straight into it, with no staging copy: the
 * statistics show zero staged bytes and no staging used for tensors of whole 4 KiB units
 * (one and several stripes), exact device bytes, and the data back byte for byte.  A tensor
 * that ends inside a 4 KiB unit stages only that unit (the staged bytes are exactly its tail,
 * in and out), and a get writes nothing past the tensor.
 */
static void no_copy(const char *engine)
{
	enum { N = 12 };
	static const uint64_t whole[N] = {
	        4096,       8192,     STRIPE,    STRIPE + 4096, 300000 / 4096 * 4096,
	        3 * STRIPE, 4096 * 5, 4096 * 40, STRIPE - 4096, 2 * STRIPE,
	        4096 * 7,   4096 * 33};
	struct llmio_store_stats st = {.stats_size = sizeof(st)};
	struct llmio_error e = {0};
	char path[1100], sub[1200];
	const char *tg[1] = {sub};
	struct llmio_store *s;
	unsigned char *src[N], *back[N], *want;
	uint64_t h[N], sum = 0, tails = 0, len[N];

	if (!runs(engine))
		return;
	snprintf(sub, sizeof(sub), "%s-nocopy", at(path, sizeof(path), engine));
	mkdir(sub, 0755);
	want = malloc(300000);
	assert_non_null(want);
	for (int round = 0; round < 2; round++) {
		/* round 0: whole 4 KiB units; round 1: tensors ending inside their last unit */
		s = open_store(engine, tg, 1, 16u << 20, STAGING, 0);
		sum = tails = 0;
		for (unsigned i = 0; i < N; i++) {
			len[i] = whole[i] - (round ? 1 + rnd() % 4095 : 0);
			assert_int_equal(posix_memalign((void **)&src[i], 4096, whole[i] + 4096),
			                 0);
			assert_int_equal(posix_memalign((void **)&back[i], 4096, whole[i] + 4096),
			                 0);
			fill(src[i], len[i], i + 40);
			memset(back[i], 0x5a, whole[i] + 4096);
			assert_int_equal(
			        llmio_store_put(s, src[i], len[i], LLMIO_STORE_BORROW, &h[i], &e),
			        0);
			sum += len[i];
			tails += len[i] % 4096;
		}
		await_events(s, LLMIO_STORE_EV_PUT, N);
		for (unsigned i = 0; i < N; i++) {
			if (i % 2) {
				assert_int_equal(
				        llmio_store_get(s, h[i], back[i], len[i], true, &e), 0);
			} else {
				assert_int_equal(
				        llmio_store_get(s, h[i], back[i], len[i], false, &e), 0);
				assert_int_equal(llmio_store_wait(s, h[i], &e), 0);
				/* nothing pending any more: returns at once */
				assert_int_equal(llmio_store_wait(s, h[i], &e), 0);
			}
			fill(want, len[i], i + 40);
			assert_memory_equal(back[i], want, len[i]);
			/* not a byte past the tensor: the padding of its last unit stays out */
			for (uint64_t j = len[i]; j < whole[i] + 4096; j++)
				assert_int_equal(back[i][j], 0x5a);
		}
		assert_int_equal(llmio_store_stats(s, &st), 0);
		assert_int_equal(st.bytes_put, sum);
		assert_int_equal(st.bytes_got, sum);
		for (unsigned i = 0; i < N; i++) {
			assert_int_equal(st.device_bytes_written >= aligned(len[i]), 1);
			assert_int_equal(llmio_store_release(s, h[i], &e), 0);
		}
		/* exact device bytes: each tensor once, in whole units, the padding included */
		{
			uint64_t asum = 0;

			for (unsigned i = 0; i < N; i++)
				asum += aligned(len[i]);
			assert_int_equal(st.device_bytes_written, asum);
			assert_int_equal(st.device_bytes_read, asum);
			/* the direct parts moved both ways, the rest (tails) through staging */
			assert_int_equal(st.direct_bytes, 2 * (sum - tails));
		}
		assert_int_equal(st.staged_bytes, 2 * tails);
		if (round == 0) {
			assert_int_equal(st.staged_bytes, 0);
			assert_int_equal(st.peak_staging_bytes, 0);
		} else {
			assert_true(st.peak_staging_bytes > 0);
		}
		assert_int_equal(llmio_store_wait(s, h[0], &e), -ENOENT);
		/* a COPY put of an aligned buffer is still copied: the buffer is the caller's at
		 * once */
		fill(src[0], len[0], 99);
		assert_int_equal(llmio_store_put(s, src[0], len[0], LLMIO_STORE_COPY, &h[0], &e),
		                 0);
		memset(src[0], 0xee, len[0]);
		assert_int_equal(llmio_store_get(s, h[0], back[0], len[0], true, &e), 0);
		fill(want, len[0], 99);
		assert_memory_equal(back[0], want, len[0]);
		assert_int_equal(llmio_store_stats(s, &st), 0);
		assert_int_equal(st.staged_bytes, 2 * tails + len[0] + len[0] % 4096);
		llmio_store_destroy(s);
		for (unsigned i = 0; i < N; i++) {
			free(src[i]);
			free(back[i]);
		}
	}
	free(want);
}

static void no_copy_test(void **state)
{
	no_copy(*state);
}
#define NO_COPY(engine)                                                                            \
	{                                                                                          \
		"no_copy_" engine, no_copy_test, NULL, NULL, (void *)engine                        \
	}

/*
 * A borrowed put is placed at a file offset congruent to its buffer's address modulo 4096: its
 * whole 4 KiB units move straight from the caller's memory, and only the partial units at its
 * head and tail are staged.  A get into a buffer at the same offset in its page reads straight
 * into it the same way; a get at another offset is staged whole.  Random sizes (some inside one
 * unit, some over several stripes) at random in-page offsets: the data comes back byte for
 * byte, nothing around the get's buffer is touched, and the staged, direct and device bytes are
 * exactly those of that split.
 */
static void congruent(const char *engine)
{
	enum { N = 36 };
	struct llmio_store_stats st = {.stats_size = sizeof(st)};
	struct llmio_error e = {0};
	char path[1100], sub[1200];
	const char *tg[1] = {sub};
	struct llmio_store *s;
	unsigned char *src[N], *back = NULL, *want;
	uint64_t h[N], len[N], pad[N], staged = 0, direct = 0, dev = 0;

	if (!runs(engine))
		return;
	snprintf(sub, sizeof(sub), "%s-congruent", at(path, sizeof(path), engine));
	mkdir(sub, 0755);
	s = open_store(engine, tg, 1, 32u << 20, STAGING, 0);
	for (unsigned i = 0; i < N; i++) {
		/* every 6th inside one unit, every 4th over several stripes */
		len[i] = 1 + rnd() % (i % 6 == 0 ? 4096 : i % 4 == 0 ? 4 * STRIPE : 70000);
		pad[i] = i % 9 == 0 ? 0 : rnd() % 4096;
		assert_int_equal(posix_memalign((void **)&src[i], 4096, pad[i] + len[i]), 0);
		fill(src[i] + pad[i], len[i], i + 200);
		assert_int_equal(
		        llmio_store_put(s, src[i] + pad[i], len[i], LLMIO_STORE_BORROW, &h[i], &e),
		        0);
		dev += aligned(pad[i] + len[i]);
	}
	await_events(s, LLMIO_STORE_EV_PUT, N);
	for (unsigned i = 0; i < N; i++) {
		/* the split of a tensor at pad: whole units direct, the partial ones staged */
		uint64_t hb = aligned(pad[i]), tb = (pad[i] + len[i]) / 4096 * 4096;
		uint64_t body = tb > hb ? tb - hb : 0;
		/* the get's buffer: at the put's offset in its page, at 0, or another one */
		uint64_t at = i % 3 == 0   ? pad[i]
		              : i % 3 == 1 ? 0
		                           : (pad[i] + 1 + rnd() % 4095) % 4096;
		uint64_t size = 4096 + at + len[i] + 4096;

		staged += len[i] - body; /* the put */
		direct += body;
		if (at == pad[i]) {
			staged += len[i] - body;
			direct += body;
		} else {
			staged += len[i];
		}
		dev += aligned(pad[i] + len[i]);
		assert_int_equal(posix_memalign((void **)&back, 4096, size), 0);
		assert_non_null(back);
		memset(back, 0x5a, size);
		assert_int_equal(llmio_store_get(s, h[i], back + 4096 + at, len[i], i % 2, &e), 0);
		if (i % 2 == 0)
			assert_int_equal(llmio_store_wait(s, h[i], &e), 0);
		assert_memory_equal(back + 4096 + at, src[i] + pad[i], len[i]);
		/* not a byte before or after the tensor */
		for (uint64_t j = 0; j < size; j++)
			if (j < 4096 + at || j >= 4096 + at + len[i])
				assert_int_equal(back[j], 0x5a);
		free(back);
	}
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.staged_bytes, staged);
	assert_int_equal(st.direct_bytes, direct);
	assert_int_equal(st.device_bytes_written + st.device_bytes_read, dev);
	assert_true(st.peak_staging_bytes <= STAGING);
	/* a COPY put is staged whole and starts on a unit: the caller has the buffer back */
	want = malloc(len[1]);
	assert_non_null(want);
	memcpy(want, src[1] + pad[1], len[1]);
	assert_int_equal(llmio_store_put(s, src[1] + pad[1], len[1], LLMIO_STORE_COPY, &h[1], &e),
	                 0);
	memset(src[1], 0xee, pad[1] + len[1]);
	assert_int_equal(llmio_store_flush(s, &e), 0);
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.staged_bytes, staged + len[1]);
	assert_int_equal(st.device_bytes_written + st.device_bytes_read, dev + aligned(len[1]));
	back = malloc(len[1]);
	assert_non_null(back);
	assert_int_equal(llmio_store_get(s, h[1], back, len[1], true, &e), 0);
	assert_memory_equal(back, want, len[1]);
	free(back);
	free(want);
	llmio_store_destroy(s);
	for (unsigned i = 0; i < N; i++)
		free(src[i]);
}

static void congruent_test(void **state)
{
	congruent(*state);
}
#define CONGRUENT(engine)                                                                          \
	{                                                                                          \
		"congruent_" engine, congruent_test, NULL, NULL, (void *)engine                    \
	}

/* Put n tensors of len bytes (seeded by index); handles into h. */
static void put_many(struct llmio_store *s, uint64_t *h, unsigned n, uint64_t len,
                     unsigned char *buf)
{
	struct llmio_error e = {0};

	for (unsigned i = 0; i < n; i++) {
		fill(buf, len, i + 7);
		assert_int_equal(llmio_store_put(s, buf, len, 0, &h[i], &e), 0);
	}
}

static void get_check(struct llmio_store *s, uint64_t h, unsigned seed, uint64_t len,
                      unsigned char *buf, unsigned char *want)
{
	struct llmio_error e = {0};
	int rc = llmio_store_get(s, h, buf, len, true, &e);

	if (rc)
		print_message("get: %s\n", e.msg);
	assert_int_equal(rc, 0);
	fill(want, len, seed);
	assert_memory_equal(buf, want, len);
}

/*
 * Backward order (REVERSE hint): after the first get (the last put, never read ahead) every get
 * finds its tensor read ahead; and an explicit list does so from the first get on.  Each tensor
 * is still read from storage exactly once.
 */
static void prefetch_order(void **state)
{
	enum { N = 24 };
	const uint64_t len = 100000;
	struct llmio_store_stats st = {.stats_size = sizeof(st)};
	struct llmio_error e = {0};
	uint64_t h[N], list[N];
	unsigned char *buf = malloc(len), *want = malloc(len);
	const char *tg[1] = {dir};
	struct llmio_store *s;

	(void)state;
	assert_non_null(buf);
	assert_non_null(want);
	s = open_store("", tg, 1, 16u << 20, STAGING, 512u << 10);
	assert_int_equal(llmio_store_hint(s, LLMIO_STORE_ORDER_REVERSE, NULL, 0, &e), 0);
	put_many(s, h, N, len, buf);
	for (int i = N - 1; i >= 0; i--)
		get_check(s, h[i], (unsigned)i + 7, len, buf, want);
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.prefetch_hits, N - 1);
	assert_int_equal(st.device_bytes_read, N * aligned(len));
	assert_true(st.peak_readahead_bytes > 0 && st.peak_readahead_bytes <= 512u << 10);

	/* a plan: every other tensor, then the rest */
	for (unsigned i = 0; i < N; i++)
		list[i] = h[(i * 2) % N + (i >= N / 2)];
	assert_int_equal(llmio_store_hint(s, LLMIO_STORE_ORDER_LIST, list, N, &e), 0);
	for (unsigned i = 0; i < N; i++)
		get_check(s, list[i], (unsigned)((i * 2) % N + (i >= N / 2)) + 7, len, buf, want);
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.prefetch_hits, N - 1 + N);
	assert_int_equal(st.device_bytes_read, 2 * N * aligned(len));

	/* an explicit prefetch, and a release of a prefetched tensor gives its buffers back */
	assert_int_equal(llmio_store_hint(s, LLMIO_STORE_ORDER_NONE, NULL, 0, &e), 0);
	assert_int_equal(llmio_store_prefetch(s, h[3], &e), 0);
	assert_int_equal(llmio_store_release(s, h[3], &e), 0);
	assert_int_equal(llmio_store_prefetch(s, h[4], &e), 0);
	get_check(s, h[4], 4 + 7, len, buf, want);
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.prefetch_hits, 2 * N);
	llmio_store_destroy(s);
	free(buf);
	free(want);
}

/*
 * A load far beyond the budgets: 20 MB through 512 KiB of staging with a 192 KiB read-ahead
 * window; neither is ever exceeded, and everything comes back.
 */
static void budgets(void **state)
{
	enum { N = 200 };
	const uint64_t len = 100000, staging = 512u << 10, ra = 192u << 10;
	struct llmio_store_stats st = {.stats_size = sizeof(st)};
	struct llmio_error e = {0};
	unsigned char *buf = malloc(len), *want = malloc(len);
	const char *tg[1] = {dir};
	uint64_t h[N];
	struct llmio_store *s;

	(void)state;
	assert_non_null(buf);
	assert_non_null(want);
	s = open_store("", tg, 1, 32u << 20, staging, ra);
	assert_int_equal(llmio_store_hint(s, LLMIO_STORE_ORDER_REVERSE, NULL, 0, &e), 0);
	put_many(s, h, N, len, buf);
	for (int i = N - 1; i >= 0; i--)
		get_check(s, h[i], (unsigned)i + 7, len, buf, want);
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.bytes_put, N * len);
	assert_true(st.peak_staging_bytes > 0);
	assert_true(st.peak_staging_bytes <= staging);
	assert_true(st.peak_readahead_bytes > 0);
	assert_true(st.peak_readahead_bytes <= ra);
	assert_true(st.prefetch_hits > 0);
	llmio_store_destroy(s);
	free(buf);
	free(want);
}

/* Every stripe unit lands on its target: unit u on target u % 3 at (u / 3) * stripe. */
static void striping(void **state)
{
	const uint64_t len = 6 * STRIPE + 1000;
	struct llmio_store_stats st = {.stats_size = sizeof(st)};
	struct llmio_error e = {0};
	char p[3][1100];
	const char *tg[3] = {p[0], p[1], p[2]};
	unsigned char *buf = malloc(len), *onfile = malloc(STRIPE);
	struct llmio_store *s;
	uint64_t h;

	(void)state;
	assert_non_null(buf);
	assert_non_null(onfile);
	for (int i = 0; i < 3; i++) {
		at(p[i], sizeof(p[i]), i == 0 ? "stripe0" : i == 1 ? "stripe1" : "stripe2");
		unlink(p[i]);
	}
	s = open_store("io_uring", tg, 3, 4u << 20, STAGING, 0);
	fill(buf, len, 5);
	assert_int_equal(llmio_store_put(s, buf, len, 0, &h, &e), 0);
	assert_int_equal(llmio_store_flush(s, &e), 0);
	for (unsigned u = 0; u < 7; u++) {
		int fd = open(p[u % 3], O_RDONLY);
		uint64_t n = u < 6 ? STRIPE : 1000;

		assert_true(fd >= 0);
		assert_int_equal(pread(fd, onfile, n, (off_t)(u / 3) * STRIPE), (ssize_t)n);
		assert_memory_equal(onfile, buf + (uint64_t)u * STRIPE, n);
		close(fd);
	}
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.device_bytes_written, 6 * STRIPE + 4096);
	llmio_store_destroy(s);
	for (int i = 0; i < 3; i++)
		assert_int_equal(access(p[i], F_OK), -1); /* created by the store: removed */
	free(buf);
	free(onfile);
}

static void errors_handles(void **state)
{
	struct llmio_error e = {0};
	const char *tg[1] = {dir};
	unsigned char buf[5000];
	struct llmio_store *s;
	uint64_t h;

	(void)state;
	s = open_store("psync", tg, 1, 1u << 20, STAGING, 0);
	assert_int_equal(llmio_store_get(s, 0x3039, buf, 10, true, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "0x3039"));
	assert_int_equal(llmio_store_release(s, 0x3039, &e), -ENOENT);
	assert_int_equal(llmio_store_prefetch(s, 0x3039, &e), -ENOENT);
	memset(buf, 1, sizeof(buf));
	assert_int_equal(llmio_store_put(s, buf, sizeof(buf), 0, &h, &e), 0);
	assert_int_equal(llmio_store_get(s, h, buf, 10, true, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "5000"));
	assert_int_equal(llmio_store_release(s, h, &e), 0);
	assert_int_equal(llmio_store_get(s, h, buf, sizeof(buf), true, &e), -ENOENT);
	{
		char hex[32];

		snprintf(hex, sizeof(hex), "%#llx", (unsigned long long)h);
		assert_non_null(strstr(e.msg, hex));
	}
	assert_int_equal(llmio_store_release(s, h, &e), -ENOENT);
	assert_int_equal(llmio_store_put(s, buf, 0, 0, &h, &e), -EINVAL);
	llmio_store_destroy(s);
}

/* A full store names the target and the bytes; freeing space makes the put work again. */
static void errors_full(void **state)
{
	struct llmio_error e = {0};
	char p[1100];
	const char *tg[1] = {p};
	unsigned char *buf = calloc(1, 200000);
	struct llmio_store *s;
	uint64_t h1, h2;

	(void)state;
	assert_non_null(buf);
	at(p, sizeof(p), "full");
	unlink(p);
	s = open_store("psync", tg, 1, 4 * STRIPE, 2 * STRIPE * 2, 0);
	assert_int_equal(llmio_store_put(s, buf, 200000, 0, &h1, &e), 0);
	assert_int_equal(llmio_store_put(s, buf, 100000, 0, &h2, &e), -ENOSPC);
	assert_non_null(strstr(e.msg, p));
	assert_non_null(strstr(e.msg, "102400"));
	assert_int_equal(llmio_store_release(s, h1, &e), 0);
	assert_int_equal(llmio_store_put(s, buf, 100000, 0, &h2, &e), 0);
	llmio_store_destroy(s);
	free(buf);
}

/* A user's file is never written: the store refuses it and leaves it as it was. */
static void errors_user_file(void **state)
{
	struct llmio_store_opts o;
	struct llmio_store *s = NULL;
	struct llmio_error e = {0};
	char p[1100], back[6] = "";
	const char *tg[1] = {p};
	int fd;

	(void)state;
	at(p, sizeof(p), "users-file");
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "mine\n", 5), 5);
	close(fd);
	llmio_store_opts_init(&o);
	o.targets = tg;
	o.ntargets = 1;
	o.capacity = 1u << 20;
	assert_int_equal(llmio_store_create(&o, &s, &e), -EEXIST);
	assert_null(s);
	assert_non_null(strstr(e.msg, p));
	fd = open(p, O_RDONLY);
	assert_int_equal(read(fd, back, 5), 5);
	close(fd);
	assert_string_equal(back, "mine\n");
	unlink(p);

	/* and bad budgets are refused with the fix */
	o.staging_bytes = STRIPE;
	o.stripe_size = STRIPE;
	at(p, sizeof(p), "never-made");
	assert_int_equal(llmio_store_create(&o, &s, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "staging_bytes"));
	assert_int_equal(access(p, F_OK), -1);
}

/* A child process that opens a store in `where` and waits to be killed; its pid. */
static pid_t store_holder(const char *where)
{
	int fds[2];
	char c = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct llmio_store_opts o;
		struct llmio_store *s = NULL;
		const char *tg[1] = {where};

		llmio_store_opts_init(&o);
		snprintf(o.engine, sizeof(o.engine), "psync");
		o.targets = tg;
		o.ntargets = 1;
		o.capacity = 1u << 20;
		c = llmio_store_create(&o, &s, NULL) ? 'x' : 'y';
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	assert_int_equal(c, 'y');
	return pid;
}

/* Store files in work (the holders' and ours). */
static unsigned store_files(const char *work)
{
	char cmd[4200];
	unsigned n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls %.4096s | grep -c '^store\\.'", work);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%u", &n), 1);
	pclose(f);
	return n;
}

static void kill_holder(pid_t pid)
{
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/*
 * A store file left by a process killed outright (SIGKILL: no destroy ran) is removed by the
 * next store in that directory, and counted; the file of a live store is left alone.
 */
static void stale_files(void **state)
{
	struct llmio_store_stats st = {.stats_size = sizeof(st)};
	char where[1100], work[1200];
	const char *tg[1] = {where};
	struct llmio_store *s;
	pid_t dead, live;

	(void)state;
	at(where, sizeof(where), "stale");
	mkdir(where, 0755);
	snprintf(work, sizeof(work), "%s/llmio-work", where);
	dead = store_holder(where);
	live = store_holder(where);
	kill_holder(dead);
	assert_int_equal(store_files(work), 2); /* the dead one's file is still there */
	s = open_store("psync", tg, 1, 1u << 20, STAGING, 0);
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.reclaimed_files, 1);
	assert_int_equal(st.reclaimed_bytes, 1u << 20);
	assert_int_equal(store_files(work), 2); /* the live one's and ours */
	llmio_store_destroy(s);
	assert_int_equal(store_files(work), 1);

	kill_holder(live);
	s = open_store("psync", tg, 1, 1u << 20, STAGING, 0);
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.reclaimed_files, 1);
	llmio_store_destroy(s);
	assert_int_equal(store_files(work), 0);
}

/* The next event is one error of code res; returns its handle. */
static uint64_t await_error(struct llmio_store *s, int res)
{
	struct llmio_store_event ev[4];
	int n = 0;

	while (n == 0) {
		n = llmio_store_poll(s, ev, 4);
		if (!n)
			usleep(1000);
	}
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].type, LLMIO_STORE_EV_ERROR);
	assert_int_equal(ev[0].res, res);
	return ev[0].handle;
}

/*
 * The target loses its data under the store (truncated to nothing): gets, waiting or not and
 * read ahead or not, fail with the cause naming the file, and the caller's buffers keep what
 * they held (nothing zero-filled).
 */
static void target_fails(const char *engine)
{
	enum { N = 4 };
	const uint64_t len = 150000;
	struct llmio_store_event ev[4];
	struct llmio_error e = {0};
	char p[1100];
	const char *tg[1] = {p};
	unsigned char *buf = malloc(len), *mark = malloc(len);
	struct llmio_store *s;
	uint64_t h[N];

	assert_non_null(buf);
	assert_non_null(mark);
	if (!runs(engine))
		return;
	at(p, sizeof(p), "truncated");
	unlink(p);
	s = open_store(engine, tg, 1, 4u << 20, STAGING, 256u << 10);
	put_many(s, h, N, len, buf);
	assert_int_equal(llmio_store_flush(s, &e), 0);
	assert_int_equal(llmio_store_poll(s, ev, 4), N); /* the puts' events */
	assert_int_equal(truncate(p, 0), 0);
	memset(mark, 0xaa, len);

	memcpy(buf, mark, len);
	assert_int_equal(llmio_store_get(s, h[0], buf, len, true, &e), -EIO);
	assert_non_null(strstr(e.msg, p));
	assert_memory_equal(buf, mark, len);

	memcpy(buf, mark, len);
	assert_int_equal(llmio_store_get(s, h[1], buf, len, false, &e), 0);
	assert_int_equal(await_error(s, -EIO), h[1]);
	assert_memory_equal(buf, mark, len);

	/* read ahead: the prefetch fails, the get reports it */
	assert_int_equal(llmio_store_hint(s, LLMIO_STORE_ORDER_LIST, &h[2], 2, &e), 0);
	memcpy(buf, mark, len);
	assert_int_equal(llmio_store_get(s, h[2], buf, len, true, &e), -EIO);
	assert_non_null(strstr(e.msg, p));
	assert_memory_equal(buf, mark, len);
	llmio_store_destroy(s);
	free(buf);
	free(mark);
}

static void target_fails_test(void **state)
{
	target_fails(*state);
}
#define TARGET_FAILS(engine)                                                                       \
	{                                                                                          \
		"target_fails_" engine, target_fails_test, NULL, NULL, (void *)engine              \
	}

/* Fill the filesystem holding dir with a file until a write fails for lack of space. */
static void fill_up(const char *path)
{
	static char chunk[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	memset(chunk, 7, sizeof(chunk));
	while (write(fd, chunk, sizeof(chunk)) == (ssize_t)sizeof(chunk))
		;
	close(fd);
}

/*
 * A write that fails (its filesystem full: a 1 MiB tmpfs whose space under the store file was
 * given away) loses nothing silently: the put's event is an error with the cause, the next
 * flush returns it naming the tensor and the file, and gets of the tensor return it.
 * Skipped unless root (mount).
 */
static void put_fails(void **state)
{
	struct llmio_store_opts o;
	struct llmio_store *s = NULL;
	struct llmio_error e = {0};
	char mnt[1100], p[1200], filler[1200], cmd[1300];
	const char *tg[1] = {p};
	static unsigned char buf[100000], back[100000];
	uint64_t h;
	int fd;

	(void)state;
	at(mnt, sizeof(mnt), "tmpfs");
	mkdir(mnt, 0755);
	snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=1m tmpfs %s 2>/dev/null", mnt);
	if (geteuid() != 0 || system(cmd) != 0) {
		print_message("cannot mount a tmpfs (needs root): failing writes not tested\n");
		skip();
	}
	snprintf(p, sizeof(p), "%s/store", mnt);
	snprintf(filler, sizeof(filler), "%s/filler", mnt);
	llmio_store_opts_init(&o);
	o.targets = tg; /* the default engine: io_uring where it runs */
	o.ntargets = 1;
	o.capacity = 512u << 10;
	o.stripe_size = STRIPE;
	o.staging_bytes = 4 * STRIPE;
	o.direct = false;
	assert_int_equal(llmio_store_create(&o, &s, &e), 0);
	/* the store's preallocated space goes back to the filesystem, and others take it */
	fd = open(p, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 512u << 10),
	                 0);
	close(fd);
	fill_up(filler);

	memset(buf, 3, sizeof(buf));
	assert_int_equal(llmio_store_put(s, buf, sizeof(buf), 0, &h, &e), 0);
	await_error(s, -ENOSPC);
	assert_int_equal(llmio_store_flush(s, &e), -ENOSPC);
	assert_non_null(strstr(e.msg, p));
	assert_int_equal(llmio_store_flush(s, &e), 0); /* reported once */
	memset(buf, 0xaa, sizeof(buf));
	assert_int_equal(llmio_store_get(s, h, buf, sizeof(buf), true, &e), -ENOSPC);
	assert_non_null(strstr(e.msg, "put failed"));
	assert_int_equal(buf[0], 0xaa);
	/* read ahead right behind a put that will fail: the get fails too, nothing is read */
	memset(buf, 3, sizeof(buf));
	assert_int_equal(llmio_store_put(s, buf, sizeof(buf), LLMIO_STORE_BORROW, &h, &e), 0);
	assert_int_equal(llmio_store_hint(s, LLMIO_STORE_ORDER_LIST, &h, 1, &e), 0);
	memset(back, 0xaa, sizeof(back));
	assert_int_equal(llmio_store_get(s, h, back, sizeof(back), true, &e), -ENOSPC);
	assert_int_equal(back[0], 0xaa);
	await_error(s, -ENOSPC);
	llmio_store_destroy(s);
	snprintf(cmd, sizeof(cmd), "umount %s", mnt);
	assert_int_equal(system(cmd), 0);
	rmdir(mnt);
}

/* Whatever a failed check left: the file-size limit lifted, SIGXFSZ back to its default. */
static int restore_fsize(void **state)
{
	struct rlimit r;

	(void)state;
	if (getrlimit(RLIMIT_FSIZE, &r) == 0) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_FSIZE, &r);
	}
	signal(SIGXFSZ, SIG_DFL);
	return 0;
}

/*
 * A put that fails with a prefetch (the order hint's read-ahead, and an explicit one) and a
 * non-waiting get queued behind it, deterministically: the target refuses writes past 4 MiB
 * (RLIMIT_FSIZE, so no root is needed; SIGXFSZ ignored), and the I/O thread is held while the
 * three are queued, so they are all behind the put whatever the timing.  The get fails with
 * the put's cause and leaves the buffer as it was, the put's event and the next flush return
 * the cause, the read-ahead window is empty again, and the store goes on working: later
 * tensors round-trip and are read ahead.
 */
static void put_fails_prefetch(const char *engine)
{
	const uint64_t limit = 4u << 20, len = 100000;
	struct llmio_store_stats st = {.stats_size = sizeof(st)};
	struct llmio_error e = {0};
	struct rlimit old, lim;
	char path[1100], sub[1200];
	const char *tg[1] = {sub};
	unsigned char *big = malloc(limit), *buf = malloc(len), *back = malloc(len);
	uint64_t a, b, c, d;
	struct llmio_store *s;
	void (*prev)(int);

	if (!runs(engine))
		return;
	assert_non_null(big);
	assert_non_null(buf);
	assert_non_null(back);
	snprintf(sub, sizeof(sub), "%s-efbig", at(path, sizeof(path), engine));
	mkdir(sub, 0755);
	s = open_store(engine, tg, 1, 16u << 20, STAGING, 512u << 10);
	/* the first tensor fills the store's first 4 MiB: the next one lands past the limit */
	fill(big, limit, 1);
	assert_int_equal(llmio_store_put(s, big, limit, LLMIO_STORE_COPY, &a, &e), 0);
	assert_int_equal(llmio_store_flush(s, &e), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = limit;
	prev = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	store_hold_io(s, true);
	fill(buf, len, 2);
	assert_int_equal(llmio_store_put(s, buf, len, LLMIO_STORE_BORROW, &b, &e), 0);
	assert_int_equal(llmio_store_hint(s, LLMIO_STORE_ORDER_LIST, &b, 1, &e), 0);
	assert_int_equal(llmio_store_prefetch(s, b, &e), 0); /* on its way already */
	assert_true(s->ra_used > 0);                         /* queued behind the put */
	memset(back, 0xaa, len);
	assert_int_equal(llmio_store_get(s, b, back, len, false, &e), 0);
	store_hold_io(s, false);
	assert_int_equal(llmio_store_wait(s, b, &e), -EFBIG);
	assert_non_null(strstr(e.msg, "put failed"));
	for (uint64_t i = 0; i < len; i++)
		assert_int_equal(back[i], 0xaa);
	/* events: a's put, then b's put and b's get failing with the cause (all reaped by now) */
	{
		struct llmio_store_event ev[8];

		assert_int_equal(llmio_store_poll(s, ev, 8), 3);
		assert_true(ev[0].handle == a && ev[0].type == LLMIO_STORE_EV_PUT);
		for (int i = 1; i < 3; i++)
			assert_true(ev[i].handle == b && ev[i].type == LLMIO_STORE_EV_ERROR &&
			            ev[i].res == -EFBIG);
	}
	assert_int_equal(llmio_store_flush(s, &e), -EFBIG);
	assert_non_null(strstr(e.msg, sub));
	assert_int_equal(llmio_store_get(s, b, back, len, true, &e), -EFBIG);
	assert_int_equal(s->ra_used, 0); /* the failed prefetch gave its window back */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, prev);

	/* the store goes on: the failed tensor's space is reused, read-ahead hits again */
	assert_int_equal(llmio_store_release(s, b, &e), 0);
	assert_int_equal(llmio_store_release(s, a, &e), 0);
	assert_int_equal(llmio_store_hint(s, LLMIO_STORE_ORDER_REVERSE, NULL, 0, &e), 0);
	fill(buf, len, 3);
	assert_int_equal(llmio_store_put(s, buf, len, LLMIO_STORE_COPY, &c, &e), 0);
	fill(buf, len, 4);
	assert_int_equal(llmio_store_put(s, buf, len, LLMIO_STORE_COPY, &d, &e), 0);
	get_check(s, d, 4, len, back, buf);
	get_check(s, c, 3, len, back, buf);
	assert_int_equal(llmio_store_stats(s, &st), 0);
	assert_int_equal(st.prefetch_hits, 2); /* the failed one's get, and c read ahead */
	assert_int_equal(llmio_store_flush(s, &e), 0);
	llmio_store_destroy(s);
	free(big);
	free(buf);
	free(back);
}

static void put_fails_prefetch_test(void **state)
{
	put_fails_prefetch(*state);
}
#define PUT_FAILS_PREFETCH(engine)                                                                 \
	{                                                                                          \
		"put_fails_prefetch_" engine, put_fails_prefetch_test, NULL, restore_fsize,        \
		        (void *)engine                                                             \
	}

/*
 * Reads ahead of queued writes (docs/store.md, "Operation order"): with the I/O thread held, 64
 * borrowed puts are queued, then a non-waiting get of a tensor already stored, then a put of a
 * tensor C and a non-waiting get of C.  Released, the get of the stored tensor is served before
 * the queued puts: on psync (each I/O done when it is queued) its event comes before every one
 * of theirs; on io_uring before all but the puts in flight with it (iodepth 8), where one FIFO
 * would have issued it after the 64 puts and so after at least 56 of them completed.  The get
 * of C waits for C's put (its event follows it) and reads C's bytes; every tensor comes back
 * byte for byte.
 */
static void reads_first(const char *engine)
{
	enum { NPUT = 64 };
	const uint64_t len = STRIPE, depth = 8;
	struct llmio_store_event ev[NPUT + 8];
	struct llmio_error e = {0};
	const char *tg[1] = {dir};
	unsigned char *big = NULL, *a, *back, *cb, *want;
	uint64_t ha, hc, h[NPUT];
	int n = 0, got_a = -1, put_c = -1, got_c = -1, puts_before = 0;
	struct llmio_store *s;

	if (!runs(engine))
		return;
	a = malloc(len);
	back = malloc(len);
	cb = malloc(len);
	want = malloc(len);
	assert_non_null(a);
	assert_non_null(back);
	assert_non_null(cb);
	assert_non_null(want);
	assert_int_equal(posix_memalign((void **)&big, 4096, NPUT * len), 0);
	s = open_store(engine, tg, 1, 16u << 20, STAGING, 256u << 10);
	fill(a, len, 7);
	assert_int_equal(llmio_store_put(s, a, len, LLMIO_STORE_COPY, &ha, &e), 0);
	assert_int_equal(llmio_store_flush(s, &e), 0);
	while (llmio_store_poll(s, ev, 1) > 0) /* a's put */
		;
	store_hold_io(s, true);
	for (int i = 0; i < NPUT; i++) {
		fill(big + (size_t)i * len, len, 100 + (uint64_t)i);
		assert_int_equal(llmio_store_put(s, big + (size_t)i * len, len, LLMIO_STORE_BORROW,
		                                 &h[i], &e),
		                 0);
	}
	memset(back, 0xaa, len);
	assert_int_equal(llmio_store_get(s, ha, back, len, false, &e), 0);
	fill(cb, len, 8);
	assert_int_equal(llmio_store_put(s, cb, len, LLMIO_STORE_BORROW, &hc, &e), 0);
	memset(want, 0x55, len);
	assert_int_equal(llmio_store_get(s, hc, want, len, false, &e), 0);
	store_hold_io(s, false);
	assert_int_equal(llmio_store_wait(s, ha, &e), 0);
	assert_int_equal(llmio_store_wait(s, hc, &e), 0);
	assert_int_equal(llmio_store_flush(s, &e), 0);
	for (int m; (m = llmio_store_poll(s, ev + n, NPUT + 8 - n)) > 0;)
		n += m;
	assert_int_equal(n, NPUT + 3);
	for (int i = 0; i < n; i++) {
		if (ev[i].type == LLMIO_STORE_EV_GOT && ev[i].handle == ha)
			got_a = i;
		else if (ev[i].type == LLMIO_STORE_EV_GOT && ev[i].handle == hc)
			got_c = i;
		else if (ev[i].type == LLMIO_STORE_EV_PUT && ev[i].handle == hc)
			put_c = i;
		else
			assert_int_equal(ev[i].type, LLMIO_STORE_EV_PUT);
		if (ev[i].type == LLMIO_STORE_EV_PUT && got_a < 0)
			puts_before++;
	}
	print_message("%s: the get came after %d of %d queued puts\n", engine, puts_before,
	              NPUT + 1);
	assert_true(got_a >= 0 && put_c >= 0 && got_c > put_c);
	if (!strcmp(engine, "psync"))
		assert_int_equal(puts_before, 0);
	else
		assert_true(puts_before < NPUT - (int)depth);
	fill(a, len, 7);
	assert_memory_equal(back, a, len);
	fill(cb, len, 8);
	assert_memory_equal(want, cb, len);
	for (int i = 0; i < NPUT; i++)
		get_check(s, h[i], 100 + (unsigned)i, len, back, a);
	llmio_store_destroy(s);
	free(big);
	free(a);
	free(back);
	free(cb);
	free(want);
}

static void reads_first_test(void **state)
{
	reads_first(*state);
}
#define READS_FIRST(engine)                                                                        \
	{                                                                                          \
		"reads_first_" engine, reads_first_test, NULL, NULL, (void *)engine                \
	}

/*
 * A raw block device (a loop device over a file here): refused without allow_destructive, as
 * jobs refuse it; with it, tensors round-trip on the device itself.  Skipped unless root with
 * a free loop device.
 */
static void blockdev(void **state)
{
	struct llmio_store_opts o;
	struct llmio_store *s = NULL;
	struct llmio_error e = {0};
	char img[1100], cmd[2400], dev[64] = "";
	const char *tg[1] = {dev};
	unsigned char *buf = malloc(300000), *back = malloc(300000);
	uint64_t h;
	FILE *f;
	int rc;

	(void)state;
	assert_non_null(buf);
	assert_non_null(back);
	at(img, sizeof(img), "loop.img");
	snprintf(cmd, sizeof(cmd), "truncate -s 8M %s && losetup -f --show %s 2>/dev/null", img,
	         img);
	f = geteuid() == 0 ? popen(cmd, "r") : NULL;
	if (!f || !fgets(dev, sizeof(dev), f) || strncmp(dev, "/dev/", 5)) {
		if (f)
			pclose(f);
		free(buf);
		free(back);
		unlink(img);
		print_message(
		        "no loop device (needs root and losetup -f): raw devices not tested\n");
		skip();
	}
	pclose(f);
	dev[strcspn(dev, "\n")] = '\0';
	llmio_store_opts_init(&o);
	o.targets = tg;
	o.ntargets = 1;
	o.capacity = 4u << 20;
	o.stripe_size = STRIPE;
	o.staging_bytes = STAGING;
	rc = llmio_store_create(&o, &s, &e);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(e.msg, "allow_destructive"));
	assert_non_null(strstr(e.msg, dev));
	o.allow_destructive = true;
	o.capacity = 16u << 20; /* more than the 8 MiB device */
	assert_int_equal(llmio_store_create(&o, &s, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "capacity"));
	o.capacity = 4u << 20;
	rc = llmio_store_create(&o, &s, &e);
	if (rc)
		print_message("create on %s: %s\n", dev, e.msg);
	assert_int_equal(rc, 0);
	fill(buf, 300000, 3);
	assert_int_equal(llmio_store_put(s, buf, 300000, 0, &h, &e), 0);
	assert_int_equal(llmio_store_get(s, h, back, 300000, true, &e), 0);
	assert_memory_equal(back, buf, 300000);
	llmio_store_destroy(s);
	snprintf(cmd, sizeof(cmd), "losetup -d %s", dev);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(access(dev, F_OK), 0); /* a device is never removed */
	unlink(img);
	free(buf);
	free(back);
}

/* The fake libraries sit next to this program, in the build tree only (as test_gpu). */
static void use_fakes(void)
{
	char exe[2048], path[2300];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/fake_cuda/libcudart.so.12", dirname(exe));
	setenv("LLMIO_CUDART", path, 1);
	snprintf(path, sizeof(path), "%s/fake_cuda/libcufile.so.0", exe);
	setenv("LLMIO_CUFILE", path, 1);
	setenv("LLMIO_FAKE_CUDA", "1", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        ROUNDTRIP("psync"),
	        ROUNDTRIP("libaio"),
	        ROUNDTRIP("io_uring"),
	        ROUNDTRIP("mmap"),
	        ROUNDTRIP("gds"),
	        ROUNDTRIP("cuda-bounce"),
	        cmocka_unit_test(prefetch_order),
	        cmocka_unit_test(budgets),
	        cmocka_unit_test(striping),
	        cmocka_unit_test(errors_handles),
	        cmocka_unit_test(errors_full),
	        cmocka_unit_test(errors_user_file),
	        cmocka_unit_test(stale_files),
	        TARGET_FAILS("psync"),
	        TARGET_FAILS("io_uring"),
	        cmocka_unit_test(blockdev),
	        cmocka_unit_test(put_fails),
	        NO_COPY("psync"),
	        NO_COPY("libaio"),
	        NO_COPY("io_uring"),
	        NO_COPY("mmap"),
	        CONGRUENT("psync"),
	        CONGRUENT("libaio"),
	        CONGRUENT("io_uring"),
	        CONGRUENT("mmap"),
	        PUT_FAILS_PREFETCH("psync"),
	        PUT_FAILS_PREFETCH("io_uring"),
	        READS_FIRST("psync"),
	        READS_FIRST("io_uring"),
	};
	const char *base = getenv("LLMIO_TEST_DIR");

	use_fakes();
	snprintf(dir, sizeof(dir), "%s/store", base ? base : "/tmp/llmio-test");
	mkdir(base ? base : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
