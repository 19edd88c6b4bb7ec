/* SPDX-License-Identifier: MIT */
/*
 * verify=crc32c|md5|sha256|crc64|meta: a header and checksum in every written block, checked
 * when read (meta: the header alone, as fio's).
 * The digests are the standard ones (CRC-32C: RFC 3720's Castagnoli polynomial, reflected;
 * MD5: RFC 1321; SHA-256: FIPS 180-4), from the libraries that use the CPU's instructions for
 * them: ISA-L for CRC-32C, OpenSSL's libcrypto (which the s3 engine links too) for MD5 and
 * SHA-256.  A block is hashed on the worker thread for every I/O.  tests/test_verify.c checks
 * each against its published test vectors and against Python's hashlib.
 *
 * Block layout: magic, algorithm, length, the block's own file offset, then the digest of the
 * whole block computed with the digest field zeroed.  The offset catches a block read from the
 * wrong place (a misdirected write), the digest a changed byte anywhere in the block.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <isa-l/crc.h>
#include <isa-l/crc64.h>
#include <openssl/evp.h>

#include "base/error.h"
#include "job/job_internal.h"
#include "job/pattern.h"
#include "job/verify.h"

#define VERIFY_MAGIC 0x564d4c4cu /* "LLMV" */

struct vhdr {
	uint32_t magic;
	uint32_t algo;
	uint32_t len;
	uint32_t pad;
	uint64_t off;
	uint8_t sum[32];
};

_Static_assert(sizeof(struct vhdr) == VERIFY_HDR_LEN, "verify header layout");

/* ---- CRC-32C: ISA-L ---- */

/*
 * crc32_iscsi() picks the fastest code this CPU runs (carry-less multiply folding, or the
 * crc32 instruction on parallel streams; a table where neither exists) and neither inverts the
 * value it starts from nor the one it returns: the standard CRC-32C starts from all ones and
 * inverts at the end ("123456789" -> 0xe3069283, tests/test_verify.c).  It takes an int
 * length, so a block over 2 GiB goes in pieces, each continuing from the last.
 */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	const size_t piece = (size_t)1 << 30;
	uint32_t c = 0xffffffffu;

	for (; n > piece; p += piece, n -= piece)
		c = crc32_iscsi((unsigned char *)p, (int)piece, c);
	return ~crc32_iscsi((unsigned char *)p, (int)n, c);
}

/*
 * fio's crc64 (crc/crc64.c): the Jones polynomial (0xad93d23594c935a9, reflected
 * 0x95ac9329ac4bc9b5), from 0, the result not inverted ("123456789" -> 0xe9c6d914c4b8d9ca,
 * tests/test_verify.c).  ISA-L's crc64_jones_refl() inverts the value it starts from and the
 * one it returns, so it is given ~0 and its result inverted.
 */
static uint64_t crc64_fio(const uint8_t *p, size_t n)
{
	return ~crc64_jones_refl(~0ull, p, n);
}

/* ---- MD5 and SHA-256: OpenSSL's libcrypto ---- */

/*
 * EVP_Digest() would make a context and fetch the algorithm from its provider on every call.
 * Instead the algorithms are fetched once per process and each thread keeps one EVP_MD_CTX,
 * made at its first digest and freed when the thread ends (the key's destructor), reused for
 * every block.  OpenSSL 3.0 (Debian 12) still makes the provider's small state again at each
 * init (one malloc and free per block; tests/test_verify.c counts them), which is what it
 * costs to stay on the interface OpenSSL supports rather than its deprecated SHA256_Init().
 */
static pthread_once_t md_once = PTHREAD_ONCE_INIT;
static pthread_key_t md_key;
static bool md_key_made;
static EVP_MD *md_algo[2]; /* MD5, SHA-256 */

static void md_ctx_free(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static void md_setup(void)
{
	md_algo[0] = EVP_MD_fetch(NULL, "MD5", NULL);
	md_algo[1] = EVP_MD_fetch(NULL, "SHA256", NULL);
	md_key_made = pthread_key_create(&md_key, md_ctx_free) == 0;
}

/* The digest of p[0..n) by algorithm a of md_algo into out; its length, or 0 on a failure. */
static size_t md_digest(unsigned a, const void *p, size_t n, uint8_t *out)
{
	EVP_MD_CTX *ctx;
	unsigned len = 0;

	pthread_once(&md_once, md_setup);
	if (!md_algo[a] || !md_key_made)
		return 0;
	ctx = pthread_getspecific(md_key);
	if (!ctx) {
		ctx = EVP_MD_CTX_new();
		if (!ctx)
			return 0;
		if (pthread_setspecific(md_key, ctx)) {
			EVP_MD_CTX_free(ctx);
			return 0;
		}
	}
	if (!EVP_DigestInit_ex2(ctx, md_algo[a], NULL) || !EVP_DigestUpdate(ctx, p, n) ||
	    !EVP_DigestFinal_ex(ctx, out, &len))
		return 0;
	return len;
}

size_t verify_digest(enum verify_algo algo, const void *buf, size_t len, uint8_t out[32])
{
	switch (algo) {
	case VERIFY_CRC32C: {
		const uint32_t c = crc32c(buf, len);

		memcpy(out, &c, sizeof(c));
		return sizeof(c);
	}
	case VERIFY_CRC64: {
		const uint64_t c = crc64_fio(buf, len);

		memcpy(out, &c, sizeof(c));
		return sizeof(c);
	}
	case VERIFY_MD5:
		return md_digest(0, buf, len, out);
	case VERIFY_SHA256:
		return md_digest(1, buf, len, out);
	case VERIFY_META:
	case VERIFY_NONE:
		break;
	}
	return 0;
}

static void hex(char *buf, size_t len, const uint8_t *p, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && used + 3 <= len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%02x", p[i]);
}

static size_t block_digest(enum verify_algo algo, uint8_t *buf, uint32_t len, uint8_t out[32])
{
	struct vhdr *h = (struct vhdr *)buf;
	uint8_t saved[32];
	size_t n;

	memcpy(saved, h->sum, sizeof(saved));
	memset(h->sum, 0, sizeof(h->sum));
	n = verify_digest(algo, buf, len, out);
	memcpy(h->sum, saved, sizeof(saved));
	return n;
}

static const char *const algo_names[] = {"none", "crc32c", "md5", "sha256", "crc64", "meta"};

/*
 * verify=meta is fio's own layout (fio 3.33's verify.h, struct verify_header), so that either
 * tool checks the other's blocks: every interval bytes of a block (verify_interval, else the
 * block) start with this 40-byte header, little-endian, and the rest is the block's data
 * (verify_pattern's bytes, repeated from the block's start, where there is one).  fio's crc32
 * is CRC-32C of the 36 bytes before it, from all ones and not inverted at the end.  fio's
 * verify_type 1 is its VERIFY_HDR_ONLY, which verify=meta names.  rand_seed and the time are
 * fio's to fill (its random data's seed, the write's start) and read back unchecked by a
 * read job; llmio writes zeros there.
 */
#define FIO_HDR_MAGIC       0xaccau
#define FIO_VERIFY_HDR_ONLY 1u

struct fio_vhdr {
	uint16_t magic;
	uint16_t verify_type;
	uint32_t len;
	uint64_t rand_seed;
	uint64_t offset;
	uint32_t time_sec;
	uint32_t time_nsec;
	uint16_t thread;
	uint16_t numberio;
	uint32_t crc32;
};

_Static_assert(sizeof(struct fio_vhdr) == 40, "fio's verify header layout");

static uint32_t fio_hdr_crc(const struct fio_vhdr *h)
{
	return crc32_iscsi((unsigned char *)h, (int)offsetof(struct fio_vhdr, crc32), 0xffffffffu);
}

void verify_meta_stamp(void *buf, uint32_t len, uint64_t off, uint32_t interval, uint16_t thread,
                       uint16_t seq)
{
	if (!interval || interval > len)
		interval = len;
	for (uint32_t at = 0; at + interval <= len; at += interval) {
		struct fio_vhdr h = {.magic = FIO_HDR_MAGIC,
		                     .verify_type = FIO_VERIFY_HDR_ONLY,
		                     .len = interval,
		                     .offset = off + at,
		                     .thread = thread,
		                     .numberio = seq};

		h.crc32 = fio_hdr_crc(&h);
		memcpy((uint8_t *)buf + at, &h, sizeof(h));
	}
}

int verify_meta_check(const void *buf, uint32_t len, uint64_t off, uint32_t interval,
                      const uint8_t *ref, const char *path, struct llmio_error *e)
{
	const uint8_t *b = buf;

	if (!interval || interval > len)
		interval = len;
	for (uint32_t at = 0; at + interval <= len; at += interval) {
		struct fio_vhdr h;

		memcpy(&h, b + at, sizeof(h));
		if (h.magic != FIO_HDR_MAGIC || h.len != interval || h.crc32 != fio_hdr_crc(&h))
			return llmio_err(e, -EILSEQ,
			                 "verify: %s at offset %" PRIu64
			                 ": expected a meta block header (fio's: magic 0x%04x, "
			                 "%u bytes, its checksum), found magic 0x%04x, %u bytes, "
			                 "checksum %s: not written with verify=meta and "
			                 "verify_interval=%u, or overwritten",
			                 path, off + at, FIO_HDR_MAGIC, interval, h.magic, h.len,
			                 h.crc32 == fio_hdr_crc(&h) ? "right" : "wrong", interval);
		if (h.offset != off + at)
			return llmio_err(e, -EILSEQ,
			                 "verify: %s at offset %" PRIu64
			                 ": expected the block of offset %" PRIu64
			                 ", found the block of offset %" PRIu64
			                 " (a misplaced write)",
			                 path, off + at, off + at, h.offset);
		if (!ref || !memcmp(b + at + sizeof(h), ref + at + sizeof(h), interval - sizeof(h)))
			continue;
		for (uint32_t i = sizeof(h); i < interval; i++)
			if (b[at + i] != ref[at + i])
				return llmio_err(
				        e, -EILSEQ,
				        "verify: verify_pattern mismatch in %s at offset %" PRIu64
				        " (byte %u of the %u-byte interval at offset %" PRIu64
				        ", in the block at %" PRIu64
				        "): expected 0x%02x, found 0x%02x",
				        path, off + at + i, i, interval, off + at, off, ref[at + i],
				        b[at + i]);
	}
	return 0;
}

/* libcrypto failed to make its context (out of memory): the one error a digest has */
static int digest_failed(enum verify_algo algo, struct llmio_error *e)
{
	return llmio_err(e, -ENOMEM,
	                 "verify: OpenSSL could not compute %s (out of memory, or the provider "
	                 "that has it is not loaded): use verify=crc32c, or free memory",
	                 algo_names[algo]);
}

int verify_stamp(enum verify_algo algo, void *buf, uint32_t len, uint64_t off,
                 struct llmio_error *e)
{
	struct vhdr h = {.magic = VERIFY_MAGIC, .algo = algo, .len = len, .off = off};
	uint8_t sum[32] = {0};
	size_t n;

	if (algo == VERIFY_META) {
		verify_meta_stamp(buf, len, off, len, 1, 0);
		return 0;
	}
	memcpy(buf, &h, sizeof(h));
	n = block_digest(algo, buf, len, sum);
	if (!n)
		return digest_failed(algo, e);
	memcpy((uint8_t *)buf + offsetof(struct vhdr, sum), sum, n);
	return 0;
}

int verify_check(enum verify_algo algo, void *buf, uint32_t len, uint64_t off, const char *path,
                 struct llmio_error *e)
{
	struct vhdr h;
	uint8_t sum[32];
	char want[72], got[72];
	size_t n;

	if (algo == VERIFY_META)
		return verify_meta_check(buf, len, off, len, NULL, path, e);
	memcpy(&h, buf, sizeof(h));
	if (h.magic != VERIFY_MAGIC || h.algo != (uint32_t)algo || h.len != len) {
		return llmio_err(
		        e, -EILSEQ,
		        "verify: %s at offset %" PRIu64
		        ": expected a %s block header (magic 0x%08x, "
		        "%u bytes), found magic 0x%08x, %s, %u bytes: not written with verify=%s "
		        "and bs=%u, or overwritten",
		        path, off, algo_names[algo], VERIFY_MAGIC, len, h.magic,
		        h.algo < sizeof(algo_names) / sizeof(algo_names[0]) ? algo_names[h.algo]
		                                                            : "unknown algorithm",
		        h.len, algo_names[algo], len);
	}
	if (h.off != off) {
		return llmio_err(e, -EILSEQ,
		                 "verify: %s at offset %" PRIu64
		                 ": expected the block of offset %" PRIu64
		                 ", found the block of offset %" PRIu64 " (a misplaced write)",
		                 path, off, off, h.off);
	}
	n = block_digest(algo, buf, len, sum);
	if (!n)
		return digest_failed(algo, e);
	if (memcmp(sum, h.sum, n)) {
		hex(want, sizeof(want), h.sum, n);
		hex(got, sizeof(got), sum, n);
		return llmio_err(e, -EILSEQ,
		                 "verify: %s mismatch in %s at offset %" PRIu64
		                 " (%u bytes): expected %s, "
		                 "found %s",
		                 algo_names[algo], path, off, len, want, got);
	}
	return 0;
}

int verify_block(const struct job *j, void *buf, uint32_t len, uint64_t off, const char *path,
                 struct llmio_error *e)
{
	if (j->o.verify == VERIFY_META)
		return verify_meta_check(buf, len, off, j->o.verify_interval, j->verify_ref, path,
		                         e);
	return verify_check(j->o.verify, buf, len, off, path, e);
}

int verify_prepare(struct job *j, struct llmio_error *e)
{
	const struct llmio_job_opts *o = &j->o;
	const bool writes = o->rw != LLMIO_RW_READ && o->rw != LLMIO_RW_RANDREAD;
	const bool random = o->rw == LLMIO_RW_RANDWRITE || o->rw == LLMIO_RW_RANDRW;
	const struct llmio_optdesc *cleanup;

	if (!o->verify)
		return 0;
	if ((j->engine->caps & (ENGINE_CAP_NO_IO | ENGINE_CAP_FILE_OPS)) ||
	    (j->engine->buf_alloc && !(j->engine->caps & ENGINE_CAP_HOST_BUFS)))
		return llmio_err(
		        e, -EINVAL,
		        "verify needs an engine that moves data through host memory: %s is not "
		        "one (use psync, libaio, io_uring or mmap)",
		        j->engine->name);
	if (o->io_source)
		return llmio_err(e, -EINVAL, "verify is for jobs of rw/bs, not recipes or replay");
	if (o->bs < VERIFY_HDR_LEN)
		return llmio_err(e, -EINVAL, "verify needs bs >= %d (the block header)",
		                 VERIFY_HDR_LEN);
	/* fio's header (40 bytes) every verify_interval bytes: a whole number of them per block */
	if (o->verify_interval && o->verify_interval != o->bs &&
	    (o->verify != VERIFY_META || o->verify_interval <= 40 || o->bs % o->verify_interval))
		return llmio_err(
		        e, -EINVAL,
		        "verify_interval=%" PRIu32
		        ": llmio puts a header every verify_interval bytes with "
		        "verify=meta, one bs, and an interval over 40 bytes that divides bs "
		        "(%" PRIu64 "); its digests cover the whole block (drop "
		        "verify_interval)",
		        o->verify_interval, o->bs);
	/*
	 * Two writes of one block in flight at once could mix.  The random map writes each block
	 * once per pass (each thread its own slice, when several write), so a thread may write
	 * one pass at most; without the map, one I/O at a time by one thread.
	 */
	if (writes && random && j->use_map) {
		const uint64_t slice = j->total_blocks / (o->numjobs ? o->numjobs : 1) * o->bs;

		j->map_sliced = o->numjobs > 1;
		if (!o->io_size || o->io_size > (j->map_sliced ? slice : j->total_blocks * o->bs))
			return llmio_err(e, -EINVAL,
			                 "verify with random writes: each thread writes its blocks "
			                 "once (one pass of the random map), so io_size may be at "
			                 "most %" PRIu64 " bytes and the job not time_based",
			                 j->map_sliced ? slice : j->total_blocks * o->bs);
	} else if (writes && random &&
	           (o->numjobs > 1 || ((j->engine->caps & ENGINE_CAP_ASYNC) && o->iodepth > 1))) {
		return llmio_err(e, -EINVAL,
		                 "verify with random writes in flight together needs the random "
		                 "map (norandommap=0, one block size, a uniform distribution); or "
		                 "numjobs=1 and iodepth=1");
	}
	/* what verify_pattern's block holds, compared whole (memcmp) after each header */
	if (o->verify == VERIFY_META && j->vpattern_len) {
		j->verify_ref = malloc(o->bs);
		if (!j->verify_ref)
			return llmio_err(e, -ENOMEM,
			                 "verify: out of memory for a %" PRIu64 "-byte buffer",
			                 o->bs);
		pattern_fill(j->verify_ref, o->bs, j->vpattern, j->vpattern_len);
	}
	if (!writes || !o->do_verify)
		return 0;
	/* an engine's cleanup=1 (s3) deletes what the job wrote as the job ends: before the
	 * read-back */
	cleanup = engine_opt_find(j->engine, "cleanup");
	if (cleanup && j->engine_opts &&
	    *(const int *)((const char *)j->engine_opts + cleanup->offset))
		return llmio_err(e, -EINVAL,
		                 "verify reads back what the job wrote once it ends, and %s's "
		                 "cleanup=1 deletes it then: drop cleanup=1, or verify with a read "
		                 "job before deleting",
		                 j->engine->name);
	j->verify_written = calloc(j->total_blocks / 8 + 1, 1);
	return j->verify_written ? 0 : -ENOMEM;
}

void verify_mark(struct job *j, unsigned file, uint64_t off)
{
	const uint64_t b = j->file_first_block[file] + off / j->o.bs;

	__atomic_fetch_or(&j->verify_written[b / 8], (uint8_t)(1u << (b % 8)), __ATOMIC_RELAXED);
}

/*
 * The read-back: pread on the job's files, or, for a target the engine resolved itself
 * (s3://, no file descriptor to pread), the job's engine reading each block back, one instance
 * of it on this thread, iodepth 1.
 */
struct readback {
	struct engine_ctx ctx;
	bool engine; /* through the engine */
	void *buf;
	bool own_buf; /* the engine's buf_alloc made buf */
};

static int readback_open(struct job *j, struct readback *rb, struct llmio_error *e)
{
	const size_t align = j->target.align > 4096 ? j->target.align : 4096;
	struct engine_setup s;
	int ret;

	rb->engine = engine_owns_target(j->engine, j->engine_opts);
	if (rb->engine && j->engine->buf_alloc) {
		ret = j->engine->buf_alloc(j->engine_opts, &rb->buf, j->o.bs, NULL, e);
		if (ret)
			return ret;
		rb->own_buf = true;
	} else if (posix_memalign(&rb->buf, align, j->o.bs)) {
		rb->buf = NULL;
		return llmio_err(e, -ENOMEM, "verify: out of memory for a %" PRIu64 "-byte buffer",
		                 j->o.bs);
	}
	if (!rb->engine)
		return 0;
	s = (struct engine_setup){
	        .fds = j->target.fds,
	        .file_sizes = j->target.sizes,
	        .nfiles = j->target.nfiles,
	        .bufs = &rb->buf,
	        .nbufs = 1,
	        .buf_len = j->o.bs,
	        .iodepth = 1,
	        .nworkers = 1,
	        .dev_io_poll = -1,
	        .devname = "",
	        .names = (const char *const *)j->target.paths,
	        .opts = j->engine_opts,
	        .job_name = j->o.name,
	};
	ret = j->engine->init(&rb->ctx, &s, e);
	if (ret && !llmio_err_msg(e)[0])
		llmio_err(e, ret, "verify: engine %s could not start to read back: %s",
		          j->engine->name, strerror(-ret));
	return ret;
}

/* Block off of file f into rb->buf: 0, or -errno with the line in e. */
static int readback_block(struct job *j, struct readback *rb, unsigned f, uint64_t off,
                          struct llmio_error *e)
{
	struct io_req io = {
	        .buf = rb->buf, .off = off, .len = (uint32_t)j->o.bs, .file = (uint16_t)f};
	struct io_req *ev = NULL;
	int q, n = 0;

	if (!rb->engine) {
		io.res = pread(j->target.fds[f], rb->buf, j->o.bs, (off_t)off);
		if (io.res < 0)
			io.res = -errno;
	} else if ((q = j->engine->queue(&rb->ctx, &io)) == ENGINE_Q_QUEUED) {
		n = j->engine->commit ? j->engine->commit(&rb->ctx) : 0;
		while (n >= 0 && !ev)
			n = j->engine->reap(&rb->ctx, 1, &ev, 1);
		if (n < 0)
			io.res = n;
	} else if (q == ENGINE_Q_BUSY) {
		io.res = -EIO;
	}
	if (io.res == (int64_t)j->o.bs)
		return 0;
	return llmio_err(e, io.res < 0 ? (int)io.res : -EIO,
	                 "verify: cannot read back %s at offset %" PRIu64 ": %s",
	                 j->target.paths[f], off,
	                 rb->ctx.ioerr[0] ? rb->ctx.ioerr
	                 : io.res < 0     ? strerror((int)-io.res)
	                                  : "short read");
}

static void readback_close(struct job *j, struct readback *rb)
{
	if (rb->ctx.priv)
		j->engine->cleanup(&rb->ctx);
	if (rb->own_buf)
		j->engine->buf_free(j->engine_opts, rb->buf);
	else
		free(rb->buf);
}

int verify_pass(struct job *j, struct llmio_error *e)
{
	struct readback rb = {0};
	int ret;

	if (!j->verify_written)
		return 0;
	ret = readback_open(j, &rb, e);
	for (unsigned f = 0; f < j->target.nfiles && !ret; f++) {
		for (uint64_t b = j->file_first_block[f]; b < j->file_first_block[f + 1] && !ret;
		     b++) {
			const uint64_t off = (b - j->file_first_block[f]) * j->o.bs;

			if (!(j->verify_written[b / 8] & (1u << (b % 8))))
				continue;
			ret = readback_block(j, &rb, f, off, e);
			if (!ret)
				ret = verify_block(j, rb.buf, (uint32_t)j->o.bs, off,
				                   j->target.paths[f], e);
		}
	}
	readback_close(j, &rb);
	return ret;
}

void verify_release(struct job *j)
{
	free(j->verify_written);
	j->verify_written = NULL;
	free(j->verify_ref);
	j->verify_ref = NULL;
}
