/* SPDX-License-Identifier: MIT */
/* The merged trace file, built in memory and written in one go. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "trace/trace_write.h"

/* Make room for n more elements of size elem in *p (capacity *cap, used *len). */
static int grow(void *p, size_t *cap, size_t len, size_t n, size_t elem)
{
	void **pp = p;
	size_t want = *cap ? *cap : 64;
	void *q;

	if (len + n <= *cap)
		return 0;
	while (want < len + n)
		want *= 2;
	q = realloc(*pp, want * elem);
	if (!q)
		return -ENOMEM;
	*pp = q;
	*cap = want;
	return 0;
}

/* the string table's slot of s: only in memory (the file keeps offsets), so hash64 */
static uint64_t hash_str(const char *s)
{
	return hash64_str(0, s);
}

int trace_builder_init(struct trace_builder *b)
{
	uint32_t none;

	memset(b, 0, sizeof(*b));
	b->exit_status = -1;
	b->str = malloc(1);
	if (!b->str)
		return -ENOMEM;
	b->str[0] = '\0';
	b->str_len = b->str_cap = 1;
	return trace_builder_phase(b, "", 0, &none);
}

void trace_builder_release(struct trace_builder *b)
{
	free(b->str);
	free(b->hash);
	free(b->rec);
	free(b->proc);
	free(b->phase);
	free(b->pev);
	tmap_release(&b->pidmap);
	memset(b, 0, sizeof(*b));
}

static int rehash(struct trace_builder *b)
{
	size_t cap = b->hash_cap ? b->hash_cap * 2 : 1024;
	uint32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < b->hash_cap; i++) {
		uint32_t off = b->hash[i];
		size_t k;

		if (!off)
			continue;
		for (k = hash_str(b->str + off) & (cap - 1); h[k]; k = (k + 1) & (cap - 1))
			;
		h[k] = off;
	}
	free(b->hash);
	b->hash = h;
	b->hash_cap = cap;
	return 0;
}

int trace_builder_str(struct trace_builder *b, const char *s, uint32_t *off)
{
	size_t len, k;
	int ret;

	if (!s || !s[0]) {
		*off = 0;
		return 0;
	}
	if (b->hash_n * 2 >= b->hash_cap && (ret = rehash(b)))
		return ret;
	for (k = hash_str(s) & (b->hash_cap - 1); b->hash[k]; k = (k + 1) & (b->hash_cap - 1))
		if (!strcmp(b->str + b->hash[k], s)) {
			*off = b->hash[k];
			return 0;
		}
	len = strlen(s) + 1;
	if (b->str_len + len > UINT32_MAX)
		return -EFBIG;
	if ((ret = grow(&b->str, &b->str_cap, b->str_len, len, 1)))
		return ret;
	memcpy(b->str + b->str_len, s, len);
	*off = (uint32_t)b->str_len;
	b->hash[k] = *off;
	b->hash_n++;
	b->str_len += len;
	return 0;
}

int trace_builder_phase(struct trace_builder *b, const char *name, uint32_t flags, uint32_t *idx)
{
	uint32_t off;
	int ret = trace_builder_str(b, name, &off);

	if (ret)
		return ret;
	for (size_t i = 0; i < b->nphase; i++)
		if (b->phase[i].name == off && (i == 0 || b->phase[i].flags == flags)) {
			*idx = (uint32_t)i;
			return 0;
		}
	if (b->nphase >= UINT16_MAX)
		return -E2BIG;
	if ((ret = grow(&b->phase, &b->phase_cap, b->nphase, 1, sizeof(*b->phase))))
		return ret;
	b->phase[b->nphase].name = off;
	b->phase[b->nphase].flags = flags;
	*idx = (uint32_t)b->nphase++;
	return 0;
}

int trace_builder_rec(struct trace_builder *b, const struct trace_rec *r)
{
	int ret = grow(&b->rec, &b->rec_cap, b->nrec, 1, sizeof(*b->rec));

	if (ret)
		return ret;
	b->rec[b->nrec++] = *r;
	return 0;
}

int trace_builder_phase_ev(struct trace_builder *b, uint64_t ts, uint32_t pid, uint32_t tid,
                           uint32_t phase)
{
	int ret = grow(&b->pev, &b->pev_cap, b->npev, 1, sizeof(*b->pev));

	if (ret)
		return ret;
	b->pev[b->npev++] =
	        (struct trace_phase_ev){.ts = ts, .pid = pid, .tid = tid, .phase = phase};
	return 0;
}

struct trace_proc *trace_builder_proc(struct trace_builder *b, uint32_t pid, uint32_t ppid,
                                      const char *cmd, uint64_t start)
{
	struct trace_proc *p = NULL;
	uint32_t off;
	int64_t k;

	/* a map, not a scan: an strace log asks this for every line, of up to millions of pids */
	if (b->pidmap.n != b->nproc) {
		tmap_release(&b->pidmap);
		for (size_t i = 0; i < b->nproc; i++)
			if (tmap_index(&b->pidmap, b->proc[i].pid) < 0)
				return NULL;
	}
	k = tmap_find(&b->pidmap, pid);
	if (k >= 0)
		p = &b->proc[k];
	if (trace_builder_str(b, cmd, &off))
		return NULL;
	if (p) {
		/* reserved[0]: start of the image whose command is kept (the latest exec) */
		if (start < p->start)
			p->start = start;
		if (ppid && !p->ppid)
			p->ppid = ppid;
		if (off && start >= p->reserved[0]) {
			p->cmd = off;
			p->reserved[0] = start;
		}
		p->nimages += off != 0;
		return p;
	}
	if (grow(&b->proc, &b->proc_cap, b->nproc, 1, sizeof(*b->proc)) ||
	    tmap_index(&b->pidmap, pid) < 0)
		return NULL;
	p = &b->proc[b->nproc++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = ppid;
	p->cmd = off;
	p->start = start;
	p->reserved[0] = start;
	p->nimages = off != 0;
	return p;
}

/* Merge the sorted runs src[lo, mid) and src[mid, hi) into dst[lo, hi); ties from the left. */
static void merge_runs(const struct trace_rec *src, struct trace_rec *dst, size_t lo, size_t mid,
                       size_t hi)
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi)
		dst[k++] = src[j].ts < src[i].ts ? src[j++] : src[i++];
	memcpy(dst + k, src + i, (mid - i) * sizeof(*src));
	k += mid - i;
	memcpy(dst + k, src + j, (hi - j) * sizeof(*src));
}

/*
 * Stable merge sort of records by start time: calls of one thread keep their order.  Natural:
 * the records come chunk by chunk, and a chunk holds one thread's calls in order, so the input
 * is a few hundred sorted runs; merging neighbouring runs pairwise takes log2(runs) passes over
 * the records, not log2(records).  run[] holds the start of each run, then n.
 */
static int sort_recs(struct trace_rec *r, size_t n)
{
	struct trace_rec *tmp, *src = r, *dst;
	size_t *run, nrun = 0;

	if (n < 2)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	run = malloc((n + 1) * sizeof(*run));
	if (!tmp || !run) {
		free(tmp);
		free(run);
		return -ENOMEM;
	}
	run[nrun++] = 0;
	for (size_t i = 1; i < n; i++)
		if (r[i].ts < r[i - 1].ts)
			run[nrun++] = i;
	run[nrun] = n;
	dst = tmp;
	while (nrun > 1) {
		size_t k = 0;

		for (size_t i = 0; i < nrun; i += 2) {
			if (i + 1 < nrun)
				merge_runs(src, dst, run[i], run[i + 1], run[i + 2]);
			else
				memcpy(dst + run[i], src + run[i],
				       (run[i + 1] - run[i]) * sizeof(*src));
			run[k++] = run[i];
		}
		run[k] = n;
		nrun = k;
		struct trace_rec *t = src;

		src = dst;
		dst = t;
	}
	if (src != r)
		memcpy(r, src, n * sizeof(*r));
	free(tmp);
	free(run);
	return 0;
}

static int cmp_pev(const void *a, const void *b)
{
	const struct trace_phase_ev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct trace_proc *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int put(FILE *f, const void *p, size_t n, uint64_t *pos)
{
	static const char zero[8];
	size_t pad = (8 - (n & 7)) & 7;

	if ((n && fwrite(p, 1, n, f) != n) || (pad && fwrite(zero, 1, pad, f) != pad))
		return -EIO;
	*pos += n + pad;
	return 0;
}

static int cmp_proc_pid(const void *a, const void *b)
{
	const struct trace_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void finish(struct trace_builder *b, struct trace_file_hdr *h)
{
	if (b->nproc)
		qsort(b->proc, b->nproc, sizeof(*b->proc), cmp_proc_pid);
	tmap_release(&b->pidmap); /* the order changed: rebuilt if a process is added later */
	h->t_start = b->nrec ? b->rec[0].ts : 0;
	for (size_t i = 0; i < b->nrec; i++) {
		const struct trace_rec *r = &b->rec[i];
		struct trace_proc key = {.pid = r->pid}, *p;
		uint64_t end = r->ts + r->dur;

		if (end > h->t_end)
			h->t_end = end;
		p = b->nproc ? bsearch(&key, b->proc, b->nproc, sizeof(*b->proc), cmp_proc_pid)
		             : NULL;
		if (!p)
			continue;
		p->nrec++;
		if (end > p->end)
			p->end = end;
		if (!p->start || r->ts < p->start)
			p->start = r->ts;
	}
}

int trace_builder_write(struct trace_builder *b, FILE *f)
{
	struct trace_file_hdr h;
	uint64_t pos = 0;
	int ret;

	if ((ret = sort_recs(b->rec, b->nrec)))
		return ret;
	if (b->npev)
		qsort(b->pev, b->npev, sizeof(*b->pev), cmp_pev);
	for (size_t k = 0; k < b->nproc; k++) {
		b->proc[k].nrec = 0;
		b->proc[k].reserved[0] = 0;
	}
	memset(&h, 0, sizeof(h));
	finish(b, &h);
	if (b->nproc)
		qsort(b->proc, b->nproc, sizeof(*b->proc), cmp_proc);
	memcpy(h.magic, TRACE_MAGIC, 8);
	h.version = TRACE_VERSION;
	h.hdr_size = sizeof(h);
	h.rec_size = sizeof(struct trace_rec);
	h.flags = b->flags;
	h.exit_status = b->exit_status;
	h.real_minus_mono = b->real_minus_mono;
	h.dropped = b->dropped;
	pos = sizeof(h);
	h.rec_off = pos;
	h.nrec = b->nrec;
	pos += b->nrec * sizeof(struct trace_rec);
	h.str_off = pos;
	h.str_len = b->str_len;
	pos += (b->str_len + 7) & ~(uint64_t)7;
	h.proc_off = pos;
	h.nproc = b->nproc;
	pos += b->nproc * sizeof(struct trace_proc);
	h.phase_off = pos;
	h.nphase = b->nphase;
	pos += (b->nphase * sizeof(struct trace_phase) + 7) & ~(uint64_t)7;
	h.pev_off = pos;
	h.npev = b->npev;
	pos = 0;
	if ((ret = put(f, &h, sizeof(h), &pos)) ||
	    (ret = put(f, b->rec, b->nrec * sizeof(*b->rec), &pos)) ||
	    (ret = put(f, b->str, b->str_len, &pos)) ||
	    (ret = put(f, b->proc, b->nproc * sizeof(*b->proc), &pos)) ||
	    (ret = put(f, b->phase, b->nphase * sizeof(*b->phase), &pos)) ||
	    (ret = put(f, b->pev, b->npev * sizeof(*b->pev), &pos)))
		return ret;
	return 0;
}
