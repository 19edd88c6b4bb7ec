/* SPDX-License-Identifier: MIT */
/*
 * spdk: SPDK's user-space NVMe driver, loaded at run time with dlopen (no build-time
 * dependency, like the GPU engines).
 *
 * The target is a namespace, named by an SPDK transport ID as SPDK's own fio plugin takes it:
 * --filename "trtype=PCIe traddr=0000:04:00.0 ns=1" (fio's form with '.' for ':' in the PCI
 * address is accepted too; ns defaults to 1).  Engine options hold only numbers, which is why
 * the transport ID is the target and not an option.  The controller is connected once per
 * process (spdk_env_init, spdk_nvme_connect) when the target is resolved, and left attached
 * until exit; each worker thread allocates its own I/O queue pair (qpairs are not
 * thread-safe), submits with spdk_nvme_ns_cmd_read/write from DMA buffers the engine allocates
 * (spdk_dma_zmalloc: buf_alloc), and reaps by polling spdk_nvme_qpair_process_completions: no
 * interrupts, no system calls, one core busy per thread.
 *
 * The declarations below follow SPDK's public headers (include/spdk/env.h, nvme.h,
 * nvme_spec.h); option structs are passed as NULL (SPDK's defaults) or as opaque zeroed
 * memory that SPDK's own *_opts_init fills, so no struct layout of SPDK's is assumed but the
 * 16-byte completion entry of the NVMe specification.  Written against that API and tested
 * with the stub tests/fake_spdk; not yet run on real SPDK.
 *
 * Library search: LLMIO_SPDK (one library that has every symbol, or libspdk_nvme.so with
 * LLMIO_SPDK_ENV naming the environment library), else libspdk_env_dpdk.so and
 * libspdk_nvme.so by soname, then /usr/local/lib (SPDK's `make install` prefix).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "engine/engine.h"

/* struct spdk_nvme_cpl (NVMe completion queue entry): the status field is at byte 14. */
struct spdk_cpl {
	uint32_t cdw0, cdw1;
	uint16_t sqhd, sqid, cid;
	uint16_t status; /* bit 0 phase, 1-8 status code, 9-11 status code type */
};

typedef void (*spdk_cmd_cb)(void *arg, const struct spdk_cpl *cpl);

struct spdk_api {
	void (*env_opts_init)(void *opts);
	int (*env_init)(const void *opts);
	int (*trid_parse)(void *trid, const char *str);
	void *(*connect)(const void *trid, const void *opts, size_t opts_size);
	int (*detach)(void *ctrlr);
	void *(*get_ns)(void *ctrlr, uint32_t nsid);
	bool (*ns_is_active)(void *ns);
	uint32_t (*sector_size)(void *ns);
	uint64_t (*num_sectors)(void *ns);
	void *(*alloc_qpair)(void *ctrlr, const void *opts, size_t opts_size);
	int (*free_qpair)(void *qpair);
	int (*cmd_read)(void *ns, void *qpair, void *buf, uint64_t lba, uint32_t nlb,
	                spdk_cmd_cb cb, void *arg, uint32_t flags);
	int (*cmd_write)(void *ns, void *qpair, void *buf, uint64_t lba, uint32_t nlb,
	                 spdk_cmd_cb cb, void *arg, uint32_t flags);
	int32_t (*process)(void *qpair, uint32_t max);
	void *(*dma_zmalloc)(size_t size, size_t align, uint64_t *phys);
	void (*dma_free)(void *buf);
	char path[PATH_MAX];
};

#define SYM(field, name)                                                                           \
	{                                                                                          \
		name, offsetof(struct spdk_api, field)                                             \
	}
static const struct {
	const char *name;
	size_t offset;
} spdk_syms[] = {
        SYM(env_opts_init, "spdk_env_opts_init"),
        SYM(env_init, "spdk_env_init"),
        SYM(trid_parse, "spdk_nvme_transport_id_parse"),
        SYM(connect, "spdk_nvme_connect"),
        SYM(detach, "spdk_nvme_detach"),
        SYM(get_ns, "spdk_nvme_ctrlr_get_ns"),
        SYM(ns_is_active, "spdk_nvme_ns_is_active"),
        SYM(sector_size, "spdk_nvme_ns_get_sector_size"),
        SYM(num_sectors, "spdk_nvme_ns_get_num_sectors"),
        SYM(alloc_qpair, "spdk_nvme_ctrlr_alloc_io_qpair"),
        SYM(free_qpair, "spdk_nvme_ctrlr_free_io_qpair"),
        SYM(cmd_read, "spdk_nvme_ns_cmd_read"),
        SYM(cmd_write, "spdk_nvme_ns_cmd_write"),
        SYM(process, "spdk_nvme_qpair_process_completions"),
        SYM(dma_zmalloc, "spdk_dma_zmalloc"),
        SYM(dma_free, "spdk_dma_free"),
};

#define INSTALL_HINT                                                                               \
	"build SPDK with ./configure --with-shared and make install, or set "                      \
	"LLMIO_SPDK=/path/to/libspdk_nvme.so (and LLMIO_SPDK_ENV=/path/to/libspdk_env_dpdk.so)"

static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static struct spdk_api api;
static const struct spdk_api *api_ok;
static char api_why[PATH_MAX + 256];

static void *open_lib(const char *file)
{
	void *h = dlopen(file, RTLD_NOW | RTLD_GLOBAL);
	char alt[PATH_MAX];

	if (h || strchr(file, '/'))
		return h;
	snprintf(alt, sizeof(alt), "/usr/local/lib/%s", file);
	return dlopen(alt, RTLD_NOW | RTLD_GLOBAL);
}

static void api_load(void)
{
	const char *over = getenv("LLMIO_SPDK"), *env_over = getenv("LLMIO_SPDK_ENV");
	void *h[2] = {NULL, NULL};

	/* the environment first: libspdk_nvme.so leaves its env symbols to whoever loaded one */
	if (env_over && env_over[0] && !(h[0] = open_lib(env_over))) {
		snprintf(api_why, sizeof(api_why), "LLMIO_SPDK_ENV=%s does not load: %s", env_over,
		         dlerror());
		return;
	}
	if (over && over[0]) {
		h[1] = open_lib(over);
		if (!h[1]) {
			snprintf(api_why, sizeof(api_why),
			         "LLMIO_SPDK=%s does not load: %s; fix the path or unset it", over,
			         dlerror());
			return;
		}
		snprintf(api.path, sizeof(api.path), "%s", over);
	} else {
		if (!h[0])
			h[0] = open_lib("libspdk_env_dpdk.so");
		h[1] = open_lib("libspdk_nvme.so");
		if (!h[1]) {
			snprintf(
			        api_why, sizeof(api_why),
			        "SPDK is not installed: libspdk_nvme.so not found (LLMIO_SPDK "
			        "unset, the dynamic linker's path, /usr/local/lib); " INSTALL_HINT);
			return;
		}
		snprintf(api.path, sizeof(api.path), "libspdk_nvme.so");
	}
	for (size_t i = 0; i < sizeof(spdk_syms) / sizeof(spdk_syms[0]); i++) {
		void *f = h[1] ? dlsym(h[1], spdk_syms[i].name) : NULL;

		if (!f && h[0])
			f = dlsym(h[0], spdk_syms[i].name);
		if (!f) {
			snprintf(api_why, sizeof(api_why),
			         "%s has no symbol %s (the environment library libspdk_env_dpdk.so "
			         "not loaded, or not SPDK); " INSTALL_HINT,
			         api.path, spdk_syms[i].name);
			return;
		}
		memcpy((char *)&api + spdk_syms[i].offset, &f, sizeof(f));
	}
	api_ok = &api;
}

static const struct spdk_api *spdk_api(struct llmio_error *e)
{
	pthread_once(&api_once, api_load);
	if (!api_ok)
		llmio_err(e, -ENODEV, "%s", api_why);
	return api_ok;
}

/* ---- the environment and controllers, once per process ---------------------------------- */

static pthread_mutex_t ctrl_lock = PTHREAD_MUTEX_INITIALIZER;
static int env_state; /* 0 not tried, 1 up, -errno failed */

/* A connected namespace: what every worker of a job with this target uses. */
struct spdk_target {
	char trid[256]; /* as resolved, ns= removed */
	uint32_t nsid;
	void *ctrlr, *ns;
	uint32_t lba;
	uint64_t bytes;
};

static struct spdk_target targets[16];
static unsigned ntargets;

static void detach_all(void)
{
	for (unsigned i = 0; i < ntargets; i++)
		api.detach(targets[i].ctrlr);
	ntargets = 0;
}

static int env_up(const struct spdk_api *a, struct llmio_error *e)
{
	/* opaque: spdk_env_opts_init fills SPDK's struct, whose first member is its name */
	union {
		const char *name;
		unsigned char bytes[4096];
	} opts;

	if (env_state)
		return env_state < 0 ? llmio_err(e, env_state,
		                                 "spdk_env_init failed before in this process")
		                     : 0;
	memset(&opts, 0, sizeof(opts));
	a->env_opts_init(&opts);
	opts.name = "llmio";
	env_state = a->env_init(&opts);
	if (env_state) {
		env_state = env_state < 0 ? env_state : -EIO;
		return llmio_err(
		        e, env_state,
		        "spdk_env_init failed (%s): SPDK needs hugepages and a device bound "
		        "to vfio-pci or uio_pci_generic: run SPDK's scripts/setup.sh as root",
		        strerror(-env_state));
	}
	env_state = 1;
	atexit(detach_all);
	return 0;
}

/*
 * "trtype=PCIe traddr=0000.04.00.0 ns=2": the transport ID without ns= (fio's '.' in a PCI
 * address turned back into ':') and the namespace id.
 */
static int parse_name(const char *name, char *trid, size_t len, uint32_t *nsid,
                      struct llmio_error *e)
{
	char buf[256], *save = NULL, *tok;
	size_t used = 0;

	*nsid = 1;
	if (strlen(name) >= sizeof(buf))
		return llmio_err(e, -EINVAL, "spdk: transport ID too long: %s", name);
	snprintf(buf, sizeof(buf), "%s", name);
	trid[0] = '\0';
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (!strncmp(tok, "ns=", 3)) {
			char *end;
			unsigned long v = strtoul(tok + 3, &end, 10);

			if (*end || !v || v > UINT32_MAX)
				return llmio_err(e, -EINVAL,
				                 "spdk: %s: ns= takes a namespace id (1, 2, ...)",
				                 tok);
			*nsid = (uint32_t)v;
			continue;
		}
		if (!strncasecmp(tok, "traddr=", 7) && strchr(tok, '.') && !strchr(tok, ':') &&
		    strspn(tok + 7, "0123456789abcdefABCDEF.") == strlen(tok + 7))
			for (char *c = tok + 7; *c; c++)
				if (*c == '.' && strchr(c + 1, '.'))
					*c = ':'; /* 0000.04.00.0 -> 0000:04:00.0 (the function
					             stays) */
		used += (size_t)snprintf(trid + used, len - used, "%s%s", used ? " " : "", tok);
	}
	if (!strstr(trid, "trtype="))
		return llmio_err(
		        e, -EINVAL,
		        "spdk: '%s' is not an SPDK transport ID: give --filename "
		        "\"trtype=PCIe traddr=0000:04:00.0 ns=1\" (or trtype=TCP adrfam=IPv4 "
		        "traddr=... trsvcid=4420 subnqn=...)",
		        name);
	return 0;
}

/* The connected namespace for a target name, connecting it the first time. */
static int target_get(const char *name, struct spdk_target **out, struct llmio_error *e)
{
	const struct spdk_api *a = spdk_api(e);
	union {
		void *align;
		unsigned char bytes[4096]; /* struct spdk_nvme_transport_id, opaque */
	} trid;
	struct spdk_target t = {0};
	int ret;

	if (!a)
		return -ENODEV;
	ret = parse_name(name, t.trid, sizeof(t.trid), &t.nsid, e);
	if (ret)
		return ret;
	pthread_mutex_lock(&ctrl_lock);
	for (unsigned i = 0; i < ntargets; i++)
		if (!strcmp(targets[i].trid, t.trid) && targets[i].nsid == t.nsid) {
			*out = &targets[i];
			goto unlock;
		}
	ret = env_up(a, e);
	if (ret)
		goto unlock;
	if (ntargets == sizeof(targets) / sizeof(targets[0])) {
		ret = llmio_err(e, -EMFILE, "spdk: more than %u namespaces in one process",
		                ntargets);
		goto unlock;
	}
	memset(&trid, 0, sizeof(trid));
	ret = a->trid_parse(&trid, t.trid);
	if (ret) {
		ret = llmio_err(
		        e, -EINVAL,
		        "spdk_nvme_transport_id_parse(\"%s\") refused it (%s): check trtype, "
		        "traddr, adrfam, trsvcid, subnqn",
		        t.trid, strerror(ret < 0 ? -ret : EINVAL));
		goto unlock;
	}
	t.ctrlr = a->connect(&trid, NULL, 0);
	if (!t.ctrlr) {
		ret = llmio_err(
		        e, -ENODEV,
		        "spdk_nvme_connect(\"%s\") found no controller: for PCIe, is the "
		        "device bound to vfio-pci or uio_pci_generic (SPDK's scripts/setup.sh) "
		        "and the address right? for NVMe-oF, is the target listening?",
		        t.trid);
		goto unlock;
	}
	t.ns = a->get_ns(t.ctrlr, t.nsid);
	if (!t.ns || !a->ns_is_active(t.ns)) {
		a->detach(t.ctrlr);
		ret = llmio_err(e, -ENOENT, "spdk: \"%s\" has no active namespace %u (ns=)", t.trid,
		                t.nsid);
		goto unlock;
	}
	t.lba = a->sector_size(t.ns);
	t.bytes = (uint64_t)t.lba * a->num_sectors(t.ns);
	targets[ntargets] = t;
	*out = &targets[ntargets++];
unlock:
	pthread_mutex_unlock(&ctrl_lock);
	return ret;
}

/* ---- the engine -------------------------------------------------------------------------- */

struct spdk_eng {
	const struct spdk_api *a;
	struct spdk_target *t;
	void *qpair;
	uint64_t size; /* the job's size of the namespace (<= t->bytes) */
	unsigned depth;
	struct io_req **ready; /* completed, not yet reaped */
	unsigned nready, inflight;
	/* refused by a full qpair (-ENOMEM): submitted again by reap, in order */
	struct io_req **backlog;
	unsigned nbacklog;
	char first_err[160];
};

static int spdk_probe(char *why, size_t len)
{
	struct llmio_error e = {0};
	const struct spdk_api *a = spdk_api(&e);
	char bound[192] = "";
	size_t used = 0;
	DIR *d;

	if (!a) {
		snprintf(why, len, "%s", e.msg);
		return -ENODEV;
	}
	/* PCIe functions SPDK can take: bound to a user-space driver (NVMe-oF needs none) */
	for (int k = 0; k < 2; k++) {
		static const char *const drivers[] = {"/sys/bus/pci/drivers/vfio-pci",
		                                      "/sys/bus/pci/drivers/uio_pci_generic"};
		struct dirent *de;

		d = opendir(drivers[k]);
		while (d && (de = readdir(d)))
			if (strchr(de->d_name, ':') && used < sizeof(bound))
				used += (size_t)snprintf(bound + used, sizeof(bound) - used, "%s%s",
				                         used ? ", " : "", de->d_name);
		if (d)
			closedir(d);
	}
	if (used)
		snprintf(why, len, "%s; PCI functions bound for user space: %s", a->path, bound);
	else
		snprintf(why, len,
		         "%s; no PCI function is bound to vfio-pci or uio_pci_generic, so a "
		         "trtype=PCIe target will not connect (SPDK's scripts/setup.sh binds one); "
		         "NVMe-oF targets (trtype=TCP, RDMA) need none",
		         a->path);
	return 0;
}

static int spdk_target_resolve(const void *opts, const struct engine_target_req *rq,
                               struct engine_target *et, struct llmio_error *e)
{
	struct spdk_target *t;
	int ret;

	(void)opts;
	if (rq->directory || rq->files)
		return llmio_err(e, -EINVAL,
		                 "spdk does I/O to one namespace: give --filename \"trtype=PCIe "
		                 "traddr=0000:04:00.0 ns=1\", not a directory or a file list");
	if (rq->writes && !rq->allow_destructive)
		return llmio_err(e, -EPERM,
		                 "spdk: writing to %s destroys what the namespace holds; add "
		                 "--allow_destructive=1 if that is intended",
		                 rq->name);
	ret = target_get(rq->name, &t, e);
	if (ret)
		return ret;
	if (rq->size > t->bytes)
		return llmio_err(
		        e, -EINVAL, "spdk: size %llu is larger than namespace %u (%llu bytes)",
		        (unsigned long long)rq->size, t->nsid, (unsigned long long)t->bytes);
	et->names = calloc(1, sizeof(*et->names));
	et->sizes = calloc(1, sizeof(*et->sizes));
	if (et->names)
		et->names[0] = strdup(rq->name);
	if (!et->names || !et->sizes || !et->names[0]) {
		if (et->names)
			free(et->names[0]);
		free(et->names);
		free(et->sizes);
		*et = (struct engine_target){0};
		return llmio_err(e, -ENOMEM, "out of memory resolving %s", rq->name);
	}
	et->sizes[0] = rq->size ? rq->size : t->bytes;
	et->n = 1;
	return 0;
}

static int spdk_buf_alloc(const void *opts, void **buf, size_t len, const void *init,
                          struct llmio_error *e)
{
	const struct spdk_api *a = spdk_api(e);

	(void)opts;
	*buf = NULL;
	if (!a)
		return -ENODEV;
	/* 4 KiB-aligned: any LBA size's, and one PRP entry per page */
	*buf = a->dma_zmalloc(len ? len : 1, 4096, NULL);
	if (!*buf)
		return llmio_err(
		        e, -ENOMEM,
		        "spdk_dma_zmalloc(%zu) failed: SPDK's hugepage memory is exhausted; "
		        "lower bs or iodepth, or give SPDK more hugepages (scripts/setup.sh "
		        "HUGEMEM=)",
		        len);
	if (init)
		memcpy(*buf, init, len);
	return 0;
}

static void spdk_buf_free(const void *opts, void *buf)
{
	(void)opts;
	if (buf && api_ok)
		api_ok->dma_free(buf);
}

static void spdk_free(struct spdk_eng *p)
{
	if (p->qpair)
		p->a->free_qpair(p->qpair);
	free(p->ready);
	free(p->backlog);
	free(p);
}

static int spdk_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	struct spdk_eng *p;
	int ret;

	ctx->priv = NULL;
	ctx->notes[0] = '\0';
	if (s->nfiles != 1 || !s->names)
		return llmio_err(e, -EINVAL, "spdk does I/O to one namespace (got %u targets)",
		                 s->nfiles);
	p = calloc(1, sizeof(*p));
	if (!p)
		return llmio_err(e, -ENOMEM, "spdk: out of memory for the engine state");
	p->depth = s->iodepth ? s->iodepth : 1;
	p->a = spdk_api(e);
	ret = p->a ? target_get(s->names[0], &p->t, e) : -ENODEV;
	if (ret)
		goto fail;
	p->size = s->file_sizes[0];
	ret = -ENOMEM;
	p->ready = calloc(p->depth, sizeof(*p->ready));
	p->backlog = calloc(p->depth, sizeof(*p->backlog));
	if (!p->ready || !p->backlog)
		goto fail;
	/* the controller's default queue size; a busy queue is the worker's ENGINE_Q_BUSY */
	p->qpair = p->a->alloc_qpair(p->t->ctrlr, NULL, 0);
	if (!p->qpair) {
		ret = llmio_err(e, -ENOMEM,
		                "spdk_nvme_ctrlr_alloc_io_qpair failed for %s: the controller has "
		                "no I/O queue left (fewer threads: numjobs)",
		                s->names[0]);
		goto fail;
	}
	engine_appendf(ctx->notes, sizeof(ctx->notes),
	               "SPDK %s; namespace %u of \"%s\": %u-byte LBAs, %llu bytes (%llu used); one "
	               "I/O qpair per thread, completions polled (a core busy per thread)",
	               p->a->path, p->t->nsid, p->t->trid, p->t->lba,
	               (unsigned long long)p->t->bytes, (unsigned long long)p->size);
	ctx->priv = p;
	return 0;

fail:
	spdk_free(p);
	return ret;
}

/* The completion callback, run inside spdk_nvme_qpair_process_completions on this thread. */
static void spdk_done(void *arg, const struct spdk_cpl *cpl)
{
	struct io_req *io = arg;
	struct spdk_eng *p = (struct spdk_eng *)(uintptr_t)io->priv;
	unsigned sc = (cpl->status >> 1) & 0xff, sct = (cpl->status >> 9) & 0x7;

	if (sc || sct) {
		io->res = -EIO;
		if (!p->first_err[0])
			snprintf(p->first_err, sizeof(p->first_err),
			         "NVMe status type %u code 0x%02x at offset %llu", sct, sc,
			         (unsigned long long)io->off);
	}
	p->ready[p->nready++] = io;
	p->inflight--;
}

/*
 * Submit io (its res holds the bytes to move); 0, -ENOMEM when the qpair is full, or another
 * -errno, with which the I/O has failed (it is then among the completed).
 */
static int submit(struct spdk_eng *p, struct io_req *io)
{
	const uint32_t lba = p->t->lba;
	int ret = (io->op == ENGINE_OP_READ ? p->a->cmd_read : p->a->cmd_write)(
	        p->t->ns, p->qpair, io->buf, io->off / lba, (uint32_t)((uint64_t)io->res / lba),
	        spdk_done, io, 0);

	if (ret && ret != -ENOMEM) {
		io->res = ret < 0 ? ret : -EIO;
		p->ready[p->nready++] = io;
		p->inflight--;
	}
	return ret;
}

/*
 * A full qpair is not ENGINE_Q_BUSY: the I/O waits in the backlog, and reap submits it once
 * completions made room, so the qpair refills without a round trip through the worker.
 */
static int spdk_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct spdk_eng *p = ctx->priv;
	const uint32_t lba = p->t->lba;
	uint64_t n;

	if (io->file != 0) {
		io->res = -EBADF;
		return ENGINE_Q_COMPLETED;
	}
	if (io->off % lba || io->len % lba) {
		io->res = -EINVAL; /* the device addresses whole LBAs */
		return ENGINE_Q_COMPLETED;
	}
	if (io->off >= p->size) {
		io->res = 0; /* past the end, as pread says */
		return ENGINE_Q_COMPLETED;
	}
	n = p->size - io->off < io->len ? p->size - io->off : io->len;
	n -= n % lba;
	if (!n) {
		io->res = 0;
		return ENGINE_Q_COMPLETED;
	}
	io->priv = (uint64_t)(uintptr_t)p;
	io->res = (int64_t)n; /* unless the completion says otherwise */
	p->inflight++;
	if (p->nbacklog || submit(p, io) == -ENOMEM)
		p->backlog[p->nbacklog++] = io; /* keeps its place in line */
	return ENGINE_Q_QUEUED;
}

static int spdk_commit(struct engine_ctx *ctx)
{
	(void)ctx;
	return 0; /* spdk_nvme_ns_cmd_* rang the doorbell already */
}

static int spdk_reap(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max)
{
	struct spdk_eng *p = ctx->priv;
	unsigned n = 0;

	if (min > p->inflight + p->nready)
		min = p->inflight + p->nready;
	if (min > max)
		min = max;
	do {
		int32_t r = p->a->process(p->qpair, 0);
		unsigned k = 0;

		if (r < 0)
			return r; /* the qpair failed (controller removed or reset) */
		while (k < p->nbacklog && submit(p, p->backlog[k]) != -ENOMEM)
			k++;
		p->nbacklog -= k;
		memmove(p->backlog, p->backlog + k, p->nbacklog * sizeof(*p->backlog));
	} while (p->nready < min);
	while (n < max && n < p->nready)
		evs[n] = p->ready[n], n++;
	p->nready -= n;
	memmove(p->ready, p->ready + n, p->nready * sizeof(*p->ready));
	return (int)n;
}

static void spdk_cleanup(struct engine_ctx *ctx)
{
	struct spdk_eng *p = ctx->priv;

	if (!p)
		return;
	/* completions still owed land in buffers about to be freed: take them first */
	p->inflight -= p->nbacklog; /* never submitted */
	p->nbacklog = 0;
	while (p->inflight && p->a->process(p->qpair, 0) >= 0)
		p->nready = 0;
	if (p->first_err[0])
		engine_appendf(ctx->notes, sizeof(ctx->notes), "; first failed I/O: %s",
		               p->first_err);
	spdk_free(p);
	ctx->priv = NULL;
}

/* fio's SPDK plugin (ioengine=spdk) takes the same transport ID as its filename. */
const struct engine_ops engine_spdk = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "spdk",
        .summary = "SPDK's user-space NVMe driver (dlopen'd): a qpair per thread, DMA buffers, "
                   "polled completions; target = an SPDK transport ID",
        .caps = ENGINE_CAP_ASYNC | ENGINE_CAP_POLLED | ENGINE_CAP_OWN_TARGET |
                ENGINE_CAP_HOST_BUFS | ENGINE_CAP_NAMESPACE,
        .probe = spdk_probe,
        .init = spdk_init,
        .queue = spdk_queue,
        .commit = spdk_commit,
        .reap = spdk_reap,
        .cleanup = spdk_cleanup,
        .buf_alloc = spdk_buf_alloc,
        .buf_free = spdk_buf_free,
        .target_resolve = spdk_target_resolve,
};
