/* SPDX-License-Identifier: MIT */
/*
 * llmio trace: run a command under the preload tracer and merge what it did into one trace;
 * `llmio trace report`, `import-strace` and `dump` work on trace files.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/fmt.h"
#include "trace/trace_report.h"
#include "trace/trace_write.h"

#define TRACE_LIB_NAME "libllmio_trace.so"

static void help(FILE *f)
{
	fprintf(f,
	        "usage: llmio trace [-o FILE] [--include PATH]... [--exclude PATH]... [--all]\n"
	        "                   [--quiet] -- COMMAND [ARGS...]\n"
	        "       llmio trace report FILE [--json] [-o DIR] [--top N]\n"
	        "       llmio trace import-strace LOG -o FILE\n"
	        "       llmio trace dump FILE\n\n"
	        "Runs COMMAND with the tracer preloaded (%s, found next to the llmio\n"
	        "executable, in LIBDIR/llmio of an installed tree, or at $LLMIO_TRACE_LIB)\n"
	        "and records its file I/O at the libc boundary, in every process it forks or\n"
	        "execs: opens, closes, reads, writes, seeks, syncs,\n"
	        "mmaps, renames, unlinks and stdio calls, each with time, duration, pid, tid, "
	        "path,\n"
	        "offset, bytes and result.  Afterwards the per-process records are merged into\n"
	        "FILE, a summary is printed on stderr, and llmio exits with COMMAND's status\n"
	        "(128 + signal when it was killed).\n\n"
	        "  -o, --output FILE   the trace (default llmio.trace)\n"
	        "  --include PATH      trace only files under PATH (repeatable)\n"
	        "  --exclude PATH      never trace files under PATH (repeatable)\n"
	        "  --all               also trace what is left out by default: /proc, /sys, /dev,\n"
	        "                      pipes and sockets, /usr/lib, /lib, /usr/share and\n"
	        "                      interpreter imports (*.py, *.pyc, *.so)\n"
	        "  -q, --quiet         no summary\n\n"
	        "Phases: programs mark them with llmio_trace_set_phase() (include/llmio/trace.h)\n"
	        "or python/llmio_phase.py; a process forked, exec'd or spawned starts in its\n"
	        "parent's current phase ($LLMIO_TRACE_PHASE carries it across exec, and names\n"
	        "the phase COMMAND starts in); without markers the report infers load / data /\n"
	        "checkpoint from the files.\n\n"
	        "report: text tables per phase, process and file, latency percentiles per call\n"
	        "  type, request sizes, sequential fraction, concentration of bytes over files,\n"
	        "  top files.  --json prints one JSON object instead; -o DIR also writes plots\n"
	        "  (Lorenz curve, request sizes) with gnuplot.\n"
	        "import-strace: converts `strace -f -y [-tt|-ttt] [-T]` output into a trace.\n"
	        "  Traces, raw files and logs whose sizes, offsets or times are out of range are\n"
	        "  refused with the record and the value (limits: docs/tracing.md).\n"
	        "dump: every record as a line of text.\n\n"
	        "exit status: COMMAND's; 2 usage error; 1 when the trace cannot be written;\n"
	        "127 when COMMAND cannot be run.  See docs/tracing.md.\n",
	        TRACE_LIB_NAME);
}

/* ---- helpers ---- */

/* path made absolute against the current directory (filters are compared to real paths) */
static int absolutize(const char *in, char *out, size_t len)
{
	char cwd[PATH_MAX], joined[PATH_MAX * 2], real[PATH_MAX];

	if (in[0] == '/') {
		if (snprintf(joined, sizeof(joined), "%s", in) >= (int)sizeof(joined))
			return -ENAMETOOLONG;
	} else {
		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		if (snprintf(joined, sizeof(joined), "%s/%s", cwd, in) >= (int)sizeof(joined))
			return -ENAMETOOLONG;
	}
	/* a prefix that exists is compared in its canonical form, as the tracer sees paths */
	if (realpath(joined, real))
		return snprintf(out, len, "%s", real) >= (int)len ? -ENAMETOOLONG : 0;
	return snprintf(out, len, "%s", joined) >= (int)len ? -ENAMETOOLONG : 0;
}

static int append_list(char *list, size_t len, const char *path)
{
	char abs[PATH_MAX];
	size_t used = strlen(list);

	if (strchr(path, ':')) {
		fprintf(stderr, "llmio trace: paths with ':' cannot be filtered ('%s')\n", path);
		return EXIT_USAGE;
	}
	if (absolutize(path, abs, sizeof(abs)) ||
	    snprintf(list + used, len - used, "%s%s", used ? ":" : "", abs) >= (int)(len - used)) {
		list[used] = '\0'; /* the list as it was */
		fprintf(stderr, "llmio trace: --include/--exclude list too long at '%s'\n", path);
		return EXIT_USAGE;
	}
	return 0;
}

static int find_lib(char *out, size_t len)
{
	const char *env = getenv("LLMIO_TRACE_LIB");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && env[0]) {
		snprintf(out, len, "%s", env);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return -errno;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		/* next to the executable in a build tree */
		if (snprintf(out, len, "%s/%s", exe, TRACE_LIB_NAME) >= (int)len)
			return -ENAMETOOLONG;
		if (access(out, R_OK) == 0)
			return 0;
		/* installed: PREFIX/bin/llmio and PREFIX/LIBDIR/llmio/ (CMakeLists.txt) */
		if (LLMIO_INSTALL_LIBDIR[0] == '/')
			n = snprintf(out, len, "%s/llmio/%s", LLMIO_INSTALL_LIBDIR, TRACE_LIB_NAME);
		else
			n = snprintf(out, len, "%s/../%s/llmio/%s", exe, LLMIO_INSTALL_LIBDIR,
			             TRACE_LIB_NAME);
		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
	}
	return access(out, R_OK) ? -errno : 0;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

static int write_builder(FILE *f, void *arg)
{
	return trace_builder_write(arg, f);
}

static pid_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* Run argv with the tracer in its environment; \return its status as a shell reports it. */
static int run_traced(char **argv, const char *lib, const char *dir, const char *inc,
                      const char *exc, bool all, int *exec_err)
{
	struct sigaction sa, old_int, old_quit, old_term, old_hup;
	int pfd[2], status, err = 0;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN; /* Ctrl-C reaches the command; llmio stays to merge */
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGQUIT, &sa, &old_quit);
	sa.sa_handler = forward_signal;
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	child_pid = fork();
	if (child_pid == 0) {
		const char *pre = getenv("LD_PRELOAD");
		char env[PATH_MAX * 2];

		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		snprintf(env, sizeof(env), "%s%s%s", lib, pre && pre[0] ? " " : "", pre ? pre : "");
		setenv("LD_PRELOAD", env, 1);
		setenv("LLMIO_TRACE_DIR", dir, 1);
		if (inc[0])
			setenv("LLMIO_TRACE_INCLUDE", inc, 1);
		else
			unsetenv("LLMIO_TRACE_INCLUDE");
		if (exc[0])
			setenv("LLMIO_TRACE_EXCLUDE", exc, 1);
		else
			unsetenv("LLMIO_TRACE_EXCLUDE");
		if (all)
			setenv("LLMIO_TRACE_ALL", "1", 1);
		else
			unsetenv("LLMIO_TRACE_ALL");
		execvp(argv[0], argv);
		err = errno;
		n = write(pfd[1], &err, sizeof(err));
		(void)n;
		_exit(127);
	}
	if (child_pid < 0) {
		err = errno;
		close(pfd[0]);
		close(pfd[1]);
		return -err;
	}
	close(pfd[1]);
	n = read(pfd[0], exec_err, sizeof(*exec_err));
	if (n != sizeof(*exec_err))
		*exec_err = 0;
	close(pfd[0]);
	while (waitpid(child_pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Merge dir into out and print the summary; \return 0 or EXIT_RUNTIME. */
static int merge_and_summarise(const char *dir, const char *out, int status, bool quiet)
{
	struct trace_builder b;
	struct trace_analysis *a = NULL;
	struct trace *t = NULL;
	struct llmio_error e = {0};
	int ret;

	if (trace_builder_init(&b)) {
		fprintf(stderr, "llmio trace: out of memory\n");
		return EXIT_RUNTIME;
	}
	b.exit_status = status;
	ret = trace_merge_dir(&b, dir, &e);
	if (ret) {
		fprintf(stderr, "llmio trace: %s\n", e.msg);
		goto out;
	}
	/* the trace is in memory: the raw files go first, so that their space is free for it */
	remove_dir(dir);
	if (b.nstopped || b.nlost)
		fprintf(stderr,
		        "llmio trace: recording stopped early in %u process%s: %s for the trace "
		        "beside %s; the command ran on untraced from there, and the trace holds "
		        "what came before (%" PRIu64 " records lost)\n",
		        b.nstopped + b.nlost, b.nstopped + b.nlost == 1 ? "" : "es",
		        strerror(b.nstopped ? b.stop_errno : ENOSPC), out, b.dropped);
	ret = cli_write_file(out, write_builder, &b);
	if (ret) {
		fprintf(stderr, "llmio trace: cannot write %s: %s\n", out, strerror(-ret));
		goto out;
	}
	if (quiet)
		goto out;
	if (trace_open(out, 0, &t, &e) || !(a = trace_analyze(t))) {
		fprintf(stderr, "llmio trace: %s\n", t ? "out of memory" : e.msg);
		ret = -EIO;
		goto out;
	}
	fmt_wrapped(stderr, "llmio trace: wrote ", 2, out); /* a long path on a line of its own */
	trace_report_summary(a, stderr);
out:
	trace_analysis_destroy(a);
	trace_close(t);
	trace_builder_release(&b);
	return ret ? EXIT_RUNTIME : 0;
}

static int capture(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
	                                     {"include", required_argument, NULL, 'i'},
	                                     {"exclude", required_argument, NULL, 'x'},
	                                     {"all", no_argument, NULL, 'a'},
	                                     {"quiet", no_argument, NULL, 'q'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	char lib[PATH_MAX], dir[PATH_MAX + 16], inc[4096] = "", exc[4096] = "", outdir[PATH_MAX];
	const char *out = "llmio.trace";
	bool all = false, quiet = false;
	int c, ret, status, exec_err = 0;
	char *slash;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'i':
			if ((ret = append_list(inc, sizeof(inc), optarg)))
				return ret;
			break;
		case 'x':
			if ((ret = append_list(exc, sizeof(exc), optarg)))
				return ret;
			break;
		case 'a':
			all = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			fprintf(stderr, "llmio trace: unknown option (llmio trace --help)\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr,
		        "llmio trace: no command to trace (llmio trace -- COMMAND ARGS...)\n");
		return EXIT_USAGE;
	}
	if ((ret = find_lib(lib, sizeof(lib)))) {
		fprintf(stderr,
		        "llmio trace: the tracer library %s is missing (%s): build it with cmake "
		        "--build, or point LLMIO_TRACE_LIB at it\n",
		        lib, strerror(-ret));
		return EXIT_RUNTIME;
	}
	if ((ret = cli_check_writable(out))) {
		fprintf(stderr, "llmio trace: cannot write %s: %s (choose another -o)\n", out,
		        strerror(-ret));
		return EXIT_USAGE;
	}
	/* the per-process files live beside the output until they are merged */
	snprintf(outdir, sizeof(outdir), "%s", out);
	slash = strrchr(outdir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(outdir, sizeof(outdir), ".");
	if (absolutize(outdir, outdir, sizeof(outdir)) ||
	    snprintf(dir, sizeof(dir), "%s/.llmio-trace.XXXXXX", outdir) >= (int)sizeof(dir) ||
	    !mkdtemp(dir)) {
		fprintf(stderr, "llmio trace: cannot create a trace directory in %s: %s\n", outdir,
		        strerror(errno));
		return EXIT_RUNTIME;
	}
	status = run_traced(argv + optind, lib, dir, inc, exc, all, &exec_err);
	if (status < 0 || exec_err) {
		fprintf(stderr, "llmio trace: cannot run '%s': %s\n", argv[optind],
		        strerror(exec_err ? exec_err : -status));
		remove_dir(dir);
		return exec_err == ENOENT ? 127 : exec_err ? 126 : EXIT_RUNTIME;
	}
	ret = merge_and_summarise(dir, out, status, quiet);
	remove_dir(dir);
	return ret ? ret : status;
}

/* ---- report ---- */

static int open_analyse(const char *cmd, const char *path, struct trace **t,
                        struct trace_analysis **a)
{
	struct llmio_error e = {0};
	int ret = trace_open(path, 0, t, &e);

	if (ret) {
		fprintf(stderr, "llmio trace %s: %s\n", cmd, e.msg);
		return ret == -EINVAL || ret == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
	}
	*a = trace_analyze(*t);
	if (!*a || trace_analysis_fit(*a)) {
		trace_analysis_destroy(*a);
		fprintf(stderr, "llmio trace %s: out of memory\n", cmd);
		trace_close(*t);
		return EXIT_RUNTIME;
	}
	return 0;
}

static int report(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
	                                     {"output", required_argument, NULL, 'o'},
	                                     {"top", required_argument, NULL, 't'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	const char *plots = NULL, *file = NULL;
	struct trace_analysis *a;
	struct trace *t;
	bool json = false, plotted;
	uint64_t top = 10;
	struct llmio_error e = {0};
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'o':
			plots = optarg;
			break;
		case 't':
			if (llmio_parse_uint(optarg, 1, 100000, &top)) {
				fprintf(stderr,
				        "llmio trace report: --top needs a number, not '%s'\n",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			fprintf(stderr,
			        "llmio trace report: unknown option (llmio trace --help)\n");
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr,
		        "llmio trace report: give one trace file (llmio trace report FILE)\n");
		return EXIT_USAGE;
	}
	file = argv[optind];
	if ((ret = open_analyse("report", file, &t, &a)))
		return ret;
	if (plots && (ret = trace_report_plots(a, plots, &plotted, &e))) {
		fprintf(stderr, "llmio trace report: %s\n", e.msg);
		ret = EXIT_RUNTIME;
		goto out;
	}
	ret = json ? trace_report_json(a, stdout) : trace_report_text(a, stdout, (unsigned)top);
	if (ret) {
		fprintf(stderr, "llmio trace report: %s\n", strerror(-ret));
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (plots && !json)
		printf("\nthe report with its charts: %s/report.html%s\n", plots,
		       plotted ? ""
		               : " (no charts: gnuplot is not installed; their .gp scripts are "
		                 "there)");
out:
	trace_analysis_destroy(a);
	trace_close(t);
	return ret;
}

/* ---- import-strace ---- */

static int import_strace(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	struct trace_builder b;
	const char *out = NULL;
	struct llmio_error e = {0};
	FILE *in;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		if (c == 'o') {
			out = optarg;
		} else if (c == 'h') {
			help(stdout);
			return 0;
		} else {
			fprintf(stderr, "llmio trace import-strace: unknown option\n");
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !out) {
		fprintf(stderr, "llmio trace import-strace: usage: llmio trace import-strace LOG "
		                "-o FILE\n");
		return EXIT_USAGE;
	}
	in = fopen(argv[optind], "r");
	if (!in) {
		fprintf(stderr, "llmio trace import-strace: cannot open %s: %s\n", argv[optind],
		        strerror(errno));
		return EXIT_USAGE;
	}
	if (trace_builder_init(&b)) {
		fclose(in);
		fprintf(stderr, "llmio trace import-strace: out of memory\n");
		return EXIT_RUNTIME;
	}
	ret = trace_import_strace(&b, in, &e);
	fclose(in);
	if (ret) {
		fprintf(stderr, "llmio trace import-strace: %s: %s\n", argv[optind], e.msg);
		ret = ret == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	ret = cli_write_file(out, write_builder, &b);
	if (ret) {
		fprintf(stderr, "llmio trace import-strace: cannot write %s: %s\n", out,
		        strerror(-ret));
		ret = EXIT_RUNTIME;
		goto out;
	}
	{
		char text[LLMIO_PATH_MAX + 96];

		snprintf(text, sizeof(text), "imported %zu calls of %zu processes into %s", b.nrec,
		         b.nproc, out);
		fmt_wrapped(stdout, "", 2, text); /* 100 columns: a long path is wrapped */
	}
out:
	trace_builder_release(&b);
	return ret;
}

/* ---- dump ---- */

static int dump(int argc, char **argv)
{
	struct trace *t;
	struct llmio_error e = {0};
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		help(stdout);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "llmio trace dump: give one trace file (llmio trace dump FILE)\n");
		return EXIT_USAGE;
	}
	ret = trace_open(argv[1], TRACE_OPEN_RAW_PHASES, &t, &e);
	if (ret) {
		fprintf(stderr, "llmio trace dump: %s\n", e.msg);
		return ret == -EINVAL || ret == -ENOENT ? EXIT_USAGE : EXIT_RUNTIME;
	}
	trace_dump(stdout, t);
	trace_close(t);
	return 0;
}

static const struct cmd subcommands[] = {
        {"report", report, "text or JSON tables and plots of a trace"},
        {"import-strace", import_strace, "convert an strace log into a trace"},
        {"dump", dump, "every record of a trace as a line of text"},
};

int cmd_trace(int argc, char **argv)
{
	int code;

	if (cli_dispatch(subcommands, sizeof(subcommands) / sizeof(subcommands[0]), argc, argv,
	                 &code))
		return code;
	/* anything else is the traced command line: `llmio trace [OPTIONS] -- COMMAND` */
	return capture(argc, argv);
}
