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

#include "core/target_internal.h"
#include "workload/leftover.h"

/* The marker of an llmio directory (core/workdir.c): neither counted nor removed here. */
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

int wl_leftovers_add_file(struct wl_leftovers *s, const char *path, struct llmio_error *e)
{
	struct stat st;
	void *files;

	if (!path[0] || lstat(path, &st) == 0 || errno != ENOENT)
		return 0; /* there already (or unknowable): never the run's to remove */
	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i], path))
			return 0;
	files = realloc(s->files, (s->nfiles + 1) * sizeof(*s->files));
	if (!files)
		return llmio_err(e, -ENOMEM, "out of memory noting %s", path);
	s->files = files;
	snprintf(s->files[s->nfiles++], sizeof(*s->files), "%s", path);
	return 0;
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
