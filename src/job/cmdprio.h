/* SPDX-License-Identifier: MIT */
/* fio's cmdprio_bssplit: its text parsed into a table per block size (job/cmdprio.c). */
#ifndef LLMIO_JOB_CMDPRIO_H
#define LLMIO_JOB_CMDPRIO_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define CMDPRIO_SIZES_MAX 64      /* fio's BSSPLIT_MAX: entries of one direction's list */
#define CMDPRIO_JOB       0xffffu /* in a table: not picked, the thread's own priority */

/*
 * Direction d's (0 reads, 1 writes) n[d] block sizes bs[d][i], in bytes, and for each the
 * priority of an I/O of that size whose draw in 0..99 is r: prio[d][i][r], an ioprio value
 * (class << 13 | level) or CMDPRIO_JOB.  An I/O of a size not listed is not drawn for.
 */
struct cmdprio_table {
	unsigned n[2];
	uint32_t bs[2][CMDPRIO_SIZES_MAX];
	uint16_t prio[2][CMDPRIO_SIZES_MAX][100];
};

/*
 * text (fio's cmdprio_bssplit: "BS/PCT[/CLASS/LEVEL]:..." per direction, reads,writes) into
 * out; a share without CLASS/LEVEL carries cls and level (cmdprio_class, cmdprio).  0, or
 * -EINVAL with one line in e.
 */
int cmdprio_table_parse(const char *text, unsigned cls, unsigned level, struct cmdprio_table *out,
                        struct llmio_error *e);

/* The row of an I/O of len bytes in direction d (d < 2), or NULL when its size has none. */
static inline const uint16_t *cmdprio_row(const struct cmdprio_table *t, unsigned d, uint32_t len)
{
	for (unsigned i = 0; i < t->n[d]; i++)
		if (t->bs[d][i] == len)
			return t->prio[d][i];
	return NULL;
}

#endif
