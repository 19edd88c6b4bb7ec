/* SPDX-License-Identifier: MIT */
/*
 * Targets: what a job does I/O to — a file, a directory of nrfiles files, or a raw block
 * device — prepared so that measurements are honest (files llmio prepares never have holes;
 * O_DIRECT alignment is checked up front; raw devices are protected) without touching what is
 * not llmio's (a read-only job reads an existing file as it is), and the facts of the block
 * device underneath so results can name the medium and count device-level bytes.
 */
#ifndef LLMIO_TARGET_H
#define LLMIO_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include "job/irq.h"
#include "llmio/job.h"
#include "llmio/result.h"
#include "base/error.h"

/* The directory llmio makes for a job's own files under a user's --directory (docs/safety.md). */
#define TARGET_WORK_DIR "llmio-work"

struct target {
	unsigned nfiles;
	int *fds;            /* nfiles open descriptors */
	uint64_t *sizes;     /* bytes of each file used by the job */
	char **paths;        /* nfiles paths */
	bool *created;       /* nfiles: this job created the file (fio's unlink removes those) */
	uint64_t total_size; /* sum of sizes */
	bool is_blockdev;
	bool direct;     /* O_DIRECT is set on the fds */
	bool noatime;    /* ask for O_NOATIME (dropped where the kernel refuses) */
	bool writable;   /* opened O_RDWR */
	bool names_only; /* named and sized, neither created nor opened (target_open_names) */
	uint32_t align;  /* O_DIRECT alignment needed for buffer, offset and size */
	char stat_path[LLMIO_PATH_MAX]; /* /sys/dev/block/M:m/stat, "" when no device */
	unsigned irqs[IRQ_MAX];         /* the device's interrupts (job/irq.h) */
	unsigned nirqs;
	struct llmio_device_result dev; /* facts; counters filled by the job */
	/* the layout's progress (llmio_job_opts.prepare_progress): bytes of the files handled */
	uint64_t prep_done, prep_total;
};

/*
 * Open (and create) the job's files.  `writes` says whether the job will write.
 *  - a file is created (O_EXCL) when missing, preallocated with fallocate and filled with
 *    incompressible non-zero data; an existing file the job writes, or one in a directory
 *    llmio made (llmio_work_dir()), has its holes and any missing tail filled the same way,
 *    and is reused untouched when complete;
 *  - an existing file anywhere else, read by a job that only reads, is read as it is (holes
 *    read as zeros); shorter than the job's size it is refused (-EINVAL) unless opts->extend,
 *    which appends the missing tail only;
 *  - --directory files are llmio.0 .. llmio.N-1 inside llmio_work_dir(directory);
 *  - a block device is opened read-only unless opts->allow_destructive; writes to a mounted
 *    device or one with a filesystem / partition-table signature are refused unless
 *    opts->force;
 *  - with opts->direct, bs and the buffers' alignment are checked against the logical block
 *    size, and a filesystem that refuses O_DIRECT is reported with the fix (direct=0).
 * \return 0; -EINVAL for a usage problem (message says which option to change); another
 *         -errno for a runtime failure.  e always holds one line naming the path.
 */
int target_open(struct target *t, const struct llmio_job_opts *opts, bool writes,
                struct llmio_error *e);

/*
 * fio's fill_device without size: the bytes free on the filesystem the job's files go on
 * (statvfs's free blocks, the root-reserved ones included: a job as root may write those), into
 * *bytes; 0 for a block device, whose own size the job takes.  0, or -errno with one line in e.
 */
int target_fs_free(const struct llmio_job_opts *opts, uint64_t *bytes, struct llmio_error *e);

/*
 * The job's files named and sized as target_open() would make them, but neither created, laid
 * out nor opened (fds are -1): for an engine whose I/Os make the files (filecreate).  Each file
 * is one block of bs, so that a pass makes each once.  0, or -errno with one line in e.
 */
int target_open_names(struct target *t, const struct llmio_job_opts *opts, struct llmio_error *e);

/*
 * fio's unlink: remove the files this target created (never one that was there before, nor
 * one the job was given as a device); 0, or the first -errno (each file is tried).
 */
int target_unlink_created(struct target *t, struct llmio_error *e);

struct engine_ops;

/*
 * A target the engine resolves itself (ENGINE_CAP_OWN_TARGET: s3://bucket/key): its names and
 * sizes become the job's files, with no descriptors (fds are -1) and no block device.
 * eopts: the engine's parsed options.  0, or -errno with one line in e.
 */
int target_open_engine(struct target *t, const struct llmio_job_opts *opts, bool writes,
                       const struct engine_ops *eng, const void *eopts, struct llmio_error *e);

/*
 * Prepare the target of a job as llmio_job_run() would before its first I/O (options checked,
 * engine resolved, files created, filled and checked), then close it: for processes that are
 * about to run jobs on one file (MPI ranks), so that one of them lays it out while the others
 * wait, and they all find it complete.  Targets an engine resolves itself are opened the same
 * way.  Defined in job.c, which resolves the engine.  \return 0, or -errno with one line in e.
 */
int target_prepare_job(const struct llmio_job_opts *opts, struct llmio_error *e);

/* Close the files and free everything; safe on a zeroed or half-opened target. */
void target_close(struct target *t);

/*
 * Cumulative counters of the target's block device: sectors read and written (x512 = bytes),
 * read and write I/Os.  \return 0, or -ENODEV when the target has no block device.
 */
int target_dev_counters(const struct target *t, uint64_t *rd_bytes, uint64_t *wr_bytes,
                        uint64_t *rd_ios, uint64_t *wr_ios);

/* Drop the page cache of the target's files (posix_fadvise DONTNEED after fdatasync). */
int target_invalidate(const struct target *t);

/*
 * Tell the kernel the access pattern of n open files and devices (posix_fadvise() advice,
 * e.g. POSIX_FADV_RANDOM), as fio does when it opens a file.  The advice sets the readahead
 * of each open file description, so a thread with descriptors of its own advises them too.
 * Descriptors < 0 are skipped.  \return 0, or the first -errno.
 */
int target_advise(const int *fds, unsigned n, int advice);

/*
 * Fill buf with the incompressible, non-zero content llmio writes: a function of (seed,
 * offset) only, so any range can be regenerated for verification.  off and len multiples
 * of 8.
 */
void target_pattern(void *buf, size_t len, uint64_t off, uint64_t seed);

#endif
