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
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
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

#include "core/clock.h"
#include "core/error.h"
#include "engine/engine.h"
#include "engine/s3.h"
#include "llmio/job.h"

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
/*
 * libcurl's receive and send buffers (16 and 64 KiB by default): one recv() or send() moves up
 * to this much, as curl's own tool does with 100 KiB.
 */
#define S3_XFER_BUF    (512 * 1024)
#define S3_COPY_SAMPLE 16

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

enum xfer_kind { XFER_GET, XFER_PUT, XFER_PART };

/* One easy handle and what its request needs, reused for every I/O it carries. */
struct s3_data;

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

/*
 * snprintf for messages and URLs that are cut when too long (a cut message is still one
 * line; URLs are bounded before): through vsnprintf, so that gcc's -Wformat-truncation does
 * not ask for a length check on each.
 */
__attribute__((format(printf, 3, 4))) static int s3_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init_once(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int s3_probe(char *why, size_t len)
{
	const curl_version_info_data *v;

	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc) {
		s3_fmt(why, len, "libcurl failed to initialise: %s",
		       curl_easy_strerror(curl_init_rc));
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
/* Configuration                                                                            */

static void copy_trim(char *dst, size_t size, const char *src)
{
	size_t n;

	while (*src == ' ' || *src == '\t')
		src++;
	n = strcspn(src, "\r\n");
	while (n && (src[n - 1] == ' ' || src[n - 1] == '\t'))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* aws_access_key_id & co. of profile `profile` in an AWS credentials file; 0 or -ENOENT. */
static int read_credentials(const char *path, const char *profile, struct s3_cfg *c)
{
	char line[2048], want[160];
	bool in = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return -ENOENT;
	s3_fmt(want, sizeof(want), "[%s]", profile);
	while (fgets(line, sizeof(line), f)) {
		char *eq, key[64];

		if (line[0] == '[') {
			in = !strncmp(line, want, strlen(want));
			continue;
		}
		eq = strchr(line, '=');
		if (!in || !eq)
			continue;
		*eq = '\0';
		copy_trim(key, sizeof(key), line);
		if (!strcmp(key, "aws_access_key_id"))
			copy_trim(c->access, sizeof(c->access), eq + 1);
		else if (!strcmp(key, "aws_secret_access_key"))
			copy_trim(c->secret, sizeof(c->secret), eq + 1);
		else if (!strcmp(key, "aws_session_token"))
			copy_trim(c->token, sizeof(c->token), eq + 1);
	}
	fclose(f);
	return c->access[0] && c->secret[0] ? 0 : -ENOENT;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* Endpoint, region and credentials, as the AWS CLI finds them. */
static int s3_config_load(const struct s3_opts *o, struct s3_cfg *c, struct llmio_error *e)
{
	const char *v, *home = env("HOME");
	char path[1024];

	memset(c, 0, sizeof(*c));
	v = env("AWS_REGION");
	copy_trim(c->region, sizeof(c->region),
	          v                           ? v
	          : env("AWS_DEFAULT_REGION") ? env("AWS_DEFAULT_REGION")
	                                      : "us-east-1");
	v = env("AWS_ENDPOINT_URL_S3");
	if (!v)
		v = env("AWS_ENDPOINT_URL");
	if (v)
		copy_trim(c->endpoint, sizeof(c->endpoint), v);
	else
		s3_fmt(c->endpoint, sizeof(c->endpoint), "https://s3.%s.amazonaws.com", c->region);
	while (strlen(c->endpoint) && c->endpoint[strlen(c->endpoint) - 1] == '/')
		c->endpoint[strlen(c->endpoint) - 1] = '\0';
	if (strncmp(c->endpoint, "http://", 7) && strncmp(c->endpoint, "https://", 8))
		return llmio_err(e, -EINVAL,
		                 "endpoint %s is not http:// or https://: set AWS_ENDPOINT_URL to "
		                 "http://HOST:PORT or https://HOST",
		                 c->endpoint);
	if (o && o->tls) {
		/* tls=on/off overrides the scheme the endpoint was given with */
		const char *rest = strstr(c->endpoint, "://") + 3;
		char host[512];

		copy_trim(host, sizeof(host), rest);
		s3_fmt(c->endpoint, sizeof(c->endpoint), "%s://%s", o->tls == 1 ? "https" : "http",
		       host);
	}
	if (env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY")) {
		copy_trim(c->access, sizeof(c->access), env("AWS_ACCESS_KEY_ID"));
		copy_trim(c->secret, sizeof(c->secret), env("AWS_SECRET_ACCESS_KEY"));
		if (env("AWS_SESSION_TOKEN"))
			copy_trim(c->token, sizeof(c->token), env("AWS_SESSION_TOKEN"));
	} else {
		v = env("AWS_SHARED_CREDENTIALS_FILE");
		if (v)
			s3_fmt(path, sizeof(path), "%s", v);
		else
			s3_fmt(path, sizeof(path), "%s/.aws/credentials", home ? home : "");
		if (read_credentials(path, env("AWS_PROFILE") ? env("AWS_PROFILE") : "default", c))
			return llmio_err(e, -EACCES,
			                 "no S3 credentials: set AWS_ACCESS_KEY_ID and "
			                 "AWS_SECRET_ACCESS_KEY, or write them to %s",
			                 path);
	}
	s3_fmt(c->sigv4, sizeof(c->sigv4), "aws:amz:%s:s3", c->region);
	c->retries = o ? o->retries : S3_RETRIES;
	c->stall_ms = o ? o->stall : S3_STALL_S * 1000L;
	c->timeout_ms = o ? o->timeout : S3_TIMEOUT_S * 1000L;
	if (env("AWS_CA_BUNDLE"))
		copy_trim(c->ca, sizeof(c->ca), env("AWS_CA_BUNDLE"));
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Requests                                                                                 */

/*
 * Sign requests on h with libcurl's SigV4 signer (and trust AWS_CA_BUNDLE's certificates).  libcurl
 * signs the headers it is given (Debian's 7.88 does not add x-amz-content-sha256 itself, and S3
 * requires it), so the caller's list already holds it.
 */
/*
 * Keep every request of h on the endpoint: http and https only, and no redirect followed.
 * libcurl would send the caller's headers, the session token among them, to wherever a redirect
 * points, and the redirected request unsigned (it drops the credentials for another host); the
 * 3xx is reported instead, with where it pointed (redirect_fail).  The path goes out as the
 * key spells it: libcurl would resolve a "/../" in it into another bucket's path.
 */
static void s3_confine(CURL *h)
{
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 0L);
	curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
}

static void s3_sign(CURL *h, const struct s3_cfg *c)
{
	s3_confine(h);
	if (c->ca[0])
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
	curl_easy_setopt(h, CURLOPT_AWS_SIGV4, c->sigv4);
	curl_easy_setopt(h, CURLOPT_USERNAME, c->access);
	curl_easy_setopt(h, CURLOPT_PASSWORD, c->secret);
}

/*
 * Sign h as every request of the engine is signed, with the region and credentials of the
 * environment: for tests/test_s3.c, which checks libcurl's signer against the AWS
 * documentation's published example.  0, or -errno with the reason in e.
 */
int s3_sign_from_env(CURL *h, struct llmio_error *e);

int s3_sign_from_env(CURL *h, struct llmio_error *e)
{
	struct s3_cfg c;
	int ret = s3_config_load(NULL, &c, e);

	if (!ret)
		s3_sign(h, &c);
	return ret;
}

static void hex(const unsigned char *in, unsigned n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/* "x-amz-content-sha256: <hex>" of data into out (>= 96 bytes). */
static void sha256_header(const void *data, size_t len, char *out, size_t outlen)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	char h[2 * EVP_MAX_MD_SIZE + 1];

	EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
	hex(md, mdlen, h);
	s3_fmt(out, outlen, "x-amz-content-sha256: %s", h);
}

static void md5_header(const void *data, size_t len, char *out, size_t outlen)
{
	unsigned char md[EVP_MAX_MD_SIZE], b64[64];
	unsigned mdlen = 0;

	EVP_Digest(data, len, md, &mdlen, EVP_md5(), NULL);
	EVP_EncodeBlock(b64, md, (int)mdlen);
	s3_fmt(out, outlen, "Content-MD5: %s", (const char *)b64);
}

static size_t buf_write(char *p, size_t size, size_t n, void *arg)
{
	struct s3_buf *b = arg;
	size_t len = size * n;

	if (b->len + len > S3_CTL_BODY_MAX) {
		b->over = true;
		return 0;
	}
	if (b->len + len + 1 > b->cap) {
		size_t cap = (b->len + len + 1) * 2;
		char *q = realloc(b->p, cap);

		if (!q)
			return 0;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
	b->p[b->len] = '\0';
	return len;
}

/* The text between <tag> and </tag> at or after *from; false when absent. */
static bool xml_get(const char *xml, const char *tag, char *out, size_t len, const char **from)
{
	char open[64], close[64];
	const char *a, *b;

	s3_fmt(open, sizeof(open), "<%s>", tag);
	s3_fmt(close, sizeof(close), "</%s>", tag);
	a = xml ? strstr(from && *from ? *from : xml, open) : NULL;
	if (!a)
		return false;
	a += strlen(open);
	b = strstr(a, close);
	if (!b)
		return false;
	if ((size_t)(b - a) >= len)
		return false;
	memcpy(out, a, (size_t)(b - a));
	out[b - a] = '\0';
	if (from)
		*from = b + strlen(close);
	return true;
}

/*
 * A character reference (&#13; &#x0A;) at *s, as UTF-8 at *w, both advanced; false when *s
 * is not one.  A key with CR or LF in it is listed so.
 */
static bool char_ref(char **s, char **w)
{
	const char *p = *s + 2 + (*(*s + 2) == 'x');
	char *end;
	unsigned long cp;
	unsigned char *o = (unsigned char *)*w;

	cp = strtoul(p, &end, p[-1] == 'x' ? 16 : 10);
	if (end == p || *end != ';' || !cp || cp > 0x10ffff)
		return false;
	if (cp < 0x80) {
		*o++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*o++ = (unsigned char)(0xc0 | cp >> 6);
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (unsigned char)(0xe0 | cp >> 12);
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (unsigned char)(0xf0 | cp >> 18);
		*o++ = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	}
	*w = (char *)o;
	*s = end + 1;
	return true;
}

/* XML's five entities and character references in place (a key "a&b" is listed as "a&amp;b"). */
static void xml_unescape(char *s)
{
	static const struct {
		const char *ent;
		char ch;
	} ents[] = {
	        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
	char *w = s;

	while (*s) {
		size_t i, n = 0;

		for (i = 0; *s == '&' && i < sizeof(ents) / sizeof(ents[0]); i++) {
			n = strlen(ents[i].ent);
			if (!strncmp(s, ents[i].ent, n))
				break;
		}
		if (*s == '&' && i < sizeof(ents) / sizeof(ents[0])) {
			*w++ = ents[i].ch;
			s += n;
		} else if (s[0] == '&' && s[1] == '#' && char_ref(&s, &w)) {
			continue;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

/* s with XML's special characters escaped into out; false when it does not fit. */
static bool xml_escape(const char *s, char *out, size_t len)
{
	size_t used = 0;

	for (; *s; s++) {
		const char *ent = *s == '&'    ? "&amp;"
		                  : *s == '<'  ? "&lt;"
		                  : *s == '>'  ? "&gt;"
		                  : *s == '"'  ? "&quot;"
		                  : *s == '\'' ? "&apos;"
		                               : NULL;
		size_t n = ent ? strlen(ent) : 1;

		if (used + n >= len)
			return false;
		memcpy(out + used, ent ? ent : s, n);
		used += n;
	}
	out[used] = '\0';
	return true;
}

/* What a failed HTTP status means to a user, with the fix. */
static int http_errno(long code)
{
	switch (code) {
	case 400:
		return -EINVAL;
	case 401:
	case 403:
		return -EACCES;
	case 404:
		return -ENOENT;
	case 416:
		return -ENXIO;
	case 503:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

static const char *http_hint(long code, const char *s3code)
{
	if (code == 403)
		return "check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or ~/.aws/credentials) "
		       "and the bucket's policy";
	if (code == 404 && !strcmp(s3code, "NoSuchBucket"))
		return "create the bucket, or fix the bucket name";
	if (code == 404)
		return "the object does not exist; write it first (--rw=write) or fix the key";
	if (code == 503)
		return "the server is throttling; lower iodepth/numjobs or raise retries";
	return "see the server's log";
}

/* One line for a failed request: method, object, HTTP status, S3's <Code>, the fix; rc. */
static int http_fail(struct llmio_error *e, int rc, const char *what, long code, const char *body)
{
	char s3code[64] = "";

	xml_get(body, "Code", s3code, sizeof(s3code), NULL);
	return llmio_err(e, rc, "%s: HTTP %ld%s%s: %s", what, code, s3code[0] ? " " : "", s3code,
	                 http_hint(code, s3code));
}

/* What to do about a transport failure, by libcurl's code. */
static const char *curl_hint(CURLcode rc)
{
	switch (rc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CONNECT_ERROR:
		return "TLS: set AWS_CA_BUNDLE to the server's CA certificate, or tls=off for an "
		       "endpoint that speaks plain HTTP";
	case CURLE_COULDNT_RESOLVE_HOST:
		return "check the endpoint's host name (AWS_ENDPOINT_URL)";
	case CURLE_COULDNT_CONNECT:
		return "the server went away, or none runs at the endpoint (AWS_ENDPOINT_URL)";
	case CURLE_OPERATION_TIMEDOUT:
		return "the server stopped answering, or is slower than the request's deadline: "
		       "raise timeout= (or stall=) for a slow server";
	case CURLE_ABORTED_BY_CALLBACK:
		return "the run was stopped (its runtime ended, or Ctrl-C) while the server had "
		       "not "
		       "answered";
	case CURLE_UNSUPPORTED_PROTOCOL:
		return "llmio speaks only http and https to an S3 endpoint";
	default:
		return "the server went away, or speaks TLS where tls=off sent plain HTTP";
	}
}

/* A 3xx: not followed (s3_confine), one line saying where it pointed; returns -EREMOTE. */
static int redirect_fail(struct llmio_error *e, const char *what, long code, CURL *h,
                         const struct s3_cfg *c)
{
	const char *to = NULL;

	curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &to);
	return llmio_err(e, -EREMOTE,
	                 "%s: HTTP %ld redirect to %s: not followed, credentials stay with the "
	                 "endpoint %s; set AWS_ENDPOINT_URL (and AWS_REGION) to where the bucket "
	                 "is served",
	                 what, code, to ? to : "(no Location)", c->endpoint);
}

static bool stopped(const atomic_int *stop)
{
	return stop && atomic_load_explicit(stop, memory_order_relaxed);
}

/* The line for a request on which no byte moved for too long (what: the request). */
static void stall_msg(char *buf, size_t len, const char *what, uint64_t idle_ns, long stall_ms)
{
	s3_fmt(buf, len,
	       "%s: no byte moved for %.1f s (stall=%.1fs): the server stopped answering; raise "
	       "stall= for a server that pauses longer",
	       what, (double)idle_ns / 1e9, (double)stall_ms / 1e3);
}

/* A control request's watch: the job stopping, or no byte moving for stall_ms, ends it. */
struct ctl_watch {
	const struct s3_cfg *c;
	curl_off_t moved;
	uint64_t since; /* now_ns() when moved last changed; 0: not yet seen */
	bool stalled;
};

/* libcurl's progress callback on a control request (called about once a second, or more). */
static int ctl_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct ctl_watch *w = arg;
	uint64_t now = now_ns();

	(void)dt;
	(void)ut;
	if (stopped(w->c->stop))
		return 1;
	if (w->c->outside_stop && __atomic_load_n(w->c->outside_stop, __ATOMIC_RELAXED))
		return 1;
	if (!w->since || dn + un != w->moved) {
		w->moved = dn + un;
		w->since = now;
		return 0;
	}
	w->stalled = w->c->stall_ms && now - w->since >= (uint64_t)w->c->stall_ms * 1000000;
	return w->stalled;
}

/* The wait before retry number n (1, 2, ...) of a throttled request: 10 ms, doubling. */
static uint64_t backoff_ns(unsigned n)
{
	return 10000000ull << (n - 1);
}

/*
 * A blocking control request on h (HEAD, list, multipart initiate/complete/abort, delete):
 * method, url, optional body; the response body into resp.  A 503 or 500 is sent again as the
 * data path does (retries, backoff_ns); no byte moving for stall_ms, the whole request past
 * timeout_ms, or the job stopping ends it.  Returns the HTTP status, or -errno for a transport
 * failure or a redirect (message in e).
 */
static long ctl_request(CURL *h, const struct s3_cfg *c, const char *method, const char *url,
                        const char *body, struct s3_buf *resp, struct llmio_error *e)
{
	struct curl_slist *hdrs = NULL, *t;
	char errbuf[CURL_ERROR_SIZE] = "", sha[96], what[S3_URL_MAX + 16];
	struct ctl_watch w = {.c = c};
	long code = 0;
	CURLcode rc;

	curl_easy_reset(h);
	sha256_header(body ? body : "", body ? strlen(body) : 0, sha, sizeof(sha));
	hdrs = curl_slist_append(hdrs, sha);
	if (c->token[0]) {
		char tok[2100];

		s3_fmt(tok, sizeof(tok), "x-amz-security-token: %s", c->token);
		t = curl_slist_append(hdrs, tok);
		hdrs = t ? t : hdrs;
	}
	if (body || !strcmp(method, "POST")) {
		/* the object's type at initiation; not curl's default form type */
		t = curl_slist_append(hdrs, body ? "Content-Type: application/xml"
		                                 : "Content-Type: application/octet-stream");
		hdrs = t ? t : hdrs;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, ctl_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &w);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	s3_sign(h, c);
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	else if (strcmp(method, "GET"))
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	} else if (!strcmp(method, "POST")) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, resp);
	for (unsigned attempt = 0;; attempt++) {
		if (resp->p)
			resp->p[0] = '\0';
		resp->len = 0;
		resp->over = false;
		w.since = 0;
		rc = curl_easy_perform(h);
		code = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (rc || (code != 503 && code != 500) || attempt >= (unsigned)c->retries ||
		    stopped(c->stop))
			break;
		uint64_t ns = backoff_ns(attempt + 1);
		struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000),
		                      .tv_nsec = (long)(ns % 1000000000)};

		nanosleep(&ts, NULL);
	}
	curl_slist_free_all(hdrs);
	s3_fmt(what, sizeof(what), "%s %s", method, url);
	if (rc == CURLE_ABORTED_BY_CALLBACK && w.stalled) {
		char msg[LLMIO_ERROR_MSG_MAX];

		stall_msg(msg, sizeof(msg), what, now_ns() - w.since, c->stall_ms);
		return llmio_err(e, -ETIMEDOUT, "%s", msg);
	}
	/* the job stopped: the I/O that waited on this is abandoned, not failed (engine.h) */
	if (rc == CURLE_ABORTED_BY_CALLBACK)
		return llmio_err(e, -ECANCELED, "%s: %s", what, curl_hint(rc));
	if (rc == CURLE_WRITE_ERROR && resp->over)
		return llmio_err(
		        e, -EFBIG,
		        "%s %s: the answer is larger than %u MiB, more than any S3 reply "
		        "(a listing page of 1000 keys is under 7 MiB): the endpoint is not "
		        "an S3 server, or a broken one",
		        method, url, S3_CTL_BODY_MAX >> 20);
	if (rc)
		return llmio_err(e, rc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : -EIO,
		                 "%s %s: %s (%s)", method, url,
		                 errbuf[0] ? errbuf : curl_easy_strerror(rc), curl_hint(rc));
	if (code >= 300 && code < 400)
		return redirect_fail(e, what, code, h, c);
	return code;
}

/* endpoint/bucket/key with the key escaped (its slashes kept) into out. */
static int object_url(const struct s3_cfg *c, const char *bucket, const char *key, char *out,
                      size_t len)
{
	size_t used = (size_t)s3_fmt(out, len, "%s/%s/", c->endpoint, bucket);

	for (const char *p = key; *p && used + 4 < len; p++) {
		unsigned char ch = (unsigned char)*p;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("-_.~/", ch))
			out[used++] = (char)ch;
		else
			used += (size_t)s3_fmt(out + used, len - used, "%%%02X", ch);
	}
	if (used + 4 >= len)
		return -ENAMETOOLONG;
	out[used] = '\0';
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Targets                                                                                  */

/*
 * A key that cannot change the request's bucket or path: none of its segments is "." or ".."
 * (which a server or proxy resolves, into another path or bucket).  0, or rc with the reason
 * in e (-EINVAL for a name the user gave, -EPROTO for one a server listed).  name: how the
 * message names the key.
 */
static int key_check(const char *name, const char *key, int rc, struct llmio_error *e)
{
	for (const char *p = key; *p; p += strcspn(p, "/"), p += *p == '/') {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return llmio_err(
			        e, rc,
			        "%s: the key has a '%.*s' segment, which servers and proxies "
			        "resolve into another path (or bucket): llmio does not send it; "
			        "rename the object",
			        name, (int)n, p);
	}
	return 0;
}

/*
 * s3://bucket/rest -> bucket, rest, rest exactly as given (a key may hold any byte, CR and LF
 * too).  -EINVAL when the name is not one, -ENAMETOOLONG when a part does not fit.
 */
static int split_url(const char *name, char *bucket, size_t blen, char *rest, size_t rlen,
                     struct llmio_error *e)
{
	const char *b, *slash;
	size_t n;

	if (strncmp(name, "s3://", 5))
		return llmio_err(e, -EINVAL,
		                 "%s is not an s3:// URL: the s3 engine takes targets "
		                 "such as s3://bucket/key",
		                 name);
	b = name + 5;
	slash = strchr(b, '/');
	if (!slash || slash == b || (size_t)(slash - b) >= blen)
		return llmio_err(e, -EINVAL, "%s names no bucket and key: use s3://bucket/key",
		                 name);
	memcpy(bucket, b, (size_t)(slash - b));
	bucket[slash - b] = '\0';
	n = strlen(slash + 1);
	if (n >= rlen || n > S3_KEY_MAX)
		return llmio_err(e, -ENAMETOOLONG, "%s: the key is longer than S3's %u bytes", name,
		                 S3_KEY_MAX);
	memcpy(rest, slash + 1, n + 1);
	return key_check(name, rest, -EINVAL, e);
}

/*
 * One more object in t.  The arrays double when n reaches a power of two (t has no capacity of
 * its own): a listing of N objects copies O(N) pointers, not O(N^2).
 */
static int add_object(struct engine_target *t, const char *bucket, const char *key, uint64_t size)
{
	size_t len = strlen(bucket) + strlen(key) + 8;

	if (!(t->n & (t->n - 1))) {
		size_t cap = t->n ? 2 * (size_t)t->n : 1;
		char **names = realloc(t->names, cap * sizeof(*names));
		uint64_t *sizes;

		if (!names)
			return -ENOMEM;
		t->names = names;
		sizes = realloc(t->sizes, cap * sizeof(*sizes));
		if (!sizes)
			return -ENOMEM;
		t->sizes = sizes;
	}
	t->names[t->n] = malloc(len);
	if (!t->names[t->n])
		return -ENOMEM;
	s3_fmt(t->names[t->n], len, "s3://%s/%s", bucket, key);
	t->sizes[t->n++] = size;
	return 0;
}

/* HEAD one object: its size, or -ENOENT / another -errno with the reason in e. */
static int head_object(CURL *h, const struct s3_cfg *c, const char *bucket, const char *key,
                       uint64_t *size, struct llmio_error *e)
{
	struct s3_buf resp = {0};
	char url[S3_URL_MAX], what[S3_URL_MAX + 64];
	curl_off_t len = -1;
	long code;

	if (object_url(c, bucket, key, url, sizeof(url)))
		return llmio_err(e, -ENAMETOOLONG, "key %s is too long", key);
	code = ctl_request(h, c, "HEAD", url, NULL, &resp, e);
	free(resp.p);
	resp = (struct s3_buf){0};
	if (code < 0)
		return (int)code;
	if (code == 200) {
		curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
		if (len < 0)
			return llmio_err(
			        e, -EPROTO,
			        "HEAD s3://%s/%s: HTTP 200 without a Content-Length: the "
			        "server does not say the object's size (S3 always does); see "
			        "the server's log",
			        bucket, key);
		*size = (uint64_t)len;
		return 0;
	}
	if (code == 404) {
		/* a HEAD answer has no body to say which: ask about the bucket */
		s3_fmt(url, sizeof(url), "%s/%s", c->endpoint, bucket);
		if (ctl_request(h, c, "HEAD", url, NULL, &resp, NULL) == 404) {
			free(resp.p);
			return llmio_err(e, -ENOENT,
			                 "HEAD s3://%s/%s: HTTP 404: bucket %s does not exist; "
			                 "create it, or fix the bucket name",
			                 bucket, key, bucket);
		}
		free(resp.p);
	}
	s3_fmt(what, sizeof(what), "HEAD s3://%s/%s", bucket, key);
	return http_fail(e, http_errno(code), what, code, "");
}

/*
 * Every object under prefix (ListObjectsV2, following continuation tokens).  The answer is
 * checked as far as it decides what is read: each key under the prefix, in ascending order
 * (as S3 lists them; a repeated page goes back), a token that moves on, nothing cut short.
 */
static int list_prefix(CURL *h, const struct s3_cfg *c, const char *bucket, const char *prefix,
                       struct engine_target *t, struct llmio_error *e)
{
	char token[1024] = "", sent[1024], last[S3_KEY_MAX + 1] = "", url[S3_URL_MAX * 2];
	char what[S3_URL_MAX + 32], name[S3_URL_MAX];
	struct s3_buf resp = {0};
	int ret = 0;

	s3_fmt(what, sizeof(what), "listing s3://%s/%s", bucket, prefix);
	for (;;) {
		char *ep = curl_easy_escape(h, prefix, 0), *et = curl_easy_escape(h, token, 0);
		const char *at = NULL;
		/* a key's XML text: each of its 1024 bytes may be an entity of up to 6 */
		char key[S3_KEY_MAX * 6 + 1], size[32], trunc[16] = "";
		long code;

		if (!ep || !et) {
			curl_free(ep);
			curl_free(et);
			ret = -ENOMEM;
			break;
		}
		/* parameters in the canonical (sorted) order: libcurl 7.88 signs the query as given
		 */
		s3_fmt(url, sizeof(url), "%s/%s?%s%s%slist-type=2&prefix=%s", c->endpoint, bucket,
		       token[0] ? "continuation-token=" : "", et, token[0] ? "&" : "", ep);
		curl_free(ep);
		curl_free(et);
		memcpy(sent, token, sizeof(token));
		code = ctl_request(h, c, "GET", url, NULL, &resp, e);
		if (code < 0) {
			ret = (int)code;
			break;
		}
		if (code != 200) {
			ret = http_fail(e, http_errno(code), what, code, resp.p);
			break;
		}
		while (!ret && resp.p && strstr(at ? at : resp.p, "<Key>")) {
			if (!xml_get(resp.p, "Key", key, sizeof(key), &at) ||
			    (xml_unescape(key), strlen(key) > S3_KEY_MAX)) {
				ret = llmio_err(
				        e, -EPROTO,
				        "%s: a listed key is longer than S3's %u bytes, or its "
				        "<Key> is not closed: not an S3 answer; see the server's "
				        "log",
				        what, S3_KEY_MAX);
				break;
			}
			s3_fmt(name, sizeof(name), "listed key s3://%s/%s", bucket, key);
			if (!xml_get(resp.p, "Size", size, sizeof(size), &at))
				ret = llmio_err(e, -EPROTO,
				                "%s: %s has no <Size>: not an S3 answer", what,
				                name);
			else if (strncmp(key, prefix, strlen(prefix)))
				ret = llmio_err(
				        e, -EPROTO,
				        "%s: %s is outside the prefix asked: not an S3 answer; "
				        "see the server's log",
				        what, name);
			else if (last[0] && strcmp(key, last) <= 0)
				ret = llmio_err(
				        e, -EPROTO,
				        "%s: the server listed key %s after %s, out of S3's key "
				        "order (a page listed again?): see the server's log",
				        what, key, last);
			else
				ret = key_check(name, key, -EPROTO, e);
			if (!ret) {
				memcpy(last, key, strlen(key) + 1);
				ret = add_object(t, bucket, key, strtoull(size, NULL, 10));
			}
		}
		xml_get(resp.p, "IsTruncated", trunc, sizeof(trunc), NULL);
		if (ret || strcmp(trunc, "true"))
			break;
		if (!xml_get(resp.p, "NextContinuationToken", token, sizeof(token), NULL)) {
			ret = llmio_err(e, -EPROTO,
			                "%s: a truncated page without a NextContinuationToken (or "
			                "with one over %zu bytes): not an S3 answer",
			                what, sizeof(token) - 1);
			break;
		}
		if (!strcmp(token, sent)) {
			ret = llmio_err(
			        e, -EPROTO,
			        "%s: the server answered continuation token '%s' with itself: "
			        "the listing would repeat forever; see the server's log",
			        what, token);
			break;
		}
	}
	free(resp.p);
	if (ret == -ENOMEM)
		llmio_err(e, ret, "out of memory listing s3://%s/%s", bucket, prefix);
	return ret;
}

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

		ret = split_url(rq->files[i].path, bucket, sizeof(bucket), key, sizeof(key), e);
		if (!ret && !size && !rq->writes)
			ret = head_object(h, c, bucket, key, &size, e);
		if (!ret && !size && rq->writes)
			ret = llmio_err(e, -EINVAL, "writing %s needs its size", rq->files[i].path);
		if (!ret)
			ret = add_object(t, bucket, key, size);
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
	ret = split_url(rq->files ? rq->files[0].path : rq->name, bucket, sizeof(bucket), rest,
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
				ret = add_object(t, bucket, rest, rq->size);
		} else {
			ret = head_object(h, &c, bucket, rest, &size, e);
			if (!ret)
				ret = add_object(t, bucket, rest, size);
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
				ret = add_object(t, bucket, key, per);
			}
		} else {
			s3_fmt(key, sizeof(key), "%s%s", rest, len ? "/" : "");
			ret = list_prefix(h, &c, bucket, key, t, e);
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

/* Configuration and a handle for control requests outside a job (s3.h); h NULL on failure. */
static int ctl_open(struct s3_cfg *c, CURL **h, struct llmio_error *e)
{
	int ret;

	*h = NULL;
	pthread_once(&curl_once, curl_init_once);
	ret = s3_config_load(NULL, c, e);
	if (ret)
		return ret;
	*h = curl_easy_init();
	return *h ? 0 : llmio_err(e, -ENOMEM, "libcurl could not make a handle");
}

int s3_objects_size(const char *const *names, unsigned n, uint64_t *sizes, struct llmio_error *e)
{
	char bucket[256], key[S3_KEY_MAX + 1];
	struct s3_cfg c;
	CURL *h;
	int ret = ctl_open(&c, &h, e);

	for (unsigned i = 0; i < n && !ret; i++) {
		struct llmio_error he = {0};

		ret = split_url(names[i], bucket, sizeof(bucket), key, sizeof(key), e);
		if (ret)
			break;
		ret = head_object(h, &c, bucket, key, &sizes[i], &he);
		/* absent is an answer; a missing bucket is the one 404 that is an error */
		if (ret == -ENOENT && !strstr(he.msg, ": HTTP 404: bucket ")) {
			sizes[i] = S3_ABSENT;
			ret = 0;
		} else if (ret) {
			llmio_err(e, ret, "%s", he.msg);
		}
	}
	curl_easy_cleanup(h);
	return ret;
}

int s3_objects_delete(const char *const *names, unsigned n, unsigned *deleted,
                      struct llmio_error *e)
{
	char bucket[256], key[S3_KEY_MAX + 1], url[S3_URL_MAX];
	struct s3_buf resp = {0};
	struct s3_cfg c;
	CURL *h;
	int ret = ctl_open(&c, &h, e);

	*deleted = 0;
	for (unsigned i = 0; i < n && !ret; i++) {
		long code;

		ret = split_url(names[i], bucket, sizeof(bucket), key, sizeof(key), e);
		if (!ret && object_url(&c, bucket, key, url, sizeof(url)))
			ret = llmio_err(e, -ENAMETOOLONG, "%s: the URL is too long", names[i]);
		if (ret)
			break;
		code = ctl_request(h, &c, "DELETE", url, NULL, &resp, e);
		if (code < 0)
			ret = (int)code;
		else if (code == 204 || code == 200)
			(*deleted)++;
		else if (code != 404)
			ret = http_fail(e, http_errno(code), names[i], code, resp.p);
	}
	free(resp.p);
	curl_easy_cleanup(h);
	return ret;
}

int s3_objects_list(const char *prefix, struct engine_target *t, struct llmio_error *e)
{
	char bucket[256], key[S3_KEY_MAX + 1];
	struct s3_cfg c;
	CURL *h;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = ctl_open(&c, &h, e);
	if (!ret)
		ret = split_url(prefix, bucket, sizeof(bucket), key, sizeof(key), e);
	if (!ret)
		ret = list_prefix(h, &c, bucket, key, t, e);
	curl_easy_cleanup(h);
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
		copy_trim(x->etag, sizeof(x->etag), p + 5);
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

			sha256_header(io->buf, io->len, x->h_sha, sizeof(x->h_sha));
			d->n->hash_ns += thread_cpu_ns() - t0;
			h[nh++] = x->h_sha;
		} else {
			h[nh++] = "x-amz-content-sha256: UNSIGNED-PAYLOAD";
		}
		if (d->o.md5) {
			uint64_t t0 = thread_cpu_ns();

			md5_header(io->buf, io->len, x->h_md5, sizeof(x->h_md5));
			d->n->hash_ns += thread_cpu_ns() - t0;
			h[nh++] = x->h_md5;
		}
	}
	if (x->h_token[0])
		h[nh++] = x->h_token;
	link_headers(x, h, nh);
}

/* Start the multipart upload of f (a blocking control request, once per object). */
static int multipart_start(struct s3_data *d, struct s3_file *f, struct llmio_error *e)
{
	struct s3_buf resp = {0};
	char url[S3_URL_MAX + 16], what[S3_URL_MAX + 64];
	long code;

	/* "uploads=", the canonical form: libcurl 7.88 signs the query as written */
	s3_fmt(url, sizeof(url), "%s?uploads=", f->url);
	code = ctl_request(d->ctl, &d->cfg, "POST", url, NULL, &resp, e);
	d->n->requests++;
	if (code == 200 && xml_get(resp.p, "UploadId", f->upload_id, sizeof(f->upload_id), NULL)) {
		/* kept escaped: it only ever goes into query strings */
		char *esc = curl_easy_escape(d->ctl, f->upload_id, 0);

		free(resp.p);
		if (!esc || strlen(esc) >= sizeof(f->upload_id)) {
			curl_free(esc);
			f->upload_id[0] = '\0';
			return llmio_err(e, -ENOMEM, "upload id of %s too long", f->name);
		}
		memcpy(f->upload_id, esc, strlen(esc) + 1);
		curl_free(esc);
		return 0;
	}
	if (code >= 0) {
		s3_fmt(what, sizeof(what), "starting the multipart upload of %s", f->name);
		if (code == 200)
			code = llmio_err(
			        e, -EPROTO,
			        "%s: HTTP 200 without an <UploadId> (or one over %zu bytes): "
			        "not an S3 answer; see the server's log",
			        what, sizeof(f->upload_id) - 1);
		else
			code = http_fail(e, http_errno(code), what, code, resp.p);
	}
	free(resp.p);
	return (int)code;
}

/* Every part is in: complete the upload (a blocking control request, once per object). */
static int multipart_complete(struct s3_data *d, struct s3_file *f, struct llmio_error *e)
{
	size_t cap = 128 + (size_t)f->nparts * (64 + 6 * sizeof(f->etags[0])), used = 0;
	char *body = malloc(cap), url[S3_URL_MAX + 300], what[S3_URL_MAX + 64];
	struct s3_buf resp = {0};
	long code;

	if (!body)
		return llmio_err(e, -ENOMEM, "out of memory completing %s", f->name);
	used += (size_t)s3_fmt(body + used, cap - used, "<CompleteMultipartUpload>");
	for (unsigned i = 0; i < f->nparts; i++) {
		/* the server's ETag is text in the XML, never markup (each byte escapes to 6 at
		 * most) */
		char etag[6 * sizeof(f->etags[0])];

		xml_escape(f->etags[i], etag, sizeof(etag));
		used += (size_t)s3_fmt(body + used, cap - used,
		                       "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag></Part>",
		                       i + 1, etag);
	}
	s3_fmt(body + used, cap - used, "</CompleteMultipartUpload>");
	s3_fmt(url, sizeof(url), "%s?uploadId=%s", f->url, f->upload_id);
	code = ctl_request(d->ctl, &d->cfg, "POST", url, body, &resp, e);
	d->n->requests++;
	free(body);
	/* S3 can answer 200 with an <Error> in the body */
	if (code == 200 && !(resp.p && strstr(resp.p, "<Error>"))) {
		free(resp.p);
		f->upload_id[0] = '\0';
		f->written = true;
		return 0;
	}
	if (code >= 0) {
		s3_fmt(what, sizeof(what), "completing the multipart upload of %s", f->name);
		code = code == 200 ? 500 : code;
		code = http_fail(e, http_errno(code), what, code, resp.p);
	}
	free(resp.p);
	return (int)code;
}

/* Abort f's upload in progress (a blocking control request): S3 would keep and bill its parts. */
static void multipart_abort(struct s3_data *d, struct s3_file *f)
{
	struct s3_buf resp = {0};
	char url[S3_URL_MAX + 300];

	if (!f->upload_id[0] || !d->ctl)
		return;
	s3_fmt(url, sizeof(url), "%s?uploadId=%s", f->url, f->upload_id);
	ctl_request(d->ctl, &d->cfg, "DELETE", url, NULL, &resp, NULL);
	d->n->requests++;
	free(resp.p);
	f->upload_id[0] = '\0';
}

static int s3_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	struct s3_data *d;
	int ret = -ENOMEM;

	if (!s->names || !s->nfiles)
		return llmio_err(e, -EINVAL,
		                 "the s3 engine needs s3:// targets: --filename "
		                 "s3://bucket/key or --directory s3://bucket/prefix");
	pthread_once(&curl_once, curl_init_once);
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
		ret = split_url(f->name, bucket, sizeof(bucket), key, sizeof(key), e);
		if (!ret && object_url(&d->cfg, bucket, key, f->url, sizeof(f->url)))
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

			f->existed = head_object(d->ctl, &d->cfg, bucket, key, &sz, &he) != -ENOENT;
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
		int ret = multipart_start(d, f, &e);

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
	if (split_url(d->names[idx], bucket, sizeof(bucket), key, sizeof(key), &e) ||
	    object_url(&d->cfg, bucket, key, f->url, sizeof(f->url))) {
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
		stall_msg(d->ctx->ioerr, sizeof(d->ctx->ioerr), what, now - x->moved_ns,
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
		x->due_ns = now_ns() + backoff_ns(x->attempts);
		return;
	}
	if (x->bad[0]) {
		s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr), "%s: %s", what, x->bad);
		finish_io(d, x, -EPROTO);
		return;
	}
	if (code >= 300 && code < 400) {
		struct llmio_error he = {0};

		redirect_fail(&he, what, code, x->h, &d->cfg);
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
		       x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc), curl_hint(rc));
		finish_io(d, x, e);
		return;
	}
	if (code >= 300) {
		struct llmio_error he = {0};

		http_fail(&he, http_errno(code), what, code, x->body);
		s3_fmt(d->ctx->ioerr, sizeof(d->ctx->ioerr), "%s", he.msg);
		if (code == 503)
			engine_appendf(d->ctx->ioerr, sizeof(d->ctx->ioerr),
			               " (still throttled after %u retries)", x->attempts);
		finish_io(d, x, http_errno(code));
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

		copy_trim(f->etags[x->part], sizeof(f->etags[0]), x->etag);
		if (!f->part_done[x->part]) {
			f->part_done[x->part] = 1;
			f->parts_in++;
		}
		if (f->parts_in == f->nparts) {
			struct llmio_error e = {0};
			int ret = multipart_complete(d, f, &e);

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
		if (stopped(d->stop))
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
		multipart_abort(d, f);
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
		multipart_abort(d, f);
		if (d->o.cleanup && f->written && !f->existed && d->ctl &&
		    ctl_request(d->ctl, &d->cfg, "DELETE", f->url, NULL, &resp, NULL) == 204)
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
