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
 * Strict switches: the real runtime's contracts where the defaults are kinder (each is on
 * with =1, all of them with LLMIO_FAKE_STRICT=1; see fake_cuda_strict):
 *   LLMIO_FAKE_ALIGN256      cudaHostAlloc and cudaMalloc return 256-byte aligned memory, the
 *                            only alignment CUDA documents (never page aligned)
 *   LLMIO_FAKE_EVENT_NOTREADY  cudaEventQuery says cudaErrorNotReady on every other call
 * cudaHostRegister is tracked: unregistering what was never registered is an error.
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
	void *base; /* what posix_memalign returned */
} devmem[4096];
static struct {
	const void *p;
	size_t len;
} pinned[1024];

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && v[0] ? (int)strtol(v, NULL, 10) : def;
}

int fake_cuda_strict(const char *name)
{
	return env_int("LLMIO_FAKE_STRICT", 0) == 1 || env_int(name, 0) == 1;
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

/* Page-aligned memory, or 256 bytes past a page under LLMIO_FAKE_ALIGN256. */
static void *fake_alloc(size_t len, void **base)
{
	size_t skew = fake_cuda_strict("LLMIO_FAKE_ALIGN256") ? 256 : 0;

	*base = NULL;
	if (posix_memalign(base, 4096, (len ? len : 1) + skew))
		return NULL;
	return (char *)*base + skew;
}

int cudaMalloc(void **p, size_t len)
{
	void *base;

	*p = fake_alloc(len, &base);
	if (!*p)
		return 2;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(devmem) / sizeof(devmem[0]); i++)
		if (!devmem[i].p) {
			devmem[i].p = *p;
			devmem[i].len = len;
			devmem[i].base = base;
			break;
		}
	pthread_mutex_unlock(&lock);
	/* device memory is not zeroed: make stale data visible */
	memset(*p, 0xa5, len);
	return 0;
}

int cudaFree(void *p)
{
	void *base = NULL;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(devmem) / sizeof(devmem[0]); i++)
		if (devmem[i].p == p) {
			devmem[i].p = NULL;
			base = devmem[i].base;
		}
	pthread_mutex_unlock(&lock);
	if (!base)
		return 1;
	free(base);
	return 0;
}

/* cudaHostAlloc'd blocks: the header before the pointer holds posix_memalign's pointer. */
int cudaHostAlloc(void **p, size_t len, unsigned flags)
{
	void *base;
	char *q;

	(void)flags;
	*p = NULL;
	if (posix_memalign(&base, 4096, (len ? len : 1) + 4096))
		return 2;
	q = (char *)base + (fake_cuda_strict("LLMIO_FAKE_ALIGN256") ? 256 : 4096);
	memcpy(q - sizeof(base), &base, sizeof(base));
	*p = q;
	return 0;
}

int cudaFreeHost(void *p)
{
	void *base;

	if (!p)
		return 0;
	memcpy(&base, (char *)p - sizeof(base), sizeof(base));
	free(base);
	return 0;
}

int cudaHostRegister(void *p, size_t len, unsigned flags)
{
	(void)flags;
	if (!p || !len || fake_cuda_is_device(p, len))
		return 1;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++)
		if (!pinned[i].p) {
			pinned[i].p = p;
			pinned[i].len = len;
			pthread_mutex_unlock(&lock);
			return 0;
		}
	pthread_mutex_unlock(&lock);
	return 2;
}

int cudaHostUnregister(void *p)
{
	int found = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]) && !found; i++)
		if (pinned[i].p == p) {
			pinned[i].p = NULL;
			found = 1;
		}
	pthread_mutex_unlock(&lock);
	return found ? 0 : 713; /* cudaErrorHostMemoryNotRegistered */
}

/* cudaDeviceScheduleAuto/Spin/Yield/BlockingSync (0, 1, 2, 4); anything else is refused. */
int cudaSetDeviceFlags(unsigned flags)
{
	return flags == 0 || flags == 1 || flags == 2 || flags == 4 ? 0 : 1;
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

/* An event: when it was recorded, and how many times it was queried. */
struct fake_event {
	struct timespec t;
	unsigned queries;
};

int cudaEventCreate(void **e)
{
	*e = calloc(1, sizeof(struct fake_event));
	return *e ? 0 : 2;
}

int cudaEventCreateWithFlags(void **e, unsigned flags)
{
	return flags > 7 ? 1 : cudaEventCreate(e);
}

int cudaEventRecord(void *e, void *s)
{
	struct fake_event *ev = e;

	(void)s;
	clock_gettime(CLOCK_MONOTONIC, &ev->t);
	ev->queries = 0;
	return 0;
}

/* Under LLMIO_FAKE_EVENT_NOTREADY the first query after a record says "not ready". */
int cudaEventQuery(void *e)
{
	struct fake_event *ev = e;

	if (fake_cuda_strict("LLMIO_FAKE_EVENT_NOTREADY") && ev->queries++ % 2 == 0)
		return 600; /* cudaErrorNotReady */
	return 0;
}

int cudaEventSynchronize(void *e)
{
	(void)e;
	return 0;
}

int cudaEventElapsedTime(float *ms, void *a, void *b)
{
	const struct timespec *t0 = &((struct fake_event *)a)->t,
	                      *t1 = &((struct fake_event *)b)->t;

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
