/* SPDX-License-Identifier: MIT */
/*
 * exec: no I/O; the job runs a program beside the other jobs for its runtime (fio's exec
 * engine, engines/exec.c): a monitor (turbostat, iostat) or a load, started when the job
 * starts and stopped when it ends.
 *
 * As fio: the first I/O forks and execs `program arguments` (no shell: the text is split at
 * spaces, after %r becomes the runtime in whole seconds and %n the job's name), with stdout and
 * stderr in NAME.stdout and NAME.stderr of the working directory (std_redirect=1, the default);
 * each later I/O waits 50 ms.  When the job ends the program gets SIGTERM, grace_time seconds
 * to go, then SIGKILL.  Where llmio differs it is safer, not otherwise: it waits for the
 * program (no zombie; a program that ends at SIGTERM ends the wait), and it never writes
 * through a symlink or into a FIFO or device named NAME.stdout.
 *
 * A program that cannot be run (missing, not executable) fails in the forked child, as in fio:
 * the job still runs its runtime and exits 0, and the child writes why, naming the program, to
 * its stderr (NAME.stderr with std_redirect) before it exits 127.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "base/error.h"

struct exec_opts {
	char program[256];
	char arguments[512];
	int grace_time;
	int std_redirect;
};

#define POLL_NS   50000000ull /* each I/O after the first: fio's 50 ms think time */
#define SLICE_NS  10000000ull /* how often a wait looks at the stop flag or the program */
#define MSG_BYTES 384

static const struct llmio_optdesc exec_options[] = {
        {
                .name = "program",
                .type = OPTD_STRING,
                OPTD_FIELD(struct exec_opts, program),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "",
                .help = "the program to run (required; looked up in PATH, run without a shell)",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "arguments",
                .type = OPTD_STRING,
                OPTD_FIELD(struct exec_opts, arguments),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "",
                .help = "its arguments, split at spaces; %r is the runtime in seconds, %n the "
                        "job's name",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "grace_time",
                .type = OPTD_INT,
                OPTD_FIELD(struct exec_opts, grace_time),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "1",
                .min = 0,
                .max = 3600,
                .help = "seconds between the SIGTERM at the job's end and the SIGKILL",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "std_redirect",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct exec_opts, std_redirect),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "1",
                .help = "the program's stdout and stderr to NAME.stdout and NAME.stderr in the "
                        "working directory (0: llmio's own)",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {.name = NULL},
};

struct exec_data {
	int grace_time;
	const atomic_int *stop;
	char **argv; /* argv[0 .. n), NULL-terminated, in one block with its strings */
	int outfd, errfd;
	pid_t pid;               /* 0: not started; -1: reaped */
	char failmsg[MSG_BYTES]; /* what the child writes when exec fails, but the reason */
};

static int exec_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

/* text with every pat replaced by with, malloc'd (fio's str_replace), or NULL */
static char *replace(const char *text, const char *pat, const char *with)
{
	const size_t lp = strlen(pat), lw = strlen(with);
	size_t n = 0, len = strlen(text);
	char *out, *o;

	for (const char *p = strstr(text, pat); p; p = strstr(p + lp, pat))
		n++;
	out = malloc(len + n * lw + 1); /* lw >= lp or not, this bounds it from above */
	if (!out)
		return NULL;
	o = out;
	for (const char *p = text, *q; *p; p = q + lp) {
		q = strstr(p, pat);
		if (!q) {
			memcpy(o, p, strlen(p));
			o += strlen(p);
			break;
		}
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, with, lw);
		o += lw;
	}
	*o = '\0';
	return out;
}

/*
 * "program arguments" after the substitutions, split at spaces as fio does (runs of spaces are
 * one; nothing else separates) into one block: the pointers, then the words.
 */
static char **make_argv(const struct exec_opts *o, const char *name, uint64_t runtime_ns)
{
	char secs[24], *r, *full, *line = NULL, **argv = NULL;
	size_t n = 0, len;

	snprintf(secs, sizeof(secs), "%llu", (unsigned long long)(runtime_ns / 1000000000ull));
	r = replace(o->arguments, "%r", secs);
	full = r ? replace(r, "%n", name) : NULL;
	free(r);
	if (!full)
		return NULL;
	len = strlen(o->program) + 1 + strlen(full) + 1;
	line = malloc(len);
	if (line) {
		snprintf(line, len, "%s %s", o->program, full);
		for (char *p = line; *(p += strspn(p, " ")); p += strcspn(p, " "))
			n++;
		argv = malloc((n + 1) * sizeof(*argv) + len);
	}
	if (argv) {
		char *w = (char *)(argv + n + 1);
		size_t k = 0;

		memcpy(w, line, len);
		for (char *p = w; *(p += strspn(p, " "));) {
			argv[k++] = p;
			p += strcspn(p, " ");
			if (*p)
				*p++ = '\0';
		}
		argv[k] = NULL;
	}
	free(line);
	free(full);
	return argv;
}

/*
 * NAME.stdout or NAME.stderr, made or emptied as fio does, but only as a regular file of its
 * own: never through a symlink, never a FIFO or a device.  The fd, or -errno with e set.
 */
static int open_out(const char *name, const char *what, struct llmio_error *e)
{
	char path[320];
	struct stat st;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s.%s", name, what) >= sizeof(path))
		return llmio_err(e, -ENAMETOOLONG, "engine exec: %s.%s: the name is too long", name,
		                 what);
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		return llmio_err(e, errno == ELOOP ? -EINVAL : -errno,
		                 "engine exec: cannot make %s for the program's %s: %s%s", path,
		                 what, strerror(errno),
		                 errno == ELOOP ? " (a symlink: llmio writes no file through one)"
		                                : "; or give std_redirect=0");
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return llmio_err(
		        e, -EINVAL,
		        "engine exec: %s is not a regular file: llmio writes the program's "
		        "%s only into one of its own (rename it, or give std_redirect=0)",
		        path, what);
	}
	if (ftruncate(fd, 0)) {
		int err = errno;

		close(fd);
		return llmio_err(e, -err, "engine exec: cannot empty %s: %s", path, strerror(err));
	}
	return fd;
}

static void exec_cleanup(struct engine_ctx *ctx);

static int exec_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	const struct exec_opts *o = s->opts;
	const char *name = s->job_name && s->job_name[0] ? s->job_name : "exec";
	struct exec_data *d;
	int ret;

	if (!o || !o->program[0])
		return llmio_err(
		        e, -EINVAL,
		        "engine exec needs program=PATH, the program to run beside the job");
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->outfd = d->errfd = -1;
	d->grace_time = o->grace_time;
	d->stop = s->stop;
	ctx->priv = d;
	d->argv = make_argv(o, name, s->runtime_ns);
	if (!d->argv) {
		exec_cleanup(ctx);
		return -ENOMEM;
	}
	snprintf(d->failmsg, sizeof(d->failmsg), "llmio: exec: [%s] cannot run %s: ", name,
	         d->argv[0]);
	if (o->std_redirect) {
		ret = d->outfd = open_out(name, "stdout", e);
		if (ret >= 0)
			ret = d->errfd = open_out(name, "stderr", e);
		if (ret < 0) {
			exec_cleanup(ctx);
			return ret;
		}
	}
	snprintf(ctx->notes, sizeof(ctx->notes), "exec: %s %s", o->program, o->arguments);
	if (o->std_redirect)
		engine_appendf(ctx->notes, sizeof(ctx->notes),
		               " (its output in %s.stdout, %s.stderr)", name, name);
	return 0;
}

/* The child, between fork and exec: only async-signal-safe calls. */
static void child(const struct exec_data *d)
{
	const char *why;
	sigset_t none;
	int err;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL); /* the program gets its signals (SIGTERM) */
	signal(SIGPIPE, SIG_DFL);
	if (d->outfd >= 0 && (dup2(d->outfd, 1) < 0 || dup2(d->errfd, 2) < 0))
		_exit(127);
	execvp(d->argv[0], d->argv);
	err = errno;
	why = strerrordesc_np(err); /* async-signal-safe, unlike strerror() */
	if (write(2, d->failmsg, strlen(d->failmsg)) < 0 || write(2, why, strlen(why)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(127);
	_exit(127);
}

/* Sleep ns, in slices that watch the job's stop flag. */
static void pause_ns(const struct exec_data *d, uint64_t ns)
{
	while (ns && !(d->stop && atomic_load_explicit(d->stop, memory_order_relaxed))) {
		const uint64_t t = ns < SLICE_NS ? ns : SLICE_NS;
		struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)t};

		nanosleep(&ts, NULL);
		ns -= t;
	}
}

static int exec_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct exec_data *d = ctx->priv;

	if (!d->pid) {
		pid_t pid = fork();

		if (pid < 0) {
			const int err = errno;

			snprintf(ctx->ioerr, sizeof(ctx->ioerr),
			         "engine exec: cannot fork for %s: %s", d->argv[0], strerror(err));
			io->res = -err;
			return ENGINE_Q_COMPLETED;
		}
		if (!pid)
			child(d);
		d->pid = pid;
	} else {
		pause_ns(d, POLL_NS);
	}
	io->res = io->len; /* counted as an I/O of no bytes (ENGINE_CAP_TIMED) */
	return ENGINE_Q_COMPLETED;
}

/* The program's end: SIGTERM, grace_time seconds to go, SIGKILL; reaped in any case. */
static void stop_program(struct exec_data *d)
{
	uint64_t left = (uint64_t)d->grace_time * 1000000000ull;
	int status;

	if (d->pid <= 0)
		return;
	if (waitpid(d->pid, &status, WNOHANG) == 0) {
		kill(d->pid, SIGTERM);
		while (left && waitpid(d->pid, &status, WNOHANG) == 0) {
			struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)SLICE_NS};

			nanosleep(&ts, NULL);
			left = left > SLICE_NS ? left - SLICE_NS : 0;
		}
		if (!left) {
			kill(d->pid, SIGKILL);
			while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
				;
		}
	}
	d->pid = -1;
}

static void exec_cleanup(struct engine_ctx *ctx)
{
	struct exec_data *d = ctx->priv;

	if (!d)
		return;
	stop_program(d);
	if (d->outfd >= 0)
		close(d->outfd);
	if (d->errfd >= 0)
		close(d->errfd);
	free(d->argv);
	free(d);
	ctx->priv = NULL;
}

const struct engine_ops engine_exec = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "exec",
        .summary = "no I/O: runs a program (program=, arguments=) for the job's runtime",
        .caps = ENGINE_CAP_NO_IO | ENGINE_CAP_TIMED,
        .opts = exec_options,
        .opts_size = sizeof(struct exec_opts),
        .probe = exec_probe,
        .init = exec_init,
        .queue = exec_queue,
        .cleanup = exec_cleanup,
};
