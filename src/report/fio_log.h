/* SPDX-License-Identifier: MIT */
/*
 * fio's averaged logs from a result (write_bw_log, write_lat_log, write_iops_log with
 * log_avg_msec; docs/fio.md): the files fio writes, named and laid out as fio 3.33 writes them,
 * for fio2gnuplot and other readers of fio's logs.
 */
#ifndef LLMIO_REPORT_FIO_LOG_H
#define LLMIO_REPORT_FIO_LOG_H

#include <stdbool.h>

#include "llmio/common.h"
#include "llmio/result.h"

/*
 * Write the averaged logs r's options ask for (log_avg_msec > 0; the per-I/O logs of
 * log_avg_msec 0 were written by the job itself, job/iolog.h), one file per thread N
 * (1-based) and kind, in the current directory as fio does: NAME_bw.N.log (KiB/s),
 * NAME_iops.N.log, NAME_slat.N.log, NAME_clat.N.log, NAME_lat.N.log (mean ns).  Each line is
 * fio's "time, value, direction, bs, [offset,] prio": the end of the interval in ms, its
 * value, 0 read / 1 write, and 0 for the rest (fio's averaged lines carry no block size,
 * offset or priority; the offset column only with log_offset).  *truncated (may be NULL): a
 * thread ran past its log's buffer.  0, or -errno with e naming the file.
 */
int fio_log_write(const struct llmio_result *r, bool *truncated, struct llmio_error *e);

#endif
