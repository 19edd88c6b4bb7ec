/* SPDX-License-Identifier: MIT */
/* Shared by the fake libcudart and libcufile (tests only). */
#ifndef LLMIO_FAKE_CUDA_H
#define LLMIO_FAKE_CUDA_H

#include <stddef.h>

/* Is [p, p+len) inside memory from the fake cudaMalloc? */
int fake_cuda_is_device(const void *p, size_t len);

/* Is the strict switch `name` (or LLMIO_FAKE_STRICT, all of them) set to 1? */
int fake_cuda_strict(const char *name);

#endif
