/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli.h"

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

static bool progress_shown;

void cli_progress(void *arg, double elapsed_s, double eta_s, double iops, double bw_bytes)
{
	char c[32];

	(void)arg;
	if (!isatty(STDERR_FILENO))
		return;
	fmt_count(c, sizeof(c), iops);
	fprintf(stderr, "\r\033[K[%5.1fs, ETA %5.1fs] %s IOPS, %.3f GB/s", elapsed_s, eta_s, c,
	        bw_bytes / 1e9);
	progress_shown = true;
}

void cli_progress_clear(void)
{
	if (progress_shown)
		fprintf(stderr, "\r\033[K");
	progress_shown = false;
}

int cli_exit_code(int ret)
{
	return ret == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
}

int cli_check_writable(const char *path)
{
	char dir[LLMIO_PATH_MAX];
	const char *slash;

	if (!strcmp(path, "-"))
		return 0;
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path) ? (int)(slash - path) : 1,
		         path);
	return access(dir, W_OK) ? -errno : 0;
}

int cli_write_file(const char *path, int (*fn)(FILE *f, void *arg), void *arg)
{
	char tmp[LLMIO_PATH_MAX + 32];
	FILE *f;
	int ret;

	if (!strcmp(path, "-"))
		return fn(stdout, arg);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	ret = fn(f, arg);
	if (fflush(f) || ferror(f))
		ret = ret ? ret : -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

static const char *job_opt_type(const char *key)
{
	struct llmio_option_info info;

	for (size_t i = 0; llmio_job_option(i, &info) == 0; i++)
		if (!strcmp(info.name, key) || (info.alias && !strcmp(info.alias, key)))
			return info.type;
	return NULL;
}

static const char *engine_opt_type(const char *engine, const char *key)
{
	struct llmio_engine_info e;
	struct llmio_engine_option_info o;

	for (size_t i = 0; llmio_engine_info(i, &e) == 0; i++) {
		if (strcmp(e.name, engine))
			continue;
		for (size_t k = 0; llmio_engine_option(i, k, &o) == 0; k++)
			if (!strcmp(o.name, key) || (o.alias && !strcmp(o.alias, key)))
				return o.type;
	}
	return NULL;
}

static bool is_bool_word(const char *v)
{
	static const char *const words[] = {"0", "1", "true", "false", "yes", "no", "on", "off"};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcasecmp(v, words[i]))
			return true;
	return false;
}

const char *cli_engine_owning(const char *key)
{
	struct llmio_engine_info e;

	for (size_t i = 0; llmio_engine_info(i, &e) == 0; i++)
		if (engine_opt_type(e.name, key))
			return e.name;
	return NULL;
}

int cli_parse_job_arg(struct llmio_job_opts *opts, int argc, char **argv, int *i, bool *handled)
{
	char key[128], err[512];
	const char *arg = argv[*i], *eq, *value, *type;
	size_t klen, used;
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
	type = job_opt_type(key);
	if (!type)
		type = engine_opt_type(opts->engine, key);
	if (!type)
		return 0; /* not ours: the caller's own flag, or unknown */
	*handled = true;
	if (eq) {
		value = eq + 1;
	} else if (!strcmp(type, "bool")) {
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
	ret = llmio_job_opts_set(opts, key, value, err, sizeof(err));
	if (ret == -ENOENT) {
		/* an engine option: collected as text, validated by the engine's own table */
		used = strlen(opts->engine_opts);
		if (used + strlen(key) + strlen(value) + 3 >= sizeof(opts->engine_opts)) {
			fprintf(stderr, "llmio: too many engine options\n");
			return EXIT_USAGE;
		}
		snprintf(opts->engine_opts + used, sizeof(opts->engine_opts) - used, "%s%s=%s",
		         used ? "," : "", key, value);
		return 0;
	}
	if (ret) {
		fprintf(stderr, "llmio: %s\n", err);
		return EXIT_USAGE;
	}
	return 0;
}
