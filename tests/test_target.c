/* SPDX-License-Identifier: MIT */
/*
 * Whose files llmio writes: a read job reads an existing file it did not create as it is (no
 * fill, no extension; shorter than the job's size: refused unless extend); files in a
 * directory llmio made are llmio's and are prepared; llmio's directories are recognised by
 * their marker, and one of llmio's names that llmio did not make is refused.  And a file
 * truncated under a running job ends it with "end of file" and its results, on psync and on
 * mmap (which would otherwise die of SIGBUS): the I/O source truncates the file itself after
 * a few I/Os, so the test is deterministic.  And the mount table under a target: a mountinfo
 * in the kernel's format (proc(5)) read for the facts a record names.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "llmio/llmio.h"
#include "base/error.h"
#include "job/target_internal.h"

static char dir[2048];

/* A path under the test's directory. */
static const char *at(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

/* An 8 KiB file whose first 4 KiB are a hole and whose second 4 KiB hold 'u'. */
static void make_sparse(const char *path)
{
	char data[4096];
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	memset(data, 'u', sizeof(data));
	assert_int_equal(pwrite(fd, data, sizeof(data), 4096), (ssize_t)sizeof(data));
	close(fd);
}

static off_t first_data(const char *path)
{
	int fd = open(path, O_RDONLY);
	off_t d;

	assert_true(fd >= 0);
	d = lseek(fd, 0, SEEK_DATA);
	close(fd);
	return d;
}

static int read_job(const char *path, uint64_t size, bool extend, struct llmio_error *e)
{
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	int ret;

	llmio_job_opts_init(&o);
	snprintf(o.filename, sizeof(o.filename), "%s", path);
	o.size = size;
	o.bs = 4096;
	o.extend = extend;
	ret = llmio_job_run(&o, &r, e);
	llmio_result_destroy(r);
	return ret;
}

static void read_job_leaves_user_file(void **state)
{
	struct llmio_error err = {0};
	char path[LLMIO_PATH_MAX];
	struct stat st0, st1;

	(void)state;
	make_sparse(at(path, sizeof(path), "user-sparse"));
	assert_int_equal(stat(path, &st0), 0);
	assert_int_equal(read_job(path, 0, false, &err), 0);
	assert_int_equal(stat(path, &st1), 0);
	assert_int_equal(st1.st_size, 8192);
	assert_int_equal(st1.st_blocks, st0.st_blocks);
	assert_int_equal(first_data(path), 4096); /* the hole is still there */

	/* too small for the job: refused, unchanged */
	assert_int_equal(read_job(path, 1 << 20, false, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "--extend"));
	assert_int_equal(stat(path, &st1), 0);
	assert_int_equal(st1.st_size, 8192);
	assert_int_equal(st1.st_blocks, st0.st_blocks);

	/* extend: the tail is appended and written, the file's own hole stays */
	assert_int_equal(read_job(path, 1 << 20, true, &err), 0);
	assert_int_equal(stat(path, &st1), 0);
	assert_int_equal(st1.st_size, 1 << 20);
	assert_int_equal(first_data(path), 4096);
	unlink(path);
}

static void owned_files_are_prepared(void **state)
{
	struct llmio_error err = {0};
	char work[4200], path[4300];
	struct llmio_job_opts o;
	struct llmio_result *r = NULL;
	struct llmio_file f;
	struct stat st;

	(void)state;
	assert_int_equal(llmio_work_dir(dir, work, sizeof(work), &err), 0);
	snprintf(path, sizeof(path), "%s/sparse", work);
	make_sparse(path);
	llmio_job_opts_init(&o);
	f = (struct llmio_file){.path = path, .size = 65536};
	o.files = &f;
	o.nfiles_list = 1;
	o.bs = 4096;
	assert_int_equal(llmio_job_run(&o, &r, &err), 0);
	llmio_result_destroy(r);
	/* llmio's own file: hole filled, extended to the size the job needs */
	assert_int_equal(first_data(path), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 65536);
	unlink(path);
}

static void directories(void **state)
{
	struct llmio_error err = {0};
	char a[4200], b[4200], path[4300], user[4200];
	struct stat st;
	int fd;

	(void)state;
	/* made once, then reused */
	assert_int_equal(llmio_work_dir(dir, a, sizeof(a), &err), 0);
	assert_int_equal(llmio_work_dir(dir, b, sizeof(b), &err), 0);
	assert_string_equal(a, b);
	snprintf(path, sizeof(path), "%s/.llmio-owned", a);
	assert_int_equal(lstat(path, &st), 0);
	/* pruned only while nothing but the marker is inside */
	snprintf(path, sizeof(path), "%s/kept", a);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	llmio_work_dir_prune(a);
	assert_int_equal(lstat(a, &st), 0);
	unlink(path);
	llmio_work_dir_prune(a);
	assert_int_equal(lstat(a, &st), -1);
	assert_int_equal(llmio_work_dir(dir, a, sizeof(a), &err), 0);

	/* a user's directory of that name, or a symlink there, is not llmio's */
	at(user, sizeof(user), "userdir");
	mkdir(user, 0755);
	snprintf(path, sizeof(path), "%s/llmio-work", user);
	mkdir(path, 0755);
	assert_int_equal(llmio_work_dir(user, a, sizeof(a), &err), -EEXIST);
	assert_non_null(strstr(err.msg, "did not make"));
	rmdir(path);
	assert_int_equal(symlink(b, path), 0); /* points at a real llmio-work */
	assert_int_equal(llmio_work_dir(user, a, sizeof(a), &err), -EEXIST);
	unlink(path);
	assert_int_equal(llmio_work_dir(at(path, sizeof(path), "missing"), a, sizeof(a), &err),
	                 -ENOENT);

	/* scratch: a fresh name each time; removal takes only a marked directory */
	assert_int_equal(llmio_scratch_dir(dir, "llmio-quick", a, sizeof(a), &err), 0);
	assert_int_equal(llmio_scratch_dir(dir, "llmio-quick", b, sizeof(b), &err), 0);
	assert_string_not_equal(a, b);
	snprintf(path, sizeof(path), "%s/scratch", a);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(llmio_scratch_remove(a), 0);
	assert_int_equal(stat(a, &st), -1);
	assert_int_equal(llmio_scratch_remove(b), 0);
	snprintf(path, sizeof(path), "%s/keep", user);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(llmio_scratch_remove(user), -EPERM);
	assert_int_equal(stat(path, &st), 0);
	unlink(path);
	rmdir(user);
}

/* Reads 4 KiB blocks of file 0 front to back; truncates the file after `cut` of them. */
struct cutter {
	const char *path;
	uint64_t issued, cut;
};

static int cut_next(void *arg, unsigned thread, struct llmio_io *io)
{
	struct cutter *c = arg;

	(void)thread;
	if (c->issued == c->cut)
		assert_int_equal(truncate(c->path, 0), 0);
	if (c->issued >= 256)
		return 0;
	*io = (struct llmio_io){.file = 0, .len = 4096, .off = c->issued * 4096};
	c->issued++;
	return 1;
}

static void truncated_mid_run(void **state)
{
	static const char *const engines[] = {"psync", "mmap"};
	struct llmio_error err = {0};
	char path[LLMIO_PATH_MAX];

	(void)state;
	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		struct cutter c = {.path = at(path, sizeof(path), "truncated"), .cut = 16};
		struct llmio_io_source src = {.next = cut_next, .arg = &c};
		struct llmio_file f = {.path = path, .size = 1 << 20};
		struct llmio_job_opts o;
		struct llmio_result *r = NULL;
		int ret;

		unlink(path);
		llmio_job_opts_init(&o);
		snprintf(o.engine, sizeof(o.engine), "%s", engines[e]);
		o.files = &f;
		o.nfiles_list = 1;
		o.io_source = &src;
		o.bs = 4096;
		ret = llmio_job_run(&o, &r, &err);
		assert_int_not_equal(ret, 0);
		assert_non_null(strstr(err.msg, "end of file"));
		assert_non_null(r); /* what was measured is kept */
		assert_int_equal(r->read.ios, 16);
		llmio_result_destroy(r);
		unlink(path);
	}
}

/*
 * The first mount of a device, its mount point and source unescaped (\040 is a space, \134 a
 * backslash), optional fields (shared:, master:) before the "-"; a line that is not in the
 * format skipped; a device that is not there and a file that is not there: -ENOENT.
 */
static void mountinfo_fixture(void **state)
{
	static const char *const lines =
	        "21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	        "not a mountinfo line\n"
	        "22 21 8:2 / /mnt/my\\040disk rw,relatime shared:2 master:1 - xfs /dev/sdb\\0401 "
	        "rw\n"
	        "23 21 8:2 / /second rw - xfs /dev/sdb1 rw\n"
	        "24 21 0:50 / /tmp rw,nosuid - tmpfs tmpfs rw\n"
	        "25 21 0:51 /sub /btr\\134x rw - btrfs /dev/nvme0n1p2 rw,ssd\n";
	struct mount_entry me;
	char path[2100];
	FILE *f;

	(void)state;
	at(path, sizeof(path), "mountinfo");
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(lines, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(target_mount_find_in(path, makedev(8, 1), &me), 0);
	assert_string_equal(me.dir, "/");
	assert_string_equal(me.fstype, "ext4");
	assert_string_equal(me.source, "/dev/sda1");
	assert_int_equal(target_mount_find_in(path, makedev(8, 2), &me), 0);
	assert_string_equal(me.dir, "/mnt/my disk");
	assert_string_equal(me.fstype, "xfs");
	assert_string_equal(me.source, "/dev/sdb 1");
	assert_int_equal(target_mount_find_in(path, makedev(0, 50), &me), 0);
	assert_string_equal(me.dir, "/tmp");
	assert_string_equal(me.source, "tmpfs");
	assert_int_equal(target_mount_find_in(path, makedev(0, 51), &me), 0);
	assert_string_equal(me.dir, "/btr\\x");
	assert_string_equal(me.source, "/dev/nvme0n1p2");
	assert_int_equal(target_mount_find_in(path, makedev(9, 9), &me), -ENOENT);
	unlink(path);
	assert_int_equal(target_mount_find_in(path, makedev(8, 1), &me), -ENOENT);
}

/* This process's own table: /proc is the proc filesystem (its first mount may be elsewhere in
 * a container, so only the type is certain) */
static void mountinfo_of_proc(void **state)
{
	struct mount_entry me;
	struct stat st;

	(void)state;
	assert_int_equal(stat("/proc", &st), 0);
	assert_int_equal(target_mount_find(st.st_dev, &me), 0);
	assert_string_equal(me.fstype, "proc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(read_job_leaves_user_file),
	        cmocka_unit_test(owned_files_are_prepared),
	        cmocka_unit_test(directories),
	        cmocka_unit_test(truncated_mid_run),
	        cmocka_unit_test(mountinfo_fixture),
	        cmocka_unit_test(mountinfo_of_proc),
	};
	const char *b = getenv("LLMIO_TEST_DIR");

	snprintf(dir, sizeof(dir), "%s/target", b ? b : "/tmp/llmio-test");
	mkdir(b ? b : "/tmp/llmio-test", 0755);
	mkdir(dir, 0755);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
