/* SPDX-License-Identifier: MIT */
/*
 * The s3 engine's control requests (s3_internal.h): the blocking requests outside the data
 * path (HEAD, DELETE, a multipart upload's initiate, complete and abort) with the data path's
 * retries and backoff, a stall and a deadline of their own, and the job's stop; what a failed
 * one means to a user, with the fix; the names and URLs a request may carry; and the object
 * operations outside a job (s3.h).
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "engine/s3_internal.h"

/* Through vsnprintf, so that gcc's -Wformat-truncation does not ask for a length check on each. */
int s3_fmt(char *buf, size_t len, const char *fmt, ...)
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

CURLcode s3_curl_init(void)
{
	pthread_once(&curl_once, curl_init_once);
	return curl_init_rc;
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

/* What a failed HTTP status means to a user, with the fix. */
int s3_http_errno(long code)
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
int s3_http_fail(struct llmio_error *e, int rc, const char *what, long code, const char *body)
{
	char s3code[64] = "";

	s3_xml_get(body, "Code", s3code, sizeof(s3code), NULL);
	return llmio_err(e, rc, "%s: HTTP %ld%s%s: %s", what, code, s3code[0] ? " " : "", s3code,
	                 http_hint(code, s3code));
}

/* What to do about a transport failure, by libcurl's code. */
const char *s3_curl_hint(CURLcode rc)
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
int s3_redirect_fail(struct llmio_error *e, const char *what, long code, CURL *h,
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

bool s3_stopped(const atomic_int *stop)
{
	return stop && atomic_load_explicit(stop, memory_order_relaxed);
}

/* The line for a request on which no byte moved for too long (what: the request). */
void s3_stall_msg(char *buf, size_t len, const char *what, uint64_t idle_ns, long stall_ms)
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
	if (s3_stopped(w->c->stop))
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
uint64_t s3_backoff_ns(unsigned n)
{
	return 10000000ull << (n - 1);
}

/*
 * A blocking control request on h (HEAD, list, multipart initiate/complete/abort, delete):
 * method, url, optional body; the response body into resp.  A 503 or 500 is sent again as the
 * data path does (retries, s3_backoff_ns); no byte moving for stall_ms, the whole request past
 * timeout_ms, or the job stopping ends it.  Returns the HTTP status, or -errno for a transport
 * failure or a redirect (message in e).
 */
long s3_ctl_request(CURL *h, const struct s3_cfg *c, const char *method, const char *url,
                    const char *body, struct s3_buf *resp, struct llmio_error *e)
{
	struct curl_slist *hdrs = NULL, *t;
	char errbuf[CURL_ERROR_SIZE] = "", sha[96], what[S3_URL_MAX + 16];
	struct ctl_watch w = {.c = c};
	long code = 0;
	CURLcode rc;

	curl_easy_reset(h);
	s3_sha256_header(body ? body : "", body ? strlen(body) : 0, sha, sizeof(sha));
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
		    s3_stopped(c->stop))
			break;
		uint64_t ns = s3_backoff_ns(attempt + 1);
		struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000),
		                      .tv_nsec = (long)(ns % 1000000000)};

		nanosleep(&ts, NULL);
	}
	curl_slist_free_all(hdrs);
	s3_fmt(what, sizeof(what), "%s %s", method, url);
	if (rc == CURLE_ABORTED_BY_CALLBACK && w.stalled) {
		char msg[LLMIO_ERROR_MSG_MAX];

		s3_stall_msg(msg, sizeof(msg), what, now_ns() - w.since, c->stall_ms);
		return llmio_err(e, -ETIMEDOUT, "%s", msg);
	}
	/* the job stopped: the I/O that waited on this is abandoned, not failed (engine.h) */
	if (rc == CURLE_ABORTED_BY_CALLBACK)
		return llmio_err(e, -ECANCELED, "%s: %s", what, s3_curl_hint(rc));
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
		                 errbuf[0] ? errbuf : curl_easy_strerror(rc), s3_curl_hint(rc));
	if (code >= 300 && code < 400)
		return s3_redirect_fail(e, what, code, h, c);
	return code;
}

/* endpoint/bucket/key with the key escaped (its slashes kept) into out. */
int s3_object_url(const struct s3_cfg *c, const char *bucket, const char *key, char *out,
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

/*
 * A key that cannot change the request's bucket or path: none of its segments is "." or ".."
 * (which a server or proxy resolves, into another path or bucket).  0, or rc with the reason
 * in e (-EINVAL for a name the user gave, -EPROTO for one a server listed).  name: how the
 * message names the key.
 */
int s3_key_check(const char *name, const char *key, int rc, struct llmio_error *e)
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
int s3_split_url(const char *name, char *bucket, size_t blen, char *rest, size_t rlen,
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
	return s3_key_check(name, rest, -EINVAL, e);
}

/* HEAD one object: its size, or -ENOENT / another -errno with the reason in e. */
int s3_head_object(CURL *h, const struct s3_cfg *c, const char *bucket, const char *key,
                   uint64_t *size, struct llmio_error *e)
{
	struct s3_buf resp = {0};
	char url[S3_URL_MAX], what[S3_URL_MAX + 64];
	curl_off_t len = -1;
	long code;

	if (s3_object_url(c, bucket, key, url, sizeof(url)))
		return llmio_err(e, -ENAMETOOLONG, "key %s is too long", key);
	code = s3_ctl_request(h, c, "HEAD", url, NULL, &resp, e);
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
		if (s3_ctl_request(h, c, "HEAD", url, NULL, &resp, NULL) == 404) {
			free(resp.p);
			return llmio_err(e, -ENOENT,
			                 "HEAD s3://%s/%s: HTTP 404: bucket %s does not exist; "
			                 "create it, or fix the bucket name",
			                 bucket, key, bucket);
		}
		free(resp.p);
	}
	s3_fmt(what, sizeof(what), "HEAD s3://%s/%s", bucket, key);
	return s3_http_fail(e, s3_http_errno(code), what, code, "");
}

/* Configuration and a handle for control requests outside a job (s3.h); h NULL on failure. */
int s3_ctl_open(struct s3_cfg *c, CURL **h, struct llmio_error *e)
{
	int ret;

	*h = NULL;
	s3_curl_init();
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
	int ret = s3_ctl_open(&c, &h, e);

	for (unsigned i = 0; i < n && !ret; i++) {
		struct llmio_error he = {0};

		ret = s3_split_url(names[i], bucket, sizeof(bucket), key, sizeof(key), e);
		if (ret)
			break;
		ret = s3_head_object(h, &c, bucket, key, &sizes[i], &he);
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
	int ret = s3_ctl_open(&c, &h, e);

	*deleted = 0;
	for (unsigned i = 0; i < n && !ret; i++) {
		long code;

		ret = s3_split_url(names[i], bucket, sizeof(bucket), key, sizeof(key), e);
		if (!ret && s3_object_url(&c, bucket, key, url, sizeof(url)))
			ret = llmio_err(e, -ENAMETOOLONG, "%s: the URL is too long", names[i]);
		if (ret)
			break;
		code = s3_ctl_request(h, &c, "DELETE", url, NULL, &resp, e);
		if (code < 0)
			ret = (int)code;
		else if (code == 204 || code == 200)
			(*deleted)++;
		else if (code != 404)
			ret = s3_http_fail(e, s3_http_errno(code), names[i], code, resp.p);
	}
	free(resp.p);
	curl_easy_cleanup(h);
	return ret;
}

/* Start the multipart upload of f (a blocking control request, once per object). */
int s3_multipart_start(struct s3_data *d, struct s3_file *f, struct llmio_error *e)
{
	struct s3_buf resp = {0};
	char url[S3_URL_MAX + 16], what[S3_URL_MAX + 64];
	long code;

	/* "uploads=", the canonical form: libcurl 7.88 signs the query as written */
	s3_fmt(url, sizeof(url), "%s?uploads=", f->url);
	code = s3_ctl_request(d->ctl, &d->cfg, "POST", url, NULL, &resp, e);
	d->n->requests++;
	if (code == 200 &&
	    s3_xml_get(resp.p, "UploadId", f->upload_id, sizeof(f->upload_id), NULL)) {
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
			code = s3_http_fail(e, s3_http_errno(code), what, code, resp.p);
	}
	free(resp.p);
	return (int)code;
}

/* Every part is in: complete the upload (a blocking control request, once per object). */
int s3_multipart_complete(struct s3_data *d, struct s3_file *f, struct llmio_error *e)
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

		s3_xml_escape(f->etags[i], etag, sizeof(etag));
		used += (size_t)s3_fmt(body + used, cap - used,
		                       "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag></Part>",
		                       i + 1, etag);
	}
	s3_fmt(body + used, cap - used, "</CompleteMultipartUpload>");
	s3_fmt(url, sizeof(url), "%s?uploadId=%s", f->url, f->upload_id);
	code = s3_ctl_request(d->ctl, &d->cfg, "POST", url, body, &resp, e);
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
		code = s3_http_fail(e, s3_http_errno(code), what, code, resp.p);
	}
	free(resp.p);
	return (int)code;
}

/* Abort f's upload in progress (a blocking control request): S3 would keep and bill its parts. */
void s3_multipart_abort(struct s3_data *d, struct s3_file *f)
{
	struct s3_buf resp = {0};
	char url[S3_URL_MAX + 300];

	if (!f->upload_id[0] || !d->ctl)
		return;
	s3_fmt(url, sizeof(url), "%s?uploadId=%s", f->url, f->upload_id);
	s3_ctl_request(d->ctl, &d->cfg, "DELETE", url, NULL, &resp, NULL);
	d->n->requests++;
	free(resp.p);
	f->upload_id[0] = '\0';
}
