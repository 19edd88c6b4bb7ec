// SPDX-License-Identifier: MIT
/*
 * Targets: open the job's files or raw block device and lay them out (--filename,
 * --directory's nrfiles, an explicit file list), with O_DIRECT alignment checked up front.
 * The parts live beside this file: target_fill.c prepares and fills files (whose files llmio
 * may write, and why it fills every byte a job reads), target_blockdev.c protects raw devices,
 * target_facts.c collects the facts of the block device underneath, and workdir.c keeps
 * llmio's own directories.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "base/error.h"
#include "job/target_internal.h"
#include "engine/engine.h"

/* An open() or stat() failure, with the fix for the common causes; `what` is "opening"... */
int target_path_fail(struct llmio_error *e, int errnum, const char *what, const char *path)
{
	if (errnum == EACCES || errnum == EPERM)
		return llmio_err(e, -EACCES,
		                 "permission denied %s %s; fix its permissions or run as its owner",
		                 what, path);
	if (errnum == EROFS)
		return llmio_err(e, -EROFS,
		                 "%s %s failed: it is on a read-only filesystem or device; choose "
		                 "another --filename/--directory",
		                 what, path);
	return llmio_err(e, -errnum, "%s %s failed: %s", what, path, strerror(errnum));
}

/*
 * open() of a file or device the job does I/O to.  O_NOATIME (t->noatime) spares every read
 * the access-time check (t/io_uring opens its files so too), but only the owner (or
 * CAP_FOWNER) may ask: anyone else's file opens without it.
 */
int target_open_data(const struct target *t, const char *path, int flags)
{
	int fd = workdir_open(path, flags | (t->noatime ? O_NOATIME : 0), 0);

	if (fd < 0 && errno == EPERM && t->noatime)
		fd = workdir_open(path, flags, 0);
	return fd;
}

/* Open the job's descriptor, naming the fix when the filesystem refuses O_DIRECT. */
int target_open_job_fd(struct target *t, unsigned i, bool writes, bool direct,
                       struct llmio_error *e)
{
	int flags = (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC | (direct ? O_DIRECT : 0);
	int fd = target_open_data(t, t->paths[i], flags);

	if (fd < 0 && errno == EINVAL && direct)
		return llmio_err(e, -EINVAL,
		                 "the filesystem of %s does not support O_DIRECT; use --direct=0",
		                 t->paths[i]);
	if (fd < 0)
		return target_path_fail(e, errno, writes ? "opening for writing" : "opening",
		                        t->paths[i]);
	t->fds[i] = fd;
	return 0;
}

int target_check_bs(const struct target *t, const char *path, uint64_t bs, struct llmio_error *e)
{
	uint64_t up;

	if (!t->direct || bs % t->align == 0)
		return 0;
	up = (bs + t->align - 1) / t->align * t->align;
	if (t->is_blockdev)
		return llmio_err(
		        e, -EINVAL,
		        "bs=%llu is not a multiple of the logical block size %u of %s, which "
		        "O_DIRECT needs; use bs=%llu or --direct=0",
		        (unsigned long long)bs, t->align, path, (unsigned long long)up);
	if (t->dev.known && t->dev.name[0])
		return llmio_err(
		        e, -EINVAL,
		        "bs=%llu is not a multiple of the logical block size %u of %s (the "
		        "device holding %s), which O_DIRECT needs; use bs=%llu or --direct=0",
		        (unsigned long long)bs, t->align, t->dev.name, path,
		        (unsigned long long)up);
	return llmio_err(
	        e, -EINVAL,
	        "bs=%llu is not a multiple of the block size %u that O_DIRECT needs on %s; "
	        "use bs=%llu or --direct=0",
	        (unsigned long long)bs, t->align, path, (unsigned long long)up);
}

/*
 * The filesystem's O_DIRECT alignment for an open file (statx STATX_DIOALIGN, Linux 6.1+):
 * true when the filesystem says, with offset_align 0 meaning it does no direct I/O at all
 * (ext4 data=journal accepts O_DIRECT at open and does buffered I/O).
 */
static bool dio_align_known(int fd, unsigned *offset_align, unsigned *mem_align)
{
#ifdef STATX_DIOALIGN
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0 ||
	    !(sx.stx_mask & STATX_DIOALIGN))
		return false;
	*offset_align = sx.stx_dio_offset_align;
	*mem_align = sx.stx_dio_mem_align;
	return true;
#else
	(void)fd;
	(void)offset_align;
	(void)mem_align;
	return false;
#endif
}

/*
 * The filesystem's own O_DIRECT alignment, which may be stricter than the device's; and a
 * filesystem that accepts O_DIRECT at open but would do buffered I/O is reported rather than
 * measured as direct.
 */
int target_check_dio_align(struct target *t, unsigned i, uint64_t bs, struct llmio_error *e)
{
	unsigned off_align, mem_align;

	if (!t->direct || !dio_align_known(t->fds[i], &off_align, &mem_align))
		return 0;
	if (off_align == 0)
		return llmio_err(e, -EINVAL,
		                 "the filesystem of %s does not support O_DIRECT; use --direct=0",
		                 t->paths[i]);
	if (off_align > t->align)
		t->align = off_align;
	if (mem_align > t->align)
		t->align = mem_align;
	return target_check_bs(t, t->paths[i], bs, e);
}

/*
 * Asked of the filesystem itself, so that callers choosing O_DIRECT by default (workloads,
 * quick) never have to read an error message to learn it: a probe file created with O_DIRECT
 * in dir, then its STATX_DIOALIGN.  The file is named after this process and removed at once.
 */
static int direct_probe(const char *dir, struct llmio_error *e)
{
	char path[LLMIO_PATH_MAX + 32];
	unsigned off_align = 1, mem_align;
	int fd, errnum;

	if (snprintf(path, sizeof(path), "%s/.llmio-direct-probe.%ld", dir, (long)getpid()) >=
	    (int)sizeof(path))
		return llmio_err(e, -ENAMETOOLONG, "directory name too long: %s", dir);
	fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_DIRECT, 0600);
	if (fd < 0 && errno == EINVAL) {
		/* the file was created before the filesystem refused the flag (O_EXCL: ours) */
		unlink(path);
		fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			unlink(path);
			return llmio_err(e, -EINVAL,
			                 "the filesystem of %s does not support O_DIRECT", dir);
		}
	}
	if (fd < 0) {
		errnum = errno;
		return llmio_err(e, -errnum, "cannot create a probe file in %s: %s", dir,
		                 strerror(errnum));
	}
	dio_align_known(fd, &off_align, &mem_align);
	close(fd);
	unlink(path);
	if (off_align == 0)
		return llmio_err(
		        e, -EINVAL,
		        "the filesystem of %s accepts O_DIRECT but does buffered I/O (statx "
		        "STATX_DIOALIGN: no direct I/O)",
		        dir);
	return 0;
}

/* The public probe explains itself in a caller's buffer: cmd_quick.c still passes one. */
int llmio_direct_probe(const char *dir, char *why, size_t len)
{
	struct llmio_error e;
	int rc;

	llmio_error_init(&e);
	rc = direct_probe(dir, &e);
	if (rc && why && len)
		snprintf(why, len, "%s", e.msg);
	return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Target                                                                                   */

static int alloc_files(struct target *t, unsigned n)
{
	unsigned i;

	t->fds = calloc(n, sizeof(*t->fds));
	t->sizes = calloc(n, sizeof(*t->sizes));
	t->paths = calloc(n, sizeof(*t->paths));
	t->created = calloc(n, sizeof(*t->created));
	if (!t->fds || !t->sizes || !t->paths || !t->created)
		return -ENOMEM;
	t->nfiles = n;
	for (i = 0; i < n; i++)
		t->fds[i] = -1;
	for (i = 0; i < n; i++) {
		t->paths[i] = malloc(LLMIO_PATH_MAX);
		if (!t->paths[i])
			return -ENOMEM;
	}
	return 0;
}

/* The directory part of path ("." when there is none). */
static void parent_dir(const char *path, char *out, size_t len)
{
	char *slash;

	copy_str(out, len, path);
	slash = strrchr(out, '/');
	if (!slash)
		copy_str(out, len, ".");
	else if (slash == out)
		out[1] = '\0';
	else
		*slash = '\0';
}

int target_fs_free(const struct llmio_job_opts *opts, uint64_t *bytes, struct llmio_error *e)
{
	const char *name = opts->files && opts->nfiles_list ? opts->files[0].path
	                   : opts->directory[0]             ? opts->directory
	                                                    : opts->filename;
	char where[LLMIO_PATH_MAX];
	struct statvfs vfs;
	struct stat st;
	const bool there = stat(name, &st) == 0;

	*bytes = 0;
	if (there && S_ISBLK(st.st_mode))
		return 0;
	if (there && S_ISDIR(st.st_mode))
		copy_str(where, sizeof(where), name);
	else
		parent_dir(name, where, sizeof(where)); /* a file's filesystem: its directory's */
	if (statvfs(where, &vfs))
		return target_path_fail(e, errno, "measuring the free space of", where);
	*bytes = (uint64_t)vfs.f_bfree * vfs.f_frsize;
	if (!*bytes)
		return llmio_err(e, -ENOSPC,
		                 "fill_device: the filesystem of %s has no free space to fill; "
		                 "free some, or give size",
		                 where);
	return 0;
}

/* The last component of a path. */
static const char *target_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int open_filename(struct target *t, const struct llmio_job_opts *opts, bool writes,
                         struct llmio_error *e)
{
	const char *name = opts->filename;
	char parent[LLMIO_PATH_MAX];
	struct stat st;
	int rc;

	if (alloc_files(t, 1))
		return llmio_err(e, -ENOMEM, "out of memory opening %s", name);
	copy_str(t->paths[0], LLMIO_PATH_MAX, name);

	if (stat(name, &st) == 0) {
		if (S_ISBLK(st.st_mode)) {
			t->is_blockdev = true;
			return target_open_blockdev(t, opts, &st, writes, e);
		}
		if (S_ISDIR(st.st_mode))
			return llmio_err(
			        e, -EINVAL,
			        "%s is a directory; use --directory %s instead of --filename", name,
			        name);
		if (S_ISCHR(st.st_mode) && !strncmp(target_basename(name), "dax", 3)) {
			t->is_blockdev = true; /* a raw device: nothing to lay out or extend */
			return target_open_devdax(t, opts, &st, writes, e);
		}
		if (S_ISCHR(st.st_mode) && !strncmp(target_basename(name), "ng", 2))
			return llmio_err(e, -EINVAL,
			                 "%s is an NVMe generic (character) device: give the "
			                 "namespace's block device (/dev/nvme%s) with --ioengine "
			                 "uring_cmd, which does passthrough on %s",
			                 name, target_basename(name) + 2, name);
		if (!S_ISREG(st.st_mode))
			return llmio_err(
			        e, -EINVAL,
			        "%s is not a regular file or a block device; choose another "
			        "--filename",
			        name);
	} else if (errno == ENOENT) {
		/* Not there yet: its directory tells the filesystem, before anything is made. */
		parent_dir(name, parent, sizeof(parent));
		if (stat(parent, &st)) {
			if (errno != ENOENT)
				return target_path_fail(e, errno, "accessing", parent);
			return llmio_err(
			        e, -ENOENT,
			        "cannot create %s: directory %s does not exist; create it or "
			        "choose another --filename",
			        name, parent);
		}
		/* A mistyped device name must not turn into a RAM-backed file in /dev. */
		if (target_is_devtmpfs(parent, &st))
			return llmio_err(
			        e, -ENOENT,
			        "%s does not exist: there is no such device; check the name "
			        "(lsblk lists devices)",
			        name);
	} else {
		return target_path_fail(e, errno, "accessing", name);
	}

	target_file_dev_facts(t, name, &st);
	t->align = t->dev.logical_block_size > 512 ? t->dev.logical_block_size : 512;
	rc = target_check_bs(t, name, opts->bs, e);
	if (rc)
		return rc;
	if (opts->size && opts->size < opts->bs)
		return llmio_err(
		        e, -EINVAL,
		        "--size %llu is smaller than bs=%llu for %s; use --size %llu or more",
		        (unsigned long long)opts->size, (unsigned long long)opts->bs, name,
		        (unsigned long long)opts->bs);
	/* the layout's progress: the job's size, or the file's own (0 when it does not exist) */
	t->prep_total = opts->size ? opts->size : (uint64_t)st.st_size;
	return target_prepare_file(t, 0, opts->size, opts, writes, e);
}

static int open_directory(struct target *t, const struct llmio_job_opts *opts, bool writes,
                          struct llmio_error *e)
{
	char dir[LLMIO_PATH_MAX], work[LLMIO_PATH_MAX];
	unsigned n = opts->nrfiles ? opts->nrfiles : 1, i;
	bool made;
	uint64_t per = 0;
	struct stat st;
	size_t len;
	int rc;

	copy_str(dir, sizeof(dir), opts->directory);
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		dir[--len] = '\0';
	if (stat(dir, &st)) {
		if (errno == ENOENT)
			return llmio_err(e, -ENOENT,
			                 "directory %s does not exist; create it or choose another "
			                 "--directory",
			                 dir);
		return target_path_fail(e, errno, "accessing", dir);
	}
	if (!S_ISDIR(st.st_mode))
		return llmio_err(e, -EINVAL,
		                 "%s is not a directory; use --filename %s, or another --directory",
		                 dir, dir);
	if (opts->size) {
		per = opts->size / n;
		per -= per % opts->bs;
		if (!per)
			return llmio_err(
			        e, -EINVAL,
			        "--size %llu split over nrfiles=%u files in %s leaves less than "
			        "bs=%llu each; use --size %llu or more, or fewer --nrfiles",
			        (unsigned long long)opts->size, n, dir,
			        (unsigned long long)opts->bs, (unsigned long long)opts->bs * n);
	}

	/* llmio's names live in llmio's own directory, where they cannot be a user's. */
	rc = workdir_make(dir, work, sizeof(work), &made, e);
	if (rc)
		return rc;
	if (alloc_files(t, n))
		return llmio_err(e, -ENOMEM, "out of memory opening %u files in %s", n, dir);
	for (i = 0; i < n; i++)
		if ((size_t)snprintf(t->paths[i], LLMIO_PATH_MAX, "%s/llmio.%u", work, i) >=
		    LLMIO_PATH_MAX)
			return llmio_err(
			        e, -ENAMETOOLONG,
			        "directory path %s is too long; choose a shorter --directory", dir);

	target_file_dev_facts(t, dir, &st);
	t->align = t->dev.logical_block_size > 512 ? t->dev.logical_block_size : 512;
	rc = target_check_bs(t, dir, opts->bs, e);
	t->prep_total = per * n; /* 0 without --size: the files' own sizes, not known yet */
	for (i = 0; i < n && !rc; i++)
		rc = target_prepare_file(t, i, per, opts, writes, e);
	if (rc && made)
		llmio_work_dir_prune(work); /* a failed first run leaves nothing behind */
	return rc;
}

/*
 * A file the job writes from scratch, as a program saving a checkpoint does: created empty (an
 * existing file of that name is truncated), not preallocated.
 */
static int open_fresh(struct target *t, unsigned i, uint64_t size,
                      const struct llmio_job_opts *opts, struct llmio_error *e)
{
	const char *path = t->paths[i];
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return llmio_err(
		        e, -EINVAL,
		        "%s is not a regular file; remove it or choose another --directory", path);
	fd = workdir_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return target_path_fail(e, errno, "creating", path);
	close(fd);
	t->sizes[i] = size;
	rc = target_open_job_fd(t, i, true, opts->direct, e);
	return rc ? rc : target_check_dio_align(t, i, opts->bs, e);
}

/* An explicit file list (workload recipes, replay): exact sizes, all on one filesystem. */
static int open_list(struct target *t, const struct llmio_job_opts *opts, bool writes,
                     struct llmio_error *e)
{
	char parent[LLMIO_PATH_MAX];
	struct stat st;
	unsigned i;
	int rc = 0;

	if (alloc_files(t, opts->nfiles_list))
		return llmio_err(e, -ENOMEM, "out of memory opening %u files", opts->nfiles_list);
	for (i = 0; i < opts->nfiles_list; i++)
		if ((size_t)snprintf(t->paths[i], LLMIO_PATH_MAX, "%s", opts->files[i].path) >=
		    LLMIO_PATH_MAX)
			return llmio_err(e, -ENAMETOOLONG,
			                 "path %.64s... is too long; choose a shorter --directory",
			                 opts->files[i].path);
	parent_dir(t->paths[0], parent, sizeof(parent));
	if (stat(parent, &st)) {
		if (errno == ENOENT)
			return llmio_err(e, -ENOENT,
			                 "directory %s does not exist; create it or choose another "
			                 "--directory",
			                 parent);
		return target_path_fail(e, errno, "accessing", parent);
	}
	target_file_dev_facts(t, parent, &st);
	t->align = t->dev.logical_block_size > 512 ? t->dev.logical_block_size : 512;
	rc = target_check_bs(t, parent, opts->bs, e);
	for (i = 0; i < opts->nfiles_list; i++)
		if (!(opts->files[i].flags & LLMIO_FILE_FRESH)) /* a fresh file is not laid out */
			t->prep_total += opts->files[i].size;
	for (i = 0; i < opts->nfiles_list && !rc; i++) {
		if (opts->files[i].flags & LLMIO_FILE_FRESH)
			rc = open_fresh(t, i, opts->files[i].size, opts, e);
		else
			rc = target_prepare_file(t, i, opts->files[i].size, opts, writes, e);
	}
	return rc;
}

static int open_target(struct target *t, const struct llmio_job_opts *opts, bool writes,
                       bool names_only, struct llmio_error *e)
{
	bool file = opts->filename[0], dir = opts->directory[0];
	unsigned i;
	int rc;

	memset(t, 0, sizeof(*t));
	t->names_only = names_only;
	if (opts->files && opts->nfiles_list)
		file = dir = false;
	else if (file == dir)
		return llmio_err(e, -EINVAL, "give --filename or --directory%s",
		                 file ? ", not both" : "");
	if (!opts->bs)
		return llmio_err(e, -EINVAL, "bs=0 is not a block size; give one such as bs=4k");
	t->direct = opts->direct;
	t->noatime = opts->noatime;
	t->writable = writes;
	if ((file && strstr(opts->filename, "://")) || (dir && strstr(opts->directory, "://")))
		return llmio_err(e, -EINVAL,
		                 "%s is a URL, not a file: use an engine that opens URL targets "
		                 "(--engine s3 for s3://)",
		                 file ? opts->filename : opts->directory);

	if (file)
		rc = open_filename(t, opts, writes, e);
	else if (dir)
		rc = open_directory(t, opts, writes, e);
	else
		rc = open_list(t, opts, writes, e);
	if (!rc && names_only && t->is_blockdev)
		rc = llmio_err(e, -EINVAL,
		               "%s is a device: an engine that makes files makes regular files; "
		               "give a --filename or --directory on a filesystem",
		               t->paths[0]);
	if (rc) {
		target_close(t);
		return rc;
	}
	for (i = 0; i < t->nfiles; i++)
		t->total_size += t->sizes[i];
	return 0;
}

int target_open(struct target *t, const struct llmio_job_opts *opts, bool writes,
                struct llmio_error *e)
{
	return open_target(t, opts, writes, false, e);
}

int target_open_names(struct target *t, const struct llmio_job_opts *opts, struct llmio_error *e)
{
	return open_target(t, opts, false, true, e);
}

int target_open_engine(struct target *t, const struct llmio_job_opts *opts, bool writes,
                       const struct engine_ops *eng, const void *eopts, struct llmio_error *e)
{
	const bool dir = opts->directory[0];
	const struct engine_target_req rq = {
	        .name = dir ? opts->directory : opts->filename,
	        .directory = dir,
	        .nrfiles = opts->nrfiles,
	        .size = opts->size,
	        .bs = opts->bs,
	        .writes = writes,
	        .random_writes =
	                writes && (opts->rw == LLMIO_RW_RANDWRITE || opts->rw == LLMIO_RW_RANDRW),
	        .allow_destructive = opts->allow_destructive,
	        .files = opts->nfiles_list ? opts->files : NULL,
	        .nfiles = opts->nfiles_list,
	        .stop = opts->stop,
	};
	struct engine_target et = {0};
	int rc;

	memset(t, 0, sizeof(*t));
	if (!rq.files && (!dir && !opts->filename[0]))
		return llmio_err(e, -EINVAL,
		                 "engine %s needs --filename or --directory naming "
		                 "its target (such as s3://bucket/key)",
		                 eng->name);
	if (!opts->bs)
		return llmio_err(e, -EINVAL, "bs=0 is not a block size; give one such as bs=4k");
	rc = eng->target_resolve(eopts, &rq, &et, e);
	if (!rc && !et.n)
		rc = llmio_err(e, -ENOENT, "%s holds nothing to do I/O to", rq.name);
	if (!rc) {
		t->nfiles = et.n;
		t->paths = et.names;
		t->sizes = et.sizes;
		t->fds = malloc(et.n * sizeof(*t->fds));
		if (!t->fds)
			rc = llmio_err(e, -ENOMEM, "out of memory for %u objects", et.n);
		for (unsigned i = 0; t->fds && i < et.n; i++) {
			t->fds[i] = -1;
			t->total_size += t->sizes[i];
		}
		t->writable = writes;
		t->align = 1;
		et = (struct engine_target){0};
	}
	for (unsigned i = 0; i < et.n; i++)
		free(et.names[i]);
	free(et.names);
	free(et.sizes);
	if (rc)
		target_close(t);
	return rc;
}

void target_close(struct target *t)
{
	unsigned i;

	for (i = 0; i < t->nfiles; i++) {
		if (t->fds && t->fds[i] >= 0)
			close(t->fds[i]);
		if (t->paths)
			free(t->paths[i]);
	}
	free(t->fds);
	free(t->sizes);
	free(t->paths);
	free(t->created);
	memset(t, 0, sizeof(*t));
}

int target_unlink_created(struct target *t, struct llmio_error *e)
{
	int rc = 0;

	for (unsigned i = 0; t->created && i < t->nfiles; i++) {
		if (!t->created[i])
			continue;
		if (unlink(t->paths[i]) && errno != ENOENT && !rc)
			rc = llmio_err(e, -errno,
			               "unlink: cannot remove %s, which llmio created: %s",
			               t->paths[i], strerror(errno));
		t->created[i] = false;
	}
	return rc;
}

int target_advise(const int *fds, unsigned n, int advice)
{
	int rc = 0, e;

	for (unsigned i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		/* the advice is of the open file (its readahead), whatever the range */
		e = posix_fadvise(fds[i], 0, 0, advice);
		if (e && !rc)
			rc = -e;
	}
	return rc;
}

int target_invalidate(const struct target *t)
{
	unsigned i;
	int rc = 0, e;

	for (i = 0; i < t->nfiles; i++) {
		if (t->fds[i] < 0)
			continue;
		/* DONTNEED skips dirty pages, so write them back first. */
		if (fdatasync(t->fds[i]) && errno != EINVAL && errno != EROFS && !rc)
			rc = -errno;
		e = posix_fadvise(t->fds[i], 0, 0, POSIX_FADV_DONTNEED);
		if (e && !rc)
			rc = -e;
		/* The buffer cache of a raw device; needs CAP_SYS_ADMIN, and is only a bonus. */
		if (t->is_blockdev)
			ioctl(t->fds[i], BLKFLSBUF, 0);
	}
	return rc;
}
