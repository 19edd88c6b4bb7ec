/* SPDX-License-Identifier: MIT */
/* Terminal tables: the reporting layer is the only place that prints results. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/fmt.h"

static void print_op(FILE *f, const char *name, const struct llmio_op_result *op, double rt)
{
	char iops[32], total[32], v[LLMIO_NPCT][32], slat[32], line[192];
	int n;

	if (!op->ios)
		return;
	fmt_count(iops, sizeof(iops), op->iops);
	llmio_format_bytes(op->bytes, total, sizeof(total));
	fprintf(f, "  %-6s %s IOPS, %.3f GB/s (%.3f GiB/s), %s in %.2f s\n", name, iops,
	        op->bw_bytes / 1e9, op->bw_bytes / 1073741824.0, total, rt);
	for (int i = 0; i < LLMIO_NPCT; i++)
		fmt_ns(v[i], sizeof(v[i]), llmio_hist_percentile(&op->clat, llmio_percentiles[i]));
	fmt_ns(slat, sizeof(slat), (uint64_t)llmio_hist_mean(&op->slat));
	/* the maximum on a line of its own when the widest values would pass FMT_COLUMNS */
	n = snprintf(line, sizeof(line),
	             "         clat p50 %s  p90 %s  p99 %s  p99.9 %s  p99.99 %s", v[1], v[2], v[3],
	             v[4], v[5]);
	if (n > 0 && (size_t)n + 6 + strlen(v[6]) > FMT_COLUMNS)
		fprintf(f, "%s\n         clat max %s\n", line, v[6]);
	else
		fprintf(f, "%s  max %s\n", line, v[6]);
	if (op->slat.max) /* synchronous engines submit and complete in one call */
		fprintf(f, "         slat mean %s\n", slat);
}

void table_print_result(FILE *f, const struct llmio_result *r)
{
	const struct llmio_job_opts *o = &r->opts;
	char bs[32], rd[32], wr[32];

	llmio_format_bytes(o->bs, bs, sizeof(bs));
	fprintf(f, "%s %s bs=%s iodepth=%u numjobs=%u direct=%d%s%s\n", o->engine,
	        llmio_rw_name(o->rw), bs, o->iodepth, o->numjobs, r->direct_in_effect,
	        r->interrupted ? "  [interrupted]" : "", r->error ? "  [stopped by an error]" : "");
	if (r->engine_notes[0])
		fmt_wrapped(f, "  notes: ", 9, r->engine_notes);
	print_op(f, "read", &r->read, r->runtime_s);
	print_op(f, "write", &r->write, r->runtime_s);
	print_op(f, "trim", &r->trim, r->runtime_s);
	if (r->fsyncs) {
		char p50[32], p99[32];

		fmt_ns(p50, sizeof(p50), llmio_hist_percentile(&r->sync_lat, 50));
		fmt_ns(p99, sizeof(p99), llmio_hist_percentile(&r->sync_lat, 99));
		fprintf(f, "  fsync  %llu calls, p50 %s, p99 %s\n", (unsigned long long)r->fsyncs,
		        p50, p99);
	}
	/* two lines, so that the table fits FMT_COLUMNS */
	fprintf(f,
	        "  cpu    %.2f cores busy (usr %.3f s, sys %.3f s, incl. kernel I/O threads); "
	        "ctx %llu\n"
	        "         system %.2f of %u cores busy; %.2f GB/s per core\n",
	        r->cpu.cores_busy, r->cpu.usr_s, r->cpu.sys_s,
	        (unsigned long long)(r->cpu.ctx_voluntary + r->cpu.ctx_involuntary),
	        r->cpu.system_cores_busy, r->cpu.online_cpus, r->gb_per_s_per_core);
	if (r->wire.known) {
		const double gb = (double)(r->read.bytes + r->write.bytes) / 1e9;
		char text[512];

		/* an object store: the network's figures stand where a device's would; wrapped to
		 * fit FMT_COLUMNS */
		llmio_format_bytes(r->wire.rx_bytes, rd, sizeof(rd));
		llmio_format_bytes(r->wire.tx_bytes, wr, sizeof(wr));
		snprintf(text, sizeof(text),
		         "received %s, sent %s in %llu requests (curl's counters, headers "
		         "included); %llu retried after 503/500",
		         rd, wr, (unsigned long long)r->wire.requests,
		         (unsigned long long)r->wire.retries);
		fmt_wrapped(f, "  wire   ", 9, text);
		snprintf(text, sizeof(text),
		         "process threads %.3f s (hashing %.3f s, copies %.3f s among them); "
		         "softirq %.3f s on all CPUs (system-wide, network receive among it)",
		         r->cpu.proc_s, r->wire.hash_s, r->wire.copy_s, r->softirq_system_s);
		fmt_wrapped(f, "  cpu split: ", 13, text);
		/* the figure the object path is judged by (a GPU engine's copies included) */
		if (r->wire.agent_s > 0) {
			snprintf(text, sizeof(text),
			         "%.3f s (the off-host client STAND-IN: the CPU a DPU would take "
			         "off "
			         "the host; hashing and copies above are its)",
			         r->wire.agent_s);
			fmt_wrapped(f, "  agent process ", 16, text);
		}
		if (gb > 0 && r->wire.agent_s > 0)
			fprintf(f,
			        "  host CPU %.2f CPU-s per GB moved by the application, %.2f by "
			        "the "
			        "agent\n",
			        r->cpu.proc_s / gb, r->wire.agent_s / gb);
		else if (gb > 0)
			fprintf(f, "  host CPU %.2f CPU-s per GB moved (process threads)\n",
			        r->cpu.proc_s / gb);
	} else if (r->device.known) {
		llmio_format_bytes(r->device.read_bytes, rd, sizeof(rd));
		llmio_format_bytes(r->device.write_bytes, wr, sizeof(wr));
		char text[512];

		/* a long model name would pass FMT_COLUMNS: wrapped */
		snprintf(text, sizeof(text), "%s (%s%s%s, %s, lbs %u): read %s, written %s",
		         r->device.name, r->device.fstype[0] ? r->device.fstype : "raw",
		         r->device.model[0] ? ", " : "", r->device.model,
		         r->device.scheduler[0] ? r->device.scheduler : "no scheduler",
		         r->device.logical_block_size, rd, wr);
		fmt_wrapped(f, "  device ", 9, text);
	} else if (r->target_bytes && r->opts.filename[0] + r->opts.directory[0]) {
		fprintf(f,
		        "  device none (%s): no block device under the target, so no device "
		        "counters\n",
		        r->device.fstype[0] ? r->device.fstype : "unknown filesystem");
	}
	if (r->process_io.known && !r->wire.known) {
		llmio_format_bytes(r->process_io.read_bytes, rd, sizeof(rd));
		llmio_format_bytes(r->process_io.write_bytes, wr, sizeof(wr));
		fprintf(f, "  process this process read %s, wrote %s (/proc/self/io)\n", rd, wr);
	}
	if (r->read.bytes + r->write.bytes) {
		char served[64];

		snprintf(served, sizeof(served), "  served %s: ", llmio_service_name(r->service));
		fmt_wrapped(f, served, 9, r->service_reason);
	}
	if (r->shared_disk)
		fmt_wrapped(f, "  WARNING ", 10, r->shared_disk_warning);
	if (r->busy_system)
		fmt_wrapped(f, "  WARNING ", 10, r->busy_system_warning);
	if (r->error)
		fmt_wrapped(f, "  error  ", 9, r->error_msg);
}

/*
 * The piece of s that fits width columns: up to the last space that fits (a word longer than
 * width is cut).  *next is where the following piece starts (spaces skipped).
 */
static size_t piece(const char *s, size_t width, const char **next)
{
	size_t n = strlen(s), cut;

	if (n <= width) {
		*next = s + n;
		return n;
	}
	for (cut = width; cut > 0 && s[cut] != ' '; cut--)
		;
	if (!cut)
		cut = width;
	*next = s + cut + strspn(s + cut, " ");
	return cut;
}

/* One row of the columns cols[0..n) (keys first), each wrapped within w[col]. */
static void table_row(FILE *f, const struct fmt_table *t, size_t row, const size_t *cols, size_t n,
                      const size_t *w)
{
	const char *rest[FMT_TABLE_MAX_COLS];
	bool more = true;

	for (size_t i = 0; i < n; i++)
		rest[i] = t->cells[row * t->ncols + cols[i]];
	while (more) {
		more = false;
		fprintf(f, "%*s", (int)t->indent, "");
		for (size_t i = 0; i < n; i++) {
			const char *next;
			size_t len = piece(rest[i], w[cols[i]], &next);
			int pad = (int)(w[cols[i]] - len);
			bool right = t->align && t->align[cols[i]] == 'r';

			if (i)
				fputs(t->sep, f);
			if (right)
				fprintf(f, "%*s", pad, "");
			fwrite(rest[i], 1, len, f);
			if (!right && i + 1 < n)
				fprintf(f, "%*s", pad, "");
			rest[i] = next;
			more |= *next != '\0';
		}
		fputc('\n', f);
	}
}

void fmt_table_print(FILE *f, const struct fmt_table *t)
{
	const size_t sep = strlen(t->sep), ncols = t->ncols;
	size_t w[FMT_TABLE_MAX_COLS] = {0}, cols[FMT_TABLE_MAX_COLS], keyw = t->indent, left;
	bool placed[FMT_TABLE_MAX_COLS] = {false}, first = true;

	if (ncols > FMT_TABLE_MAX_COLS || t->nkey > ncols)
		return;
	for (size_t r = 0; r < t->rows; r++)
		for (size_t k = 0; k < ncols; k++)
			if (strlen(t->cells[r * ncols + k]) > w[k])
				w[k] = strlen(t->cells[r * ncols + k]);
	for (size_t k = 0; k < t->nkey; k++)
		keyw += w[k] + (k ? sep : 0);
	left = ncols - t->nkey;
	do {
		size_t n = 0, width = keyw;

		for (size_t k = 0; k < t->nkey; k++)
			cols[n++] = k;
		/*
		 * The columns in their order, each that still fits (first fit: a narrow column
		 * may join a table before a wide one that went on); a column too wide even alone
		 * beside the keys is wrapped within what is left.
		 */
		for (size_t c = t->nkey; c < ncols; c++) {
			if (placed[c])
				continue;
			if (width + sep + w[c] > FMT_COLUMNS) {
				if (n > t->nkey)
					continue;
				w[c] = FMT_COLUMNS > width + sep + 12 ? FMT_COLUMNS - width - sep
				                                      : 12;
			}
			width += sep + w[c];
			cols[n++] = c;
			placed[c] = true;
			left--;
		}
		if (!first) /* a further table */
			fputc('\n', f);
		first = false;
		for (size_t r = 0; r < t->rows; r++)
			table_row(f, t, r, cols, n, w);
	} while (left);
}
