// SPDX-License-Identifier: MIT
/*
 * Targets: open, create and fill the job's files, or open a raw block device safely, and
 * collect the facts of the block device underneath.
 *
 * Whose files.  llmio writes only files it created or was told to write:
 *  - a job that writes (rw=write, randwrite, randrw) was told to: its file is prepared below;
 *  - a file in a directory llmio made (llmio_work_dir(), llmio_scratch_dir(): it holds the
 *    marker OWNED_MARK, which only llmio creates, with O_EXCL) is llmio's own: prepared below;
 *  - a file that does not exist yet is created (O_EXCL, so never someone else's) and prepared;
 *  - any other existing file, read by a job that only reads, is read as it is: no fill (its
 *    holes read as zeros), no extension; a file shorter than --size is refused unless
 *    opts->extend, which appends [old size, size) and nothing else.
 * Jobs with --directory and workload recipes name their files inside llmio_work_dir(), never
 * in the user's directory itself, so those names cannot be a user's.
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
 *
 * Raw devices are never written here.  Writes to one need allow_destructive; the device must
 * be unused (not mounted, no partition mounted, no holder such as device-mapper or md, an
 * O_EXCL open succeeds) whatever the flags, because writing under a mounted filesystem
 * corrupts it and the kernel's caches at once; and, unless force, it must carry no signature
 * libblkid recognises.
 */
#include <blkid.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "core/target.h"

#define FILL_CHUNK (1u << 20)
/* Block devices by number; a test may build with its own fake tree here. */
#ifndef SYS_DEV_BLOCK
#define SYS_DEV_BLOCK "/sys/dev/block"
#endif
/*
 * Seed of the fill pattern, plus the file's index: fixed, so a file filled by one run holds
 * the same bytes for every later run (and can be verified), distinct per file, so that a
 * deduplicating filesystem or device cannot collapse the files of a directory into one.
 */
#define FILL_SEED 0x6c6c6d696f66696cULL /* "llmiofil" */
/* The directory llmio makes for its files under a user's --directory, and its marker. */
#define WORK_DIR   "llmio-work"
#define OWNED_MARK ".llmio-owned"

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* An open() or stat() failure, with the fix for the common causes; `what` is "opening"... */
static int path_fail(char *err, size_t errlen, int e, const char *what, const char *path)
{
	if (e == EACCES || e == EPERM)
		return fail(err, errlen, -EACCES,
		            "permission denied %s %s; fix its permissions or run as its owner",
		            what, path);
	if (e == EROFS)
		return fail(err, errlen, -EROFS,
		            "%s %s failed: it is on a read-only filesystem or device; choose "
		            "another --filename/--directory",
		            what, path);
	return fail(err, errlen, -e, "%s %s failed: %s", what, path, strerror(e));
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Copy a string into dst[size], truncated when it does not fit. */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

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

static int read_attr(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	return read_line(path, buf, len);
}

static uint64_t read_attr_u64(const char *dir, const char *name)
{
	char buf[64];

	if (read_attr(dir, name, buf, sizeof(buf)))
		return 0;
	return strtoull(buf, NULL, 10);
}

static bool attr_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

/* The sysfs directory of a block device (resolved, so that ".." is its parent disk). */
static bool sysfs_dir(dev_t dev, char *out)
{
	char link[PATH_MAX];

	if (major(dev) == 0)
		return false;
	snprintf(link, sizeof(link), SYS_DEV_BLOCK "/%u:%u", major(dev), minor(dev));
	return realpath(link, out) != NULL;
}

struct mount_entry {
	char dir[PATH_MAX];
	char fstype[32];
	char source[PATH_MAX];
};

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/*
 * The first mount of device `dev` in /proc/self/mountinfo ("id parent maj:min root dir opts
 * [optional...] - fstype source superopts").  \return 0, -ENOENT, or -errno.
 */
static int mount_find(dev_t dev, struct mount_entry *me)
{
	char *line = NULL, *save, *tok, *dir, *fstype, *source;
	unsigned maj, min;
	size_t cap = 0;
	int rc = -ENOENT, field;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (rc == -ENOENT && getline(&line, &cap, f) > 0) {
		dir = fstype = source = NULL;
		maj = min = UINT_MAX;
		field = 0;
		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			if (field == 2 && sscanf(tok, "%u:%u", &maj, &min) != 2)
				break;
			if (field == 4)
				dir = tok;
			if (field >= 6 && strcmp(tok, "-") == 0) {
				fstype = strtok_r(NULL, " \n", &save);
				source = fstype ? strtok_r(NULL, " \n", &save) : NULL;
				break;
			}
			field++;
		}
		if (!dir || !fstype || maj != major(dev) || min != minor(dev))
			continue;
		unescape_octal(dir);
		copy_str(me->dir, sizeof(me->dir), dir);
		copy_str(me->fstype, sizeof(me->fstype), fstype);
		copy_str(me->source, sizeof(me->source), source ? source : "");
		unescape_octal(me->source);
		rc = 0;
	}
	free(line);
	fclose(f);
	return rc;
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
static void dev_facts(struct target *t, dev_t dev)
{
	char self[PATH_MAX], disk[PATH_MAX], buf[256], *slash;

	if (!sysfs_dir(dev, self))
		return;
	t->dev.known = true;
	slash = strrchr(self, '/');
	copy_str(t->dev.name, sizeof(t->dev.name), slash ? slash + 1 : self);
	if (attr_exists(self, "stat"))
		snprintf(t->stat_path, sizeof(t->stat_path), SYS_DEV_BLOCK "/%u:%u/stat",
		         major(dev), minor(dev));

	copy_str(disk, sizeof(disk), self);
	if (attr_exists(self, "partition")) {
		slash = strrchr(disk, '/');
		if (slash && slash != disk)
			*slash = '\0';
	}

	if (read_attr(disk, "device/model", buf, sizeof(buf)) == 0 && buf[0]) {
		copy_str(t->dev.model, sizeof(t->dev.model), buf);
	} else if (read_attr(disk, "device/vendor", buf, sizeof(buf)) == 0 &&
	           strcmp(buf, "0x1af4") == 0) {
		/* virtio-blk has no model; its PCI vendor id says what it is. */
		copy_str(t->dev.model, sizeof(t->dev.model), "virtio");
	}

	/* "none [mq-deadline] kyber": the active one is bracketed; some devices list only one. */
	if (read_attr(disk, "queue/scheduler", buf, sizeof(buf)) == 0) {
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

static bool is_devtmpfs(const char *path, const struct stat *st)
{
	struct mount_entry me;
	char fstype[32];

	if (mount_find(st->st_dev, &me) == 0)
		return strcmp(me.fstype, "devtmpfs") == 0;
	fstype_from_statfs(path, fstype, sizeof(fstype));
	return strcmp(fstype, "devtmpfs") == 0;
}

/*
 * Device facts for a file on the filesystem of `st`.  Filesystems without a device of their
 * own (tmpfs, overlay, and btrfs, which hands out anonymous device numbers) report major 0;
 * when mountinfo names a block device as the source (btrfs), that device is the one measured.
 */
static void file_dev_facts(struct target *t, const char *path, const struct stat *st)
{
	struct mount_entry me;
	struct stat src;
	dev_t dev = st->st_dev;
	bool mounted = mount_find(dev, &me) == 0;

	if (mounted)
		copy_str(t->dev.fstype, sizeof(t->dev.fstype), me.fstype);
	else
		fstype_from_statfs(path, t->dev.fstype, sizeof(t->dev.fstype));
	if (major(dev) == 0 && mounted && strncmp(me.source, "/dev/", 5) == 0 &&
	    stat(me.source, &src) == 0 && S_ISBLK(src.st_mode))
		dev = src.st_rdev;
	dev_facts(t, dev);
}

/* ---------------------------------------------------------------------------------------- */
/* Files                                                                                    */

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
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

static int no_space(char *err, size_t errlen, const char *path, uint64_t size)
{
	return fail(err, errlen, -ENOSPC,
	            "no space for %s (%llu bytes) on its filesystem; use a smaller --size or "
	            "another --filename/--directory",
	            path, (unsigned long long)size);
}

/* Write the pattern over [start, end) of the file. */
static int fill_range(int fd, const char *path, uint64_t size, uint64_t start, uint64_t end,
                      uint64_t seed, unsigned char *buf, volatile int *stop, char *err,
                      size_t errlen)
{
	uint64_t word;
	size_t n, skip;
	int rc;

	while (start < end) {
		if (stop && *stop)
			return fail(err, errlen, -EINTR,
			            "interrupted while filling %s; the next run continues the fill",
			            path);
		/* A hole may begin at an odd old EOF; the pattern is defined per 8-byte word. */
		word = start & ~7ULL;
		skip = (size_t)(start - word);
		n = (size_t)min_u64(FILL_CHUNK, end - start);
		target_pattern(buf, (n + skip + 7) & ~(size_t)7, word, seed);
		rc = write_all(fd, buf + skip, n, start);
		if (rc == -ENOSPC || rc == -EDQUOT)
			return no_space(err, errlen, path, size);
		if (rc)
			return fail(err, errlen, rc, "cannot write %s to fill it: %s", path,
			            strerror(-rc));
		start += n;
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
static int fill_file(int fd, const char *path, uint64_t old, uint64_t size, uint64_t from,
                     uint64_t seed, volatile int *stop, char *err, size_t errlen)
{
	uint64_t data_end = min_u64(old, size), off = from, hole, next;
	unsigned char *buf;
	off_t d;
	int rc = 0, e;

	buf = malloc(FILL_CHUNK + 16);
	if (!buf)
		return fail(err, errlen, -ENOMEM, "out of memory filling %s", path);
	while (off < data_end) {
		rc = next_hole(fd, off, data_end, &hole);
		if (rc) {
			fail(err, errlen, rc, "cannot look for holes in %s: %s", path,
			     strerror(-rc));
			goto free_buf;
		}
		if (hole >= data_end)
			break;
		d = lseek(fd, (off_t)hole, SEEK_DATA);
		if (d < 0 && errno != ENXIO) {
			e = errno;
			rc = fail(err, errlen, -e, "cannot look for data in %s: %s", path,
			          strerror(e));
			goto free_buf;
		}
		next = d < 0 ? data_end : min_u64((uint64_t)d, data_end);
		/* Only a file changing under us answers like this; move on by one page. */
		if (next <= hole)
			next = min_u64((hole | 4095) + 1, data_end);
		rc = fill_range(fd, path, size, hole, next, seed, buf, stop, err, errlen);
		if (rc)
			goto free_buf;
		off = next;
	}
	if (old < size)
		rc = fill_range(fd, path, size, old, size, seed, buf, stop, err, errlen);
free_buf:
	free(buf);
	return rc;
}

/* Reserve the extension [old, size) so that a full filesystem fails now, not mid-fill. */
static int preallocate(int fd, const char *path, uint64_t old, uint64_t size, char *err,
                       size_t errlen)
{
	int e;

	if (old >= size)
		return 0;
	if (fallocate(fd, 0, (off_t)old, (off_t)(size - old)) == 0)
		return 0;
	e = errno;
	if (e == ENOSPC || e == EDQUOT)
		return no_space(err, errlen, path, size);
	if (e == EFBIG)
		return fail(err, errlen, -EFBIG,
		            "%s cannot be %llu bytes long on its filesystem; use a smaller --size",
		            path, (unsigned long long)size);
	if (e != EOPNOTSUPP && e != ENOSYS)
		return fail(err, errlen, -e, "cannot preallocate %s: %s", path, strerror(e));
	/* No fallocate here (some network filesystems): set the size; the fill allocates. */
	if (ftruncate(fd, (off_t)size) == 0)
		return 0;
	e = errno;
	if (e == ENOSPC || e == EDQUOT)
		return no_space(err, errlen, path, size);
	return fail(err, errlen, -e, "cannot extend %s to %llu bytes: %s", path,
	            (unsigned long long)size, strerror(e));
}

/* Open the job's descriptor, naming the fix when the filesystem refuses O_DIRECT. */
static int open_job_fd(struct target *t, unsigned i, bool writes, bool direct, char *err,
                       size_t errlen)
{
	int flags = (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC | (direct ? O_DIRECT : 0);
	int fd = open(t->paths[i], flags);

	if (fd < 0 && errno == EINVAL && direct)
		return fail(err, errlen, -EINVAL,
		            "the filesystem of %s does not support O_DIRECT; use --direct=0",
		            t->paths[i]);
	if (fd < 0)
		return path_fail(err, errlen, errno, writes ? "opening for writing" : "opening",
		                 t->paths[i]);
	t->fds[i] = fd;
	return 0;
}

static int check_bs(const struct target *t, const char *path, uint64_t bs, char *err, size_t errlen)
{
	uint64_t up;

	if (!t->direct || bs % t->align == 0)
		return 0;
	up = (bs + t->align - 1) / t->align * t->align;
	if (t->is_blockdev)
		return fail(err, errlen, -EINVAL,
		            "bs=%llu is not a multiple of the logical block size %u of %s, which "
		            "O_DIRECT needs; use bs=%llu or --direct=0",
		            (unsigned long long)bs, t->align, path, (unsigned long long)up);
	if (t->dev.known && t->dev.name[0])
		return fail(err, errlen, -EINVAL,
		            "bs=%llu is not a multiple of the logical block size %u of %s (the "
		            "device holding %s), which O_DIRECT needs; use bs=%llu or --direct=0",
		            (unsigned long long)bs, t->align, t->dev.name, path,
		            (unsigned long long)up);
	return fail(err, errlen, -EINVAL,
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
static int check_dio_align(struct target *t, unsigned i, uint64_t bs, char *err, size_t errlen)
{
	unsigned off_align, mem_align;

	if (!t->direct || !dio_align_known(t->fds[i], &off_align, &mem_align))
		return 0;
	if (off_align == 0)
		return fail(err, errlen, -EINVAL,
		            "the filesystem of %s does not support O_DIRECT; use --direct=0",
		            t->paths[i]);
	if (off_align > t->align)
		t->align = off_align;
	if (mem_align > t->align)
		t->align = mem_align;
	return check_bs(t, t->paths[i], bs, err, errlen);
}

/*
 * Asked of the filesystem itself, so that callers choosing O_DIRECT by default (workloads,
 * quick) never have to read an error message to learn it: a probe file created with O_DIRECT
 * in dir, then its STATX_DIOALIGN.  The file is named after this process and removed at once.
 */
int llmio_direct_probe(const char *dir, char *why, size_t len)
{
	char path[LLMIO_PATH_MAX + 32];
	unsigned off_align = 1, mem_align;
	int fd, e;

	if (snprintf(path, sizeof(path), "%s/.llmio-direct-probe.%ld", dir, (long)getpid()) >=
	    (int)sizeof(path))
		return fail(why, len, -ENAMETOOLONG, "directory name too long: %s", dir);
	fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_DIRECT, 0600);
	if (fd < 0 && errno == EINVAL) {
		/* the file was created before the filesystem refused the flag (O_EXCL: ours) */
		unlink(path);
		fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0) {
			close(fd);
			unlink(path);
			return fail(why, len, -EINVAL,
			            "the filesystem of %s does not support O_DIRECT", dir);
		}
	}
	if (fd < 0) {
		e = errno;
		return fail(why, len, -e, "cannot create a probe file in %s: %s", dir, strerror(e));
	}
	dio_align_known(fd, &off_align, &mem_align);
	close(fd);
	unlink(path);
	if (off_align == 0)
		return fail(why, len, -EINVAL,
		            "the filesystem of %s accepts O_DIRECT but does buffered I/O (statx "
		            "STATX_DIOALIGN: no direct I/O)",
		            dir);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Directories llmio owns                                                                   */

/* Is path in a directory llmio made (its marker is there, a plain file)? */
static bool in_owned_dir(const char *path)
{
	char mark[LLMIO_PATH_MAX + sizeof(OWNED_MARK) + 1];
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) : 1;
	struct stat st;

	if ((size_t)snprintf(mark, sizeof(mark), "%.*s/%s", dirlen, slash ? path : ".",
	                     OWNED_MARK) >= sizeof(mark))
		return false;
	return lstat(mark, &st) == 0 && S_ISREG(st.st_mode);
}

/* Mark directory `dir`, which this process has just made, as llmio's. */
static int mark_owned(const char *dir, char *err, size_t errlen)
{
	static const char text[] = "made by llmio: the files here are llmio's own test data; "
	                           "llmio may rewrite or remove them\n";
	char mark[LLMIO_PATH_MAX + sizeof(OWNED_MARK) + 1];
	int fd, rc;

	if ((size_t)snprintf(mark, sizeof(mark), "%s/%s", dir, OWNED_MARK) >= sizeof(mark))
		return fail(err, errlen, -ENAMETOOLONG, "directory path %s is too long", dir);
	fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return path_fail(err, errlen, errno, "creating", mark);
	rc = write_all(fd, text, sizeof(text) - 1, 0);
	close(fd);
	if (rc)
		return fail(err, errlen, rc, "cannot write %s: %s", mark, strerror(-rc));
	return 0;
}

/* dir without its trailing slashes into out; -ENAMETOOLONG when it does not fit. */
static int trim_dir(const char *dir, char *out, size_t len)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n + 1 > len)
		return -ENAMETOOLONG;
	memcpy(out, dir, n);
	out[n] = '\0';
	return 0;
}

/*
 * Make directory `out` in `base` with its marker already inside, so that no one ever sees it
 * unmarked (ranks of one job starting together in the same directory): built under a temporary
 * name, then renamed into place with RENAME_NOREPLACE.  Where the filesystem lacks that flag,
 * mkdir and then the marker.  \return 0, -EEXIST when `out` exists, or -errno (err set).
 */
static int make_marked(const char *base, const char *out, char *err, size_t errlen)
{
	char tmp[LLMIO_PATH_MAX + 32], mark[LLMIO_PATH_MAX + 64];
	int rc, e;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/." WORK_DIR ".XXXXXX", base) >= sizeof(tmp))
		return fail(err, errlen, -ENAMETOOLONG, "directory path %s is too long", base);
	if (!mkdtemp(tmp))
		return path_fail(err, errlen, errno, "creating a directory in", base);
	rc = chmod(tmp, 0755) ? path_fail(err, errlen, errno, "setting the mode of", tmp)
	                      : mark_owned(tmp, err, errlen);
	e = rc ? 0 : renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE) ? errno : 0;
	if (rc || e) {
		snprintf(mark, sizeof(mark), "%s/%s", tmp, OWNED_MARK);
		unlink(mark);
		rmdir(tmp);
	}
	if (rc || !e)
		return rc;
	if (e == EEXIST)
		return -EEXIST;
	if (e != EINVAL && e != ENOSYS)
		return path_fail(err, errlen, e, "creating", out);
	if (mkdir(out, 0755))
		return errno == EEXIST ? -EEXIST : path_fail(err, errlen, errno, "creating", out);
	rc = mark_owned(out, err, errlen);
	if (rc)
		rmdir(out);
	return rc;
}

/* llmio_work_dir(); *made says whether this call made the directory. */
static int work_dir(const char *dir, char *out, size_t len, bool *made, char *err, size_t errlen)
{
	char base[LLMIO_PATH_MAX];
	struct stat st;
	int rc;

	*made = false;
	if (trim_dir(dir, base, sizeof(base)) ||
	    (size_t)snprintf(out, len, "%s/" WORK_DIR, base) >= len)
		return fail(err, errlen, -ENAMETOOLONG,
		            "directory path %s is too long; choose a shorter --directory", dir);
	if (stat(base, &st))
		return errno == ENOENT ? fail(err, errlen, -ENOENT,
		                              "directory %s does not exist; create it or choose "
		                              "another --directory",
		                              base)
		                       : path_fail(err, errlen, errno, "accessing", base);
	if (!S_ISDIR(st.st_mode))
		return fail(err, errlen, -EINVAL,
		            "%s is not a directory; choose another --directory", base);
	rc = make_marked(base, out, err, errlen);
	if (rc != -EEXIST) {
		*made = rc == 0;
		return rc;
	}
	snprintf(base, sizeof(base), "%s/x", out); /* in_owned_dir() looks beside a file */
	if (lstat(out, &st) || !S_ISDIR(st.st_mode) || !in_owned_dir(base))
		return fail(err, errlen, -EEXIST,
		            "%s exists but llmio did not make it (no %s inside); llmio keeps its "
		            "files there and writes nowhere else: rename it or choose another "
		            "--directory",
		            out, OWNED_MARK);
	return 0;
}

int llmio_work_dir(const char *dir, char *out, size_t len, char *err, size_t errlen)
{
	bool made;

	return work_dir(dir, out, len, &made, err, errlen);
}

void llmio_work_dir_prune(const char *work)
{
	char mark[LLMIO_PATH_MAX + sizeof(OWNED_MARK) + 1];
	struct dirent *de;
	bool empty = true;
	DIR *d = opendir(work);

	if (!d)
		return;
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		        !strcmp(de->d_name, OWNED_MARK);
	closedir(d);
	if (empty &&
	    (size_t)snprintf(mark, sizeof(mark), "%s/%s", work, OWNED_MARK) < sizeof(mark) &&
	    unlink(mark) == 0)
		rmdir(work);
}

int llmio_scratch_dir(const char *dir, const char *prefix, char *out, size_t len, char *err,
                      size_t errlen)
{
	char base[LLMIO_PATH_MAX];
	int rc;

	if (trim_dir(dir, base, sizeof(base)) ||
	    (size_t)snprintf(out, len, "%s/%s.XXXXXX", base, prefix) >= len)
		return fail(err, errlen, -ENAMETOOLONG, "directory path %s is too long", dir);
	if (!mkdtemp(out))
		return path_fail(err, errlen, errno, "creating a directory in", base);
	rc = mark_owned(out, err, errlen);
	if (rc)
		rmdir(out);
	return rc;
}

int llmio_scratch_remove(const char *scratch)
{
	char path[LLMIO_PATH_MAX + 256];
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if ((size_t)snprintf(path, sizeof(path), "%s/x", scratch) >= sizeof(path))
		return -ENAMETOOLONG;
	if (!in_owned_dir(path))
		return -EPERM;
	d = opendir(scratch);
	if (!d)
		return -errno;
	/* Plain files only, the marker last: an interrupted removal stays recognisably ours. */
	while ((de = readdir(d))) {
		if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
			continue;
		if (!strcmp(de->d_name, OWNED_MARK))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) && errno != EISDIR && !rc)
			rc = -errno;
	}
	closedir(d);
	if (snprintf(path, sizeof(path), "%s/%s", scratch, OWNED_MARK) > 0 && unlink(path) && !rc)
		rc = -errno;
	if (!rc && rmdir(scratch))
		rc = -errno;
	return rc;
}

/*
 * Prepare file i: create it when missing, fill what is missing of its first `want` bytes
 * (0: its existing size), and open the job's descriptor.  A file this call created is removed
 * again when it fails before holding any data, or for lack of space; one partly filled is
 * kept, and the next run fills only what is still missing.  Existing files are never removed
 * or shortened.
 */
static int open_file(struct target *t, unsigned i, uint64_t want, const struct llmio_job_opts *opts,
                     bool writes, char *err, size_t errlen)
{
	const char *path = t->paths[i];
	uint64_t size, old = 0, hole = 0;
	bool exists = false, created = false, filling = false, owned = in_owned_dir(path);
	struct stat st;
	int fd = -1, rc, e;

	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return fail(err, errlen, -EINVAL,
			            "%s is not a regular file; remove it or choose another "
			            "--filename/--directory",
			            path);
		exists = true;
		old = (uint64_t)st.st_size;
	} else if (errno != ENOENT) {
		return path_fail(err, errlen, errno, "accessing", path);
	}
	size = want ? want : old;
	if (!size)
		return fail(err, errlen, -EINVAL, "--size is needed to create %s%s", path,
		            exists ? ": it is empty" : "");
	if (!opts->files) /* an explicit file list keeps its exact sizes */
		size -= size % opts->bs;
	if (!size)
		return fail(
		        err, errlen, -EINVAL,
		        "%s would hold less than one block of bs=%llu; use a larger --size or a "
		        "smaller bs",
		        path, (unsigned long long)opts->bs);
	t->sizes[i] = size;

	/* Someone else's file, and the job only reads: read it as it is (see the top). */
	if (exists && !writes && !owned) {
		if (old < size && !opts->extend)
			return fail(err, errlen, -EINVAL,
			            "%s holds %llu bytes, less than the %llu the job reads; llmio "
			            "reads a file it did not create as it is: use --size %llu or "
			            "less, or add --extend to let llmio append the rest",
			            path, (unsigned long long)old, (unsigned long long)size,
			            (unsigned long long)(old - old % opts->bs));
		if (old >= size) {
			rc = open_job_fd(t, i, false, opts->direct, err, errlen);
			return rc ? rc : check_dio_align(t, i, opts->bs, err, errlen);
		}
		hole = old; /* --extend: the new part only, never the file's own holes */
	} else if (exists) {
		/* A complete file is reused untouched: read-only access suffices to tell. */
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return path_fail(err, errlen, errno, "opening", path);
		rc = next_hole(fd, 0, min_u64(old, size), &hole);
		close(fd);
		fd = -1;
		if (rc)
			return fail(err, errlen, rc, "cannot look for holes in %s: %s", path,
			            strerror(-rc));
		if (old >= size && hole >= size) {
			rc = open_job_fd(t, i, writes, opts->direct, err, errlen);
			return rc ? rc : check_dio_align(t, i, opts->bs, err, errlen);
		}
	}
	if (exists) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		created = fd >= 0;
	}
	if (fd < 0) {
		if (errno == ENOENT)
			return fail(err, errlen, -ENOENT,
			            "cannot create %s: its directory does not exist; create it or "
			            "choose another --filename",
			            path);
		return path_fail(err, errlen, errno, exists ? "opening to fill" : "creating", path);
	}
	/* Refuse O_DIRECT and bad alignment before spending minutes on a fill. */
	rc = open_job_fd(t, i, writes, opts->direct, err, errlen);
	if (!rc)
		rc = check_dio_align(t, i, opts->bs, err, errlen);
	if (!rc)
		rc = preallocate(fd, path, old, size, err, errlen);
	if (rc)
		goto close_fill_fd;
	filling = true;
	rc = fill_file(fd, path, old, size, hole, FILL_SEED + i, opts->stop, err, errlen);
	if (rc)
		goto close_fill_fd;
	if (fdatasync(fd)) {
		e = errno;
		rc = e == ENOSPC || e == EDQUOT
		             ? no_space(err, errlen, path, size)
		             : fail(err, errlen, -e, "cannot sync %s after filling it: %s", path,
		                    strerror(e));
		goto close_fill_fd;
	}
	/*
	 * Leave the page cache as a later run finds a reused file, so that the first run of a
	 * series is not the only one to start with a warm cache.
	 */
	posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_DONTNEED);
	close(fd);
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
			fail(err, errlen, rc,
			     "interrupted while filling %s, which llmio had created for this job; "
			     "removed it",
			     path);
	}
	return rc;
}

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

	if (mount_find(dev, &me) == 0) {
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
static int check_unused(const char *path, dev_t rdev, char *err, size_t errlen)
{
	char sysdir[PATH_MAX], sub[PATH_MAX], buf[64], why[PATH_MAX + 64];
	unsigned maj, min;
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (!sysfs_dir(rdev, sysdir))
		return 0; /* the O_EXCL open still checks */
	if (dev_busy(rdev, sysdir, why, sizeof(why)))
		return fail(err, errlen, -EBUSY,
		            "refusing to write to %s: it %s; unmount or release it first", path,
		            why);
	d = opendir(sysdir);
	if (!d)
		return 0;
	while (!rc && (de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", sysdir, de->d_name) >=
		            sizeof(sub) ||
		    !attr_exists(sub, "partition") || read_attr(sub, "dev", buf, sizeof(buf)) ||
		    sscanf(buf, "%u:%u", &maj, &min) != 2)
			continue;
		if (dev_busy(makedev(maj, min), sub, why, sizeof(why)))
			rc = fail(
			        err, errlen, -EBUSY,
			        "refusing to write to %s: its partition %s %s; unmount or release "
			        "it first",
			        path, de->d_name, why);
	}
	closedir(d);
	return rc;
}

/* Refuse to write over a filesystem, RAID member or partition table that libblkid knows. */
static int check_no_signature(const char *path, char *err, size_t errlen)
{
	const char *type = NULL, *usage = NULL, *what;
	blkid_probe pr;
	int rc, e;

	errno = 0;
	pr = blkid_new_probe_from_filename(path);
	if (!pr) {
		e = errno ? errno : EIO;
		return fail(err, errlen, -e, "cannot probe %s for signatures before writing: %s",
		            path, strerror(e));
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == 1) {
		rc = 0;
	} else if (rc == -2) {
		rc = fail(err, errlen, -EINVAL,
		          "refusing to write to %s: it holds several conflicting signatures; add "
		          "--force as well to destroy them",
		          path);
	} else if (rc < 0) {
		rc = fail(err, errlen, -EIO,
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
		rc = fail(err, errlen, -EINVAL,
		          "refusing to write to %s: it holds %s (%s); add --force as well to "
		          "destroy it",
		          path, what, type);
	}
	blkid_free_probe(pr);
	return rc;
}

static int open_blockdev(struct target *t, const struct llmio_job_opts *opts, const struct stat *st,
                         bool writes, char *err, size_t errlen)
{
	const char *path = t->paths[0];
	int flags = (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC | (opts->direct ? O_DIRECT : 0);
	uint64_t devsize, size;
	int lbs = 0, ro = 0, fd, rc;

	dev_facts(t, st->st_rdev);
	if (writes) {
		if (!opts->allow_destructive)
			return fail(err, errlen, -EINVAL,
			            "refusing to write to block device %s: this destroys its data; "
			            "add --allow-destructive if that is intended",
			            path);
		rc = check_unused(path, st->st_rdev, err, errlen);
		if (!rc && !opts->force)
			rc = check_no_signature(path, err, errlen);
		if (rc)
			return rc;
		/* O_EXCL also catches swap and other exclusive users, and keeps them out. */
		fd = open(path, flags | O_EXCL);
		if (fd < 0 && errno == EBUSY)
			return fail(err, errlen, -EBUSY,
			            "refusing to write to %s: it is in use (mounted, swap, RAID or "
			            "another program); release it first",
			            path);
	} else {
		fd = open(path, flags);
	}
	if (fd < 0)
		return path_fail(err, errlen, errno, writes ? "opening for writing" : "opening",
		                 path);
	t->fds[0] = fd;

	/* The kernel opens a read-only device for writing and fails only the first write. */
	if (writes && ioctl(fd, BLKROGET, &ro) == 0 && ro)
		return fail(err, errlen, -EROFS,
		            "cannot write to %s: the device is read-only; choose another "
		            "--filename",
		            path);
	if (ioctl(fd, BLKGETSIZE64, &devsize)) {
		rc = errno;
		return fail(err, errlen, -rc, "cannot get the size of %s: %s", path, strerror(rc));
	}
	if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs > 0)
		t->dev.logical_block_size = (uint32_t)lbs;
	t->align = t->dev.logical_block_size > 512 ? t->dev.logical_block_size : 512;
	rc = check_bs(t, path, opts->bs, err, errlen);
	if (rc)
		return rc;

	if (!devsize)
		return fail(err, errlen, -ENXIO,
		            "%s has no data (size 0: no medium, or a loop device with no file); "
		            "choose another --filename",
		            path);
	if (opts->size > devsize)
		return fail(err, errlen, -EINVAL,
		            "--size %llu is larger than %s (%llu bytes); use --size %llu or less",
		            (unsigned long long)opts->size, path, (unsigned long long)devsize,
		            (unsigned long long)devsize);
	size = opts->size ? opts->size : devsize;
	size -= size % opts->bs;
	if (!size)
		return fail(
		        err, errlen, -EINVAL,
		        "%s (%llu bytes) holds less than one block of bs=%llu; use a smaller bs",
		        path, (unsigned long long)devsize, (unsigned long long)opts->bs);
	t->sizes[0] = size;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Target                                                                                   */

static int alloc_files(struct target *t, unsigned n)
{
	unsigned i;

	t->fds = calloc(n, sizeof(*t->fds));
	t->sizes = calloc(n, sizeof(*t->sizes));
	t->paths = calloc(n, sizeof(*t->paths));
	if (!t->fds || !t->sizes || !t->paths)
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

static int open_filename(struct target *t, const struct llmio_job_opts *opts, bool writes,
                         char *err, size_t errlen)
{
	const char *name = opts->filename;
	char parent[LLMIO_PATH_MAX];
	struct stat st;
	int rc;

	if (alloc_files(t, 1))
		return fail(err, errlen, -ENOMEM, "out of memory opening %s", name);
	copy_str(t->paths[0], LLMIO_PATH_MAX, name);

	if (stat(name, &st) == 0) {
		if (S_ISBLK(st.st_mode)) {
			t->is_blockdev = true;
			return open_blockdev(t, opts, &st, writes, err, errlen);
		}
		if (S_ISDIR(st.st_mode))
			return fail(err, errlen, -EINVAL,
			            "%s is a directory; use --directory %s instead of --filename",
			            name, name);
		if (!S_ISREG(st.st_mode))
			return fail(err, errlen, -EINVAL,
			            "%s is not a regular file or a block device; choose another "
			            "--filename",
			            name);
	} else if (errno == ENOENT) {
		/* Not there yet: its directory tells the filesystem, before anything is made. */
		parent_dir(name, parent, sizeof(parent));
		if (stat(parent, &st)) {
			if (errno != ENOENT)
				return path_fail(err, errlen, errno, "accessing", parent);
			return fail(err, errlen, -ENOENT,
			            "cannot create %s: directory %s does not exist; create it or "
			            "choose another --filename",
			            name, parent);
		}
		/* A mistyped device name must not turn into a RAM-backed file in /dev. */
		if (is_devtmpfs(parent, &st))
			return fail(err, errlen, -ENOENT,
			            "%s does not exist: there is no such device; check the name "
			            "(lsblk lists devices)",
			            name);
	} else {
		return path_fail(err, errlen, errno, "accessing", name);
	}

	file_dev_facts(t, name, &st);
	t->align = t->dev.logical_block_size > 512 ? t->dev.logical_block_size : 512;
	rc = check_bs(t, name, opts->bs, err, errlen);
	if (rc)
		return rc;
	if (opts->size && opts->size < opts->bs)
		return fail(err, errlen, -EINVAL,
		            "--size %llu is smaller than bs=%llu for %s; use --size %llu or more",
		            (unsigned long long)opts->size, (unsigned long long)opts->bs, name,
		            (unsigned long long)opts->bs);
	return open_file(t, 0, opts->size, opts, writes, err, errlen);
}

static int open_directory(struct target *t, const struct llmio_job_opts *opts, bool writes,
                          char *err, size_t errlen)
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
			return fail(err, errlen, -ENOENT,
			            "directory %s does not exist; create it or choose another "
			            "--directory",
			            dir);
		return path_fail(err, errlen, errno, "accessing", dir);
	}
	if (!S_ISDIR(st.st_mode))
		return fail(err, errlen, -EINVAL,
		            "%s is not a directory; use --filename %s, or another --directory", dir,
		            dir);
	if (opts->size) {
		per = opts->size / n;
		per -= per % opts->bs;
		if (!per)
			return fail(
			        err, errlen, -EINVAL,
			        "--size %llu split over nrfiles=%u files in %s leaves less than "
			        "bs=%llu each; use --size %llu or more, or fewer --nrfiles",
			        (unsigned long long)opts->size, n, dir,
			        (unsigned long long)opts->bs, (unsigned long long)opts->bs * n);
	}

	/* llmio's names live in llmio's own directory, where they cannot be a user's. */
	rc = work_dir(dir, work, sizeof(work), &made, err, errlen);
	if (rc)
		return rc;
	if (alloc_files(t, n))
		return fail(err, errlen, -ENOMEM, "out of memory opening %u files in %s", n, dir);
	for (i = 0; i < n; i++)
		if ((size_t)snprintf(t->paths[i], LLMIO_PATH_MAX, "%s/llmio.%u", work, i) >=
		    LLMIO_PATH_MAX)
			return fail(err, errlen, -ENAMETOOLONG,
			            "directory path %s is too long; choose a shorter --directory",
			            dir);

	file_dev_facts(t, dir, &st);
	t->align = t->dev.logical_block_size > 512 ? t->dev.logical_block_size : 512;
	rc = check_bs(t, dir, opts->bs, err, errlen);
	for (i = 0; i < n && !rc; i++)
		rc = open_file(t, i, per, opts, writes, err, errlen);
	if (rc && made)
		llmio_work_dir_prune(work); /* a failed first run leaves nothing behind */
	return rc;
}

/*
 * A file the job writes from scratch, as a program saving a checkpoint does: created empty (an
 * existing file of that name is truncated), not preallocated.
 */
static int open_fresh(struct target *t, unsigned i, uint64_t size,
                      const struct llmio_job_opts *opts, char *err, size_t errlen)
{
	const char *path = t->paths[i];
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return fail(err, errlen, -EINVAL,
		            "%s is not a regular file; remove it or choose another --directory",
		            path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return path_fail(err, errlen, errno, "creating", path);
	close(fd);
	t->sizes[i] = size;
	rc = open_job_fd(t, i, true, opts->direct, err, errlen);
	return rc ? rc : check_dio_align(t, i, opts->bs, err, errlen);
}

/* An explicit file list (workload recipes, replay): exact sizes, all on one filesystem. */
static int open_list(struct target *t, const struct llmio_job_opts *opts, bool writes, char *err,
                     size_t errlen)
{
	char parent[LLMIO_PATH_MAX];
	struct stat st;
	unsigned i;
	int rc = 0;

	if (alloc_files(t, opts->nfiles_list))
		return fail(err, errlen, -ENOMEM, "out of memory opening %u files",
		            opts->nfiles_list);
	for (i = 0; i < opts->nfiles_list; i++)
		if ((size_t)snprintf(t->paths[i], LLMIO_PATH_MAX, "%s", opts->files[i].path) >=
		    LLMIO_PATH_MAX)
			return fail(err, errlen, -ENAMETOOLONG,
			            "path %.64s... is too long; choose a shorter --directory",
			            opts->files[i].path);
	parent_dir(t->paths[0], parent, sizeof(parent));
	if (stat(parent, &st)) {
		if (errno == ENOENT)
			return fail(err, errlen, -ENOENT,
			            "directory %s does not exist; create it or choose another "
			            "--directory",
			            parent);
		return path_fail(err, errlen, errno, "accessing", parent);
	}
	file_dev_facts(t, parent, &st);
	t->align = t->dev.logical_block_size > 512 ? t->dev.logical_block_size : 512;
	rc = check_bs(t, parent, opts->bs, err, errlen);
	for (i = 0; i < opts->nfiles_list && !rc; i++) {
		if (opts->files[i].flags & LLMIO_FILE_FRESH)
			rc = open_fresh(t, i, opts->files[i].size, opts, err, errlen);
		else
			rc = open_file(t, i, opts->files[i].size, opts, writes, err, errlen);
	}
	return rc;
}

int target_open(struct target *t, const struct llmio_job_opts *opts, bool writes, char *err,
                size_t errlen)
{
	bool file = opts->filename[0], dir = opts->directory[0];
	unsigned i;
	int rc;

	memset(t, 0, sizeof(*t));
	if (err && errlen)
		err[0] = '\0';
	if (opts->files && opts->nfiles_list)
		file = dir = false;
	else if (file == dir)
		return fail(err, errlen, -EINVAL, "give --filename or --directory%s",
		            file ? ", not both" : "");
	if (!opts->bs)
		return fail(err, errlen, -EINVAL,
		            "bs=0 is not a block size; give one such as bs=4k");
	t->direct = opts->direct;
	t->writable = writes;

	if (file)
		rc = open_filename(t, opts, writes, err, errlen);
	else if (dir)
		rc = open_directory(t, opts, writes, err, errlen);
	else
		rc = open_list(t, opts, writes, err, errlen);
	if (rc) {
		target_close(t);
		return rc;
	}
	for (i = 0; i < t->nfiles; i++)
		t->total_size += t->sizes[i];
	return 0;
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
	memset(t, 0, sizeof(*t));
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
