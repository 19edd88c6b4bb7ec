/* SPDX-License-Identifier: MIT */
/* verify=: the digests against their published vectors; a stamped block checks, a changed byte
 * or a misplaced block does not, and the message names file, offset, expected and found. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

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

static void stamp_and_check(void **state)
{
	static uint8_t block[4096];
	struct llmio_error err = {0};

	(void)state;
	for (enum verify_algo a = VERIFY_CRC32C; a <= VERIFY_SHA256; a++) {
		for (size_t i = 0; i < sizeof(block); i++)
			block[i] = (uint8_t)(i * 7 + a);
		verify_stamp(a, block, sizeof(block), 8192);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(vectors),
	        cmocka_unit_test(stamp_and_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
