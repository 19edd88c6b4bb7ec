// SPDX-License-Identifier: MIT
/*
 * The tracer's record file: DIR/<pid>.<n>.trace, written through a MAP_SHARED mapping in
 * chunks that each thread takes whole (see preload.c); strings and phases are records too.
 */
#include "trace/preload_internal.h"

/*
 * Make [from, to) of the record file real blocks before any page of it is mapped.  A store into
 * a mapped page that the filesystem cannot back (a sparse file on a full filesystem, tmpfs
 * over its size) is SIGBUS, which would kill the traced program; fallocate() says ENOSPC
 * instead.  Where the filesystem has no fallocate, zeros written with pwrite allocate the
 * same.  \return 0, or an errno.
 */
static int allocate(int fd, uint64_t from, uint64_t to)
{
	static const char zero[4096];

	if (syscall(SYS_fallocate, fd, 0, (off_t)from, (off_t)(to - from)) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return errno;
	while (from < to) {
		size_t n = to - from < sizeof(zero) ? (size_t)(to - from) : sizeof(zero);
		long w = syscall(SYS_pwrite64, fd, zero, n, (off_t)from);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		from += (uint64_t)w;
	}
	return 0;
}

/* Recording stops for good: the program runs on untraced, and the merge says so. */
static void stop_recording(int err)
{
	if (!__atomic_exchange_n(&P.stopped, 1, __ATOMIC_ACQ_REL) && P.hdr)
		P.hdr->stop_errno = (uint32_t)err;
}

static int grow_to(uint64_t need)
{
	int ret = 0, err;

	spin_lock(&P.grow_lock);
	if (P.fsize < need) {
		uint64_t size = need + GROW;

		if (__atomic_load_n(&P.stopped, __ATOMIC_ACQUIRE)) {
			ret = -1;
		} else if ((err = allocate(P.fd, P.fsize, size))) {
			stop_recording(err);
			ret = -1;
		} else {
			__atomic_store_n(&P.fsize, size, __ATOMIC_RELEASE);
		}
	}
	spin_unlock(&P.grow_lock);
	return ret;
}

/*
 * Map len bytes of the record file at off.  The file's pages past what the process has written
 * are allocated but unwritten, so the first store into a page reads it as zeros; the kernel's
 * read-around would zero its whole window with it (read_ahead_kb: 8 MiB on some disks, over
 * all of the growth step), at each process's start.  MADV_RANDOM: a fault reads its own page.
 */
static void *map_raw(size_t len, uint64_t off)
{
	void *p = REAL(mmap)(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, P.fd, (off_t)off);

	if (p != MAP_FAILED)
		syscall(SYS_madvise, p, len, MADV_RANDOM); /* advice: its failure changes nothing */
	return p;
}

/* Give the calling thread a fresh chunk; slot 0 names its thread. */
static int new_chunk(void)
{
	uint64_t idx = __atomic_fetch_add(&P.nchunks, 1, __ATOMIC_RELAXED);
	uint64_t off = TRACE_RAW_HDR + idx * TRACE_CHUNK;
	struct trace_rec *r;
	void *p;

	if (__atomic_load_n(&P.fsize, __ATOMIC_ACQUIRE) < off + TRACE_CHUNK &&
	    grow_to(off + TRACE_CHUNK))
		return -1;
	p = map_raw(TRACE_CHUNK, off);
	if (p == MAP_FAILED)
		return -1;
	if (T.chunk)
		REAL(munmap)(T.chunk, TRACE_CHUNK);
	T.chunk = p;
	r = p;
	r->pid = P.pid;
	r->tid = tid();
	r->ts = now_ns();
	__atomic_store_n(&r->type, TR_RAW_CHUNK, __ATOMIC_RELEASE);
	T.used = 1;
	return 0;
}

static struct trace_rec *reserve(unsigned n)
{
	struct trace_rec *r;

	if ((!T.chunk || T.used + n > SLOTS) && new_chunk()) {
		__atomic_add_fetch(&P.hdr->dropped, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	r = (struct trace_rec *)T.chunk + T.used;
	T.used += n;
	return r;
}

void emit(uint16_t type, int fd, uint32_t path, uint32_t path2, uint64_t off, uint64_t req,
          int64_t res, uint64_t t0, uint64_t t1)
{
	struct trace_rec *r = reserve(1);

	if (!r)
		return;
	r->ts = t0;
	r->dur = t1 - t0;
	r->offset = off;
	r->req = req;
	r->result = res;
	r->pid = P.pid;
	r->tid = tid();
	r->fd = fd;
	r->path = path;
	r->path2 = path2;
	r->phase = __atomic_load_n(&P.phase, __ATOMIC_RELAXED);
	__atomic_store_n(&r->type, type, __ATOMIC_RELEASE);
}

/* Intern a string: one header slot, then the text. \return its id, 0 when it was dropped. */
uint32_t emit_str(const char *s)
{
	size_t len = strnlen(s, PATH_MAX - 1);
	struct trace_rec *r = reserve(1 + (unsigned)((len + 1 + 63) / 64));
	uint32_t id;

	if (!r)
		return 0;
	id = __atomic_add_fetch(&P.next_str, 1, __ATOMIC_RELAXED);
	memcpy(r + 1, s, len);
	((char *)(r + 1))[len] = '\0';
	r->ts = now_ns();
	r->req = len;
	r->path = id;
	r->pid = P.pid;
	r->tid = tid();
	__atomic_store_n(&r->type, TR_RAW_STR, __ATOMIC_RELEASE);
	return id;
}

void emit_phase(unsigned id, bool def_only)
{
	struct trace_rec *r;
	uint32_t s = emit_str(P.phases[id].name);

	r = reserve(1);
	if (!r)
		return;
	r->ts = now_ns();
	r->fd = (int32_t)id;
	r->path = s;
	r->req = def_only;
	r->pid = P.pid;
	r->tid = tid();
	__atomic_store_n(&r->type, TR_RAW_PHASE, __ATOMIC_RELEASE);
}

static void read_cmdline(char *buf, size_t len, uint32_t *out_len)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;

	if (fd >= 0) {
		n = syscall(SYS_read, fd, buf, len - 1);
		syscall(SYS_close, fd);
	}
	if (n < 0)
		n = 0;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	*out_len = (uint32_t)n;
}

/* Start this process's file: DIR/<pid>.<n>.trace, n counting the images of one pid (exec). */
int open_proc_file(void)
{
	char path[PATH_MAX + 64];
	struct timespec mono, real;
	struct trace_raw_hdr *h;
	int fd = -1, err;
	void *p;

	for (unsigned n = 0; n < 10000 && fd < 0; n++) {
		snprintf(path, sizeof(path), "%s/%u.%u.trace", P.dir, P.pid, n);
		fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
		                  0600);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	if (fd < 0)
		return -1;
	/* the header first: without room even for it the file stays empty (the merge counts it) */
	if (allocate(fd, 0, TRACE_RAW_HDR))
		goto fail;
	P.fd = fd;
	p = map_raw(TRACE_RAW_HDR, 0);
	if (p == MAP_FAILED)
		goto fail;
	P.fsize = TRACE_RAW_HDR;
	P.stopped = 0;
	P.nchunks = 0;
	P.next_str = 0;
	P.hdr = h = p;
	err = allocate(fd, TRACE_RAW_HDR, TRACE_RAW_HDR + GROW);
	if (err)
		stop_recording(err);
	else
		P.fsize = TRACE_RAW_HDR + GROW;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	h->version = TRACE_VERSION;
	h->chunk_size = TRACE_CHUNK;
	h->pid = P.pid;
	h->ppid = P.ppid;
	h->mono_anchor = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec;
	h->real_anchor = (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec;
	read_cmdline(h->cmdline, sizeof(h->cmdline), &h->cmdline_len);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, TRACE_RAW_MAGIC, 8); /* last: a file with its magic is complete */
	return 0;
fail:
	syscall(SYS_ftruncate, fd, (off_t)0);
	syscall(SYS_close, fd);
	P.fd = -1;
	return -1;
}
