/* SPDX-License-Identifier: MIT */
/*
 * The store's targets and their layout.  Each target holds one store file, preallocated with
 * fallocate to `capacity` bytes (no file per tensor): a named file that must not exist yet (the
 * store never writes over a user's file), a file the store creates in llmio's own directory of
 * a named directory (llmio_work_dir), or a raw block device, opened with the consent rules of
 * jobs (target_open: --allow-destructive, --force).  Files the store created are removed when
 * it is destroyed.
 *
 * Stale files.  A store file in llmio's directory is named store.PID.ADDRESS.TARGET and its
 * creator holds flock(LOCK_EX) on it for as long as the store lives; the kernel drops the lock
 * when the process ends, however it ends.  A process killed outright (SIGKILL, a crash) leaves
 * its file behind, preallocated to the full capacity, so a new store in that directory removes
 * every store file whose lock it can take and whose process is gone (both: a live creator may
 * not have locked its file yet, and a PID may have been reused by a process that never locked
 * it), and counts them in its statistics (reclaimed_files, reclaimed_bytes).
 *
 * Striping: the logical space is cut into stripe units; unit u lives on target u % ntargets at
 * offset (u / ntargets) * stripe, so a tensor larger than one unit spreads over every target
 * (SSDTrain stripes activations over several SSDs the same way).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "llmio/job.h"
#include "store/store_internal.h"

void store_place(const struct llmio_store *s, uint64_t off, uint16_t *file, uint64_t *foff)
{
	uint64_t u = off / s->stripe;

	*file = (uint16_t)(u % s->ntg);
	*foff = (u / s->ntg) * s->stripe + off % s->stripe;
}

void store_piece(const struct llmio_store *s, const struct store_extent *x, uint64_t len,
                 uint32_t k, uint64_t *lo, uint64_t *hi, uint64_t *d0, uint64_t *d1)
{
	uint64_t u = x->start / s->stripe + k, end = x->start + x->alen;
	uint64_t first = x->start + x->pad, last = first + len;

	*lo = k ? u * s->stripe : x->start;
	*hi = (u + 1) * s->stripe < end ? (u + 1) * s->stripe : end;
	*d0 = first > *lo ? first : *lo;
	*d1 = last < *hi ? last : *hi;
	if (*d1 < *d0) /* a last unit of padding only (cannot happen with pad < alignment) */
		*d1 = *d0;
}

/* Remove name in work if it is a store file of a process that is gone (see the top). */
static void reclaim_one(struct llmio_store *s, int dirfd, const char *name)
{
	char *end;
	long pid = strtol(name + 6, &end, 10);
	struct stat sb;
	int fd;

	if (strncmp(name, "store.", 6) || end == name + 6 || *end != '.' || pid <= 0 ||
	    pid == (long)getpid())
		return;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!fstat(fd, &sb) && S_ISREG(sb.st_mode) && !flock(fd, LOCK_EX | LOCK_NB) &&
	    kill((pid_t)pid, 0) && errno == ESRCH && !unlinkat(dirfd, name, 0)) {
		s->st.reclaimed_files++;
		s->st.reclaimed_bytes += (uint64_t)sb.st_size;
	}
	close(fd); /* drops the lock */
}

/* Remove the stale store files of dead processes from llmio's directory work. */
static void reclaim_stale(struct llmio_store *s, const char *work)
{
	DIR *d = opendir(work);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		reclaim_one(s, dirfd(d), de->d_name);
	closedir(d);
}

/* The path of the store file for target i in a user's directory (llmio's directory in it). */
static int dir_file(struct llmio_store *s, struct store_target *st, const char *dir, unsigned i,
                    struct llmio_error *e)
{
	int rc = llmio_work_dir(dir, st->workdir, sizeof(st->workdir), e);

	if (rc) {
		llmio_err_prefix(e, "store target %s", dir);
		return rc;
	}
	reclaim_stale(s, st->workdir);
	if ((size_t)snprintf(st->path, sizeof(st->path), "%s/store.%ld.%p.%u", st->workdir,
	                     (long)getpid(), (void *)s, i) >= sizeof(st->path))
		return llmio_err(e, -ENAMETOOLONG, "store target %s: the path is too long", dir);
	return 0;
}

/* Create the store file (never an existing one) and open it through target_open. */
static int open_file(struct llmio_store *s, struct store_target *st, struct llmio_error *e)
{
	struct llmio_job_opts *jo = calloc(1, sizeof(*jo));
	struct llmio_file f = {.path = st->path, .size = st->size, .flags = LLMIO_FILE_FRESH};
	int fd, rc, err;

	if (!jo)
		return llmio_err(e, -ENOMEM, "out of memory opening %s", st->path);
	fd = open(st->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = errno;
		free(jo);
		if (err == EEXIST)
			return llmio_err(
			        e, -EEXIST,
			        "store target %s exists: the store never overwrites a file it "
			        "did not create; remove it, name a new file, or give a "
			        "directory",
			        st->path);
		return llmio_err(e, -err, "cannot create store file %s: %s", st->path,
		                 strerror(err));
	}
	st->created = true;
	/* held until the store is destroyed: tells a later store that this file is in use */
	if (flock(fd, LOCK_EX)) {
		err = errno;
		close(fd);
		free(jo);
		return llmio_err(e, -err, "cannot lock store file %s: %s", st->path, strerror(err));
	}
	st->lock_fd = fd;
	llmio_job_opts_init(jo);
	jo->files = &f;
	jo->nfiles_list = 1;
	jo->bs = s->align;
	jo->direct = s->o.direct;
	rc = target_open(&st->t, jo, true, e);
	free(jo);
	if (rc) {
		llmio_err_prefix(e, "store target %s", st->path);
		return rc;
	}
	if (fallocate(st->t.fds[0], 0, 0, (off_t)st->size)) {
		err = errno;
		if (err == ENOSPC || err == EDQUOT)
			return llmio_err(
			        e, -ENOSPC,
			        "store target %s: no space for its %llu bytes of capacity; "
			        "free space there or lower capacity",
			        st->path, (unsigned long long)st->size);
		if (err != EOPNOTSUPP || ftruncate(st->t.fds[0], (off_t)st->size))
			return llmio_err(e, -err,
			                 "store target %s: cannot preallocate %llu bytes: %s",
			                 st->path, (unsigned long long)st->size, strerror(err));
	}
	st->t.sizes[0] = st->size;
	return 0;
}

/* A raw block device, with the consent rules of a job that writes (target_open). */
static int open_device(struct llmio_store *s, struct store_target *st, struct llmio_error *e)
{
	struct llmio_job_opts *jo = calloc(1, sizeof(*jo));
	uint64_t devsize = 0;
	int fd, rc;

	if (!jo)
		return llmio_err(e, -ENOMEM, "out of memory opening %s", st->path);
	/* Named in the store's terms (capacity), not the job's (--size) that target_open uses. */
	fd = open(st->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && ioctl(fd, BLKGETSIZE64, &devsize) == 0 && devsize < st->size) {
		close(fd);
		free(jo);
		return llmio_err(e, -EINVAL,
		                 "store target %s holds %llu bytes, less than capacity %llu; lower "
		                 "capacity",
		                 st->path, (unsigned long long)devsize,
		                 (unsigned long long)st->size);
	}
	if (fd >= 0)
		close(fd);
	llmio_job_opts_init(jo);
	snprintf(jo->filename, sizeof(jo->filename), "%s", st->path);
	jo->bs = s->align;
	jo->size = st->size;
	jo->direct = s->o.direct;
	jo->allow_destructive = s->o.allow_destructive;
	jo->force = s->o.force;
	rc = target_open(&st->t, jo, true, e);
	free(jo);
	if (rc) {
		if (e) {
			struct llmio_error inner = *e;

			llmio_err(e, rc,
			          "store target %s: %s (store options allow_destructive, force)",
			          st->path, inner.msg);
		}
		return rc;
	}
	return 0;
}

int store_targets_open(struct llmio_store *s, struct llmio_error *e)
{
	struct stat sb;
	int rc = 0;

	s->tg = calloc(s->o.ntargets, sizeof(*s->tg));
	s->fds = calloc(s->o.ntargets, sizeof(*s->fds));
	s->sizes = calloc(s->o.ntargets, sizeof(*s->sizes));
	if (!s->tg || !s->fds || !s->sizes)
		return llmio_err(e, -ENOMEM, "out of memory opening the store's targets");
	for (unsigned i = 0; i < s->o.ntargets && !rc; i++) {
		struct store_target *st = &s->tg[i];
		const char *p = s->o.targets[i];

		s->ntg = i + 1;
		st->lock_fd = -1;
		st->size = s->o.capacity;
		if (!p || !p[0])
			return llmio_err(e, -EINVAL,
			                 "store target %u is empty; name a file, a "
			                 "directory or a block device",
			                 i);
		if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			rc = dir_file(s, st, p, i, e);
			if (!rc)
				rc = open_file(s, st, e);
		} else if (stat(p, &sb) == 0 && S_ISBLK(sb.st_mode)) {
			snprintf(st->path, sizeof(st->path), "%s", p);
			rc = open_device(s, st, e);
		} else {
			snprintf(st->path, sizeof(st->path), "%s", p);
			rc = open_file(s, st, e);
		}
		if (!rc) {
			s->fds[i] = st->t.fds[0];
			s->sizes[i] = st->size;
		}
	}
	return rc;
}

void store_targets_close(struct llmio_store *s)
{
	for (unsigned i = 0; s->tg && i < s->ntg; i++) {
		struct store_target *st = &s->tg[i];

		target_close(&st->t);
		if (st->created)
			unlink(st->path);
		if (st->lock_fd >= 0)
			close(st->lock_fd); /* after the unlink: no later store sees the file
			                       unlocked */
		if (st->workdir[0])
			llmio_work_dir_prune(st->workdir);
	}
	free(s->tg);
	free(s->fds);
	free(s->sizes);
	s->tg = NULL;
	s->fds = NULL;
	s->sizes = NULL;
	s->ntg = 0;
}
