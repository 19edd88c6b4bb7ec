/* SPDX-License-Identifier: MIT */
/*
 * verify= (fio's data-integrity check, docs/fio.md): every block a job writes carries a header
 * (magic, algorithm, length, its own file offset) and a checksum of the block; a job that reads
 * with verify checks each block it reads, and a write job reads back every block it wrote when
 * it ends (fio's do_verify).  The first mismatch stops the job: file, offset, expected, found.
 */
#ifndef LLMIO_CORE_VERIFY_H
#define LLMIO_CORE_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "llmio/common.h"

/* verify= algorithms (struct llmio_job_opts.verify, the option table's choices in order) */
enum verify_algo {
	VERIFY_NONE,
	VERIFY_CRC32C,
	VERIFY_MD5,
	VERIFY_SHA256,
	VERIFY_CRC64, /* fio's crc64: the Jones polynomial, reflected, from 0, not inverted */
	VERIFY_META,  /* fio's meta: the header alone (offset, length), no digest of the data */
};

/* bytes of the header at the start of every verified block: the smallest bs verify takes */
#define VERIFY_HDR_LEN 56

/* The digest of buf[0..len) by algo into out (4, 16, 32 or 8 bytes); its length, 0 when
 * libcrypto could not make its context (out of memory), or for meta (no digest). */
size_t verify_digest(enum verify_algo algo, const void *buf, size_t len, uint8_t out[32]);

/*
 * Write the header and checksum of the block buf[0..len) that goes to file offset off.  0, or
 * -ENOMEM with e when libcrypto cannot compute the digest (see digest_failed()).
 */
int verify_stamp(enum verify_algo algo, void *buf, uint32_t len, uint64_t off,
                 struct llmio_error *e);

/*
 * Check the block buf[0..len) read at file offset off of path.  0, or -EILSEQ with one line in
 * e naming path, the offset, what was expected and what was found (-ENOMEM as verify_stamp's).
 * buf is left as read.
 */
int verify_check(enum verify_algo algo, void *buf, uint32_t len, uint64_t off, const char *path,
                 struct llmio_error *e);

/*
 * verify=meta, fio's layout: a 40-byte header every interval bytes of the block buf[0..len)
 * (0, or more than len: one), naming off + its place, thread and seq (fio's thread and
 * numberio).  The caller has put the data there first.
 */
void verify_meta_stamp(void *buf, uint32_t len, uint64_t off, uint32_t interval, uint16_t thread,
                       uint16_t seq);

/*
 * Check a verify=meta block read at off: every header, and after each the bytes of ref (len of
 * them: verify_pattern's block; NULL: the data is not checked).  0, or -EILSEQ with one line
 * naming path, the offset, what was expected and what was found.
 */
int verify_meta_check(const void *buf, uint32_t len, uint64_t off, uint32_t interval,
                      const uint8_t *ref, const char *path, struct llmio_error *e);

struct job;

/* verify_check() with the job's verify= and, for meta, its verify_interval and verify_pattern. */
int verify_block(const struct job *j, void *buf, uint32_t len, uint64_t off, const char *path,
                 struct llmio_error *e);

/* Allocate what the job's verify needs (the map of blocks written); 0 or -errno (with e). */
int verify_prepare(struct job *j, struct llmio_error *e);

/* Mark the block at off of file as written (worker threads; no lock). */
void verify_mark(struct job *j, unsigned file, uint64_t off);

/* Read back and check every block the job wrote; 0, or -EILSEQ / -errno with e. */
int verify_pass(struct job *j, struct llmio_error *e);

void verify_release(struct job *j);

#endif
