/* SPDX-License-Identifier: MIT */
/*
 * mmap: every file mapped MAP_SHARED once per worker, I/O as memcpy to or from the mapping.
 * This measures the page-fault and page-cache path (what a model loader that mmaps its weights
 * sees), so it is synchronous and cannot use O_DIRECT.
 *
 * A mapped access past the end of the file, or to a page the filesystem cannot back (an I/O
 * error), raises SIGBUS instead of returning an error.  Every access is clamped to the mapped
 * size, which covers the files as the core prepared them; but someone may truncate a file
 * while the job runs, and the other engines then report "end of file" and keep the results
 * measured so far.  So each copy runs under a guard (see "SIGBUS" below): a SIGBUS inside it
 * becomes that I/O's result, pread's answer for the file as it now is (0 past the new end,
 * -EIO for a page that cannot be read), and the job ends with the same error psync gives.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "base/error.h"

struct mmap_opts {
	int populate;
	int madvise;
};

/* ADV_FADVISE (the default): as the job's fadvise_hint, as fio's mmap engine advises */
enum { ADV_NORMAL, ADV_RANDOM, ADV_SEQUENTIAL, ADV_WILLNEED, ADV_HUGEPAGE, ADV_FADVISE };

static const char *const madvise_names[] = {
        "normal", "random", "sequential", "willneed", "hugepage", "fadvise", NULL,
};

static const int madvise_advice[] = {
        [ADV_NORMAL] = MADV_NORMAL,         [ADV_RANDOM] = MADV_RANDOM,
        [ADV_SEQUENTIAL] = MADV_SEQUENTIAL, [ADV_WILLNEED] = MADV_WILLNEED,
        [ADV_HUGEPAGE] = MADV_HUGEPAGE,
};

static const struct llmio_optdesc mmap_options[] = {
        {
                .name = "populate",
                .alias = NULL,
                .type = OPTD_BOOL,
                OPTD_FIELD(struct mmap_opts, populate),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "fault the whole mapping in at init (MAP_POPULATE), so the run measures "
                        "copies from resident pages",
                .fio_kind = OPTD_FIO_NONE,
                .fio_note = "fio's mmap engine has no MAP_POPULATE: pages are faulted in during "
                            "its run",
        },
        {
                .name = "madvise",
                .alias = NULL,
                .type = OPTD_ENUM,
                OPTD_FIELD(struct mmap_opts, madvise),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "fadvise",
                .help = "madvise() advice for the mappings: fadvise = as fadvise_hint (random "
                        "or sequential by rw, as fio's mmap), a readahead behaviour, or "
                        "hugepage to ask for large folios",
                .choices = "normal|random|sequential|willneed|hugepage|fadvise",
                .fio_kind = OPTD_FIO_CUSTOM, /* fadvise_hint or thp */
        },
        {.name = NULL},
};

struct mapping {
	unsigned char *addr; /* NULL for an empty file */
	size_t len;
	int fd; /* the job's descriptor: the file's size after a SIGBUS */
};

struct mmap_eng {
	unsigned nmaps;
	bool writable;
	struct mapping maps[]; /* one per file */
};

/* ---------------------------------------------------------------------------------------- */
/* SIGBUS                                                                                   */

/*
 * The guard of the calling thread: armed only around the memcpy of an I/O, over the mapping
 * that memcpy touches.  The handler jumps back into mmap_queue() only for a fault inside the
 * armed range of its own thread (SIGBUS from a fault is delivered to the faulting thread); any
 * other SIGBUS goes where it would have gone without us.
 *
 * Async-signal safety: the handler reads its thread's guard and calls siglongjmp (allowed from
 * a handler that interrupted no unsafe function: the interrupted code is a memcpy between our
 * own buffers), or sigaction/raise, which are async-signal-safe.  The guard is thread-local;
 * the thread has written it before any fault it guards, so reaching it in the handler never
 * allocates (the one way __tls_get_addr would not be safe).  sigsetjmp(env, 0) saves no signal
 * mask, which keeps the guard at a few register stores per I/O (no system call); for that the
 * handler runs with SA_NODEFER, so SIGBUS is not left blocked after the jump, and the rare
 * recovery path unblocks it anyway.  atomic_signal_fence keeps the compiler from moving the
 * copy outside the armed window.
 */
struct bus_guard {
	sigjmp_buf env;
	const unsigned char *lo, *hi;
	volatile sig_atomic_t armed;
};

static _Thread_local struct bus_guard bus_guard;
static struct sigaction bus_prev;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static int bus_install_err;

static void bus_handler(int sig, siginfo_t *si, void *uc)
{
	struct bus_guard *g = &bus_guard;
	const unsigned char *a = si ? (const unsigned char *)si->si_addr : NULL;
	struct sigaction dfl;

	if (g->armed && a >= g->lo && a < g->hi) {
		g->armed = 0;
		siglongjmp(g->env, 1);
	}
	if ((bus_prev.sa_flags & SA_SIGINFO) && bus_prev.sa_sigaction) {
		bus_prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (!(bus_prev.sa_flags & SA_SIGINFO) && bus_prev.sa_handler != SIG_DFL &&
	    bus_prev.sa_handler != SIG_IGN) {
		bus_prev.sa_handler(sig);
		return;
	}
	/*
	 * Default action (a fault cannot be ignored): reset it; a faulting instruction runs again
	 * on return and dies as it would have, a sent signal is sent again.
	 */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	if (!si || si->si_code <= 0)
		raise(sig);
}

static void bus_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = bus_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &bus_prev))
		bus_install_err = errno;
}

/*
 * memcpy(dst, src, n) where the mapping [lo, lo + len) may fault.  \return 0, or -EFAULT when
 * the copy raised SIGBUS (part of it may have been done).
 */
static int guarded_copy(void *dst, const void *src, size_t n, const unsigned char *lo, size_t len)
{
	struct bus_guard *g = &bus_guard;
	sigset_t bus;

	g->lo = lo;
	g->hi = lo + len;
	if (sigsetjmp(g->env, 0)) {
		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		return -EFAULT;
	}
	g->armed = 1;
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(dst, src, n);
	atomic_signal_fence(memory_order_seq_cst);
	g->armed = 0;
	return 0;
}

/*
 * What pread/pwrite would have said for an I/O whose copy faulted: the file has changed under
 * the mapping.  Past its new end: 0 (end of file); partly inside: the part that is there,
 * copied again; otherwise the filesystem could not supply the page: -EIO.
 */
static int64_t after_fault(const struct mapping *m, struct io_req *io, size_t n)
{
	struct stat st;
	size_t part;
	int rc;

	if (fstat(m->fd, &st))
		return -EIO;
	if ((uint64_t)st.st_size <= io->off)
		return 0;
	part = (uint64_t)st.st_size - io->off < n ? (size_t)((uint64_t)st.st_size - io->off) : n;
	if (part == n)
		return -EIO;
	if (io->op == ENGINE_OP_WRITE)
		rc = guarded_copy(m->addr + io->off, io->buf, part, m->addr, m->len);
	else
		rc = guarded_copy(io->buf, m->addr + io->off, part, m->addr, m->len);
	return rc ? -EIO : (int64_t)part;
}

static int mmap_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

static void unmap_all(struct mmap_eng *p)
{
	unsigned i;

	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].addr)
			munmap(p->maps[i].addr, p->maps[i].len);
}

static int mmap_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	static const struct mmap_opts defaults = {.populate = 0, .madvise = ADV_FADVISE};
	const struct mmap_opts *o = s->opts ? s->opts : &defaults;
	int prot = PROT_READ | (s->writable ? PROT_WRITE : 0);
	int flags = MAP_SHARED | (o->populate ? MAP_POPULATE : 0);
	int advice = ADV_NORMAL;
	unsigned i, nmapped = 0, advise_failed = 0;
	uint64_t total = 0;
	int advise_err = 0;
	struct mmap_eng *p;
	int ret;

	ctx->priv = NULL;
	ctx->notes[0] = '\0';
	if (s->direct) {
		return llmio_err(
		        e, -EINVAL,
		        "mmap goes through the page cache and cannot do O_DIRECT; use --direct=0");
	}
	if (o->madvise >= 0 && o->madvise <= ADV_HUGEPAGE)
		advice = o->madvise;
	else if (o->madvise == ADV_FADVISE)
		advice = s->fadvise == POSIX_FADV_RANDOM       ? ADV_RANDOM
		         : s->fadvise == POSIX_FADV_SEQUENTIAL ? ADV_SEQUENTIAL
		                                               : ADV_NORMAL;
	pthread_once(&bus_once, bus_install);
	if (bus_install_err)
		return llmio_err(e, -bus_install_err, "mmap: cannot install the SIGBUS handler: %s",
		                 strerror(bus_install_err));

	p = calloc(1, sizeof(*p) + (size_t)s->nfiles * sizeof(p->maps[0]));
	if (!p)
		return llmio_err(e, -ENOMEM, "mmap: out of memory for %u mappings", s->nfiles);
	p->nmaps = s->nfiles;
	p->writable = s->writable;

	for (i = 0; i < s->nfiles; i++) {
		struct mapping *m = &p->maps[i];
		void *addr;

		m->fd = s->fds[i];
		if (!s->file_sizes[i])
			continue; /* mmap() refuses a zero length; every access reads 0 bytes */
		if (s->file_sizes[i] > SIZE_MAX) {
			ret = llmio_err(e, -EFBIG,
			                "mmap: file %u is too large to map in this address space",
			                i);
			goto unmap;
		}
		/*
		 * A file the job writes from scratch (a checkpoint) starts empty: a program
		 * writing through a mapping must size the file first, and so do we, or stores
		 * beyond EOF raise SIGBUS.  Files that exist are never shortened.
		 */
		if (s->writable) {
			struct stat st;

			if (fstat(s->fds[i], &st) == 0 && (uint64_t)st.st_size < s->file_sizes[i] &&
			    ftruncate(s->fds[i], (off_t)s->file_sizes[i])) {
				ret = -errno;
				llmio_err(e, ret, "mmap: cannot size file %u to %llu bytes: %s", i,
				          (unsigned long long)s->file_sizes[i], strerror(-ret));
				goto unmap;
			}
		}
		addr = mmap(NULL, (size_t)s->file_sizes[i], prot, flags, s->fds[i], 0);
		if (addr == MAP_FAILED) {
			ret = -errno;
			llmio_err(e, ret, "mmap: mapping file %u (%llu bytes) failed: %s%s", i,
			          (unsigned long long)s->file_sizes[i], strerror(-ret),
			          ret == -ENOMEM ? " (address space or vm.max_map_count exhausted?)"
			                         : "");
			goto unmap;
		}
		m->addr = addr;
		m->len = (size_t)s->file_sizes[i];
		nmapped++;
		total += m->len;
		/* Advice is a hint: a kernel that refuses it changes speed, not correctness. */
		if (advice != ADV_NORMAL && madvise(addr, m->len, madvise_advice[advice])) {
			advise_err = errno;
			advise_failed++;
		}
	}

	engine_appendf(ctx->notes, sizeof(ctx->notes),
	               "%u of %u files mapped MAP_SHARED %s (%llu MiB), populate %s, madvise %s%s",
	               nmapped, s->nfiles, s->writable ? "read-write" : "read-only",
	               (unsigned long long)(total >> 20), o->populate ? "on (MAP_POPULATE)" : "off",
	               madvise_names[advice],
	               o->madvise == ADV_FADVISE ? " (as fadvise_hint)" : "");
	if (advise_failed)
		engine_appendf(
		        ctx->notes, sizeof(ctx->notes),
		        " requested but refused for %u mapping(s) (%s%s): ran without that advice",
		        advise_failed, strerror(advise_err),
		        advice == ADV_HUGEPAGE && advise_err == EINVAL
		                ? "; kernel without transparent hugepages?"
		                : "");
	engine_appendf(ctx->notes, sizeof(ctx->notes), "; I/O is a memcpy through page faults");
	ctx->priv = p;
	return 0;

unmap:
	unmap_all(p);
	free(p);
	return ret;
}

/*
 * Copy between the buffer and the mapping, clamped at the end of the file like pread():
 * a short count near the end, 0 at or past it.  A write cannot grow a mapped file, so it is
 * clamped the same way.
 */
static int mmap_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct mmap_eng *p = ctx->priv;
	const struct mapping *m;
	size_t n;
	int rc;

	if (io->file >= p->nmaps || (io->op == ENGINE_OP_WRITE && !p->writable)) {
		io->res = -EBADF; /* what pread/pwrite say for a file not open that way */
		return ENGINE_Q_COMPLETED;
	}
	m = &p->maps[io->file];
	if (io->off >= m->len) {
		io->res = 0;
		return ENGINE_Q_COMPLETED;
	}
	n = m->len - io->off < io->len ? m->len - io->off : io->len;
	if (io->op == ENGINE_OP_WRITE)
		rc = guarded_copy(m->addr + io->off, io->buf, n, m->addr, m->len);
	else
		rc = guarded_copy(io->buf, m->addr + io->off, n, m->addr, m->len);
	io->res = rc ? after_fault(m, io, n) : (int64_t)n;
	return ENGINE_Q_COMPLETED;
}

static int mmap_sync(struct engine_ctx *ctx, unsigned file)
{
	struct mmap_eng *p = ctx->priv;
	const struct mapping *m;

	if (file >= p->nmaps)
		return -EBADF;
	m = &p->maps[file];
	if (!m->addr)
		return 0;
	/*
	 * Linux's fsync(fd) would also write back pages dirtied through the mapping; msync is
	 * the call that promises it for mappings everywhere, and names what we are flushing.
	 */
	if (msync(m->addr, m->len, MS_SYNC))
		return -errno;
	return 0;
}

static void mmap_cleanup(struct engine_ctx *ctx)
{
	struct mmap_eng *p = ctx->priv;

	if (!p)
		return;
	unmap_all(p);
	free(p);
	ctx->priv = NULL;
}

/*
 * --emit-fio: fio's mmap engine madvises its mappings as fadvise_hint says (MADV_RANDOM,
 * MADV_SEQUENTIAL, or nothing), as llmio's madvise=fadvise does; thp=1 asks for huge pages.
 */
static void mmap_fio_option(const struct llmio_optdesc *o, int v, struct engine_fio_job *j)
{
	const char *name = v >= 0 && v <= ADV_FADVISE ? madvise_names[v] : "?";
	const char *fio = j->fadvise == POSIX_FADV_RANDOM       ? "random"
	                  : j->fadvise == POSIX_FADV_SEQUENTIAL ? "sequential"
	                                                        : "normal";

	(void)o;

	if (!strcmp(name, "hugepage")) {
		fprintf(j->f, "thp=1\n");
		return;
	}
	if (v != ADV_FADVISE && strcmp(name, fio))
		fprintf(j->f,
		        "; differs: llmio's mmap madvise=%s; fio's mmap engine advises its "
		        "mappings "
		        "as fadvise_hint says (%s)\n",
		        name, fio);
}

const struct engine_ops engine_mmap = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "mmap",
        .summary = "memcpy to/from MAP_SHARED mappings of the files: the page-fault path, "
                   "buffered only",
        .caps = ENGINE_CAP_MAPS_FILES,
        .opts = mmap_options,
        .opts_size = sizeof(struct mmap_opts),
        .probe = mmap_probe,
        .init = mmap_init,
        .queue = mmap_queue,
        .commit = NULL,
        .reap = NULL,
        .sync = mmap_sync,
        .cleanup = mmap_cleanup,
        .fio_option = mmap_fio_option,
};
