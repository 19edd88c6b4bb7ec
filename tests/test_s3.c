/* SPDX-License-Identifier: MIT */
/*
 * The s3 engine's signer: libcurl's SigV4 (CURLOPT_AWS_SIGV4), set up as the engine sets it up
 * (s3_sign_from_env: region and keys from the environment), must reproduce the AWS S3
 * documentation's published "GET object" example byte for byte: GET /test.txt on
 * examplebucket.s3.amazonaws.com, Range bytes=0-9, x-amz-date 20130524T000000Z, the empty
 * payload's SHA-256, the documentation's key pair; signature f0e8bdb8...bdb41.  The request is
 * captured on a loopback listener this test starts (CURLOPT_CONNECT_TO keeps the Host header
 * the example signs).
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/error.h"
#include "engine/engine.h"
#include "llmio/job.h"
#include "s3_loopback.h"

int s3_sign_from_env(CURL *h, struct llmio_error *e);

#define AWS_DOC_SIGNATURE "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"

struct capture {
	int lfd;
	char req[8192];
};

/* Accept one connection, keep its request head, answer 200 with an empty body. */
static void *listener(void *arg)
{
	struct capture *c = arg;
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
	size_t used = 0;
	int fd = accept(c->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	while (used < sizeof(c->req) - 1 && !strstr(c->req, "\r\n\r\n")) {
		ssize_t n = read(fd, c->req + used, sizeof(c->req) - 1 - used);

		if (n <= 0)
			break;
		used += (size_t)n;
		c->req[used] = '\0';
	}
	(void)!write(fd, ok, sizeof(ok) - 1);
	close(fd);
	return NULL;
}

static void aws_doc_get_object(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	struct capture c = {0};
	struct llmio_error e = {0};
	struct curl_slist *hdrs = NULL, *to = NULL;
	char connect_to[128];
	pthread_t th;
	CURL *h;

	(void)state;
	c.lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(c.lfd >= 0);
	assert_int_equal(bind(c.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(c.lfd, 1), 0);
	assert_int_equal(getsockname(c.lfd, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(pthread_create(&th, NULL, listener, &c), 0);

	setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", 1);
	setenv("AWS_REGION", "us-east-1", 1);
	unsetenv("AWS_SESSION_TOKEN");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = curl_easy_init();
	assert_non_null(h);
	assert_int_equal(s3_sign_from_env(h, &e), 0);
	snprintf(connect_to, sizeof(connect_to), "examplebucket.s3.amazonaws.com:80:127.0.0.1:%u",
	         ntohs(a.sin_port));
	to = curl_slist_append(to, connect_to);
	hdrs = curl_slist_append(hdrs, "x-amz-date: 20130524T000000Z");
	hdrs = curl_slist_append(hdrs, "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb924"
	                               "27ae41e4649b934ca495991b7852b855");
	hdrs = curl_slist_append(hdrs, "Range: bytes=0-9");
	curl_easy_setopt(h, CURLOPT_URL, "http://examplebucket.s3.amazonaws.com/test.txt");
	curl_easy_setopt(h, CURLOPT_CONNECT_TO, to);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	pthread_join(th, NULL);
	close(c.lfd);
	print_message("%s", c.req);
	assert_non_null(strstr(c.req, "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7"
	                              "EXAMPLE/20130524/us-east-1/s3/aws4_request"));
	assert_non_null(strstr(c.req, "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date"));
	assert_non_null(strstr(c.req, "Signature=" AWS_DOC_SIGNATURE));
	curl_slist_free_all(hdrs);
	curl_slist_free_all(to);
	curl_easy_cleanup(h);
	curl_global_cleanup();
}

/* Without credentials anywhere the engine says where to put them. */
static void no_credentials(void **state)
{
	struct llmio_error e = {0};
	CURL *h = curl_easy_init();

	(void)state;
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
	assert_int_equal(s3_sign_from_env(h, &e), -EACCES);
	assert_non_null(strstr(e.msg, "AWS_ACCESS_KEY_ID"));
	assert_non_null(strstr(e.msg, "/nonexistent/credentials"));
	curl_easy_cleanup(h);
}

/* A profile of a credentials file, as the AWS CLI reads it. */
static void credentials_file(void **state)
{
	char path[] = "/tmp/llmio-s3-cred.XXXXXX";
	struct llmio_error e = {0};
	int fd = mkstemp(path);
	FILE *f;
	CURL *h = curl_easy_init();

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "[default]\naws_access_key_id = DEF\naws_secret_access_key = DEFSECRET\n"
	           "[other]\naws_access_key_id=OTHER\naws_secret_access_key=OTHERSECRET\n");
	fclose(f);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	setenv("AWS_PROFILE", "other", 1);
	assert_int_equal(s3_sign_from_env(h, &e), 0);
	setenv("AWS_PROFILE", "missing", 1);
	assert_int_equal(s3_sign_from_env(h, &e), -EACCES);
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	unlink(path);
	curl_easy_cleanup(h);
}

/*
 * A recipe's objects (engine_target_req.files): names and sizes as the recipe gives them,
 * which prepared them, with no request; a read of size 0 asks the server (HEAD).  The endpoint
 * is a closed port, so any request would fail.
 */
static void recipe_object_list(void **state)
{
	const struct llmio_file files[] = {
	        {.path = "s3://b/w/llmio-work/ckpt-rank00000.pt", .size = 12345},
	        {.path = "s3://b/w/llmio-work/ckpt-rank00001.pt", .size = 678},
	};
	struct engine_target_req rq = {.bs = 4096, .writes = true, .files = files, .nfiles = 2};
	struct llmio_file unsized = {.path = "s3://b/w/llmio-work/data.bin"};
	struct engine_target t = {0};
	struct llmio_error e = {0};

	(void)state;
	setenv("AWS_ACCESS_KEY_ID", "K", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "S", 1);
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
	assert_int_equal(engine_target_resolve_defaults(engine_find("s3"), &rq, &t, &e), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.names[1], "s3://b/w/llmio-work/ckpt-rank00001.pt");
	assert_true(t.sizes[0] == 12345 && t.sizes[1] == 678);
	for (unsigned i = 0; i < t.n; i++)
		free(t.names[i]);
	free(t.names);
	free(t.sizes);
	rq.writes = false; /* read as they are: still no request */
	assert_int_equal(engine_target_resolve_defaults(engine_find("s3"), &rq, &t, &e), 0);
	for (unsigned i = 0; i < t.n; i++)
		free(t.names[i]);
	free(t.names);
	free(t.sizes);
	rq.files = &unsized;
	rq.nfiles = 1;
	assert_int_equal(engine_target_resolve_defaults(engine_find("s3"), &rq, &t, &e),
	                 -ECONNREFUSED);
	assert_non_null(strstr(e.msg, "HEAD http://127.0.0.1:1/b/w/llmio-work/data.bin"));
	unsetenv("AWS_ENDPOINT_URL");
}

/*
 * A listing in two pages, as ListObjectsV2 answers: the first truncated with a continuation
 * token, the second (asked with that token) the rest.  Keys written with XML's entities.
 */
static void *list_conn(void *arg)
{
	static const char page1[] =
	        "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name><Prefix>w/</Prefix>"
	        "<IsTruncated>true</IsTruncated><NextContinuationToken>tok1</NextContinuationToken>"
	        "<Contents><Key>w/a&amp;b</Key><Size>10</Size></Contents>"
	        "<Contents><Key>w/c</Key><Size>20</Size></Contents></ListBucketResult>";
	static const char page2[] =
	        "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name><Prefix>w/</Prefix>"
	        "<IsTruncated>false</IsTruncated>"
	        "<Contents><Key>w/d</Key><Size>30</Size></Contents></ListBucketResult>";
	int fd = (int)(intptr_t)arg;
	char req[8192], hdr[128];
	size_t used = 0;

	for (;;) {
		char *end = strstr(req, "\r\n\r\n");
		const char *body;
		ssize_t n;
		int len;

		if (!used || !end) {
			n = read(fd, req + used, sizeof(req) - 1 - used);
			if (n <= 0)
				break;
			used += (size_t)n;
			req[used] = '\0';
			continue;
		}
		*end = '\0';
		body = strstr(req, "continuation-token=tok1") ? page2 : page1;
		len = snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n",
		               strlen(body));
		(void)!write(fd, hdr, (size_t)len);
		(void)!write(fd, body, strlen(body));
		end += 4;
		used -= (size_t)(end - req);
		memmove(req, end, used);
		req[used] = '\0';
	}
	close(fd);
	return NULL;
}

/*
 * The object operations a recipe reaches through engine.h (engine_ops.objects): s3's list
 * follows the continuation token, and engine_objects() gives them only where the engine, with
 * its options, resolves its targets (cuda-bounce with host=s3, not with its default host).
 */
static void objects_through_engine_h(void **state)
{
	const struct engine_ops *s3 = engine_find("s3"), *bounce = engine_find("cuda-bounce");
	const struct engine_objects *obj;
	struct engine_target t = {0};
	struct llmio_error e = {0};
	void *bopts;

	(void)state;
	obj = engine_objects(s3, NULL);
	assert_non_null(obj);
	assert_ptr_equal(obj->writer, s3);
	assert_null(engine_objects(engine_find("psync"), NULL));
	bopts = calloc(1, bounce->opts_size);
	assert_non_null(bopts);
	assert_int_equal(engine_opts_parse(bounce, "", bopts, &e), 0);
	assert_null(engine_objects(bounce, bopts));
	assert_int_equal(engine_opts_parse(bounce, "host=s3", bopts, &e), 0);
	assert_ptr_equal(engine_objects(bounce, bopts), obj);
	free(bopts);

	s3_loopback_serve(list_conn);
	assert_int_equal(obj->list("s3://b/w/", &t, &e), 0);
	assert_int_equal(t.n, 3);
	assert_string_equal(t.names[0], "s3://b/w/a&b");
	assert_string_equal(t.names[1], "s3://b/w/c");
	assert_string_equal(t.names[2], "s3://b/w/d");
	assert_true(t.sizes[0] == 10 && t.sizes[1] == 20 && t.sizes[2] == 30);
	for (unsigned i = 0; i < t.n; i++)
		free(t.names[i]);
	free(t.names);
	free(t.sizes);
	assert_int_equal(obj->list("b/w/", &t, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "is not an s3:// URL"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(aws_doc_get_object),       cmocka_unit_test(no_credentials),
	        cmocka_unit_test(credentials_file),         cmocka_unit_test(recipe_object_list),
	        cmocka_unit_test(objects_through_engine_h),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
