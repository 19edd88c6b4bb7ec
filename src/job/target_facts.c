// SPDX-License-Identifier: MIT
/*
 * Facts of the block device under a target, from sysfs and /proc/self/mountinfo: its name,
 * model, queue attributes, interrupts, filesystem type and I/O counters, so that results can
 * name the medium and count device-level bytes.
 */
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <libmount.h>

#include "job/target_internal.h"

/* Block devices by number; a test may build with its own fake tree here. */
#ifndef SYS_DEV_BLOCK
#define SYS_DEV_BLOCK "/sys/dev/block"
#endif

/* ---------------------------------------------------------------------------------------- */
/* sysfs and mountinfo                                                                      */

/* Read a one-line text file, trimmed of surrounding white space. */
static int read_line(const char *path, char *buf, size_t len)
{
	size_t n, s = 0;
	FILE *f;
	int rc = 0;

	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		buf[0] = '\0';
		rc = ferror(f) ? -EIO : -ENODATA;
	}
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	while (buf[s] == ' ' || buf[s] == '\t')
		s++;
	memmove(buf, buf + s, n - s + 1);
	return rc;
}

int target_read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	return read_line(path, buf, len);
}

static uint64_t read_attr_u64(const char *dir, const char *name)
{
	char buf[64];

	if (target_read_attr(dir, name, buf, sizeof(buf)))
		return 0;
	return strtoull(buf, NULL, 10);
}

bool target_attr_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

/* The sysfs directory of a block device (resolved, so that ".." is its parent disk). */
bool target_sysfs_dir(dev_t dev, char *out)
{
	char link[PATH_MAX];

	if (major(dev) == 0)
		return false;
	snprintf(link, sizeof(link), SYS_DEV_BLOCK "/%u:%u", major(dev), minor(dev));
	return realpath(link, out) != NULL;
}

/*
 * The first mount of device `dev` in a mountinfo file ("id parent maj:min root dir opts
 * [optional...] - fstype source superopts", proc(5)), read with libmount: it knows the
 * format's optional fields and undoes its octal escapes (a space in a mount point is \040),
 * which a parser of our own had to get right too.  A line libmount cannot parse is skipped,
 * as the kernel's own tools do.  \return 0, -ENOENT, or -errno.
 */
int target_mount_find_in(const char *mountinfo, dev_t dev, struct mount_entry *me)
{
	struct libmnt_table *tb = mnt_new_table();
	struct libmnt_fs *fs;
	const char *source;
	int rc;

	if (!tb)
		return -ENOMEM;
	rc = mnt_table_parse_file(tb, mountinfo);
	if (rc == 0) {
		fs = mnt_table_find_devno(tb, dev, MNT_ITER_FORWARD);
		rc = fs && mnt_fs_get_target(fs) && mnt_fs_get_fstype(fs) ? 0 : -ENOENT;
	}
	if (rc == 0) {
		source = mnt_fs_get_source(fs);
		copy_str(me->dir, sizeof(me->dir), mnt_fs_get_target(fs));
		copy_str(me->fstype, sizeof(me->fstype), mnt_fs_get_fstype(fs));
		copy_str(me->source, sizeof(me->source), source ? source : "");
	}
	mnt_unref_table(tb);
	return rc < 0 ? rc : rc > 0 ? -EIO : 0;
}

int target_mount_find(dev_t dev, struct mount_entry *me)
{
	return target_mount_find_in("/proc/self/mountinfo", dev, me);
}

/* Name a filesystem from statfs when mountinfo does not list it (another mount namespace). */
static void fstype_from_statfs(const char *path, char *out, size_t len)
{
	static const struct {
		unsigned long magic;
		const char *name;
	} known[] = {
	        {TMPFS_MAGIC, "tmpfs"},     {EXT4_SUPER_MAGIC, "ext4"},
	        {XFS_SUPER_MAGIC, "xfs"},   {BTRFS_SUPER_MAGIC, "btrfs"},
	        {F2FS_SUPER_MAGIC, "f2fs"}, {OVERLAYFS_SUPER_MAGIC, "overlay"},
	        {NFS_SUPER_MAGIC, "nfs"},   {0x2fc12fc1, "zfs"},
	};
	struct statfs sf;
	size_t i;

	out[0] = '\0';
	if (statfs(path, &sf))
		return;
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if ((unsigned long)sf.f_type == known[i].magic)
			copy_str(out, len, known[i].name);
}

/*
 * Fill t->dev (name, model, queue attributes) and t->stat_path for block device `dev`.  A
 * partition has its own counters but no queue: the queue is its disk's.  Leaves dev.known
 * false when sysfs does not know the device.
 */
void target_dev_facts(struct target *t, dev_t dev)
{
	char self[PATH_MAX], disk[PATH_MAX], buf[256], *slash;

	if (!target_sysfs_dir(dev, self))
		return;
	t->dev.known = true;
	slash = strrchr(self, '/');
	copy_str(t->dev.name, sizeof(t->dev.name), slash ? slash + 1 : self);
	if (target_attr_exists(self, "stat"))
		snprintf(t->stat_path, sizeof(t->stat_path), SYS_DEV_BLOCK "/%u:%u/stat",
		         major(dev), minor(dev));

	copy_str(disk, sizeof(disk), self);
	if (target_attr_exists(self, "partition")) {
		slash = strrchr(disk, '/');
		if (slash && slash != disk)
			*slash = '\0';
	}

	if (target_read_attr(disk, "device/model", buf, sizeof(buf)) == 0 && buf[0]) {
		copy_str(t->dev.model, sizeof(t->dev.model), buf);
	} else if (target_read_attr(disk, "device/vendor", buf, sizeof(buf)) == 0 &&
	           strcmp(buf, "0x1af4") == 0) {
		/* virtio-blk has no model; its PCI vendor id says what it is. */
		copy_str(t->dev.model, sizeof(t->dev.model), "virtio");
	}

	/* "none [mq-deadline] kyber": the active one is bracketed; some devices list only one. */
	if (target_read_attr(disk, "queue/scheduler", buf, sizeof(buf)) == 0) {
		char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;

		if (open && close)
			snprintf(t->dev.scheduler, sizeof(t->dev.scheduler), "%.*s",
			         (int)(close - open - 1), open + 1);
		else if (!strchr(buf, ' '))
			copy_str(t->dev.scheduler, sizeof(t->dev.scheduler), buf);
	}
	t->dev.rotational = read_attr_u64(disk, "queue/rotational") != 0;
	t->dev.logical_block_size = (uint32_t)read_attr_u64(disk, "queue/logical_block_size");
	t->dev.io_poll = read_attr_u64(disk, "queue/io_poll") != 0;
	t->nirqs = irq_of_disk(disk, t->irqs, IRQ_MAX);
}

bool target_is_devtmpfs(const char *path, const struct stat *st)
{
	struct mount_entry me;
	char fstype[32];

	if (target_mount_find(st->st_dev, &me) == 0)
		return strcmp(me.fstype, "devtmpfs") == 0;
	fstype_from_statfs(path, fstype, sizeof(fstype));
	return strcmp(fstype, "devtmpfs") == 0;
}

/*
 * Device facts for a file on the filesystem of `st`.  Filesystems without a device of their
 * own (tmpfs, overlay, and btrfs, which hands out anonymous device numbers) report major 0;
 * when mountinfo names a block device as the source (btrfs), that device is the one measured.
 */
void target_file_dev_facts(struct target *t, const char *path, const struct stat *st)
{
	struct mount_entry me;
	struct stat src;
	dev_t dev = st->st_dev;
	bool mounted = target_mount_find(dev, &me) == 0;

	if (mounted)
		copy_str(t->dev.fstype, sizeof(t->dev.fstype), me.fstype);
	else
		fstype_from_statfs(path, t->dev.fstype, sizeof(t->dev.fstype));
	if (major(dev) == 0 && mounted && strncmp(me.source, "/dev/", 5) == 0 &&
	    stat(me.source, &src) == 0 && S_ISBLK(src.st_mode))
		dev = src.st_rdev;
	target_dev_facts(t, dev);
}

int target_dev_counters(const struct target *t, uint64_t *rd_bytes, uint64_t *wr_bytes,
                        uint64_t *rd_ios, uint64_t *wr_ios)
{
	unsigned long long v[8] = {0};
	char buf[512], *p, *end;
	unsigned i;
	int rc;

	if (!t->stat_path[0])
		return -ENODEV;
	rc = read_line(t->stat_path, buf, sizeof(buf));
	if (rc)
		return rc;
	/* Documentation/block/stat.rst: fields 1, 3, 5 and 7 (1-based); sectors are 512 bytes. */
	p = buf;
	for (i = 0; i < 8; i++) {
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (end == p || errno)
			return -EIO;
		p = end;
	}
	if (rd_ios)
		*rd_ios = v[0];
	if (rd_bytes)
		*rd_bytes = v[2] * 512;
	if (wr_ios)
		*wr_ios = v[4];
	if (wr_bytes)
		*wr_bytes = v[6] * 512;
	return 0;
}
