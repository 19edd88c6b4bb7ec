/* SPDX-License-Identifier: MIT */
/*
 * The trace formats (docs/tracing.md describes them for readers outside C).
 *
 * Two layouts share one 64-byte record:
 *
 * - The per-process RAW file that the preload library writes while the program runs
 *   (DIR/<pid>.<n>.trace): a 4 KiB header, then chunks of TRACE_CHUNK bytes.  Each thread
 *   owns one chunk at a time and fills it slot by slot with no lock; the file is a MAP_SHARED
 *   mapping, so what is written is in the page cache at once and survives _exit and SIGKILL.
 *   A slot's type is stored last (release), so a slot cut short by SIGKILL reads as empty.
 *   Slot 0 of a chunk is a TR_RAW_CHUNK marker; strings (TR_RAW_STR) take one slot plus the
 *   text in the following slots; TR_RAW_PHASE sets the process's phase.
 *
 * - The MERGED file (llmio.trace) that `llmio trace` and `llmio trace import-strace` write:
 *   a header, then records sorted by time, a string blob, a process table, the phase names and
 *   the phase events.  Strings are byte offsets into the blob; offset 0 is "".
 *
 * Both are native-endian (little-endian on every platform llmio builds on) and versioned.
 * This header has no dependencies: the preload library includes it.
 */
#ifndef LLMIO_TRACE_FORMAT_H
#define LLMIO_TRACE_FORMAT_H

#include <stdint.h>

#define TRACE_MAGIC      "LLMIOTRC"
#define TRACE_RAW_MAGIC  "LLMIORAW"
#define TRACE_VERSION    1
#define TRACE_RAW_HDR    4096u
#define TRACE_CHUNK      65536u
#define TRACE_OFF_NONE   UINT64_MAX /* offset unknown (pipes, stdio without a position) */
#define TRACE_PHASE_NONE 0

/*
 * Limits on what a record may claim (docs/tracing.md, "Limits").  Readers check every record
 * against them before they size anything from it (trace_rec_check() in trace_read.c), so a
 * damaged or hostile file fails with a message instead of a huge allocation or an endless
 * loop.
 * - One read/write system call moves at most Linux's MAX_RW_COUNT (INT_MAX rounded down to a
 *   page): the kernel never returns more from read, pread, readv or preadv (or the writes).
 * - One fread/fwrite may loop over many read/write calls; 1 TiB is far beyond any buffer.
 * - Where a read or write moved data, offset + bytes is a file position: at most INT64_MAX
 *   (off_t).  Failed calls keep the offset they were given, whatever it was.
 * - Times and durations are ns below 2^62 (146 years), so ts + dur never wraps.
 */
#define TRACE_IO_MAX    0x7ffff000ull
#define TRACE_STDIO_MAX (1ull << 40)
#define TRACE_POS_MAX   0x7fffffffffffffffull
#define TRACE_TIME_MAX  (1ull << 62)

/* Call types.  Values are part of the format: only append. */
enum trace_type {
	TR_NONE = 0,
	TR_OPEN,       /* open/openat/creat (+64, fortify): path, result = fd or -errno */
	TR_CLOSE,      /* close */
	TR_DUP,        /* dup/dup2/dup3/fcntl(F_DUPFD): fd = old, result = new fd */
	TR_READ,       /* read: offset tracked per fd */
	TR_PREAD,      /* pread/pread64: offset as given */
	TR_READV,      /* readv: req = sum of iov_len */
	TR_PREADV,     /* preadv/preadv2 (+64) */
	TR_WRITE,      /* write */
	TR_PWRITE,     /* pwrite/pwrite64 */
	TR_WRITEV,     /* writev */
	TR_PWRITEV,    /* pwritev/pwritev2 (+64) */
	TR_LSEEK,      /* lseek: req = offset argument, offset = resulting position */
	TR_FSYNC,      /* fsync */
	TR_FDATASYNC,  /* fdatasync */
	TR_SYNC_RANGE, /* sync_file_range: offset, req = nbytes */
	TR_MMAP,       /* mmap of a file: offset, req = length, result = address or -errno */
	TR_MUNMAP,     /* munmap of a traced mapping: req = length */
	TR_MSYNC,      /* msync of a traced mapping */
	TR_FALLOCATE,  /* fallocate/posix_fallocate: offset, req = length */
	TR_FTRUNCATE,  /* ftruncate: req = length */
	TR_RENAME,     /* rename/renameat/renameat2: path -> path2 */
	TR_UNLINK,     /* unlink/unlinkat */
	TR_FOPEN,      /* fopen/fopen64/fdopen: fd = the stream's descriptor */
	TR_FREAD,      /* fread: req = size * n, result = bytes (items * size) */
	TR_FWRITE,     /* fwrite */
	TR_FFLUSH,     /* fflush */
	TR_FCLOSE,     /* fclose */
	TR_NTYPES,
	/* raw-file only */
	TR_RAW_CHUNK = 0xF001, /* slot 0 of a chunk: tid of its owner */
	TR_RAW_STR = 0xF002,   /* path = string id, req = length; text in the next slots */
	TR_RAW_PHASE = 0xF003, /* fd = phase id, path = string id of its name; req = 1: def only */
};

/* One call.  64 bytes, the same in raw and merged files. */
struct trace_rec {
	uint64_t ts;     /* CLOCK_MONOTONIC ns at the call */
	uint64_t dur;    /* ns inside the call */
	uint64_t offset; /* file offset of the transfer, TRACE_OFF_NONE if unknown */
	uint64_t req;    /* bytes requested (or the call's size/offset argument, see the types) */
	int64_t result;  /* bytes transferred / return value; < 0: -errno */
	uint32_t pid;
	uint32_t tid;
	int32_t fd;
	uint32_t path;  /* raw: string id; merged: offset in the string blob (0 = none) */
	uint32_t path2; /* rename target, same encoding; for a read, how it was served (below) */
	uint16_t phase; /* raw: process-local phase id; merged: index in the phase table */
	uint16_t type;  /* enum trace_type; stored last in raw files */
};

/*
 * How a read (read, pread, readv, preadv of a regular file) was served, in its path2: the
 * tracer first asks for the bytes with RWF_NOWAIT, which returns only what the page cache
 * holds; CACHE when that was all of them (or the rest was the file's end), DEVICE when the rest
 * had to be read as usual.  UNKNOWN (0) for every other call, and for reads the kernel or the
 * filesystem cannot ask so (docs/tracing.md).
 */
#define TRACE_SERVED_UNKNOWN 0u
#define TRACE_SERVED_CACHE   1u
#define TRACE_SERVED_DEVICE  2u

/* Header page of a raw per-process file. */
struct trace_raw_hdr {
	char magic[8];
	uint32_t version;
	uint32_t chunk_size;
	uint32_t pid;
	uint32_t ppid;
	uint64_t mono_anchor; /* CLOCK_MONOTONIC and CLOCK_REALTIME read together at start */
	uint64_t real_anchor;
	uint64_t dropped; /* records lost (no space for a chunk) */
	uint32_t cmdline_len;
	uint32_t stop_errno; /* not 0: recording stopped, the file could not grow (ENOSPC...) */
	char cmdline[TRACE_RAW_HDR - 56]; /* arguments separated by spaces */
};

/* Merged file header. */
struct trace_file_hdr {
	char magic[8];
	uint32_t version;
	uint32_t hdr_size; /* sizeof(struct trace_file_hdr) */
	uint32_t rec_size; /* sizeof(struct trace_rec) */
	uint32_t flags;    /* TRACE_F_* */
	uint64_t rec_off, nrec;
	uint64_t str_off, str_len;
	uint64_t proc_off, nproc;
	uint64_t phase_off, nphase;
	uint64_t pev_off, npev;
	uint64_t t_start, t_end; /* first call, end of the last one (mono ns) */
	int64_t real_minus_mono; /* CLOCK_REALTIME - CLOCK_MONOTONIC (ns) of the first process */
	uint64_t dropped;        /* records lost while tracing */
	int32_t exit_status;     /* of the traced command as a shell reports it; -1 unknown */
	uint32_t reserved[3];
};

#define TRACE_F_STRACE  1u /* imported from an strace log */
#define TRACE_F_STOPPED 2u /* a process stopped recording early: its file could not grow */

struct trace_proc {
	uint32_t pid;
	uint32_t ppid;
	uint32_t cmd; /* string offset: the command line of the last image (after exec) */
	uint32_t nimages;
	uint64_t start; /* mono ns the tracer started in it (strace: first line) */
	uint64_t end;   /* end of its last call */
	uint64_t nrec;
	uint64_t reserved[3];
};

#define TRACE_PHASE_INFERRED 1u

struct trace_phase {
	uint32_t name; /* string offset; phase 0 is "" (no phase set) */
	uint32_t flags;
};

/* The phase of process pid became `phase` at ts. */
struct trace_phase_ev {
	uint64_t ts;
	uint32_t pid;
	uint32_t tid;
	uint32_t phase;
	uint32_t reserved;
};

_Static_assert(sizeof(struct trace_rec) == 64, "trace record is 64 bytes");
_Static_assert(sizeof(struct trace_raw_hdr) == TRACE_RAW_HDR, "raw header is one page");
_Static_assert(sizeof(struct trace_file_hdr) == 152, "merged header size");

#endif
