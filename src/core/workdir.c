// SPDX-License-Identifier: MIT
/*
 * Directories llmio owns: the work directory it makes under a user's --directory
 * (llmio_work_dir()) and scratch directories for data removed after the run
 * (llmio_scratch_dir()).  Each holds the marker OWNED_MARK, which only llmio creates, with
 * O_EXCL; a file in such a directory is llmio's own, which target_fill.c may rewrite (the
 * ownership rule).  Jobs with --directory and workload recipes name their files inside
 * llmio_work_dir(), never in the user's directory itself, so those names cannot be a user's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/target_internal.h"
#include "core/error.h"

/* The directory llmio makes for its files under a user's --directory, and its marker. */
#define WORK_DIR   "llmio-work"
#define OWNED_MARK ".llmio-owned"

/* ---------------------------------------------------------------------------------------- */
/* Directories llmio owns                                                                   */

/* Is path in a directory llmio made (its marker is there, a plain file)? */
bool workdir_owns(const char *path)
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
static int mark_owned(const char *dir, struct llmio_error *e)
{
	static const char text[] = "made by llmio: the files here are llmio's own test data; "
	                           "llmio may rewrite or remove them\n";
	char mark[LLMIO_PATH_MAX + sizeof(OWNED_MARK) + 1];
	int fd, rc;

	if ((size_t)snprintf(mark, sizeof(mark), "%s/%s", dir, OWNED_MARK) >= sizeof(mark))
		return llmio_err(e, -ENAMETOOLONG, "directory path %s is too long", dir);
	fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return target_path_fail(e, errno, "creating", mark);
	rc = target_write_all(fd, text, sizeof(text) - 1, 0);
	close(fd);
	if (rc)
		return llmio_err(e, rc, "cannot write %s: %s", mark, strerror(-rc));
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
static int make_marked(const char *base, const char *out, struct llmio_error *e)
{
	char tmp[LLMIO_PATH_MAX + 32], mark[LLMIO_PATH_MAX + 64];
	int rc, errnum;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/." WORK_DIR ".XXXXXX", base) >= sizeof(tmp))
		return llmio_err(e, -ENAMETOOLONG, "directory path %s is too long", base);
	if (!mkdtemp(tmp))
		return target_path_fail(e, errno, "creating a directory in", base);
	rc = chmod(tmp, 0755) ? target_path_fail(e, errno, "setting the mode of", tmp)
	                      : mark_owned(tmp, e);
	errnum = rc ? 0 : renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE) ? errno : 0;
	if (rc || errnum) {
		snprintf(mark, sizeof(mark), "%s/%s", tmp, OWNED_MARK);
		unlink(mark);
		rmdir(tmp);
	}
	if (rc || !errnum)
		return rc;
	if (errnum == EEXIST)
		return -EEXIST;
	if (errnum != EINVAL && errnum != ENOSYS)
		return target_path_fail(e, errnum, "creating", out);
	if (mkdir(out, 0755))
		return errno == EEXIST ? -EEXIST : target_path_fail(e, errno, "creating", out);
	rc = mark_owned(out, e);
	if (rc)
		rmdir(out);
	return rc;
}

/* llmio_work_dir(); *made says whether this call made the directory. */
int workdir_make(const char *dir, char *out, size_t len, bool *made, struct llmio_error *e)
{
	char base[LLMIO_PATH_MAX];
	struct stat st;
	int rc;

	*made = false;
	if (trim_dir(dir, base, sizeof(base)) ||
	    (size_t)snprintf(out, len, "%s/" WORK_DIR, base) >= len)
		return llmio_err(e, -ENAMETOOLONG,
		                 "directory path %s is too long; choose a shorter --directory",
		                 dir);
	if (stat(base, &st))
		return errno == ENOENT
		               ? llmio_err(e, -ENOENT,
		                           "directory %s does not exist; create it or choose "
		                           "another --directory",
		                           base)
		               : target_path_fail(e, errno, "accessing", base);
	if (!S_ISDIR(st.st_mode))
		return llmio_err(e, -EINVAL, "%s is not a directory; choose another --directory",
		                 base);
	rc = make_marked(base, out, e);
	if (rc != -EEXIST) {
		*made = rc == 0;
		return rc;
	}
	snprintf(base, sizeof(base), "%s/x", out); /* workdir_owns() looks beside a file */
	if (lstat(out, &st) || !S_ISDIR(st.st_mode) || !workdir_owns(base))
		return llmio_err(
		        e, -EEXIST,
		        "%s exists but llmio did not make it (no %s inside); llmio keeps its "
		        "files there and writes nowhere else: rename it or choose another "
		        "--directory",
		        out, OWNED_MARK);
	return 0;
}

int llmio_work_dir(const char *dir, char *out, size_t len, struct llmio_error *e)
{
	bool made;

	return workdir_make(dir, out, len, &made, e);
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

int llmio_scratch_dir(const char *dir, const char *prefix, char *out, size_t len,
                      struct llmio_error *e)
{
	char base[LLMIO_PATH_MAX];
	int rc;

	if (trim_dir(dir, base, sizeof(base)) ||
	    (size_t)snprintf(out, len, "%s/%s.XXXXXX", base, prefix) >= len)
		return llmio_err(e, -ENAMETOOLONG, "directory path %s is too long", dir);
	if (!mkdtemp(out))
		return target_path_fail(e, errno, "creating a directory in", base);
	rc = mark_owned(out, e);
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
	if (!workdir_owns(path))
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
