/* SPDX-License-Identifier: MIT */
/*
 * Size, duration and integer strings (src/base/parse.c): what every --bs=, --size=, runtime=
 * and job-file value goes through.  Besides "no crash", two properties are checked: a whole
 * number that llmio_parse_uint accepts means the same bytes to llmio_parse_size, and a parsed
 * size can always be formatted.
 */
#include "fuzz_common.h"

#include "llmio/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size), buf[64];
	uint64_t n = 0, bytes = 0, ns = 0;
	int ru, rs;

	ru = llmio_parse_uint(text, 0, UINT64_MAX, &n);
	rs = llmio_parse_size(text, &bytes);
	llmio_parse_duration(text, &ns);
	llmio_parse_uint(text, 1, 4096, &n);
	/* below 2^53 a double holds every integer: both parsers must agree */
	if (ru == 0 && n < (1ull << 53) && (rs != 0 || bytes != n))
		abort();
	if (rs == 0 && !llmio_format_bytes(bytes, buf, sizeof(buf))[0])
		abort();
	free(text);
	return 0;
}
