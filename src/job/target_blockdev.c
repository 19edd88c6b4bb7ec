// SPDX-License-Identifier: MIT
/*
 * Raw block devices as targets.
 *
 * Raw devices are never written here.  Writes to one need allow_destructive; the device must
 * be unused (not mounted, no partition mounted, no holder such as device-mapper or md, an
 * O_EXCL open succeeds) whatever the flags, because writing under a mounted filesystem
 * corrupts it and the kernel's caches at once; and, unless force, it must carry no signature
 * libblkid recognises.
 */
#include <blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "job/target_internal.h"
#include "base/error.h"

/* ---------------------------------------------------------------------------------------- */
/* Block devices                                                                            */

/* Is device `dev` (sysfs directory `sysdir`) mounted or held?  Says where in `why`. */
static bool dev_busy(dev_t dev, const char *sysdir, char *why, size_t len)
{
	struct mount_entry me;
	struct dirent *de;
	char holders[PATH_MAX];
	bool busy = false;
	DIR *d;

	if (target_mount_find(dev, &me) == 0) {
		snprintf(why, len, "is mounted at %s", me.dir);
		return true;
	}
	if ((size_t)snprintf(holders, sizeof(holders), "%s/holders", sysdir) >= sizeof(holders))
		return false;
	d = opendir(holders);
	if (!d)
		return false;
	while (!busy && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(why, len, "is held by %s (device-mapper, LVM or RAID)", de->d_name);
		busy = true;
	}
	closedir(d);
	return busy;
}

/* Refuse to write to a device that is mounted or held, or whose partition is. */
static int check_unused(const char *path, dev_t rdev, struct llmio_error *e)
{
	char sysdir[PATH_MAX], sub[PATH_MAX], buf[64], why[PATH_MAX + 64];
	unsigned maj, min;
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (!target_sysfs_dir(rdev, sysdir))
		return 0; /* the O_EXCL open still checks */
	if (dev_busy(rdev, sysdir, why, sizeof(why)))
		return llmio_err(e, -EBUSY,
		                 "refusing to write to %s: it %s; unmount or release it first",
		                 path, why);
	d = opendir(sysdir);
	if (!d)
		return 0;
	while (!rc && (de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", sysdir, de->d_name) >=
		            sizeof(sub) ||
		    !target_attr_exists(sub, "partition") ||
		    target_read_attr(sub, "dev", buf, sizeof(buf)) ||
		    sscanf(buf, "%u:%u", &maj, &min) != 2)
			continue;
		if (dev_busy(makedev(maj, min), sub, why, sizeof(why)))
			rc = llmio_err(
			        e, -EBUSY,
			        "refusing to write to %s: its partition %s %s; unmount or release "
			        "it first",
			        path, de->d_name, why);
	}
	closedir(d);
	return rc;
}

/* Refuse to write over a filesystem, RAID member or partition table that libblkid knows. */
static int check_no_signature(const char *path, struct llmio_error *e)
{
	const char *type = NULL, *usage = NULL, *what;
	blkid_probe pr;
	int rc, errnum;

	errno = 0;
	pr = blkid_new_probe_from_filename(path);
	if (!pr) {
		errnum = errno ? errno : EIO;
		return llmio_err(e, -errnum, "cannot probe %s for signatures before writing: %s",
		                 path, strerror(errnum));
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == 1) {
		rc = 0;
	} else if (rc == -2) {
		rc = llmio_err(
		        e, -EINVAL,
		        "refusing to write to %s: it holds several conflicting signatures; add "
		        "--force as well to destroy them",
		        path);
	} else if (rc < 0) {
		rc = llmio_err(
		        e, -EIO,
		        "cannot probe %s for signatures before writing; add --force to write "
		        "without the check",
		        path);
	} else {
		if (blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0) {
			blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
			what = !usage                             ? "a signature"
			       : strcmp(usage, "filesystem") == 0 ? "a filesystem"
			       : strcmp(usage, "raid") == 0       ? "a RAID member"
			       : strcmp(usage, "crypto") == 0     ? "an encrypted volume"
			                                          : "a signature";
		} else if (blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL) == 0) {
			what = "a partition table";
		} else {
			type = "unknown";
			what = "a signature";
		}
		rc = llmio_err(e, -EINVAL,
		               "refusing to write to %s: it holds %s (%s); add --force as well to "
		               "destroy it",
		               path, what, type);
	}
	blkid_free_probe(pr);
	return rc;
}

/* The job's size on a raw device of devsize bytes: --size or all of it, whole blocks of bs. */
static int device_size(struct target *t, const struct llmio_job_opts *opts, const char *path,
                       uint64_t devsize, struct llmio_error *e)
{
	uint64_t size;

	if (!devsize)
		return llmio_err(
		        e, -ENXIO,
		        "%s has no data (size 0: no medium, or a loop device with no file); "
		        "choose another --filename",
		        path);
	if (opts->size > devsize)
		return llmio_err(
		        e, -EINVAL,
		        "--size %llu is larger than %s (%llu bytes); use --size %llu or less",
		        (unsigned long long)opts->size, path, (unsigned long long)devsize,
		        (unsigned long long)devsize);
	size = opts->size ? opts->size : devsize;
	size -= size % opts->bs;
	if (!size)
		return llmio_err(
		        e, -EINVAL,
		        "%s (%llu bytes) holds less than one block of bs=%llu; use a smaller bs",
		        path, (unsigned long long)devsize, (unsigned long long)opts->bs);
	t->sizes[0] = size;
	return 0;
}

int target_open_blockdev(struct target *t, const struct llmio_job_opts *opts, const struct stat *st,
                         bool writes, struct llmio_error *e)
{
	const char *path = t->paths[0];
	int flags = (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC | (opts->direct ? O_DIRECT : 0);
	uint64_t devsize;
	int lbs = 0, ro = 0, fd, rc;

	target_dev_facts(t, st->st_rdev);
	if (writes) {
		if (!opts->allow_destructive)
			return llmio_err(
			        e, -EINVAL,
			        "refusing to write to block device %s: this destroys its data; "
			        "add --allow-destructive if that is intended",
			        path);
		rc = check_unused(path, st->st_rdev, e);
		if (!rc && !opts->force)
			rc = check_no_signature(path, e);
		if (rc)
			return rc;
		/* O_EXCL also catches swap and other exclusive users, and keeps them out. */
		fd = target_open_data(t, path, flags | O_EXCL);
		if (fd < 0 && errno == EBUSY)
			return llmio_err(
			        e, -EBUSY,
			        "refusing to write to %s: it is in use (mounted, swap, RAID or "
			        "another program); release it first",
			        path);
	} else {
		fd = target_open_data(t, path, flags);
	}
	if (fd < 0)
		return target_path_fail(e, errno, writes ? "opening for writing" : "opening", path);
	t->fds[0] = fd;

	/* The kernel opens a read-only device for writing and fails only the first write. */
	if (writes && ioctl(fd, BLKROGET, &ro) == 0 && ro)
		return llmio_err(e, -EROFS,
		                 "cannot write to %s: the device is read-only; choose another "
		                 "--filename",
		                 path);
	if (ioctl(fd, BLKGETSIZE64, &devsize)) {
		rc = errno;
		return llmio_err(e, -rc, "cannot get the size of %s: %s", path, strerror(rc));
	}
	if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs > 0)
		t->dev.logical_block_size = (uint32_t)lbs;
	t->align = t->dev.logical_block_size > 512 ? t->dev.logical_block_size : 512;
	rc = target_check_bs(t, path, opts->bs, e);
	if (rc)
		return rc;

	return device_size(t, opts, path, devsize, e);
}

/*
 * A device-DAX character device (/dev/daxX.Y: persistent memory without a filesystem, which the
 * pmem2 engine maps): a raw device as a block device is (writes need --allow_destructive), with
 * no page cache (so no O_DIRECT) and its size in sysfs, since no ioctl gives it.
 */
int target_open_devdax(struct target *t, const struct llmio_job_opts *opts, const struct stat *st,
                       bool writes, struct llmio_error *e)
{
	const char *path = t->paths[0];
	char dir[64], text[32];
	uint64_t devsize;
	int fd;

	snprintf(dir, sizeof(dir), "/sys/dev/char/%u:%u", major(st->st_rdev), minor(st->st_rdev));
	if (target_read_attr(dir, "size", text, sizeof(text)))
		return llmio_err(
		        e, -ENODEV,
		        "%s is a character device but not device DAX (no %s/size); choose a "
		        "file, a block device or a /dev/daxX.Y",
		        path, dir);
	devsize = strtoull(text, NULL, 10);
	if (opts->direct)
		return llmio_err(
		        e, -EINVAL,
		        "%s is device DAX: there is no page cache to bypass; use --direct=0", path);
	if (writes && !opts->allow_destructive)
		return llmio_err(e, -EINVAL,
		                 "refusing to write to device DAX %s: this destroys its data; add "
		                 "--allow-destructive if that is intended",
		                 path);
	fd = target_open_data(t, path, (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return target_path_fail(e, errno, writes ? "opening for writing" : "opening", path);
	t->fds[0] = fd;
	t->align = 512;
	return device_size(t, opts, path, devsize, e);
}
