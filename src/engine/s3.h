/* SPDX-License-Identifier: MIT */
/*
 * What a recipe asks of an object store outside a job (src/workload/objects.c): which of its
 * objects exist, and removing the ones it created.  Endpoint and credentials as the s3 engine
 * finds them (docs/object-storage.md), with its default options.
 */
#ifndef LLMIO_ENGINE_S3_H
#define LLMIO_ENGINE_S3_H

#include <stdint.h>

struct llmio_error;

/* An object that does not exist (s3_objects_size). */
#define S3_ABSENT UINT64_MAX

/*
 * HEAD each of n names (s3://bucket/key): sizes[i], or S3_ABSENT.  0, or -errno with one
 * line in e: a missing bucket, refused credentials, no server at the endpoint.
 */
int s3_objects_size(const char *const *names, unsigned n, uint64_t *sizes, struct llmio_error *e);

/* DELETE each of n names; *deleted of them went.  0, or -errno with one line in e. */
int s3_objects_delete(const char *const *names, unsigned n, unsigned *deleted,
                      struct llmio_error *e);

/*
 * s3-agent's agent process (src/engine/s3_agent.c): the application starts its own program
 * again as `PROGRAM __s3-agent` with a socket on fd 3, and main() hands that socket here
 * (llmio's main does; another program that links libllmio and uses s3-agent does the same, or
 * names llmio in LLMIO_AGENT_EXE).  Serves until the application closes its end; the exit
 * code.
 */
#define S3_AGENT_ARG "__s3-agent"
#define S3_AGENT_FD  3
int s3_agent_serve(int sock);

#endif
