/* SPDX-License-Identifier: MIT */
/* fio's jobs as fio runs them: sweep/fio_jobs.h. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/error.h"
#include "engine/engine.h"
#include "job/options.h"
#include "sweep/fio_jobs.h"

void fio_files_free(struct fio_files *ff)
{
	free(ff->list);
	free(ff->names);
	*ff = (struct fio_files){0};
}

/* The next name of fio's ':' list at *p into out ("\:" is a colon); false when too long. */
static bool next_name(const char **p, char *out, size_t len)
{
	size_t used = 0;

	for (; **p && **p != ':'; (*p)++) {
		if (**p == '\\' && (*p)[1] == ':')
			(*p)++;
		if (used + 1 >= len)
			return false;
		out[used++] = **p;
	}
	out[used] = '\0';
	if (**p)
		(*p)++;
	return true;
}

/*
 * One name of fio's filename_format: $jobname, $jobnum (the clone, fio's name for a thread of
 * numjobs) and $filenum; anything else as written.  false when too long.
 */
static bool format_name(const char *fmt, const char *job, unsigned clone, unsigned filenum,
                        char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	while (*fmt) {
		char num[16] = "";
		const char *put = num;
		size_t n;

		if (!strncmp(fmt, "$jobname", 8)) {
			put = job;
			fmt += 8;
		} else if (!strncmp(fmt, "$jobnum", 7)) {
			snprintf(num, sizeof(num), "%u", clone);
			fmt += 7;
		} else if (!strncmp(fmt, "$filenum", 8)) {
			snprintf(num, sizeof(num), "%u", filenum);
			fmt += 8;
		} else {
			num[0] = *fmt++;
		}
		n = strlen(put);
		if (used + n >= len)
			return false;
		memcpy(out + used, put, n + 1);
		used += n;
	}
	return true;
}

/* How many names fio's list holds: its unescaped colons, plus one. */
static unsigned count_names(const char *list)
{
	unsigned n = 1;

	for (const char *p = list; *p; p++)
		if (*p == '\\' && p[1] == ':')
			p++;
		else if (*p == ':')
			n++;
	return n;
}

int fio_files_make(struct llmio_job_opts *o, struct fio_files *ff, struct llmio_error *e)
{
	const struct engine_ops *eng = engine_find(o->engine);
	const bool named = o->filename[0];
	const char *list = o->filename;
	char dir[LLMIO_PATH_MAX], name[LLMIO_PATH_MAX], fmt[sizeof(o->filename_format)];
	uint64_t per;
	unsigned n, per_clone, clones;

	*ff = (struct fio_files){0};
	snprintf(fmt, sizeof(fmt), "%s", o->filename_format);
	o->filename_format[0] = '\0'; /* used here, never by the library */
	/* what fio's names do not apply to: no files, an engine's own names, a file list */
	if (o->files || !eng || (eng->caps & (ENGINE_CAP_NO_IO | ENGINE_CAP_OWN_TARGET)) ||
	    strstr(o->filename, "://") || strstr(o->directory, "://"))
		return 0;
	/*
	 * directory alone: llmio's own work directory (docs/fio.md says why), unless a
	 * filename_format asks for fio's names in it; no name either: no target
	 */
	if (!named && !fmt[0] && (o->directory[0] || !o->name[0]))
		return 0;
	if (!fmt[0])
		snprintf(fmt, sizeof(fmt), "$jobname.$jobnum.$filenum"); /* fio's default */
	/*
	 * fio's clones (numjobs) each have files of their own when fio names them: nrfiles each,
	 * of size together.  llmio's threads then walk one clone's files each (a sequential
	 * thread's slice of the job's files), as fio's clones do.
	 */
	per_clone = named ? count_names(list) : o->nrfiles ? o->nrfiles : 1;
	clones = named ? 1 : o->numjobs ? o->numjobs : 1;
	n = per_clone * clones;
	snprintf(dir, sizeof(dir), "%s", o->directory);
	if (n > 1) {
		ff->list = calloc(n, sizeof(*ff->list));
		ff->names = calloc(n, LLMIO_PATH_MAX);
		if (!ff->list || !ff->names) {
			fio_files_free(ff);
			return llmio_err(e, -ENOMEM, "out of memory for %u files", n);
		}
	}
	/* fio's filesize is each file's; its size all files' together */
	per = o->filesize ? o->filesize : o->size / per_clone;
	per -= o->bs ? per % o->bs : 0;
	for (unsigned i = 0; i < n; i++) {
		char *path = ff->names ? ff->names + (size_t)i * LLMIO_PATH_MAX : name;
		char one[LLMIO_PATH_MAX];
		int len;

		if (named ? !next_name(&list, one, sizeof(one))
		          : !format_name(fmt, o->name, i / per_clone, i % per_clone, one,
		                         sizeof(one)))
			goto too_long;
		if (!one[0]) {
			fio_files_free(ff);
			return named ? llmio_err(e, -EINVAL,
			                         "filename=%s: an empty name in the ':' list; give "
			                         "each file a name (\\: is a colon in one)",
			                         o->filename)
			             : llmio_err(e, -EINVAL,
			                         "filename_format=%s names no file (no job name?); "
			                         "give --name or --filename",
			                         fmt);
		}
		/* fio puts every name inside directory, an absolute one too */
		len = snprintf(path, LLMIO_PATH_MAX, "%s%s%s", dir, dir[0] ? "/" : "", one);
		if (len < 0 || len >= LLMIO_PATH_MAX)
			goto too_long;
		if (ff->list)
			ff->list[i] = (struct llmio_file){.path = path, .size = per};
	}
	o->directory[0] = '\0';
	if (!ff->list) {
		snprintf(o->filename, sizeof(o->filename), "%s", name);
		return 0;
	}
	o->filename[0] = '\0';
	o->files = ff->list;
	o->nfiles_list = n;
	o->size = per * n;
	o->filesize = 0;
	return 0;
too_long:
	fio_files_free(ff);
	return llmio_err(e, -ENAMETOOLONG, "filename=%s in directory=%s: a path is too long",
	                 o->filename, o->directory);
}

/* ---- fio job files ---------------------------------------------------------------------- */

/* One value per key: fio's jobs are single points (lists and ranges are llmio sweep's). */
static int dim_value(const struct sweep_section *s, const struct sweep_dim *d, char *buf,
                     size_t len, struct llmio_error *e)
{
	const struct llmio_optdesc *od = d->kind == SK_JOB ? job_opt_find(d->key) : NULL;
	size_t used = 0;

	if (d->n == 1 || (od && (od->type == OPTD_STRING || job_opt_per_dir(od)))) {
		/* a text keeps its commas ("description=read, then write"), rate its READ,WRITE */
		buf[0] = '\0';
		for (size_t i = 0; i < d->n && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
			                         d->v[i].raw);
		return used < len ? 0
		                  : llmio_err(e, -EINVAL, "%s:%u: %s: value too long", d->file,
		                              d->line, d->key);
	}
	return llmio_err(e, -EINVAL,
	                 "%s:%u: [%s] %s: %zu values; a fio job runs one (fio's read,write pair "
	                 "is not done): give one, or sweep them with `llmio sweep`",
	                 d->file, d->line, s->name, d->key, d->n);
}

static int append_engine_opt(struct llmio_job_opts *o, const char *key, const char *value,
                             struct llmio_error *e)
{
	return engine_opts_append(o->engine_opts, sizeof(o->engine_opts), key, value)
	               ? llmio_err(e, -EINVAL, "too many engine options")
	               : 0;
}

/*
 * fio's job options whose name is also an option of one of llmio's engines (timeout: s3's):
 * the engine's in a section of that engine, else fio's option of the job.
 */
static const struct {
	const char *key, *job;
} fio_engine_names[] = {
        {"timeout", "runtime"}, /* fio's other name of runtime */
};

/* An engine option of the job's engine, or fio's job option of that name (fio_engine_names). */
static int engine_or_job_opt(struct llmio_job_opts *o, const char *key, const char *value,
                             struct llmio_error *e)
{
	const struct engine_ops *eng = engine_find(o->engine);

	for (size_t i = 0; i < sizeof(fio_engine_names) / sizeof(fio_engine_names[0]); i++)
		if (!strcmp(key, fio_engine_names[i].key) && !(eng && engine_opt_find(eng, key)))
			return llmio_job_opts_set(o, fio_engine_names[i].job, value, e);
	return append_engine_opt(o, key, value, e);
}

/*
 * A section's options: fio's defaults where they differ from llmio's, then its keys; engine
 * options after the others, so that the job's engine is known wherever ioengine is.
 */
int fio_job_section(const struct sweep_section *s, struct llmio_job_opts *o, struct llmio_error *e)
{
	char value[LLMIO_PATH_MAX];
	int ret = 0;

	llmio_job_opts_init(o);
	o->time_based = false; /* fio's default: a job ends with its bytes even within runtime */
	snprintf(o->name, sizeof(o->name), "%s", s->name);
	for (size_t n = 0; n < 2 * s->ndims && !ret; n++) {
		const struct sweep_dim *d = &s->dims[n % s->ndims];

		if ((d->kind == SK_ENGINE) != (n >= s->ndims))
			continue;
		ret = dim_value(s, d, value, sizeof(value), e);
		if (ret)
			break;
		switch (d->kind) {
		case SK_JOB:
			ret = llmio_job_opts_set(o, d->key, value, e);
			break;
		case SK_ENGINE:
			ret = engine_or_job_opt(o, d->key, value, e);
			break;
		default:
			ret = llmio_err(
			        e, -EINVAL,
			        "%s:%u: [%s] %s: a key of llmio sweep (steady state, "
			        "recipes), not of a fio job: run the file with `llmio sweep`",
			        d->file, d->line, s->name, d->key);
			break;
		}
		if (ret && (d->kind == SK_JOB || d->kind == SK_ENGINE))
			llmio_err_prefix(e, "%s:%u: [%s]", d->file, d->line, s->name);
	}
	return ret;
}

/* What the jobs of one fio_jobs_run() share: when a job ends, who waits on it and whom it stops. */
struct fio_run {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a job ended, or a stop came */
	struct fio_job *jobs;
	size_t njobs;
	bool exitall; /* fio's exitall is the whole run's, whichever job sets it */
	bool ended;   /* exit_what=all: nothing more starts */
	size_t gate;  /* jobs of the wave still laying out their files (gated) */
};

static bool stopped(volatile int *stop)
{
	return stop && __atomic_load_n(stop, __ATOMIC_RELAXED);
}

/*
 * Stop job j for another job's exitall (run->mu held).  A job still laying out its files stops
 * once it measures (fio lays every file out before any job starts): a stop then would leave
 * a file half filled.
 */
static void stop_job(struct fio_job *j)
{
	if (j->done || j->exited)
		return;
	j->exited = true;
	if (j->measuring)
		__atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
}

/* The progress of a job that runs with others: it measures, so exitall's stop may come. */
static void measuring(void *arg, double elapsed_s, double eta_s, double iops, double bw_bytes)
{
	struct fio_job *j = arg;

	(void)elapsed_s, (void)eta_s, (void)iops, (void)bw_bytes;
	pthread_mutex_lock(&j->run->mu);
	j->measuring = true;
	if (j->exited)
		__atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&j->run->mu);
}

/* Job j is laid out, or ended before (run->mu held): the wave's gate has one job less. */
static void gate_pass(struct fio_run *run, struct fio_job *j)
{
	if (!j->gated)
		return;
	j->gated = false;
	--run->gate;
	pthread_cond_broadcast(&run->cv); /* the jobs at the gate, and run_wave's next layout */
}

/* Wait for run->cv (run->mu held), 100 ms at most: a signal sets a stop flag without waking. */
static void wait_a_while(struct fio_run *run)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 100000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&run->cv, &run->mu, &ts);
}

/*
 * llmio_job_run()'s ready: the job's files are laid out.  As fio, which lays out every file
 * before it starts the jobs, the jobs of a wave start measuring together once all are.
 */
static void gate_wait(void *arg)
{
	struct fio_job *j = arg;
	struct fio_run *run = j->run;

	pthread_mutex_lock(&run->mu);
	gate_pass(run, j);
	while (run->gate && !stopped(j->o.stop))
		pthread_cond_wait(&run->cv, &run->mu);
	if (j->exited) /* stopped while laying out, or before it started: not one I/O */
		__atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&run->mu);
}

/* Job j has ended (run->mu held): fio's exitall stops the others that its exit_what names. */
static void job_ended(struct fio_run *run, struct fio_job *j)
{
	gate_pass(run, j);
	j->done = true;
	if (run->exitall)
		for (size_t k = 0; k < run->njobs; k++) {
			struct fio_job *x = &run->jobs[k];

			/* group: its group, started or not; stonewall: every job running; all */
			if ((j->o.exit_what == 0 && x->group == j->group) ||
			    (j->o.exit_what == 1 && x->started) || j->o.exit_what == 2)
				stop_job(x);
		}
	run->ended |= run->exitall && j->o.exit_what == 2;
	pthread_cond_broadcast(&run->cv);
}

static void *job_thread(void *arg)
{
	struct fio_job *j = arg;
	struct fio_run *run = j->run;

	pthread_mutex_lock(&run->mu);
	while (j->waitee != SIZE_MAX && !run->jobs[j->waitee].done && !stopped(j->o.stop))
		pthread_cond_wait(&run->cv, &run->mu);
	j->started = true;
	pthread_mutex_unlock(&run->mu);
	/* a job stopped before it started still runs, to its end once measuring: fio reports it
	 * and has laid out its files */
	j->ret = llmio_job_run(&j->o, &j->r, &j->e);
	pthread_mutex_lock(&run->mu);
	job_ended(run, j);
	pthread_mutex_unlock(&run->mu);
	return NULL;
}

/* A steady state's window copied (a merged group's), or none without memory. */
static void ss_copy(struct llmio_steadystate *ss)
{
	const size_t len = ss->dur * sizeof(uint64_t);
	uint64_t *iops = ss->on ? malloc(len) : NULL, *bw = ss->on ? malloc(len) : NULL;

	if (!iops || !bw) {
		free(iops);
		free(bw);
		*ss = (struct llmio_steadystate){0};
		return;
	}
	memcpy(iops, ss->iops, len);
	memcpy(bw, ss->bw, len);
	ss->iops = iops;
	ss->bw = bw;
}

/* A group's jobs as one result (group_reporting): concurrent jobs add up. */
static struct llmio_result *group_merge(struct fio_job *jobs, size_t first, size_t n)
{
	struct llmio_result *m = NULL;

	for (size_t i = first; i < first + n; i++) {
		const struct llmio_result *r = jobs[i].r;

		if (!r)
			continue;
		if (!m) {
			m = malloc(sizeof(*m));
			if (!m)
				return NULL;
			memcpy(m, r, sizeof(*m));
			m->threads = NULL; /* each job's own: one report for the group */
			m->thread_wire = NULL;
			m->nthreads = 0;
			ss_copy(&m->ss); /* the job's own stay the job's */
			continue;
		}
		for (int op = 0; op < 3; op++) {
			struct llmio_op_result *d = op == 2 ? &m->trim : op ? &m->write : &m->read;
			const struct llmio_op_result *s = op == 2 ? &r->trim
			                                  : op    ? &r->write
			                                          : &r->read;

			d->ios += s->ios;
			d->bytes += s->bytes;
			d->iops += s->iops;
			d->bw_bytes += s->bw_bytes;
			llmio_hist_merge(&d->clat, &s->clat);
			llmio_hist_merge(&d->slat, &s->slat);
			llmio_hist_merge(&d->lat, &s->lat);
		}
		m->fsyncs += r->fsyncs;
		llmio_hist_merge(&m->sync_lat, &r->sync_lat);
		m->interrupted |= r->interrupted;
		if (!m->error && r->error) {
			m->error = r->error;
			memcpy(m->error_msg, r->error_msg, sizeof(m->error_msg));
		}
		/* per-second samples are each job's: a sum of them is not measured */
		memset(m->iops_samples, 0, sizeof(m->iops_samples));
		memset(m->bw_samples, 0, sizeof(m->bw_samples));
		/* CPU and device counters are the process's and the disk's over each window: the
		 * longest window holds the others */
		if (r->runtime_s > m->runtime_s) {
			m->runtime_s = r->runtime_s;
			m->cpu = r->cpu;
			m->device = r->device;
		}
	}
	return m;
}

void fio_jobs_free(struct fio_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		llmio_result_destroy(jobs[i].r);
		fio_files_free(&jobs[i].files);
	}
	free(jobs);
}

/* Run the jobs [first, first + n) together: a thread each (one job: on this thread, with the
 * progress line); each job's outcome in its ret, e and r. */
static void run_wave(struct fio_run *run, size_t first, size_t n, const struct fio_run_hooks *h)
{
	struct fio_job *jobs = run->jobs;

	/* the jobs that start at once start together (not those that wait for a job) */
	run->gate = 0;
	for (size_t i = first; n > 1 && i < first + n; i++) {
		jobs[i].gated = jobs[i].waitee == SIZE_MAX || jobs[i].waitee < first;
		run->gate += jobs[i].gated;
	}
	for (size_t i = first; i < first + n; i++) {
		/* a job of its own stops with the run; jobs together each with their own flag,
		 * which the run's stop and another job's exitall set (and one stopped before
		 * it starts) */
		jobs[i].o.stop = n == 1 && !jobs[i].exited ? h->stop : &jobs[i].stop;
		if (n > 1) {
			jobs[i].o.progress = measuring;
			jobs[i].o.progress_arg = &jobs[i];
			jobs[i].o.progress_interval_ns = 50000000; /* exitall's stop within 50 ms */
		}
		jobs[i].o.ready = jobs[i].gated || jobs[i].exited ? gate_wait : NULL;
		jobs[i].o.ready_arg = &jobs[i];
		if (n == 1) {
			jobs[i].o.progress = h->progress;
			/* one job at a time: its file layout drawn too (jobs running together would
			 * draw over each other) */
			jobs[i].o.prepare_progress = h->prepare_progress;
			job_thread(&jobs[i]);
			if (h->one_done)
				h->one_done();
		} else if (pthread_create(&jobs[i].thread, NULL, job_thread, &jobs[i])) {
			jobs[i].ret = llmio_err(&jobs[i].e, -EAGAIN, "cannot start a thread");
			jobs[i].thread = 0;
			pthread_mutex_lock(&run->mu);
			job_ended(run, &jobs[i]);
			pthread_mutex_unlock(&run->mu);
		} else {
			/* as fio, which lays out every file before it starts the jobs: one job's
			 * layout after the other, in the file's order, so that jobs sharing a file
			 * do not race to create it (one's create failing on the other's, or a
			 * reader finding the writer's file still empty) */
			pthread_mutex_lock(&run->mu);
			while (jobs[i].gated) {
				if (stopped(h->stop))
					__atomic_store_n(&jobs[i].stop, 1, __ATOMIC_RELAXED);
				wait_a_while(run);
			}
			pthread_mutex_unlock(&run->mu);
		}
	}
	pthread_mutex_lock(&run->mu);
	for (size_t i = first; n > 1 && i < first + n;) {
		if (jobs[i].done) {
			i++;
			continue;
		}
		if (stopped(h->stop)) {
			for (size_t k = first; k < first + n; k++)
				__atomic_store_n(&jobs[k].stop, 1, __ATOMIC_RELAXED);
			pthread_cond_broadcast(&run->cv); /* those waiting for a job too */
		}
		wait_a_while(run);
	}
	pthread_mutex_unlock(&run->mu);
	for (size_t i = first; n > 1 && i < first + n; i++)
		if (jobs[i].thread)
			pthread_join(jobs[i].thread, NULL);
	/* a job another one stopped ended as fio's does, not interrupted */
	for (size_t i = first; i < first + n; i++)
		if (jobs[i].exited && jobs[i].r && !stopped(h->stop))
			jobs[i].r->interrupted = false;
}

/* fio's wait_for: the earlier job of that name, for each job; -EINVAL (in its ret) when none. */
static int find_waitees(struct fio_job *jobs, size_t njobs)
{
	for (size_t i = 0; i < njobs; i++) {
		jobs[i].waitee = SIZE_MAX;
		if (!jobs[i].o.wait_for[0])
			continue;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(jobs[k].o.name, jobs[i].o.wait_for))
				jobs[i].waitee = k;
		if (jobs[i].waitee == SIZE_MAX)
			return jobs[i].ret = llmio_err(
			               &jobs[i].e, -EINVAL,
			               "wait_for=%s: no earlier job has that name (fio's wait_for "
			               "names a job before this one)",
			               jobs[i].o.wait_for);
	}
	return 0;
}

/* Group the jobs (stonewall, new_group) and run them wave after wave. */
void fio_jobs_run(struct fio_job *jobs, size_t njobs, const struct fio_run_hooks *h)
{
	struct fio_run run = {.jobs = jobs, .njobs = njobs};
	uint32_t logs = 0;
	size_t start = 0;

	if (find_waitees(jobs, njobs))
		return;
	pthread_mutex_init(&run.mu, NULL);
	pthread_cond_init(&run.cv, NULL);
	for (size_t i = 0; i < njobs; i++) {
		if (i) {
			jobs[i].wave = jobs[i - 1].wave + jobs[i].o.stonewall;
			jobs[i].group =
			        jobs[i - 1].group + (jobs[i].o.stonewall || jobs[i].o.new_group);
		}
		jobs[i].run = &run;
		jobs[i].o.log_index = logs; /* fio numbers every thread of the file */
		logs += jobs[i].o.numjobs ? jobs[i].o.numjobs : 1;
		run.exitall |= jobs[i].o.exitall;
	}
	for (size_t i = 0; i < njobs; i++)
		jobs[i].o.dedupe_threads = logs; /* dedupe_global spreads over them all, as fio */
	for (size_t i = 1; i <= njobs; i++) {
		if (i < njobs && jobs[i].wave == jobs[start].wave)
			continue;
		/* the waves exit_what=all keeps from starting run stopped: fio reports their jobs,
		 * with no I/O, and has laid out their files */
		for (size_t k = start; run.ended && k < i; k++)
			jobs[k].exited = true;
		if (!stopped(h->stop))
			run_wave(&run, start, i - start, h);
		start = i;
	}
	pthread_cond_destroy(&run.cv);
	pthread_mutex_destroy(&run.mu);
	for (size_t i = 0; i < njobs; i++)
		jobs[i].run = NULL;
}

/* The results to report: each job's, or each group's with group_reporting. */
int fio_jobs_collect(struct fio_job *jobs, size_t njobs, struct llmio_result **res, unsigned *group,
                     size_t *n, bool *merged)
{
	*n = 0;
	for (size_t i = 0; i < njobs;) {
		size_t k = i;
		bool together = false;

		while (k < njobs && jobs[k].group == jobs[i].group)
			together |= jobs[k++].o.group_reporting;
		if (together) {
			res[*n] = group_merge(jobs, i, k - i);
			if (!res[*n])
				return -ENOMEM;
			merged[*n] = true;
			group[(*n)++] = jobs[i].group;
		}
		for (; !together && i < k; i++)
			if (jobs[i].r) {
				merged[*n] = false;
				group[*n] = jobs[i].group;
				res[(*n)++] = jobs[i].r;
			}
		i = k;
	}
	return 0;
}
