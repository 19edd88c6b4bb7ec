/* SPDX-License-Identifier: MIT */
/*
 * What the s3 engine (src/engine/s3.c) makes of a server's responses: status lines, headers
 * (Content-Length, ETag, Location) and bodies (ListObjectsV2, InitiateMultipartUpload and
 * CompleteMultipartUpload results, <Error> documents).  The parsers are the engine's own
 * (static), so the harness is the server: a loopback HTTP server in this process
 * (fuzz_s3_common.h) answers the engine's requests, one after the other, with the input's
 * responses, and closes each connection after its response (so a request that finds none left
 * gets an empty reply).  The input:
 *
 *	byte 0   what the engine does (below, modulo their number)
 *	byte 1   engine options: bit 0 cleanup=1, bit 1 md5=1, bit 2 sha256=1, bit 3 rcvlowat=0
 *	rest     the responses, each as the server sends it, separated by FUZZ_S3_SEP
 *
 * What the engine does: resolve s3://b/k (HEAD) or the prefix s3://b/p/ (a listing, with
 * continuation tokens) as a job does; s3_objects_size() and s3_objects_delete() of two
 * objects as the recipes do; or a job's datapath: GETs of 1 KiB ranges two at a time, one PUT
 * of a whole 1 KiB object, a multipart upload of two 5 MiB parts.  retries=1: a 500 or 503
 * is sent again once.
 */
#include "fuzz_s3_common.h"

#include "base/error.h"
#include "engine/engine.h"
#include "engine/s3.h"

#define FUZZ_S3_SEP "\n-----8<-----\n"
#define SMALL_BS    1024u
#define PART_BS     (5u << 20)
#define MAX_RESP    64

static struct {
	const uint8_t *p[MAX_RESP];
	size_t len[MAX_RESP];
	unsigned n, next;
} script;

static bool answer(int fd, const char *req)
{
	unsigned i;

	(void)req;
	pthread_mutex_lock(&fuzz_s3_lock);
	i = script.next < script.n ? script.next++ : MAX_RESP;
	pthread_mutex_unlock(&fuzz_s3_lock);
	if (i < MAX_RESP)
		fuzz_s3_send(fd, script.p[i], script.len[i]);
	return false;
}

static void split(const uint8_t *data, size_t size)
{
	const size_t sl = strlen(FUZZ_S3_SEP);
	const uint8_t *at = data, *end = data + size;

	script.n = script.next = 0;
	while (script.n < MAX_RESP) {
		const uint8_t *s = memmem(at, (size_t)(end - at), FUZZ_S3_SEP, sl);

		script.p[script.n] = at;
		script.len[script.n++] = (size_t)((s ? s : end) - at);
		if (!s)
			break;
		at = s + sl;
	}
}

static void target_free(struct engine_target *t)
{
	for (unsigned i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
	free(t->sizes);
}

static void resolve(const struct engine_ops *eng, const void *opts, bool directory)
{
	struct engine_target_req rq = {.name = directory ? "s3://b/p/" : "s3://b/k"};
	struct engine_target t = {0};
	struct llmio_error e = {0};

	rq.directory = directory;
	eng->target_resolve(opts, &rq, &t, &e);
	target_free(&t);
}

static void objects(bool del)
{
	const char *const names[] = {"s3://b/one", "s3://b/dir/two&three"};
	struct llmio_error e = {0};
	uint64_t sizes[2];
	unsigned deleted;

	if (del)
		s3_objects_delete(names, 2, &deleted, &e);
	else
		s3_objects_size(names, 2, sizes, &e);
}

/* I/Os on one object as a worker does: queue, commit, reap until each is done. */
static void datapath(const struct engine_ops *eng, const void *opts, bool write, uint32_t bs,
                     uint64_t size, unsigned depth, unsigned nios)
{
	static uint8_t mem[2][PART_BS];
	const char *const names[] = {"s3://b/obj"};
	void *bufs[2] = {mem[0], mem[1]};
	const struct engine_setup s = fuzz_s3_setup(names, &size, 1, bufs, depth, bs, write, opts);
	struct engine_ctx ctx = {0};
	struct llmio_error e = {0};
	struct io_req io[2];
	bool busy[2] = {false, false};
	unsigned done = 0;

	if (eng->init(&ctx, &s, &e)) {
		eng->cleanup(&ctx);
		return;
	}
	for (unsigned next = 0; done < nios;) {
		struct io_req *evs[2];
		int n;

		for (unsigned b = 0; b < depth && next < nios; b++) {
			if (busy[b])
				continue;
			io[b] = (struct io_req){.buf = bufs[b],
			                        .off = (uint64_t)next++ * bs,
			                        .len = bs,
			                        .buf_idx = (uint16_t)b,
			                        .op = write ? ENGINE_OP_WRITE : ENGINE_OP_READ};
			if (eng->queue(&ctx, &io[b]) == ENGINE_Q_COMPLETED)
				done++;
			else
				busy[b] = true;
		}
		if (next - done == 0)
			continue;
		if (eng->commit(&ctx) < 0)
			break;
		n = eng->reap(&ctx, 1, evs, 2);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++)
			busy[evs[i]->buf_idx] = false;
		done += (unsigned)n;
	}
	eng->cleanup(&ctx);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct engine_ops *eng = engine_find("s3");
	char why[256];

	(void)argc;
	(void)argv;
	fuzz_s3_serve(answer);
	/* libcurl's global state, once, before any input */
	if (!eng || eng->probe(why, sizeof(why)))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct engine_ops *eng = engine_find("s3");
	struct llmio_error e = {0};
	char text[128];
	void *opts;

	if (size < 2)
		return 0;
	opts = calloc(1, eng->opts_size);
	if (!opts)
		abort();
	snprintf(text, sizeof(text), "retries=1,cleanup=%d,md5=%d,sha256=%d%s", data[1] & 1,
	         !!(data[1] & 2), !!(data[1] & 4), data[1] & 8 ? ",rcvlowat=0" : "");
	if (engine_opts_parse(eng, text, opts, &e))
		abort();
	split(data + 2, size - 2);
	switch (data[0] % 7) {
	case 0:
		resolve(eng, opts, false);
		break;
	case 1:
		resolve(eng, opts, true);
		break;
	case 2:
		objects(false);
		break;
	case 3:
		objects(true);
		break;
	case 4:
		datapath(eng, opts, false, SMALL_BS, 3 * SMALL_BS, 2, 3);
		break;
	case 5:
		datapath(eng, opts, true, SMALL_BS, SMALL_BS, 1, 1);
		break;
	default:
		datapath(eng, opts, true, PART_BS, 2ull * PART_BS, 1, 2);
		break;
	}
	fuzz_s3_quiesce();
	free(opts);
	return 0;
}
