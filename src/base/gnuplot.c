/* SPDX-License-Identifier: MIT */
/* Running gnuplot on a script: base/gnuplot.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llmio/job.h" /* LLMIO_PATH_MAX */
#include "base/gnuplot.h"

/* gnuplot from $LLMIO_GNUPLOT, else the first `gnuplot` on PATH. */
static int find_gnuplot(char *buf, size_t len)
{
	const char *env = getenv("LLMIO_GNUPLOT"), *path = getenv("PATH");

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, X_OK) ? -ENOENT : 0;
	}
	for (path = path ? path : "/usr/bin:/bin"; *path;) {
		size_t n = strcspn(path, ":");

		snprintf(buf, len, "%.*s/gnuplot", (int)n, n ? path : ".");
		if (!access(buf, X_OK))
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

/* The first line of gnuplot's log that says what went wrong. */
static void log_error(const char *dir, char *buf, size_t len)
{
	char path[LLMIO_PATH_MAX + 16], line[512], first[512] = "";
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/" GNUPLOT_LOG, dir) >= (int)sizeof(path) ||
	    !(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!first[0] && line[strspn(line, " ^")])
			snprintf(first, sizeof(first), "%s", line);
		if (strstr(line, "rror")) {
			snprintf(first, sizeof(first), "%s", line);
			break;
		}
	}
	fclose(f);
	snprintf(buf, len, "%s", first);
}

static int run_gnuplot(const char *dir, const char *script, const char *bin, int *status)
{
	char log[LLMIO_PATH_MAX + 16];
	pid_t pid;
	int fd;

	if (snprintf(log, sizeof(log), "%s/" GNUPLOT_LOG, dir) >= (int)sizeof(log))
		return -ENAMETOOLONG;
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fd);
		return -errno;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		if (nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(dir))
			_exit(127);
		execl(bin, "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	close(fd);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int gnuplot_run(const char *dir, const char *script, struct llmio_error *e)
{
	char bin[LLMIO_PATH_MAX], why[512] = "";
	int status, ret;

	if (find_gnuplot(bin, sizeof(bin)))
		return llmio_err(e, -ENOENT,
		                 "gnuplot is not installed (Debian: apt-get install "
		                 "gnuplot-nox)");
	ret = run_gnuplot(dir, script, bin, &status);
	if (ret)
		return llmio_err(e, -EIO, "cannot run %s: %s", bin, strerror(-ret));
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		log_error(dir, why, sizeof(why));
		return llmio_err(e, -EIO, "gnuplot failed (%s %d)%s%s",
		                 WIFEXITED(status) ? "exit status" : "signal",
		                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		                 why[0] ? ": " : "", why);
	}
	return 0;
}
