/* SPDX-License-Identifier: MIT */
/* `llmio trace dump`: every record of a trace as a line of text (trace/trace_report.h). */
#include <inttypes.h>
#include <stdio.h>

#include "trace/trace_report.h"

void trace_dump(FILE *f, const struct trace *t)
{
	fprintf(f, "# exit_status %d dropped %" PRIu64 " processes %zu records %zu\n",
	        t->hdr.exit_status, t->hdr.dropped, t->nproc, t->nrec);
	for (size_t i = 0; i < t->nproc; i++)
		fprintf(f, "# process %u parent %u images %u records %" PRIu64 " cmd %s\n",
		        t->proc[i].pid, t->proc[i].ppid, t->proc[i].nimages, t->proc[i].nrec,
		        trace_str(t, t->proc[i].cmd));
	for (size_t i = 0; i < t->npev; i++)
		fprintf(f, "# phase %" PRIu64 " pid %u tid %u %s\n", t->pev[i].ts - t->hdr.t_start,
		        t->pev[i].pid, t->pev[i].tid, t->phase_name[t->pev[i].phase]);
	fprintf(f, "# ts_ns pid tid phase type fd offset req result dur_ns path [rename target | "
	           "served=cache|device]\n");
	for (size_t i = 0; i < t->nrec; i++) {
		const struct trace_rec *r = &t->rec[i];
		const char *served = trace_rec_served(r);

		fprintf(f,
		        "%" PRIu64 " %u %u %s %s %d %" PRId64 " %" PRIu64 " %" PRId64 " %" PRIu64
		        " %s%s%s\n",
		        r->ts - t->hdr.t_start, r->pid, r->tid,
		        r->phase ? t->phase_name[r->phase] : "-", trace_type_name(r->type), r->fd,
		        r->offset == TRACE_OFF_NONE ? (int64_t)-1 : (int64_t)r->offset, r->req,
		        r->result, r->dur, trace_rec_path(t, r),
		        r->type == TR_RENAME ? " "
		        : served             ? " served="
		                             : "",
		        r->type == TR_RENAME ? trace_str(t, r->path2)
		        : served             ? (r->path2 == TRACE_SERVED_CACHE ? "cache" : "device")
		                             : "");
	}
}
