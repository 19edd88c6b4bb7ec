/* SPDX-License-Identifier: MIT */
/*
 * The s3 engine's pieces that s3-agent (src/engine/s3_agent.c) and cuda-bounce host=s3 share,
 * and that its tests call.  Nothing outside src/engine includes this: the rest of llmio reaches
 * an engine through engine.h (engine_ops.objects, engine_ops.process_main).
 */
#ifndef LLMIO_ENGINE_S3_H
#define LLMIO_ENGINE_S3_H

#include <stdint.h>

#include "engine/engine.h"

struct llmio_error;

/*
 * The object operations of an S3 store (engine.h, struct engine_objects): endpoint and
 * credentials as the s3 engine finds them (docs/object-storage.md), with its default options.
 */
extern const struct engine_objects s3_objects;

/* An object that does not exist (s3_objects_size). */
#define S3_ABSENT ENGINE_OBJECT_ABSENT

/*
 * HEAD each of n names (s3://bucket/key): sizes[i], or S3_ABSENT.  0, or -errno with one
 * line in e: a missing bucket, refused credentials, no server at the endpoint.
 */
int s3_objects_size(const char *const *names, unsigned n, uint64_t *sizes, struct llmio_error *e);

/* DELETE each of n names; *deleted of them went.  0, or -errno with one line in e. */
int s3_objects_delete(const char *const *names, unsigned n, unsigned *deleted,
                      struct llmio_error *e);

/* Every object under prefix (s3://bucket/prefix), in key order, into t (zeroed first). */
int s3_objects_list(const char *prefix, struct engine_target *t, struct llmio_error *e);

/*
 * s3-agent's agent process (src/engine/s3_agent.c): the application starts its own program
 * again as `PROGRAM __s3-agent` with a socket on fd 3, and that socket comes here (llmio's
 * main hands its argv to engine_process_main(), which calls s3-agent's process_main; another
 * program that links libllmio and uses s3-agent does the same, or names llmio in
 * LLMIO_AGENT_EXE).  Serves until the application closes its end; the exit code.
 */
#define S3_AGENT_ARG "__s3-agent"
#define S3_AGENT_FD  3
int s3_agent_serve(int sock);

#endif
