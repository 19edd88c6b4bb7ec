/* SPDX-License-Identifier: MIT */
/*
 * verify=: the digests against their published vectors, against implementations llmio does
 * not use (a bit-at-a-time CRC-32C here, Python's hashlib for MD5 and SHA-256) and against
 * blocks the hand-written digests before ISA-L and libcrypto stamped; libcrypto's allocations
 * per digest counted; a stamped block checks, a changed byte or a misplaced block does not,
 * and the message names file, offset, expected and found.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/crypto.h>

#include "job/verify.h"

static void digest_hex(enum verify_algo a, const char *in, size_t len, char *out)
{
	uint8_t d[32];
	size_t n = verify_digest(a, in, len, d);

	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	out[2 * n] = '\0';
}

static void vectors(void **state)
{
	static const char *const long_md5 = "1234567890123456789012345678901234567890"
	                                    "1234567890123456789012345678901234567890";
	static const char *const two_blocks =
	        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char h[65];
	uint8_t d[32];
	uint32_t crc;

	(void)state;
	/* CRC-32C check value (RFC 3720 / the Castagnoli catalogue) */
	assert_int_equal(verify_digest(VERIFY_CRC32C, "123456789", 9, d), 4);
	memcpy(&crc, d, sizeof(crc));
	assert_int_equal(crc, 0xe3069283u);
	/* RFC 1321 appendix A.5 */
	digest_hex(VERIFY_MD5, "", 0, h);
	assert_string_equal(h, "d41d8cd98f00b204e9800998ecf8427e");
	digest_hex(VERIFY_MD5, "abc", 3, h);
	assert_string_equal(h, "900150983cd24fb0d6963f7d28e17f72");
	digest_hex(VERIFY_MD5, long_md5, strlen(long_md5), h);
	assert_string_equal(h, "57edf4a22be3c955ac49da2e2107b67a");
	/* FIPS 180-4 examples (56 bytes: the padding spills into a second block) */
	digest_hex(VERIFY_SHA256, "", 0, h);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	digest_hex(VERIFY_SHA256, "abc", 3, h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	digest_hex(VERIFY_SHA256, two_blocks, strlen(two_blocks), h);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static uint32_t crc32c_of(const void *p, size_t n)
{
	uint8_t d[32];
	uint32_t c;

	assert_int_equal(verify_digest(VERIFY_CRC32C, p, n, d), 4);
	memcpy(&c, d, sizeof(c));
	return c;
}

/* RFC 3720 appendix B.4: the CRC of each 32-byte pattern and of an iSCSI read command PDU */
static void crc32c_rfc3720(void **state)
{
	static const uint8_t pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	                                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00,
	                                0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
	                                0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	                                0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
	uint8_t b[32];

	(void)state;
	memset(b, 0, sizeof(b));
	assert_int_equal(crc32c_of(b, sizeof(b)), 0x8a9136aau);
	memset(b, 0xff, sizeof(b));
	assert_int_equal(crc32c_of(b, sizeof(b)), 0x62a8ab43u);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	assert_int_equal(crc32c_of(b, sizeof(b)), 0x46dd794eu);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	assert_int_equal(crc32c_of(b, sizeof(b)), 0x113fdb5cu);
	assert_int_equal(crc32c_of(pdu, sizeof(pdu)), 0xd9963a56u);
}

/* CRC-32C one bit at a time from its definition (reflected, polynomial 0x82f63b78) */
static uint32_t crc32c_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
	}
	return ~c;
}

/* the pattern both sides of a comparison build: byte i of n */
static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + (i >> 9) + 3);
}

/* ISA-L picks code by length and alignment: every length to 300 at every start within 8 bytes,
 * then the block sizes verify sees, each against the definition */
static void crc32c_any_length(void **state)
{
	static const size_t big[] = {4095, 4096, 4097, 65536, 131072, 131075, 1 << 20};
	uint8_t *buf = malloc((1 << 20) + 8);

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < (1 << 20) + 8; i++)
		buf[i] = pattern(i);
	for (size_t at = 0; at < 8; at++)
		for (size_t n = 0; n <= 300; n++)
			assert_int_equal(crc32c_of(buf + at, n), crc32c_bitwise(buf + at, n));
	for (size_t k = 0; k < sizeof(big) / sizeof(big[0]); k++)
		assert_int_equal(crc32c_of(buf + 1, big[k]), crc32c_bitwise(buf + 1, big[k]));
	free(buf);
}

/* MD5 and SHA-256 of pattern() buffers around each padding boundary and at block sizes, as
 * Python's hashlib computes them */
static void digests_match_hashlib(void **state)
{
	static const size_t lens[] = {0,   1,   55,  56,  57,   63,     64,    65,
	                              119, 120, 127, 128, 4096, 131072, 131075};
	static const char *const names[] = {"md5", "sha256"};
	char cmd[1024], line[200], want[80];
	size_t used = 0, maxlen = 0;
	uint8_t *buf;
	FILE *py;

	(void)state;
	used += (size_t)snprintf(cmd + used, sizeof(cmd) - used,
	                         "python3 -c 'import hashlib\nfor n in (");
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		used += (size_t)snprintf(cmd + used, sizeof(cmd) - used, "%zu,", lens[k]);
		maxlen = lens[k] > maxlen ? lens[k] : maxlen;
	}
	snprintf(cmd + used, sizeof(cmd) - used,
	         "):\n b = bytes((i * 7 + (i >> 9) + 3) & 255 for i in range(n))\n"
	         " print(hashlib.md5(b).hexdigest(), hashlib.sha256(b).hexdigest())' 2>/dev/null");
	py = popen(cmd, "r");
	if (!py || !fgets(line, sizeof(line), py)) {
		if (py)
			pclose(py);
		skip(); /* no python3: the published vectors above still hold */
	}
	buf = malloc(maxlen + 1);
	assert_non_null(buf);
	for (size_t i = 0; i < maxlen; i++)
		buf[i] = pattern(i);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		char *field = line;

		if (k)
			assert_non_null(fgets(line, sizeof(line), py));
		for (int a = 0; a < 2; a++) {
			char got[65];

			snprintf(want, sizeof(want), "%.*s", (int)strcspn(field, " \n"), field);
			field += strcspn(field, " \n") + 1;
			digest_hex(a ? VERIFY_SHA256 : VERIFY_MD5, (const char *)buf, lens[k], got);
			if (strcmp(want, got))
				fail_msg("%s of %zu bytes: hashlib %s, llmio %s", names[a], lens[k],
				         want, got);
		}
	}
	free(buf);
	assert_int_equal(pclose(py), 0);
}

/* Blocks stamped by the digests llmio wrote out by hand until ISA-L and libcrypto replaced them
 * (commit dcdaaeb): the first 56 bytes of a 4 KiB block of byte i = i * 7 + algorithm, stamped
 * for offset 8192.  Files written then verify now: the same bytes, stamped and checked. */
static void blocks_of_the_old_code(void **state)
{
	static const char *const old[] = {
	        [VERIFY_CRC32C] = "4c4c4d560100000000100000000000000020000000000000db83b31a000000"
	                          "00000000000000000000000000000000000000000000000000",
	        [VERIFY_MD5] = "4c4c4d560200000000100000000000000020000000000000d7705e5a872e77c3"
	                       "e72659cc342425e200000000000000000000000000000000",
	        [VERIFY_SHA256] = "4c4c4d56030000000010000000000000002000000000000081e9be148d4e0e"
	                          "73336145eaecfd4f40f65dc53ed7d990bb3788075b5ba98b1c",
	};
	static uint8_t block[4096];
	struct llmio_error err = {0};

	(void)state;
	for (enum verify_algo a = VERIFY_CRC32C; a <= VERIFY_SHA256; a++) {
		char hdr[2 * VERIFY_HDR_LEN + 1];

		for (size_t i = 0; i < sizeof(block); i++)
			block[i] = (uint8_t)(i * 7 + a);
		for (int i = 0; i < VERIFY_HDR_LEN; i++)
			sscanf(old[a] + 2 * i, "%2hhx", &block[i]);
		assert_int_equal(verify_check(a, block, sizeof(block), 8192, "old", &err), 0);
		assert_int_equal(verify_stamp(a, block, sizeof(block), 8192, &err), 0);
		for (int i = 0; i < VERIFY_HDR_LEN; i++)
			snprintf(hdr + 2 * i, 3, "%02x", block[i]);
		assert_string_equal(hdr, old[a]);
	}
}

/* libcrypto's allocations, counted (CRYPTO_set_mem_functions, before its first one) */
static long crypto_mallocs, crypto_frees;

static void *count_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	__atomic_fetch_add(&crypto_mallocs, 1, __ATOMIC_RELAXED);
	return malloc(n);
}

static void *count_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	if (!p)
		__atomic_fetch_add(&crypto_mallocs, 1, __ATOMIC_RELAXED);
	return realloc(p, n);
}

static void count_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	if (p)
		__atomic_fetch_add(&crypto_frees, 1, __ATOMIC_RELAXED);
	free(p);
}

static void *digest_once(void *arg)
{
	uint8_t d[32];

	return verify_digest(VERIFY_SHA256, arg, 64, d) == 32 ? arg : NULL;
}

/*
 * One context per thread, reused: after a thread's first digest, at most one allocation per
 * digest (OpenSSL 3.0 makes its provider's state again at each init; a context made and an
 * algorithm fetched per call are three or more) and none kept; a thread's context is freed
 * when it ends.
 */
static void context_reused(void **state)
{
	static uint8_t block[131072];
	uint8_t d[32];
	long m0, f0;
	pthread_t t;
	void *ret;

	(void)state;
	for (int a = VERIFY_MD5; a <= VERIFY_SHA256; a++) {
		assert_int_not_equal(verify_digest(a, block, sizeof(block), d), 0);
		m0 = crypto_mallocs;
		f0 = crypto_frees;
		for (int i = 0; i < 100; i++)
			assert_int_not_equal(verify_digest(a, block, sizeof(block), d), 0);
		assert_in_range(crypto_mallocs - m0, 0, 100);
		assert_int_equal(crypto_mallocs - m0, crypto_frees - f0);
	}
	m0 = crypto_mallocs;
	f0 = crypto_frees;
	assert_int_equal(pthread_create(&t, NULL, digest_once, block), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_ptr_equal(ret, block);
	assert_int_equal(crypto_mallocs - m0, crypto_frees - f0);
}

static void stamp_and_check(void **state)
{
	static uint8_t block[4096];
	struct llmio_error err = {0};

	(void)state;
	for (enum verify_algo a = VERIFY_CRC32C; a <= VERIFY_CRC64; a++) {
		for (size_t i = 0; i < sizeof(block); i++)
			block[i] = (uint8_t)(i * 7 + a);
		assert_int_equal(verify_stamp(a, block, sizeof(block), 8192, &err), 0);
		assert_int_equal(verify_check(a, block, sizeof(block), 8192, "f", &err), 0);
		/* one bit anywhere after the header: expected and found named */
		block[3000] ^= 1;
		assert_int_equal(verify_check(a, block, sizeof(block), 8192, "f", &err), -EILSEQ);
		assert_non_null(strstr(err.msg, "mismatch in f at offset 8192"));
		assert_non_null(strstr(err.msg, "expected "));
		assert_non_null(strstr(err.msg, "found "));
		block[3000] ^= 1;
		/* the right data in the wrong place */
		assert_int_equal(verify_check(a, block, sizeof(block), 4096, "f", &err), -EILSEQ);
		assert_non_null(strstr(err.msg, "found the block of offset 8192"));
		/* checked with another algorithm: the header says so */
		assert_int_equal(verify_check(a == VERIFY_MD5 ? VERIFY_SHA256 : VERIFY_MD5, block,
		                              sizeof(block), 8192, "f", &err),
		                 -EILSEQ);
		assert_non_null(strstr(err.msg, "block header"));
	}
}

/* fio's crc64 from its definition: the Jones polynomial reflected, from 0, not inverted */
static uint64_t crc64_bitwise(const uint8_t *p, size_t n)
{
	uint64_t c = 0;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x95ac9329ac4bc9b5ull : c >> 1;
	}
	return c;
}

static void crc64_as_fio(void **state)
{
	static uint8_t b[4099];
	uint8_t d[32];
	uint64_t c;

	(void)state;
	assert_int_equal(verify_digest(VERIFY_CRC64, "123456789", 9, d), 8);
	memcpy(&c, d, sizeof(c));
	assert_true(c == 0xe9c6d914c4b8d9caull);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 131 + 7);
	for (size_t n = 0; n <= sizeof(b); n += 97) {
		assert_int_equal(verify_digest(VERIFY_CRC64, b, n, d), 8);
		memcpy(&c, d, sizeof(c));
		assert_true(c == crc64_bitwise(b, n));
	}
}

/* meta (fio's): the header is checked, its offset first; the data is not */
static void meta_header_only(void **state)
{
	static uint8_t block[4096];
	struct llmio_error err = {0};

	(void)state;
	memset(block, 0x5a, sizeof(block));
	assert_int_equal(verify_stamp(VERIFY_META, block, sizeof(block), 8192, &err), 0);
	assert_int_equal(verify_check(VERIFY_META, block, sizeof(block), 8192, "f", &err), 0);
	block[3000] ^= 1;
	assert_int_equal(verify_check(VERIFY_META, block, sizeof(block), 8192, "f", &err), 0);
	assert_int_equal(verify_check(VERIFY_META, block, sizeof(block), 4096, "f", &err), -EILSEQ);
	assert_non_null(strstr(err.msg, "found the block of offset 8192"));
	block[0] ^= 1;
	assert_int_equal(verify_check(VERIFY_META, block, sizeof(block), 8192, "f", &err), -EILSEQ);
	assert_non_null(strstr(err.msg, "block header"));
}

/*
 * verify=meta is fio's layout: two headers fio 3.33 wrote (verify=meta, verify_pattern=0xaa555aa5,
 * verify_interval=512, bs=64k: the first interval of the first block, the second of the
 * second) pass llmio's check, header checksum included, and llmio's stamp writes the same
 * bytes but for fio's time (24-31) and the checksum over it (36-39).
 */
static void meta_is_fios(void **state)
{
	static const char *const fio_hdr[] = {
	        "caac01000002000000000000000000000000000000000000000000009114000801000000523e65e9",
	        "caac010000020000000000000000000000020100000000000000000069dd00080100010085a68fce",
	};
	static const uint64_t at[] = {0, 66048};
	static const uint8_t pat[] = {0xaa, 0x55, 0x5a, 0xa5};
	static uint8_t iv[512], mine[512], ref[512];
	struct llmio_error err = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(ref); i++)
		ref[i] = pat[i % sizeof(pat)];
	for (int h = 0; h < 2; h++) {
		memcpy(iv, ref, sizeof(iv));
		for (int i = 0; i < 40; i++)
			sscanf(fio_hdr[h] + 2 * i, "%2hhx", &iv[i]);
		assert_int_equal(verify_meta_check(iv, 512, at[h], 512, ref, "f", &err), 0);
		memcpy(mine, iv, sizeof(mine));
		verify_meta_stamp(mine, 512, at[h], 512, 1, (uint16_t)h);
		assert_int_equal(verify_meta_check(mine, 512, at[h], 512, ref, "f", &err), 0);
		memset(mine + 24, 0, 8);
		memset(mine + 36, 0, 4);
		memset(iv + 24, 0, 8);
		memset(iv + 36, 0, 4);
		assert_memory_equal(mine, iv, sizeof(iv));
	}
	verify_meta_stamp(mine, 512, 4096, 512, 1, 0);
	mine[300] ^= 1;
	assert_int_equal(verify_meta_check(mine, 512, 4096, 512, ref, "f", &err), -EILSEQ);
	assert_non_null(strstr(err.msg, "at offset 4396 (byte 300 of the 512-byte interval"));
	assert_non_null(strstr(err.msg, "expected 0xaa, found 0xab"));
	mine[300] ^= 1;
	mine[30] ^= 1; /* fio's time: covered by the header checksum */
	assert_int_equal(verify_meta_check(mine, 512, 4096, 512, ref, "f", &err), -EILSEQ);
	assert_non_null(strstr(err.msg, "checksum wrong"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(vectors),
	        cmocka_unit_test(crc32c_rfc3720),
	        cmocka_unit_test(crc32c_any_length),
	        cmocka_unit_test(digests_match_hashlib),
	        cmocka_unit_test(blocks_of_the_old_code),
	        cmocka_unit_test(context_reused),
	        cmocka_unit_test(stamp_and_check),
	        cmocka_unit_test(crc64_as_fio),
	        cmocka_unit_test(meta_header_only),
	        cmocka_unit_test(meta_is_fios),
	};

	/* before libcrypto allocates anything, or it keeps its own functions */
	if (!CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free)) {
		fprintf(stderr, "CRYPTO_set_mem_functions failed: libcrypto allocated already\n");
		return 1;
	}

	return cmocka_run_group_tests(tests, NULL, NULL);
}
