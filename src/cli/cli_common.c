/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "base/error.h"
#include "job/options.h"
#include "engine/engine.h"
#include "base/fmt.h"
#include "workload/leftover.h"

volatile int cli_stop;
volatile int *cli_stop_also;

static void on_signal(int sig)
{
	(void)sig;
	cli_stop = 1;
	if (cli_stop_also)
		*cli_stop_also = 1;
	/* a second Ctrl-C ends llmio at once */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

void cli_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void cli_progress(void *arg, double elapsed_s, double eta_s, double iops, double bw_bytes)
{
	char c[32], t[32], rate[32], eta[48];

	(void)arg;
	fmt_count(c, sizeof(c), iops);
	fmt_seconds(t, sizeof(t), elapsed_s);
	fmt_rate(rate, sizeof(rate), bw_bytes);
	progress_eta(eta, sizeof(eta), eta_s);
	progress_draw(false, "[%s%s] %s IOPS, %s", t, eta, c, rate);
}

void cli_progress_clear(void)
{
	progress_clear();
}

/* Is the long option just returned (longopts[idx]) a prefix of its name, as given in argv? */
static bool abbreviated(const struct cli_getopt *g, int idx, const char **text)
{
	const char *t;
	size_t n;

	if (idx < 0 || optind < 1)
		return false;
	t = g->argv[optind - 1];
	/* a value given as its own word: the option is the word before it */
	if (optarg && optarg == t && optind >= 2)
		t = g->argv[optind - 2];
	if (strncmp(t, "--", 2))
		return false;
	*text = t;
	n = strcspn(t + 2, "=");
	return n != strlen(g->longopts[idx].name);
}

int cli_getopt_next(struct cli_getopt *g)
{
	const char *text = NULL;
	int c, idx = -1;

	if (!g->started) {
		/* getopt's state is global: each subcommand parses its argv from the start */
		opterr = 0;
		optind = 1;
		g->started = true;
	}
	optarg = NULL;
	c = getopt_long(g->argc, g->argv, g->shortopts, g->longopts, &idx);
	g->next = optind;
	g->noval = false;
	if (c != '?' && abbreviated(g, idx, &text)) {
		/* a value it took as its own word is scanned again (as an operand) */
		if (optarg && optarg == g->argv[optind - 1])
			optind--;
		g->next = optind;
		c = '?';
	} else if (c == '?' || c == ':') {
		text = g->argv[optind - 1];
	}
	g->bad = text;
	if (c == '?' && g->pass_unknown)
		return CLI_OPT_OTHER;
	if (c == ':' || c == '?') {
		g->noval = c == ':';
		if (g->quiet)
			return CLI_OPT_BAD;
		if (c == ':')
			fprintf(stderr, "llmio %s: %s needs a value\n", g->cmd, text);
		else
			fprintf(stderr, "llmio %s: unknown option '%s' (see `llmio %s --help`)\n",
			        g->cmd, text, g->cmd);
		return CLI_OPT_BAD;
	}
	return c;
}

const char *cli_getopt_word(const struct cli_getopt *g, int c)
{
	return c == 1 ? optarg : g->bad;
}

bool cli_dispatch(const struct cmd *table, size_t n, int argc, char **argv, int *code)
{
	if (argc < 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[1], table[i].name)) {
			*code = table[i].fn(argc - 1, argv + 1);
			return true;
		}
	return false;
}

int cli_exit_code(int ret)
{
	return ret == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
}

/* The directory part of path ("." when it has none). */
static void parent_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

#define OUT_FAIL(errnum, ...) return llmio_err(e, -(errnum), __VA_ARGS__)

/* Can a file be created (or renamed into place) beside path? */
static int parent_usable(const char *shown, const char *path, struct llmio_error *e)
{
	char dir[LLMIO_PATH_MAX];
	struct stat st;

	parent_of(path, dir, sizeof(dir));
	if (stat(dir, &st))
		OUT_FAIL(errno,
		         "cannot write %s: its directory %s: %s; create it or choose another "
		         "path",
		         shown, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		OUT_FAIL(ENOTDIR, "cannot write %s: %s is not a directory; choose another path",
		         shown, dir);
	if (access(dir, W_OK | X_OK))
		OUT_FAIL(errno, "cannot write %s: its directory %s: %s; choose another path", shown,
		         dir, strerror(errno));
	return 0;
}

int cli_output_check(const char *path, enum cli_out_kind kind, struct cli_out *out,
                     struct llmio_error *e)
{
	struct cli_out o = {0};
	const char *real = path;
	char resolved[PATH_MAX];
	struct stat st;

	if (!*path)
		OUT_FAIL(EINVAL, "an output path is empty; give a file name");
	if (kind == CLI_OUT_FILE && !strcmp(path, "-")) {
		o.to_stdout = true;
		goto done;
	}
	if (strlen(path) >= sizeof(o.path) - 32)
		OUT_FAIL(ENAMETOOLONG, "cannot write %.64s...: the path is too long", path);
	if (lstat(path, &st)) {
		if (errno != ENOENT)
			OUT_FAIL(errno, "cannot write %s: %s; choose another path", path,
			         strerror(errno));
		goto new_path;
	}
	if (S_ISLNK(st.st_mode)) {
		/* the link stays: what it points at is what is written (or replaced) */
		if (!realpath(path, resolved)) {
			if (errno == ENOENT)
				OUT_FAIL(
				        ENOENT,
				        "cannot write %s: it is a symbolic link to a missing file; "
				        "give the target's path, or remove the link",
				        path);
			OUT_FAIL(errno, "cannot write %s: resolving the symbolic link: %s", path,
			         strerror(errno));
		}
		if (strlen(resolved) >= sizeof(o.path) - 32)
			OUT_FAIL(ENAMETOOLONG,
			         "cannot write %s: the link's target path is too long", path);
		real = resolved;
		if (stat(real, &st))
			OUT_FAIL(errno, "cannot write %s: %s", path, strerror(errno));
	}
	o.exists = true;
	if (S_ISDIR(st.st_mode)) {
		if (kind != CLI_OUT_DIR)
			OUT_FAIL(EISDIR,
			         "cannot write %s: it is a directory; give a file name (e.g. "
			         "%s/results.%s)",
			         path, path, kind == CLI_OUT_JOURNAL ? "jsonl" : "json");
	} else if (kind == CLI_OUT_DIR) {
		OUT_FAIL(ENOTDIR,
		         "cannot write the report into %s: it exists and is not a directory; "
		         "choose a new directory with -o",
		         path);
	} else if (S_ISBLK(st.st_mode)) {
		OUT_FAIL(EPERM,
		         "refusing to write %s: it is a block device (results are never written "
		         "onto a disk); choose a file",
		         path);
	} else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		if (kind == CLI_OUT_JOURNAL)
			OUT_FAIL(EINVAL,
			         "cannot use %s as a journal: it is a %s, and a journal must be a "
			         "regular file (it is fsynced and read back by --resume)",
			         path, S_ISFIFO(st.st_mode) ? "FIFO" : "device");
		if (access(real, W_OK))
			OUT_FAIL(errno, "cannot write %s: %s; choose another path", path,
			         strerror(errno));
		o.through = true;
		snprintf(o.path, sizeof(o.path), "%s", real);
		goto done;
	} else if (!S_ISREG(st.st_mode)) {
		OUT_FAIL(EINVAL,
		         "cannot write %s: it is not a regular file, a device or a FIFO; "
		         "choose a file",
		         path);
	} else if (kind == CLI_OUT_JOURNAL && access(real, W_OK)) {
		OUT_FAIL(errno, "cannot append to %s: %s; choose another path", path,
		         strerror(errno));
	}
new_path:
	snprintf(o.path, sizeof(o.path), "%s", real);
	{
		int ret = parent_usable(path, o.path, e);

		if (ret)
			return ret;
	}
done:
	if (out)
		*out = o;
	return 0;
}

int cli_output_usable(const char *cmd, const char *path, enum cli_out_kind kind)
{
	struct llmio_error e = {0};

	if (!cli_output_check(path, kind, NULL, &e))
		return 0;
	fprintf(stderr, "llmio %s: %s\n", cmd, e.msg);
	return EXIT_USAGE;
}

int cli_check_writable(const char *path)
{
	return cli_output_check(path, CLI_OUT_FILE, NULL, NULL);
}

/*
 * A stream over a file descriptor that keeps the first write error's errno: stdio only keeps
 * a flag, and callers turn that into EIO, so a full disk would read "Input/output error".
 */
struct out_stream {
	int fd;
	int error; /* first errno of a failed write, 0 if none */
};

static ssize_t out_write(void *cookie, const char *buf, size_t len)
{
	struct out_stream *s = cookie;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(s->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!s->error)
				s->error = n < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* Run fn over fd; the error that counts is the first failed write's, then fn's, then flush's. */
static int write_fd(int fd, int (*fn)(FILE *f, void *arg), void *arg)
{
	static const cookie_io_functions_t io = {.write = out_write};
	struct out_stream s = {.fd = fd};
	FILE *f = fopencookie(&s, "w", io);
	int ret, flushed;

	if (!f)
		return -errno;
	ret = fn(f, arg);
	flushed = fflush(f);
	fclose(f);
	if (s.error)
		return -s.error;
	if (!ret && flushed)
		ret = -EIO;
	return ret;
}

static int write_stdout(int (*fn)(FILE *f, void *arg), void *arg)
{
	int ret = fn(stdout, arg);

	if (fflush(stdout) && !ret)
		ret = -errno;
	if (ferror(stdout) && !ret)
		ret = -EIO;
	return ret;
}

int cli_write_file(const char *path, int (*fn)(FILE *f, void *arg), void *arg)
{
	char tmp[LLMIO_PATH_MAX + 32];
	struct cli_out o;
	struct stat st;
	mode_t mask;
	int fd, ret;

	ret = cli_output_check(path, CLI_OUT_FILE, &o, NULL);
	if (ret)
		return ret;
	if (o.to_stdout)
		return write_stdout(fn, arg);
	if (o.through) {
		/* a device or FIFO: written into, never replaced (a FIFO waits for its reader) */
		fd = open(o.path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		ret = write_fd(fd, fn, arg);
		if (close(fd) && !ret && errno != EINTR)
			ret = -errno;
		return ret;
	}
	/* beside the target (same filesystem, so the rename is atomic), never over anything */
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", o.path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the replaced file keeps its mode; a new one gets the usual 0666 less the umask */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, o.exists && !stat(o.path, &st) ? st.st_mode & 07777 : 0666 & ~mask)) {
		ret = -errno;
		goto fail;
	}
	ret = write_fd(fd, fn, arg);
	/* durable before it is published: a crash leaves the old file or the whole new one */
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret && errno != EINTR)
		ret = -errno;
	fd = -1;
	if (!ret && rename(tmp, o.path))
		ret = -errno;
	if (!ret)
		return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return ret;
}

/* Is `key` a job option or an option of `engine`, and is it a boolean?  0, or -ENOENT. */
static int opt_is_bool(const char *engine, const char *key, bool *is_bool)
{
	const struct engine_ops *e = engine_find(engine);
	const struct llmio_optdesc *o;
	enum llmio_optdesc_type type;

	if (!job_opt_type(key, &type)) {
		*is_bool = type == OPTD_BOOL;
		return 0;
	}
	o = e && !strcmp(e->name, engine) ? engine_opt_find(e, key) : NULL;
	if (!o)
		return -ENOENT;
	*is_bool = o->type == OPTD_BOOL;
	return 0;
}

/* A word the option parser reads as a boolean (an empty one is an operand, not "true"). */
static bool is_bool_word(const char *v)
{
	static const struct llmio_optdesc any_bool = {.name = "", .type = OPTD_BOOL, .def = ""};
	struct llmio_optval x;

	return v[0] && optdesc_parse(&any_bool, v, &x, NULL) == 0;
}

int cli_parse_job_arg(struct llmio_job_opts *opts, int argc, char **argv, int *i, bool *handled)
{
	struct llmio_error err = {0};
	char key[128];
	const char *arg = argv[*i], *eq, *value;
	bool is_bool;
	size_t klen;
	int ret;

	*handled = false;
	if (strncmp(arg, "--", 2))
		return 0;
	arg += 2;
	eq = strchr(arg, '=');
	klen = eq ? (size_t)(eq - arg) : strlen(arg);
	if (klen >= sizeof(key))
		return 0;
	memcpy(key, arg, klen);
	key[klen] = '\0';
	if (opt_is_bool(opts->engine, key, &is_bool))
		return 0; /* not ours: the caller's own flag, or unknown */
	*handled = true;
	if (eq) {
		value = eq + 1;
	} else if (is_bool) {
		/* `--direct` alone, or fio's `--direct 1` */
		value = "1";
		if (*i + 1 < argc && is_bool_word(argv[*i + 1]))
			value = argv[++*i];
	} else if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2)) {
		value = argv[++*i];
	} else {
		fprintf(stderr, "llmio: --%s needs a value\n", key);
		return EXIT_USAGE;
	}
	ret = llmio_job_opts_set(opts, key, value, &err);
	if (ret == -ENOENT) {
		/* an engine option: collected as text, validated by the engine's own table */
		if (engine_opts_append(opts->engine_opts, sizeof(opts->engine_opts), key, value)) {
			fprintf(stderr, "llmio: too many engine options\n");
			return EXIT_USAGE;
		}
		return 0;
	}
	if (ret) {
		fprintf(stderr, "llmio: %s\n", err.msg);
		return EXIT_USAGE;
	}
	return 0;
}

/* One line: what the run leaves on disk, and where. */
void cli_say_leftover(FILE *f, const struct wl_leftover *l, bool keep)
{
	char ours[32], theirs[32], dir[LLMIO_PATH_MAX], text[LLMIO_PATH_MAX + 256];
	int n;

	if (!l->active)
		return;
	fmt_bytes(ours, sizeof(ours), (double)l->ours_bytes);
	fmt_bytes(theirs, sizeof(theirs), (double)l->theirs_bytes);
	/* the whole path (never shortened: it says where the data is), wrapped as a word */
	snprintf(dir, sizeof(dir), "%s", l->dir);
	if (!l->ours && !l->theirs)
		n = snprintf(text, sizeof(text), "no files left on disk (%s %s)",
		             l->dir_removed ? "removed" : "kept", dir);
	else if (keep)
		n = snprintf(text, sizeof(text), "left %u file%s, %s in %s (--keep)", l->ours,
		             l->ours == 1 ? "" : "s", ours, dir);
	else
		n = snprintf(text, sizeof(text),
		             "removed %u file%s, %s from %s (--keep leaves them)", l->removed,
		             l->removed == 1 ? "" : "s", ours, dir);
	if (l->theirs && n > 0 && (size_t)n < sizeof(text))
		snprintf(text + n, sizeof(text) - (size_t)n,
		         "; %u file%s, %s that %s there before the run %s left as %s", l->theirs,
		         l->theirs == 1 ? "" : "s", theirs, l->theirs == 1 ? "was" : "were",
		         l->theirs == 1 ? "is" : "are", l->theirs == 1 ? "it was" : "they were");
	fputc('\n', f);
	fmt_wrapped(f, "", 2, text);
}

void cli_say_leftovers(FILE *f, const struct wl_leftovers *s, bool keep)
{
	char bytes[32], text[LLMIO_PATH_MAX + 256];

	for (size_t i = 0; i < s->ndirs; i++)
		cli_say_leftover(f, &s->dirs[i], keep);
	if (!s->files_ours)
		return;
	fmt_bytes(bytes, sizeof(bytes), (double)s->files_bytes);
	/* the first file's whole path says where; the rest are named by the job file */
	if (keep)
		snprintf(text, sizeof(text),
		         "left %u file%s, %s named by filename= (%s%s) (--keep)", s->files_ours,
		         s->files_ours == 1 ? "" : "s", bytes, s->files[0],
		         s->nfiles > 1 ? ", ..." : "");
	else
		snprintf(text, sizeof(text),
		         "removed %u file%s, %s named by filename= (%s%s) (--keep leaves them)",
		         s->files_removed, s->files_removed == 1 ? "" : "s", bytes, s->files[0],
		         s->nfiles > 1 ? ", ..." : "");
	fputc('\n', f);
	fmt_wrapped(f, "", 2, text);
}
