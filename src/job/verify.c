/* SPDX-License-Identifier: MIT */
/*
 * verify=crc32c|md5|sha256: a header and checksum in every written block, checked when read.
 * The digests are the standard ones (CRC-32C: RFC 3720's Castagnoli polynomial, reflected;
 * MD5: RFC 1321; SHA-256: FIPS 180-4), written out here rather than called from libcrypto
 * (which the s3 engine links): a block is hashed on the worker thread for every I/O, and
 * OpenSSL 3's EVP_Digest allocates a context and fetches the algorithm on each call, while
 * these functions touch nothing but the block and the stack.  tests/test_verify.c checks each
 * against its published test vectors.
 *
 * Block layout: magic, algorithm, length, the block's own file offset, then the digest of the
 * whole block computed with the digest field zeroed.  The offset catches a block read from the
 * wrong place (a misdirected write), the digest a changed byte anywhere in the block.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "job/job_internal.h"
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

/* ---- CRC-32C (Castagnoli), reflected, table-driven ---- */

static uint32_t crc32c(const uint8_t *p, size_t n)
{
	static uint32_t table[256];
	static int ready; /* benign race: every thread computes the same table */
	uint32_t c = 0xffffffffu;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = i;

			for (int k = 0; k < 8; k++)
				v = v & 1 ? (v >> 1) ^ 0x82f63b78u : v >> 1;
			table[i] = v;
		}
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	while (n--)
		c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* ---- MD5 (RFC 1321) ---- */

#define ROL(x, c) (((x) << (c)) | ((x) >> (32 - (c))))

static void md5_block(uint32_t h[4], const uint8_t *p)
{
	static const uint32_t k[64] = {
	        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
	        0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
	        0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
	        0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
	        0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
	        0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	        0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
	        0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
	        0xeb86d391};
	static const uint8_t r[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
	                              5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
	                              4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
	                              6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
	uint32_t w[16], a = h[0], b = h[1], c = h[2], d = h[3];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
		       (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
	for (int i = 0; i < 64; i++) {
		uint32_t f, t;
		int g;

		if (i < 16) {
			f = (b & c) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (d & b) | (~d & c);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = b ^ c ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = c ^ (b | ~d);
			g = (7 * i) % 16;
		}
		t = d;
		d = c;
		c = b;
		b = b + ROL(a + f + k[i] + w[g], r[i]);
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

/* ---- SHA-256 (FIPS 180-4) ---- */

#define ROR(x, c) (((x) >> (c)) | ((x) << (32 - (c))))

static void sha256_block(uint32_t h[8], const uint8_t *p)
{
	static const uint32_t k[64] = {
	        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	        0xc67178f2};
	uint32_t w[64], s[8];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(s, h, sizeof(s));
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = s[7] + (ROR(s[4], 6) ^ ROR(s[4], 11) ^ ROR(s[4], 25)) +
		              ((s[4] & s[5]) ^ (~s[4] & s[6])) + k[i] + w[i];
		uint32_t t2 = (ROR(s[0], 2) ^ ROR(s[0], 13) ^ ROR(s[0], 22)) +
		              ((s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]));

		memmove(s + 1, s, 7 * sizeof(s[0]));
		s[4] += t1;
		s[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		h[i] += s[i];
}

/* MD5 and SHA-256 share the Merkle-Damgard padding: 0x80, zeros, the bit length (little
 * endian for MD5, big endian for SHA-256) in the last 8 bytes of a 64-byte block. */
static void md_run(bool sha, uint32_t *h, const uint8_t *p, size_t n)
{
	uint8_t tail[128] = {0};
	const uint64_t bits = (uint64_t)n * 8;
	size_t rest = n % 64, tlen = rest < 56 ? 64 : 128;

	for (size_t i = 0; i + 64 <= n; i += 64)
		sha ? sha256_block(h, p + i) : md5_block(h, p + i);
	memcpy(tail, p + n - rest, rest);
	tail[rest] = 0x80;
	for (int i = 0; i < 8; i++)
		tail[tlen - 8 + i] = (uint8_t)(sha ? bits >> (56 - 8 * i) : bits >> (8 * i));
	for (size_t i = 0; i < tlen; i += 64)
		sha ? sha256_block(h, tail + i) : md5_block(h, tail + i);
}

size_t verify_digest(enum verify_algo algo, const void *buf, size_t len, uint8_t out[32])
{
	uint32_t h[8];

	switch (algo) {
	case VERIFY_CRC32C: {
		const uint32_t c = crc32c(buf, len);

		memcpy(out, &c, sizeof(c));
		return sizeof(c);
	}
	case VERIFY_MD5:
		h[0] = 0x67452301;
		h[1] = 0xefcdab89;
		h[2] = 0x98badcfe;
		h[3] = 0x10325476;
		md_run(false, h, buf, len);
		for (int i = 0; i < 16; i++)
			out[i] = (uint8_t)(h[i / 4] >> (8 * (i % 4)));
		return 16;
	case VERIFY_SHA256: {
		static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

		memcpy(h, h0, sizeof(h));
		md_run(true, h, buf, len);
		for (int i = 0; i < 32; i++)
			out[i] = (uint8_t)(h[i / 4] >> (24 - 8 * (i % 4)));
		return 32;
	}
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

void verify_stamp(enum verify_algo algo, void *buf, uint32_t len, uint64_t off)
{
	struct vhdr h = {.magic = VERIFY_MAGIC, .algo = algo, .len = len, .off = off};
	uint8_t sum[32] = {0};
	size_t n;

	memcpy(buf, &h, sizeof(h));
	n = block_digest(algo, buf, len, sum);
	memcpy((uint8_t *)buf + offsetof(struct vhdr, sum), sum, n);
}

static const char *const algo_names[] = {"none", "crc32c", "md5", "sha256"};

int verify_check(enum verify_algo algo, void *buf, uint32_t len, uint64_t off, const char *path,
                 struct llmio_error *e)
{
	struct vhdr h;
	uint8_t sum[32];
	char want[72], got[72];
	size_t n;

	memcpy(&h, buf, sizeof(h));
	if (h.magic != VERIFY_MAGIC || h.algo != (uint32_t)algo || h.len != len) {
		return llmio_err(
		        e, -EILSEQ,
		        "verify: %s at offset %" PRIu64
		        ": expected a %s block header (magic 0x%08x, "
		        "%u bytes), found magic 0x%08x, %s, %u bytes: not written with verify=%s "
		        "and bs=%u, or overwritten",
		        path, off, algo_names[algo], VERIFY_MAGIC, len, h.magic,
		        h.algo < 4 ? algo_names[h.algo] : "unknown algorithm", h.len,
		        algo_names[algo], len);
	}
	if (h.off != off) {
		return llmio_err(e, -EILSEQ,
		                 "verify: %s at offset %" PRIu64
		                 ": expected the block of offset %" PRIu64
		                 ", found the block of offset %" PRIu64 " (a misplaced write)",
		                 path, off, off, h.off);
	}
	n = block_digest(algo, buf, len, sum);
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

int verify_prepare(struct job *j, struct llmio_error *e)
{
	const struct llmio_job_opts *o = &j->o;
	const bool writes = o->rw != LLMIO_RW_READ && o->rw != LLMIO_RW_RANDREAD;
	const bool random = o->rw == LLMIO_RW_RANDWRITE || o->rw == LLMIO_RW_RANDRW;
	const struct llmio_optdesc *cleanup;

	if (!o->verify)
		return 0;
	if ((j->engine->caps & ENGINE_CAP_NO_IO) ||
	    (j->engine->buf_alloc && !(j->engine->caps & ENGINE_CAP_HOST_BUFS)))
		return llmio_err(
		        e, -EINVAL,
		        "verify needs an engine whose buffers are in host memory: %s is not "
		        "one (use psync, libaio, io_uring or mmap)",
		        j->engine->name);
	if (o->io_source)
		return llmio_err(e, -EINVAL, "verify is for jobs of rw/bs, not recipes or replay");
	if (o->bs < VERIFY_HDR_LEN)
		return llmio_err(e, -EINVAL, "verify needs bs >= %d (the block header)",
		                 VERIFY_HDR_LEN);
	/* without fio's random map two writes of one block may be in flight at once and mix */
	if (writes && random &&
	    (o->numjobs > 1 || ((j->engine->caps & ENGINE_CAP_ASYNC) && o->iodepth > 1)))
		return llmio_err(
		        e, -EINVAL,
		        "verify with random writes needs numjobs=1 and iodepth=1 (two writes "
		        "of one block at once could mix); or write sequentially");
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
				ret = verify_check(j->o.verify, rb.buf, (uint32_t)j->o.bs, off,
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
}
