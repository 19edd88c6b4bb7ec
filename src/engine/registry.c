/* SPDX-License-Identifier: MIT */
/*
 * The engine registry: one explicit array (no constructors, so static linking never drops an
 * engine), validated once, plus the options parser every engine shares and the public view of
 * engines in include/llmio/engine.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "engine/engine.h"
#include "llmio/engine.h"
#include "llmio/result.h"

/* The built-in engines: each is one file, src/engine/NAME.c, and one line here and below. */
extern const struct engine_ops engine_null;
extern const struct engine_ops engine_psync;
extern const struct engine_ops engine_libaio;
extern const struct engine_ops engine_io_uring;
extern const struct engine_ops engine_mmap;
extern const struct engine_ops engine_gds;
extern const struct engine_ops engine_cuda_bounce;
extern const struct engine_ops engine_s3;
extern const struct engine_ops engine_s3_agent;
extern const struct engine_ops engine_pmem2;
extern const struct engine_ops engine_spdk;
extern const struct engine_ops engine_uring_cmd;
extern const struct engine_ops engine_filecreate;
extern const struct engine_ops engine_filestat;
extern const struct engine_ops engine_filedelete;
extern const struct engine_ops engine_ftruncate;
extern const struct engine_ops engine_falloc;
extern const struct engine_ops engine_cpuio;
extern const struct engine_ops engine_net;
extern const struct engine_ops engine_exec;

static const struct engine_ops *const builtin_engines[] = {
        &engine_null,       &engine_psync,    &engine_libaio,      &engine_io_uring,
        &engine_mmap,       &engine_gds,      &engine_cuda_bounce, &engine_s3,
        &engine_s3_agent,   &engine_pmem2,    &engine_spdk,        &engine_uring_cmd,
        &engine_filecreate, &engine_filestat, &engine_filedelete,  &engine_ftruncate,
        &engine_falloc,     &engine_cpuio,    &engine_net,         &engine_exec,
};

#define NENGINES (sizeof(builtin_engines) / sizeof(builtin_engines[0]))

size_t engine_count(void)
{
	return NENGINES;
}

/* An engine without the callbacks its capabilities promise is a programming error; name it. */
const char *engine_missing(const struct engine_ops *e)
{
	size_t text = 0;

	if (e->abi_version != ENGINE_ABI_VERSION)
		return "abi_version = ENGINE_ABI_VERSION";
	if (!e->name)
		return "name";
	if (!e->probe)
		return "probe";
	if (!e->init)
		return "init";
	if (!e->queue)
		return "queue";
	if (!e->cleanup)
		return "cleanup";
	if ((e->caps & ENGINE_CAP_ASYNC) && !e->reap)
		return "reap (ENGINE_CAP_ASYNC)";
	if ((e->caps & ENGINE_CAP_ASYNC) && !e->commit)
		return "commit (ENGINE_CAP_ASYNC)";
	if ((e->caps & ENGINE_CAP_OWN_TARGET) && !e->target_resolve)
		return "target_resolve (ENGINE_CAP_OWN_TARGET)";
	if (e->owns_target && !e->target_resolve)
		return "target_resolve (it has owns_target)";
	if (e->buf_alloc && !e->buf_free) /* engine buffers come with their own free */
		return "buf_free (it has buf_alloc)";
	if (!e->buf_alloc && e->buf_free)
		return "buf_alloc (it has buf_free)";
	if (e->buf_alloc && !(e->caps & ENGINE_CAP_HOST_BUFS) &&
	    (!e->buf_copy_in || !e->buf_copy_out))
		return "buf_copy_in and buf_copy_out (buf_alloc without ENGINE_CAP_HOST_BUFS)";
	if ((e->buf_copy_in || e->buf_copy_out) && !e->buf_alloc)
		return "buf_alloc (it has buf_copy_in or buf_copy_out)";
	if (e->objects &&
	    (!e->objects->size || !e->objects->remove || !e->objects->list || !e->objects->writer))
		return "objects->size, remove, list and writer (it has objects)";
	if (e->objects && !e->target_resolve)
		return "target_resolve (it has objects)";
	for (const struct llmio_optdesc *o = e->opts; o && o->name; o++) {
		/* a result carries them by value (llmio_result.engine_options) */
		if (o - e->opts >= LLMIO_ENGINE_OPTS_MAX ||
		    strlen(o->name) >= sizeof(((struct llmio_engine_optval *)0)->name))
			return "at most LLMIO_ENGINE_OPTS_MAX options, names under 32 bytes";
		if (o->fio_kind == OPTD_FIO_CUSTOM && !e->fio_option)
			return "fio_option (an option is OPTD_FIO_CUSTOM)";
		if (o->fio_kind == OPTD_FIO_NONE && !o->fio_note)
			return "fio_note (an option is OPTD_FIO_NONE)";
		if (o->type == OPTD_ENUM && !o->choices)
			return "choices (an option is OPTD_ENUM)";
		if (o->scope != OPTD_SCOPE_ENGINE)
			return "scope = OPTD_SCOPE_ENGINE (in an option)";
		if (o->type == OPTD_STRING ? o->size < 2 : o->size != sizeof(int))
			return "an int field, or a char array for OPTD_STRING (an option's "
			       "OPTD_FIELD)";
		if (o->offset + o->size > e->opts_size)
			return "its options' fields in opts_size (an option's OPTD_FIELD)";
		if (o->type == OPTD_STRING)
			text += o->size;
	}
	/* a result carries its strings in full (llmio_result.engine_text) */
	if (text > LLMIO_ENGINE_TEXT_MAX)
		return "OPTD_STRING fields of at most LLMIO_ENGINE_TEXT_MAX bytes together";
	return NULL;
}

const struct engine_ops *engine_at(size_t i)
{
	const char *missing;

	if (i >= NENGINES)
		return NULL;
	missing = engine_missing(builtin_engines[i]);
	if (missing) {
		fprintf(stderr, "llmio: internal error: engine '%s' is malformed: it has no %s\n",
		        builtin_engines[i]->name ? builtin_engines[i]->name : "?", missing);
		abort();
	}
	return builtin_engines[i];
}

bool engine_owns_target(const struct engine_ops *ops, const void *opts)
{
	return (ops->caps & ENGINE_CAP_OWN_TARGET) || (ops->owns_target && ops->owns_target(opts));
}

int engine_target_resolve_defaults(const struct engine_ops *ops, const struct engine_target_req *rq,
                                   struct engine_target *t, struct llmio_error *e)
{
	void *opts = calloc(1, ops->opts_size ? ops->opts_size : 1);
	int ret;

	if (!opts)
		return llmio_err(e, -ENOMEM, "out of memory resolving %s", rq->name);
	ret = engine_opts_parse(ops, "", opts, e);
	if (!ret)
		ret = ops->target_resolve(opts, rq, t, e);
	free(opts);
	return ret;
}

const struct engine_objects *engine_objects(const struct engine_ops *ops, const void *opts)
{
	return engine_owns_target(ops, opts) ? ops->objects : NULL;
}

int engine_process_main(int argc, char *const *argv)
{
	for (size_t i = 0; i < NENGINES; i++) {
		int code = builtin_engines[i]->process_main
		                   ? builtin_engines[i]->process_main(argc, argv)
		                   : -1;

		if (code >= 0)
			return code;
	}
	return -1;
}

const struct engine_ops *engine_default(char *why, size_t len)
{
	const struct engine_ops *e = engine_find("io_uring");
	char buf[512] = "";

	if (e && (!e->probe || !e->probe(buf, sizeof(buf))))
		return e;
	if (why && len)
		snprintf(why, len, "io_uring cannot run here: %s", e ? buf : "not built in");
	return engine_find("psync");
}

const struct engine_ops *engine_find(const char *name)
{
	for (size_t i = 0; i < NENGINES; i++) {
		const struct engine_ops *e = builtin_engines[i];

		if (!strcmp(e->name, name))
			return engine_at(i);
		for (const char *const *a = e->aliases; a && *a; a++)
			if (!strcmp(*a, name))
				return engine_at(i);
	}
	return NULL;
}

unsigned engine_opts_values(const struct engine_ops *e, const void *opts,
                            struct llmio_engine_optval *out, uint32_t *strings, char *text,
                            size_t len)
{
	size_t used = 0;
	unsigned n = 0;

	*strings = 0;
	for (const struct llmio_optdesc *o = e->opts; opts && o && o->name; o++, n++) {
		struct llmio_engine_optval *v = &out[n];
		struct llmio_optval val;

		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "%s", o->name);
		optdesc_load(o, opts, &val);
		if (o->type == OPTD_STRING) {
			/* whole, at text + value (engine_missing: the fields fit in len) */
			int k = snprintf(text + used, len - used, "%s", val.s);

			snprintf(v->choice, sizeof(v->choice), "%s", val.s);
			v->value = (int)used;
			*strings |= 1u << n;
			used += (size_t)k + 1;
			continue;
		}
		v->value = *(const int *)((const char *)opts + o->offset);
		if (o->type != OPTD_ENUM || optdesc_format(o, &val, v->choice, sizeof(v->choice)))
			v->choice[0] = '\0'; /* a number; an enum out of its choices too */
	}
	return n;
}

const char *engine_test_variant(const struct engine_ops *e, size_t m)
{
	if (!m)
		return "";
	for (size_t k = 1; e->test_variants && e->test_variants[k - 1]; k++)
		if (k == m)
			return e->test_variants[k - 1];
	return NULL;
}

const struct llmio_optdesc *engine_opt_find(const struct engine_ops *e, const char *key)
{
	return optdesc_find(e->opts, SIZE_MAX, key);
}

const struct engine_ops *engine_owning_option(const char *key)
{
	for (size_t i = 0; i < NENGINES; i++)
		if (engine_opt_find(engine_at(i), key))
			return engine_at(i);
	return NULL;
}

static void list_opts(const struct engine_ops *e, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (const struct llmio_optdesc *o = e->opts; o && o->name && used < len; o++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", o->name);
	if (!e->opts || !e->opts->name)
		snprintf(buf, len, "none");
}

/* Option o of engine e from text v into opts: the one parser of every option
 * (optdesc_set()), its message prefixed with the engine. */
static int set_opt(const struct engine_ops *e, const struct llmio_optdesc *o, const char *v,
                   void *opts, struct llmio_error *err)
{
	struct llmio_error in = {0};
	int ret = optdesc_set(o, v, opts, &in);

	return ret ? llmio_err(err, ret, "%s option %s", e->name, in.msg) : 0;
}

/* One more byte c of engine_opts_append()'s text, if it leaves room for the '\0'. */
static bool put(char *text, size_t len, size_t *used, char c)
{
	if (*used + 1 >= len)
		return false;
	text[(*used)++] = c;
	return true;
}

int engine_opts_append(char *text, size_t len, const char *key, const char *value)
{
	const size_t was = strnlen(text, len);
	size_t used = was;
	bool ok = was < len && (!was || put(text, len, &used, ','));

	for (const char *p = key; ok && *p; p++)
		ok = put(text, len, &used, *p);
	ok = ok && put(text, len, &used, '=');
	for (const char *p = value; ok && *p; p++) {
		if (*p == ',' || *p == '\\')
			ok = put(text, len, &used, '\\');
		ok = ok && put(text, len, &used, *p);
	}
	if (!ok) {
		if (was < len)
			text[was] = '\0'; /* never a cut option: the text stays as it was */
		return -ENOSPC;
	}
	text[used] = '\0';
	return 0;
}

/*
 * The next option of text at *p into tok (len bytes), its escapes undone (engine_opts_append():
 * "\," a comma of the value, "\\" a backslash; any other backslash is itself); *p moves past
 * it and its comma.  false at the end of text.
 */
static bool next_opt(const char **p, char *tok, size_t len)
{
	const char *s = *p;
	size_t n = 0;

	if (!*s)
		return false;
	for (; *s && *s != ','; s++) {
		if (*s == '\\' && (s[1] == ',' || s[1] == '\\'))
			s++;
		if (n + 1 < len)
			tok[n++] = *s;
	}
	tok[n] = '\0';
	*p = *s ? s + 1 : s;
	return true;
}

int engine_opts_parse(const struct engine_ops *e, const char *text, void *opts,
                      struct llmio_error *err)
{
	struct llmio_error e_ = {0};
	char tok[512];
	const char *p = text;
	int ret = 0;

	if (e->opts_size)
		memset(opts, 0, e->opts_size);
	for (const struct llmio_optdesc *o = e->opts; o && o->name && !ret; o++)
		ret = set_opt(e, o, NULL, opts, &e_); /* a bad default is a bug; e_ names it */
	if (ret || !text || !*text)
		goto out;
	if (strlen(text) >= sizeof(tok)) {
		ret = llmio_err(&e_, -EINVAL, "engine options too long (%zu bytes)", strlen(text));
		goto out;
	}
	while (!ret && next_opt(&p, tok, sizeof(tok))) {
		char *eq = strchr(tok, '=');
		const char *val = "";
		const struct llmio_optdesc *o;

		if (!*tok)
			continue; /* ",," */
		if (eq) {
			*eq = '\0';
			val = eq + 1;
		}
		o = engine_opt_find(e, tok);
		if (!o) {
			char list[256];

			list_opts(e, list, sizeof(list));
			ret = llmio_err(&e_, -EINVAL,
			                "engine %s has no option '%s' (its options: %s)", e->name,
			                tok, list);
			break;
		}
		ret = set_opt(e, o, val, opts, &e_);
	}
out:
	/* Every option error is a usage error, out of range included. */
	return ret ? llmio_err(err, -EINVAL, "%s", e_.msg) : 0;
}

/* Public view. */

size_t llmio_engine_count(void)
{
	return NENGINES;
}

int llmio_engine_info(size_t i, struct llmio_engine_info *out)
{
	const struct engine_ops *e = engine_at(i);
	size_t n = 0;

	if (!e)
		return -ENOENT;
	for (const struct llmio_optdesc *o = e->opts; o && o->name; o++)
		n++;
	out->name = e->name;
	out->summary = e->summary;
	out->async = !!(e->caps & ENGINE_CAP_ASYNC);
	out->supports_direct = !!(e->caps & ENGINE_CAP_DIRECT);
	out->noptions = n;
	return 0;
}

int llmio_engine_option(size_t engine, size_t opt, struct llmio_engine_option_info *out)
{
	const struct engine_ops *e = engine_at(engine);
	size_t n = 0;

	for (const struct llmio_optdesc *o = e ? e->opts : NULL; o && o->name; o++, n++) {
		if (n != opt)
			continue;
		*out = (struct llmio_engine_option_info){
		        .name = o->name,
		        .alias = o->alias,
		        .type = optdesc_type_name(o),
		        .def = o->def,
		        .help = o->help,
		};
		return 0;
	}
	return -ENOENT;
}

/*
 * fio's engines that llmio does not have, each with the nearest llmio engine or the reason
 * there is none, so that a fio job file is refused by its engine's name (docs/fio.md).  fio's
 * names for llmio's own engines are those engines' aliases (sync -> psync, libpmem -> pmem2 ...).
 */
static const struct {
	const char *name, *instead;
} fio_engines[] = {
        {"posixaio", "libaio or io_uring (the kernel's asynchronous I/O)"},
        {"solarisaio", "libaio or io_uring"},
        {"windowsaio", "libaio or io_uring"},
        {"splice", "psync (llmio does not splice through a pipe)"},
        {"sg", "uring_cmd (NVMe passthrough; SCSI generic is not done)"},
        {"libzbc", "psync or io_uring on the device (no zones)"},
        {"xnvme", "uring_cmd (NVMe passthrough through io_uring) or spdk"},
        {"libblkio", "io_uring on the block device, or spdk"},
        {"libcufile", "gds (cuFile, cuda_io=cufile) or cuda-bounce (cuda_io=posix)"},
        {"libhipfile", "nothing: llmio's GPU engines (gds, cuda-bounce) are NVIDIA's"},
        {"dev-dax", "pmem2 (libpmem2 maps a device DAX too)"},
        {"http", "s3 (S3's HTTP API; WebDAV and Swift are not done)"},
        {"rados", "s3 (objects; Ceph's RADOS gateway speaks S3)"},
        {"rbd", "psync or io_uring on the mapped /dev/rbdN"},
        {"nbd", "psync or io_uring on the connected /dev/nbdN"},
        {"libiscsi", "psync or io_uring on the kernel's iSCSI device"},
        {"nfs", "psync or io_uring on the mounted export"},
        {"gfapi", "psync or io_uring on the mounted volume"},
        {"gfapi_async", "psync or io_uring on the mounted volume"},
        {"dfs", "psync or io_uring on DAOS's dfuse mount"},
        {"libhdfs", "psync or io_uring on a mounted HDFS (fuse)"},
        {"ime_psync", "psync on the mounted IME filesystem"},
        {"ime_psyncv", "psync on the mounted IME filesystem"},
        {"ime_aio", "libaio on the mounted IME filesystem"},
        {"netsplice", "nothing: llmio measures storage, not network transfers"},
        {"rdma", "nothing: llmio measures storage, not network transfers"},
        {"mtd", "nothing: raw flash (MTD) is not done"},
        {"e4defrag", "nothing: llmio does not defragment"},
        {"dircreate", "nothing: llmio measures data I/O, not directory operations"},
        {"dirstat", "nothing: llmio measures data I/O, not directory operations"},
        {"dirdelete", "nothing: llmio measures data I/O, not directory operations"},
        {"page_fault", "mmap (page faults on a mapped file)"},
        {"binject", "psync or io_uring on the device"},
        {"guasi", "libaio or io_uring"},
};

int llmio_engine_probe(const char *name, char *why, size_t whylen)
{
	const struct engine_ops *e = engine_find(name);

	if (!e) {
		size_t used = 0;

		for (size_t i = 0; i < sizeof(fio_engines) / sizeof(fio_engines[0]); i++)
			if (!strcmp(fio_engines[i].name, name)) {
				snprintf(why, whylen,
				         "unknown engine '%s': a fio engine llmio does not have; "
				         "instead: %s (`llmio engines` lists llmio's)",
				         name, fio_engines[i].instead);
				return -ENOENT;
			}
		used = (size_t)snprintf(why, whylen, "unknown engine '%s' (engines: ", name);

		for (size_t i = 0; i < NENGINES && used < whylen; i++)
			used += (size_t)snprintf(why + used, whylen - used, "%s%s", i ? ", " : "",
			                         builtin_engines[i]->name);
		if (used < whylen)
			snprintf(why + used, whylen - used, ")");
		return -ENOENT;
	}
	why[0] = '\0';
	return e->probe(why, whylen);
}

bool llmio_engine_has_option(const char *name, const char *key)
{
	const struct engine_ops *e = engine_find(name);

	return e && engine_opt_find(e, key);
}

int engine_read_proc_ulong(const char *path, unsigned long *val)
{
	char text[32];
	ssize_t n;
	char *end;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	text[n] = '\0';
	errno = 0;
	*val = strtoul(text, &end, 10);
	if (errno || end == text)
		return -EINVAL;
	return 0;
}

void engine_appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}
