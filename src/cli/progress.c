/* SPDX-License-Identifier: MIT */
/* The progress line (progress.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/progress.h"
#include "base/fmt.h"

/* at most four redraws a second: a terminal over ssh keeps up, and the line stays readable */
#define REDRAW_NS 250000000ull

static enum progress_mode mode = PROGRESS_AUTO;
/*
 * One lock for the line: a recipe draws from more than one thread (pretrain's readers beside
 * its checkpoints), and a draw that raced an erase would leave a fragment for the next output
 * line to land on.  Held while the line is drawn or erased, and by progress_lock()'s callers
 * around the state their lines are drawn from (recursive: they draw while holding it).
 */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static bool shown;
static unsigned long long last_ns;
/* The file layout being drawn (progress_layout): where it started, to measure its rate. */
static struct {
	unsigned long long t0;
	uint64_t done0, last;
	bool active;
} layout;

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
	pthread_mutex_lock(&lock);
	now = mono_ns();
	if (!force && shown && now - last_ns < REDRAW_NS) {
		pthread_mutex_unlock(&lock);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap); /* cut at FMT_COLUMNS - 1: never wraps */
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	shown = true;
	last_ns = now;
	pthread_mutex_unlock(&lock);
}

void progress_clear(void)
{
	pthread_mutex_lock(&lock);
	layout.active = false; /* the next layout measures its own rate */
	if (shown) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
		shown = false;
	}
	pthread_mutex_unlock(&lock);
}

void progress_lock(void)
{
	pthread_mutex_lock(&lock);
}

void progress_unlock(void)
{
	pthread_mutex_unlock(&lock);
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

void progress_layout(const char *prefix, uint64_t done, uint64_t total)
{
	char d[32], tot[32], rate[40] = "", eta[48] = "";
	unsigned long long now;
	bool first;
	double s;

	if (!progress_enabled())
		return;
	pthread_mutex_lock(&lock);
	now = mono_ns();
	first = !layout.active || done < layout.last;
	if (first) { /* a new step: drawn at once, like any */
		layout.t0 = now;
		layout.done0 = done;
		layout.active = true;
	}
	layout.last = done;
	s = (double)(now - layout.t0) / 1e9;
	fmt_bytes(d, sizeof(d), (double)done);
	/* from the second draw on (draws are 250 ms apart at least): the first has no rate yet */
	if (s > 0 && done > layout.done0) {
		double bps = (double)(done - layout.done0) / s;
		char r[32];

		fmt_rate(r, sizeof(r), bps);
		snprintf(rate, sizeof(rate), ", %s", r);
		if (total > done)
			progress_eta(eta, sizeof(eta), (double)(total - done) / bps);
	}
	if (total)
		fmt_bytes(tot, sizeof(tot), (double)total);
	progress_draw(first, "%s%s %s%s%s%s%s", prefix ? prefix : "",
	              prefix ? ": laying out" : "[laying out files]", d, total ? " of " : " done",
	              total ? tot : "", rate, eta);
	pthread_mutex_unlock(&lock);
}

void progress_layout_cb(void *arg, uint64_t done, uint64_t total)
{
	progress_layout(arg, done, total);
}
