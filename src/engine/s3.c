/* SPDX-License-Identifier: MIT */
/*
 * s3: objects in an S3-compatible store over HTTP(S), through libcurl's multi interface on the
 * worker thread.  queue() prepares a transfer on one of iodepth easy handles, commit() adds
 * the batch to the multi handle and drives it, reap() polls until completions arrive; the
 * multi handle's connection cache keeps connections open from one request to the next.
 *
 *  - reads are Range GETs whose body is written straight into the I/O buffer (no staging,
 *    no realloc; IOR's curl backend reallocs per chunk);
 *  - a write I/O that covers a whole object is one PUT; an object larger than bs is a
 *    multipart upload whose parts are the job's write I/Os (so bs >= 5 MiB there, as S3
 *    requires of every part but the last), initiated at its first write and completed when
 *    its last part is in;
 *  - signing is libcurl's own SigV4 signer (CURLOPT_AWS_SIGV4); it signs the
 *    x-amz-content-sha256 header the caller supplies: UNSIGNED-PAYLOAD unless sha256=1
 *    (hashing every payload costs about 1.15 CPU-s per GB here), so each cost can be priced
 *    apart; Content-MD5 likewise with md5=1;
 *  - 503 SlowDown (and 500) are retried with exponential backoff, and counted;
 *  - a server is taken at its word only for what was asked: no redirect is followed (the
 *    credentials stay with the endpoint), a GET must get its range, a listing must move on
 *    in key order, and every request ends when no byte moves for stall ms, after timeout ms,
 *    or when the job stops (docs/object-storage.md, "What llmio trusts of a server").
 *
 * Targets (s3://bucket/key, s3://bucket/prefix) are resolved by s3_target_resolve() on the
 * control thread before the workers start: HEAD gives an object's size, a ListObjectsV2 of a
 * prefix gives a directory's objects.  Endpoint, region and credentials come from the
 * environment (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, ...) or ~/.aws/credentials.
 *
 * This file is the engine: its options, its targets, the event loop and its engine_ops.  The
 * signing is s3_sign.c, the control requests and multipart uploads s3_request.c, the listing
 * s3_list.c; s3_internal.h is what they share.
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "engine/engine.h"
#include "engine/s3_internal.h"
#include "llmio/job.h"

/*
 * libcurl's receive and send buffers (16 and 64 KiB by default): one recv() or send() moves up
 * to this much, as curl's own tool does with 100 KiB.
 */
#define S3_XFER_BUF    (512 * 1024)
#define S3_COPY_SAMPLE 16

/* fio's nearest, its http engine in http_mode=s3, has none of these: `--emit-fio` says so */
#define S3_NO_FIO                                                                                  \
	.fio_kind = OPTD_FIO_NONE, .fio_note = "fio's http engine (http_mode=s3) has no "          \
	                                       "equivalent"

static const struct llmio_optdesc s3_options[] = {
        {
                .name = "sha256",
                .alias = NULL,
                .type = OPTD_BOOL,
                OPTD_FIELD(struct s3_opts, sha256),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "sign the payload's SHA-256 (x-amz-content-sha256) instead of "
                        "UNSIGNED-PAYLOAD: prices payload hashing",
                S3_NO_FIO,
        },
        {
                .name = "md5",
                .alias = NULL,
                .type = OPTD_BOOL,
                OPTD_FIELD(struct s3_opts, md5),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "send Content-MD5 with every PUT (the server checks it)",
                S3_NO_FIO,
        },
        {
                .name = "tls",
                .alias = NULL,
                .type = OPTD_ENUM,
                OPTD_FIELD(struct s3_opts, tls),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "auto",
                .help = "HTTPS or plain HTTP: auto follows the endpoint's scheme",
                .choices = "auto|on|off",
                S3_NO_FIO,
        },
        {
                .name = "http",
                .alias = NULL,
                .type = OPTD_ENUM,
                OPTD_FIELD(struct s3_opts, http),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "1.1",
                .help = "HTTP version: 1.1, or 2 (multiplexed on one connection)",
                .choices = "1.1|2",
                S3_NO_FIO,
        },
        {
                .name = "retries",
                .alias = NULL,
                .type = OPTD_INT,
                OPTD_FIELD(struct s3_opts, retries),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "5",
                .help = "attempts after a 503 SlowDown or 500 (data and control requests alike), "
                        "with exponential backoff from 10 ms",
                .min = 0,
                .max = 20,
                S3_NO_FIO,
        },
        {
                .name = "cleanup",
                .alias = NULL,
                .type = OPTD_BOOL,
                OPTD_FIELD(struct s3_opts, cleanup),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "delete, at the end, the objects this run created (never one that existed)",
                S3_NO_FIO,
        },
        {
                .name = "rcvlowat",
                .alias = NULL,
                .type = OPTD_SIZE,
                OPTD_FIELD(struct s3_opts, rcvlowat),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "256k",
                .min = 0,
                .max = 4 << 20,
                .help = "wake up for a GET's body once this many bytes have arrived "
                        "(SO_RCVLOWAT), not for every TCP segment: fewer wake-ups per GB; "
                        "0: every segment, as curl does; plain HTTP/1.1 only",
                .sweep_if_set = true,
                S3_NO_FIO,
        },
        {
                .name = "stall",
                .alias = NULL,
                .type = OPTD_DURATION,
                .bare_ns = 1000000000, /* a bare number is seconds */
                .store_ns = 1000000,   /* the field holds ms */
                OPTD_FIELD(struct s3_opts, stall),
                .scope = OPTD_SCOPE_ENGINE,
                .def = S3_STR(S3_STALL_S) "s",
                .min = 0,
                .max = 3600e9,
                .help = "fail a request on which no byte has moved for this long (a server "
                        "that stopped answering); a slow transfer that moves never trips it; "
                        "0: never",
                S3_NO_FIO,
        },
        {
                .name = "timeout",
                .alias = NULL,
                .type = OPTD_DURATION,
                .bare_ns = 1000000000,
                .store_ns = 1000000,
                OPTD_FIELD(struct s3_opts, timeout),
                .scope = OPTD_SCOPE_ENGINE,
                .def = S3_STR(S3_TIMEOUT_S) "s",
                .min = 0,
                .max = 86400e9,
                .help = "the total deadline of each request (HEAD, listing page, multipart "
                        "initiate / complete, and each GET or PUT of one block); 0: none",
                S3_NO_FIO,
        },
        {.name = NULL},
};

enum xfer_kind { XFER_GET, XFER_PUT, XFER_PART };

/* One easy handle and what its request needs, reused for every I/O it carries. */
struct s3_xfer {
	struct s3_data *d;
	CURL *h;
	struct io_req *io;
	struct s3_file *file;
	enum xfer_kind kind;
	unsigned part;     /* XFER_PART: part number - 1 */
	uint64_t pos;      /* bytes of the body moved so far */
	unsigned attempts; /* retries so far */
	uint64_t due_ns;   /* a retry waits until then */
	bool busy;
	long code; /* the response's HTTP status, from its status line (on_header) */
	int lowat; /* SO_RCVLOWAT set on the connection's socket; 0: the default (1) */
	int fd;    /* the connection's socket while the transfer runs, else -1 */
	struct curl_slist hdr[4]; /* caller-owned nodes: no allocation per request */
	char h_range[64], h_sha[96], h_md5[64], h_token[2100];
	char url[S3_URL_MAX];
	char etag[80];
	char body[S3_BODY_MAX]; /* an error response's XML */
	size_t body_len;
	char errbuf[CURL_ERROR_SIZE];
	int64_t cr_lo, cr_hi; /* a GET's Content-Range, -1 when none came */
	char bad[200];        /* why the answer is not the one asked for (on_body), "" */
	uint64_t moved;       /* bytes moved at moved_ns (xfer_moved), for the stall check */
	uint64_t moved_ns;    /* 0: not checked since the transfer was added */
};

static int s3_probe(char *why, size_t len)
{
	const curl_version_info_data *v;
	CURLcode rc = s3_curl_init();

	if (rc) {
		s3_fmt(why, len, "libcurl failed to initialise: %s", curl_easy_strerror(rc));
		return -ENOTSUP;
	}
	v = curl_version_info(CURLVERSION_NOW);
	/* CURLOPT_AWS_SIGV4 came in 7.75; before it there is no signer to use */
	if (v->version_num < 0x074b00) {
		s3_fmt(why, len, "libcurl %s has no AWS SigV4 signer (7.75 or newer needed)",
		       v->version);
		return -ENOTSUP;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Targets                                                                                  */

/*
 * A recipe's objects (rq->files): names and sizes as the recipe gives them, which prepared
 * them (src/workload/objects.c); only a read of size 0 asks the server (HEAD).
 */
static int resolve_list(CURL *h, const struct s3_cfg *c, const struct engine_target_req *rq,
                        struct engine_target *t, struct llmio_error *e)
{
	char bucket[256], key[S3_KEY_MAX + 1];
	int ret = 0;

	for (unsigned i = 0; i < rq->nfiles && !ret; i++) {
		uint64_t size = rq->files[i].size;

		ret = s3_split_url(rq->files[i].path, bucket, sizeof(bucket), key, sizeof(key), e);
		if (!ret && !size && !rq->writes)
			ret = s3_head_object(h, c, bucket, key, &size, e);
		if (!ret && !size && rq->writes)
			ret = llmio_err(e, -EINVAL, "writing %s needs its size", rq->files[i].path);
		if (!ret)
			ret = s3_add_object(t, bucket, key, size);
	}
	return ret;
}

/* A job writes whole blocks: an object's last part that bs does not fill would never go. */
static int whole_blocks(const struct engine_target_req *rq, struct llmio_error *e)
{
	const uint64_t tail = rq->bs ? rq->size % rq->bs : 0, down = rq->size - tail;

	if (!tail || rq->size < rq->bs)
		return 0;
	return llmio_err(e, -EINVAL,
	                 "writing %s: --size %" PRIu64 " is not a multiple of bs=%" PRIu64
	                 ": a job writes whole blocks, so the object's last %" PRIu64
	                 " bytes would never be sent and its upload never completed; use "
	                 "--size %" PRIu64 " or %" PRIu64,
	                 rq->name, rq->size, rq->bs, tail, down, down + rq->bs);
}

/*
 * The objects of a job (engine.h, target_resolve):
 *  - --filename s3://bucket/key: that object; its size from HEAD, or --size for a write;
 *  - --directory s3://bucket/prefix: a write job writes prefix/llmio.0 .. llmio.N-1 of
 *    size/nrfiles each (llmio's own names, as in a directory); a read job reads every object
 *    a listing of prefix/ returns, in the listing's (key) order.
 */
static int s3_target_resolve(const void *opts, const struct engine_target_req *rq,
                             struct engine_target *t, struct llmio_error *e)
{
	char bucket[256], rest[S3_KEY_MAX + 1], key[S3_KEY_MAX + 16];
	struct s3_cfg c;
	uint64_t size;
	CURL *h;
	int ret;

	memset(t, 0, sizeof(*t));
	if (rq->random_writes)
		return llmio_err(
		        e, -EINVAL,
		        "%s: an object is written sequentially and whole, so random "
		        "writes cannot update it; use --rw write (randread reads at random)",
		        rq->name);
	ret = s3_config_load(opts, &c, e);
	if (ret)
		return ret;
	c.outside_stop = rq->stop;
	ret = s3_split_url(rq->files ? rq->files[0].path : rq->name, bucket, sizeof(bucket), rest,
	                   sizeof(rest), e);
	if (ret)
		return ret;
	h = curl_easy_init();
	if (!h)
		return llmio_err(e, -ENOMEM, "libcurl could not make a handle");
	if (rq->files) {
		ret = resolve_list(h, &c, rq, t, e);
	} else if (!rq->directory) {
		if (!rest[0]) {
			ret = llmio_err(e, -EINVAL, "%s names no key: use s3://%s/KEY", rq->name,
			                bucket);
		} else if (rq->writes) {
			if (!rq->size)
				ret = llmio_err(
				        e, -EINVAL,
				        "writing %s needs --size (an object has no size until "
				        "it is written)",
				        rq->name);
			else if (!(ret = whole_blocks(rq, e)))
				ret = s3_add_object(t, bucket, rest, rq->size);
		} else {
			ret = s3_head_object(h, &c, bucket, rest, &size, e);
			if (!ret)
				ret = s3_add_object(t, bucket, rest, size);
		}
	} else {
		size_t len = strlen(rest);

		while (len && rest[len - 1] == '/')
			rest[--len] = '\0';
		if (rq->writes) {
			unsigned n = rq->nrfiles ? rq->nrfiles : 1;
			uint64_t per = rq->size / n;

			per -= rq->bs ? per % rq->bs : 0;
			if (!per)
				ret = llmio_err(
				        e, -EINVAL,
				        "writing under %s needs --size of at least bs x nrfiles",
				        rq->name);
			for (unsigned i = 0; i < n && !ret; i++) {
				s3_fmt(key, sizeof(key), "%s%sllmio.%u", rest, len ? "/" : "", i);
				ret = s3_add_object(t, bucket, key, per);
			}
		} else {
			s3_fmt(key, sizeof(key), "%s%s", rest, len ? "/" : "");
			ret = s3_list_prefix(h, &c, bucket, key, t, e);
			if (!ret && !t->n)
				ret = llmio_err(
				        e, -ENOENT,
				        "no objects under %s: write some first (--rw=write), or "
				        "fix the prefix",
				        rq->name);
		}
	}
	curl_easy_cleanup(h);
	if (ret == -ENOMEM && e && !e->msg[0])
		llmio_err(e, ret, "out of memory resolving %s", rq->name);
	return ret;
}

const struct engine_objects s3_objects = {
        .size = s3_objects_size,
        .remove = s3_objects_delete,
        .list = s3_objects_list,
        .writer = &engine_s3,
};

/* ---------------------------------------------------------------------------------------- */
/* The data path                                                                            */

static void set_lowat(struct s3_xfer *x, int want)
{
	if (want == x->lowat || x->fd < 0)
		return;
	setsockopt(x->fd, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof(want));
	x->lowat = want;
}

/*
 * This thread's CPU time, for the split of the client's CPU (copies, hashing): CPU, not the
 * time a busy machine preempted the thread meanwhile.
 */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Whether a GET's answer is the range asked: 206 with that Content-Range, or 200 with a whole
 * object that is the range.  Else x->bad says what came instead, and the body is refused: data
 * from another offset would pass as the block's.
 */
static bool range_ok(struct s3_xfer *x)
{
	const struct io_req *io = x->io;

	if (x->code == 206 && x->cr_lo == (int64_t)io->off &&
	    x->cr_hi == (int64_t)(io->off + io->len - 1))
		return true;
	if (x->code == 200 && !io->off && io->len == x->file->size)
		return true;
	if (x->code == 206 && x->cr_lo >= 0)
		s3_fmt(x->bad, sizeof(x->bad),
		       "HTTP 206 with Content-Range bytes %" PRId64 "-%" PRId64
		       ", not the range asked: "
		       "the server sent other bytes; see its log",
		       x->cr_lo, x->cr_hi);
	else if (x->code == 206)
		s3_fmt(x->bad, sizeof(x->bad),
		       "HTTP 206 without a Content-Range: not an S3 answer; see the server's log");
	else
		s3_fmt(x->bad, sizeof(x->bad),
		       "HTTP %ld to a ranged GET: the server ignored the Range (and sent the "
		       "object "
		       "from its start); use a server that serves Range requests",
		       x->code);
	return false;
}

/* GET body: straight into the I/O buffer; an error response's XML into x->body. */
static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct s3_xfer *x = arg;
	size_t len = size * n;
	uint64_t t0;

	if (x->code >= 300 || x->kind != XFER_GET) {
		size_t keep =
		        len < S3_BODY_MAX - 1 - x->body_len ? len : S3_BODY_MAX - 1 - x->body_len;

		memcpy(x->body + x->body_len, p, keep);
		x->body_len += keep;
		x->body[x->body_len] = '\0';
		return len;
	}
	if (!x->pos && !range_ok(x))
		return 0;
	if (x->pos + len > x->io->len) {
		s3_fmt(x->bad, sizeof(x->bad),
		       "the body is longer than the %u bytes asked (HTTP %ld): the server sends "
		       "more "
		       "than the range; see its log",
		       x->io->len, x->code);
		return 0;
	}
	/*
	 * libcurl hands a body over in pieces of 16 KiB (CURL_MAX_WRITE_SIZE), 65536 per GB: one
	 * piece in S3_COPY_SAMPLE is timed, and its CPU time per byte counts for the bytes of the
	 * pieces since the last one timed (a sixteenth of the clock reads, which are system
	 * calls: a preemption in a sampled copy would count sixteen-fold on the wall clock).
	 */
	x->d->copy_untimed += len;
	if (++x->d->copies % S3_COPY_SAMPLE) {
		memcpy((char *)x->io->buf + x->pos, p, len);
	} else {
		t0 = thread_cpu_ns();
		memcpy((char *)x->io->buf + x->pos, p, len);
		x->d->n->copy_ns += (thread_cpu_ns() - t0) * x->d->copy_untimed / len;
		x->d->copy_untimed = 0;
	}
	x->pos += len;
	return len;
}

/* PUT body: straight out of the I/O buffer. */
static size_t on_upload(char *p, size_t size, size_t n, void *arg)
{
	struct s3_xfer *x = arg;
	size_t len = size * n, left = x->io->len - x->pos;

	uint64_t t0 = thread_cpu_ns();

	if (len > left)
		len = left;
	memcpy(p, (const char *)x->io->buf + x->pos, len);
	x->d->n->copy_ns += thread_cpu_ns() - t0;
	x->pos += len;
	return len;
}

/* libcurl rewinds an upload to send it again (a redirect, a reused connection that closed). */
static int on_seek(void *arg, curl_off_t off, int origin)
{
	struct s3_xfer *x = arg;

	if (origin != SEEK_SET || off < 0 || (uint64_t)off > x->io->len)
		return CURL_SEEKFUNC_CANTSEEK;
	x->pos = (uint64_t)off;
	return CURL_SEEKFUNC_OK;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct s3_xfer *x = arg;
	size_t len = size * n;

	if (len > 6 && !strncasecmp(p, "ETag:", 5))
		s3_copy_trim(x->etag, sizeof(x->etag), p + 5);
	else if (len > 20 && !strncasecmp(p, "Content-Range:", 14) &&
	         sscanf(p + 14, " bytes %" SCNd64 "-%" SCNd64, &x->cr_lo, &x->cr_hi) != 2)
		x->cr_lo = x->cr_hi = -1;
	else if (len > 12 && !strncmp(p, "HTTP/", 5))
		x->code = strtol(p + strcspn(p, " "), NULL, 10);
	return len;
}

static curl_off_t put_len(const struct s3_xfer *x)
{
	return (curl_off_t)x->io->len;
}

/* Link the slot's own header nodes: no allocation per request. */
static void link_headers(struct s3_xfer *x, const char *const *h, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		x->hdr[i].data = (char *)h[i];
		x->hdr[i].next = i + 1 < n ? &x->hdr[i + 1] : NULL;
	}
	curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, n ? x->hdr : NULL);
}

/*
 * libcurl's socket interface: it says which sockets to watch (on_socket) and when to run its
 * timeouts (on_timer); reap waits in epoll and hands libcurl only the sockets that are ready.
 * curl_multi_perform would try every transfer at each wake-up, one recv() each.
 */
static int on_socket(CURL *h, curl_socket_t fd, int what, void *arg, void *sockp)
{
	struct s3_data *d = arg;
	struct s3_xfer *x = NULL;
	struct epoll_event ev = {.data.fd = fd};

	curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&x);
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(d->ep, EPOLL_CTL_DEL, fd, NULL);
		curl_multi_assign(d->multi, fd, NULL);
		if (x && x->fd == fd) {
			if (x->lowat > 1)
				set_lowat(x, 1); /* the connection may serve another transfer */
			x->fd = -1;
		}
		return 0;
	}
	if (x && x->fd != fd) {
		x->fd = fd;
		x->lowat = 0; /* another connection: the kernel's default */
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
	if (epoll_ctl(d->ep, sockp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) && !sockp &&
	    errno == EEXIST)
		epoll_ctl(d->ep, EPOLL_CTL_MOD, fd, &ev);
	curl_multi_assign(d->multi, fd, d);
	return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *arg)
{
	struct s3_data *d = arg;

	(void)m;
	d->timer_ns = timeout_ms < 0 ? 0 : now_ns() + (uint64_t)timeout_ms * 1000000;
	return 0;
}

static int xfer_setup(struct s3_data *d, struct s3_xfer *x)
{
	x->d = d;
	x->fd = -1;
	x->h = curl_easy_init();
	if (!x->h)
		return -ENOMEM;
	curl_easy_setopt(x->h, CURLOPT_PRIVATE, x);
	curl_easy_setopt(x->h, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(x->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(x->h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->h, CURLOPT_READFUNCTION, on_upload);
	curl_easy_setopt(x->h, CURLOPT_READDATA, x);
	curl_easy_setopt(x->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(x->h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(x->h, CURLOPT_SEEKFUNCTION, on_seek);
	curl_easy_setopt(x->h, CURLOPT_SEEKDATA, x);
	curl_easy_setopt(x->h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(x->h, CURLOPT_BUFFERSIZE, (long)S3_XFER_BUF);
	curl_easy_setopt(x->h, CURLOPT_UPLOAD_BUFFERSIZE, (long)S3_XFER_BUF);
	/*
	 * The total deadline; a server that stops sending without closing is found by
	 * check_stalls (curl's low-speed check sees no byte that SO_RCVLOWAT holds back).
	 * Redirects are not followed (s3_confine, in s3_sign).
	 */
	curl_easy_setopt(x->h, CURLOPT_TIMEOUT_MS, (long)d->o.timeout);
	curl_easy_setopt(x->h, CURLOPT_HTTP_VERSION,
	                 d->o.http ? (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
	                           : (long)CURL_HTTP_VERSION_1_1);
	if (d->o.http && !strncmp(d->cfg.endpoint, "https", 5))
		curl_easy_setopt(x->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	/*
	 * No "Expect:" header to save the 100-continue round trip of a large PUT: libcurl signs
	 * the empty header it does not send, and S3 would then refuse the signature (the
	 * botocore check in tests/cli_s3.sh caught it).
	 */
	s3_sign(x->h, &d->cfg);
	if (d->cfg.token[0])
		s3_fmt(x->h_token, sizeof(x->h_token), "x-amz-security-token: %s", d->cfg.token);
	return 0;
}

/* Point slot x at io and prepare its request (no network yet). */
static void xfer_prepare(struct s3_data *d, struct s3_xfer *x)
{
	struct io_req *io = x->io;
	struct s3_file *f = x->file;
	const char *h[5];
	unsigned nh = 0;

	x->pos = 0;
	x->body_len = 0;
	x->body[0] = '\0';
	x->etag[0] = '\0';
	x->errbuf[0] = '\0';
	x->code = 0;
	x->cr_lo = x->cr_hi = -1;
	x->bad[0] = '\0';
	x->moved_ns = 0;
	if (x->kind == XFER_GET) {
		s3_fmt(x->h_range, sizeof(x->h_range), "Range: bytes=%" PRIu64 "-%" PRIu64, io->off,
		       io->off + io->len - 1);
		h[nh++] = x->h_range;
		h[nh++] = "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca4"
		          "95991b7852b855";
		curl_easy_setopt(x->h, CURLOPT_UPLOAD, 0L);
		curl_easy_setopt(x->h, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(x->h, CURLOPT_URL, f->url);
	} else {
		if (x->kind == XFER_PART) {
			s3_fmt(x->url, sizeof(x->url), "%s?partNumber=%u&uploadId=%s", f->url,
			       x->part + 1, f->upload_id);
			curl_easy_setopt(x->h, CURLOPT_URL, x->url);
		} else {
			curl_easy_setopt(x->h, CURLOPT_URL, f->url);
		}
		curl_easy_setopt(x->h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(x->h, CURLOPT_INFILESIZE_LARGE, put_len(x));
		if (d->o.sha256) {
			uint64_t t0 = thread_cpu_ns();

			s3_sha256_header(io->buf, io->len, x->h_sha, sizeof(x->h_sha));
			d->n->hash_ns += thread_cpu_ns() - t0;
			h[nh++] = x->h_sha;
		} else {
			h[nh++] = "x-amz-content-sha256: UNSIGNED-PAYLOAD";
		}
		if (d->o.md5) {
			uint64_t t0 = thread_cpu_ns();

			s3_md5_header(io->buf, io->len, x->h_md5, sizeof(x->h_md5));
			d->n->hash_ns += thread_cpu_ns() - t0;
			h[nh++] = x->h_md5;
		}
	}
	if (x->h_token[0])
		h[nh++] = x->h_token;
	link_headers(x, h, nh);
}

static int s3_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	struct s3_data *d;
	int ret = -ENOMEM;

	if (!s->names || !s->nfiles)
		return llmio_err(e, -EINVAL,
		                 "the s3 engine needs s3:// targets: --filename "
		                 "s3://bucket/key or --directory s3://bucket/prefix");
	s3_curl_init();
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	ctx->priv = d;
	d->ep = -1;
	d->ctx = ctx;
	d->n = &ctx->counters;
	d->n->known = true;
	d->o = *(const struct s3_opts *)s->opts;
	d->bs = (uint32_t)s->buf_len;
	d->nworkers = s->nworkers;
	ret = s3_config_load(&d->o, &d->cfg, e);
	if (ret)
		goto fail;
	d->stop = d->cfg.stop = s->stop;
	/*
	 * TLS reads whole records ahead into OpenSSL's buffer and HTTP/2 interleaves streams on
	 * one socket: only plain HTTP/1.1 knows how many bytes its socket has still to bring.
	 */
	d->lowat = !d->o.http && strncmp(d->cfg.endpoint, "https", 5) ? (int)d->o.rcvlowat : 0;
	if (d->o.http && !(curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_HTTP2)) {
		ret = llmio_err(e, -ENOTSUP, "http=2: this libcurl has no HTTP/2; use http=1.1");
		goto fail;
	}
	d->multi = curl_multi_init();
	d->ctl = curl_easy_init();
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	d->depth = s->iodepth;
	d->x = calloc(d->depth, sizeof(*d->x));
	d->done = calloc(d->depth, sizeof(*d->done));
	/*
	 * Per-object state only where objects are written: a read-only job's slots name the
	 * object each one reads (slot_file), so that every thread's memory stays independent
	 * of how many objects a listing returned.
	 */
	if (s->writable)
		d->files = calloc(s->nfiles, sizeof(*d->files));
	else
		d->rfiles = calloc(d->depth, sizeof(*d->rfiles));
	d->names = s->names;
	d->sizes = s->file_sizes;
	ret = -ENOMEM;
	if (!d->multi || !d->ctl || !d->x || !d->done || (!d->files && !d->rfiles) || d->ep < 0) {
		llmio_err(e, ret, "out of memory for the s3 engine");
		goto fail;
	}
	d->nfiles = s->nfiles;
	curl_multi_setopt(d->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	curl_multi_setopt(d->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(d->multi, CURLMOPT_SOCKETDATA, d);
	curl_multi_setopt(d->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(d->multi, CURLMOPT_TIMERDATA, d);
	for (unsigned i = 0; i < d->depth; i++)
		if (xfer_setup(d, &d->x[i])) {
			llmio_err(e, ret, "out of memory for the s3 engine");
			goto fail;
		}
	for (unsigned i = 0; d->files && i < s->nfiles; i++) {
		struct s3_file *f = &d->files[i];
		char bucket[256], key[S3_KEY_MAX + 1];
		uint64_t sz;

		f->name = s->names[i];
		f->size = s->file_sizes[i];
		ret = s3_split_url(f->name, bucket, sizeof(bucket), key, sizeof(key), e);
		if (!ret && s3_object_url(&d->cfg, bucket, key, f->url, sizeof(f->url)))
			ret = llmio_err(e, -ENAMETOOLONG, "%s: the URL is too long", f->name);
		if (ret)
			goto fail;
		if (!s->writable)
			continue;
		f->nparts = (unsigned)((f->size + d->bs - 1) / d->bs);
		if (f->nparts > 1 && d->bs < S3_MIN_PART) {
			ret = llmio_err(
			        e, -EINVAL,
			        "%s (%" PRIu64 " bytes) is written as a multipart upload whose "
			        "parts are the job's writes: bs=%u is below S3's 5 MiB part "
			        "minimum; use bs=5m or more, or an object of at most bs",
			        f->name, f->size, d->bs);
			goto fail;
		}
		if (f->nparts > 10000) {
			ret = llmio_err(e, -EINVAL,
			                "%s needs %u parts of bs=%u, beyond S3's 10000; raise bs",
			                f->name, f->nparts, d->bs);
			goto fail;
		}
		if (f->nparts > 1) {
			f->etags = calloc(f->nparts, sizeof(*f->etags));
			f->part_done = calloc(f->nparts, sizeof(*f->part_done));
			if (!f->etags || !f->part_done) {
				ret = llmio_err(e, -ENOMEM, "out of memory for %u parts",
				                f->nparts);
				goto fail;
			}
		}
		/* what existed before is never deleted (cleanup=1 removes only ours) */
		if (d->o.cleanup) {
			struct llmio_error he = {0};

			f->existed =
			        s3_head_object(d->ctl, &d->cfg, bucket, key, &sz, &he) != -ENOENT;
		}
	}
	engine_appendf(ctx->notes, sizeof(ctx->notes), "s3: %s, HTTP/%s, payload %s%s, %s",
	               d->cfg.endpoint, d->o.http ? "2" : "1.1",
	               d->o.sha256 ? "SHA-256 signed" : "UNSIGNED-PAYLOAD",
	               d->o.md5 ? ", Content-MD5" : "", d->cfg.region);
	if (d->lowat)
		engine_appendf(ctx->notes, sizeof(ctx->notes),
		               ", GET bodies wake the worker every %d KiB (rcvlowat)",
		               d->lowat >> 10);
	return 0;

fail:
	/* e is the worker's own, empty before: a failure above without a message says its errno */
	if (!llmio_err_msg(e)[0])
		llmio_err(e, ret, "%s", strerror(-ret));
	return ret;
}

/*
 * A write must continue its object where the last one ended: an object cannot be updated in
 * place, so each is written whole, front to back (again from the start after its end), as a
 * PUT or the parts of one multipart upload.  0, or -errno with the reason in ctx->ioerr.
 */
static int write_check(struct s3_data *d, struct s3_file *f, const struct io_req *io)
{
	if (io->off == 0 && f->next_off >= f->size) {
		f->next_off = 0; /* the object again, a new upload */
		f->parts_in = 0;
		if (f->part_done)
			memset(f->part_done, 0, f->nparts * sizeof(*f->part_done));
	}
	if (io->off != f->next_off || (f->nparts <= 1 && io->len != f->size)) {
		s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr),
		       "an object is written sequentially and whole: this write of %u bytes at "
		       "%" PRIu64 " of %s (%" PRIu64 " bytes) does not follow the previous one; "
		       "use rw=write (random writes cannot update an object)%s",
		       io->len, io->off, f->name, f->size,
		       d->nworkers > 1 ? "; with numjobs > 1 each object is written by one "
		                         "thread: give nrfiles a multiple of numjobs"
		                       : "");
		return -EINVAL;
	}
	f->next_off += io->len;
	if (f->nparts > 1 && !f->upload_id[0]) {
		struct llmio_error e = {0};
		int ret = s3_multipart_start(d, f, &e);

		if (ret) {
			s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr), "%s", e.msg);
			return ret;
		}
	}
	return 0;
}

/*
 * The object a read-only job's slot x reads (no per-object state: s3_init): its name, size
 * and URL, made again only when the slot moves to another object.  NULL, with the reason in
 * ctx->ioerr, when the name is not one.
 */
static struct s3_file *slot_file(struct s3_data *d, struct s3_xfer *x, unsigned idx)
{
	struct s3_file *f = &d->rfiles[x - d->x];
	char bucket[256], key[S3_KEY_MAX + 1];
	struct llmio_error e = {0};

	if (f->name == d->names[idx])
		return f;
	f->name = NULL;
	if (s3_split_url(d->names[idx], bucket, sizeof(bucket), key, sizeof(key), &e) ||
	    s3_object_url(&d->cfg, bucket, key, f->url, sizeof(f->url))) {
		s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr), "%s",
		       e.msg[0] ? e.msg : "the object's URL is too long");
		return NULL;
	}
	f->name = d->names[idx];
	f->size = d->sizes[idx];
	return f;
}

static int s3_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct s3_data *d = ctx->priv;
	struct s3_file *f;
	struct s3_xfer *x = NULL;

	for (unsigned i = 0; i < d->depth && !x; i++)
		if (!d->x[i].busy)
			x = &d->x[i];
	if (!x)
		return ENGINE_Q_BUSY;
	f = d->files ? &d->files[io->file] : slot_file(d, x, io->file);
	if (!f) {
		io->res = -EINVAL;
		return ENGINE_Q_COMPLETED;
	}
	x->io = io;
	x->file = f;
	x->attempts = 0;
	x->due_ns = 0;
	if (io->op == ENGINE_OP_READ) {
		x->kind = XFER_GET;
	} else {
		int ret = write_check(d, f, io);

		if (ret) {
			io->res = ret;
			return ENGINE_Q_COMPLETED;
		}
		x->kind = f->nparts > 1 ? XFER_PART : XFER_PUT;
		x->part = (unsigned)(io->off / d->bs);
	}
	xfer_prepare(d, x);
	x->busy = true;
	x->due_ns = 1; /* queued, not yet added to the multi handle */
	return ENGINE_Q_QUEUED;
}

static void add_due(struct s3_data *d, uint64_t now, uint64_t *next)
{
	for (unsigned i = 0; i < d->depth; i++) {
		struct s3_xfer *x = &d->x[i];

		if (!x->busy || !x->due_ns)
			continue;
		if (x->due_ns > now) {
			if (!*next || x->due_ns < *next)
				*next = x->due_ns;
			continue;
		}
		x->due_ns = 0;
		curl_multi_add_handle(d->multi, x->h);
	}
}

/* Run libcurl's timeouts when due (a handle just added is due at once). */
static int run_timeouts(struct s3_data *d, uint64_t now)
{
	int running;

	if (!d->timer_ns || d->timer_ns > now)
		return 0;
	d->timer_ns = 0;
	return curl_multi_socket_action(d->multi, CURL_SOCKET_TIMEOUT, 0, &running) == CURLM_OK
	               ? 0
	               : -EIO;
}

static int s3_commit(struct engine_ctx *ctx)
{
	struct s3_data *d = ctx->priv;
	uint64_t next = 0;

	uint64_t now = now_ns();

	add_due(d, now, &next);
	return run_timeouts(d, now);
}

static void finish_io(struct s3_data *d, struct s3_xfer *x, int64_t res)
{
	struct io_req *io = x->io;

	io->res = res;
	x->busy = false;
	x->io = NULL;
	d->done[d->ndone++] = io;
}

/* What transfer x asks, for its messages: "GET s3://b/k bytes=A-B", "PUT s3://b/k part N ...". */
static void xfer_what(const struct s3_xfer *x, char *what, size_t len)
{
	const struct io_req *io = x->io;

	if (x->kind == XFER_GET)
		s3_fmt(what, len, "GET %s bytes=%" PRIu64 "-%" PRIu64, x->file->name, io->off,
		       io->off + io->len - 1);
	else if (x->kind == XFER_PART)
		s3_fmt(what, len, "PUT %s part %u (offset %" PRIu64 ")", x->file->name, x->part + 1,
		       io->off);
	else
		s3_fmt(what, len, "PUT %s", x->file->name);
}

/*
 * End transfer x before libcurl does (it stalled, or the job stopped): its I/O completes with
 * res, and the connection closes.
 */
static void xfer_abort(struct s3_data *d, struct s3_xfer *x, int res)
{
	if (!x->due_ns) {
		if (x->lowat > 1)
			set_lowat(x, 1);
		curl_multi_remove_handle(d->multi, x->h);
	}
	finish_io(d, x, res);
}

/*
 * Bytes transfer x has moved, those its socket holds unread included: SO_RCVLOWAT keeps them
 * from libcurl until enough have come, and a slow transfer is still moving.
 */
static uint64_t xfer_moved(const struct s3_xfer *x)
{
	curl_off_t rx = 0, tx = 0;
	int unread = 0;

	curl_easy_getinfo(x->h, CURLINFO_SIZE_DOWNLOAD_T, &rx);
	curl_easy_getinfo(x->h, CURLINFO_SIZE_UPLOAD_T, &tx);
	if (x->fd < 0 || ioctl(x->fd, FIONREAD, &unread))
		unread = 0;
	return (uint64_t)rx + (uint64_t)tx + (uint64_t)unread;
}

/* Fail every transfer on which no byte has moved for stall ms (checked a few times a second). */
static void check_stalls(struct s3_data *d, uint64_t now)
{
	const uint64_t stall_ns = (uint64_t)d->o.stall * 1000000;
	char what[S3_URL_MAX + 96];

	if (!d->o.stall || now < d->check_ns)
		return;
	d->check_ns = now + 200000000;
	for (unsigned i = 0; i < d->depth; i++) {
		struct s3_xfer *x = &d->x[i];
		uint64_t moved;

		if (!x->busy || x->due_ns)
			continue;
		moved = xfer_moved(x);
		if (!x->moved_ns || moved != x->moved) {
			x->moved = moved;
			x->moved_ns = now;
			continue;
		}
		if (now - x->moved_ns < stall_ns)
			continue;
		xfer_what(x, what, sizeof(what));
		s3_stall_msg(d->ctx->ioerr, sizeof(d->ctx->ioerr), what, now - x->moved_ns,
		             d->o.stall);
		xfer_abort(d, x, -ETIMEDOUT);
	}
}

/* The job stopped (runtime over, Ctrl-C, another thread failed): drop what is in flight. */
static void abandon_all(struct s3_data *d)
{
	for (unsigned i = 0; i < d->depth; i++)
		if (d->x[i].busy) {
			d->abandoned++;
			xfer_abort(d, &d->x[i], -ECANCELED);
		}
}

/* A transfer ended: account it, retry it, or fail its I/O with one line saying why. */
static void transfer_done(struct s3_data *d, struct s3_xfer *x, CURLcode rc)
{
	struct io_req *io = x->io;
	curl_off_t rx = 0, tx = 0;
	long code = 0, hdr = 0, req = 0;
	char what[S3_URL_MAX + 96];

	if (x->lowat > 1)
		set_lowat(x, 1); /* the connection serves the next transfer from its status line */
	curl_multi_remove_handle(d->multi, x->h);
	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(x->h, CURLINFO_SIZE_DOWNLOAD_T, &rx);
	curl_easy_getinfo(x->h, CURLINFO_SIZE_UPLOAD_T, &tx);
	curl_easy_getinfo(x->h, CURLINFO_HEADER_SIZE, &hdr);
	curl_easy_getinfo(x->h, CURLINFO_REQUEST_SIZE, &req);
	d->n->wire_rx += (uint64_t)rx + (uint64_t)hdr;
	d->n->wire_tx += (uint64_t)tx + (uint64_t)req;
	d->n->requests++;
	xfer_what(x, what, sizeof(what));

	if (!rc && (code == 503 || code == 500) && x->attempts < (unsigned)d->o.retries) {
		/* throttled: back off and send it again */
		x->attempts++;
		d->n->retries++;
		xfer_prepare(d, x);
		x->due_ns = now_ns() + s3_backoff_ns(x->attempts);
		return;
	}
	if (x->bad[0]) {
		s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr), "%s: %s", what, x->bad);
		finish_io(d, x, -EPROTO);
		return;
	}
	if (code >= 300 && code < 400) {
		struct llmio_error he = {0};

		s3_redirect_fail(&he, what, code, x->h, &d->cfg);
		s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr), "%s", he.msg);
		finish_io(d, x, -EREMOTE);
		return;
	}
	if (rc) {
		int e = rc == CURLE_COULDNT_CONNECT      ? -ECONNREFUSED
		        : rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT
		        : rc == CURLE_WRITE_ERROR        ? -EPROTO
		                                         : -ECONNRESET;

		s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr), "%s: %s (%s)", what,
		       x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc), s3_curl_hint(rc));
		finish_io(d, x, e);
		return;
	}
	if (code >= 300) {
		struct llmio_error he = {0};

		s3_http_fail(&he, s3_http_errno(code), what, code, x->body);
		s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr), "%s", he.msg);
		if (code == 503)
			engine_appendf(d->ctx->ioerr, sizeof(d->ctx->ioerr),
			               " (still throttled after %u retries)", x->attempts);
		finish_io(d, x, s3_http_errno(code));
		return;
	}
	if (x->kind == XFER_GET && x->pos != io->len) {
		s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr),
		       "%s: short read, %" PRIu64 " of %u bytes (HTTP %ld): the object is "
		       "smaller than the job expects, or the server cut the body",
		       what, x->pos, io->len, code);
		finish_io(d, x, -EIO);
		return;
	}
	if (x->kind == XFER_PART) {
		struct s3_file *f = x->file;

		s3_copy_trim(f->etags[x->part], sizeof(f->etags[0]), x->etag);
		if (!f->part_done[x->part]) {
			f->part_done[x->part] = 1;
			f->parts_in++;
		}
		if (f->parts_in == f->nparts) {
			struct llmio_error e = {0};
			int ret = s3_multipart_complete(d, f, &e);

			if (ret) {
				s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr), "%s", e.msg);
				finish_io(d, x, ret);
				return;
			}
		}
	} else if (x->kind == XFER_PUT) {
		x->file->written = true;
	}
	finish_io(d, x, (int64_t)io->len);
}

/*
 * Wake up for a GET's body in pieces of rcvlowat bytes, not for every segment that arrives: fewer
 * wake-ups, epoll_waits and recv()s per GB.  libcurl has handed out all it received when reap
 * waits, so a body's bytes still to come are exactly the rest of its range, and SO_RCVLOWAT
 * never asks for more than that (the last piece wakes at its last byte, as without it).
 */
static void batch_wakeups(struct s3_data *d)
{
	for (unsigned i = 0; i < d->depth; i++) {
		struct s3_xfer *x = &d->x[i];
		uint64_t left;

		if (!x->busy || x->due_ns || x->kind != XFER_GET || !x->pos || x->code >= 300)
			continue;
		left = x->io->len - x->pos;
		set_lowat(x, left >= (uint64_t)d->lowat ? d->lowat : left ? (int)left : 1);
	}
}

static int s3_reap(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max)
{
	struct s3_data *d = ctx->priv;
	struct epoll_event ev[16];
	unsigned n;

	for (;;) {
		uint64_t now = now_ns(), next = 0;
		int running = 0, left, nev, wait_ms;
		CURLMsg *m;

		add_due(d, now, &next);
		if (run_timeouts(d, now))
			return -EIO;
		while ((m = curl_multi_info_read(d->multi, &left))) {
			struct s3_xfer *x = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
			transfer_done(d, x, m->data.result);
		}
		add_due(d, now, &next); /* a retry just scheduled: its backoff bounds the wait */
		if (s3_stopped(d->stop))
			abandon_all(d);
		check_stalls(d, now);
		if (d->ndone >= min && (min || d->ndone))
			break;
		if (d->lowat)
			batch_wakeups(d);
		/*
		 * until libcurl's next timeout or a retry's backoff ends, 200 ms at most: a stop
		 * and a stall are seen that soon
		 */
		if (d->timer_ns && (!next || d->timer_ns < next))
			next = d->timer_ns;
		wait_ms = !next ? 200 : next <= now ? 0 : (int)((next - now) / 1000000 + 1);
		if (wait_ms > 200 || d->ndone >= min)
			wait_ms = wait_ms > 200 ? 200 : 0;
		nev = epoll_wait(d->ep, ev, (int)(sizeof(ev) / sizeof(ev[0])), wait_ms);
		if (nev < 0 && errno != EINTR)
			return -EIO;
		for (int i = 0; i < nev; i++) {
			int mask = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
			           (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
			           (ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);

			if (curl_multi_socket_action(d->multi, ev[i].data.fd, mask, &running) !=
			    CURLM_OK)
				return -EIO;
		}
		if (nev <= 0 && d->ndone >= min)
			break;
	}
	n = d->ndone < max ? d->ndone : max;
	memcpy(evs, d->done, n * sizeof(*evs));
	memmove(d->done, d->done + n, (d->ndone - n) * sizeof(*d->done));
	d->ndone -= n;
	return (int)n;
}

/*
 * The job ended: an upload it started and did not complete (io_size or runtime shorter than the
 * object, a stop) is aborted, and the job fails: the object it counted was never written.
 */
static int s3_finish(struct engine_ctx *ctx)
{
	struct s3_data *d = ctx->priv;
	int ret = 0;

	for (unsigned i = 0; d->files && i < d->nfiles; i++) { /* read jobs keep none */
		struct s3_file *f = &d->files[i];

		if (!f->upload_id[0])
			continue;
		if (!ret)
			s3_fmt(ctx->ioerr, sizeof(ctx->ioerr),
			       "%s: the job ended with %u of the %u parts of its multipart upload "
			       "sent (io_size, runtime or a stop cut it short): the upload was "
			       "aborted and the object was not written; let the job write whole "
			       "objects",
			       f->name, f->parts_in, f->nparts);
		s3_multipart_abort(d, f);
		ret = -EIO;
	}
	return ret;
}

/* A PUT's 200 is durable on S3: nothing to flush. */
static int s3_sync(struct engine_ctx *ctx, unsigned file)
{
	(void)ctx;
	(void)file;
	return 0;
}

static void s3_cleanup(struct engine_ctx *ctx)
{
	struct s3_data *d = ctx->priv;
	unsigned deleted = 0;

	if (!d)
		return;
	d->cfg.stop = NULL; /* the aborts below are sent after the job stopped */
	for (unsigned i = 0; d->files && i < d->nfiles; i++) {
		struct s3_file *f = &d->files[i];
		struct s3_buf resp = {0};

		/* an upload left incomplete (the job failed before s3_finish) is aborted */
		s3_multipart_abort(d, f);
		if (d->o.cleanup && f->written && !f->existed && d->ctl &&
		    s3_ctl_request(d->ctl, &d->cfg, "DELETE", f->url, NULL, &resp, NULL) == 204)
			deleted++;
		free(resp.p);
		free(f->etags);
		free(f->part_done);
	}
	if (d->o.cleanup)
		engine_appendf(ctx->notes, sizeof(ctx->notes), "; %u created objects deleted",
		               deleted);
	if (d->abandoned)
		engine_appendf(ctx->notes, sizeof(ctx->notes),
		               "; the run stopped with %u request%s unanswered: abandoned, not "
		               "counted",
		               d->abandoned, d->abandoned > 1 ? "s" : "");
	for (unsigned i = 0; d->x && i < d->depth; i++) {
		if (d->x[i].h) {
			if (d->multi)
				curl_multi_remove_handle(d->multi, d->x[i].h);
			curl_easy_cleanup(d->x[i].h);
		}
	}
	if (d->multi)
		curl_multi_cleanup(d->multi);
	if (d->ep >= 0)
		close(d->ep);
	if (d->ctl)
		curl_easy_cleanup(d->ctl);
	free(d->x);
	free(d->done);
	free(d->files);
	free(d->rfiles);
	free(d);
	ctx->priv = NULL;
}

const struct engine_ops engine_s3 = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "s3",
        .summary = "S3 objects over HTTP(S): libcurl multi, Range GETs, PUT / multipart, SigV4",
        .caps = ENGINE_CAP_ASYNC | ENGINE_CAP_OWN_TARGET,
        .opts = s3_options,
        .opts_size = sizeof(struct s3_opts),
        .probe = s3_probe,
        .init = s3_init,
        .queue = s3_queue,
        .commit = s3_commit,
        .reap = s3_reap,
        .sync = s3_sync,
        .cleanup = s3_cleanup,
        .target_resolve = s3_target_resolve,
        .finish = s3_finish,
        .objects = &s3_objects,
};
