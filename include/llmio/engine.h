/* SPDX-License-Identifier: MIT */
/*
 * Engines (datapaths) as seen by clients: which exist, whether each can run here and why not,
 * and their options.  The engine interface itself is internal (src/engine/engine.h).
 */
#ifndef LLMIO_ENGINE_H
#define LLMIO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include "llmio/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct llmio_engine_option_info {
	const char *name;
	const char *alias; /* fio's name for it, or NULL */
	const char *type;  /* "bool", "int", "enum", "time (ms)" */
	const char *def;
	const char *help;
};

struct llmio_engine_info {
	const char *name;
	const char *summary;
	bool async;           /* can keep iodepth > 1 I/Os in flight per thread */
	bool supports_direct; /* O_DIRECT */
	size_t noptions;
};

/** Number of built-in engines, and each by index (NULL past the end). */
LLMIO_API size_t llmio_engine_count(void);
LLMIO_API int llmio_engine_info(size_t i, struct llmio_engine_info *out);
/** Option `opt` of engine `engine` into *out. \return 0, or -ENOENT past the end. */
LLMIO_API int llmio_engine_option(size_t engine, size_t opt, struct llmio_engine_option_info *out);

/**
 * Can the engine run on this machine?  \return 0 when it can; otherwise a negative errno and
 * a sentence saying exactly why written to why.  -ENOENT for an unknown engine name (why
 * then lists the engines that exist).
 */
LLMIO_API int llmio_engine_probe(const char *name, char *why, size_t whylen);

/** Does engine `name` have an option called `key` (or with that alias)? */
LLMIO_API bool llmio_engine_has_option(const char *name, const char *key);

#ifdef __cplusplus
}
#endif
#endif
