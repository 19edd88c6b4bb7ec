/* SPDX-License-Identifier: MIT */
/*
 * write_file(name, text): a file `name` holding `text` in the test's scratch directory; its
 * path (a static buffer, valid until the next call).  The including file defines
 * `static char dir[4096]` (the scratch directory) and includes cmocka.h first.
 */
#ifndef LLMIO_TESTS_WRITE_FILE_H
#define LLMIO_TESTS_WRITE_FILE_H

#include <stdio.h>

static const char *write_file(const char *name, const char *text)
{
	static char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

#endif
