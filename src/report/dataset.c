/* SPDX-License-Identifier: MIT */
/*
 * A sweep journal in memory: records become samples (one per phase), samples with the same
 * configuration (all keys but "repeat" and "randseed") become one point whose metrics are the
 * median over its repeats and whose latency histogram merges every job of every repeat
 * exactly (bucket counts add).  docs/report.md, "Grouping".
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "base/error.h"
#include "base/fmt.h"
#include "sweep/journal.h"
#include "report/report.h"
#include "stats/record.h"

static const char *const never_keys[] = {"repeat", "randseed", NULL};
static const char *const engine_keys[] = {"ioengine", "engine", "engine_opts", NULL};

static int grow(void **arr, size_t *cap, size_t need, size_t size);

/* Append a copy of s to the list of n strings (capacity *cap).  0 or -ENOMEM. */
static int push_str(char ***list, size_t *n, size_t *cap, const char *s)
{
	if (grow((void **)list, cap, *n + 1, sizeof(char *)))
		return -ENOMEM;
	(*list)[*n] = strdup(s);
	if (!(*list)[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static bool in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

static const char *str_of(const cJSON *o, const char *key, const char *def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

static double num_of(const cJSON *o, const char *key, double def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	return def;
}

/*
 * A whole number in [0, max] from a record, or def when the key is absent.  Journals come from
 * outside: a value out of range (1e300, -5, 2.5) is refused with its key named in bad, never
 * cast (a cast of an out-of-range double is undefined behaviour).  \return 0 or -ERANGE.
 */
static int whole_of(const cJSON *o, const char *key, double def, double max, uint64_t *out,
                    char *bad, size_t badlen)
{
	double v = num_of(o, key, def);

	if (!(v >= 0 && v <= max && v == floor(v))) {
		snprintf(bad, badlen, "%s %g is not a whole number in 0..%.0f", key, v, max);
		return -ERANGE;
	}
	*out = (uint64_t)v;
	return 0;
}

/* 2^53: the largest byte count a JSON number holds exactly */
#define MAX_BYTES 9007199254740992.0
#define MAX_U32   4294967295.0

static double num_of_index(const cJSON *a, int i)
{
	const cJSON *v = cJSON_GetArrayItem(a, i);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* Canonical text of a config value: numbers as %.17g, booleans 0/1, strings as they are. */
static void value_str(const cJSON *v, char *buf, size_t len)
{
	char *t;

	if (cJSON_IsNumber(v)) {
		snprintf(buf, len, "%.17g", v->valuedouble);
	} else if (cJSON_IsBool(v)) {
		snprintf(buf, len, "%d", cJSON_IsTrue(v));
	} else if (cJSON_IsString(v)) {
		snprintf(buf, len, "%s", v->valuestring);
	} else if ((t = cJSON_PrintUnformatted(v))) {
		snprintf(buf, len, "%s", t);
		free(t);
	} else {
		snprintf(buf, len, "?");
	}
}

static int cmp_item_key(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

bool dataset_engine_key(const struct dataset *d, const char *key)
{
	for (size_t i = 0; i < d->nengine_keys; i++)
		if (!strcmp(d->engine_keys[i], key))
			return true;
	return d->engine_keys_guessed && engine_owning_option(key);
}

/* The engine options a job of a record names; a job without them leaves the guess to today's
 * engines. */
static int note_engine_keys(struct dataset *d, const cJSON *jo)
{
	const cJSON *eng = cJSON_GetObjectItemCaseSensitive(jo, "engine_options"), *it;
	size_t cap = d->nengine_keys; /* a few keys per journal: grow one at a time */

	if (!cJSON_IsObject(eng)) {
		d->engine_keys_guessed = true;
		return 0;
	}
	cJSON_ArrayForEach(it, eng)
	{
		bool seen = !it->string;

		for (size_t i = 0; i < d->nengine_keys && !seen; i++)
			seen = !strcmp(d->engine_keys[i], it->string);
		if (!seen && push_str(&d->engine_keys, &d->nengine_keys, &cap, it->string))
			return -ENOMEM;
	}
	return 0;
}

char *config_key(const struct dataset *d, const cJSON *config, const char *const *drop,
                 bool drop_engine)
{
	const cJSON **items = NULL, *it;
	size_t n = 0, k = 0, len = 1;
	char *out = NULL, val[512];

	cJSON_ArrayForEach(it, config) n++;
	items = calloc(n ? n : 1, sizeof(*items));
	if (!items)
		return NULL;
	cJSON_ArrayForEach(it, config)
	{
		if (!it->string || in_list(never_keys, it->string) || in_list(drop, it->string))
			continue;
		if (drop_engine &&
		    (in_list(engine_keys, it->string) || dataset_engine_key(d, it->string)))
			continue;
		items[k++] = it;
	}
	qsort(items, k, sizeof(*items), cmp_item_key);
	for (size_t i = 0; i < k; i++) {
		value_str(items[i], val, sizeof(val));
		len += strlen(items[i]->string) + strlen(val) + 2;
	}
	out = malloc(len);
	if (!out)
		goto out;
	out[0] = '\0';
	for (size_t i = 0, used = 0; i < k; i++) {
		value_str(items[i], val, sizeof(val));
		used += (size_t)snprintf(out + used, len - used, "%s%s=%s", i ? " " : "",
		                         items[i]->string, val);
	}
out:
	free(items);
	return out;
}

static bool scan_varies(const struct dataset *d, const char *key)
{
	char first[512], v[512];
	bool have = false, seen_missing = false;

	for (size_t i = 0; i < d->n; i++) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(d->s[i].config, key);

		if (!x) {
			seen_missing = true;
			if (have)
				return true;
			continue;
		}
		value_str(x, v, sizeof(v));
		if (!have) {
			if (seen_missing)
				return true;
			memcpy(first, v, sizeof(first));
			have = true;
		} else if (strcmp(first, v)) {
			return true;
		}
	}
	return false;
}

bool config_key_varies(const struct dataset *d, const char *key)
{
	for (size_t i = 0; i < d->nvarying; i++)
		if (!strcmp(d->varying[i], key))
			return true;
	return false;
}

/*
 * Was key swept: two values or more among the samples that have it?  A key that some records
 * lack (an engine's option in another engine's record, a recipe's key in a plain job's) and
 * that is the same wherever it appears varies (it tells those records apart, so titles name
 * it) but was not swept.
 */
bool config_key_swept(const struct dataset *d, const char *key)
{
	char first[512], v[512];
	bool have = false;

	for (size_t i = 0; i < d->n; i++) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(d->s[i].config, key);

		if (!x)
			continue;
		value_str(x, v, sizeof(v));
		if (!have) {
			memcpy(first, v, sizeof(first));
			have = true;
		} else if (strcmp(first, v)) {
			return true;
		}
	}
	return false;
}

/* The varying keys, found once: titles ask for them per chart. */
static int find_varying(struct dataset *d)
{
	size_t cap = 0;

	for (size_t i = 0; i < d->n; i++) {
		const cJSON *it;

		cJSON_ArrayForEach(it, d->s[i].config)
		{
			bool seen = false;

			/* a key met in an earlier sample has been decided already */
			for (size_t k = 0; k < i && !seen; k++)
				seen = cJSON_GetObjectItemCaseSensitive(d->s[k].config, it->string);
			if (seen || !it->string || in_list(never_keys, it->string) ||
			    !scan_varies(d, it->string))
				continue;
			if (push_str(&d->varying, &d->nvarying, &cap, it->string))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Append the clat buckets of op in one job to the sample; invalid pairs are dropped. */
static int add_pairs(struct sample *s, const cJSON *job, bool *bad)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(job, RK_HISTOGRAM), *a, *pair, *lat;
	struct hist_pair *np;
	size_t n;

	h = cJSON_GetObjectItemCaseSensitive(h, s->op);
	a = cJSON_GetObjectItemCaseSensitive(h, "clat_ns");
	n = (size_t)cJSON_GetArraySize(a);
	if (!n)
		return 0;
	np = realloc(s->pairs, (s->npairs + n) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	s->pairs = np;
	cJSON_ArrayForEach(pair, a)
	{
		double i = cJSON_GetArraySize(pair) == 2 ? num_of_index(pair, 0) : -1;
		double c = cJSON_GetArraySize(pair) == 2 ? num_of_index(pair, 1) : -1;

		if (!(i >= 0 && i < LLMIO_HIST_BUCKETS && c >= 0 && c < 1e18 && i == floor(i))) {
			*bad = true;
			continue;
		}
		s->pairs[s->npairs].idx = (uint32_t)i;
		s->pairs[s->npairs++].count = (uint64_t)c;
	}
	lat = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(job, s->op),
	                                       "clat_ns");
	if (num_of(lat, "N", 1) > 0) {
		double mn = num_of(lat, "min", -1), mx = num_of(lat, "max", -1);

		/* out of range: the buckets bound them instead (bound_from_pairs) */
		if (mn >= 0 && mn <= MAX_BYTES && (uint64_t)mn < s->hmin)
			s->hmin = (uint64_t)mn;
		if (mx >= 0 && mx <= MAX_BYTES && (uint64_t)mx > s->hmax)
			s->hmax = (uint64_t)mx;
	}
	return 0;
}

/* Add a sample's buckets to h, with its exact min and max. */
static void hist_add_sample(struct llmio_hist *h, const struct sample *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->npairs; i++) {
		h->bucket[s->pairs[i].idx] += s->pairs[i].count;
		h->sum += s->pairs[i].count * llmio_hist_bucket_value(s->pairs[i].idx);
		n += s->pairs[i].count;
	}
	if (!n)
		return;
	h->count += n;
	if (s->hmin < h->min)
		h->min = s->hmin;
	if (s->hmax > h->max)
		h->max = s->hmax;
}

/* Where the record carries no min / max, the buckets bound them. */
static void bound_from_pairs(struct sample *s)
{
	uint32_t lo = UINT32_MAX, hi = 0;

	for (size_t i = 0; i < s->npairs; i++) {
		if (!s->pairs[i].count)
			continue;
		if (s->pairs[i].idx < lo)
			lo = s->pairs[i].idx;
		if (s->pairs[i].idx > hi)
			hi = s->pairs[i].idx;
	}
	if (lo == UINT32_MAX)
		return;
	if (s->hmin == UINT64_MAX)
		s->hmin = llmio_hist_bucket_low(lo);
	if (!s->hmax)
		s->hmax = llmio_hist_bucket_value(hi);
}

static void engine_label(struct sample *s, const char *engine, const char *opts)
{
	char o[96];
	size_t i;

	copy_str(s->ioengine, sizeof(s->ioengine), engine);
	copy_str(o, sizeof(o), opts);
	for (i = 0; o[i]; i++)
		if (o[i] == ',')
			o[i] = ' ';
	snprintf(s->engine, sizeof(s->engine), "%s%s%s", engine, o[0] ? " " : "", o);
}

enum llmio_service service_combine(enum llmio_service a, enum llmio_service b)
{
	if (a == b)
		return a;
	if (a == LLMIO_SERVICE_UNKNOWN || b == LLMIO_SERVICE_UNKNOWN)
		return LLMIO_SERVICE_UNKNOWN;
	return LLMIO_SERVICE_MIXED;
}

const char *point_mark(const struct point *p)
{
	if (p->service == LLMIO_SERVICE_PAGE_CACHE)
		return " (page cache)";
	return p->service == LLMIO_SERVICE_MIXED ? " (mixed)" : "";
}

static int service_of_name(const char *name)
{
	for (int v = LLMIO_SERVICE_UNKNOWN; v <= LLMIO_SERVICE_MIXED; v++)
		if (!strcmp(name, llmio_service_name((enum llmio_service)v)))
			return v;
	return -1;
}

/*
 * A job's verdict: the record's own, or for a record written before verdicts existed the
 * same function over the facts the record holds (O_DIRECT, bytes, fsyncs, witness, disk).
 */
static int job_service(const cJSON *job, const cJSON *jo, enum llmio_service *out, char *why,
                       size_t len, char *bad, size_t badlen)
{
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(job, RK_DEVICE);
	const cJSON *pio = cJSON_GetObjectItemCaseSensitive(job, RK_PROCESS_IO);
	const cJSON *sync = cJSON_GetObjectItemCaseSensitive(job, RK_SYNC);
	struct llmio_service_facts f = {0};
	int named = service_of_name(str_of(job, RK_SERVICE, ""));
	uint64_t opt_sync = 0;
	int ret = 0;

	if (named >= 0) {
		*out = (enum llmio_service)named;
		copy_str(why, len, str_of(job, RK_SERVICE_REASON, ""));
		return 0;
	}
	f.direct = num_of(job, RK_DIRECT_IN_EFFECT, num_of(jo, "direct", 0)) != 0;
	f.fstype = str_of(dev, RK_FSTYPE, "");
	f.witness.known = pio && num_of(pio, RK_KNOWN, 0) != 0;
	f.device_known = dev && num_of(dev, RK_KNOWN, 0) != 0;
	ret = whole_of(cJSON_GetObjectItemCaseSensitive(job, RK_READ), "io_bytes", 0, MAX_BYTES,
	               &f.read_bytes, bad, badlen);
	if (!ret)
		ret = whole_of(cJSON_GetObjectItemCaseSensitive(job, RK_WRITE), "io_bytes", 0,
		               MAX_BYTES, &f.write_bytes, bad, badlen);
	if (!ret && f.witness.known)
		ret = whole_of(pio, RK_READ_BYTES, 0, MAX_BYTES, &f.witness.read_bytes, bad,
		               badlen) ||
		      whole_of(pio, RK_WRITE_BYTES, 0, MAX_BYTES, &f.witness.write_bytes, bad,
		               badlen);
	if (!ret && f.device_known)
		ret = whole_of(dev, RK_READ_BYTES, 0, MAX_BYTES, &f.device_read_bytes, bad,
		               badlen) ||
		      whole_of(dev, RK_WRITE_BYTES, 0, MAX_BYTES, &f.device_write_bytes, bad,
		               badlen);
	/* an older record without "sync": the options say whether it synced */
	if (!ret && sync)
		ret = whole_of(sync, RK_TOTAL_IOS, 0, MAX_BYTES, &f.fsyncs, bad, badlen);
	else if (!ret)
		opt_sync = num_of(jo, "fsync", 0) != 0 || num_of(jo, "end_fsync", 0) != 0;
	if (ret)
		return -ERANGE;
	if (!sync)
		f.fsyncs = opt_sync;
	*out = llmio_service_classify(&f, why, len);
	return 0;
}

static int parse_phase(struct dataset *d, struct sample *s, const cJSON *phase,
                       struct llmio_hist *scratch, bool *bad, char *why, size_t whylen)
{
	const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(phase, RK_JOBS), *job, *jo;
	double rbytes = 0, wbytes = 0, cores = 0;
	size_t njobs = 0;
	uint64_t v;
	int ret;

	copy_str(s->phase, sizeof(s->phase), str_of(phase, RK_NAME, "run"));
	s->wall_s = num_of(phase, RK_WALL_S, 0);
	jo = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(jobs, 0), RK_JOB_OPTIONS);
	if ((ret = note_engine_keys(d, jo)))
		return ret;
	engine_label(s, str_of(jo, "ioengine", str_of(s->config, "ioengine", "?")),
	             str_of(jo, "engine_opts", ""));
	copy_str(s->rw, sizeof(s->rw), str_of(jo, "rw", str_of(s->config, "rw", "?")));
	if ((ret = whole_of(jo, "bs", num_of(s->config, "bs", 0), MAX_BYTES, &s->bs, why,
	                    whylen)) ||
	    (ret = whole_of(jo, "iodepth", num_of(s->config, "iodepth", 1), MAX_U32, &v, why,
	                    whylen)))
		return ret;
	s->iodepth = (unsigned)v;
	if ((ret = whole_of(jo, "numjobs", num_of(s->config, "numjobs", 1), MAX_U32, &v, why,
	                    whylen)))
		return ret;
	s->numjobs = (unsigned)v;
	if ((ret = whole_of(jo, "fsync", num_of(s->config, "fsync", 0), MAX_U32, &v, why, whylen)))
		return ret;
	s->fsync = (unsigned)v;
	s->direct = num_of(jo, "direct", num_of(s->config, "direct", 0)) != 0;
	s->end_fsync = num_of(jo, "end_fsync", num_of(s->config, "end_fsync", 0)) != 0;
	cJSON_ArrayForEach(job, jobs)
	{
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(job, RK_READ);
		const cJSON *w = cJSON_GetObjectItemCaseSensitive(job, RK_WRITE);
		double c = num_of(cJSON_GetObjectItemCaseSensitive(job, RK_CPU), RK_CORES_BUSY, 0);
		enum llmio_service sv;
		char reason[sizeof(s->service_reason)];

		if ((ret = job_service(job, cJSON_GetObjectItemCaseSensitive(job, RK_JOB_OPTIONS),
		                       &sv, reason, sizeof(reason), why, whylen)))
			return ret;
		s->service = njobs ? service_combine(s->service, sv) : sv;
		if (!njobs)
			copy_str(s->service_reason, sizeof(s->service_reason), reason);
		s->shared_disk |= num_of(job, RK_SHARED_DISK, 0) != 0;
		s->busy_system |= num_of(job, RK_BUSY_SYSTEM, 0) != 0;
		s->bw += num_of(r, "bw_bytes", 0) + num_of(w, "bw_bytes", 0);
		s->iops += num_of(r, "iops", 0) + num_of(w, "iops", 0);
		rbytes += num_of(r, "io_bytes", 0);
		wbytes += num_of(w, "io_bytes", 0);
		/* CPU is counted for the whole process: jobs of a phase share it, never add up */
		if (c > cores)
			cores = c;
		if (!njobs)
			s->gbpc = num_of(job, RK_GB_PER_S_PER_CORE, 0);
		njobs++;
	}
	s->cores = cores;
	if (njobs > 1)
		s->gbpc = cores > 0 ? s->bw / 1e9 / cores : 0;
	copy_str(s->op, sizeof(s->op), wbytes > rbytes ? RK_WRITE : RK_READ);
	s->hmin = UINT64_MAX;
	s->hmax = 0;
	cJSON_ArrayForEach(job, jobs) if ((ret = add_pairs(s, job, bad))) return ret;
	bound_from_pairs(s);
	llmio_hist_init(scratch);
	hist_add_sample(scratch, s);
	s->p50 = llmio_hist_percentile(scratch, 50);
	s->p99 = llmio_hist_percentile(scratch, 99);
	return 0;
}

static void note_failure(struct dataset *d, const cJSON *rec, const cJSON *cfg)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(rec, RK_ERROR);
	struct failure *f = &d->fail[d->nfail++];
	char bs[32] = "?", qd[32] = "?", bad[96];
	uint64_t v;

	copy_str(f->hash, sizeof(f->hash), str_of(rec, RK_CONFIG_HASH, "?"));
	if (!whole_of(cfg, "bs", 0, MAX_BYTES, &v, bad, sizeof(bad)))
		fmt_size(bs, sizeof(bs), v);
	if (!whole_of(cfg, "iodepth", 1, MAX_U32, &v, bad, sizeof(bad)))
		snprintf(qd, sizeof(qd), "%llu", (unsigned long long)v);
	snprintf(f->what, sizeof(f->what), "%s %s %s bs=%s iodepth=%s",
	         str_of(rec, RK_WORKLOAD, "job"), str_of(cfg, "ioengine", "?"),
	         str_of(cfg, "rw", "?"), bs, qd);
	snprintf(f->message, sizeof(f->message), "%s (%.0f)", str_of(e, "message", "failed"),
	         num_of(e, "code", 0));
}

static void note_host(struct dataset *d, const cJSON *rec)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(rec, RK_HOST);
	char bad[96];
	uint64_t v;

	if (d->host[0] || !h)
		return;
	copy_str(d->host, sizeof(d->host), str_of(h, "hostname", "?"));
	copy_str(d->kernel, sizeof(d->kernel), str_of(h, "kernel", "?"));
	copy_str(d->cpu_model, sizeof(d->cpu_model), str_of(h, "cpu_model", "?"));
	/* a count out of range is not shown (0 = unknown) rather than cast */
	d->online_cpus =
	        whole_of(h, "online_cpus", 0, MAX_U32, &v, bad, sizeof(bad)) ? 0 : (unsigned)v;
}

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	void *n;
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*arr, c * size);
	if (!n)
		return -ENOMEM;
	memset((char *)n + *cap * size, 0, (c - *cap) * size);
	*arr = n;
	*cap = c;
	return 0;
}

/*
 * A record with a value out of range is left out whole: the samples it added so far go, it
 * counts as a skipped line, and the warning names the line and the value.
 */
static void drop_samples(struct dataset *d, size_t first, unsigned long lineno, const char *why)
{
	for (size_t i = first; i < d->n; i++) {
		cJSON_Delete(d->s[i].config);
		free(d->s[i].group);
		free(d->s[i].pairs);
		memset(&d->s[i], 0, sizeof(d->s[i]));
	}
	d->n = first;
	d->records--;
	d->skipped_lines++;
	fprintf(stderr, "llmio: %s line %lu: record skipped: %s\n", d->path, lineno, why);
}

/* One journal record: its phases become samples, or it is noted as a failure. */
static int add_record(struct dataset *d, const cJSON *rec, size_t *cap, size_t *fcap,
                      struct llmio_hist *scratch, unsigned long lineno)
{
	const cJSON *phases = cJSON_GetObjectItemCaseSensitive(rec, RK_PHASES), *ph;
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(rec, RK_CONFIG);
	const cJSON *sw = cJSON_GetObjectItemCaseSensitive(rec, RK_SWEEP);
	const size_t first = d->n;
	bool bad = false;
	char why[160];
	uint64_t v = 0;
	int ret;

	if (strcmp(str_of(rec, RK_RECORD, "point"), "point")) {
		d->ignored++;
		return 0;
	}
	d->records++;
	note_host(d, rec);
	if (!cfg) /* an older writer: the first job's options identify the point */
		cfg = cJSON_GetObjectItemCaseSensitive(
		        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
		                                   cJSON_GetArrayItem(phases, 0), RK_JOBS),
		                           0),
		        "job options");
	if (cJSON_GetObjectItemCaseSensitive(rec, RK_ERROR) || !cJSON_GetArraySize(phases)) {
		if ((ret = grow((void **)&d->fail, fcap, d->nfail + 1, sizeof(*d->fail))))
			return ret;
		note_failure(d, rec, cfg);
		return 0;
	}
	cJSON_ArrayForEach(ph, phases)
	{
		struct sample *s;
		char *key;
		size_t klen;

		if ((ret = grow((void **)&d->s, cap, d->n + 1, sizeof(*d->s))))
			return ret;
		s = &d->s[d->n];
		copy_str(s->hash, sizeof(s->hash), str_of(rec, RK_CONFIG_HASH, "?"));
		copy_str(s->workload, sizeof(s->workload), str_of(rec, RK_WORKLOAD, "job"));
		s->config = cfg ? cJSON_Duplicate(cfg, true) : cJSON_CreateObject();
		if (!s->config)
			return -ENOMEM;
		d->n++; /* owned from here: released with the dataset */
		ret = whole_of(sw, "repeat", num_of(cfg, "repeat", 0), MAX_U32, &v, why,
		               sizeof(why));
		if (!ret) {
			s->repeat = (long)v;
			ret = parse_phase(d, s, ph, scratch, &bad, why, sizeof(why));
		}
		if (ret == -ERANGE) {
			drop_samples(d, first, lineno, why);
			return 0;
		}
		if (ret)
			return ret;
		key = config_key(d, s->config, NULL, false);
		if (!key)
			return -ENOMEM;
		klen = strlen(key) + strlen(s->workload) + strlen(s->phase) + 3;
		s->group = malloc(klen);
		if (s->group)
			snprintf(s->group, klen, "%s|%s|%s", s->workload, s->phase, key);
		free(key);
		if (!s->group)
			return -ENOMEM;
	}
	if (bad)
		fprintf(stderr,
		        "llmio: %s line %lu: histogram buckets out of range were left out\n",
		        d->path, lineno);
	return 0;
}

static const struct dataset *sort_ds; /* qsort has no context argument in C11 */

static int cmp_sample_idx(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(sort_ds->s[x].group, sort_ds->s[y].group);

	return c ? c : (x > y) - (x < y);
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct metric fold(const struct dataset *d, const struct point *p, double *tmp,
                          double (*get)(const struct sample *))
{
	struct metric m;
	size_t n = p->n;

	for (size_t i = 0; i < n; i++)
		tmp[i] = get(&d->s[p->idx[i]]);
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	m.min = tmp[0];
	m.max = tmp[n - 1];
	m.med = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
	return m;
}

static double get_bw(const struct sample *s)
{
	return s->bw;
}
static double get_iops(const struct sample *s)
{
	return s->iops;
}
static double get_gbpc(const struct sample *s)
{
	return s->gbpc;
}
static double get_wall(const struct sample *s)
{
	return s->wall_s;
}
static double get_p99(const struct sample *s)
{
	return (double)s->p99;
}

double metric_spread_pct(const struct metric *m)
{
	return m->med > 0 ? (m->max - m->min) / m->med * 100 : 0;
}

static int cmp_point_first(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	return (x->idx[0] > y->idx[0]) - (x->idx[0] < y->idx[0]);
}

void point_hist(const struct point *p, struct llmio_hist *h)
{
	llmio_hist_init(h);
	for (size_t i = 0; i < p->n; i++)
		hist_add_sample(h, &p->all[p->idx[i]]);
}

static void fold_point(const struct dataset *d, struct point *p, double *tmp, struct llmio_hist *h)
{
	p->s = &d->s[p->idx[0]];
	p->bw = fold(d, p, tmp, get_bw);
	p->iops = fold(d, p, tmp, get_iops);
	p->gbpc = fold(d, p, tmp, get_gbpc);
	p->wall = fold(d, p, tmp, get_wall);
	p->p99r = fold(d, p, tmp, get_p99);
	p->all = d->s;
	point_hist(p, h);
	p->lat_count = h->count;
	p->p50 = llmio_hist_percentile(h, 50);
	p->p99 = llmio_hist_percentile(h, 99);
	/* a cold first repeat and warm later ones make a mixed point, as they should */
	p->service = p->s->service;
	for (size_t i = 0; i < p->n; i++) {
		const struct sample *x = &d->s[p->idx[i]];

		p->service = service_combine(p->service, x->service);
		p->shared_disk |= x->shared_disk;
		p->busy_system |= x->busy_system;
	}
}

/* Samples with equal group keys become one point, in the order of their first record. */
static int group_points(struct dataset *d, struct llmio_hist *scratch)
{
	size_t *order, start = 0;
	double *tmp;
	int ret = -ENOMEM;

	order = malloc((d->n ? d->n : 1) * sizeof(*order));
	tmp = malloc((d->n ? d->n : 1) * sizeof(*tmp));
	d->p = calloc(d->n ? d->n : 1, sizeof(*d->p));
	if (!order || !tmp || !d->p)
		goto out;
	for (size_t i = 0; i < d->n; i++)
		order[i] = i;
	sort_ds = d;
	qsort(order, d->n, sizeof(*order), cmp_sample_idx);
	for (size_t i = 1; i <= d->n; i++) {
		struct point *p;

		if (i < d->n && !strcmp(d->s[order[i]].group, d->s[order[start]].group))
			continue;
		p = &d->p[d->np++];
		p->n = i - start;
		p->idx = malloc(p->n * sizeof(*p->idx));
		if (!p->idx)
			goto out;
		memcpy(p->idx, order + start, p->n * sizeof(*p->idx));
		fold_point(d, p, tmp, scratch);
		start = i;
	}
	qsort(d->p, d->np, sizeof(*d->p), cmp_point_first);
	for (size_t i = 0; i < d->np; i++) {
		d->p[i].s = &d->s[d->p[i].idx[0]];
		d->p[i].all = d->s;
	}
	ret = 0;
out:
	free(order);
	free(tmp);
	return ret;
}

/*
 * Skipped lines are reported as they come once the file has shown itself to be a journal;
 * before the first record they wait, so that a file which is no journal at all gets one
 * error instead of a warning per line.
 */
struct load_state {
	struct dataset *d;
	struct llmio_hist *scratch;
	size_t cap, fcap;
	unsigned long first_line, held;
	char first_why[160];
	int ret;
	void (*progress)(void *arg, unsigned line);
	void *progress_arg;
};

static void print_warning(const struct load_state *s, const char *path, const char *why)
{
	if (s->progress) /* line 0: a line is about to be printed (the caller clears its own) */
		s->progress(s->progress_arg, 0);
	fprintf(stderr, "llmio: %s: %s\n", path, why);
}

static int on_line(void *arg, unsigned line, const cJSON *rec, const char *skipped)
{
	struct load_state *s = arg;

	if (!rec) {
		s->d->skipped_lines++;
		if (s->d->records) {
			print_warning(s, s->d->path, skipped);
		} else if (!s->held++) {
			s->first_line = line;
			snprintf(s->first_why, sizeof(s->first_why), "%s", skipped);
		}
		return 0;
	}
	if (s->held && !s->d->records)
		print_warning(s, s->d->path, s->first_why); /* a journal after all */
	s->ret = add_record(s->d, rec, &s->cap, &s->fcap, s->scratch, line);
	if (s->progress && line % 256 == 0)
		s->progress(s->progress_arg, line);
	return s->ret;
}

int dataset_load(struct dataset *d, const char *path, struct llmio_error *e)
{
	return dataset_load_progress(d, path, NULL, NULL, e);
}

int dataset_load_progress(struct dataset *d, const char *path,
                          void (*progress)(void *arg, unsigned line), void *arg,
                          struct llmio_error *e)
{
	struct load_state s = {.d = d, .progress = progress, .progress_arg = arg};
	int ret;

	memset(d, 0, sizeof(*d));
	d->path = path;
	s.scratch = malloc(sizeof(*s.scratch));
	if (!s.scratch)
		return -ENOMEM;
	ret = journal_read(path, on_line, &s, e);
	if (ret < 0 && !s.ret) {
		llmio_err(e, ret, "cannot open %s: %s; give the journal `llmio sweep -o` wrote",
		          path, strerror(-ret));
		goto out_free;
	}
	if (s.ret) {
		ret = s.ret;
		llmio_err(e, ret, "cannot read %s: %s", path, strerror(-ret));
		goto out_free;
	}
	ret = group_points(d, s.scratch);
	if (!ret)
		ret = find_varying(d);
	if (ret) {
		llmio_err(e, ret, "out of memory grouping %s", path);
	} else if (!d->records) {
		char detail[200] = "";

		if (s.held)
			snprintf(detail, sizeof(detail), "; %s", s.first_why);
		ret = -ENODATA;
		llmio_err(e, ret,
		          "%s holds no sweep records (one JSON object per line, \"record\": "
		          "\"point\"%s); give a journal that `llmio sweep -o` wrote",
		          path, detail);
	}
out_free:
	free(s.scratch);
	if (ret)
		dataset_release(d); /* the caller releases only a loaded dataset */
	return ret;
}

void dataset_release(struct dataset *d)
{
	for (size_t i = 0; i < d->n; i++) {
		cJSON_Delete(d->s[i].config);
		free(d->s[i].group);
		free(d->s[i].pairs);
	}
	for (size_t i = 0; i < d->np; i++) {
		free(d->p[i].idx);
	}
	free(d->s);
	free(d->p);
	free(d->fail);
	for (size_t i = 0; i < d->nvarying; i++)
		free(d->varying[i]);
	free(d->varying);
	for (size_t i = 0; i < d->nengine_keys; i++)
		free(d->engine_keys[i]);
	free(d->engine_keys);
	memset(d, 0, sizeof(*d));
}
