/* SPDX-License-Identifier: MIT */
/*
 * What the engines that do one call per I/O on the job's files (filestat, filedelete,
 * ftruncate, falloc; fio's file-operation engines) share: the job's files as the worker hands
 * them over, kept per thread, and a probe for calls every Linux has.
 */
#ifndef LLMIO_ENGINE_FILEOP_H
#define LLMIO_ENGINE_FILEOP_H

#include "engine/engine.h"

struct fileop {
	const int *fds;
	const char *const *names;
	const bool *created; /* engine_setup.created */
	unsigned nfiles;
	const void *opts; /* the engine's parsed options */
};

/* Always 0: plain system calls. */
int fileop_probe(char *why, size_t len);

/* ctx->priv becomes a struct fileop of s.  0 or -ENOMEM. */
int fileop_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e);

void fileop_cleanup(struct engine_ctx *ctx);

#endif
