/* SPDX-License-Identifier: MIT */
/*
 * The engine conformance suite: every engine that can run here, buffered and with O_DIRECT
 * where it supports it, at iodepth 1 and 32 (and in each of the engine's own test_variants),
 * writes a known pattern, reads it back and checks every byte; reads at end of file come back
 * short; a failing I/O comes back as -errno in the request with its offset intact.  And the
 * registry: a malformed engine is named with what it lacks, aliases and options find their
 * engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "job/target.h"
#include "base/error.h"
#include "engine/engine.h"
#include "llmio/result.h"
#include "engine_drive.h"

#define BS        16384
#define NBLOCKS   64
#define FILE_SIZE ((uint64_t)BS * NBLOCKS)

static char dir[4096];

struct rig {
	const struct engine_ops *e;
	struct engine_ctx ctx;
	void *opts;
	void *bufs[64];
	struct io_req ios[64];
	unsigned depth;
	int fd;
	uint64_t size;
	struct engine_target target; /* an engine's own target (ENGINE_CAP_OWN_TARGET) */
};

/*
 * The own targets the suite can drive here, per engine: spdk's namespace of the fake SPDK
 * (tests/fake_spdk, 4 MiB of memory, 512-byte LBAs).
 */
static const char *own_target_name(const struct engine_ops *e)
{
	return !strcmp(e->name, "spdk") && getenv("LLMIO_TEST_FAKE_SPDK")
	               ? "trtype=PCIe traddr=0000:00:04.0 ns=1"
	               : NULL;
}

static int rig_open(struct rig *r, const struct engine_ops *e, const char *eopts, int fd,
                    uint64_t size, unsigned depth, bool direct, bool writable)
{
	struct engine_setup s;
	struct llmio_error err = {0};
	int ret;

	memset(r, 0, sizeof(*r));
	r->e = e;
	r->fd = fd;
	r->size = size;
	r->depth = (e->caps & ENGINE_CAP_ASYNC) ? depth : 1;
	r->opts = calloc(1, e->opts_size ? e->opts_size : 1);
	assert_non_null(r->opts);
	ret = engine_opts_parse(e, eopts, r->opts, &err);
	assert_int_equal(ret, 0);
	for (unsigned i = 0; i < r->depth; i++) {
		if (e->buf_alloc) /* host memory: ENGINE_CAP_HOST_BUFS (the suite checks) */
			assert_int_equal(e->buf_alloc(r->opts, &r->bufs[i], BS, NULL, &err), 0);
		else
			assert_int_equal(posix_memalign(&r->bufs[i], 4096, BS), 0);
		r->ios[i].buf = r->bufs[i];
		r->ios[i].buf_idx = (uint16_t)i;
	}
	if (own_target_name(e)) {
		struct engine_target_req rq = {
		        .name = own_target_name(e),
		        .size = size,
		        .bs = BS,
		        .writes = writable,
		        .allow_destructive = true,
		};

		assert_int_equal(e->target_resolve(r->opts, &rq, &r->target, &err), 0);
		assert_int_equal(r->target.n, 1);
		r->size = r->target.sizes[0];
	}
	s = drive_setup(&r->fd, &r->size, r->bufs, r->depth, BS, direct, writable, r->opts);
	s.names = (const char *const *)r->target.names;
	ret = e->init(&r->ctx, &s, &err);
	if (ret)
		print_message("init %s (%s): %s\n", e->name, eopts, err.msg);
	return ret;
}

static void rig_close(struct rig *r)
{
	if (r->ctx.priv)
		r->e->cleanup(&r->ctx);
	for (unsigned i = 0; i < r->depth; i++) {
		if (r->e->buf_free)
			r->e->buf_free(r->opts, r->bufs[i]);
		else
			free(r->bufs[i]);
	}
	for (unsigned i = 0; i < r->target.n; i++)
		free(r->target.names[i]);
	free(r->target.names);
	free(r->target.sizes);
	free(r->opts);
}

/* One drive of the conformance tests: n I/Os of len at off0 + i*BS, checked by done(). */
struct host_drive {
	struct rig *r;
	uint64_t off0;
	uint32_t len;
	uint8_t op;
	void (*done)(struct rig *, struct io_req *, unsigned);
};

static void host_prep(void *arg, struct io_req *io, unsigned i)
{
	const struct host_drive *h = arg;

	io->off = h->off0 + (uint64_t)i * BS;
	io->len = h->len;
	io->op = h->op;
	if (h->op == ENGINE_OP_WRITE)
		target_pattern(io->buf, BS, io->off, 77);
	else
		memset(io->buf, 0, BS);
}

static void host_done(void *arg, struct io_req *io, unsigned i)
{
	const struct host_drive *h = arg;

	h->done(h->r, io, i);
}

/* conformance's second pass over an engine with queue_batch(): the batches through it */
static bool batched;

static void drive(struct rig *r, unsigned n, uint64_t off0, uint32_t len, uint8_t op,
                  void (*done)(struct rig *, struct io_req *, unsigned))
{
	struct host_drive h = {r, off0, len, op, done};
	struct drive d = {r->e, &r->ctx, r->ios, r->depth, host_prep, host_done, &h};

	drive_ios_batched(&d, n, batched);
}

static void wrote(struct rig *r, struct io_req *io, unsigned block)
{
	(void)r;
	(void)block;
	assert_int_equal(io->res, io->len);
}

static void read_back(struct rig *r, struct io_req *io, unsigned block)
{
	static char expect[BS];

	(void)r;
	assert_int_equal(io->res, io->len);
	target_pattern(expect, BS, (uint64_t)block * BS, 77);
	assert_memory_equal(io->buf, expect, BS);
}

static int open_file(const char *name, int flags, uint64_t size)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags | O_CREAT, 0644);
	if (fd < 0)
		return -errno;
	if (size && ftruncate(fd, (off_t)size))
		return -errno;
	return fd;
}

/* Write the pattern, make it durable, read it back and check every byte. */
static void roundtrip(const struct engine_ops *e, const char *eopts, bool direct, unsigned qd)
{
	struct rig r;
	int fd = own_target_name(e)
	                 ? -1
	                 : open_file("conform", O_RDWR | (direct ? O_DIRECT : 0), FILE_SIZE);

	assert_true(fd >= 0 || own_target_name(e));
	assert_int_equal(rig_open(&r, e, eopts, fd, FILE_SIZE, qd, direct, true), 0);
	drive(&r, NBLOCKS, 0, BS, ENGINE_OP_WRITE, wrote);
	if (e->sync)
		assert_int_equal(e->sync(&r.ctx, 0), 0);
	else if (fd >= 0)
		assert_int_equal(fsync(fd), 0);
	if (!direct && fd >= 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	drive(&r, NBLOCKS, 0, BS, ENGINE_OP_READ, read_back);
	rig_close(&r);
	if (fd >= 0)
		close(fd);
}

static void short_read(struct rig *r, struct io_req *io, unsigned block)
{
	(void)r;
	(void)block;
	assert_int_equal(io->res, 1808); /* 10000 - 8192 */
}

static void at_eof(struct rig *r, struct io_req *io, unsigned block)
{
	(void)r;
	(void)block;
	assert_int_equal(io->res, 0);
}

/* A file of 10000 bytes: a read at 8192 returns 1808 bytes, one at 16384 returns 0. */
static void eof(const struct engine_ops *e)
{
	struct rig r;
	int fd = open_file("eof", O_RDWR | O_TRUNC, 10000);

	assert_true(fd >= 0);
	assert_int_equal(rig_open(&r, e, "", fd, 10000, 4, false, true), 0);
	drive(&r, 1, 8192, 4096, ENGINE_OP_READ, short_read);
	drive(&r, 1, 16384, 4096, ENGINE_OP_READ, at_eof);
	rig_close(&r);
	close(fd);
}

static void failed(struct rig *r, struct io_req *io, unsigned block)
{
	(void)r;
	assert_int_equal(io->res, -EBADF);
	assert_int_equal(io->off, 4096 + (uint64_t)block * BS); /* the offset stays with it */
}

/* Reading a write-only descriptor fails per I/O with EBADF; the engine itself carries on. */
static void per_io_error(const struct engine_ops *e)
{
	struct rig r;
	int fd = open_file("wronly", O_WRONLY, FILE_SIZE);

	assert_true(fd >= 0);
	if (e->caps & ENGINE_CAP_MAPS_FILES) {
		/* mmap cannot map a write-only file: it must refuse at init, not crash later */
		assert_true(rig_open(&r, e, "", fd, FILE_SIZE, 1, false, false) < 0);
		rig_close(&r);
		close(fd);
		return;
	}
	assert_int_equal(rig_open(&r, e, "", fd, FILE_SIZE, 8, false, false), 0);
	drive(&r, 16, 4096, BS, ENGINE_OP_READ, failed);
	rig_close(&r);
	close(fd);
}

/*
 * An engine's own target (a namespace) of 12 KiB: a read of 8 KiB at 8192 returns the 4 KiB
 * that are there, one at 16384 returns 0, as pread says at the end of a file.
 */
static void short_own(struct rig *r, struct io_req *io, unsigned block)
{
	(void)r;
	(void)block;
	assert_int_equal(io->res, 4096);
}

static void eof_own(const struct engine_ops *e)
{
	struct rig r;

	assert_int_equal(rig_open(&r, e, "", -1, 12288, 4, false, true), 0);
	drive(&r, 1, 8192, 8192, ENGINE_OP_READ, short_own);
	drive(&r, 1, 16384, 4096, ENGINE_OP_READ, at_eof);
	rig_close(&r);
}

static void misaligned(struct rig *r, struct io_req *io, unsigned block)
{
	(void)r;
	assert_int_equal(io->res, -EINVAL);
	assert_int_equal(io->off, 100 + (uint64_t)block * BS); /* the offset stays with it */
}

/* A device addresses whole blocks: an I/O off them fails alone, with EINVAL. */
static void misaligned_own(const struct engine_ops *e)
{
	struct rig r;

	assert_int_equal(rig_open(&r, e, "", -1, FILE_SIZE, 8, false, true), 0);
	drive(&r, 16, 100, BS, ENGINE_OP_READ, misaligned);
	rig_close(&r);
}

static bool direct_works(void)
{
	int fd = open_file("direct-probe", O_RDWR | O_DIRECT, 4096);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void conformance(void **state)
{
	bool dio = direct_works();
	unsigned tested = 0, own = 0;

	(void)state;
	if (!dio)
		print_message("O_DIRECT is not supported in %s: direct cases skipped\n", dir);
	for (size_t i = 0; i < engine_count(); i++) {
		const struct engine_ops *e = engine_at(i);
		char why[512];

		if (e->caps & ENGINE_CAP_NO_IO)
			continue; /* null moves no data; test_job checks its counts */
		if (e->caps & ENGINE_CAP_FILE_OPS)
			continue; /* no data either: tests/cli_fio_engines.sh checks them */
		if (e->buf_alloc && !(e->caps & ENGINE_CAP_HOST_BUFS))
			continue; /* GPU memory: test_gpu drives these engines */
		if ((e->caps & ENGINE_CAP_OWN_TARGET) && !own_target_name(e))
			continue; /* not files: tests/cli_s3.sh drives s3 against a server */
		if (e->probe(why, sizeof(why))) {
			print_message("skip %s: %s\n", e->name, why);
			continue;
		}
		for (int b = 0; b < (e->queue_batch ? 2 : 1); b++) {
			batched = b;
			for (size_t m = 0; engine_test_variant(e, m); m++) {
				for (unsigned qd = 1; qd <= 32; qd += 31) {
					print_message("%s %s qd=%u%s\n", e->name,
					              engine_test_variant(e, m), qd,
					              b ? " queue_batch" : "");
					roundtrip(e, engine_test_variant(e, m), false, qd);
					if (dio && (e->caps & ENGINE_CAP_DIRECT))
						roundtrip(e, engine_test_variant(e, m), true, qd);
				}
			}
			if (own_target_name(e)) {
				eof_own(e);
				misaligned_own(e);
			} else {
				eof(e);
				per_io_error(e);
			}
		}
		batched = false;
		tested++;
		own += own_target_name(e) != NULL;
	}
	assert_true(tested >= 4); /* psync, libaio, io_uring, mmap run on any Linux here */
	if (getenv("LLMIO_TEST_FAKE_SPDK"))
		assert_int_equal(own, 1); /* spdk, on the fake SPDK */
}

/* Every engine's own tables hold together: valid, and its test variants parse. */
static void tables(void **state)
{
	(void)state;
	for (size_t i = 0; i < engine_count(); i++) {
		const struct engine_ops *e = engine_at(i);
		/* ints, and an engine's strings (at most LLMIO_ENGINE_TEXT_MAX bytes) */
		int opts[64 + LLMIO_ENGINE_TEXT_MAX / sizeof(int)];
		struct llmio_error err = {0};

		assert_null(engine_missing(e));
		assert_true(e->opts_size <= sizeof(opts));
		for (size_t m = 0; engine_test_variant(e, m); m++)
			assert_int_equal(
			        engine_opts_parse(e, engine_test_variant(e, m), opts, &err), 0);
	}
}

static int no_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

static int no_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	(void)ctx, (void)s, (void)e;
	return 0;
}

static int no_queue(struct engine_ctx *ctx, struct io_req *io)
{
	(void)ctx, (void)io;
	return ENGINE_Q_COMPLETED;
}

static void no_cleanup(struct engine_ctx *ctx)
{
	(void)ctx;
}

static int no_buf_alloc(const void *opts, void **buf, size_t len, const void *init,
                        struct llmio_error *e)
{
	(void)opts;
	(void)buf;
	(void)len;
	(void)init;
	(void)e;
	return -ENOTSUP;
}

static void no_buf_free(const void *opts, void *buf)
{
	(void)opts;
	(void)buf;
}

/* A malformed engine is named with the callback it lacks, so its author knows what to add. */
static void missing_callbacks(void **state)
{
	static const struct llmio_optdesc custom[] = {
	        {.name = "x", .type = OPTD_BOOL, .def = "0", .fio_kind = OPTD_FIO_CUSTOM},
	        {.name = NULL},
	};
	struct engine_ops e = {
	        .abi_version = ENGINE_ABI_VERSION,
	        .name = "t",
	        .probe = no_probe,
	        .init = no_init,
	        .queue = no_queue,
	        .cleanup = no_cleanup,
	};

	(void)state;
	assert_null(engine_missing(&e));
	e.caps = ENGINE_CAP_ASYNC;
	assert_string_equal(engine_missing(&e), "reap (ENGINE_CAP_ASYNC)");
	e.caps = 0;
	e.opts = custom;
	assert_string_equal(engine_missing(&e), "fio_option (an option is OPTD_FIO_CUSTOM)");
	/* a string is a char array (not an int), and a result carries an engine's strings whole */
	struct strs {
		char a[1], b[LLMIO_ENGINE_TEXT_MAX];
	};
	struct llmio_optdesc strings[] = {
	        {.name = "a",
	         .type = OPTD_STRING,
	         .def = "",
	         .scope = OPTD_SCOPE_ENGINE,
	         .fio_kind = OPTD_FIO_VALUE,
	         OPTD_FIELD(struct strs, a)},
	        {.name = NULL},
	        {.name = NULL},
	};
	e.opts = strings;
	e.opts_size = sizeof(struct strs);
	assert_string_equal(
	        engine_missing(&e),
	        "an int field, or a char array for OPTD_STRING (an option's OPTD_FIELD)");
	strings[0] = (struct llmio_optdesc){.name = "b",
	                                    .type = OPTD_STRING,
	                                    .def = "",
	                                    .scope = OPTD_SCOPE_ENGINE,
	                                    .fio_kind = OPTD_FIO_VALUE,
	                                    OPTD_FIELD(struct strs, b)};
	assert_null(engine_missing(&e)); /* LLMIO_ENGINE_TEXT_MAX bytes: the most */
	strings[1] = strings[0];
	strings[1].name = "c";
	strings[1].offset = 0;
	strings[1].size = 2;
	assert_string_equal(engine_missing(&e),
	                    "OPTD_STRING fields of at most LLMIO_ENGINE_TEXT_MAX bytes together");
	e.opts = NULL;
	e.opts_size = 0;
	/* buffers of its own that this process cannot memcpy need the copies the store uses */
	e.buf_alloc = no_buf_alloc;
	e.buf_free = no_buf_free;
	assert_string_equal(
	        engine_missing(&e),
	        "buf_copy_in and buf_copy_out (buf_alloc without ENGINE_CAP_HOST_BUFS)");
	e.caps = ENGINE_CAP_HOST_BUFS;
	assert_null(engine_missing(&e));
	e.caps = 0;
	e.buf_alloc = NULL;
	e.buf_free = NULL;
	e.queue = NULL;
	assert_string_equal(engine_missing(&e), "queue");
}

/* Aliases and options lead to their engine through the registry, whatever the engine. */
static void registry_lookups(void **state)
{
	(void)state;
	assert_null(engine_find("no-such-engine"));
	assert_null(engine_owning_option("bs")); /* a job option, nobody's engine option */
	for (size_t i = 0; i < engine_count(); i++) {
		const struct engine_ops *e = engine_at(i);

		assert_ptr_equal(engine_find(e->name), e);
		for (const char *const *a = e->aliases; a && *a; a++)
			assert_ptr_equal(engine_find(*a), e);
		for (const struct llmio_optdesc *o = e->opts; o && o->name; o++) {
			/* the first engine with an option of that name (or alias) owns it */
			const struct engine_ops *owner = engine_owning_option(o->name);
			size_t k = 0;

			while (k < i && engine_at(k) != owner)
				k++;
			assert_ptr_equal(engine_at(k), owner);
			if (o->alias)
				assert_non_null(engine_owning_option(o->alias));
		}
	}
}

/*
 * What a result carries of its engine's options (engine_opts_values, llmio_result's
 * engine_options): every option in table order, defaults included, an enum by its name, a
 * number as parsed, from the same parse the job ran with.
 */
static void option_values(void **state)
{
	const struct engine_ops *mm = engine_find("mmap"), *uring = engine_find("io_uring");
	struct llmio_engine_optval v[LLMIO_ENGINE_OPTS_MAX];
	struct llmio_error e = {0};
	char text[LLMIO_ENGINE_TEXT_MAX];
	uint32_t str;
	int opts[64];

	(void)state;
	assert_true(mm->opts_size <= sizeof(opts) && uring->opts_size <= sizeof(opts));
	assert_int_equal(engine_opts_parse(mm, "madvise=random", opts, &e), 0);
	assert_int_equal(engine_opts_values(mm, opts, v, &str, text, sizeof(text)), 2);
	assert_string_equal(v[0].name, "populate");
	assert_string_equal(v[0].choice, "");
	assert_int_equal(v[0].value, 0);
	assert_string_equal(v[1].name, "madvise");
	assert_string_equal(v[1].choice, "random");
	assert_int_equal(engine_opts_parse(uring, "sqpoll=1,sq_thread_idle=20", opts, &e), 0);
	assert_int_equal(engine_opts_values(uring, opts, v, &str, text, sizeof(text)), 9);
	assert_string_equal(v[0].name, "sqpoll");
	assert_int_equal(v[0].value, 1);
	assert_string_equal(v[2].name, "sq_thread_idle");
	assert_int_equal(v[2].value, 20); /* ms, as the record says */
	assert_int_equal(str, 0);         /* no string among them */
	assert_int_equal(
	        engine_opts_values(engine_find("psync"), NULL, v, &str, text, sizeof(text)), 0);
}

/*
 * A string engine option (exec's arguments) holds commas and backslashes: engine_opts_append()
 * escapes them, engine_opts_parse() reads the value back whole, and a result carries it whole
 * (past choice's 64 bytes), with its bit set.
 */
static void string_options(void **state)
{
	const struct engine_ops *ex = engine_find("exec");
	const char *args = "-c package -qS --interval 5 -s Busy%,Bzy_MHz,Avg_MHz,CorWatt,PkgWatt,"
	                   "RAMWatt,PkgTmp a\\,b\\\\c \\x ,,";
	struct llmio_engine_optval v[LLMIO_ENGINE_OPTS_MAX];
	char line[512] = "", text[LLMIO_ENGINE_TEXT_MAX], *opts;
	struct llmio_error e = {0};
	uint32_t str;

	(void)state;
	assert_non_null(ex);
	opts = calloc(1, ex->opts_size);
	assert_non_null(opts);
	assert_int_equal(engine_opts_append(line, sizeof(line), "program", "/bin/echo"), 0);
	assert_int_equal(engine_opts_append(line, sizeof(line), "arguments", args), 0);
	assert_int_equal(engine_opts_append(line, sizeof(line), "grace_time", "3"), 0);
	assert_non_null(strstr(line, "Busy%\\,Bzy_MHz")); /* escaped in the text */
	assert_int_equal(engine_opts_parse(ex, line, opts, &e), 0);
	assert_int_equal(engine_opts_values(ex, opts, v, &str, text, sizeof(text)), 4);
	assert_int_equal(str, 3); /* program and arguments */
	assert_string_equal(text + v[0].value, "/bin/echo");
	assert_string_equal(v[1].name, "arguments");
	assert_string_equal(text + v[1].value, args);
	assert_int_equal(strlen(v[1].choice), sizeof(v[1].choice) - 1); /* its head only */
	assert_int_equal(v[2].value, 3);
	/* a value that does not fit leaves the text as it was */
	assert_int_equal(engine_opts_append(line, 40, "x", "y"), -ENOSPC);
	line[0] = '\0';
	assert_int_equal(engine_opts_append(line, 12, "arguments", "a,"), -ENOSPC);
	assert_string_equal(line, "");
	assert_int_equal(engine_opts_append(line, 14, "arguments", "a,"), 0);
	assert_string_equal(line, "arguments=a\\,");
	free(opts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(tables),           cmocka_unit_test(missing_callbacks),
	        cmocka_unit_test(registry_lookups), cmocka_unit_test(option_values),
	        cmocka_unit_test(string_options),   cmocka_unit_test(conformance),
	};
	const char *base = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/engines", base ? base : "/tmp/llmio-test");
	/* the fake SPDK (tests/CMakeLists.txt names it) stands in for SPDK, unless one is set */
	if (getenv("LLMIO_TEST_FAKE_SPDK") && !getenv("LLMIO_SPDK"))
		setenv("LLMIO_SPDK", getenv("LLMIO_TEST_FAKE_SPDK"), 1);
	mkdir(base ? base : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
