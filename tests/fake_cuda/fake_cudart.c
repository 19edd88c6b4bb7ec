/* SPDX-License-Identifier: MIT */
/*
 * A fake libcudart for the tests: host memory stands in for GPU memory, so the loader and the
 * GPU engines' data paths run on machines without a GPU.  Built only under the build tree's
 * tests/fake_cuda (never installed, never on a search path); it also reports no device unless
 * LLMIO_FAKE_CUDA=1, so even a stray copy found by accident does nothing.
 *
 * Device memory is tracked, so that a copy in the wrong direction or cuFile I/O to host memory
 * is an error here as it would be on a GPU.  Streams execute synchronously; events record a
 * timestamp.  Knobs (environment):
 *   LLMIO_FAKE_CUDA=1                 report FAKE_NDEV devices (default 1)
 *   LLMIO_FAKE_CUDART_VERSION=N       what cudaRuntimeGetVersion says (default 12040)
 *   LLMIO_FAKE_DRIVER_VERSION=N       what cudaDriverGetVersion says (default 12040)
 * Built twice: the second time with FAKE_NO_MEMCPY_ASYNC, a library missing a symbol.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_cuda.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *p;
	size_t len;
} devmem[4096];

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && v[0] ? (int)strtol(v, NULL, 10) : def;
}

int fake_cuda_is_device(const void *p, size_t len)
{
	int found = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(devmem) / sizeof(devmem[0]) && !found; i++)
		if (devmem[i].p && (const char *)p >= devmem[i].p &&
		    (const char *)p + len <= devmem[i].p + devmem[i].len)
			found = 1;
	pthread_mutex_unlock(&lock);
	return found;
}

int llmio_fake_cuda_marker(void)
{
	return 1;
}

int cudaRuntimeGetVersion(int *v)
{
	*v = env_int("LLMIO_FAKE_CUDART_VERSION", 12040);
	return 0;
}

int cudaDriverGetVersion(int *v)
{
	*v = env_int("LLMIO_FAKE_DRIVER_VERSION", 12040);
	return 0;
}

int cudaGetDeviceCount(int *n)
{
	*n = env_int("LLMIO_FAKE_CUDA", 0) == 1 ? env_int("FAKE_NDEV", 1) : 0;
	return *n ? 0 : 100; /* cudaErrorNoDevice */
}

int cudaSetDevice(int d)
{
	int n;

	return cudaGetDeviceCount(&n) || d >= n ? 101 /* cudaErrorInvalidDevice */ : 0;
}

const char *cudaGetErrorString(int e)
{
	switch (e) {
	case 0:
		return "no error";
	case 100:
		return "no CUDA-capable device is detected (fake)";
	case 101:
		return "invalid device ordinal (fake)";
	case 1:
		return "invalid argument (fake)";
	case 2:
		return "out of memory (fake)";
	}
	return "unknown error (fake)";
}

int cudaMalloc(void **p, size_t len)
{
	*p = NULL;
	if (posix_memalign(p, 4096, len ? len : 1))
		return 2;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(devmem) / sizeof(devmem[0]); i++)
		if (!devmem[i].p) {
			devmem[i].p = *p;
			devmem[i].len = len;
			break;
		}
	pthread_mutex_unlock(&lock);
	/* device memory is not zeroed: make stale data visible */
	memset(*p, 0xa5, len);
	return 0;
}

int cudaFree(void *p)
{
	int found = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(devmem) / sizeof(devmem[0]); i++)
		if (devmem[i].p == p) {
			devmem[i].p = NULL;
			found = 1;
		}
	pthread_mutex_unlock(&lock);
	if (!found)
		return 1;
	free(p);
	return 0;
}

int cudaHostAlloc(void **p, size_t len, unsigned flags)
{
	(void)flags;
	return posix_memalign(p, 4096, len ? len : 1) ? 2 : 0;
}

int cudaFreeHost(void *p)
{
	free(p);
	return 0;
}

int cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
	if (kind == 1 && (!fake_cuda_is_device(dst, n) || fake_cuda_is_device(src, n)))
		return 1;
	if (kind == 2 && (fake_cuda_is_device(dst, n) || !fake_cuda_is_device(src, n)))
		return 1;
	memcpy(dst, src, n);
	return 0;
}

#ifndef FAKE_NO_MEMCPY_ASYNC
int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, void *stream)
{
	(void)stream;
	return cudaMemcpy(dst, src, n, kind);
}
#endif

int cudaStreamCreateWithFlags(void **s, unsigned flags)
{
	(void)flags;
	*s = malloc(1);
	return *s ? 0 : 2;
}

int cudaStreamDestroy(void *s)
{
	free(s);
	return 0;
}

int cudaStreamSynchronize(void *s)
{
	(void)s;
	return 0;
}

int cudaEventCreate(void **e)
{
	*e = calloc(1, sizeof(struct timespec));
	return *e ? 0 : 2;
}

int cudaEventRecord(void *e, void *s)
{
	(void)s;
	clock_gettime(CLOCK_MONOTONIC, e);
	return 0;
}

int cudaEventQuery(void *e)
{
	(void)e;
	return 0;
}

int cudaEventSynchronize(void *e)
{
	(void)e;
	return 0;
}

int cudaEventElapsedTime(float *ms, void *a, void *b)
{
	const struct timespec *t0 = a, *t1 = b;

	*ms = (float)((double)(t1->tv_sec - t0->tv_sec) * 1e3 +
	              (double)(t1->tv_nsec - t0->tv_nsec) / 1e6);
	return 0;
}

int cudaEventDestroy(void *e)
{
	free(e);
	return 0;
}

int cudaDeviceGetPCIBusId(char *bus, int len, int dev)
{
	if (len > 0)
		snprintf(bus, (size_t)len, "fake:00:00.%d", dev);
	return 0;
}
