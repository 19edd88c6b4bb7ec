/* SPDX-License-Identifier: MIT */
/*
 * Import of `strace -f -y [-tt | -ttt] [-T]` logs.
 *
 * A line is "[pid N] " or "N " (strace -f -o) or nothing (the first process without -o),
 * an optional time ("HH:MM:SS.us" or "SECONDS.us"), then one of
 *     name(args) = result [<path>] [(text)] [<duration>]
 *     name(args <unfinished ...>            kept per pid until
 *     <... name resumed>args) = result ...  completes it
 *     +++ exited with N +++, --- SIGNAL ---, strace: ...   (ignored)
 * -y decorates descriptors with their path: 3</data/x>.  Offsets are tracked per process and
 * descriptor as the tracer does; threads (clone with CLONE_THREAD) count to their process.
 * The same default scope as the tracer applies (trace_scope.c).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_map.h"
#include "base/error.h"
#include "trace/trace_read.h"
#include "trace/trace_scope.h"
#include "trace/trace_write.h"

#define MAXARGS 8
#define LINE    65536

struct sfd {
	uint32_t path;
	uint64_t off;
};

struct pending {
	uint32_t tid;
	uint64_t ts;
	char *text;
};

struct importer {
	struct trace_builder *b;
	struct tmap fdmap; /* tgid << 32 | fd -> index in fds */
	struct sfd *fds;
	size_t fdcap;
	struct tmap tgid; /* tid -> index in tgids (threads map to their process) */
	uint32_t *tgids;
	size_t tgcap;
	struct tmap maps; /* address -> path of an mmap */
	uint32_t *map_path;
	size_t mapcap;
	struct pending *pend;
	size_t npend, pendcap;
	struct tmap pendmap; /* tid -> index in pend */
	uint64_t line_no;
	size_t calls;
	char why[200]; /* the reason of an -ERANGE */
};

/* ---- lexical helpers ---- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/*
 * "SECONDS[.FRACTION]" as ns, with integer arithmetic: no float-to-integer cast whose range
 * could be exceeded, and no rounding of epoch times (1.7e18 ns needs more than a double's 53
 * bits).  \return past the number, or NULL when p is not one or it is not below
 * TRACE_TIME_MAX (the value is then in *bad).
 */
static const char *parse_secs(const char *p, uint64_t *ns, bool *bad)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000ull;

	*bad = false;
	if (!isdigit((unsigned char)*p))
		return NULL;
	for (; isdigit((unsigned char)*p); p++) {
		if (sec > TRACE_TIME_MAX / 1000000000ull) {
			*bad = true;
			return NULL;
		}
		sec = sec * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*p - '0') * scale;
			}
	if (sec >= TRACE_TIME_MAX / 1000000000ull) {
		*bad = true;
		return NULL;
	}
	*ns = sec * 1000000000ull + frac;
	return p;
}

/* A number of at most 2 digits below lim followed by ':' ("10:"): hours and minutes. */
static const char *clock_part(const char *p, unsigned lim, unsigned *v)
{
	if (!isdigit((unsigned char)p[0]))
		return NULL;
	*v = (unsigned)(p[0] - '0');
	if (isdigit((unsigned char)p[1]))
		*v = *v * 10 + (unsigned)(p[1] - '0'), p++;
	return p[1] == ':' && *v < lim ? p + 2 : NULL;
}

/* Decode a C-style quoted string at p (which points at '"') into out; \return past it. */
static const char *unquote(const char *p, char *out, size_t len)
{
	size_t n = 0;

	if (*p != '"') {
		if (len)
			out[0] = '\0';
		return p;
	}
	for (p++; *p && *p != '"'; p++) {
		int c = (unsigned char)*p;

		if (c == '\\' && p[1]) {
			p++;
			switch (*p) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'x':
				c = (int)strtol((char[]){p[1], p[2], 0}, NULL, 16);
				p += 2;
				break;
			default:
				if (*p >= '0' && *p <= '7') {
					c = 0;
					for (int i = 0; i < 3 && *p >= '0' && *p <= '7'; i++, p++)
						c = c * 8 + (*p - '0');
					p--;
				} else {
					c = (unsigned char)*p;
				}
			}
		}
		if (n + 1 < len)
			out[n++] = (char)c;
	}
	if (len)
		out[n] = '\0';
	return *p == '"' ? p + 1 : p;
}

/* Split "a, b, {c, d}, \"e,f\"" at top-level commas; \return the end (the closing paren). */
static const char *split_args(const char *p, const char **arg, size_t *alen, int *nargs)
{
	int depth = 0, n = 0;
	const char *start = p;

	for (; *p; p++) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				break;
		} else if (*p == '(' || *p == '[' || *p == '{') {
			depth++;
		} else if ((*p == ')' || *p == ']' || *p == '}') && depth > 0) {
			depth--;
		} else if ((*p == ',' || *p == ')') && depth == 0) {
			if (n < MAXARGS) {
				arg[n] = skip_ws(start);
				alen[n] = (size_t)(p - arg[n]);
				n++;
			}
			if (*p == ')')
				break;
			start = p + 1;
		}
	}
	*nargs = n;
	return p;
}

/* "3</data/x>" -> fd 3, path "/data/x" (path "" when not decorated). */
static long fd_arg(const char *a, size_t len, char *path, size_t plen)
{
	char *end;
	long fd = strtol(a, &end, 10);
	const char *lt = memchr(a, '<', len);

	path[0] = '\0';
	if (end == a || fd < 0 || fd > INT32_MAX)
		return -1; /* not a descriptor: the call is not one on a file */
	if (lt && a + len > lt + 1 && a[len - 1] == '>')
		snprintf(path, plen, "%.*s", (int)(a + len - lt - 2), lt + 1);
	return fd;
}

static uint64_t num_arg(const char *a)
{
	return strtoull(a, NULL, 0);
}

/* iov_len=N summed over an iovec array argument. */
static uint64_t iov_arg(const char *a, size_t len)
{
	uint64_t sum = 0;
	const char *end = a + len, *p = a;

	while (p < end && (p = strstr(p, "iov_len=")) && p < end) {
		p += 8;
		sum += strtoull(p, NULL, 10);
	}
	return sum;
}

static const struct {
	const char *name;
	int value;
} errnos[] = {{"EPERM", EPERM},   {"ENOENT", ENOENT},       {"EINTR", EINTR},
              {"EIO", EIO},       {"ENXIO", ENXIO},         {"EBADF", EBADF},
              {"EAGAIN", EAGAIN}, {"ENOMEM", ENOMEM},       {"EACCES", EACCES},
              {"EFAULT", EFAULT}, {"EBUSY", EBUSY},         {"EEXIST", EEXIST},
              {"EXDEV", EXDEV},   {"ENODEV", ENODEV},       {"ENOTDIR", ENOTDIR},
              {"EISDIR", EISDIR}, {"EINVAL", EINVAL},       {"ENFILE", ENFILE},
              {"EMFILE", EMFILE}, {"EFBIG", EFBIG},         {"ENOSPC", ENOSPC},
              {"ESPIPE", ESPIPE}, {"EROFS", EROFS},         {"ENAMETOOLONG", ENAMETOOLONG},
              {"ELOOP", ELOOP},   {"ENOTEMPTY", ENOTEMPTY}, {"EOPNOTSUPP", EOPNOTSUPP},
              {"ENOSYS", ENOSYS}, {"EDQUOT", EDQUOT}};

/* "= 12</x>", "= -1 ENOENT (...)", "= 0x7f00" -> the result as a record stores it. */
static int64_t parse_result(const char *p, char *path, size_t plen)
{
	int64_t v;
	char *end;

	path[0] = '\0';
	p = skip_ws(p);
	if (*p == '?')
		return 0;
	v = strtoll(p, &end, 0);
	if (v == -1 && *end == ' ') {
		const char *e = skip_ws(end);

		for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++) {
			size_t n = strlen(errnos[i].name);

			if (!strncmp(e, errnos[i].name, n) && !isalnum((unsigned char)e[n]))
				return -errnos[i].value;
		}
		return -EIO;
	}
	if (*end == '<') {
		const char *gt = end + 1;

		/* the decoration ends at a '>' that ends the token */
		while ((gt = strchr(gt, '>')) && gt[1] && gt[1] != ' ' && gt[1] != '\n')
			gt++;
		if (gt)
			snprintf(path, plen, "%.*s", (int)(gt - end - 1), end + 1);
	}
	return v;
}

/* ---- state ---- */

static int grow(void *p, size_t *cap, size_t need, size_t elem)
{
	void **pp = p, *q;
	size_t c = *cap ? *cap : 64;

	if (need < *cap)
		return 0;
	while (c <= need)
		c *= 2;
	q = realloc(*pp, c * elem);
	if (!q)
		return -ENOMEM;
	*pp = q;
	*cap = c;
	return 0;
}

static uint32_t tgid_of(struct importer *im, uint32_t tid)
{
	int64_t k = tmap_find(&im->tgid, tid);

	return k >= 0 ? im->tgids[k] : tid;
}

static int set_tgid(struct importer *im, uint32_t tid, uint32_t tgid)
{
	int64_t k = tmap_index(&im->tgid, tid);

	if (k < 0 || grow(&im->tgids, &im->tgcap, (size_t)k, sizeof(*im->tgids)))
		return -ENOMEM;
	im->tgids[k] = tgid;
	return 0;
}

/* The descriptor entry of (process, fd); new ones start unbound at offset 0. */
static struct sfd *fd_entry(struct importer *im, uint32_t pid, long fd)
{
	size_t before = im->fdmap.n;
	int64_t k = tmap_index(&im->fdmap, (uint64_t)pid << 32 | (uint32_t)fd);

	if (k < 0 || grow(&im->fds, &im->fdcap, (size_t)k, sizeof(*im->fds)))
		return NULL;
	if ((size_t)k == before)
		im->fds[k] = (struct sfd){0, TRACE_OFF_NONE};
	return &im->fds[k];
}

static int intern_path(struct importer *im, const char *path, uint32_t *off)
{
	*off = 0;
	if (!path[0] || trace_path_default_excluded(path))
		return 0;
	return trace_builder_str(im->b, path, off);
}

/* ---- one system call ---- */

struct call {
	const char *name;
	const char *arg[MAXARGS];
	size_t alen[MAXARGS];
	int nargs;
	int64_t result;
	char rpath[4096];
	uint32_t pid, tid;
	uint64_t ts, dur;
};

static const struct {
	const char *name;
	uint16_t type;
	int off_arg; /* argument holding the offset (-1: the current one) */
	int len_arg; /* argument holding the length; -2: an iovec array at arg 1 */
} data_calls[] = {
        {"read", TR_READ, -1, 2},
        {"pread64", TR_PREAD, 3, 2},
        {"readv", TR_READV, -1, -2},
        {"preadv", TR_PREADV, 3, -2},
        {"preadv2", TR_PREADV, 3, -2},
        {"write", TR_WRITE, -1, 2},
        {"pwrite64", TR_PWRITE, 3, 2},
        {"writev", TR_WRITEV, -1, -2},
        {"pwritev", TR_PWRITEV, 3, -2},
        {"pwritev2", TR_PWRITEV, 3, -2},
        {"fsync", TR_FSYNC, -3, -3},
        {"fdatasync", TR_FDATASYNC, -3, -3},
        {"ftruncate", TR_FTRUNCATE, -3, 1},
        {"fallocate", TR_FALLOCATE, 2, 3},
        {"sync_file_range", TR_SYNC_RANGE, 1, 2},
};

static int emit(struct importer *im, const struct call *c, uint16_t type, int fd, uint32_t path,
                uint32_t path2, uint64_t off, uint64_t req)
{
	struct trace_rec r = {.ts = c->ts,
	                      .dur = c->dur,
	                      .offset = off,
	                      .req = req,
	                      .result = c->result,
	                      .pid = c->pid,
	                      .tid = c->tid,
	                      .fd = fd,
	                      .path = path,
	                      .path2 = path2,
	                      .type = type};

	im->calls++;
	if (!path && !path2)
		return 0; /* out of scope (or not a file) */
	if (trace_rec_check(&r, im->why, sizeof(im->why)))
		return -ERANGE;
	return trace_builder_rec(im->b, &r);
}

/*
 * The descriptor argument of a call and its entry in the process's table, with the path strace
 * printed beside it (-y) learnt for later calls.  1 with *fd, *e and *poff set; 0 when the
 * argument is no descriptor (the call is skipped); < 0 on an error.
 */
static int call_fd(struct importer *im, const struct call *c, long *fd, struct sfd **e,
                   uint32_t *poff)
{
	char path[4096];
	int ret;

	*fd = fd_arg(c->arg[0], c->alen[0], path, sizeof(path));
	if (*fd < 0)
		return 0;
	if (!(*e = fd_entry(im, c->pid, *fd)))
		return -ENOMEM;
	if (path[0] && (ret = intern_path(im, path, &(*e)->path)))
		return ret;
	*poff = (*e)->path;
	return 1;
}

static int do_data(struct importer *im, const struct call *c, size_t k)
{
	long fd;
	struct sfd *e;
	uint64_t off, req = 0;
	uint32_t poff;
	int ret;

	if ((ret = call_fd(im, c, &fd, &e, &poff)) <= 0)
		return ret;
	if (data_calls[k].len_arg == -2 && c->nargs > 1)
		req = iov_arg(c->arg[1], c->alen[1]);
	else if (data_calls[k].len_arg >= 0 && c->nargs > data_calls[k].len_arg)
		req = num_arg(c->arg[data_calls[k].len_arg]);
	if (data_calls[k].off_arg >= 0 && c->nargs > data_calls[k].off_arg) {
		int64_t o = (int64_t)num_arg(c->arg[data_calls[k].off_arg]);

		off = o == -1 ? e->off : (uint64_t)o;
	} else if (data_calls[k].off_arg == -1) {
		off = e->off;
		if (c->result > 0 && off != TRACE_OFF_NONE)
			e->off = off + (uint64_t)c->result;
	} else {
		off = TRACE_OFF_NONE;
	}
	return emit(im, c, data_calls[k].type, (int)fd, poff, 0, off, req);
}

static int do_open(struct importer *im, const struct call *c, int path_arg)
{
	char given[4096];
	struct sfd *e;
	uint32_t poff;
	int ret;

	if (c->nargs <= path_arg)
		return 0;
	unquote(c->arg[path_arg], given, sizeof(given));
	if (c->result > INT32_MAX) {
		snprintf(im->why, sizeof(im->why), "%s result %" PRId64 " is not a descriptor",
		         c->name, c->result);
		return -ERANGE;
	}
	if (c->result >= 0) {
		if (!(e = fd_entry(im, c->pid, c->result)))
			return -ENOMEM;
		if ((ret = intern_path(im, c->rpath[0] ? c->rpath : given, &e->path)))
			return ret;
		e->off = 0;
		poff = e->path;
	} else if ((ret = intern_path(im, given, &poff))) {
		return ret;
	}
	return emit(im, c, TR_OPEN, c->result >= 0 ? (int)c->result : -1, poff, 0, TRACE_OFF_NONE,
	            0);
}

static int do_fd_call(struct importer *im, const struct call *c, uint16_t type)
{
	long fd;
	struct sfd *e, *n;
	uint64_t off = TRACE_OFF_NONE, req = 0;
	uint32_t poff;
	int ret;

	if ((ret = call_fd(im, c, &fd, &e, &poff)) <= 0)
		return ret;
	if (type == TR_CLOSE) {
		e->path = 0;
		e->off = TRACE_OFF_NONE;
	} else if (type == TR_LSEEK) {
		req = c->nargs > 1 ? num_arg(c->arg[1]) : 0;
		if (c->result >= 0)
			off = e->off = (uint64_t)c->result;
	} else if (type == TR_DUP && c->result > INT32_MAX) {
		snprintf(im->why, sizeof(im->why), "%s result %" PRId64 " is not a descriptor",
		         c->name, c->result);
		return -ERANGE;
	} else if (type == TR_DUP && c->result >= 0) {
		if (!(n = fd_entry(im, c->pid, c->result)))
			return -ENOMEM;
		e = fd_entry(im, c->pid, fd); /* the table may have moved */
		*n = *e;
	}
	return emit(im, c, type, (int)fd, poff, 0, off, req);
}

static int do_mmap(struct importer *im, const struct call *c)
{
	char path[4096];
	long fd;
	struct sfd *e;
	int64_t k;

	if (c->nargs < 6 || (fd = fd_arg(c->arg[4], c->alen[4], path, sizeof(path))) < 0)
		return 0;
	if (!(e = fd_entry(im, c->pid, fd)))
		return -ENOMEM;
	if (path[0] && intern_path(im, path, &e->path))
		return -ENOMEM;
	if (c->result >= 0 && e->path) {
		k = tmap_index(&im->maps, (uint64_t)c->result);
		if (k < 0 || grow(&im->map_path, &im->mapcap, (size_t)k, sizeof(*im->map_path)))
			return -ENOMEM;
		im->map_path[k] = e->path;
	}
	return emit(im, c, TR_MMAP, (int)fd, e->path, 0, num_arg(c->arg[5]), num_arg(c->arg[1]));
}

static int do_unmap(struct importer *im, const struct call *c, uint16_t type)
{
	int64_t k = c->nargs >= 2 ? tmap_find(&im->maps, num_arg(c->arg[0])) : -1;

	if (k < 0)
		return 0;
	return emit(im, c, type, -1, im->map_path[k], 0, TRACE_OFF_NONE, num_arg(c->arg[1]));
}

/* rename/renameat/renameat2/unlink/unlinkat: paths are the quoted arguments. */
static int do_name(struct importer *im, const struct call *c, uint16_t type, int a1, int a2)
{
	char p1[4096], p2[4096] = "";
	uint32_t o1, o2 = 0;
	int ret;

	if (c->nargs <= a1 || (a2 >= 0 && c->nargs <= a2))
		return 0;
	unquote(c->arg[a1], p1, sizeof(p1));
	if (a2 >= 0)
		unquote(c->arg[a2], p2, sizeof(p2));
	if ((ret = intern_path(im, p1, &o1)) || (a2 >= 0 && (ret = intern_path(im, p2, &o2))))
		return ret;
	return emit(im, c, type, -1, o1, o2, TRACE_OFF_NONE, 0);
}

static int do_clone(struct importer *im, const struct call *c)
{
	bool thread = false;

	if (c->result <= 0)
		return 0;
	for (int i = 0; i < c->nargs; i++)
		if (memmem(c->arg[i], c->alen[i], "CLONE_THREAD", 12))
			thread = true;
	if (thread)
		return set_tgid(im, (uint32_t)c->result, c->pid);
	return trace_builder_proc(im->b, (uint32_t)c->result, c->pid, "", c->ts) ? 0 : -ENOMEM;
}

static int do_execve(struct importer *im, const struct call *c)
{
	char cmd[4096] = "", word[4096];
	const char *p, *end;
	size_t n = 0;

	if (c->result < 0 || c->nargs < 2 || c->arg[1][0] != '[')
		return 0;
	end = c->arg[1] + c->alen[1];
	for (p = c->arg[1] + 1; p < end && (p = memchr(p, '"', (size_t)(end - p)));) {
		p = unquote(p, word, sizeof(word));
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, "%s%s", n ? " " : "", word);
		if (n >= sizeof(cmd))
			break;
	}
	return trace_builder_proc(im->b, c->pid, 0, cmd, c->ts) ? 0 : -ENOMEM;
}

static int dispatch(struct importer *im, struct call *c)
{
	const char *n = c->name;

	if (!trace_builder_proc(im->b, c->pid, 0, "", c->ts))
		return -ENOMEM;
	for (size_t k = 0; k < sizeof(data_calls) / sizeof(data_calls[0]); k++)
		if (!strcmp(n, data_calls[k].name))
			return c->nargs ? do_data(im, c, k) : 0;
	if (!strcmp(n, "open") || !strcmp(n, "creat"))
		return do_open(im, c, 0);
	if (!strcmp(n, "openat") || !strcmp(n, "openat2"))
		return do_open(im, c, 1);
	if (!c->nargs)
		return 0;
	if (!strcmp(n, "close"))
		return do_fd_call(im, c, TR_CLOSE);
	if (!strcmp(n, "lseek"))
		return do_fd_call(im, c, TR_LSEEK);
	if (!strcmp(n, "dup") || !strcmp(n, "dup2") || !strcmp(n, "dup3") ||
	    (!strcmp(n, "fcntl") && c->nargs > 1 && !strncmp(c->arg[1], "F_DUPFD", 7)))
		return do_fd_call(im, c, TR_DUP);
	if (!strcmp(n, "mmap"))
		return do_mmap(im, c);
	if (!strcmp(n, "munmap"))
		return do_unmap(im, c, TR_MUNMAP);
	if (!strcmp(n, "msync"))
		return do_unmap(im, c, TR_MSYNC);
	if (!strcmp(n, "rename"))
		return do_name(im, c, TR_RENAME, 0, 1);
	if (!strcmp(n, "renameat") || !strcmp(n, "renameat2"))
		return do_name(im, c, TR_RENAME, 1, 3);
	if (!strcmp(n, "unlink"))
		return do_name(im, c, TR_UNLINK, 0, -1);
	if (!strcmp(n, "unlinkat"))
		return do_name(im, c, TR_UNLINK, 1, -1);
	if (!strcmp(n, "clone") || !strcmp(n, "clone3") || !strcmp(n, "fork") ||
	    !strcmp(n, "vfork"))
		return do_clone(im, c);
	if (!strcmp(n, "execve"))
		return do_execve(im, c);
	return 0;
}

/* Parse "name(args) = result ... <dur>" of one complete call. */
static int parse_call(struct importer *im, uint32_t tid, uint64_t ts, const char *text)
{
	struct call c = {.tid = tid, .ts = ts};
	const char *open = strchr(text, '('), *close, *eq, *lt;
	char name[64];

	if (!open || open == text || (size_t)(open - text) >= sizeof(name))
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)(open - text), text);
	for (const char *q = name; *q; q++)
		if (!isalnum((unsigned char)*q) && *q != '_')
			return 0;
	c.name = name;
	close = split_args(open + 1, c.arg, c.alen, &c.nargs);
	if (*close != ')')
		return 0;
	eq = strstr(close, ") = ");
	if (!eq)
		return 0;
	c.result = parse_result(eq + 4, c.rpath, sizeof(c.rpath));
	lt = strrchr(eq, '<');
	if (lt && lt[1] >= '0' && lt[1] <= '9' && strchr(lt, '>')) {
		bool bad;

		if (!parse_secs(lt + 1, &c.dur, &bad) && bad) {
			snprintf(im->why, sizeof(im->why), "duration %.40s is over 2^62 ns", lt);
			return -ERANGE;
		}
	}
	c.pid = tgid_of(im, tid);
	return dispatch(im, &c);
}

/* ---- lines ---- */

static struct pending *pending_of(struct importer *im, uint32_t tid, bool create)
{
	int64_t k = tmap_find(&im->pendmap, tid);

	if (k >= 0)
		return &im->pend[k];
	if (!create || grow(&im->pend, &im->pendcap, im->npend, sizeof(*im->pend)) ||
	    tmap_index(&im->pendmap, tid) < 0)
		return NULL;
	im->pend[im->npend] = (struct pending){.tid = tid};
	return &im->pend[im->npend++];
}

/*
 * "[pid 12]", "12 " or nothing; then "10:11:12.123456" or "1700000000.123456".
 * \return past the prefix, or NULL when the time is out of range (*ts holds nothing then).
 */
static const char *line_prefix(const char *p, uint32_t *tid, uint64_t *ts, bool *has_ts)
{
	char *end;

	*tid = 0;
	*has_ts = false;
	if (!strncmp(p, "[pid", 4)) {
		*tid = (uint32_t)strtoul(p + 4, &end, 10);
		p = skip_ws(end + (*end == ']'));
	} else if (isdigit((unsigned char)*p)) {
		unsigned long v = strtoul(p, &end, 10);

		if (*end == ' ' || *end == '\t') {
			*tid = (uint32_t)v;
			p = skip_ws(end);
		}
	}
	if (isdigit((unsigned char)p[0])) {
		const char *q, *e;
		unsigned h, m;
		uint64_t s;
		bool bad;

		if ((q = clock_part(p, 24, &h)) && (q = clock_part(q, 60, &m)) &&
		    (e = parse_secs(q, &s, &bad)) && e > q && s < 61 * 1000000000ull) {
			*ts = ((uint64_t)h * 3600 + m * 60) * 1000000000ull + s;
			*has_ts = true;
			p = skip_ws(e);
		} else if ((e = parse_secs(p, &s, &bad)) && *e == ' ') {
			*ts = s;
			*has_ts = true;
			p = skip_ws(e);
		} else if (bad) {
			return NULL;
		}
	}
	return p;
}

static int do_line(struct importer *im, char *line)
{
	static const char unfinished[] = " <unfinished ...>";
	struct pending *pd;
	uint32_t tid;
	uint64_t ts = 0;
	bool has_ts;
	const char *p;
	char *u;
	int ret;

	line[strcspn(line, "\n")] = '\0';
	p = line_prefix(line, &tid, &ts, &has_ts);
	if (!p) {
		snprintf(im->why, sizeof(im->why), "time stamp %.40s is over 2^62 ns", line);
		return -ERANGE;
	}
	if (!has_ts)
		ts = im->line_no * 1000; /* no times: keep the order */
	if (!*p || *p == '+' || *p == '-' || !strncmp(p, "strace:", 7))
		return 0;
	if ((u = strstr(p, unfinished)) && !u[sizeof(unfinished) - 1]) {
		if (!(pd = pending_of(im, tid, true)))
			return -ENOMEM;
		free(pd->text);
		pd->text = strndup(p, (size_t)(u - p));
		pd->ts = ts;
		return pd->text ? 0 : -ENOMEM;
	}
	if (!strncmp(p, "<... ", 5)) {
		const char *rest = strstr(p, " resumed>");
		size_t n;
		char *joined;

		pd = pending_of(im, tid, false);
		if (!rest || !pd || !pd->text)
			return 0;
		rest += 9;
		n = strlen(pd->text) + strlen(rest) + 1;
		joined = malloc(n);
		if (!joined)
			return -ENOMEM;
		snprintf(joined, n, "%s%s", pd->text, rest);
		free(pd->text);
		pd->text = NULL;
		ret = parse_call(im, tid, pd->ts, joined);
		free(joined);
		return ret;
	}
	return parse_call(im, tid, ts, p);
}

int trace_import_strace(struct trace_builder *b, FILE *in, struct llmio_error *e)
{
	struct importer im = {.b = b};
	char *line = malloc(LINE);
	int ret = 0;

	if (!line)
		return -ENOMEM;
	b->flags |= TRACE_F_STRACE;
	while (!ret && fgets(line, LINE, in)) {
		im.line_no++;
		ret = do_line(&im, line);
	}
	if (ret == -ERANGE) {
		ret = llmio_err(e, -EINVAL, "line %" PRIu64 ": %s", im.line_no,
		                im.why); /* the log is the user's input */
	} else if (ret) {
		llmio_err(e, ret, "line %" PRIu64 ": %s", im.line_no, strerror(-ret));
	} else if (!im.calls) {
		ret = llmio_err(e, -EINVAL, "no system calls found: not `strace -f -y` output");
	}
	for (size_t i = 0; i < im.npend; i++)
		free(im.pend[i].text);
	free(im.pend);
	free(im.fds);
	free(im.tgids);
	free(im.map_path);
	tmap_release(&im.fdmap);
	tmap_release(&im.tgid);
	tmap_release(&im.maps);
	tmap_release(&im.pendmap);
	free(line);
	return ret;
}
