/* SPDX-License-Identifier: MIT */
/*
 * Internal: the one description of every field llmio writes in its records (the job object
 * of `--json`, the CSV line, the recipe phase, the sweep journal record).  Writers walk these
 * tables instead of naming keys themselves, the report's reader finds keys through them, and
 * docs/output.md's field reference is printed from them (`tests/record_doc`).
 */
#ifndef LLMIO_STATS_RECORD_H
#define LLMIO_STATS_RECORD_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "llmio/result.h"

/*
 * Keys named once: the tables, the writers that build their records in code (recipe runs,
 * phases, journal records) and the report's reader (src/report/dataset.c) use these, so a key
 * renamed here is renamed for all of them.
 */
#define RK_JOB_OPTIONS       "job options"
#define RK_READ              "read"
#define RK_WRITE             "write"
#define RK_TRIM              "trim"
#define RK_SYNC              "sync"
#define RK_TOTAL_IOS         "total_ios"
#define RK_CPU               "cpu"
#define RK_CORES_BUSY        "cores_busy"
#define RK_DEVICE            "device"
#define RK_PROCESS_IO        "process_io"
#define RK_KNOWN             "known"
#define RK_READ_BYTES        "read_bytes"
#define RK_WRITE_BYTES       "write_bytes"
#define RK_FSTYPE            "fstype"
#define RK_SERVICE           "service"
#define RK_SERVICE_REASON    "service_reason"
#define RK_SHARED_DISK       "shared_disk"
#define RK_BUSY_SYSTEM       "busy_system"
#define RK_DIRECT_IN_EFFECT  "direct_in_effect"
#define RK_GB_PER_S_PER_CORE "gb_per_s_per_core"
#define RK_MODEL             "model"
#define RK_ENGINE            "engine"
#define RK_DIRECT            "direct"
#define RK_PARAMS            "params"
#define RK_PROMISED_BYTES    "promised_bytes"
#define RK_NOTE              "note"
#define RK_METRICS           "metrics"
#define RK_STREAM            "stream"
#define RK_LLMIO             "llmio"
#define RK_CACHE_DROPPED     "cache_dropped"
#define RK_STEADY_STATE      "steady_state"
#define RK_START_EPOCH_MS    "start_epoch_ms"
#define RK_JOB_RUNTIME       "job_runtime"
#define RK_HISTOGRAM         "histogram"
#define RK_NAME              "name"
#define RK_WALL_S            "wall_s"
#define RK_JOBS              "jobs"
#define RK_RECORD            "record"
#define RK_CONFIG_HASH       "config_hash"
#define RK_SWEEP             "sweep"
#define RK_CONFIG            "config"
#define RK_WORKLOAD          "workload"
#define RK_HOST              "host"
#define RK_PHASES            "phases"
#define RK_ERROR             "error"
/* under MPI (src/mpi, docs/mpi.md) */
#define RK_MPI          "mpi"
#define RK_RANK         "rank"
#define RK_RANKS        "ranks"
#define RK_HOSTS        "hosts"
#define RK_BY_HOST      "by_host"
#define RK_PER_RANK     "per_rank"
#define RK_FILE_LAYOUT  "file_layout"
#define RK_PHASE_S      "phase_s"
#define RK_START_SKEW_S "start_skew_s"
#define RK_JOB          "job"
#define RK_PROC_S       "proc_s"
#define RK_PHASE        "phase"
#define RK_STREAMS      "streams"

/* The JSON type of a field (the CSV cell is the same value written as text). */
enum rec_type {
	REC_NUM,  /* a double */
	REC_INT,  /* a whole number (a double in JSON, digits in CSV) */
	REC_BOOL, /* true/false in JSON, 1/0 in CSV */
	REC_STR,
	REC_OBJ, /* an object or array built by code (histograms, op blocks): one entry here */
};

/* How a field is stored in struct llmio_result when it is read through an offset. */
enum rec_store {
	REC_GET,    /* no offset: the field's getter computes it */
	REC_DOUBLE, /* double */
	REC_U64,    /* uint64_t */
	REC_U32,    /* unsigned */
	REC_I32,    /* int */
	REC_B,      /* bool */
	REC_CHARS,  /* char[] */
};

/* One value read from a result: num for numbers and bools, s for strings. */
struct rec_val {
	double num;
	const char *s;
	bool absent; /* not written (JSON) / an empty cell (CSV) */
};

struct rec_field {
	const char *key; /* JSON path in its record ("cpu.usr_s") or CSV column name */
	enum rec_type type;
	const char *unit; /* "" when none */
	const char *doc;  /* one line for docs/output.md */
	enum rec_store store;
	size_t off; /* into struct llmio_result, when store is not REC_GET */
	void (*get)(const struct llmio_result *r, struct rec_val *v);
	cJSON *(*obj)(const struct llmio_result *r); /* REC_OBJ: builds the value */
	int prec;                                    /* CSV: decimals of a REC_NUM */
};

/* The record kinds, each an ordered table ending with a NULL key. */
enum rec_kind {
	REC_KIND_JOB,
	REC_KIND_CSV,
	REC_KIND_RECIPE,
	REC_KIND_PHASE,
	REC_KIND_JOURNAL,
	REC_KIND_MPI,
	REC_KIND_MPI_HOST,
	REC_KIND_MPI_RANK,
	REC_KIND_N
};

const struct rec_field *rec_fields(enum rec_kind kind);
const char *rec_kind_name(enum rec_kind kind);

/* f's value in r (absent when the field does not apply to r). */
void rec_value(const struct rec_field *f, const struct llmio_result *r, struct rec_val *v);

/* The CSV header line and one line per result, from rec_fields(REC_KIND_CSV). */
int rec_csv_header(FILE *f);
int rec_csv_row(FILE *f, const struct llmio_result *r);

/* Print the field reference of every kind as Markdown tables (docs/output.md). */
int rec_print_markdown(FILE *f);

#endif
