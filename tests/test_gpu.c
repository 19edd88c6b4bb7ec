/* SPDX-License-Identifier: MIT */
/*
 * GPU engines (gds, cuda-bounce): data written from GPU memory and read back into GPU memory
 * is checked byte for byte (copied to the host and compared), for every mode of each engine,
 * buffered and O_DIRECT, aligned and unaligned sizes, at QD 1 and QD 8; and whole jobs through
 * the worker, whose file contents are checked against the pattern the worker asked for.
 *
 *   test_gpu          runs on the fake CUDA libraries built next to it (host memory stands in
 *                     for GPU memory), so the data paths are tested on any machine; the fakes
 *                     run strict (LLMIO_FAKE_STRICT=1: one batch submission at a time, partial
 *                     GetStatus, 256-byte aligned CUDA allocations, events not ready at
 *                     first, duplicate cuFile handles refused, async -1 with a foreign errno,
 *                     the stream API only with a cufile.json), and the defects those contracts
 *                     exposed each have a test below;
 *   test_gpu --real   the same on the real libraries and GPU; exits 77 with the reason when
 *                     there is none.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
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
#include "engine/cuda_loader.h"
#include "engine/engine.h"
#include "engine_drive.h"
#include "llmio/llmio.h"

#define MAXLEN  16384
#define NBLOCKS 48
#define SEED    91

static char dir[4096];
static bool real;
static const struct cudart *rt;

struct rig {
	const struct engine_ops *e;
	struct engine_ctx ctx;
	void *opts;
	void *bufs[16];
	struct io_req ios[16];
	unsigned depth;
	int fd;
	uint64_t size;
	uint32_t len;
	uint8_t op; /* of the drive in progress */
	unsigned char host[MAXLEN];
};

static int rig_open(struct rig *r, const char *engine, const char *eopts, int fd, uint32_t len,
                    unsigned depth, bool direct)
{
	struct engine_setup s;
	struct llmio_error err = {0};
	int ret;

	memset(r, 0, sizeof(*r));
	r->e = engine_find(engine);
	assert_non_null(r->e);
	r->fd = fd;
	r->len = len;
	r->size = (uint64_t)len * NBLOCKS;
	r->depth = depth;
	r->opts = calloc(1, r->e->opts_size);
	assert_non_null(r->opts);
	ret = engine_opts_parse(r->e, eopts, r->opts, &err);
	assert_int_equal(ret, 0);
	memset(r->host, 0x5a, sizeof(r->host));
	for (unsigned i = 0; i < depth; i++) {
		ret = r->e->buf_alloc(r->opts, &r->bufs[i], len, r->host, &err);
		if (ret)
			print_message("buf_alloc: %s\n", err.msg);
		assert_int_equal(ret, 0);
		r->ios[i].buf = r->bufs[i];
		r->ios[i].buf_idx = (uint16_t)i;
	}
	s = drive_setup(&r->fd, &r->size, r->bufs, depth, len, direct, true, r->opts);
	ret = r->e->init(&r->ctx, &s, &err);
	if (ret)
		print_message("init %s (%s): %s\n", engine, eopts, err.msg);
	return ret;
}

static void rig_close(struct rig *r)
{
	if (r->ctx.priv)
		r->e->cleanup(&r->ctx);
	for (unsigned i = 0; i < r->depth; i++)
		r->e->buf_free(r->opts, r->bufs[i]);
	free(r->opts);
}

/* Put host data into a GPU buffer, or fetch it back, with the CUDA runtime itself. */
static void to_gpu(void *dev, const void *host, size_t n)
{
	assert_int_equal(rt->Memcpy(dev, host, n, cudaMemcpyHostToDevice), 0);
}

static void from_gpu(void *host, const void *dev, size_t n)
{
	assert_int_equal(rt->Memcpy(host, dev, n, cudaMemcpyDeviceToHost), 0);
}

/* Block b of the test data: the pattern at its offset, so every block differs. */
static void block_data(unsigned char *buf, uint32_t len, unsigned b)
{
	memset(buf, 0, len);
	target_pattern(buf, len & ~7u, (uint64_t)b * len, SEED);
	for (uint32_t i = len & ~7u; i < len; i++)
		buf[i] = (unsigned char)(b + i);
}

static void check_read(struct rig *r, struct io_req *io, unsigned b)
{
	static unsigned char expect[MAXLEN];

	assert_int_equal(io->res, io->len);
	from_gpu(r->host, io->buf, io->len);
	block_data(expect, r->len, b);
	assert_memory_equal(r->host, expect, r->len);
}

/* Block i of the test data into the GPU buffer (writes), or stale bytes (reads). */
static void gpu_prep(void *arg, struct io_req *io, unsigned i)
{
	struct rig *r = arg;

	io->off = (uint64_t)i * r->len;
	io->len = r->len;
	io->op = r->op;
	if (r->op == ENGINE_OP_WRITE)
		block_data(r->host, r->len, i);
	else
		memset(r->host, 0xee, r->len); /* stale data must not survive */
	to_gpu(io->buf, r->host, r->len);
}

static void gpu_done(void *arg, struct io_req *io, unsigned i)
{
	struct rig *r = arg;

	if (r->op == ENGINE_OP_READ)
		check_read(r, io, i);
	else
		assert_int_equal(io->res, io->len);
}

/* Run all NBLOCKS blocks (op) through queue / commit / reap with up to depth in flight. */
static void drive(struct rig *r, uint8_t op)
{
	struct drive d = {r->e, &r->ctx, r->ios, r->depth, gpu_prep, gpu_done, r};

	r->op = op;
	drive_ios(&d, NBLOCKS);
}

static int open_file(const char *name, bool direct, uint64_t size)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size))
		return -errno;
	return fd;
}

/* The file holds exactly the blocks written (checked with plain pread, no engine). */
static void check_file(int fd, uint32_t len)
{
	static unsigned char got[MAXLEN], expect[MAXLEN];
	int rfd;
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rfd = open(path, O_RDONLY);
	assert_true(rfd >= 0);
	for (unsigned b = 0; b < NBLOCKS; b++) {
		assert_int_equal(pread(rfd, got, len, (off_t)b * len), len);
		block_data(expect, len, b);
		assert_memory_equal(got, expect, len);
	}
	close(rfd);
}

static void roundtrip(const char *engine, const char *eopts, bool direct, uint32_t len, unsigned qd)
{
	struct rig r;
	int fd = open_file("gpu-conform", direct, (uint64_t)len * NBLOCKS);

	print_message("%s %s %s len=%u qd=%u\n", engine, eopts, direct ? "direct" : "buffered", len,
	              qd);
	assert_true(fd >= 0);
	assert_int_equal(rig_open(&r, engine, eopts, fd, len, qd, direct), 0);
	drive(&r, ENGINE_OP_WRITE);
	assert_int_equal(fsync(fd), 0);
	check_file(fd, len);
	if (!direct)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	drive(&r, ENGINE_OP_READ);
	if (!real)
		assert_non_null(strstr(r.ctx.notes, engine[0] == 'g' ? "mode" : "pinned"));
	rig_close(&r);
	close(fd);
}

static bool direct_works(void)
{
	int fd = open_file("gpu-direct-probe", true, 4096);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Every engine that provides GPU buffers, in each of its own test variants. */
static void conformance(void **state)
{
	bool dio = direct_works();
	unsigned tested = 0;
	char why[1024];

	(void)state;
	if (!dio)
		print_message("O_DIRECT is not supported in %s: direct cases skipped\n", dir);
	for (size_t i = 0; i < engine_count(); i++) {
		const struct engine_ops *e = engine_at(i);

		if (!e->buf_alloc)
			continue; /* host memory: test_engines drives these engines */
		if (e->caps & ENGINE_CAP_OWN_TARGET)
			continue; /* no files (s3-agent: tests/test_s3_agent.c) */
		if (llmio_engine_probe(e->name, why, sizeof(why))) {
			assert_true(real); /* the fake libraries always load */
			print_message("skip %s: %s\n", e->name, why);
			continue;
		}
		for (size_t m = 0; engine_test_variant(e, m); m++) {
			const char *eopts = engine_test_variant(e, m);
			const struct cufile *cf = cuda_cufile(NULL);

			/* on a real machine without a cufile.json the stream API is refused */
			if (strstr(eopts, "mode=async") && cf && !cf->async_ok) {
				assert_true(real); /* the tests' fakes come with a cufile.json */
				print_message("skip %s %s: %s\n", e->name, eopts, cf->async_why);
				continue;
			}

			for (unsigned qd = 1; qd <= 8; qd += 7) {
				roundtrip(e->name, eopts, false, 16384, qd); /* aligned */
				roundtrip(e->name, eopts, false, 5000, qd);  /* unaligned */
				if (dio) {
					roundtrip(e->name, eopts, true, 16384, qd);
					roundtrip(e->name, eopts, true, 12288, qd); /* not 2^n */
				}
			}
		}
		tested++;
	}
	assert_true(real || tested >= 2); /* gds and cuda-bounce over the fake libraries */
}

/* A whole job through the worker: engine buffers, the pattern, the notes. */
static void job(const char *engine, const char *eopts, const char *rw, unsigned qd,
                struct llmio_result **out)
{
	struct llmio_job_opts o;
	struct llmio_error err = {0};
	char path[4200];
	int ret;

	llmio_job_opts_init(&o);
	snprintf(path, sizeof(path), "%s/gpu-job", dir);
	assert_int_equal(llmio_job_opts_set(&o, "ioengine", engine, &err), 0);
	assert_int_equal(llmio_job_opts_set(&o, "filename", path, &err), 0);
	assert_int_equal(llmio_job_opts_set(&o, "size", "512k", &err), 0);
	assert_int_equal(llmio_job_opts_set(&o, "bs", "16k", &err), 0);
	assert_int_equal(llmio_job_opts_set(&o, "rw", rw, &err), 0);
	assert_int_equal(llmio_job_opts_set(&o, "randseed", "7", &err), 0);
	snprintf(o.engine_opts, sizeof(o.engine_opts), "%s", eopts);
	o.iodepth = qd;
	ret = llmio_job_run(&o, out, &err);
	if (ret)
		print_message("%s %s: %s\n", engine, rw, err.msg);
	assert_int_equal(ret, 0);
}

static void jobs(void **state)
{
	static unsigned char got[16384], expect[16384];
	static const char *const engines[][2] = {{"gds", "mode=sync"}, {"cuda-bounce", ""}};
	char why[1024], path[4200];

	(void)state;
	for (size_t e = 0; e < 2; e++) {
		struct llmio_result *r = NULL;
		int fd;

		if (llmio_engine_probe(engines[e][0], why, sizeof(why))) {
			print_message("skip %s: %s\n", engines[e][0], why);
			continue;
		}
		/* QD 1: every block is written from buffer 0, which holds the pattern at 0 */
		job(engines[e][0], engines[e][1], "write", 1, &r);
		assert_int_equal(r->write.bytes, 512 * 1024);
		print_message("notes: %s\n", r->engine_notes);
		if (!real && !strcmp(engines[e][0], "gds"))
			assert_non_null(strstr(r->engine_notes, "compat (POSIX) mode"));
		if (!strcmp(engines[e][0], "cuda-bounce"))
			assert_non_null(strstr(r->engine_notes, "32 device-to-host"));
		llmio_result_destroy(r);
		snprintf(path, sizeof(path), "%s/gpu-job", dir);
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		memset(expect, 0, sizeof(expect));
		target_pattern(expect, sizeof(expect), 0, 7);
		for (unsigned b = 0; b < 32; b++) {
			assert_int_equal(pread(fd, got, sizeof(got), (off_t)b * sizeof(got)),
			                 sizeof(got));
			assert_memory_equal(got, expect, sizeof(got));
		}
		close(fd);
		job(engines[e][0], engines[e][1], "randread", 8, &r);
		assert_int_equal(r->read.bytes, 512 * 1024);
		llmio_result_destroy(r);
	}
}

/* One engine on a fresh file of NBLOCKS x len: the rig, opened (init's result returned). */
static int rig_file(struct rig *r, const char *engine, const char *eopts, unsigned qd)
{
	int fd = open_file("gpu-case", true, (uint64_t)16384 * NBLOCKS);

	assert_true(fd >= 0);
	return rig_open(r, engine, eopts, fd, 16384, qd, true);
}

static void rig_file_close(struct rig *r)
{
	int fd = r->fd;

	rig_close(r);
	close(fd);
}

/* One I/O of `op` on buffer 0 at offset 0, queued, committed and reaped: its result. */
static int64_t one_io(struct rig *r, uint8_t op)
{
	struct io_req *evs[16], *io = &r->ios[0];
	int q, got;

	io->off = 0;
	io->len = r->len;
	io->op = op;
	io->file = 0;
	io->res = -12345;
	q = r->e->queue(&r->ctx, io);
	if (q == ENGINE_Q_COMPLETED)
		return io->res;
	assert_int_equal(q, ENGINE_Q_QUEUED);
	assert_true(r->e->commit(&r->ctx) >= 0);
	got = r->e->reap(&r->ctx, 1, evs, 16);
	assert_int_equal(got, 1);
	assert_ptr_equal(evs[0], io);
	return io->res;
}

/* issue 23.7: cuFileBufRegister failing part way leaves the registered ones to release. */
static void register_partial(void **state)
{
	struct rig r;

	(void)state;
	if (real)
		skip();
	setenv("LLMIO_FAKE_REGISTER_FAIL_AFTER", "2", 1);
	assert_int_equal(rig_file(&r, "gds", "mode=batch,register=1", 8), 0);
	unsetenv("LLMIO_FAKE_REGISTER_FAIL_AFTER");
	assert_non_null(strstr(r.ctx.notes, "cuFileBufRegister failed"));
	assert_non_null(strstr(r.ctx.notes, "buffers 2.. unregistered"));
	assert_int_equal(one_io(&r, ENGINE_OP_WRITE), 16384);
	rig_file_close(&r); /* the two registered buffers deregistered, no crash */
}

/*
 * issue 23.8: a -1 from the batch or stream API (the I/O ran on cuFile's threads, this thread's
 * errno says nothing) is an I/O error, never 0 bytes ("end of file").
 */
static void remote_errors(void **state)
{
	static const char *const modes[] = {"mode=batch", "mode=async"};

	(void)state;
	if (real)
		skip();
	for (size_t m = 0; m < 2; m++) {
		struct rig r;

		assert_int_equal(rig_file(&r, "gds", modes[m], 4), 0);
		setenv("LLMIO_FAKE_IO_FAIL_AFTER", "0", 1);
		errno = 0;
		assert_int_equal(one_io(&r, ENGINE_OP_READ), -EIO);
		unsetenv("LLMIO_FAKE_IO_FAIL_AFTER");
		rig_file_close(&r);
		print_message("%s: notes: %s\n", modes[m], r.ctx.notes);
	}
}

/* issue 23.10: cuFile refuses an fd registered twice; two engines on one fd share a handle. */
static void shared_fd(void **state)
{
	struct rig a, b;
	int fd = open_file("gpu-shared", true, (uint64_t)16384 * NBLOCKS);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(rig_open(&a, "gds", "mode=sync", fd, 16384, 1, true), 0);
	assert_int_equal(rig_open(&b, "gds", "mode=batch", fd, 16384, 4, true), 0);
	assert_int_equal(one_io(&a, ENGINE_OP_WRITE), 16384);
	rig_close(&a);
	assert_int_equal(one_io(&b, ENGINE_OP_READ), 16384); /* the handle outlives a */
	rig_close(&b);
	/* both gone: registering the fd again works */
	assert_int_equal(rig_open(&a, "gds", "mode=sync", fd, 16384, 1, true), 0);
	rig_close(&a);
	close(fd);
}

/* issue 23.10: mode=sync at iodepth 8 has one I/O in flight, and the notes say so. */
static void sync_depth_said(void **state)
{
	struct rig r;

	(void)state;
	assert_int_equal(rig_file(&r, "gds", "mode=sync", 8), 0);
	assert_non_null(strstr(r.ctx.notes, "iodepth 1 (sync mode"));
	assert_null(strstr(r.ctx.notes, "iodepth 8"));
	rig_file_close(&r);
}

/* issue 23.10: each GPU buffer starts on a 64 KiB GPU page of its own. */
static void gpu_pages(void **state)
{
	struct rig r;

	(void)state;
	assert_int_equal(rig_file(&r, "gds", "mode=sync", 8), 0);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal((uintptr_t)r.bufs[i] % GPU_PAGE, 0);
		for (unsigned k = 0; k < i; k++)
			assert_true((uintptr_t)r.bufs[i] / GPU_PAGE !=
			            ((uintptr_t)r.bufs[k] + r.len - 1) / GPU_PAGE);
	}
	rig_file_close(&r);
}

/* issue 23.10: a cuFile error code is named in the notes, not lost in -EIO. */
static void cufile_error_named(void **state)
{
	const char *json = getenv("CUFILE_ENV_PATH_JSON");
	struct rig r;
	FILE *f;

	(void)state;
	if (real)
		skip();
	assert_int_equal(rig_file(&r, "gds", "mode=async", 4), 0);
	/* the fake reads the config at each call: without parallel_io it refuses the I/O */
	f = fopen(json, "w");
	assert_non_null(f);
	fputs("{}\n", f);
	fclose(f);
	assert_int_equal(one_io(&r, ENGINE_OP_READ), -EIO);
	f = fopen(json, "w");
	assert_non_null(f);
	fputs("{ \"execution\": { \"parallel_io\": true } }\n", f);
	fclose(f);
	r.e->cleanup(&r.ctx);
	assert_non_null(strstr(r.ctx.notes, "first cuFile failure: cuFileReadAsync: "
	                                    "CU_FILE_IO_NOT_SUPPORTED (cuFile error 5008)"));
	rig_file_close(&r);
}

/* issue 23.9: cuda-bounce's pinned memory is page-aligned (O_DIRECT), the wait is said. */
static void bounce_pinned(void **state)
{
	struct rig r;

	(void)state;
	assert_int_equal(rig_file(&r, "cuda-bounce", "host=psync,sched=yield", 2), 0);
	assert_non_null(strstr(r.ctx.notes, "page-aligned"));
	assert_non_null(strstr(r.ctx.notes, "sched=yield"));
	assert_int_equal(one_io(&r, ENGINE_OP_WRITE), 16384); /* O_DIRECT from pinned memory */
	assert_int_equal(one_io(&r, ENGINE_OP_READ), 16384);
	rig_file_close(&r);
	assert_int_equal(rig_file(&r, "gds", "mode=async", 2), 0);
	assert_non_null(strstr(r.ctx.notes, "sched=blocking (blocking-sync events)"));
	rig_file_close(&r);
}

/* The fake libraries sit next to this program, in the build tree only. */
static int use_fakes(void)
{
	char exe[4096], fakes[4200], path[4300];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -errno;
	exe[n] = '\0';
	snprintf(fakes, sizeof(fakes), "%s/fake_cuda", dirname(exe));
	snprintf(path, sizeof(path), "%s/libcudart.so.12", fakes);
	setenv("LLMIO_CUDART", path, 1);
	snprintf(path, sizeof(path), "%s/libcufile.so.0", fakes);
	setenv("LLMIO_CUFILE", path, 1);
	setenv("LLMIO_FAKE_CUDA", "1", 1);
	setenv("LLMIO_FAKE_STRICT", "1", 1);
	return 0;
}

/* The cufile.json the stream API needs (cuFile's thread pool), as bench/gpu_check.sh writes. */
static int write_config(void)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cufile.json", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs("{ \"execution\": { \"parallel_io\": true } }\n", f);
	fclose(f);
	setenv("CUFILE_ENV_PATH_JSON", path, 1);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(conformance),      cmocka_unit_test(jobs),
	        cmocka_unit_test(register_partial), cmocka_unit_test(remote_errors),
	        cmocka_unit_test(shared_fd),        cmocka_unit_test(sync_depth_said),
	        cmocka_unit_test(gpu_pages),        cmocka_unit_test(cufile_error_named),
	        cmocka_unit_test(bounce_pinned),
	};
	const char *base = getenv("LLMIO_TEST_DIR");
	struct llmio_error why = {0};

	real = argc > 1 && !strcmp(argv[1], "--real");
	snprintf(dir, sizeof(dir), "%s/gpu%s", base ? base : "/tmp/llmio-test",
	         real ? "-real" : "");
	mkdir(base ? base : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	if (!real && (use_fakes() || write_config())) {
		printf("cannot set up the fake CUDA libraries: %s\n", strerror(errno));
		return 1;
	}
	rt = cuda_runtime(&why);
	if (!rt) {
		printf("%s%s\n",
		       real ? "SKIP: no GPU to test on: " : "fake CUDA did not load: ", why.msg);
		return real ? 77 : 1;
	}
	if (real && strstr(rt->path, "fake_cuda")) {
		printf("SKIP: the CUDA runtime found is the tests' fake (%s): unset LLMIO_CUDART\n",
		       rt->path);
		return 77;
	}
	printf("CUDA runtime: %s, %d GPU(s)\n", rt->path, rt->ndevices);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
