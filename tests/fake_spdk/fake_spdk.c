/* SPDX-License-Identifier: MIT */
/*
 * A fake SPDK for the tests: the environment and NVMe driver calls the spdk engine uses, in one
 * library, with one controller whose namespace 1 is backed by memory, or by a file.  I/O is
 * done when its completion is polled (spdk_nvme_qpair_process_completions), not when it is
 * submitted, as a real device's would be.  Like SPDK it refuses a buffer that
 * spdk_dma_zmalloc did not return, and a queue pair takes a bounded number of commands
 * (-ENOMEM beyond).
 * Knobs:
 *   LLMIO_FAKE_SPDK_NS=PATH   back namespace 1 with this file (its size, in whole LBAs)
 *                             instead of 4 MiB of memory
 *   LLMIO_FAKE_SPDK_LBA=N     the LBA size (default 512)
 *   LLMIO_FAKE_SPDK_QUEUE=N   commands a queue pair holds (default 16)
 *   LLMIO_FAKE_SPDK_ENV_FAIL=1  spdk_env_init fails (-ENOMEM), as without hugepages
 * A traddr holding "ffff" has no controller (spdk_nvme_connect returns NULL).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cpl {
	uint32_t cdw0, cdw1;
	uint16_t sqhd, sqid, cid, status;
};
typedef void (*cmd_cb)(void *arg, const struct cpl *cpl);

struct cmd {
	bool write;
	void *buf;
	uint64_t lba;
	uint32_t nlb;
	cmd_cb cb;
	void *arg;
};

struct qpair {
	struct cmd *q;
	unsigned n, cap;
};

static struct {
	int fd; /* -1: memory */
	unsigned char *mem;
	uint32_t lba;
	uint64_t nlba;
	bool attached;
} ns = {.fd = -1};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *dma[4096];
static bool env_up;

static unsigned long knob(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

void spdk_env_opts_init(void *opts)
{
	memset(opts, 0, 64);
}

int spdk_env_init(const void *opts)
{
	(void)opts;
	if (knob("LLMIO_FAKE_SPDK_ENV_FAIL", 0))
		return -ENOMEM;
	env_up = true;
	return 0;
}

int spdk_nvme_transport_id_parse(void *trid, const char *str)
{
	if (!strstr(str, "trtype="))
		return -EINVAL;
	snprintf(trid, 1024, "%s", str);
	return 0;
}

void *spdk_nvme_connect(const void *trid, const void *opts, size_t opts_size)
{
	const char *path = getenv("LLMIO_FAKE_SPDK_NS");
	struct stat st;

	(void)opts, (void)opts_size;
	if (!env_up || strstr(trid, "ffff") || !strstr(trid, "traddr="))
		return NULL;
	ns.lba = (uint32_t)knob("LLMIO_FAKE_SPDK_LBA", 512);
	if (path && *path) {
		ns.fd = open(path, O_RDWR);
		if (ns.fd < 0 || fstat(ns.fd, &st))
			return NULL;
		ns.nlba = (uint64_t)st.st_size / ns.lba;
	} else {
		ns.nlba = (4u << 20) / ns.lba;
		ns.mem = calloc(ns.nlba, ns.lba);
		if (!ns.mem)
			return NULL;
	}
	ns.attached = true;
	return &ns;
}

int spdk_nvme_detach(void *ctrlr)
{
	(void)ctrlr;
	if (ns.fd >= 0)
		close(ns.fd);
	free(ns.mem);
	ns.fd = -1;
	ns.mem = NULL;
	ns.attached = false;
	return 0;
}

void *spdk_nvme_ctrlr_get_ns(void *ctrlr, uint32_t nsid)
{
	return ctrlr == &ns && nsid == 1 ? &ns : NULL;
}

bool spdk_nvme_ns_is_active(void *n)
{
	return n == &ns && ns.attached;
}

uint32_t spdk_nvme_ns_get_sector_size(void *n)
{
	(void)n;
	return ns.lba;
}

uint64_t spdk_nvme_ns_get_num_sectors(void *n)
{
	(void)n;
	return ns.nlba;
}

void *spdk_nvme_ctrlr_alloc_io_qpair(void *ctrlr, const void *opts, size_t opts_size)
{
	struct qpair *q = calloc(1, sizeof(*q));

	(void)ctrlr, (void)opts, (void)opts_size;
	if (!q)
		return NULL;
	q->cap = (unsigned)knob("LLMIO_FAKE_SPDK_QUEUE", 16);
	q->q = calloc(q->cap, sizeof(*q->q));
	if (!q->q) {
		free(q);
		return NULL;
	}
	return q;
}

int spdk_nvme_ctrlr_free_io_qpair(void *qp)
{
	struct qpair *q = qp;

	if (q->n)
		fprintf(stderr, "fake spdk: qpair freed with %u commands outstanding\n", q->n);
	free(q->q);
	free(q);
	return 0;
}

static bool is_dma(const void *buf)
{
	bool ok = false;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(dma) / sizeof(dma[0]) && !ok; i++)
		ok = dma[i] == buf;
	pthread_mutex_unlock(&lock);
	return ok;
}

static int submit(void *n, void *qp, void *buf, uint64_t lba, uint32_t nlb, cmd_cb cb, void *arg,
                  bool write)
{
	struct qpair *q = qp;

	if (n != &ns || !nlb || !is_dma(buf))
		return -EINVAL;
	if (q->n == q->cap)
		return -ENOMEM;
	q->q[q->n++] = (struct cmd){write, buf, lba, nlb, cb, arg};
	return 0;
}

int spdk_nvme_ns_cmd_read(void *n, void *qp, void *buf, uint64_t lba, uint32_t nlb, cmd_cb cb,
                          void *arg, uint32_t flags)
{
	(void)flags;
	return submit(n, qp, buf, lba, nlb, cb, arg, false);
}

int spdk_nvme_ns_cmd_write(void *n, void *qp, void *buf, uint64_t lba, uint32_t nlb, cmd_cb cb,
                           void *arg, uint32_t flags)
{
	(void)flags;
	return submit(n, qp, buf, lba, nlb, cb, arg, true);
}

/* Run one command; its NVMe status (0, or LBA out of range: type 0 code 0x80). */
static uint16_t run(const struct cmd *c)
{
	size_t len = (size_t)c->nlb * ns.lba;
	off_t off = (off_t)(c->lba * ns.lba);
	ssize_t r;

	if (c->lba + c->nlb > ns.nlba)
		return 0x80 << 1;
	if (ns.fd < 0) {
		if (c->write)
			memcpy(ns.mem + off, c->buf, len);
		else
			memcpy(c->buf, ns.mem + off, len);
		return 0;
	}
	r = c->write ? pwrite(ns.fd, c->buf, len, off) : pread(ns.fd, c->buf, len, off);
	return r == (ssize_t)len ? 0 : (0x06 << 1); /* internal error */
}

int32_t spdk_nvme_qpair_process_completions(void *qp, uint32_t max)
{
	struct qpair *q = qp;
	unsigned n = max && max < q->n ? max : q->n;

	for (unsigned i = 0; i < n; i++) {
		struct cpl c = {.status = run(&q->q[i])};

		q->q[i].cb(q->q[i].arg, &c);
	}
	q->n -= n;
	memmove(q->q, q->q + n, q->n * sizeof(*q->q));
	return (int32_t)n;
}

void *spdk_dma_zmalloc(size_t size, size_t align, uint64_t *phys)
{
	void *p = NULL;

	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size))
		return NULL;
	memset(p, 0, size);
	if (phys)
		*phys = (uint64_t)(uintptr_t)p;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(dma) / sizeof(dma[0]); i++)
		if (!dma[i]) {
			dma[i] = p;
			break;
		}
	pthread_mutex_unlock(&lock);
	return p;
}

void spdk_dma_free(void *buf)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < sizeof(dma) / sizeof(dma[0]); i++)
		if (dma[i] == buf)
			dma[i] = NULL;
	pthread_mutex_unlock(&lock);
	free(buf);
}
