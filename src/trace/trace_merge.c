/* SPDX-License-Identifier: MIT */
/*
 * Merging the preload library's per-process raw files into one trace.  A raw file may end
 * anywhere (the process was killed): chunks that never got their marker are skipped, and a
 * chunk's records end at its first empty slot.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace_read.h"
#include "base/error.h"
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

struct maps {
	struct idmap str, phase;
	uint32_t max_id; /* string ids are below the number of slots in the file */
	size_t slot;     /* the slot being read, for messages */
	char why[200];   /* the reason of an -ERANGE */
};

/* Visit every valid slot of every chunk: fn(slot, arg) for records, strings and phases. */
typedef int (*slot_fn)(struct trace_builder *b, const struct trace_rec *r, struct maps *m);

static int walk(const unsigned char *base, size_t size, struct trace_builder *b, slot_fn fn,
                struct maps *m)
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
			m->slot = (off - TRACE_RAW_HDR) / sizeof(struct trace_rec) + i;
			if ((ret = fn(b, &c[i], m)))
				return ret;
			i += n;
		}
	}
	return 0;
}

static int pass_strings(struct trace_builder *b, const struct trace_rec *r, struct maps *m)
{
	char text[TRACE_CHUNK];
	uint32_t off;
	int ret;

	if (r->type != TR_RAW_STR)
		return 0;
	/* ids count up from 1 per file and each string takes two slots or more: a larger id
	 * is damage, and would size the id table (4 bytes per id) from nothing */
	if (r->path > m->max_id) {
		snprintf(m->why, sizeof(m->why),
		         "string id %" PRIu32 " is over %" PRIu32 " (the file's slots)", r->path,
		         m->max_id);
		return -ERANGE;
	}
	memcpy(text, r + 1, r->req);
	text[r->req] = '\0';
	if ((ret = trace_builder_str(b, text, &off)))
		return ret;
	return idmap_set(&m->str, r->path, off);
}

static int pass_phases(struct trace_builder *b, const struct trace_rec *r, struct maps *m)
{
	uint32_t idx;
	int ret;

	if (r->type != TR_RAW_PHASE || r->fd < 0 || r->fd > UINT16_MAX)
		return 0;
	if ((ret = trace_builder_phase(b, b->str + idmap_get(&m->str, r->path), 0, &idx)))
		return ret;
	return idmap_set(&m->phase, (uint32_t)r->fd, idx);
}

static int pass_records(struct trace_builder *b, const struct trace_rec *r, struct maps *m)
{
	struct trace_rec x;

	if (r->type == TR_RAW_PHASE) {
		if (r->req) /* a definition repeated in a forked child, not a switch */
			return 0;
		return trace_builder_phase_ev(b, r->ts, r->pid, r->tid,
		                              idmap_get(&m->phase, (uint32_t)r->fd));
	}
	if (r->type == TR_NONE || r->type >= TR_NTYPES)
		return 0;
	if (trace_rec_check(r, m->why, sizeof(m->why)))
		return -ERANGE;
	x = *r;
	x.path = idmap_get(&m->str, r->path);
	/* a rename's second path is a string; a read's path2 is how it was served (a value
	 * no tracer writes, from a damaged file, is "unknown") */
	if (r->type == TR_RENAME)
		x.path2 = idmap_get(&m->str, r->path2);
	else
		x.path2 = trace_type_is_read(r->type) && r->path2 <= TRACE_SERVED_DEVICE ? r->path2
		                                                                         : 0;
	x.phase = (uint16_t)idmap_get(&m->phase, r->phase);
	return trace_builder_rec(b, &x);
}

int trace_merge_raw(struct trace_builder *b, const void *buf, size_t size, const char *name,
                    uint64_t *first, struct llmio_error *e)
{
	const struct trace_raw_hdr *h = buf;
	char cmd[sizeof(h->cmdline)];
	struct maps m;
	int ret;

	if (size < TRACE_RAW_HDR) {
		b->nlost++; /* no room for its header, or it died before writing it */
		return 0;
	}
	if (memcmp(h->magic, TRACE_RAW_MAGIC, 8) || h->version != TRACE_VERSION ||
	    h->chunk_size != TRACE_CHUNK)
		return 0;
	memset(&m, 0, sizeof(m));
	m.max_id = (uint32_t)(size / sizeof(struct trace_rec) < UINT32_MAX
	                              ? size / sizeof(struct trace_rec)
	                              : UINT32_MAX);
	snprintf(cmd, sizeof(cmd), "%.*s", (int)(h->cmdline_len < sizeof(cmd) ? h->cmdline_len : 0),
	         h->cmdline);
	if (!trace_builder_proc(b, h->pid, h->ppid, cmd, h->mono_anchor)) {
		ret = -ENOMEM;
		goto fail;
	}
	if (h->mono_anchor < *first) {
		*first = h->mono_anchor;
		b->real_minus_mono = (int64_t)(h->real_anchor - h->mono_anchor);
	}
	b->dropped += h->dropped;
	if (h->stop_errno) {
		if (!b->nstopped++)
			b->stop_errno = (int)h->stop_errno;
		b->flags |= TRACE_F_STOPPED;
	}
	if ((ret = walk(buf, size, b, pass_strings, &m)) ||
	    (ret = walk(buf, size, b, pass_phases, &m)) ||
	    (ret = walk(buf, size, b, pass_records, &m)))
		goto fail;
	ret = 0;
	goto out;
fail:
	if (ret == -ERANGE) {
		ret = llmio_err(e, -EINVAL, "%s: raw trace slot %zu: %s", name, m.slot, m.why);
	} else {
		llmio_err(e, ret, "merging %s: %s", name, strerror(-ret));
	}
out:
	free(m.str.v);
	free(m.phase.v);
	return ret;
}

static int merge_file(struct trace_builder *b, int dirfd, const char *name, uint64_t *first,
                      struct llmio_error *e)
{
	struct stat st;
	void *p = MAP_FAILED;
	int fd, ret = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		llmio_err(e, ret, "cannot read %s: %s", name, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode))
		goto out; /* not ours */
	if ((size_t)st.st_size < TRACE_RAW_HDR) {
		b->nlost++; /* no room for its header, or it died before writing it */
		goto out;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		llmio_err(e, ret, "cannot map %s: %s", name, strerror(errno));
		goto out;
	}
	/* the chunks a process never took are allocated, unwritten: reading one chunk's first
	 * slot must not read (zero) the kernel's read-around window with it */
	madvise(p, (size_t)st.st_size, MADV_RANDOM);
	ret = trace_merge_raw(b, p, (size_t)st.st_size, name, first, e);
out:
	if (p != MAP_FAILED)
		munmap(p, (size_t)st.st_size);
	if (fd >= 0)
		close(fd);
	return ret;
}

int trace_merge_dir(struct trace_builder *b, const char *dir, struct llmio_error *e)
{
	uint64_t first = UINT64_MAX;
	struct dirent *d;
	unsigned nfiles = 0;
	DIR *dp;
	int ret = 0;

	dp = opendir(dir);
	if (!dp) {
		ret = -errno;
		return llmio_err(e, ret, "cannot open the trace directory %s: %s", dir,
		                 strerror(errno));
	}
	while (!ret && (d = readdir(dp))) {
		size_t n = strlen(d->d_name);

		if (n < 7 || strcmp(d->d_name + n - 6, ".trace"))
			continue;
		ret = merge_file(b, dirfd(dp), d->d_name, &first, e);
		nfiles++;
	}
	closedir(dp);
	if (!ret && !nfiles)
		ret = llmio_err(e, -ENOENT, "no trace files in %s", dir);
	return ret;
}
