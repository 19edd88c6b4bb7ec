/* SPDX-License-Identifier: MIT */
/*
 * s3-agent's wire protocol (src/engine/s3_agent.c), apart so that a test can play either side
 * as a hostile peer (tests/test_s3_agent.c).  Neither side trusts the other: every count,
 * index and length that crosses the socket is checked against these limits and against what
 * the setup said before it is used.
 */
#ifndef LLMIO_ENGINE_S3_AGENT_H
#define LLMIO_ENGINE_S3_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* What a setup may ask for: above these it is no job the application would run. */
#define AGENT_MAX_DEPTH   65536u     /* iodepth, buffers */
#define AGENT_MAX_FILES   (1u << 20) /* objects */
#define AGENT_MAX_WORKERS 4096u
#define AGENT_MAX_BUF     (1ull << 32) /* bytes of one buffer (io_req.len is 32 bits) */
#define AGENT_MAX_OBJECT  (1ull << 62) /* bytes of one object: offsets stay far from wrapping */

/* What the application tells the agent at start, then one agent_file per object. */
struct agent_setup {
	uint64_t buf_len;
	uint32_t iodepth, nfiles, nbufs, nworkers, writable;
	int32_t cpu;
};

/* An object: its size, and its name up to the message's end (no terminating NUL sent). */
struct agent_file {
	uint64_t size;
	char name[2048];
};

/* The first page of a buffer's mapping: what passing it to the agent needs. */
struct agent_buf_head {
	size_t map;
	int fd;
};

/* A request: the I/O on buffer idx; or, op AGENT_FINISH, the job's end (s3's finish). */
struct agent_req {
	uint64_t off;
	uint32_t len, idx, file, op;
};

#define AGENT_FINISH 0xf1u

struct agent_done {
	int64_t res;
	uint32_t idx, pad;
};

#define AGENT_RC_FINISHED 2

/* What every message from the agent starts with. */
struct agent_hdr {
	uint32_t n;     /* agent_done records after the header */
	int32_t rc;     /* init's, the final message's (1: the agent has cleaned up),
	                   AGENT_RC_FINISHED: the answer to AGENT_FINISH (in result),
	                   or -EPROTO: the agent refused a request and stopped */
	int32_t result; /* AGENT_RC_FINISHED's: s3's finish(), 0 or -errno */
	uint32_t pad;
	struct engine_counters c; /* since the previous message */
	uint64_t cpu_ns;          /* the agent's CPU since the previous message */
	char text[1024]; /* notes (init, final), the first failure's reason, or init's error */
};

#endif
