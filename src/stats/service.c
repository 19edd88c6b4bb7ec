/* SPDX-License-Identifier: MIT */
/*
 * Who served a job's bytes -- the block device or the page cache -- and whether the figures
 * came from a shared disk or a busy machine.  One rule for every reader: results, recipes'
 * notes, the sweep journal, `report` and `advise` (docs/metrics.md, "Page cache or device").
 *
 * The process witness (/proc/self/io read_bytes) is preferred over the disk's counters because
 * the disk counts every program's I/O.  Writes are different: write_bytes is charged when a
 * page is dirtied, so for buffered writes it says nothing about the device; only an fsync in
 * the window or the disk's own write counters show the data reached it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llmio/result.h"

/* a share of the requested bytes at or above this came from the device */
#define DEVICE_FRAC 0.90
/* below this, most of it came from memory */
#define CACHE_FRAC 0.50
/* the disk did other I/O when it moved more than this times the witness plus the slack */
#define SHARED_FACTOR 1.5
#define SHARED_SLACK  (8ull << 20) /* filesystem metadata, journal, readahead of neighbours */
/* the machine was busy when other work used more than this share of the online CPUs ... */
#define BUSY_FRAC 0.25
/* ... and at least this many cores */
#define BUSY_MIN_CORES 0.5

const char *llmio_service_name(enum llmio_service s)
{
	switch (s) {
	case LLMIO_SERVICE_DEVICE:
		return "device";
	case LLMIO_SERVICE_PAGE_CACHE:
		return "page-cache";
	case LLMIO_SERVICE_MIXED:
		return "mixed";
	default:
		return "unknown";
	}
}

static enum llmio_service by_frac(double frac)
{
	if (frac >= DEVICE_FRAC)
		return LLMIO_SERVICE_DEVICE;
	return frac < CACHE_FRAC ? LLMIO_SERVICE_PAGE_CACHE : LLMIO_SERVICE_MIXED;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static enum llmio_service read_verdict(const struct llmio_service_facts *f, char *why, size_t len)
{
	const uint64_t req = f->read_bytes;
	uint64_t seen;
	enum llmio_service v;
	char r[32];

	llmio_format_bytes(req, r, sizeof(r));
	if (f->witness.known) {
		seen = f->witness.read_bytes;
	} else if (f->device_known) {
		seen = f->device_read_bytes;
	} else {
		snprintf(why, len,
		         "reads: no block device and no per-process I/O accounting to tell cache "
		         "from device");
		return LLMIO_SERVICE_UNKNOWN;
	}
	v = by_frac((double)seen / (double)req);
	if (v != LLMIO_SERVICE_DEVICE && !f->device_known) {
		/* a network or FUSE filesystem fetches without block reads the witness sees */
		snprintf(why, len,
		         "reads: no block device under the files and the process read %.1f%% of "
		         "%s from storage: cannot tell a network filesystem from the page cache",
		         pct(seen, req), r);
		return LLMIO_SERVICE_UNKNOWN;
	}
	snprintf(why, len, "device read %.1f%% of %s requested%s", pct(seen, req), r,
	         f->witness.known ? "" : " (disk counters: no per-process accounting)");
	return v;
}

static enum llmio_service write_verdict(const struct llmio_service_facts *f, char *why, size_t len)
{
	const uint64_t req = f->write_bytes;
	uint64_t dev;
	char w[32];

	if (f->fsyncs) {
		snprintf(why, len, "buffered writes synced in the window (%llu fsync)",
		         (unsigned long long)f->fsyncs);
		return LLMIO_SERVICE_DEVICE;
	}
	llmio_format_bytes(req, w, sizeof(w));
	if (!f->device_known) {
		snprintf(
		        why, len,
		        "buffered writes of %s without fsync and no block device to see them reach "
		        "it",
		        w);
		return LLMIO_SERVICE_UNKNOWN;
	}
	dev = f->device_write_bytes < req ? f->device_write_bytes : req;
	snprintf(why, len, "buffered writes without fsync: device wrote %.1f%% of %s",
	         pct(dev, req), w);
	return by_frac((double)dev / (double)req);
}

static bool in_memory_fs(const char *fstype)
{
	return fstype && (!strcmp(fstype, "tmpfs") || !strcmp(fstype, "ramfs"));
}

enum llmio_service llmio_service_classify(const struct llmio_service_facts *f, char *reason,
                                          size_t len)
{
	char rw[160], ww[160], scratch[8];
	enum llmio_service rv, wv;

	if (!reason) {
		reason = scratch;
		len = sizeof(scratch);
	}
	if (!f->read_bytes && !f->write_bytes) {
		snprintf(reason, len, "no bytes moved");
		return LLMIO_SERVICE_UNKNOWN;
	}
	/* first: tmpfs accepts O_DIRECT (Linux 6.6 and later) and still serves from memory */
	if (in_memory_fs(f->fstype)) {
		snprintf(reason, len, "files on %s live in memory: no device below", f->fstype);
		return LLMIO_SERVICE_PAGE_CACHE;
	}
	if (f->direct) {
		snprintf(reason, len, "O_DIRECT: every byte from or to the device");
		return LLMIO_SERVICE_DEVICE;
	}
	if (!f->write_bytes)
		return read_verdict(f, reason, len);
	if (!f->read_bytes)
		return write_verdict(f, reason, len);
	rv = read_verdict(f, rw, sizeof(rw));
	wv = write_verdict(f, ww, sizeof(ww));
	snprintf(reason, len, "%s; %s", rw, ww);
	if (rv == wv)
		return rv;
	if (rv == LLMIO_SERVICE_UNKNOWN || wv == LLMIO_SERVICE_UNKNOWN)
		return LLMIO_SERVICE_UNKNOWN;
	return LLMIO_SERVICE_MIXED;
}

void llmio_result_service_facts(const struct llmio_result *r, struct llmio_service_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->direct = r->direct_in_effect;
	f->read_bytes = r->read.bytes;
	f->write_bytes = r->write.bytes;
	f->fsyncs = r->fsyncs;
	f->fstype = r->device.fstype;
	f->witness = r->process_io;
	f->device_known = r->device.known;
	f->device_read_bytes = r->device.read_bytes;
	f->device_write_bytes = r->device.write_bytes;
}

static bool exceeds(uint64_t disk, uint64_t mine)
{
	return (double)disk > SHARED_FACTOR * (double)mine + (double)SHARED_SLACK;
}

static void judge_shared(struct llmio_result *r)
{
	const struct llmio_device_result *d = &r->device;
	const struct llmio_process_io *w = &r->process_io;
	char dr[32], dw[32], wr[32], ww[32];

	r->shared_disk = false;
	r->shared_disk_warning[0] = '\0';
	if (!d->known || !w->known ||
	    !(exceeds(d->read_bytes, w->read_bytes) || exceeds(d->write_bytes, w->write_bytes)))
		return;
	r->shared_disk = true;
	llmio_format_bytes(d->read_bytes, dr, sizeof(dr));
	llmio_format_bytes(d->write_bytes, dw, sizeof(dw));
	llmio_format_bytes(w->read_bytes, wr, sizeof(wr));
	llmio_format_bytes(w->write_bytes, ww, sizeof(ww));
	snprintf(r->shared_disk_warning, sizeof(r->shared_disk_warning),
	         "other I/O shared the disk: %s read %s and wrote %s in the window, this process "
	         "read %s and wrote %s (other programs, or writeback of earlier writes)",
	         d->name, dr, dw, wr, ww);
}

static void judge_busy(struct llmio_result *r)
{
	const struct llmio_cpu_result *c = &r->cpu;
	double other = c->system_cores_busy - c->cores_busy;
	double limit = fmax(BUSY_MIN_CORES, BUSY_FRAC * (double)c->online_cpus);

	r->busy_system = other > limit;
	r->busy_system_warning[0] = '\0';
	if (r->busy_system)
		snprintf(
		        r->busy_system_warning, sizeof(r->busy_system_warning),
		        "busy machine: other work kept %.2f of %u CPUs busy beyond this job's %.2f "
		        "cores (system %.2f)",
		        other, c->online_cpus, c->cores_busy, c->system_cores_busy);
}

void llmio_result_judge(struct llmio_result *r)
{
	struct llmio_service_facts f;

	llmio_result_service_facts(r, &f);
	r->service = llmio_service_classify(&f, r->service_reason, sizeof(r->service_reason));
	judge_shared(r);
	judge_busy(r);
}
