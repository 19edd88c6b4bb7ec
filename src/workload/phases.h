/* SPDX-License-Identifier: MIT */
/* Phases that several recipes share (finetune = load + train + save, pretrain = train + save). */
#ifndef LLMIO_PHASES_H
#define LLMIO_PHASES_H

#include <stdbool.h>
#include <stdint.h>

#include "workload/workload.h"
#include "base/error.h"

/*
 * Checkpoint save: rank r writes files[r] (`sizes[r]` bytes, fresh, fsynced at the end), one
 * thread per rank, in I/Os of bs.  Metrics: duration = max over ranks, throughput = min over
 * ranks (MLPerf Storage's rules).  With `restore`, the files are then read back cold in a
 * phase named "<name>-restore".
 */
int ckpt_phases(struct wl *w, const char *name, const char *prefix, const uint64_t *sizes,
                unsigned n, uint64_t bs, bool restore, struct llmio_error *e);

/* Per-rank checkpoint bytes from the model and the tp/pp/dp/zero/ranks parameters. */
int ckpt_rank_sizes(struct wl *w, uint64_t **sizes, unsigned *n, struct llmio_error *e);

/* Model loading strategies. */
enum load_strategy { LOAD_SEQUENTIAL, LOAD_TENSOR, LOAD_MMAP, LOAD_PARALLEL, LOAD_NSTRAT };
extern const char *const load_strategy_names[LOAD_NSTRAT];

/*
 * Lay out the model's safetensors shards in the directory (created and filled once, reused
 * after) and load them with `strat` into a phase named name; cold drops their page cache
 * first.  threads is used by the parallel strategy.
 */
int load_phase(struct wl *w, const char *name, enum load_strategy strat, bool cold,
               unsigned threads, uint64_t bs, struct llmio_error *e);

/*
 * How the dataset's samples are stored: `shard` files of samples_per_file records (read in a
 * shuffled sample order), `sample` one file or object per sample, `tar` tar-like shards (a
 * 512-byte header before each record, records padded to 512 bytes, 1024 bytes at the end)
 * read shard by shard, front to back, in a shuffled shard order, as WebDataset does.
 */
enum train_layout { TRAIN_SHARD, TRAIN_SAMPLE, TRAIN_TAR };

/* The data-loading + compute loop of training (MLPerf Storage's accelerator emulation). */
struct train_cfg {
	enum train_layout layout;
	uint64_t record_bytes; /* one sample */
	uint64_t files;        /* dataset files */
	uint64_t samples_per_file;
	uint64_t batch; /* samples per step per accelerator */
	uint64_t steps;
	uint64_t compute_ns;        /* per step */
	unsigned readers;           /* reader threads */
	uint64_t prefetch;          /* batches read ahead */
	uint64_t bs;                /* largest read (a sample is read in pieces of at most this) */
	uint64_t ckpt_every;        /* steps between checkpoints; 0 = none */
	const uint64_t *ckpt_sizes; /* per rank */
	unsigned ckpt_ranks;
	const char *ckpt_prefix;
};
/* The training parameters (dataset, steps, compute, checkpoint layout ...) as data. */
extern const struct llmio_optdesc train_params[];
/* A train_cfg from those parameters (and the model, for dataset=tokens). */
int train_cfg_from_params(struct wl *w, struct train_cfg *c, struct llmio_error *e);
int train_phases(struct wl *w, const char *name, const struct train_cfg *c, struct llmio_error *e);

#endif
