/* SPDX-License-Identifier: MIT */
/*
 * What the files of the target module share (target.c: open and layout; target_fill.c:
 * preparing and filling files; target_blockdev.c: raw devices; target_facts.c: sysfs and
 * mount facts; workdir.c: llmio's own directories).  Internal to src/job/target*.c and
 * workdir.c; the rest of llmio uses job/target.h.
 */
#ifndef LLMIO_TARGET_INTERNAL_H
#define LLMIO_TARGET_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "base/error.h"
#include "job/target.h"

/* An open() or stat() failure, with the fix for the common causes; `what` is "opening"... */
int target_path_fail(struct llmio_error *e, int errnum, const char *what, const char *path);

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Copy a string into dst[size], truncated when it does not fit. */
static inline void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* target.c: the job's descriptor and the O_DIRECT checks. */
int target_open_data(const struct target *t, const char *path, int flags);
int target_open_job_fd(struct target *t, unsigned i, bool writes, bool direct,
                       struct llmio_error *e);
int target_check_bs(const struct target *t, const char *path, uint64_t bs, struct llmio_error *e);
int target_check_dio_align(struct target *t, unsigned i, uint64_t bs, struct llmio_error *e);

/* target_fill.c: prepare file i (create, fill what is missing, open; see there). */
int target_prepare_file(struct target *t, unsigned i, uint64_t want,
                        const struct llmio_job_opts *opts, bool writes, struct llmio_error *e);
/* pwrite all of buf at off, retrying short writes and EINTR; 0 or -errno. */
int target_write_all(int fd, const void *buf, size_t len, uint64_t off);

/* target_blockdev.c: open the raw device t->paths[0] (stat in st), safely. */
int target_open_blockdev(struct target *t, const struct llmio_job_opts *opts, const struct stat *st,
                         bool writes, struct llmio_error *e);
/* The same for a device-DAX character device (/dev/daxX.Y; the pmem2 engine maps it). */
int target_open_devdax(struct target *t, const struct llmio_job_opts *opts, const struct stat *st,
                       bool writes, struct llmio_error *e);

/* target_facts.c: sysfs and mountinfo. */
struct mount_entry {
	char dir[PATH_MAX];
	char fstype[32];
	char source[PATH_MAX];
};

int target_read_attr(const char *dir, const char *name, char *buf, size_t len);
bool target_attr_exists(const char *dir, const char *name);
/* The sysfs directory of a block device (resolved, so that ".." is its parent disk). */
bool target_sysfs_dir(dev_t dev, char *out);
/* The first mount of device dev in /proc/self/mountinfo.  \return 0, -ENOENT, or -errno. */
int target_mount_find(dev_t dev, struct mount_entry *me);
/* The same in another file of that format (a test's). */
int target_mount_find_in(const char *mountinfo, dev_t dev, struct mount_entry *me);
/* t->dev and t->stat_path for block device dev (see there). */
void target_dev_facts(struct target *t, dev_t dev);
/* Device facts for a file on the filesystem of st. */
void target_file_dev_facts(struct target *t, const char *path, const struct stat *st);
/* Is path (stat st) on devtmpfs, where a mistyped device name would become a RAM file? */
bool target_is_devtmpfs(const char *path, const struct stat *st);

/* workdir.c: llmio's own directories. */
/*
 * Is path in a directory llmio made, as the user running it (its marker is there, the
 * directory and the marker are this user's, and no one else may write in the directory)?
 */
bool workdir_owns(const char *path);
/*
 * open(path, flags, mode), but in a directory llmio owns (workdir_owns()) through that
 * directory's descriptor and never through a symbolic link: a link there is refused (ELOOP),
 * not followed to a file llmio did not make.  \return the descriptor, or -1 with errno.
 */
int workdir_open(const char *path, int flags, mode_t mode);

/* llmio_work_dir(); *made says whether this call made the directory. */
int workdir_make(const char *dir, char *out, size_t len, bool *made, struct llmio_error *e);

#endif
