/* SPDX-License-Identifier: MIT */
/*
 * fio's buffer_pattern and verify_pattern (docs/fio.md): the bytes every write carries, repeated
 * from the start of each I/O's buffer.  The text is fio's: hex numbers (0x..., the bytes in the
 * order written, an odd digit alone first), decimals (the int's bytes, least significant first, 0 a
 * single zero byte) and quoted strings, one after the other.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "job/pattern.h"

static int hex_digit(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

int pattern_parse(const char *name, const char *text, uint8_t *out, size_t cap, size_t *len,
                  struct llmio_error *e)
{
	const char *p = text;
	size_t n = 0;

	while (*p) {
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
			size_t digits = strspn(p + 2, "0123456789abcdefABCDEF");

			p += 2;
			if (digits % 2) {
				if (n == cap)
					goto too_long;
				out[n++] = (uint8_t)hex_digit(*p++);
				digits--;
			}
			for (; digits; digits -= 2, p += 2) {
				if (n == cap)
					goto too_long;
				out[n++] = (uint8_t)(hex_digit(p[0]) << 4 | hex_digit(p[1]));
			}
		} else if (*p == '"') {
			const char *end = strchr(p + 1, '"');

			if (!end)
				return llmio_err(e, -EINVAL,
				                 "%s=%s: a string without its closing quote", name,
				                 text);
			if ((size_t)(end - p - 1) > cap - n)
				goto too_long;
			memcpy(out + n, p + 1, (size_t)(end - p - 1));
			n += (size_t)(end - p - 1);
			p = end + 1;
		} else if (isdigit((unsigned char)*p) || *p == '-') {
			char *end;
			long v;
			unsigned u;

			errno = 0;
			v = strtol(p, &end, 10);
			if (end == p || errno || v > INT_MAX || v < INT_MIN)
				break;
			/* fio's: a decimal stops where a hex number starts (10x0f: 1, then 0x0f) */
			if (end > p + 1 && (*end == 'x' || *end == 'X') && end[-1] == '0') {
				end--;
				v /= 10;
			}
			u = (unsigned)v;
			do {
				if (n == cap)
					goto too_long;
				out[n++] = (uint8_t)u;
				u >>= 8;
			} while (u);
			p = end;
		} else {
			break;
		}
	}
	if (*p || !n)
		return llmio_err(e, -EINVAL,
		                 "%s=%s: not fio's pattern at '%s': hex numbers (0x...), "
		                 "decimals and quoted strings (%%o, the offset, is not done)",
		                 name, text, p);
	*len = n;
	return 0;
too_long:
	return llmio_err(e, -EINVAL, "%s=%s: longer than %zu bytes", name, text, cap);
}

void pattern_fill(void *buf, size_t len, const uint8_t *pat, size_t n)
{
	uint8_t *p = buf;
	size_t done = n < len ? n : len;

	memcpy(p, pat, done);
	/* doubling copies: log2(len / n) memcpy calls, not one per repetition */
	while (done < len) {
		size_t k = done < len - done ? done : len - done;

		memcpy(p + done, p, k);
		done += k;
	}
}
