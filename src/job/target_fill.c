// SPDX-License-Identifier: MIT
/*
 * Preparing the job's files: create, preallocate and fill them with the incompressible
 * pattern, or read them as they are.
 *
 * Whose files.  llmio writes only files it created or was told to write:
 *  - a job that writes (rw=write, randwrite, randrw) was told to: its file is prepared below;
 *  - a file in a directory llmio made (llmio_work_dir(), llmio_scratch_dir(): it holds the
 *    marker OWNED_MARK, which only llmio creates, with O_EXCL) is llmio's own: prepared below;
 *  - a file that does not exist yet is created (O_EXCL, so never someone else's) and prepared;
 *  - any other existing file, read by a job that only reads, is read as it is: no fill (its
 *    holes read as zeros), no extension; a file shorter than --size is refused unless
 *    opts->extend, which appends [old size, size) and nothing else.
 *
 * Filling.  A read of a hole or of an unwritten (fallocated) extent never reaches the medium:
 * the filesystem returns zeros from memory, and the benchmark measures nothing.  So every byte
 * a job may read of a file being prepared must have been written.  Which ranges need writing:
 *  - [old size, size) of a file we create or extend: always, written in full;
 *  - holes below the old size: found with SEEK_HOLE / SEEK_DATA, which ext4, xfs, btrfs and
 *    tmpfs report for unwritten extents as well as for real holes.
 * The data elsewhere in an existing file is never rewritten.  st_blocks cannot decide
 * this: fallocated-but-unwritten extents count in it (a fill interrupted by ^C would look
 * complete forever after) and compressing filesystems undercount it.  Since only missing
 * ranges are written, a fill interrupted by ^C in llmio's own directory simply continues on
 * the next run; a file created elsewhere whose fill fails is removed (a later run would read
 * it as it is, holes and all).  A file already complete is reused without a single write (its
 * mtime does not change).
 *
 * Only the extension is preallocated (fallocate), to fail early with ENOSPC rather than
 * halfway through a fill; holes inside an existing file are left as holes until written, so
 * SEEK_HOLE keeps seeing them even on a filesystem that would call an unwritten extent data.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "job/target_internal.h"
#include "base/error.h"

#define FILL_CHUNK (1u << 20)
/*
 * Seed of the fill pattern, plus the file's index: fixed, so a file filled by one run holds
 * the same bytes for every later run (and can be verified), distinct per file, so that a
 * deduplicating filesystem or device cannot collapse the files of a directory into one.
 */
#define FILL_SEED 0x6c6c6d696f66696cULL /* "llmiofil" */

/* ---------------------------------------------------------------------------------------- */
/* Pattern                                                                                  */

/*
 * Word i of the stream is splitmix64's i-th output for state `seed` (Steele, Lea, Flood,
 * "Fast splittable pseudorandom number generators", OOPSLA 2014): random enough that no
 * compressor or deduplicating device gains anything, and a pure function of (seed, i), so
 * any range can be regenerated.  Zero bytes are then set to 1 so that a read returning zeros
 * (a hole, an unwritten extent, a lost write) can never match: with
 *	t = ((z & 0x7f..7f) + 0x7f..7f) | z
 * the top bit of each byte of t is set exactly when that byte of z is non-zero (the add cannot
 * carry across bytes), so ~t & 0x80..80 marks the zero bytes without a branch.
 */
#define GOLDEN 0x9e3779b97f4a7c15ULL

/* The word whose splitmix64 state is z (state of word i: seed + (i + 1) * GOLDEN). */
static inline uint64_t pattern_word(uint64_t z)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
	uint64_t t;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	t = ((z & lo7) + lo7) | z;
	return z | ((~t & ~lo7) >> 7);
}

void target_pattern(void *buf, size_t len, uint64_t off, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t state = seed + (off / 8 + 1) * GOLDEN, w;
	size_t n = len / 8, i;

	/*
	 * The state advances by an add rather than a multiply per word: clang otherwise
	 * vectorises the 64-bit multiplies through SSE2 emulation and runs 40% slower.
	 * Little-endian on every host, so a file means the same bytes wherever it is read.
	 */
	for (i = 0; i < n; i++, state += GOLDEN) {
		w = htole64(pattern_word(state));
		memcpy(p + 8 * i, &w, 8);
	}
	if (len % 8) {
		w = htole64(pattern_word(state));
		memcpy(p + 8 * n, &w, len % 8);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Files                                                                                    */

int target_write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int no_space(struct llmio_error *e, const char *path, uint64_t size)
{
	return llmio_err(e, -ENOSPC,
	                 "no space for %s (%llu bytes) on its filesystem; use a smaller --size or "
	                 "another --filename/--directory",
	                 path, (unsigned long long)size);
}

/*
 * The layout's progress (llmio_job_opts.prepare_progress): t->prep_done of t->prep_total
 * bytes, told after every chunk written.
 */
static void tell(const struct target *t, const struct llmio_job_opts *opts)
{
	if (opts->prepare_progress)
		opts->prepare_progress(opts->prepare_arg, t->prep_done,
		                       t->prep_total > t->prep_done ? t->prep_total : t->prep_done);
}

/* Write the pattern over [start, end) of file i. */
static int fill_range(struct target *t, const struct llmio_job_opts *opts, int fd, unsigned i,
                      uint64_t start, uint64_t end, unsigned char *buf, struct llmio_error *e)
{
	const char *path = t->paths[i];
	const uint64_t size = t->sizes[i], seed = FILL_SEED + i;
	volatile int *stop = opts->stop;
	uint64_t word;
	size_t n, skip;
	int rc;

	while (start < end) {
		if (stop && *stop)
			return llmio_err(
			        e, -EINTR,
			        "interrupted while filling %s; the next run continues the fill",
			        path);
		/* A hole may begin at an odd old EOF; the pattern is defined per 8-byte word. */
		word = start & ~7ULL;
		skip = (size_t)(start - word);
		n = (size_t)min_u64(FILL_CHUNK, end - start);
		target_pattern(buf, (n + skip + 7) & ~(size_t)7, word, seed);
		rc = target_write_all(fd, buf + skip, n, start);
		if (rc == -ENOSPC || rc == -EDQUOT)
			return no_space(e, path, size);
		if (rc)
			return llmio_err(e, rc, "cannot write %s to fill it: %s", path,
			                 strerror(-rc));
		start += n;
		t->prep_done += n;
		tell(t, opts);
	}
	return 0;
}

/*
 * Offset of the first hole in [off, end), or end when there is none.  An unsupported
 * SEEK_HOLE reports no holes, like the kernel's generic implementation.
 */
static int next_hole(int fd, uint64_t off, uint64_t end, uint64_t *hole)
{
	off_t h;

	*hole = end;
	if (off >= end)
		return 0;
	h = lseek(fd, (off_t)off, SEEK_HOLE);
	if (h < 0) {
		if (errno == ENXIO) /* off is at or past EOF: nothing there */
			*hole = off;
		else if (errno != EINVAL)
			return -errno;
		return 0;
	}
	*hole = min_u64((uint64_t)h, end);
	return 0;
}

/*
 * Write the pattern over every hole of [from, min(old, size)) and over all of [old, size).
 * `from` is the first hole already found.
 */
static int fill_file(struct target *t, const struct llmio_job_opts *opts, int fd, unsigned i,
                     uint64_t old, uint64_t from, struct llmio_error *e)
{
	const char *path = t->paths[i];
	const uint64_t size = t->sizes[i];
	uint64_t data_end = min_u64(old, size), off = from, hole, next;
	unsigned char *buf;
	off_t d;
	int rc = 0, errnum;

	buf = malloc(FILL_CHUNK + 16);
	if (!buf)
		return llmio_err(e, -ENOMEM, "out of memory filling %s", path);
	while (off < data_end) {
		rc = next_hole(fd, off, data_end, &hole);
		if (rc) {
			llmio_err(e, rc, "cannot look for holes in %s: %s", path, strerror(-rc));
			goto free_buf;
		}
		if (hole >= data_end)
			break;
		d = lseek(fd, (off_t)hole, SEEK_DATA);
		if (d < 0 && errno != ENXIO) {
			errnum = errno;
			rc = llmio_err(e, -errnum, "cannot look for data in %s: %s", path,
			               strerror(errnum));
			goto free_buf;
		}
		next = d < 0 ? data_end : min_u64((uint64_t)d, data_end);
		/* Only a file changing under us answers like this; move on by one page. */
		if (next <= hole)
			next = min_u64((hole | 4095) + 1, data_end);
		rc = fill_range(t, opts, fd, i, hole, next, buf, e);
		if (rc)
			goto free_buf;
		off = next;
	}
	if (old < size)
		rc = fill_range(t, opts, fd, i, old, size, buf, e);
free_buf:
	free(buf);
	return rc;
}

/* Reserve the extension [old, size) so that a full filesystem fails now, not mid-fill. */
static int preallocate(int fd, const char *path, uint64_t old, uint64_t size, struct llmio_error *e)
{
	int errnum;

	if (old >= size)
		return 0;
	if (fallocate(fd, 0, (off_t)old, (off_t)(size - old)) == 0)
		return 0;
	errnum = errno;
	if (errnum == ENOSPC || errnum == EDQUOT)
		return no_space(e, path, size);
	if (errnum == EFBIG)
		return llmio_err(
		        e, -EFBIG,
		        "%s cannot be %llu bytes long on its filesystem; use a smaller --size",
		        path, (unsigned long long)size);
	if (errnum != EOPNOTSUPP && errnum != ENOSYS)
		return llmio_err(e, -errnum, "cannot preallocate %s: %s", path, strerror(errnum));
	/* No fallocate here (some network filesystems): set the size; the fill allocates. */
	if (ftruncate(fd, (off_t)size) == 0)
		return 0;
	errnum = errno;
	if (errnum == ENOSPC || errnum == EDQUOT)
		return no_space(e, path, size);
	return llmio_err(e, -errnum, "cannot extend %s to %llu bytes: %s", path,
	                 (unsigned long long)size, strerror(errnum));
}

/*
 * fio's fallocate= for a file a write-only job creates: fio lays out (writes) a job's files only
 * when the job reads, and otherwise leaves a new file as its fallocate mode makes it; its
 * native and posix reserve the blocks, which llmio's layout (reserve, then write) matches in
 * size and blocks.  A read's files are written in full whatever the mode, in both.
 */
static bool write_only(const struct llmio_job_opts *o)
{
	return o->rw == LLMIO_RW_WRITE || o->rw == LLMIO_RW_RANDWRITE;
}

static bool fallocate_fills(uint8_t mode)
{
	return mode == LLMIO_FALLOC_NATIVE || mode == LLMIO_FALLOC_POSIX || mode == LLMIO_FALLOC_1;
}

static int lay_out_unfilled(int fd, const char *path, uint64_t size, uint8_t mode,
                            struct llmio_error *e)
{
	int errnum;

	if (mode == LLMIO_FALLOC_KEEP && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)size))
		goto fail;
	if (mode == LLMIO_FALLOC_TRUNCATE && ftruncate(fd, (off_t)size))
		goto fail;
	return 0; /* none (0): empty, the job's writes make it */
fail:
	errnum = errno;
	if (errnum == ENOSPC || errnum == EDQUOT)
		return no_space(e, path, size);
	return llmio_err(e, -errnum, "cannot lay out %s as fallocate=%s: %s", path,
	                 mode == LLMIO_FALLOC_KEEP ? "keep" : "truncate", strerror(errnum));
}

/*
 * Prepare file i: create it when missing, fill what is missing of its first `want` bytes
 * (0: its existing size), and open the job's descriptor.  A file this call created is removed
 * again when it fails before holding any data, or for lack of space; one partly filled is
 * kept, and the next run fills only what is still missing.  Existing files are never removed
 * or shortened.
 */
static int prepare_file(struct target *t, unsigned i, uint64_t want,
                        const struct llmio_job_opts *opts, bool writes, struct llmio_error *e)
{
	const char *path = t->paths[i];
	uint64_t size, old = 0, hole = 0;
	bool exists = false, created = false, filling = false, owned = workdir_owns(path);
	struct stat st;
	int fd = -1, rc, errnum;

	/* in llmio's directory a link is no file of llmio's, and is never followed */
	if ((owned ? lstat(path, &st) : stat(path, &st)) == 0) {
		if (S_ISLNK(st.st_mode))
			return llmio_err(e, -ELOOP,
			                 "%s is a symbolic link in llmio's work directory, which "
			                 "llmio never follows; remove it",
			                 path);
		if (!S_ISREG(st.st_mode))
			return llmio_err(e, -EINVAL,
			                 "%s is not a regular file; remove it or choose another "
			                 "--filename/--directory",
			                 path);
		exists = true;
		old = (uint64_t)st.st_size;
	} else if (errno != ENOENT) {
		return target_path_fail(e, errno, "accessing", path);
	}
	size = want ? want : old;
	if (!size)
		return llmio_err(e, -EINVAL, "--size is needed to create %s%s", path,
		                 exists ? ": it is empty" : "");
	if (!opts->files) /* an explicit file list keeps its exact sizes */
		size -= size % opts->bs;
	if (!size)
		return llmio_err(
		        e, -EINVAL,
		        "%s would hold less than one block of bs=%llu; use a larger --size or a "
		        "smaller bs",
		        path, (unsigned long long)opts->bs);
	t->sizes[i] = size;
	if (t->names_only) {
		t->sizes[i] = opts->bs; /* the engine's I/Os make it: one each */
		return 0;
	}

	/* Someone else's file, and the job only reads: read it as it is (see the top). */
	if (exists && !writes && !owned) {
		if (old < size && !opts->extend)
			return llmio_err(
			        e, -EINVAL,
			        "%s holds %llu bytes, less than the %llu the job reads; llmio "
			        "reads a file it did not create as it is: use --size %llu or "
			        "less, or add --extend to let llmio append the rest",
			        path, (unsigned long long)old, (unsigned long long)size,
			        (unsigned long long)(old - old % opts->bs));
		if (old >= size) {
			rc = target_open_job_fd(t, i, false, opts->direct, e);
			return rc ? rc : target_check_dio_align(t, i, opts->bs, e);
		}
		hole = old; /* --extend: the new part only, never the file's own holes */
	} else if (exists) {
		/* A complete file is reused untouched: read-only access suffices to tell. */
		fd = workdir_open(path, O_RDONLY | O_CLOEXEC, 0);
		if (fd < 0)
			return target_path_fail(e, errno, "opening", path);
		rc = next_hole(fd, 0, min_u64(old, size), &hole);
		close(fd);
		fd = -1;
		if (rc)
			return llmio_err(e, rc, "cannot look for holes in %s: %s", path,
			                 strerror(-rc));
		if (old >= size && hole >= size) {
			rc = target_open_job_fd(t, i, writes, opts->direct, e);
			return rc ? rc : target_check_dio_align(t, i, opts->bs, e);
		}
	}
	if (opts->readonly)
		return llmio_err(e, -EPERM,
		                 "--readonly: %s would have to be %s to %llu bytes first; llmio "
		                 "writes nothing under --readonly: lay it out without it, or read "
		                 "what is there (a smaller --size)",
		                 path, exists ? "filled" : "created", (unsigned long long)size);
	if (exists) {
		fd = workdir_open(path, O_WRONLY | O_CLOEXEC, 0);
	} else {
		fd = workdir_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		created = fd >= 0;
	}
	if (fd < 0) {
		if (errno == ENOENT)
			return llmio_err(
			        e, -ENOENT,
			        "cannot create %s: its directory does not exist; create it or "
			        "choose another --filename",
			        path);
		return target_path_fail(e, errno, exists ? "opening to fill" : "creating", path);
	}
	/* Refuse O_DIRECT and bad alignment before spending minutes on a fill. */
	rc = target_open_job_fd(t, i, writes, opts->direct, e);
	if (!rc)
		rc = target_check_dio_align(t, i, opts->bs, e);
	/* fio's fill_device: the job's writes fill the filesystem; nothing is laid out first */
	if (!rc && write_only(opts) && opts->fill_device) {
		close(fd);
		if (created && t->created)
			t->created[i] = true;
		return 0;
	}
	if (!rc && created && write_only(opts) && !fallocate_fills(opts->fallocate)) {
		rc = lay_out_unfilled(fd, path, size, opts->fallocate, e);
		if (rc)
			goto close_fill_fd;
		close(fd);
		if (t->created)
			t->created[i] = true;
		return 0;
	}
	if (!rc)
		rc = preallocate(fd, path, old, size, e);
	if (rc)
		goto close_fill_fd;
	filling = true;
	tell(t, opts); /* where the layout stands before this file's first write */
	rc = fill_file(t, opts, fd, i, old, hole, e);
	if (rc)
		goto close_fill_fd;
	if (fdatasync(fd)) {
		errnum = errno;
		rc = errnum == ENOSPC || errnum == EDQUOT
		             ? no_space(e, path, size)
		             : llmio_err(e, -errnum, "cannot sync %s after filling it: %s", path,
		                         strerror(errnum));
		goto close_fill_fd;
	}
	/*
	 * Leave the page cache as a later run finds a reused file, so that the first run of a
	 * series is not the only one to start with a warm cache.
	 */
	posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_DONTNEED);
	close(fd);
	if (created && t->created)
		t->created[i] = true;
	return 0;

close_fill_fd:
	close(fd);
	if (created && (!filling || rc == -ENOSPC || !owned)) {
		/*
		 * Ours, and still empty, or taking the space the user needs for a retry, or
		 * outside llmio's directory, where a later run would read it as it is.
		 */
		if (t->fds[i] >= 0)
			close(t->fds[i]);
		t->fds[i] = -1;
		unlink(path);
		if (rc == -EINTR)
			llmio_err(e, rc,
			          "interrupted while filling %s, which llmio had created for "
			          "this job; "
			          "removed it",
			          path);
	}
	return rc;
}

/* prepare_file(), telling the layout's progress (t->prep_done). */
int target_prepare_file(struct target *t, unsigned i, uint64_t want,
                        const struct llmio_job_opts *opts, bool writes, struct llmio_error *e)
{
	const uint64_t before = t->prep_done;
	/* the file's bytes count as laid out once it is ready, written or found complete */
	int rc = prepare_file(t, i, want, opts, writes, e);

	if (!rc)
		t->prep_done = before + t->sizes[i];
	return rc;
}
