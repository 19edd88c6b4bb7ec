/* SPDX-License-Identifier: MIT */
/*
 * Merging the preload library's per-process raw files into one trace.  A raw file may end
 * anywhere (the process was killed): chunks that never got their marker are skipped, and a
 * chunk's records end at its first empty slot.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace_write.h"

#define SLOTS (TRACE_CHUNK / sizeof(struct trace_rec))

/* Local id -> merged value (string offset or phase index); grows on demand. */
struct idmap {
	uint32_t *v;
	size_t n;
};

static int idmap_set(struct idmap *m, uint32_t id, uint32_t v)
{
	if (id >= m->n) {
		size_t n = m->n ? m->n : 256;
		uint32_t *p;

		while (n <= id)
			n *= 2;
		p = realloc(m->v, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + m->n, 0, (n - m->n) * sizeof(*p));
		m->v = p;
		m->n = n;
	}
	m->v[id] = v;
	return 0;
}

static uint32_t idmap_get(const struct idmap *m, uint32_t id)
{
	return id < m->n ? m->v[id] : 0;
}

/* Slots a string record takes (header + text), or 0 when its length does not fit. */
static size_t str_slots(const struct trace_rec *r, size_t left)
{
	size_t n = 1 + (size_t)((r->req + 1 + 63) / 64);

	return r->req < TRACE_CHUNK && n <= left ? n : 0;
}

/* Visit every valid slot of every chunk: fn(slot, arg) for records, strings and phases. */
typedef int (*slot_fn)(struct trace_builder *b, const struct trace_rec *r, void *arg);

static int walk(const unsigned char *base, size_t size, struct trace_builder *b, slot_fn fn,
                void *arg)
{
	for (size_t off = TRACE_RAW_HDR; off + TRACE_CHUNK <= size; off += TRACE_CHUNK) {
		const struct trace_rec *c = (const struct trace_rec *)(base + off);

		if (c[0].type != TR_RAW_CHUNK)
			continue;
		for (size_t i = 1; i < SLOTS && c[i].type;) {
			size_t n = 1;
			int ret;

			if (c[i].type == TR_RAW_STR && !(n = str_slots(&c[i], SLOTS - i)))
				break;
			if ((ret = fn(b, &c[i], arg)))
				return ret;
			i += n;
		}
	}
	return 0;
}

struct maps {
	struct idmap str, phase;
};

static int pass_strings(struct trace_builder *b, const struct trace_rec *r, void *arg)
{
	struct maps *m = arg;
	char text[TRACE_CHUNK];
	uint32_t off;
	int ret;

	if (r->type != TR_RAW_STR)
		return 0;
	memcpy(text, r + 1, r->req);
	text[r->req] = '\0';
	if ((ret = trace_builder_str(b, text, &off)))
		return ret;
	return idmap_set(&m->str, r->path, off);
}

static int pass_phases(struct trace_builder *b, const struct trace_rec *r, void *arg)
{
	struct maps *m = arg;
	uint32_t idx;
	int ret;

	if (r->type != TR_RAW_PHASE || r->fd < 0 || r->fd > UINT16_MAX)
		return 0;
	if ((ret = trace_builder_phase(b, b->str + idmap_get(&m->str, r->path), 0, &idx)))
		return ret;
	return idmap_set(&m->phase, (uint32_t)r->fd, idx);
}

static int pass_records(struct trace_builder *b, const struct trace_rec *r, void *arg)
{
	struct maps *m = arg;
	struct trace_rec x;

	if (r->type == TR_RAW_PHASE) {
		if (r->req) /* a definition repeated in a forked child, not a switch */
			return 0;
		return trace_builder_phase_ev(b, r->ts, r->pid, r->tid,
		                              idmap_get(&m->phase, (uint32_t)r->fd));
	}
	if (r->type == TR_NONE || r->type >= TR_NTYPES)
		return 0;
	x = *r;
	x.path = idmap_get(&m->str, r->path);
	x.path2 = idmap_get(&m->str, r->path2);
	x.phase = (uint16_t)idmap_get(&m->phase, r->phase);
	return trace_builder_rec(b, &x);
}

static int merge_file(struct trace_builder *b, int dirfd, const char *name, uint64_t *first,
                      char *err, size_t errlen)
{
	const struct trace_raw_hdr *h;
	struct maps m;
	struct stat st;
	char cmd[sizeof(h->cmdline)];
	void *p = MAP_FAILED;
	int fd, ret = 0;

	memset(&m, 0, sizeof(m));
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s: %s", name, strerror(errno));
		goto out;
	}
	if ((size_t)st.st_size < TRACE_RAW_HDR)
		goto out; /* the process died before its header was written */
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		snprintf(err, errlen, "cannot map %s: %s", name, strerror(errno));
		goto out;
	}
	h = p;
	if (memcmp(h->magic, TRACE_RAW_MAGIC, 8) || h->version != TRACE_VERSION ||
	    h->chunk_size != TRACE_CHUNK)
		goto out;
	snprintf(cmd, sizeof(cmd), "%.*s", (int)(h->cmdline_len < sizeof(cmd) ? h->cmdline_len : 0),
	         h->cmdline);
	if (!trace_builder_proc(b, h->pid, h->ppid, cmd, h->mono_anchor)) {
		ret = -ENOMEM;
		goto nomem;
	}
	if (h->mono_anchor < *first) {
		*first = h->mono_anchor;
		b->real_minus_mono = (int64_t)(h->real_anchor - h->mono_anchor);
	}
	b->dropped += h->dropped;
	if ((ret = walk(p, (size_t)st.st_size, b, pass_strings, &m)) ||
	    (ret = walk(p, (size_t)st.st_size, b, pass_phases, &m)) ||
	    (ret = walk(p, (size_t)st.st_size, b, pass_records, &m)))
		goto nomem;
	goto out;
nomem:
	snprintf(err, errlen, "merging %s: %s", name, strerror(-ret));
out:
	free(m.str.v);
	free(m.phase.v);
	if (p != MAP_FAILED)
		munmap(p, (size_t)st.st_size);
	if (fd >= 0)
		close(fd);
	return ret;
}

int trace_merge_dir(struct trace_builder *b, const char *dir, char *err, size_t errlen)
{
	uint64_t first = UINT64_MAX;
	struct dirent *d;
	unsigned nfiles = 0;
	DIR *dp;
	int ret = 0;

	dp = opendir(dir);
	if (!dp) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the trace directory %s: %s", dir,
		         strerror(errno));
		return ret;
	}
	while (!ret && (d = readdir(dp))) {
		size_t n = strlen(d->d_name);

		if (n < 7 || strcmp(d->d_name + n - 6, ".trace"))
			continue;
		ret = merge_file(b, dirfd(dp), d->d_name, &first, err, errlen);
		nfiles++;
	}
	closedir(dp);
	if (!ret && !nfiles) {
		snprintf(err, errlen, "no trace files in %s", dir);
		ret = -ENOENT;
	}
	return ret;
}
