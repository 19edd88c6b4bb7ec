/* SPDX-License-Identifier: MIT */
/*
 * Where and as whom the s3 engine sends (s3_internal.h): endpoint, region and credentials as
 * the AWS CLI finds them, and how every request is signed: libcurl's own SigV4 signer
 * (CURLOPT_AWS_SIGV4) over the x-amz-content-sha256 header the caller supplies, requests
 * confined to the endpoint, and the payload hashes (SHA-256, Content-MD5) through OpenSSL.
 */
#include <curl/curl.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/s3_internal.h"

void s3_copy_trim(char *dst, size_t size, const char *src)
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
		s3_copy_trim(key, sizeof(key), line);
		if (!strcmp(key, "aws_access_key_id"))
			s3_copy_trim(c->access, sizeof(c->access), eq + 1);
		else if (!strcmp(key, "aws_secret_access_key"))
			s3_copy_trim(c->secret, sizeof(c->secret), eq + 1);
		else if (!strcmp(key, "aws_session_token"))
			s3_copy_trim(c->token, sizeof(c->token), eq + 1);
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
int s3_config_load(const struct s3_opts *o, struct s3_cfg *c, struct llmio_error *e)
{
	const char *v, *home = env("HOME");
	char path[1024];

	memset(c, 0, sizeof(*c));
	v = env("AWS_REGION");
	s3_copy_trim(c->region, sizeof(c->region),
	             v                           ? v
	             : env("AWS_DEFAULT_REGION") ? env("AWS_DEFAULT_REGION")
	                                         : "us-east-1");
	v = env("AWS_ENDPOINT_URL_S3");
	if (!v)
		v = env("AWS_ENDPOINT_URL");
	if (v)
		s3_copy_trim(c->endpoint, sizeof(c->endpoint), v);
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

		s3_copy_trim(host, sizeof(host), rest);
		s3_fmt(c->endpoint, sizeof(c->endpoint), "%s://%s", o->tls == 1 ? "https" : "http",
		       host);
	}
	if (env("AWS_ACCESS_KEY_ID") && env("AWS_SECRET_ACCESS_KEY")) {
		s3_copy_trim(c->access, sizeof(c->access), env("AWS_ACCESS_KEY_ID"));
		s3_copy_trim(c->secret, sizeof(c->secret), env("AWS_SECRET_ACCESS_KEY"));
		if (env("AWS_SESSION_TOKEN"))
			s3_copy_trim(c->token, sizeof(c->token), env("AWS_SESSION_TOKEN"));
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
		s3_copy_trim(c->ca, sizeof(c->ca), env("AWS_CA_BUNDLE"));
	return 0;
}

/*
 * Keep every request of h on the endpoint: http and https only, and no redirect followed.
 * libcurl would send the caller's headers, the session token among them, to wherever a redirect
 * points, and the redirected request unsigned (it drops the credentials for another host); the
 * 3xx is reported instead, with where it pointed (s3_redirect_fail).  The path goes out as the
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

/*
 * Sign requests on h with libcurl's SigV4 signer (and trust AWS_CA_BUNDLE's certificates).  libcurl
 * signs the headers it is given (Debian's 7.88 does not add x-amz-content-sha256 itself, and S3
 * requires it), so the caller's list already holds it.
 */
void s3_sign(CURL *h, const struct s3_cfg *c)
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
void s3_sha256_header(const void *data, size_t len, char *out, size_t outlen)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	char h[2 * EVP_MAX_MD_SIZE + 1];

	EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
	hex(md, mdlen, h);
	s3_fmt(out, outlen, "x-amz-content-sha256: %s", h);
}

void s3_md5_header(const void *data, size_t len, char *out, size_t outlen)
{
	unsigned char md[EVP_MAX_MD_SIZE], b64[64];
	unsigned mdlen = 0;

	EVP_Digest(data, len, md, &mdlen, EVP_md5(), NULL);
	EVP_EncodeBlock(b64, md, (int)mdlen);
	s3_fmt(out, outlen, "Content-MD5: %s", (const char *)b64);
}
