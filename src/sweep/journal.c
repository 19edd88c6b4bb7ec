/* SPDX-License-Identifier: MIT */
/*
 * The results journal.  Durability: each record is one write() of a whole line followed by
 * fsync(), so after a crash the file holds complete records and at most one torn last line.
 * A torn line is recognised by its missing newline at the end of the file, or, once a
 * resumed sweep has appended after it, by not being valid JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep/journal.h"
#include "base/error.h"

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int journal_open(struct journal *j, const char *path, struct llmio_error *e)
{
	struct stat st;
	char last;
	int ret;

	j->path = strdup(path);
	if (!j->path)
		return -ENOMEM;
	j->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (j->fd < 0) {
		ret = -errno;
		llmio_err(e, ret, "cannot open journal %s: %s; choose another path", path,
		          strerror(-ret));
		goto err_free;
	}
	if (fstat(j->fd, &st)) {
		ret = -errno;
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		/* a device or FIFO cannot be fsynced or read back by --resume */
		ret = -EINVAL;
		llmio_err(e, ret, "cannot use %s as a journal: it is not a regular file", path);
		close(j->fd);
		goto err_free;
	}
	if (st.st_size > 0) {
		if (pread(j->fd, &last, 1, st.st_size - 1) != 1) {
			ret = -EIO;
			goto err_close;
		}
		if (last != '\n' && ((ret = write_all(j->fd, "\n", 1)) || (ret = -fsync(j->fd))))
			goto err_close;
	}
	return 0;

err_close:
	if (ret == -1)
		ret = -errno;
	llmio_err(e, ret, "cannot prepare journal %s: %s", path, strerror(-ret));
	close(j->fd);
err_free:
	free(j->path);
	j->path = NULL;
	return ret;
}

int journal_append(struct journal *j, const cJSON *rec)
{
	char *text = cJSON_PrintUnformatted(rec);
	struct stat st = {.st_size = -1};
	size_t len;
	int ret;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	text[len] = '\n'; /* cJSON's terminator becomes the newline: one write per record */
	ret = fstat(j->fd, &st) ? -errno : 0;
	if (!ret)
		ret = write_all(j->fd, text, len + 1);
	if (!ret && fsync(j->fd))
		ret = -errno;
	/*
	 * A write cut short (a full disk, a quota) would leave a torn line that a later --resume
	 * could only guess about: take it back, so the journal ends with whole records.
	 */
	if (ret && ret != -ENOMEM && st.st_size >= 0 && !ftruncate(j->fd, st.st_size))
		fsync(j->fd);
	free(text);
	return ret;
}

void journal_close(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	free(j->path);
	j->path = NULL;
}

bool journal_record_hash(const cJSON *rec, uint64_t *hash)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(rec, "config_hash");
	char *end;

	if (!cJSON_IsString(h) || strlen(h->valuestring) != 16)
		return false;
	*hash = strtoull(h->valuestring, &end, 16);
	return !*end;
}

int journal_read(const char *path, journal_fn fn, void *arg, struct llmio_error *e)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, msg[160];
	size_t cap = 0;
	unsigned no = 0;
	ssize_t n;
	int ret = 0;

	if (!f) {
		ret = -errno;
		return llmio_err(e, ret, "cannot read %s: %s", path, strerror(-ret));
	}
	while (!ret && (n = getline(&line, &cap, f)) >= 0) {
		cJSON *rec;
		uint64_t h;

		no++;
		if (n == 0 || line[n - 1] != '\n') {
			snprintf(msg, sizeof(msg),
			         "line %u is incomplete (torn while being written: the sweep was "
			         "killed, or the disk was full); ignoring it",
			         no);
			ret = fn(arg, no, NULL, msg);
			break;
		}
		line[n - 1] = '\0';
		if (!line[0])
			continue; /* the newline a resumed sweep added after a torn line */
		rec = cJSON_Parse(line);
		if (!rec || !cJSON_IsObject(rec) || !journal_record_hash(rec, &h)) {
			snprintf(msg, sizeof(msg), "line %u is %s; ignoring it", no,
			         rec ? "not a point record (no config_hash)"
			             : "not valid JSON (torn by a killed sweep or a full disk)");
			ret = fn(arg, no, NULL, msg);
		} else {
			ret = fn(arg, no, rec, NULL);
		}
		cJSON_Delete(rec);
	}
	if (ferror(f) && !ret) {
		ret = -EIO;
		llmio_err(e, ret, "cannot read %s: %s", path, strerror(EIO));
	}
	free(line);
	fclose(f);
	return ret;
}

static uint64_t rec_hash(const cJSON *rec)
{
	uint64_t h = 0;

	journal_record_hash(rec, &h);
	return h;
}

static int cmp_rec(const void *a, const void *b)
{
	uint64_t x = rec_hash(*(cJSON *const *)a), y = rec_hash(*(cJSON *const *)b);

	return x < y ? -1 : x > y;
}

static int keep_rec(void *arg, unsigned line, const cJSON *rec, const char *skipped)
{
	struct journal_index *ix = arg;
	cJSON **n;

	(void)line;
	(void)skipped;
	if (!rec || !rec_hash(rec))
		return 0;
	n = realloc(ix->recs, (ix->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	ix->recs = n;
	ix->recs[ix->n] = cJSON_Duplicate(rec, true);
	return ix->recs[ix->n++] ? 0 : -ENOMEM;
}

int journal_index_read(struct journal_index *ix, const char *path, struct llmio_error *e)
{
	int ret = journal_read(path, keep_rec, ix, e);

	if (ret == -ENOMEM)
		return llmio_err(e, ret, "out of memory reading %s", path);
	if (!ret && ix->n)
		qsort(ix->recs, ix->n, sizeof(*ix->recs), cmp_rec);
	return ret;
}

const cJSON *journal_index_find(const struct journal_index *ix, uint64_t hash)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t h = rec_hash(ix->recs[mid]);

		if (h == hash)
			return ix->recs[mid];
		if (h < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void journal_index_release(struct journal_index *ix)
{
	for (size_t i = 0; i < ix->n; i++)
		cJSON_Delete(ix->recs[i]);
	free(ix->recs);
	ix->recs = NULL;
	ix->n = 0;
}
