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
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "job/target_internal.h"
#include "base/error.h"

/* The marker of the directory llmio makes for its files (TARGET_WORK_DIR, job/target.h). */
#define WORK_DIR   TARGET_WORK_DIR
#define OWNED_MARK ".llmio-owned"

/* ---------------------------------------------------------------------------------------- */
/* Directories llmio owns                                                                   */

/* "user NAME (uid N)", or "uid N" when the user has no name here. */
static void user_name(uid_t uid, char *out, size_t len)
{
	struct passwd pw, *res = NULL;
	char buf[1024];

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(out, len, "user %s (uid %u)", res->pw_name, (unsigned)uid);
	else
		snprintf(out, len, "uid %u", (unsigned)uid);
}

/*
 * Is the directory open at dfd (shown as `dir`) llmio's own, made by the user running this
 * process?  A marker alone proves nothing: anyone can make a directory of that name with a
 * file of that name in it (and a symbolic link to a file of ours beside it).  So the
 * directory and its marker must belong to this process's user, and no one else may write in
 * the directory, where they could swap a file for a link.  \return 0, or -EPERM / -ENOENT
 * with the reason in e.
 */
static int dir_is_ours(int dfd, const char *dir, struct llmio_error *e)
{
	const uid_t me = geteuid();
	char who[96], mine[96];
	struct stat st;

	if (fstat(dfd, &st))
		return target_path_fail(e, errno, "accessing", dir);
	if (st.st_uid != me) {
		user_name(st.st_uid, who, sizeof(who));
		user_name(me, mine, sizeof(mine));
		return llmio_err(e, -EPERM,
		                 "%s belongs to %s, not to %s who runs llmio; llmio uses only a "
		                 "work directory it made as you: remove it or choose another "
		                 "--directory",
		                 dir, who, mine);
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return llmio_err(e, -EPERM,
		                 "%s is writable by other users (mode %04o), who could swap its "
		                 "files for links; run chmod go-w %s or choose another --directory",
		                 dir, (unsigned)(st.st_mode & 07777), dir);
	if (fstatat(dfd, OWNED_MARK, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
		return llmio_err(e, -ENOENT,
		                 "%s exists but llmio did not make it (no %s inside); llmio keeps "
		                 "its files there and writes nowhere else: rename it or choose "
		                 "another --directory",
		                 dir, OWNED_MARK);
	if (st.st_uid != me) {
		user_name(st.st_uid, who, sizeof(who));
		return llmio_err(e, -EPERM,
		                 "%s/%s belongs to %s, not to the user who runs llmio; remove %s "
		                 "or choose another --directory",
		                 dir, OWNED_MARK, who, dir);
	}
	return 0;
}

/* Open directory `dir` itself, never through a symbolic link. */
static int open_dir_nofollow(const char *dir)
{
	return open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * The descriptor of the directory holding path when it is llmio's own (dir_is_ours()), or -1.
 * *base points at path's last component.
 */
static int owned_parent(const char *path, const char **base)
{
	char dir[LLMIO_PATH_MAX];
	const char *slash = strrchr(path, '/');
	int dfd;

	*base = slash ? slash + 1 : path;
	if ((size_t)snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
	                     slash ? (slash == path ? "/" : path) : ".") >= sizeof(dir))
		return -1;
	dfd = open_dir_nofollow(dir);
	if (dfd >= 0 && dir_is_ours(dfd, dir, NULL)) {
		close(dfd);
		dfd = -1;
	}
	return dfd;
}

bool workdir_owns(const char *path)
{
	const char *base;
	int dfd = owned_parent(path, &base);

	if (dfd < 0)
		return false;
	close(dfd);
	return true;
}

int workdir_open(const char *path, int flags, mode_t mode)
{
	const char *base;
	int dfd = owned_parent(path, &base), fd, errnum;

	if (dfd < 0)
		return open(path, flags, mode);
	/* the directory checked is the one opened in: no name on the way is looked up again */
	fd = openat(dfd, base, flags | O_NOFOLLOW, mode);
	errnum = errno;
	close(dfd);
	errno = errnum;
	return fd;
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
	int rc, fd;

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
	/* someone's directory of that name: llmio's only when it passes dir_is_ours() */
	fd = open_dir_nofollow(out);
	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR
		               ? llmio_err(e, -EEXIST,
		                           "%s exists but is not a directory llmio made (it is "
		                           "a symbolic link or a file); llmio keeps its files "
		                           "there and writes nowhere else: rename it or choose "
		                           "another --directory",
		                           out)
		               : target_path_fail(e, errno, "opening", out);
	rc = dir_is_ours(fd, out, e);
	close(fd);
	return rc == -ENOENT ? -EEXIST : rc;
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
