/* SPDX-License-Identifier: MIT */
/* The error carrier: set, prefix, cut, NULL carriers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/error.h"

static void set_and_prefix(void **state)
{
	struct llmio_error e;

	(void)state;
	llmio_error_init(&e);
	assert_int_equal(e.code, 0);
	assert_string_equal(llmio_err_msg(&e), "");
	assert_int_equal(llmio_err(&e, -ENOENT, "%s: no such file", "/x"), -ENOENT);
	assert_int_equal(e.code, -ENOENT);
	assert_string_equal(e.msg, "/x: no such file");
	assert_int_equal(llmio_err_prefix(&e, "job %d", 3), -ENOENT);
	assert_string_equal(e.msg, "job 3: /x: no such file");
}

static void null_and_empty(void **state)
{
	struct llmio_error e;

	(void)state;
	assert_int_equal(llmio_err(NULL, -EINVAL, "ignored"), -EINVAL);
	assert_int_equal(llmio_err_prefix(NULL, "ctx"), -EIO);
	assert_string_equal(llmio_err_msg(NULL), "");
	/* A callee that failed without a message still yields a code and the context. */
	llmio_error_init(&e);
	assert_int_equal(llmio_err_prefix(&e, "reading %s", "f"), -EIO);
	assert_string_equal(e.msg, "reading f");
}

static void long_messages_are_cut_visibly(void **state)
{
	static char big[3 * LLMIO_ERROR_MSG_MAX];
	struct llmio_error e;
	size_t len;

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	llmio_err(&e, -E2BIG, "%s", big);
	len = strlen(e.msg);
	assert_int_equal(len, LLMIO_ERROR_MSG_MAX - 1);
	assert_string_equal(e.msg + len - 3, "...");
	/* The prefix goes first even when the whole no longer fits. */
	llmio_err(&e, -E2BIG, "%s", big + sizeof(big) - 100);
	llmio_err_prefix(&e, "%s", big + 10);
	len = strlen(e.msg);
	assert_int_equal(len, LLMIO_ERROR_MSG_MAX - 1);
	assert_int_equal(e.msg[0], 'a');
	assert_string_equal(e.msg + len - 3, "...");
	/* A message that overflows only once the prefix is added is cut, never overrun. */
	llmio_err(&e, -E2BIG, "%.*s", LLMIO_ERROR_MSG_MAX - 3, big);
	llmio_err_prefix(&e, "ctx");
	assert_int_equal(strlen(e.msg), LLMIO_ERROR_MSG_MAX - 1);
	assert_memory_equal(e.msg, "ctx: ", 5);
	assert_string_equal(e.msg + LLMIO_ERROR_MSG_MAX - 4, "...");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(set_and_prefix),
	        cmocka_unit_test(null_and_empty),
	        cmocka_unit_test(long_messages_are_cut_visibly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
