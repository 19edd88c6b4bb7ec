/* SPDX-License-Identifier: MIT */
/*
 * The s3 engine's parts among themselves (src/engine/s3*.c), private to them:
 *
 *   s3.c          the engine: its options, targets, the event loop on libcurl's multi handle
 *                 (queue, commit, reap), its engine_ops and object operations;
 *   s3_sign.c     where and as whom: endpoint, region and credentials from the environment
 *                 and ~/.aws/credentials, libcurl's SigV4 signer, payload hashes;
 *   s3_request.c  control requests (HEAD, DELETE, multipart initiate / complete / abort) with
 *                 their retries, stalls and errors, URLs and names;
 *   s3_list.c     ListObjectsV2: the listing and its XML.
 *
 * Nothing outside src/engine includes this (tests/cli_layering.sh).
 */
#ifndef LLMIO_ENGINE_S3_INTERNAL_H
#define LLMIO_ENGINE_S3_INTERNAL_H

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/s3.h"

extern const struct engine_ops engine_s3;

#define S3_MIN_PART (5u << 20) /* S3's smallest part but the last */
#define S3_URL_MAX  4096       /* endpoint, bucket and a 1024-byte key, every byte escaped */
#define S3_BODY_MAX 512        /* what an error response's XML keeps, for its <Code> */
#define S3_KEY_MAX  1024       /* S3's longest key, in bytes */
/*
 * The largest answer to a control request: a listing page of 1000 keys of 1024 bytes, each
 * character escaped in XML, is under 7 MiB; more is not an S3 server's answer.
 */
#define S3_CTL_BODY_MAX (16u << 20)
/* Defaults of retries, stall and timeout, for the options table and for control requests
 * made outside a job (s3_objects_size, s3_objects_delete) */
#define S3_RETRIES   5
#define S3_STALL_S   30
#define S3_TIMEOUT_S 600
#define S3_STR_(x)   #x
#define S3_STR(x)    S3_STR_(x)

struct s3_opts {
	int sha256;   /* sign the payload's SHA-256 instead of UNSIGNED-PAYLOAD */
	int md5;      /* send Content-MD5 with writes */
	int tls;      /* 0 auto (the endpoint's scheme), 1 on, 2 off */
	int http;     /* 0 HTTP/1.1, 1 HTTP/2 */
	int retries;  /* attempts after a 503/500 */
	int cleanup;  /* delete the objects this run created, at the end */
	int rcvlowat; /* wake for a GET's body every this many bytes; 0: per segment */
	int stall;    /* ms: a request on which no byte moved for this long fails; 0: never */
	int timeout;  /* ms: the total deadline of each request; 0: none */
};

/* Where and as whom: resolved from the environment and ~/.aws/credentials. */
struct s3_cfg {
	char endpoint[512]; /* scheme://host[:port], no trailing slash */
	char region[64];
	char access[128];
	char secret[128];
	char token[2048];
	char sigv4[96]; /* "aws:amz:REGION:s3" */
	char ca[1024];  /* AWS_CA_BUNDLE: certificates to trust for https, "" = the system's */
	/* the job's retries, stall and timeout for control requests (the defaults outside one) */
	int retries;
	long stall_ms, timeout_ms;
	const atomic_int *stop;           /* the job's stop flag (runtime, Ctrl-C), or NULL */
	const volatile int *outside_stop; /* resolving targets: Ctrl-C (engine_target_req) */
};

/* A growable buffer for control requests (HEAD, list, multipart): never on the I/O path. */
struct s3_buf {
	char *p;
	size_t len, cap;
	bool over; /* the answer passed S3_CTL_BODY_MAX */
};

/* One object of the job. */
struct s3_file {
	char url[S3_URL_MAX]; /* endpoint/bucket/key, escaped */
	const char *name;     /* s3://bucket/key, for messages */
	uint64_t size;
	unsigned nparts;     /* > 1: multipart */
	char upload_id[256]; /* "" until initiated */
	char (*etags)[80];   /* nparts */
	unsigned *part_done; /* nparts: 1 once the part is in */
	unsigned parts_in;
	uint64_t next_off; /* where the next write must start */
	bool existed;      /* there before this run: never deleted */
	bool written;      /* written completely by this run */
};

struct s3_data {
	struct s3_cfg cfg;
	struct s3_opts o;
	CURLM *multi;
	CURL *ctl; /* control requests (multipart initiate/complete, delete) */
	struct s3_xfer *x;
	unsigned depth;
	struct s3_file *files; /* the job's objects when it writes; NULL for a read-only job */
	unsigned nfiles;
	const char *const *names; /* the job's objects (engine_setup), shared by its threads */
	const uint64_t *sizes;
	struct s3_file *rfiles; /* read-only job: the object each slot reads (slot_file) */
	uint32_t bs;
	struct io_req **done; /* completed, not yet reaped */
	unsigned ndone;
	struct engine_ctx *ctx;
	struct engine_counters *n; /* the worker's: the measured window's counts */
	/*
	 * Threads of the job, each with its own instance: an object is uploaded by the one
	 * that writes its first byte (ckpt's ranks, numjobs = nrfiles), never by two.
	 */
	unsigned nworkers;
	int lowat; /* SO_RCVLOWAT for GET bodies (rcvlowat), 0 when off or not plain HTTP/1.1 */
	unsigned copies;       /* body pieces copied, for sampling their time (on_body) */
	uint64_t copy_untimed; /* bytes copied since the last piece timed */
	int ep;                /* epoll of the transfers' sockets (libcurl's socket interface) */
	uint64_t timer_ns;     /* libcurl's timer: run its timeouts at this now_ns(); 0: none */

	const atomic_int *stop; /* the job's stop flag (engine_setup), or NULL */
	uint64_t check_ns;      /* the next stall check, now_ns() */
	unsigned abandoned;     /* requests unanswered when the job stopped */
};

/* s3_request.c */
/*
 * snprintf for messages and URLs that are cut when too long (a cut message is still one
 * line; URLs are bounded before).
 */
__attribute__((format(printf, 3, 4))) int s3_fmt(char *buf, size_t len, const char *fmt, ...);
/* curl_global_init, once per process; its result */
CURLcode s3_curl_init(void);
int s3_http_errno(long code);
int s3_http_fail(struct llmio_error *e, int rc, const char *what, long code, const char *body);
const char *s3_curl_hint(CURLcode rc);
int s3_redirect_fail(struct llmio_error *e, const char *what, long code, CURL *h,
                     const struct s3_cfg *c);
bool s3_stopped(const atomic_int *stop);
void s3_stall_msg(char *buf, size_t len, const char *what, uint64_t idle_ns, long stall_ms);
uint64_t s3_backoff_ns(unsigned n);
long s3_ctl_request(CURL *h, const struct s3_cfg *c, const char *method, const char *url,
                    const char *body, struct s3_buf *resp, struct llmio_error *e);
int s3_object_url(const struct s3_cfg *c, const char *bucket, const char *key, char *out,
                  size_t len);
int s3_key_check(const char *name, const char *key, int rc, struct llmio_error *e);
int s3_split_url(const char *name, char *bucket, size_t blen, char *rest, size_t rlen,
                 struct llmio_error *e);
int s3_head_object(CURL *h, const struct s3_cfg *c, const char *bucket, const char *key,
                   uint64_t *size, struct llmio_error *e);
int s3_ctl_open(struct s3_cfg *c, CURL **h, struct llmio_error *e);
int s3_multipart_start(struct s3_data *d, struct s3_file *f, struct llmio_error *e);
int s3_multipart_complete(struct s3_data *d, struct s3_file *f, struct llmio_error *e);
void s3_multipart_abort(struct s3_data *d, struct s3_file *f);

/* s3_sign.c */
void s3_copy_trim(char *dst, size_t size, const char *src);
int s3_config_load(const struct s3_opts *o, struct s3_cfg *c, struct llmio_error *e);
void s3_sign(CURL *h, const struct s3_cfg *c);
void s3_sha256_header(const void *data, size_t len, char *out, size_t outlen);
void s3_md5_header(const void *data, size_t len, char *out, size_t outlen);

/* s3_list.c */
bool s3_xml_get(const char *xml, const char *tag, char *out, size_t len, const char **from);
bool s3_xml_escape(const char *s, char *out, size_t len);
int s3_add_object(struct engine_target *t, const char *bucket, const char *key, uint64_t size);
int s3_list_prefix(CURL *h, const struct s3_cfg *c, const char *bucket, const char *prefix,
                   struct engine_target *t, struct llmio_error *e);

#endif
