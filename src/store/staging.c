/* SPDX-License-Identifier: MIT */
/*
 * The staging pool: staging_bytes / stripe_size buffers of stripe_size bytes, allocated once
 * when the store opens and handed to the engine as its I/O buffers (io_uring registers them).
 * Every byte the store moves passes through one of them, so staging_bytes bounds the memory the
 * store holds for write-behind and read-ahead together.  Host engines get one aligned
 * allocation; an engine with buffers of its own (GPU memory) allocates them, and the copies in
 * and out go through its buf_copy_in / buf_copy_out (engine.h).  The pool belongs to the I/O
 * thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/engine.h"
#include "store/store_internal.h"

int staging_alloc(struct llmio_store *s, struct llmio_error *e)
{
	struct store_staging *p = &s->stg;
	unsigned i;

	p->buf = calloc(p->nbufs, sizeof(*p->buf));
	p->free = calloc(p->nbufs, sizeof(*p->free));
	p->users = calloc(p->nbufs, sizeof(*p->users));
	if (!p->buf || !p->free || !p->users)
		return llmio_err(e, -ENOMEM, "out of memory for the store's staging pool");
	if (s->eng->buf_alloc) {
		void *zero = calloc(1, p->buf_len);
		int rc = 0;

		if (!zero)
			return llmio_err(e, -ENOMEM, "out of memory for the store's staging pool");
		p->engine_mem = true;
		for (i = 0; i < p->nbufs && !rc; i++) {
			rc = s->eng->buf_alloc(s->eng_opts, &p->buf[i], p->buf_len, zero, e);
			if (rc)
				p->buf[i] = NULL;
		}
		free(zero);
		if (rc) {
			llmio_err_prefix(e, "store staging buffer %u of %zu bytes", i - 1,
			                 p->buf_len);
			return rc;
		}
	} else {
		if (posix_memalign(&p->host, 4096, (size_t)p->nbufs * p->buf_len))
			return llmio_err(
			        e, -ENOMEM,
			        "cannot allocate the store's %llu bytes of staging memory; "
			        "lower staging_bytes",
			        (unsigned long long)p->nbufs * p->buf_len);
		for (i = 0; i < p->nbufs; i++)
			p->buf[i] = (char *)p->host + (size_t)i * p->buf_len;
	}
	for (i = 0; i < p->nbufs; i++)
		p->free[i] = (uint16_t)(p->nbufs - 1 - i);
	p->nfree = p->nbufs;
	return 0;
}

void staging_release(struct llmio_store *s)
{
	struct store_staging *p = &s->stg;

	if (p->engine_mem && p->buf)
		for (unsigned i = 0; i < p->nbufs; i++)
			if (p->buf[i])
				s->eng->buf_free(s->eng_opts, p->buf[i]);
	free(p->host);
	free(p->buf);
	free(p->free);
	free(p->users);
	p->users = NULL;
	p->host = NULL;
	p->buf = NULL;
	p->free = NULL;
}

int staging_in(struct llmio_store *s, uint16_t idx, size_t at, const void *src, size_t n)
{
	char *b = (char *)s->stg.buf[idx] + at;

	/* no buf_copy_in: host memory this process maps (ENGINE_CAP_HOST_BUFS, engine.h) */
	if (!s->stg.engine_mem || !s->eng->buf_copy_in) {
		memcpy(b, src, n);
		return 0;
	}
	return s->eng->buf_copy_in(s->eng_opts, s->stg.buf[idx], at, src, n);
}

int staging_out(struct llmio_store *s, uint16_t idx, size_t at, void *dst, size_t n)
{
	const char *b = (const char *)s->stg.buf[idx] + at;

	if (!s->stg.engine_mem || !s->eng->buf_copy_out) {
		memcpy(dst, b, n);
		return 0;
	}
	return s->eng->buf_copy_out(s->eng_opts, s->stg.buf[idx], at, dst, n);
}

/* Alignment padding around a tensor's bytes: zeros, not another tensor's bytes. */
void staging_zero(struct llmio_store *s, uint16_t idx, size_t from, size_t to)
{
	static const char zeros[4096];

	if (!s->stg.engine_mem) {
		memset((char *)s->stg.buf[idx] + from, 0, to - from);
		return;
	}
	while (from < to) {
		size_t n = to - from < sizeof(zeros) ? to - from : sizeof(zeros);

		staging_in(s, idx, from, zeros, n);
		from += n;
	}
}
