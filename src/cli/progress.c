/* SPDX-License-Identifier: MIT */
/* The progress line (progress.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/progress.h"
#include "report/fmt.h"

/* at most four redraws a second: a terminal over ssh keeps up, and the line stays readable */
#define REDRAW_NS 250000000ull

static enum progress_mode mode = PROGRESS_AUTO;
static bool shown;
static unsigned long long last_ns;

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

void progress_set_mode(enum progress_mode m)
{
	mode = m;
}

bool progress_option(const char *arg)
{
	if (!strcmp(arg, "--progress"))
		mode = PROGRESS_ON;
	else if (!strcmp(arg, "--no-progress"))
		mode = PROGRESS_OFF;
	else
		return false;
	return true;
}

bool progress_getopt(int c)
{
	if (c != PROGRESS_OPT_ON && c != PROGRESS_OPT_OFF)
		return false;
	mode = c == PROGRESS_OPT_ON ? PROGRESS_ON : PROGRESS_OFF;
	return true;
}

bool progress_enabled(void)
{
	return mode == PROGRESS_ON || (mode == PROGRESS_AUTO && isatty(STDERR_FILENO));
}

void progress_draw(bool force, const char *fmt, ...)
{
	char line[FMT_COLUMNS];
	unsigned long long now;
	va_list ap;

	if (!progress_enabled())
		return;
	now = mono_ns();
	if (!force && shown && now - last_ns < REDRAW_NS)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap); /* cut at FMT_COLUMNS - 1: never wraps */
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	shown = true;
	last_ns = now;
}

void progress_clear(void)
{
	if (!shown)
		return;
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
	shown = false;
}

void progress_eta(char *buf, unsigned long len, double eta_s)
{
	char t[32];

	if (!(eta_s > 0)) { /* 0: the job could not tell */
		snprintf(buf, len, "%s", "");
		return;
	}
	fmt_seconds(t, sizeof(t), eta_s);
	snprintf(buf, len, ", ETA %s", t);
}
