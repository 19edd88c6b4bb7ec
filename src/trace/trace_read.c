/* SPDX-License-Identifier: MIT */
/* Reading and checking a merged trace; the thread index; phase inference. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/trace_map.h"
#include "base/error.h"
#include "trace/trace_read.h"

static const char *const type_names[TR_NTYPES] = {
        [TR_NONE] = "?",
        [TR_OPEN] = "open",
        [TR_CLOSE] = "close",
        [TR_DUP] = "dup",
        [TR_READ] = "read",
        [TR_PREAD] = "pread",
        [TR_READV] = "readv",
        [TR_PREADV] = "preadv",
        [TR_WRITE] = "write",
        [TR_PWRITE] = "pwrite",
        [TR_WRITEV] = "writev",
        [TR_PWRITEV] = "pwritev",
        [TR_LSEEK] = "lseek",
        [TR_FSYNC] = "fsync",
        [TR_FDATASYNC] = "fdatasync",
        [TR_SYNC_RANGE] = "sync_file_range",
        [TR_MMAP] = "mmap",
        [TR_MUNMAP] = "munmap",
        [TR_MSYNC] = "msync",
        [TR_FALLOCATE] = "fallocate",
        [TR_FTRUNCATE] = "ftruncate",
        [TR_RENAME] = "rename",
        [TR_UNLINK] = "unlink",
        [TR_FOPEN] = "fopen",
        [TR_FREAD] = "fread",
        [TR_FWRITE] = "fwrite",
        [TR_FFLUSH] = "fflush",
        [TR_FCLOSE] = "fclose",
};

const char *trace_type_name(unsigned type)
{
	return type < TR_NTYPES && type_names[type] ? type_names[type] : "?";
}

bool trace_type_is_read(unsigned type)
{
	return type == TR_READ || type == TR_PREAD || type == TR_READV || type == TR_PREADV ||
	       type == TR_FREAD;
}

bool trace_type_is_write(unsigned type)
{
	return type == TR_WRITE || type == TR_PWRITE || type == TR_WRITEV || type == TR_PWRITEV ||
	       type == TR_FWRITE;
}

int trace_rec_check(const struct trace_rec *r, char *why, size_t len)
{
	bool data = trace_type_is_read(r->type) || trace_type_is_write(r->type);
	bool stdio = r->type == TR_FREAD || r->type == TR_FWRITE;
	uint64_t max = stdio ? TRACE_STDIO_MAX : TRACE_IO_MAX;
	const char *name = trace_type_name(r->type);

	if (r->ts >= TRACE_TIME_MAX || r->dur >= TRACE_TIME_MAX) {
		snprintf(why, len,
		         "%s time %" PRIu64 " ns or duration %" PRIu64 " ns is over 2^62 ns", name,
		         r->ts, r->dur);
		return -ERANGE;
	}
	if (data && r->result > 0 && (uint64_t)r->result > max) {
		snprintf(why, len,
		         "%s result %" PRId64 " is over %" PRIu64 ", the most one call can move",
		         name, r->result, max);
		return -ERANGE;
	}
	/* a failed call records the offset it was given (pread at -5: EINVAL); only data that
	 * moved has to lie in a file.  result <= 2^40 here, so the sum cannot wrap. */
	if (data && r->offset != TRACE_OFF_NONE && r->result > 0 &&
	    (r->offset > TRACE_POS_MAX || r->offset + (uint64_t)r->result > TRACE_POS_MAX)) {
		snprintf(why, len,
		         "%s at offset %" PRIu64 " of %" PRId64 " bytes ends past 2^63 - 1", name,
		         r->offset, r->result);
		return -ERANGE;
	}
	return 0;
}

const char *trace_str(const struct trace *t, uint32_t off)
{
	return off < t->str_len ? t->str + off : "";
}

const char *trace_rec_served(const struct trace_rec *r)
{
	if (r->type == TR_RENAME)
		return NULL;
	return r->path2 == TRACE_SERVED_CACHE    ? "page cache"
	       : r->path2 == TRACE_SERVED_DEVICE ? "device"
	                                         : NULL;
}

const char *trace_rec_path(const struct trace *t, const struct trace_rec *r)
{
	return trace_str(t, r->path);
}

const struct trace_proc *trace_proc_find(const struct trace *t, uint32_t pid)
{
	for (size_t i = 0; i < t->nproc; i++)
		if (t->proc[i].pid == pid)
			return &t->proc[i];
	return NULL;
}

/* Does section [off, off + n * size) lie inside the file? */
static bool section_ok(uint64_t off, uint64_t n, uint64_t size, uint64_t file)
{
	return off <= file && (size == 0 || n <= (file - off) / size) && (off & 7) == 0;
}

static int check(struct trace *t, const char *name, struct llmio_error *e)
{
	const struct trace_file_hdr *h = &t->hdr;
	uint64_t file = t->size;
	char why[160];

	if (memcmp(h->magic, TRACE_MAGIC, 8))
		return llmio_err(e, -EINVAL, "%s is not an llmio trace (no %s magic)", name,
		                 TRACE_MAGIC);
	if (h->version != TRACE_VERSION || h->rec_size != sizeof(struct trace_rec) ||
	    h->hdr_size < sizeof(*h)) {
		return llmio_err(
		        e, -EINVAL,
		        "%s: trace format version %u is not supported (this llmio reads %d)", name,
		        h->version, TRACE_VERSION);
	}
	/* section_ok bounds every count by the file size; the thread index stores record
	 * indexes as uint32_t */
	if (!section_ok(h->rec_off, h->nrec, sizeof(struct trace_rec), file) ||
	    h->nrec > UINT32_MAX || !section_ok(h->str_off, h->str_len, 1, file) ||
	    h->str_len < 1 || h->str_len > UINT32_MAX ||
	    !section_ok(h->proc_off, h->nproc, sizeof(struct trace_proc), file) ||
	    !section_ok(h->phase_off, h->nphase, sizeof(struct trace_phase), file) ||
	    h->nphase < 1 || h->nphase > UINT16_MAX + 1ull ||
	    !section_ok(h->pev_off, h->npev, sizeof(struct trace_phase_ev), file)) {
		return llmio_err(e, -EINVAL,
		                 "%s: trace is truncated or damaged (a section lies outside it)",
		                 name);
	}
	if (h->t_start > h->t_end || h->t_end >= 2 * TRACE_TIME_MAX)
		return llmio_err(e, -EINVAL,
		                 "%s: trace span %" PRIu64 "..%" PRIu64 " ns is damaged", name,
		                 h->t_start, h->t_end);
	t->rec = (struct trace_rec *)((char *)t->buf + h->rec_off);
	t->nrec = h->nrec;
	t->str = (const char *)t->buf + h->str_off;
	t->str_len = h->str_len;
	t->proc = (const struct trace_proc *)((char *)t->buf + h->proc_off);
	t->nproc = h->nproc;
	t->phase = (struct trace_phase *)((char *)t->buf + h->phase_off);
	t->nphase = h->nphase;
	t->pev = (const struct trace_phase_ev *)((char *)t->buf + h->pev_off);
	t->npev = h->npev;
	if (t->str[0] || t->str[t->str_len - 1])
		return llmio_err(e, -EINVAL, "%s: trace string table is damaged", name);
	for (size_t i = 0; i < t->nrec; i++) {
		const struct trace_rec *r = &t->rec[i];

		if (r->path >= t->str_len || r->phase >= t->nphase || r->type == TR_NONE ||
		    r->type >= TR_NTYPES ||
		    (r->type == TR_RENAME ? r->path2 >= t->str_len
		                          : r->path2 > TRACE_SERVED_DEVICE ||
		                                    (r->path2 && !trace_type_is_read(r->type)))) {
			return llmio_err(e, -EINVAL, "%s: trace record %zu is damaged", name, i);
		}
		if (trace_rec_check(r, why, sizeof(why)))
			return llmio_err(e, -EINVAL, "%s: trace record %zu: %s", name, i, why);
		/* the span covers every call: replay's timeline waits are offsets inside it */
		if (r->ts < h->t_start || r->ts + r->dur > h->t_end)
			return llmio_err(e, -EINVAL,
			                 "%s: trace record %zu: time %" PRIu64
			                 " ns lies outside the trace's "
			                 "span %" PRIu64 "..%" PRIu64 " ns",
			                 name, i, r->ts, h->t_start, h->t_end);
	}
	for (size_t i = 0; i < t->nproc; i++)
		if (t->proc[i].cmd >= t->str_len)
			goto damaged;
	for (size_t i = 0; i < t->nphase; i++)
		if (t->phase[i].name >= t->str_len)
			goto damaged;
	for (size_t i = 0; i < t->npev; i++)
		if (t->pev[i].phase >= t->nphase)
			goto damaged;
	return 0;
damaged:
	return llmio_err(e, -EINVAL, "%s: trace process or phase table is damaged", name);
}

/* Check t->buf (t->size bytes, owned by t) and set t up. */
static int open_buf(struct trace *t, const char *name, unsigned flags, struct llmio_error *e)
{
	int ret;

	if (t->size < sizeof(t->hdr))
		return llmio_err(e, -EINVAL, "%s is not an llmio trace (too short)", name);
	memcpy(&t->hdr, t->buf, sizeof(t->hdr));
	if ((ret = check(t, name, e)))
		return ret;
	t->phase_name = calloc(t->nphase, sizeof(*t->phase_name));
	if (!t->phase_name)
		goto nomem;
	for (size_t i = 0; i < t->nphase; i++)
		t->phase_name[i] = trace_str(t, t->phase[i].name);
	if (!(flags & TRACE_OPEN_RAW_PHASES) && trace_infer_phases(t))
		goto nomem;
	return 0;
nomem:
	return llmio_err(e, -ENOMEM, "out of memory reading trace %s", name);
}

int trace_open_mem(const void *buf, size_t size, const char *name, unsigned flags,
                   struct trace **out, struct llmio_error *e)
{
	struct trace *t;
	int ret;

	*out = NULL;
	if (!name)
		name = "trace";
	t = calloc(1, sizeof(*t));
	/* a private copy: 8-byte aligned, and phase inference rewrites the records */
	if (!t || !(t->buf = malloc(size ? size : 1))) {
		free(t);
		return llmio_err(e, -ENOMEM, "out of memory reading trace %s", name);
	}
	memcpy(t->buf, buf, size);
	t->size = size;
	if ((ret = open_buf(t, name, flags, e))) {
		trace_close(t);
		return ret;
	}
	*out = t;
	return 0;
}

int trace_open(const char *path, unsigned flags, struct trace **out, struct llmio_error *e)
{
	struct trace *t;
	struct stat st;
	FILE *f;
	int ret;

	*out = NULL;
	f = fopen(path, "rb");
	if (!f) {
		ret = -errno;
		return llmio_err(e, ret, "cannot open trace %s: %s", path, strerror(errno));
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		ret = -ENOMEM;
		goto fail_file;
	}
	if (fstat(fileno(f), &st)) {
		ret = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = llmio_err(e, -EINVAL, "%s is not an llmio trace (not a regular file)", path);
		goto fail;
	}
	t->size = (size_t)st.st_size;
	if (t->size < sizeof(t->hdr)) {
		ret = llmio_err(e, -EINVAL, "%s is not an llmio trace (too short)", path);
		goto fail;
	}
	t->buf = malloc(t->size);
	if (!t->buf) {
		ret = -ENOMEM;
		goto fail;
	}
	if (fread(t->buf, 1, t->size, f) != t->size) {
		ret = llmio_err(e, -EIO, "cannot read trace %s", path);
		goto fail;
	}
	if ((ret = open_buf(t, path, flags, e))) {
		trace_close(t);
		goto fail_file;
	}
	fclose(f);
	*out = t;
	return 0;
fail:
	if (ret == -ENOMEM)
		llmio_err(e, ret, "out of memory reading trace %s", path);
	else if (ret != -EINVAL && ret != -EIO)
		llmio_err(e, ret, "cannot read trace %s: %s", path, strerror(-ret));
	trace_close(t);
fail_file:
	fclose(f);
	return ret;
}

void trace_close(struct trace *t)
{
	if (!t)
		return;
	if (t->inferred)
		free(t->phase);
	free(t->phase_name);
	free(t->thr);
	free(t->thr_idx);
	free(t->buf);
	free(t);
}

const struct trace_thread *trace_threads(struct trace *t, size_t *n)
{
	struct tmap m = {0};
	size_t *fill = NULL, cap = 0;

	if (t->thr || !t->nrec) {
		*n = t->nthr;
		return t->thr;
	}
	/* count per thread, then place indexes (records are already in time order) */
	for (size_t i = 0; i < t->nrec; i++) {
		uint64_t key = (uint64_t)t->rec[i].pid << 32 | t->rec[i].tid;
		int64_t k = tmap_index(&m, key);

		if (k < 0)
			goto nomem;
		if ((size_t)k == t->nthr) {
			if (t->nthr == cap) {
				struct trace_thread *p;

				cap = cap ? cap * 2 : 64;
				p = realloc(t->thr, cap * sizeof(*p));
				if (!p)
					goto nomem;
				t->thr = p;
			}
			t->thr[t->nthr++] =
			        (struct trace_thread){.pid = t->rec[i].pid, .tid = t->rec[i].tid};
		}
		t->thr[k].n++;
	}
	t->thr_idx = malloc(t->nrec * sizeof(*t->thr_idx));
	fill = calloc(t->nthr, sizeof(*fill));
	if (!t->thr_idx || !fill)
		goto nomem;
	for (size_t k = 0, at = 0; k < t->nthr; k++) {
		t->thr[k].idx = t->thr_idx + at;
		at += t->thr[k].n;
	}
	for (size_t i = 0; i < t->nrec; i++) {
		int64_t k = tmap_find(&m, (uint64_t)t->rec[i].pid << 32 | t->rec[i].tid);

		/* every key was added above; a miss would be a bug in the map, never an index */
		if (k < 0 || (size_t)k >= t->nthr || fill[k] >= t->thr[k].n)
			goto nomem;
		t->thr_idx[t->thr[k].idx - t->thr_idx + fill[k]++] = (uint32_t)i;
	}
	free(fill);
	tmap_release(&m);
	*n = t->nthr;
	return t->thr;
nomem:
	free(fill);
	tmap_release(&m);
	free(t->thr);
	free(t->thr_idx);
	t->thr = NULL;
	t->thr_idx = NULL;
	t->nthr = 0;
	*n = 0;
	return NULL;
}

/* ---- phase inference ---- */

enum { INF_NONE, INF_LOAD, INF_DATA, INF_CKPT, INF_OTHER, INF_N };

static const char *const inferred_names[INF_N] = {"", "load", "data", "checkpoint", "other"};

struct inf_file {
	uint32_t pid;
	bool multi_pid, written, synced, renamed;
	uint64_t rbytes, wbytes, extent;
	int64_t dir;
};

#define MiB (1024ull * 1024)

/* Directories are told apart by a hash of their name: collisions only blur a heuristic. */
static uint64_t dir_key(const char *p)
{
	const char *end = strrchr(p, '/');
	uint64_t h = 1469598103934665603ull;

	for (; end && p < end; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h >> 1;
}

static int inf_class(const struct inf_file *f, const unsigned *dir_reads)
{
	if (f->written && (f->wbytes >= MiB || f->synced || f->renamed))
		return INF_CKPT;
	if (f->rbytes && (f->multi_pid || (f->extent && f->rbytes * 2 > f->extent * 3) ||
	                  dir_reads[f->dir] >= 8))
		return INF_DATA;
	if (f->rbytes >= MiB)
		return INF_LOAD;
	return INF_OTHER;
}

static int inf_scan(struct trace *t, struct tmap *fm, struct tmap *dm, struct inf_file **out)
{
	struct inf_file *files = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < t->nrec; i++) {
		const struct trace_rec *r = &t->rec[i];
		struct inf_file *f;
		size_t before = fm->n;
		int64_t k;

		if (!r->path)
			continue;
		if ((k = tmap_index(fm, r->path)) < 0)
			goto nomem;
		if ((size_t)k >= cap) {
			struct inf_file *q;

			cap = cap ? cap * 2 : 256;
			q = realloc(files, cap * sizeof(*q));
			if (!q)
				goto nomem;
			files = q;
		}
		f = &files[k];
		if ((size_t)k == before) {
			memset(f, 0, sizeof(*f));
			f->pid = r->pid;
			if ((f->dir = tmap_index(dm, dir_key(trace_str(t, r->path)))) < 0)
				goto nomem;
		}
		f->multi_pid |= r->pid != f->pid && trace_type_is_read(r->type);
		if (r->result > 0 && trace_type_is_read(r->type)) {
			f->rbytes += (uint64_t)r->result;
			if (r->offset != TRACE_OFF_NONE &&
			    r->offset + (uint64_t)r->result > f->extent)
				f->extent = r->offset + (uint64_t)r->result;
		} else if (r->result > 0 && trace_type_is_write(r->type)) {
			f->wbytes += (uint64_t)r->result;
			f->written = true;
		} else if (r->type == TR_FSYNC || r->type == TR_FDATASYNC) {
			f->synced |= f->written;
		} else if (r->type == TR_RENAME) {
			f->renamed |= f->written;
		}
	}
	*out = files;
	return 0;
nomem:
	free(files);
	return -ENOMEM;
}

int trace_infer_phases(struct trace *t)
{
	struct tmap fm = {0}, dm = {0};
	struct inf_file *files = NULL;
	unsigned *dir_reads = NULL;
	struct trace_phase *ph = NULL;
	const char **names = NULL;
	uint8_t *cls = NULL;
	int ret = -ENOMEM;

	if (!t->nrec || t->nphase > 1)
		return 0; /* empty, or the program marked its phases */
	if ((ret = inf_scan(t, &fm, &dm, &files)))
		goto out;
	ret = -ENOMEM;
	dir_reads = calloc(dm.n + 1, sizeof(*dir_reads));
	cls = malloc(fm.n + 1);
	ph = calloc(INF_N, sizeof(*ph));
	names = calloc(INF_N, sizeof(*names));
	if (!dir_reads || !cls || !ph || !names)
		goto out;
	for (size_t k = 0; k < fm.n; k++)
		if (files[k].rbytes)
			dir_reads[files[k].dir]++;
	for (size_t k = 0; k < fm.n; k++)
		cls[k] = (uint8_t)inf_class(&files[k], dir_reads);
	for (size_t i = 0; i < t->nrec; i++)
		t->rec[i].phase = t->rec[i].path ? cls[tmap_find(&fm, t->rec[i].path)] : INF_OTHER;
	for (int i = 0; i < INF_N; i++) {
		ph[i].flags = i ? TRACE_PHASE_INFERRED : 0;
		names[i] = inferred_names[i];
	}
	free(t->phase_name);
	t->phase = ph;
	t->phase_name = names;
	t->nphase = INF_N;
	t->inferred = true;
	ph = NULL;
	names = NULL;
	ret = 0;
out:
	free(files);
	free(dir_reads);
	free(cls);
	free(ph);
	free(names);
	tmap_release(&fm);
	tmap_release(&dm);
	return ret;
}
