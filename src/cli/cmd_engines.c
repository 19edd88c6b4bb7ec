/* SPDX-License-Identifier: MIT */
/* llmio engines: every datapath, whether it can run on this machine (and why not), options. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/fmt.h"
#include "engine/engine.h"

/* A probe that takes longer than this is reported as hanging (a GPU driver can). */
#define PROBE_TIMEOUT_S 30

/*
 * Probe one engine in a child process: a foreign library (cuFile) can crash or hang while it
 * opens (kvikio issue 97), and that must cost one engine's line, not the whole listing.
 * Returns the probe's result, with why filled; a crash or a hang is an unavailable engine
 * whose why says so.
 */
static int probe_isolated(const char *name, char *why, size_t len)
{
	int pfd[2], status = 0, ret = -EIO;
	ssize_t n, got = 0;
	pid_t pid;

	fflush(NULL); /* what is printed so far is out before anything can crash */
	if (pipe(pfd))
		return llmio_engine_probe(name, why, len);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return llmio_engine_probe(name, why, len);
	}
	if (pid == 0) {
		close(pfd[0]);
		alarm(PROBE_TIMEOUT_S);
		ret = llmio_engine_probe(name, why, len);
		if (write(pfd[1], &ret, sizeof(ret)) != sizeof(ret) ||
		    write(pfd[1], why, strlen(why) + 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	why[0] = '\0';
	n = read(pfd[0], &ret, sizeof(ret));
	if (n == (ssize_t)sizeof(ret))
		while (got < (ssize_t)len - 1 &&
		       (n = read(pfd[0], why + got, len - 1 - (size_t)got)) > 0)
			got += n;
	else
		ret = -EIO;
	why[got] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		snprintf(why, len, "probing it did not finish in %d s (the driver hangs?)",
		         PROBE_TIMEOUT_S);
	else if (WIFSIGNALED(status))
		snprintf(why, len, "probing it crashed (signal %d: %s); the library is broken here",
		         WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (n < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		snprintf(why, len, "probing it failed in its child process");
	return ret;
}

int cmd_engines(int argc, char **argv)
{
	struct llmio_engine_info e;
	struct llmio_engine_option_info o;
	bool verbose = true;
	int unavailable = 0;

	static const struct option longopts[] = {
	        {"brief", no_argument, NULL, 'b'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct cli_getopt g = CLI_GETOPT_QUIET("engines", argc, argv, "-:h", longopts);
	int c;

	while ((c = cli_getopt_next(&g)) != -1) {
		switch (c) {
		case 'h':
			printf("usage: llmio engines [--brief]\n\n"
			       "Lists every engine, whether it can run on this machine and, if "
			       "not,\n"
			       "exactly why, and each engine's options with their defaults.\n"
			       "--brief leaves the options out.  Each engine is probed in a child\n"
			       "process, limited to 30 s, so a library that crashes or hangs "
			       "while\n"
			       "it loads (cuFile can) costs its own line, which says so.\n"
			       "Exit status 0.\n");
			return 0;
		case 'b':
			verbose = false;
			break;
		default: /* an unknown option, or an operand (1): engines takes none */
			fprintf(stderr, "llmio engines: unknown option '%s'\n",
			        cli_getopt_word(&g, c));
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; llmio_engine_info(i, &e) == 0; i++) {
		char why[512];
		int ret = probe_isolated(e.name, why, sizeof(why));

		char prefix[96], text[1024];
		unsigned caps;

		snprintf(prefix, sizeof(prefix), "%-9s %-13s ", e.name,
		         ret ? "unavailable" : "available");
		fmt_wrapped(stdout, prefix, 10, e.summary); /* 100 columns, wrapped */
		caps = engine_find(e.name)->caps;
		printf("          %s, %s\n",
		       e.async ? "asynchronous (iodepth = I/Os in flight)"
		               : "synchronous (one I/O at a time per thread)",
		       (caps & ENGINE_CAP_OWN_TARGET)
		               ? "its own targets (no local file or page cache)"
		       : (caps & ENGINE_CAP_FILE_OPS) ? "one call on the file per I/O, no data"
		       : (caps & ENGINE_CAP_SOCKET)   ? "a socket, no file"
		       : (caps & ENGINE_CAP_NO_IO) && !e.supports_direct ? "no file, no I/O"
		       : e.supports_direct                               ? "O_DIRECT supported"
		                                                         : "page cache only");
		if (ret) {
			fmt_wrapped(stdout, "          why: ", 15,
			            why[0] ? why : "(no reason given)");
			unavailable++;
		} else if (why[0]) { /* what a foreign-library engine loaded */
			fmt_wrapped(stdout, "          uses: ", 16, why);
		}
		for (size_t k = 0; verbose && llmio_engine_option(i, k, &o) == 0; k++) {
			char name[64];

			snprintf(name, sizeof(name), "--%s=%s", o.name, o.def);
			snprintf(prefix, sizeof(prefix), "          %-24s ", name);
			snprintf(text, sizeof(text), "%s%s%s%s", o.help, o.alias ? " (fio: " : "",
			         o.alias ? o.alias : "", o.alias ? ")" : "");
			fmt_wrapped(stdout, prefix, 35, text);
		}
		fflush(stdout);
	}
	(void)unavailable;
	return 0;
}
