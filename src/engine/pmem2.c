/* SPDX-License-Identifier: MIT */
/*
 * pmem2: persistent memory through libpmem2 (PMDK), on a file (of a DAX filesystem, or any
 * file) or a device-DAX character device (/dev/daxX.Y).
 *
 * Each file is mapped once per worker with pmem2_map_new(); a write is the memcpy function
 * libpmem2 returns for the mapping (pmem2_get_memcpy_fn), which also makes the bytes durable by
 * the mechanism the mapping allows, and a read is a memcpy from the mapping.  What that
 * mechanism is depends on the store granularity libpmem2 found, which every result says:
 *   byte        the platform keeps CPU caches persistent (eADR): stores need only a fence;
 *   cache line  real persistent memory (DAX): CPU cache lines are flushed (CLWB/CLFLUSHOPT);
 *   page        anything else (a file in the page cache): msync() of the pages written.
 * persist=sync defers it: writes copy without flushing (PMEM2_F_MEM_NOFLUSH) and the job's
 * fsync runs the persist function over the whole mapping.
 *
 * Like mmap, this is synchronous, cannot use O_DIRECT, and accesses are clamped to the size
 * the file had when it was mapped.  A mapping is whole units of the source's alignment, so
 * the tail of a file of another size goes through pread/pwrite (fdatasync to persist it).  Unlike
 * mmap, a file truncated under a running job is not guarded: the copy then raises SIGBUS.
 */
#include <errno.h>
#include <libpmem2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "engine/engine.h"

enum { PERSIST_WRITE, PERSIST_SYNC };

struct pmem2_opts {
	int persist;
};

static const struct llmio_optdesc pmem2_options[] = {
        {
                .name = "persist",
                .type = OPTD_ENUM,
                OPTD_FIELD(struct pmem2_opts, persist),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "write",
                .help = "write: every write is made durable as it is copied (libpmem2's "
                        "memcpy); sync: writes are copied without flushing and fsync persists "
                        "the whole mapping",
                .choices = "write|sync",
                .fio_kind = OPTD_FIO_NONE,
                .fio_note = "fio's libpmem engine flushes each write (sync=1) or at fsync; "
                            "set its sync option by hand",
        },
        {.name = NULL},
};

struct pmap {
	struct pmem2_map *map; /* NULL when the file is shorter than one unit of its alignment */
	unsigned char *addr;
	size_t maplen; /* mapped: whole units of the source's alignment */
	size_t len;    /* the file; what lies past maplen goes through pread/pwrite (tail_io) */
	int fd;
	pmem2_memcpy_fn copy;
	pmem2_persist_fn persist;
};

struct pmem2_eng {
	unsigned nmaps;
	bool writable;
	unsigned flags; /* of every write's memcpy */
	struct pmap maps[];
};

static const char *const gran_names[] = {
        [PMEM2_GRANULARITY_BYTE] = "byte",
        [PMEM2_GRANULARITY_CACHE_LINE] = "cache line",
        [PMEM2_GRANULARITY_PAGE] = "page",
};

static const char *const gran_mechanisms[] = {
        [PMEM2_GRANULARITY_BYTE] = "CPU caches are persistent (eADR): a store fence only",
        [PMEM2_GRANULARITY_CACHE_LINE] = "CPU cache-line flushes (CLWB/CLFLUSHOPT/CLFLUSH, "
                                         "the best this CPU has) and a fence",
        [PMEM2_GRANULARITY_PAGE] = "msync() of the pages written (not persistent memory: a "
                                   "file in the page cache)",
};

static int pmem2_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0; /* linked: libpmem2 is there whenever llmio is */
}

/* libpmem2's mappings are made and removed one at a time (map_one()) */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

static void unmap_all(struct pmem2_eng *p)
{
	pthread_mutex_lock(&map_lock);
	for (unsigned i = 0; i < p->nmaps; i++)
		if (p->maps[i].map)
			pmem2_map_delete(&p->maps[i].map);
	pthread_mutex_unlock(&map_lock);
}

/* Map file i (fd, size bytes) into m; 0 or -errno with libpmem2's words in e. */
static int map_one(struct pmap *m, unsigned i, int fd, uint64_t size, bool writable,
                   enum pmem2_granularity *gran, struct llmio_error *e)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	const char *step = "pmem2_config_new";
	size_t align = 1;
	struct stat st;
	int ret;

	ret = pmem2_config_new(&cfg);
	if (ret)
		goto fail;
	/* the coarsest asked for: libpmem2 then maps anything and says what it got */
	step = "pmem2_config_set_required_store_granularity";
	ret = pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	if (!ret && !writable) {
		step = "pmem2_config_set_protection";
		ret = pmem2_config_set_protection(cfg, PMEM2_PROT_READ);
	}
	if (ret)
		goto fail;
	step = "pmem2_source_from_fd";
	ret = pmem2_source_from_fd(&src, fd);
	if (ret)
		goto fail;
	/*
	 * A mapping is whole units of the source's alignment (a page for a file, 2 MiB for most
	 * device-DAX) and no longer than the file: the tail of a file of another size is not
	 * mapped.
	 */
	step = "pmem2_source_alignment";
	ret = pmem2_source_alignment(src, &align);
	if (ret)
		goto fail;
	/* device DAX has no read() or write() for a tail past whole units */
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && size % align) {
		pmem2_source_delete(&src);
		pmem2_config_delete(&cfg);
		return llmio_err(e, -EINVAL,
		                 "pmem2: device DAX is mapped in whole units of its alignment (%zu "
		                 "bytes): give a --size that is a multiple of it",
		                 align);
	}
	m->fd = fd;
	m->len = (size_t)size;
	m->maplen = (size_t)size / align * align;
	if (!m->maplen)
		goto done;
	step = "pmem2_config_set_length";
	ret = pmem2_config_set_length(cfg, m->maplen);
	if (ret)
		goto fail;
	step = "pmem2_map_new";
	/* one mapping made at a time: workers mapping at once have had pmem2_map_new() fail with
	 * -EEXIST and no message (cli_s3_recipes, --engine all), as if two took one address */
	pthread_mutex_lock(&map_lock);
	ret = pmem2_map_new(&m->map, cfg, src);
	pthread_mutex_unlock(&map_lock);
	if (ret)
		goto fail;
	m->addr = pmem2_map_get_address(m->map);
	m->copy = pmem2_get_memcpy_fn(m->map);
	m->persist = pmem2_get_persist_fn(m->map);
	*gran = pmem2_map_get_store_granularity(m->map);
done:
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	return 0;

fail:
	/* libpmem2 returns -errno, or its own codes (PMEM2_E_*, below -100000): named, since its
	 * message can be empty */
	llmio_err(e, ret < 0 && ret > -4096 ? ret : -EINVAL,
	          "pmem2: mapping file %u (%llu bytes): %s: %s (code %d)%s", i,
	          (unsigned long long)size, step, pmem2_errormsg(), ret,
	          strcmp(step, "pmem2_source_from_fd")
	                  ? ""
	                  : " (a file is mapped for reading too: a write-only one cannot be)");
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	return ret < 0 && ret > -4096 ? ret : -EINVAL;
}

static int pmem2_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	const struct pmem2_opts *o = s->opts;
	int persist = o ? o->persist : PERSIST_WRITE;
	enum pmem2_granularity gran = PMEM2_GRANULARITY_PAGE, g = PMEM2_GRANULARITY_PAGE;
	unsigned nmapped = 0;
	uint64_t total = 0;
	struct pmem2_eng *p;
	int ret;

	ctx->priv = NULL;
	ctx->notes[0] = '\0';
	if (s->direct)
		return llmio_err(e, -EINVAL,
		                 "pmem2 maps the files and cannot do O_DIRECT; use --direct=0");
	p = calloc(1, sizeof(*p) + (size_t)s->nfiles * sizeof(p->maps[0]));
	if (!p)
		return llmio_err(e, -ENOMEM, "pmem2: out of memory for %u mappings", s->nfiles);
	p->nmaps = s->nfiles;
	p->writable = s->writable;
	p->flags = persist == PERSIST_SYNC ? PMEM2_F_MEM_NOFLUSH : 0;
	for (unsigned i = 0; i < s->nfiles; i++) {
		struct stat st;

		if (!s->file_sizes[i])
			continue; /* nothing to map; every access reads 0 bytes */
		/* a file written from scratch is sized first, as with mmap: stores past EOF fault
		 */
		if (s->writable && fstat(s->fds[i], &st) == 0 && S_ISREG(st.st_mode) &&
		    (uint64_t)st.st_size < s->file_sizes[i] &&
		    ftruncate(s->fds[i], (off_t)s->file_sizes[i])) {
			ret = llmio_err(e, -errno, "pmem2: cannot size file %u to %llu bytes: %s",
			                i, (unsigned long long)s->file_sizes[i], strerror(errno));
			goto unmap;
		}
		ret = map_one(&p->maps[i], i, s->fds[i], s->file_sizes[i], s->writable, &g, e);
		if (ret)
			goto unmap;
		if (!p->maps[i].map)
			continue;
		/* the coarsest of the files is what the job's writes pay */
		if (!nmapped || g > gran)
			gran = g;
		nmapped++;
		total += p->maps[i].maplen;
	}
	engine_appendf(ctx->notes, sizeof(ctx->notes),
	               "libpmem2: %u of %u files mapped %s (%llu MiB); store granularity %s; "
	               "persist: %s, %s",
	               nmapped, s->nfiles, s->writable ? "read-write" : "read-only",
	               (unsigned long long)(total >> 20),
	               gran <= PMEM2_GRANULARITY_PAGE ? gran_names[gran] : "?",
	               gran <= PMEM2_GRANULARITY_PAGE ? gran_mechanisms[gran] : "?",
	               persist == PERSIST_SYNC ? "at fsync over the whole mapping (persist=sync)"
	                                       : "on every write (libpmem2's memcpy)");
	ctx->priv = p;
	return 0;

unmap:
	unmap_all(p);
	free(p);
	return ret;
}

/*
 * Bytes [done, n) of io, past the mapping (a file whose size is not whole units of its
 * alignment): pread/pwrite, a write made durable with fdatasync as persist=write promises.
 * The I/O's result: the bytes done in all, or -errno.
 */
static int64_t tail_io(const struct pmem2_eng *p, const struct pmap *m, const struct io_req *io,
                       size_t done, size_t n)
{
	char *buf = (char *)io->buf + done;
	off_t off = (off_t)(io->off + done);
	ssize_t r;

	while (done < n) {
		r = io->op == ENGINE_OP_WRITE ? pwrite(m->fd, buf, n - done, off)
		                              : pread(m->fd, buf, n - done, off);
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
		buf += r;
		off += r;
	}
	if (io->op == ENGINE_OP_WRITE && !p->flags && fdatasync(m->fd))
		return -errno;
	return (int64_t)done;
}

/* Copy between the buffer and the mapping, clamped at the file's end like pread(). */
static int pmem2_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct pmem2_eng *p = ctx->priv;
	const struct pmap *m;
	size_t n, mapped;

	if (io->file >= p->nmaps || (io->op == ENGINE_OP_WRITE && !p->writable)) {
		io->res = -EBADF;
		return ENGINE_Q_COMPLETED;
	}
	m = &p->maps[io->file];
	if (io->off >= m->len) {
		io->res = 0;
		return ENGINE_Q_COMPLETED;
	}
	n = m->len - io->off < io->len ? m->len - io->off : io->len;
	mapped = io->off < m->maplen ? (m->maplen - io->off < n ? m->maplen - io->off : n) : 0;
	if (io->op == ENGINE_OP_WRITE && mapped)
		m->copy(m->addr + io->off, io->buf, mapped, p->flags);
	else if (mapped)
		memcpy(io->buf, m->addr + io->off, mapped);
	io->res = mapped < n ? tail_io(p, m, io, mapped, n) : (int64_t)n;
	return ENGINE_Q_COMPLETED;
}

/* fsync: persist=write has nothing left to do; persist=sync persists the whole mapping. */
static int pmem2_sync(struct engine_ctx *ctx, unsigned file)
{
	struct pmem2_eng *p = ctx->priv;
	const struct pmap *m;

	if (file >= p->nmaps)
		return -EBADF;
	m = &p->maps[file];
	if (!p->writable || !p->flags)
		return 0;
	if (m->map)
		m->persist(m->addr, m->maplen);
	return m->len > m->maplen && fdatasync(m->fd) ? -errno : 0;
}

static void pmem2_cleanup(struct engine_ctx *ctx)
{
	struct pmem2_eng *p = ctx->priv;

	if (!p)
		return;
	unmap_all(p);
	free(p);
	ctx->priv = NULL;
}

static const char *const pmem2_aliases[] = {"libpmem", NULL};
static const char *const pmem2_variants[] = {"persist=sync", NULL};

const struct engine_ops engine_pmem2 = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "pmem2",
        .aliases = pmem2_aliases,
        .fio_name = "libpmem",
        .summary = "persistent memory through libpmem2: memcpy into a mapping with the persist "
                   "mechanism its store granularity needs (file or /dev/dax)",
        .caps = ENGINE_CAP_MAPS_FILES,
        .opts = pmem2_options,
        .opts_size = sizeof(struct pmem2_opts),
        .probe = pmem2_probe,
        .init = pmem2_init,
        .queue = pmem2_queue,
        .sync = pmem2_sync,
        .cleanup = pmem2_cleanup,
        .test_variants = pmem2_variants,
};
