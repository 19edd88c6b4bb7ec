/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer harnesses (docs/fuzzing.md).  Each harness feeds one parser the
 * fuzzer's bytes the way llmio's own callers do: as a string, or, for parsers that only take a
 * path, as an anonymous in-memory file (memfd) named by /proc/self/fd/N.  A harness must not
 * leak, print or exit: a bad input is the parser's to refuse with an error.
 */
#ifndef LLMIO_FUZZ_COMMON_H
#define LLMIO_FUZZ_COMMON_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* data as a NUL-terminated string (malloc'd; an embedded NUL ends it early, as in a C caller). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * data as a file: a memfd holding exactly data, its name /proc/self/fd/N in path.  Returns the
 * descriptor, for fuzz_file_close().  An unexpected failure aborts (a harness bug, not a finding
 * in the parser, but loud).
 */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("llmio-fuzz", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		abort();
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

static inline void fuzz_file_close(int fd)
{
	close(fd);
}

#endif
