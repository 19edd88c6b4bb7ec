/* SPDX-License-Identifier: MIT */
/* What a recipe run leaves on disk (leftover.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/target_internal.h"
#include "workload/leftover.h"

/* The marker of an llmio directory (job/workdir.c): neither counted nor removed here. */
#define OWNED_MARK ".llmio-owned"

int wl_leftover_begin(struct wl_leftover *l, const char *directory, struct llmio_error *e)
{
	struct llmio_error ignored = {0};
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	memset(l, 0, sizeof(*l));
	if (!directory[0] || workdir_make(directory, l->dir, sizeof(l->dir), &l->made, &ignored))
		return 0; /* the run says what is wrong with the directory */
	d = opendir(l->dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (l->nbefore == cap) {
			void *p =
			        realloc(l->before, (cap = cap ? 2 * cap : 64) * sizeof(*l->before));

			if (!p) {
				closedir(d);
				wl_leftover_release(l);
				return llmio_err(e, -ENOMEM, "out of memory listing %s", l->dir);
			}
			l->before = p;
		}
		snprintf(l->before[l->nbefore++], sizeof(*l->before), "%s", de->d_name);
	}
	closedir(d);
	l->active = true;
	return 0;
}

static bool was_there(const struct wl_leftover *l, const char *name)
{
	for (size_t i = 0; i < l->nbefore; i++)
		if (!strcmp(l->before[i], name))
			return true;
	return false;
}

int wl_leftover_end(struct wl_leftover *l, bool keep, struct llmio_error *e)
{
	struct dirent *de;
	struct stat st;
	int ret = 0;
	DIR *d;

	if (!l->active)
		return 0;
	if (!(d = opendir(l->dir))) {
		/* a recipe that stopped early prunes the directory it made (llmio_work_dir_prune)
		 */
		l->dir_removed = errno == ENOENT && l->made;
		return 0;
	}
	while ((de = readdir(d))) {
		/* plain files only: a recipe makes nothing else, and a link is never followed */
		if (!strcmp(de->d_name, OWNED_MARK) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (was_there(l, de->d_name)) {
			l->theirs++;
			l->theirs_bytes += (uint64_t)st.st_size;
			continue;
		}
		l->ours++;
		l->ours_bytes += (uint64_t)st.st_size;
		if (keep)
			continue;
		/* under mpirun every rank removes what the run made: gone already is removed */
		if (unlinkat(dirfd(d), de->d_name, 0) == 0 || errno == ENOENT)
			l->removed++;
		else if (!ret)
			ret = llmio_err(e, -errno, "cannot remove %s/%s: %s", l->dir, de->d_name,
			                strerror(errno));
	}
	closedir(d);
	if (!keep && l->made && !l->theirs) {
		llmio_work_dir_prune(l->dir); /* only when nothing but the marker is left */
		l->dir_removed = access(l->dir, F_OK) != 0;
	}
	return ret;
}

void wl_leftover_release(struct wl_leftover *l)
{
	free(l->before);
	l->before = NULL;
	l->nbefore = 0;
}

int wl_leftovers_add_dir(struct wl_leftovers *s, const char *directory, struct llmio_error *e)
{
	struct wl_leftover l, *dirs;
	int ret = wl_leftover_begin(&l, directory, e);

	if (ret || !l.active)
		return ret;
	for (size_t i = 0; i < s->ndirs; i++)
		if (!strcmp(s->dirs[i].dir, l.dir)) { /* "d" and "d/" are one directory */
			wl_leftover_release(&l);
			return 0;
		}
	dirs = realloc(s->dirs, (s->ndirs + 1) * sizeof(*dirs));
	if (!dirs) {
		wl_leftover_release(&l);
		return llmio_err(e, -ENOMEM, "out of memory noting %s", l.dir);
	}
	s->dirs = dirs;
	s->dirs[s->ndirs++] = l;
	return 0;
}

/* Append path to the named files the run counts as its own. */
static int note_file(struct wl_leftovers *s, const char *path, struct llmio_error *e)
{
	void *files = realloc(s->files, (s->nfiles + 1) * sizeof(*s->files));

	if (!files)
		return llmio_err(e, -ENOMEM, "out of memory noting %s", path);
	s->files = files;
	snprintf(s->files[s->nfiles++], sizeof(*s->files), "%s", path);
	return 0;
}

int wl_leftovers_add_file(struct wl_leftovers *s, const char *path, struct llmio_error *e)
{
	struct stat st;

	if (!path[0] || lstat(path, &st) == 0 || errno != ENOENT)
		return 0; /* there already (or unknowable): never the run's to remove */
	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i], path))
			return 0;
	return note_file(s, path, e);
}

int wl_leftovers_end(struct wl_leftovers *s, bool keep, struct llmio_error *e)
{
	struct stat st;
	int ret = 0;

	for (size_t i = 0; i < s->ndirs; i++) {
		int r = wl_leftover_end(&s->dirs[i], keep, e);

		ret = ret ? ret : r;
	}
	for (size_t i = 0; i < s->nfiles; i++) {
		if (lstat(s->files[i], &st) || !S_ISREG(st.st_mode))
			continue; /* never made, or not a file llmio makes */
		s->files_ours++;
		s->files_bytes += (uint64_t)st.st_size;
		if (keep)
			continue;
		if (unlink(s->files[i]) == 0 || errno == ENOENT)
			s->files_removed++;
		else if (!ret)
			ret = llmio_err(e, -errno, "cannot remove %s: %s", s->files[i],
			                strerror(errno));
	}
	return ret;
}

void wl_leftovers_release(struct wl_leftovers *s)
{
	for (size_t i = 0; i < s->ndirs; i++)
		wl_leftover_release(&s->dirs[i]);
	free(s->dirs);
	free(s->files);
	memset(s, 0, sizeof(*s));
}

/*
 * The manifest: what was on disk where the points write before the sweep's first point, so
 * that a sweep killed before it could clean up (kill -9, a crash, a power cut) can be resumed
 * knowing which files are its own.  Records end with a NUL (a name may hold any other byte):
 * "llmio-made 1", then per directory "D<dir>", "M0" / "M1" (the sweep made it), "B<name>" per
 * name there before; per named file that was missing "F<path>".
 */
#define MANIFEST_MAGIC "llmio-made 1"
#define MANIFEST_MAX   (64u << 20)

/* One record: tag (none when 0), text, NUL. */
static int put_rec(FILE *f, char tag, const char *text)
{
	return (tag && fputc(tag, f) == EOF) || fputs(text, f) == EOF || fputc('\0', f) == EOF
	               ? -EIO
	               : 0;
}

int wl_leftovers_save(const struct wl_leftovers *s, const char *path, struct llmio_error *e)
{
	char tmp[LLMIO_PATH_MAX + 16];
	FILE *f = NULL;
	int fd, ret = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return llmio_err(e, -ENAMETOOLONG, "%s: the path is too long", path);
	unlink(tmp); /* a killed save's: ours, by its name */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		return llmio_err(e, ret, "cannot create %s: %s", tmp, strerror(-ret));
	}
	ret = put_rec(f, 0, MANIFEST_MAGIC);
	for (size_t i = 0; !ret && i < s->ndirs; i++) {
		const struct wl_leftover *l = &s->dirs[i];

		ret = put_rec(f, 'D', l->dir) ?: put_rec(f, 'M', l->made ? "1" : "0");
		for (size_t k = 0; !ret && k < l->nbefore; k++)
			ret = put_rec(f, 'B', l->before[k]);
	}
	for (size_t i = 0; !ret && i < s->nfiles; i++)
		ret = put_rec(f, 'F', s->files[i]);
	if (!ret && (fflush(f) || fsync(fileno(f))))
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return llmio_err(e, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	return 0;
}

/* Append a directory entry read from a manifest: active, its names before as they were. */
static int load_dir(struct wl_leftovers *s, const char *dir, struct llmio_error *e)
{
	struct wl_leftover *dirs = realloc(s->dirs, (s->ndirs + 1) * sizeof(*dirs));

	if (!dirs)
		return llmio_err(e, -ENOMEM, "out of memory noting %s", dir);
	s->dirs = dirs;
	memset(&dirs[s->ndirs], 0, sizeof(*dirs));
	snprintf(dirs[s->ndirs].dir, sizeof(dirs->dir), "%s", dir);
	dirs[s->ndirs].active = true;
	s->ndirs++;
	return 0;
}

static int load_rec(struct wl_leftovers *s, char tag, const char *text, struct llmio_error *e)
{
	struct wl_leftover *l = s->ndirs ? &s->dirs[s->ndirs - 1] : NULL;
	void *p;

	switch (tag) {
	case 'D':
		return load_dir(s, text, e);
	case 'M':
		if (l)
			l->made = text[0] == '1';
		return 0;
	case 'B':
		if (!l)
			return -EINVAL;
		p = realloc(l->before, (l->nbefore + 1) * sizeof(*l->before));
		if (!p)
			return llmio_err(e, -ENOMEM, "out of memory noting %s", l->dir);
		l->before = p;
		snprintf(l->before[l->nbefore++], sizeof(*l->before), "%s", text);
		return 0;
	case 'F':
		return note_file(s, text, e);
	default:
		return -EINVAL;
	}
}

int wl_leftovers_load(struct wl_leftovers *s, const char *path, struct llmio_error *e)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL, *p, *end;
	size_t len;
	int ret = 0;

	if (!f)
		return errno == ENOENT
		               ? 0
		               : llmio_err(e, -errno, "cannot read %s: %s", path, strerror(errno));
	buf = malloc(MANIFEST_MAX);
	len = buf ? fread(buf, 1, MANIFEST_MAX, f) : 0;
	fclose(f);
	if (!buf)
		return llmio_err(e, -ENOMEM, "out of memory reading %s", path);
	end = buf + len;
	/* a torn manifest (killed while saving it) never made it into place: rename is atomic */
	if (len == MANIFEST_MAX || len < sizeof(MANIFEST_MAGIC) || end[-1] != '\0' ||
	    strcmp(buf, MANIFEST_MAGIC)) {
		ret = llmio_err(e, -EINVAL,
		                "%s is not a manifest of llmio's; remove it to resume without it",
		                path);
		goto out;
	}
	for (p = buf + sizeof(MANIFEST_MAGIC); !ret && p < end; p += strlen(p) + 1)
		ret = load_rec(s, p[0], p + 1, e);
	if (ret == -EINVAL)
		llmio_err(e, ret, "%s is not a manifest of llmio's; remove it to resume without it",
		          path);
	ret = ret ? ret : 1;
out:
	free(buf);
	return ret;
}

int wl_leftovers_count(const struct wl_leftovers *s, unsigned *files, uint64_t *bytes)
{
	struct wl_leftovers c = *s;
	struct llmio_error ignored = {0};

	/* wl_leftovers_end() with keep counts without removing: on copies of the counters */
	c.dirs = malloc((s->ndirs ? s->ndirs : 1) * sizeof(*c.dirs));
	if (!c.dirs)
		return -ENOMEM;
	for (size_t i = 0; i < s->ndirs; i++) {
		c.dirs[i] = s->dirs[i];
		c.dirs[i].ours = c.dirs[i].removed = c.dirs[i].theirs = 0;
		c.dirs[i].ours_bytes = c.dirs[i].theirs_bytes = 0;
	}
	c.files_ours = c.files_removed = 0;
	c.files_bytes = 0;
	wl_leftovers_end(&c, true, &ignored);
	*files = c.files_ours;
	*bytes = c.files_bytes;
	for (size_t i = 0; i < s->ndirs; i++) {
		*files += c.dirs[i].ours;
		*bytes += c.dirs[i].ours_bytes;
	}
	free(c.dirs);
	return 0;
}
