/* SPDX-License-Identifier: MIT */
#include "base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void llmio_error_init(struct llmio_error *e)
{
	if (!e)
		return;
	e->code = 0;
	e->msg[0] = '\0';
}

/* Mark a message that did not fit so a reader knows the end is missing. */
static void mark_cut(char *msg, int wanted)
{
	if (wanted >= LLMIO_ERROR_MSG_MAX)
		memcpy(msg + LLMIO_ERROR_MSG_MAX - 4, "...", 4);
}

int llmio_err(struct llmio_error *e, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!e)
		return code;
	e->code = code;
	va_start(ap, fmt);
	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		e->msg[0] = '\0';
	else
		mark_cut(e->msg, n);
	return code;
}

int llmio_err_prefix(struct llmio_error *e, const char *fmt, ...)
{
	char inner[LLMIO_ERROR_MSG_MAX];
	va_list ap;
	int n, m;

	if (!e)
		return -EIO;
	if (e->code == 0)
		e->code = -EIO;
	memcpy(inner, e->msg, sizeof(inner));
	va_start(ap, fmt);
	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (n < 0) {
		memcpy(e->msg, inner, sizeof(inner));
		return e->code;
	}
	if (n >= LLMIO_ERROR_MSG_MAX) {
		mark_cut(e->msg, n);
		return e->code;
	}
	m = snprintf(e->msg + n, sizeof(e->msg) - (size_t)n, "%s%s", inner[0] ? ": " : "", inner);
	if (m > 0)
		mark_cut(e->msg, n + m);
	return e->code;
}

const char *llmio_err_msg(const struct llmio_error *e)
{
	return e ? e->msg : "";
}
