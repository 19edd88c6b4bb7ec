/* SPDX-License-Identifier: MIT */
/*
 * Listing a prefix (ListObjectsV2, s3_internal.h): the pages, their continuation tokens, and
 * the few XML elements an S3 answer is read for, with XML's entities and character references
 * (a key may hold any byte).  A server is taken at its word only for what was asked: each key
 * under the prefix, in key order, a token that moves on.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/s3_internal.h"

/* The text between <tag> and </tag> at or after *from; false when absent. */
bool s3_xml_get(const char *xml, const char *tag, char *out, size_t len, const char **from)
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
bool s3_xml_escape(const char *s, char *out, size_t len)
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

/*
 * One more object in t.  The arrays double when n reaches a power of two (t has no capacity of
 * its own): a listing of N objects copies O(N) pointers, not O(N^2).
 */
int s3_add_object(struct engine_target *t, const char *bucket, const char *key, uint64_t size)
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

/*
 * Every object under prefix (ListObjectsV2, following continuation tokens).  The answer is
 * checked as far as it decides what is read: each key under the prefix, in ascending order
 * (as S3 lists them; a repeated page goes back), a token that moves on, nothing cut short.
 */
int s3_list_prefix(CURL *h, const struct s3_cfg *c, const char *bucket, const char *prefix,
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
		code = s3_ctl_request(h, c, "GET", url, NULL, &resp, e);
		if (code < 0) {
			ret = (int)code;
			break;
		}
		if (code != 200) {
			ret = s3_http_fail(e, s3_http_errno(code), what, code, resp.p);
			break;
		}
		while (!ret && resp.p && strstr(at ? at : resp.p, "<Key>")) {
			if (!s3_xml_get(resp.p, "Key", key, sizeof(key), &at) ||
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
			if (!s3_xml_get(resp.p, "Size", size, sizeof(size), &at))
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
				ret = s3_key_check(name, key, -EPROTO, e);
			if (!ret) {
				memcpy(last, key, strlen(key) + 1);
				ret = s3_add_object(t, bucket, key, strtoull(size, NULL, 10));
			}
		}
		s3_xml_get(resp.p, "IsTruncated", trunc, sizeof(trunc), NULL);
		if (ret || strcmp(trunc, "true"))
			break;
		if (!s3_xml_get(resp.p, "NextContinuationToken", token, sizeof(token), NULL)) {
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

int s3_objects_list(const char *prefix, struct engine_target *t, struct llmio_error *e)
{
	char bucket[256], key[S3_KEY_MAX + 1];
	struct s3_cfg c;
	CURL *h;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = s3_ctl_open(&c, &h, e);
	if (!ret)
		ret = s3_split_url(prefix, bucket, sizeof(bucket), key, sizeof(key), e);
	if (!ret)
		ret = s3_list_prefix(h, &c, bucket, key, t, e);
	curl_easy_cleanup(h);
	return ret;
}
