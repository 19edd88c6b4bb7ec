/* SPDX-License-Identifier: MIT */
/*
 * The record tables (record.h): every field of every record llmio writes, in the order it is
 * written, with its type, unit, one line of documentation and where its value comes from.
 * A new field is one row here; the writers, the CSV header and docs/output.md follow.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "llmio/hist.h"
#include "llmio/job.h"
#include "llmio/result.h"
#include "stats/record.h"
#include "stats/result_json.h"

#define OFF(m) offsetof(struct llmio_result, m)
/* a field read through its offset in struct llmio_result */
#define AT(k, t, st, m, u, p, d)                                                                   \
	{                                                                                          \
		k, t, u, d, st, OFF(m), NULL, NULL, p                                              \
	}
/* a field computed by a getter */
#define GET(k, t, fn, u, p, d)                                                                     \
	{                                                                                          \
		k, t, u, d, REC_GET, 0, fn, NULL, p                                                \
	}
/* a nested value built by code, documented as one field */
#define OBJ(k, fn, d)                                                                              \
	{                                                                                          \
		k, REC_OBJ, "", d, REC_GET, 0, NULL, fn, 0                                         \
	}

static void get_engine(const struct llmio_result *r, struct rec_val *v)
{
	v->s = r->opts.engine;
}

static void get_rw(const struct llmio_result *r, struct rec_val *v)
{
	v->s = llmio_rw_name(r->opts.rw);
}

static void get_error(const struct llmio_result *r, struct rec_val *v)
{
	v->num = -r->error;
}

static void get_service(const struct llmio_result *r, struct rec_val *v)
{
	v->s = llmio_service_name(r->service);
}

static void get_device_name(const struct llmio_result *r, struct rec_val *v)
{
	v->s = r->device.known ? r->device.name : "";
}

static void get_proc_read(const struct llmio_result *r, struct rec_val *v)
{
	v->num = (double)r->process_io.read_bytes;
	v->absent = !r->process_io.known; /* an unknown witness is an empty cell, not a zero */
}

static void get_proc_write(const struct llmio_result *r, struct rec_val *v)
{
	v->num = (double)r->process_io.write_bytes;
	v->absent = !r->process_io.known;
}

#define PCT_GETTER(name, op, p)                                                                    \
	static void name(const struct llmio_result *r, struct rec_val *v)                          \
	{                                                                                          \
		v->num = (double)llmio_hist_percentile(&r->op.clat, p);                            \
	}
PCT_GETTER(get_read_p50, read, 50)
PCT_GETTER(get_read_p99, read, 99)
PCT_GETTER(get_read_p999, read, 99.9)
PCT_GETTER(get_write_p50, write, 50)
PCT_GETTER(get_write_p99, write, 99)
PCT_GETTER(get_write_p999, write, 99.9)

static void get_error_msg(const struct llmio_result *r, struct rec_val *v)
{
	v->s = r->error_msg;
	v->absent = !r->error;
}

static double cpu_runtime(const struct llmio_result *r)
{
	return r->runtime_s > 0 ? r->runtime_s : 1;
}

static void get_job_runtime(const struct llmio_result *r, struct rec_val *v)
{
	v->num = r->runtime_s * 1000;
}

static void get_usr_cpu(const struct llmio_result *r, struct rec_val *v)
{
	v->num = r->cpu.usr_s / cpu_runtime(r) * 100;
}

static void get_sys_cpu(const struct llmio_result *r, struct rec_val *v)
{
	v->num = r->cpu.sys_s / cpu_runtime(r) * 100;
}

static void get_ctx(const struct llmio_result *r, struct rec_val *v)
{
	v->num = (double)(r->cpu.ctx_voluntary + r->cpu.ctx_involuntary);
}

static void get_sync_ios(const struct llmio_result *r, struct rec_val *v)
{
	v->num = (double)r->fsyncs;
}

/*
 * One job of `--json` (fio's layout, then llmio's additions), in the order written.  A key
 * "a.b" is b inside the object a, which the writer opens at its first field.
 */
static const struct rec_field job_fields[] = {
        GET("jobname", REC_STR, get_engine, "", 0, "the engine name (fio: the job's name)"),
        GET(RK_ERROR, REC_INT, get_error, "errno", 0, "errno that stopped the job, 0 if none"),
        GET("error_msg", REC_STR, get_error_msg, "", 0,
            "present when `error` is not 0: one line describing the failure"),
        AT("interrupted", REC_BOOL, REC_B, interrupted, "", 0,
           "stopped early by SIGINT/SIGTERM or `opts->stop`"),
        OBJ(RK_JOB_OPTIONS, result_opts_json,
            "the job options as run, typed and resolved (defaults filled in)"),
        OBJ(RK_READ, result_read_json,
            "reads: `io_bytes`, `io_kbytes`, `bw_bytes`, `bw` (KiB/s), `iops`, `runtime` (ms), "
            "`total_ios`, `slat_ns`, `clat_ns`, `lat_ns`, `gb_per_s`, `gib_per_s`"),
        OBJ(RK_WRITE, result_write_json, "writes, as `read`"),
        OBJ(RK_TRIM, result_trim_json,
            "trims (`rw=trim`, `randtrim` with `ioengine=falloc`), as `read`; 0 for another job"),
        GET(RK_SYNC "." RK_TOTAL_IOS, REC_INT, get_sync_ios, "", 0,
            "fsync calls (msync for mmap) in the window"),
        OBJ(RK_SYNC ".lat_ns", result_sync_lat_json, "their latency, as `read.lat_ns`"),
        GET(RK_JOB_RUNTIME, REC_NUM, get_job_runtime, "ms", 0, "measured window"),
        GET("usr_cpu", REC_NUM, get_usr_cpu, "%", 0,
            "user CPU of the whole process, percent of `job_runtime`"),
        GET("sys_cpu", REC_NUM, get_sys_cpu, "%", 0,
            "system CPU of the whole process, percent of `job_runtime`"),
        GET("ctx", REC_INT, get_ctx, "", 0, "voluntary + involuntary context switches"),
        AT("iodepth_effective", REC_INT, REC_U32, iodepth_effective, "", 0,
           "`iodepth`, or 1 for synchronous engines and buffered libaio"),
        AT(RK_DIRECT_IN_EFFECT, REC_BOOL, REC_B, direct_in_effect, "", 0,
           "O_DIRECT set on the open files, or an engine of NVMe commands (uring_cmd, spdk)"),
        AT("engine_notes", REC_STR, REC_CHARS, engine_notes, "", 0,
           "what the engine did, with its fallbacks"),
        AT("target_bytes", REC_INT, REC_U64, target_bytes, "bytes", 0,
           "bytes of the target the job addresses"),
        AT(RK_CPU ".usr_s", REC_NUM, REC_DOUBLE, cpu.usr_s, "s", 0,
           "user CPU time of every task of the process"),
        AT(RK_CPU ".sys_s", REC_NUM, REC_DOUBLE, cpu.sys_s, "s", 0, "system CPU time of the same"),
        AT(RK_CPU ".proc_s", REC_NUM, REC_DOUBLE, cpu.proc_s, "s", 0, "`usr_s` + `sys_s`"),
        AT(RK_CPU "." RK_CORES_BUSY, REC_NUM, REC_DOUBLE, cpu.cores_busy, "cores", 0,
           "`proc_s` / window"),
        AT(RK_CPU ".system_busy_s", REC_NUM, REC_DOUBLE, cpu.system_busy_s, "s", 0,
           "busy time of all CPUs (/proc/stat)"),
        AT(RK_CPU ".system_cores_busy", REC_NUM, REC_DOUBLE, cpu.system_cores_busy, "cores", 0,
           "`system_busy_s` / window"),
        AT(RK_CPU ".online_cpus", REC_INT, REC_U32, cpu.online_cpus, "", 0, "CPUs online"),
        AT(RK_CPU ".ctx_voluntary", REC_INT, REC_U64, cpu.ctx_voluntary, "", 0,
           "voluntary context switches"),
        AT(RK_CPU ".ctx_involuntary", REC_INT, REC_U64, cpu.ctx_involuntary, "", 0,
           "involuntary context switches"),
        AT(RK_CPU ".softirq_system_s", REC_NUM, REC_DOUBLE, softirq_system_s, "s", 0,
           "softirq time of all CPUs (/proc/stat): network receive among it; system-wide, "
           "not this process's alone"),
        AT(RK_GB_PER_S_PER_CORE, REC_NUM, REC_DOUBLE, gb_per_s_per_core, "GB/s", 0,
           "(read + write GB/s) / `cores_busy`"),
        AT(RK_DEVICE "." RK_KNOWN, REC_BOOL, REC_B, device.known, "", 0,
           "a block device is under the target (false on tmpfs, overlay)"),
        AT(RK_DEVICE ".name", REC_STR, REC_CHARS, device.name, "", 0, "block device name"),
        AT(RK_DEVICE ".model", REC_STR, REC_CHARS, device.model, "", 0, "device model"),
        AT(RK_DEVICE ".scheduler", REC_STR, REC_CHARS, device.scheduler, "", 0, "I/O scheduler"),
        AT(RK_DEVICE ".rotational", REC_BOOL, REC_B, device.rotational, "", 0, "rotational device"),
        AT(RK_DEVICE ".logical_block_size", REC_INT, REC_U32, device.logical_block_size, "bytes", 0,
           "logical block size"),
        AT(RK_DEVICE ".io_poll", REC_BOOL, REC_B, device.io_poll, "", 0,
           "the queue has poll queues"),
        AT(RK_DEVICE "." RK_FSTYPE, REC_STR, REC_CHARS, device.fstype, "", 0,
           "filesystem of the target, empty for a raw device"),
        AT(RK_DEVICE "." RK_READ_BYTES, REC_INT, REC_U64, device.read_bytes, "bytes", 0,
           "device bytes read in the window (0 when `known` is false)"),
        AT(RK_DEVICE "." RK_WRITE_BYTES, REC_INT, REC_U64, device.write_bytes, "bytes", 0,
           "device bytes written in the window"),
        AT(RK_DEVICE ".read_ios", REC_INT, REC_U64, device.read_ios, "", 0,
           "device reads completed in the window"),
        AT(RK_DEVICE ".write_ios", REC_INT, REC_U64, device.write_ios, "", 0,
           "device writes completed in the window"),
        AT(RK_DEVICE ".irqs", REC_INT, REC_U64, device.irqs, "", 0,
           "the device's interrupts in the window"),
        AT(RK_DEVICE ".irq_cpus", REC_STR, REC_CHARS, device.irq_cpus, "", 0,
           "the CPUs that took them"),
        AT(RK_PROCESS_IO "." RK_KNOWN, REC_BOOL, REC_B, process_io.known, "", 0,
           "the kernel provides /proc/self/io"),
        AT(RK_PROCESS_IO "." RK_READ_BYTES, REC_INT, REC_U64, process_io.read_bytes, "bytes", 0,
           "this process's storage bytes read in the window"),
        AT(RK_PROCESS_IO "." RK_WRITE_BYTES, REC_INT, REC_U64, process_io.write_bytes, "bytes", 0,
           "this process's storage bytes written in the window"),
        AT("wire.known", REC_BOOL, REC_B, wire.known, "", 0,
           "the engine moves bytes over a network (s3) and counted them; device bytes do "
           "not apply then"),
        AT("wire.rx_bytes", REC_INT, REC_U64, wire.rx_bytes, "bytes", 0,
           "bytes received on the wire in the window, HTTP headers included (curl's counters)"),
        AT("wire.tx_bytes", REC_INT, REC_U64, wire.tx_bytes, "bytes", 0, "bytes sent, the same"),
        AT("wire.requests", REC_INT, REC_U64, wire.requests, "", 0, "requests completed"),
        AT("wire.retries", REC_INT, REC_U64, wire.retries, "", 0,
           "requests sent again after 503 SlowDown or 500, with backoff"),
        AT("wire.hash_s", REC_NUM, REC_DOUBLE, wire.hash_s, "s", 0,
           "client CPU hashing payloads (SHA-256, MD5), part of `cpu.proc_s`"),
        AT("wire.copy_s", REC_NUM, REC_DOUBLE, wire.copy_s, "s", 0,
           "client CPU copying payloads where measured apart (0 when not separable)"),
        AT("wire.agent_s", REC_NUM, REC_DOUBLE, wire.agent_s, "s", 0,
           "CPU of the separate agent process that ran the client (s3-agent, a stand-in for "
           "an off-host client on a DPU); not part of `cpu.proc_s`, and hashing and copies "
           "are then the agent's"),
        GET(RK_SERVICE, REC_STR, get_service, "", 0,
            "who served the bytes: `device`, `page-cache`, `mixed` or `unknown`"),
        AT(RK_SERVICE_REASON, REC_STR, REC_CHARS, service_reason, "", 0, "why (the numbers)"),
        AT(RK_SHARED_DISK, REC_BOOL, REC_B, shared_disk, "", 0,
           "the disk did far more I/O than this process"),
        AT(RK_BUSY_SYSTEM, REC_BOOL, REC_B, busy_system, "", 0,
           "other work kept the CPUs busy beyond the job"),
        OBJ("warnings", result_warnings_json,
            "one sentence per flag raised, naming both numbers; empty when none"),
        OBJ(RK_HISTOGRAM, result_histogram_json,
            "`scheme`, then `read` and `write`, each with `clat_ns` and `lat_ns` as "
            "`[bucket index, count]` pairs of the non-empty buckets"),
        {0},
};

/* `--csv`: one line per result, in this column order (docs/output.md, CSV). */
static const struct rec_field csv_fields[] = {
        GET("engine", REC_STR, get_engine, "", 0, "engine, as asked"),
        GET("rw", REC_STR, get_rw, "", 0, "I/O pattern, as asked"),
        AT("bs", REC_INT, REC_U64, opts.bs, "bytes", 0, "block size, as asked"),
        AT("iodepth", REC_INT, REC_U32, opts.iodepth, "", 0, "I/Os in flight per thread, as asked"),
        AT("numjobs", REC_INT, REC_U32, opts.numjobs, "", 0, "threads, as asked"),
        AT("direct", REC_BOOL, REC_B, direct_in_effect, "", 0, "`direct_in_effect`, 0/1"),
        AT("runtime_s", REC_NUM, REC_DOUBLE, runtime_s, "s", 6, "measured window"),
        AT("read_iops", REC_NUM, REC_DOUBLE, read.iops, "1/s", 1, "read IOPS"),
        AT("read_bw_bytes", REC_NUM, REC_DOUBLE, read.bw_bytes, "bytes/s", 1, "read bandwidth"),
        GET("read_clat_p50_ns", REC_INT, get_read_p50, "ns", 0,
            "read clat p50; 0 when there were no reads"),
        GET("read_clat_p99_ns", REC_INT, get_read_p99, "ns", 0, "read clat p99"),
        GET("read_clat_p999_ns", REC_INT, get_read_p999, "ns", 0, "read clat p99.9"),
        AT("write_iops", REC_NUM, REC_DOUBLE, write.iops, "1/s", 1, "write IOPS"),
        AT("write_bw_bytes", REC_NUM, REC_DOUBLE, write.bw_bytes, "bytes/s", 1, "write bandwidth"),
        GET("write_clat_p50_ns", REC_INT, get_write_p50, "ns", 0,
            "write clat p50; 0 when there were no writes"),
        GET("write_clat_p99_ns", REC_INT, get_write_p99, "ns", 0, "write clat p99"),
        GET("write_clat_p999_ns", REC_INT, get_write_p999, "ns", 0, "write clat p99.9"),
        AT("usr_s", REC_NUM, REC_DOUBLE, cpu.usr_s, "s", 6,
           "process user CPU time (kernel I/O threads included)"),
        AT("sys_s", REC_NUM, REC_DOUBLE, cpu.sys_s, "s", 6, "process system CPU time"),
        AT("cores_busy", REC_NUM, REC_DOUBLE, cpu.cores_busy, "cores", 4,
           "process CPU time / window (metrics.md)"),
        AT("system_cores_busy", REC_NUM, REC_DOUBLE, cpu.system_cores_busy, "cores", 4,
           "busy time of all CPUs / window (metrics.md)"),
        AT("gb_per_s_per_core", REC_NUM, REC_DOUBLE, gb_per_s_per_core, "GB/s", 4,
           "(read + write GB/s) / cores_busy"),
        GET("device", REC_STR, get_device_name, "", 0,
            "block device name, empty when there is none"),
        AT("dev_read_bytes", REC_INT, REC_U64, device.read_bytes, "bytes", 0,
           "device bytes read in the window"),
        AT("dev_write_bytes", REC_INT, REC_U64, device.write_bytes, "bytes", 0,
           "device bytes written in the window"),
        AT("interrupted", REC_BOOL, REC_B, interrupted, "", 0, "stopped early, 0/1"),
        GET("error", REC_INT, get_error, "errno", 0, "errno that stopped the run, 0 if none"),
        GET("proc_read_bytes", REC_INT, get_proc_read, "bytes", 0,
            "the process witness (`process_io`) read; empty when unknown"),
        GET("proc_write_bytes", REC_INT, get_proc_write, "bytes", 0,
            "the process witness written; empty when unknown"),
        GET("service", REC_STR, get_service, "", 0, "`device`, `page-cache`, `mixed` or `unknown`"),
        AT("shared_disk", REC_BOOL, REC_B, shared_disk, "", 0, "other I/O shared the disk, 0/1"),
        AT("busy_system", REC_BOOL, REC_B, busy_system, "", 0,
           "other work kept the CPUs busy, 0/1"),
        {0},
};

/* A field whose writer has no struct llmio_result (recipe runs, journals): described only. */
#define DOC(k, t, u, d)                                                                            \
	{                                                                                          \
		k, t, u, d, REC_GET, 0, NULL, NULL, 0                                              \
	}

/* `run --workload --json`: one object per engine under "runs" (src/workload/workload.c). */
static const struct rec_field recipe_fields[] = {
        DOC(RK_WORKLOAD, REC_STR, "", "the recipe's name"),
        DOC(RK_MODEL, REC_STR, "", "the model's name, empty when the recipe takes none"),
        DOC(RK_ENGINE, REC_STR, "", "the engine every stream ran on"),
        DOC(RK_DIRECT, REC_BOOL, "", "O_DIRECT asked"),
        DOC(RK_PARAMS, REC_OBJ, "",
            "every parameter of the recipe as resolved (strings), and `scale` (a number)"),
        DOC(RK_PHASES, REC_OBJ, "", "the phases in the order run, each a phase record"),
        {0},
};

/* One entry of "phases" in a recipe run (workload.c) or a journal record (sweep/point.c). */
static const struct rec_field phase_fields[] = {
        DOC(RK_NAME, REC_STR, "", "the phase's name (`run` for a plain job in a journal)"),
        DOC(RK_WALL_S, REC_NUM, "s", "wall time of the phase"),
        DOC(RK_PROMISED_BYTES, REC_INT, "bytes",
            "bytes the recipe promised to move (recipe runs only)"),
        DOC(RK_NOTE, REC_STR, "", "what the phase did, in words (recipe runs only)"),
        DOC(RK_METRICS, REC_OBJ, "",
            "the recipe's own figures by name, numbers (recipe runs only)"),
        DOC(RK_JOBS, REC_OBJ, "",
            "one job record per stream; in a recipe run each also has `stream`, its name"),
        {0},
};

/* One line of a sweep journal (src/sweep/point.c), one per point run. */
static const struct rec_field journal_fields[] = {
        DOC(RK_LLMIO, REC_STR, "", "version of the llmio that wrote the record"),
        DOC(RK_RECORD, REC_STR, "", "`point`"),
        DOC(RK_CONFIG_HASH, REC_STR, "", "16 hex digits naming the point's configuration"),
        DOC(RK_SWEEP, REC_OBJ, "", "`file`, `section`, `point` (index), `points`, `repeat`"),
        DOC(RK_CONFIG, REC_OBJ, "", "the point's keys and values as the sweep file set them"),
        DOC(RK_WORKLOAD, REC_STR, "", "the recipe's name, or `job`"),
        DOC(RK_HOST, REC_OBJ, "", "`hostname`, `kernel`, `cpu_model`, `online_cpus`"),
        DOC(RK_CACHE_DROPPED, REC_BOOL, "", "the page cache of the target was dropped before"),
        DOC(RK_STEADY_STATE, REC_OBJ, "",
            "`enabled`, `reached`, `metric`, `window_s`, `tolerance_pct`, `test` (`range`, "
            "`ci`), `interval_s`, `samples`, `ci_pct` (ci), `min_s`, `max_s`, `measured_s`"),
        DOC(RK_START_EPOCH_MS, REC_INT, "ms", "start of the point, Unix time"),
        DOC(RK_WALL_S, REC_NUM, "s", "wall time of the point"),
        DOC(RK_PHASES, REC_OBJ, "", "the phases run, each a phase record"),
        DOC(RK_ERROR, REC_OBJ, "", "present when the point failed: `code` (-errno), `message`"),
        {0},
};

/* "mpi" beside "jobs" (run) or "phases" (recipes, journal points) under mpirun (src/mpi). */
static const struct rec_field mpi_fields[] = {
        DOC(RK_RANKS, REC_INT, "", "MPI ranks that ran"),
        DOC(RK_HOSTS, REC_INT, "", "distinct hosts among them (grouped by host name)"),
        DOC(RK_FILE_LAYOUT, REC_STR, "",
            "`file-per-process` or `shared-file` (`run` only, docs/mpi.md)"),
        DOC(RK_PHASE_S, REC_NUM, "s",
            "earliest start to latest end over the ranks (IOR); the aggregate's `job_runtime`"),
        DOC(RK_START_SKEW_S, REC_NUM, "s", "latest start - earliest start, after the barrier"),
        DOC(RK_BY_HOST, REC_OBJ, "", "one `mpi.by_host[]` record per host"),
        DOC(RK_PER_RANK, REC_OBJ, "", "one `mpi.per_rank[]` record per rank"),
        DOC(RK_STREAMS, REC_OBJ, "",
            "recipes and journal points: one object per stream of each phase, with `phase`, "
            "`stream` and the keys above for that stream"),
        DOC(RK_PHASE, REC_STR, "", "in `streams[]`: the phase's name"),
        DOC(RK_STREAM, REC_STR, "", "in `streams[]`: the stream's name"),
        {0},
};

static const struct rec_field mpi_host_fields[] = {
        DOC(RK_HOST, REC_STR, "", "host name (`LLMIO_HOSTNAME` when set)"),
        DOC(RK_RANKS, REC_OBJ, "", "the ranks on it, an array"),
        DOC(RK_PROC_S, REC_NUM, "s", "CPU time of its ranks' processes, summed"),
        DOC("system_busy_s", REC_NUM, "s", "busy time of its CPUs (/proc/stat), once per host"),
        DOC(RK_DEVICE, REC_STR, "", "the block device its first rank measured"),
        DOC(RK_DEVICE "_" RK_READ_BYTES, REC_INT, "bytes", "device bytes read, once per host"),
        DOC(RK_DEVICE "_" RK_WRITE_BYTES, REC_INT, "bytes", "device bytes written, once per host"),
        {0},
};

static const struct rec_field mpi_rank_fields[] = {
        DOC(RK_RANK, REC_INT, "", "MPI rank"),
        DOC(RK_HOST, REC_STR, "", "its host name"),
        DOC(RK_JOB, REC_OBJ, "",
            "its own job record (`run`), or `phases` (recipes, journal points)"),
        {0},
};

static const struct rec_field *const tables[REC_KIND_N] = {
        [REC_KIND_JOB] = job_fields,           [REC_KIND_CSV] = csv_fields,
        [REC_KIND_RECIPE] = recipe_fields,     [REC_KIND_PHASE] = phase_fields,
        [REC_KIND_JOURNAL] = journal_fields,   [REC_KIND_MPI] = mpi_fields,
        [REC_KIND_MPI_HOST] = mpi_host_fields, [REC_KIND_MPI_RANK] = mpi_rank_fields,
};

static const char *const kind_names[REC_KIND_N] = {
        [REC_KIND_JOB] = "job",           [REC_KIND_CSV] = "csv",
        [REC_KIND_RECIPE] = "recipe",     [REC_KIND_PHASE] = "phase",
        [REC_KIND_JOURNAL] = "journal",   [REC_KIND_MPI] = "mpi",
        [REC_KIND_MPI_HOST] = "mpi_host", [REC_KIND_MPI_RANK] = "mpi_rank",
};

const struct rec_field *rec_fields(enum rec_kind kind)
{
	static const struct rec_field none[] = {{0}};

	return kind < REC_KIND_N && tables[kind] ? tables[kind] : none;
}

const char *rec_kind_name(enum rec_kind kind)
{
	return kind < REC_KIND_N ? kind_names[kind] : "?";
}

void rec_value(const struct rec_field *f, const struct llmio_result *r, struct rec_val *v)
{
	const char *p = (const char *)r + f->off;

	memset(v, 0, sizeof(*v));
	switch (f->store) {
	case REC_GET:
		if (f->get)
			f->get(r, v);
		else
			v->absent = true;
		break;
	case REC_DOUBLE:
		memcpy(&v->num, p, sizeof(double));
		break;
	case REC_U64: {
		uint64_t x;

		memcpy(&x, p, sizeof(x));
		v->num = (double)x;
		break;
	}
	case REC_U32: {
		uint32_t x;

		memcpy(&x, p, sizeof(x));
		v->num = x;
		break;
	}
	case REC_I32: {
		int x;

		memcpy(&x, p, sizeof(x));
		v->num = x;
		break;
	}
	case REC_B: {
		bool x;

		memcpy(&x, p, sizeof(x));
		v->num = x;
		break;
	}
	case REC_CHARS:
		v->s = p;
		break;
	}
}

int rec_csv_header(FILE *f)
{
	int ret = 0;

	for (const struct rec_field *c = csv_fields; c->key && ret >= 0; c++)
		ret = fprintf(f, "%s%s", c == csv_fields ? "" : ",", c->key);
	if (ret >= 0)
		ret = fputc('\n', f) == EOF ? -1 : 0;
	return ret < 0 ? -EIO : 0;
}

int rec_csv_row(FILE *f, const struct llmio_result *r)
{
	int ret = 0;

	for (const struct rec_field *c = csv_fields; c->key && ret >= 0; c++) {
		struct rec_val v;

		rec_value(c, r, &v);
		if (c != csv_fields && fputc(',', f) == EOF)
			return -EIO;
		if (v.absent)
			continue;
		if (c->type == REC_STR)
			ret = fputs(v.s ? v.s : "", f) == EOF ? -1 : 0;
		else if (c->type == REC_NUM)
			ret = fprintf(f, "%.*f", c->prec, v.num);
		else /* whole numbers and 0/1: digits, never an exponent */
			ret = fprintf(f, "%.0f", v.num);
	}
	if (ret >= 0)
		ret = fputc('\n', f) == EOF ? -1 : 0;
	return ret < 0 ? -EIO : 0;
}

/* The object a dotted key's value goes into: the record, or the object named before the dot. */
static cJSON *parent_of(cJSON *root, const char *key, const char **name)
{
	const char *dot = strchr(key, '.');
	char head[64];
	cJSON *o;

	*name = key;
	if (!dot || (size_t)(dot - key) >= sizeof(head))
		return root;
	memcpy(head, key, (size_t)(dot - key));
	head[dot - key] = '\0';
	*name = dot + 1;
	o = cJSON_GetObjectItemCaseSensitive(root, head);
	return o ? o : cJSON_AddObjectToObject(root, head);
}

cJSON *result_job_json(const struct llmio_result *r)
{
	cJSON *j = cJSON_CreateObject();

	for (const struct rec_field *f = job_fields; j && f->key; f++) {
		const char *name;
		cJSON *o = parent_of(j, f->key, &name), *item;
		struct rec_val v;

		if (!o)
			goto nomem;
		if (f->type == REC_OBJ) {
			item = f->obj(r);
			if (!item || !cJSON_AddItemToObject(o, name, item)) {
				cJSON_Delete(item);
				goto nomem;
			}
			continue;
		}
		rec_value(f, r, &v);
		if (v.absent)
			continue;
		if (f->type == REC_STR)
			item = cJSON_AddStringToObject(o, name, v.s ? v.s : "");
		else if (f->type == REC_BOOL)
			item = cJSON_AddBoolToObject(o, name, v.num != 0);
		else
			item = cJSON_AddNumberToObject(o, name, v.num);
		if (!item)
			goto nomem;
	}
	return j;
nomem:
	cJSON_Delete(j);
	return NULL;
}

static const char *const type_names[] = {
        [REC_NUM] = "number", [REC_INT] = "integer", [REC_BOOL] = "bool",
        [REC_STR] = "string", [REC_OBJ] = "object",
};

static const char *const kind_titles[REC_KIND_N] = {
        [REC_KIND_JOB] = "jobs[]: one job (`run --json`, `quick`, recipe phases, journals)",
        [REC_KIND_CSV] = "CSV columns (`--csv`)",
        [REC_KIND_RECIPE] = "runs[]: one recipe run (`run --workload --json`)",
        [REC_KIND_PHASE] = "phases[]: one phase (recipe runs and journal records)",
        [REC_KIND_JOURNAL] = "Journal records (`sweep -o`, one JSON line per point)",
        [REC_KIND_MPI] = "mpi: under mpirun, beside `jobs` or `phases` (docs/mpi.md)",
        [REC_KIND_MPI_HOST] = "mpi.by_host[]: one host",
        [REC_KIND_MPI_RANK] = "mpi.per_rank[]: one rank",
};

int rec_print_markdown(FILE *f)
{
	int ret = 0;

	for (int k = 0; k < REC_KIND_N && ret >= 0; k++) {
		ret = fprintf(
		        f,
		        "%s### %s\n\n| %s | type | unit | meaning |\n| --- | --- | --- | --- |\n",
		        k ? "\n" : "", kind_titles[k], k == REC_KIND_CSV ? "column" : "key");
		for (const struct rec_field *x = rec_fields(k); x->key && ret >= 0; x++)
			ret = fprintf(f, "| `%s` | %s | %s | %s |\n", x->key, type_names[x->type],
			              x->unit, x->doc);
	}
	return ret < 0 ? -EIO : 0;
}
