/* SPDX-License-Identifier: MIT */
/*
 * io_uring through liburing.
 *
 * One ring per worker thread, created in init() on that thread and only ever entered from it,
 * which is what lets us ask for IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN:
 * completions are then posted when we enter the kernel to wait for them, with no task-work
 * interrupts in between.
 *
 * Submission is lazy.  queue() only fills an SQE.  commit() enters the kernel only when
 * submit_batch SQEs are waiting (never by default); otherwise the SQEs wait for the next
 * reap(), whose io_uring_submit_and_wait() submits and waits in one system call.
 * The worker counts queued-but-unsubmitted I/Os as in flight and calls reap(min >= 1) on them,
 * so reap() must always submit before it waits.
 *
 * Defaults are the fast configuration: registered files and buffers, and no SQPOLL thread
 * (which burns a CPU).  Whatever could not be had falls back and is said in the notes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <liburing.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "engine/engine.h"
#include "engine/spin_window.h"
#include "engine/uring_setup.h"

/* How long reap() keeps retrying a submit that says -EAGAIN/-EBUSY with nothing in flight. */
#define EAGAIN_RETRY_NS 100000L
#define EAGAIN_RETRIES  10000u /* 1 s in all */

struct uring_opts {
	int sqpoll;
	int sqpoll_cpu;
	int sq_thread_idle;
	int iopoll;
	int fixedbufs;
	int regfiles;
	int submit_batch;
	int reap_batch;
	int sqpoll_spin;
};

static const struct llmio_optdesc uring_options[] = {
        {
                .name = "sqpoll",
                .alias = "sqthread_poll",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct uring_opts, sqpoll),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "submit through a kernel polling thread (IORING_SETUP_SQPOLL): no "
                        "submit system calls, one CPU kept busy",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "sqpoll_cpu",
                .alias = "sqthread_poll_cpu",
                .type = OPTD_INT,
                OPTD_FIELD(struct uring_opts, sqpoll_cpu),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "-1",
                .help = "CPU to pin the SQPOLL thread to; -1 leaves it unpinned",
                .min = -1,
                .max = 1023,
                .fio_kind = OPTD_FIO_IF_SET,
        },
        {
                .name = "sq_thread_idle",
                .alias = NULL,
                .type = OPTD_DURATION,
                .bare_ns = 1000000, /* a bare number is ms, as the field holds */
                .store_ns = 1000000,
                OPTD_FIELD(struct uring_opts, sq_thread_idle),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "1000",
                .help = "how long the SQPOLL thread spins without work before it sleeps",
                .min = 0,
                .max = 3600e9, /* ns: 1 h */
                .fio_kind = OPTD_FIO_NONE,
                .fio_note = "fio has no sq_thread_idle: its SQPOLL thread sleeps after the "
                            "kernel's default 1 s",
        },
        {
                .name = "iopoll",
                .alias = "hipri",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct uring_opts, iopoll),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "poll for completions (IORING_SETUP_IOPOLL); needs O_DIRECT and a device "
                        "with poll queues, otherwise runs with interrupts and says so",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "fixedbufs",
                .alias = NULL,
                .type = OPTD_BOOL,
                OPTD_FIELD(struct uring_opts, fixedbufs),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "1",
                .help = "register the I/O buffers with the ring (no per-I/O page pinning)",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "regfiles",
                .alias = "registerfiles",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct uring_opts, regfiles),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "1",
                .help = "register the files with the ring (no per-I/O file reference counting)",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                .name = "submit_batch",
                .alias = NULL,
                .type = OPTD_INT,
                OPTD_FIELD(struct uring_opts, submit_batch),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "queued SQEs that make commit enter the kernel on its own; 0 = submit "
                        "together with the wait for completions, one system call per round; "
                        "no effect with sqpoll",
                .min = 0,
                .max = 65536,
                .fio_kind = OPTD_FIO_ZERO_IS_QD,
                .fio = "iodepth_batch_submit",
        },
        {
                .name = "reap_batch",
                .alias = NULL,
                .type = OPTD_INT,
                OPTD_FIELD(struct uring_opts, reap_batch),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "most completions returned by one reap; 0 = auto: 1 under O_DIRECT (each "
                        "freed slot goes straight back to the device; with sqpoll iodepth/4 from "
                        "iodepth 8), "
                        "iodepth through the page cache",
                .min = 0,
                .max = 65536,
                .fio_kind = OPTD_FIO_CUSTOM, /* as uring_reap_batch() resolves it */
                .fio = "iodepth_batch_complete_max",
        },
        {
                .name = "sqpoll_spin",
                .alias = NULL,
                .type = OPTD_INT,
                OPTD_FIELD(struct uring_opts, sqpoll_spin),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "-1",
                .help = "with sqpoll: microseconds to watch the completion ring before "
                        "sleeping in the kernel; -1 = auto: from 200, widened by gaps between "
                        "completions that it misses up to 1000 (O_DIRECT) or 4000 (page "
                        "cache), when there are at least two "
                        "CPUs per thread (one for it, one for its poller), else 0 (sleep at "
                        "once)",
                .min = -1,
                .max = 1000000,
        },
        {.name = NULL},
};

struct uring_eng {
	struct io_uring ring; /* first: tests/test_uring_sqe.c reads the SQEs through ctx->priv */
	const int *fds;
	unsigned nfiles;
	unsigned inflight; /* queued or in the kernel: what the worker counts as in flight */
	unsigned submit_batch;
	unsigned reap_batch;
	bool fixedbufs;
	unsigned nbufs; /* registered: an io_req whose buf_idx is not one of them is plain */
	bool regfiles;
	bool sqpoll;
	struct spin_window spin; /* sqpoll: how long reap watches the CQ ring before sleeping */
	/* per enum engine_op: the opcode and the fixed-file flag set, every other field zero */
	struct io_uring_sqe tmpl[2];
	uint16_t buf_idx_mask; /* 0xffff with registered buffers: buf_index is 0 without */
	/* Completions are only posted (DEFER/COOP_TASKRUN) or found (IOPOLL) by entering. */
	bool enter_to_reap;
};

/* Ways to run task work, best first; kernels that do not know a flag refuse it with -EINVAL. */
static const struct {
	unsigned flags;
	const char *name;
} taskrun_modes[] = {
        {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, "single issuer + defer taskrun"},
        {IORING_SETUP_COOP_TASKRUN, "coop taskrun (kernel < 6.1)"},
        {0, "plain task work (kernel < 5.19)"},
};

/* The locked-memory limit as text for messages: "64 KiB" or "unlimited". */
static const char *memlock_text(char *buf, size_t len)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		snprintf(buf, len, "unknown");
	else if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
	return buf;
}

/* Explain a failed io_uring_setup(): the errno alone does not say what to change. */
void uring_explain_setup(int err, const char *what, struct llmio_error *e)
{
	char memlock[32];
	unsigned long disabled = 0;

	switch (err) {
	case ENOSYS:
		llmio_err(e, -err,
		          "io_uring: %s: ENOSYS: this kernel is built without io_uring "
		          "(CONFIG_IO_URING=n) or a seccomp filter (container runtime) blocks it; "
		          "use libaio or psync",
		          what);
		break;
	case EPERM:
		if (engine_read_proc_ulong("/proc/sys/kernel/io_uring_disabled", &disabled) == 0 &&
		    disabled == 2)
			llmio_err(e, -err,
			          "io_uring: %s: EPERM: io_uring is disabled system-wide "
			          "(/proc/sys/kernel/io_uring_disabled = 2); "
			          "set it to 0 or use libaio",
			          what);
		else if (disabled == 1)
			llmio_err(e, -err,
			          "io_uring: %s: EPERM: io_uring is restricted to privileged users "
			          "and the group in /proc/sys/kernel/io_uring_group "
			          "(/proc/sys/kernel/io_uring_disabled = 1); join that group, set "
			          "io_uring_disabled to 0, or use libaio",
			          what);
		else
			llmio_err(e, -err,
			          "io_uring: %s: EPERM: refused by a seccomp or security-module "
			          "policy (io_uring_disabled is 0); use libaio or psync",
			          what);
		break;
	case ENOMEM:
		llmio_err(e, -err,
		          "io_uring: %s: ENOMEM: cannot allocate the ring (locked-memory limit %s; "
		          "raise ulimit -l or lower iodepth)",
		          what, memlock_text(memlock, sizeof(memlock)));
		break;
	default:
		llmio_err(e, -err, "io_uring: %s: %s", what, strerror(err));
		break;
	}
}

static int uring_probe(char *why, size_t len)
{
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(1, &ring, 0);
	if (ret < 0) {
		struct llmio_error e;

		llmio_error_init(&e);
		uring_explain_setup(-ret, "io_uring_queue_init(1)", &e);
		snprintf(why, len, "%s", e.msg); /* the probe's why: a caller's buffer */
		return ret;
	}
	io_uring_queue_exit(&ring);
	return 0;
}

/* Create the ring: SQPOLL as asked, otherwise the best task-work mode the kernel accepts. */
static int ring_create(struct uring_eng *p, const struct uring_opts *o, unsigned entries,
                       unsigned base_flags, char *notes, size_t nlen, struct llmio_error *e)
{
	struct io_uring_params par;
	size_t i;
	int ret;

	if (o->sqpoll) {
		memset(&par, 0, sizeof(par));
		par.flags = base_flags | IORING_SETUP_SQPOLL;
		par.sq_thread_idle = (unsigned)o->sq_thread_idle;
		if (o->sqpoll_cpu >= 0) {
			par.flags |= IORING_SETUP_SQ_AFF;
			par.sq_thread_cpu = (unsigned)o->sqpoll_cpu;
		}
		ret = io_uring_queue_init_params(entries, &p->ring, &par);
		if (ret == -EINVAL && o->sqpoll_cpu >= 0) {
			return llmio_err(
			        e, ret,
			        "io_uring: sqpoll_cpu=%d: EINVAL: that CPU is not online or not "
			        "in this thread's cpuset; pick another or use -1",
			        o->sqpoll_cpu);
		}
		if (ret < 0) {
			uring_explain_setup(-ret, "io_uring_queue_init_params(SQPOLL)", e);
			return ret;
		}
		if (o->sqpoll_cpu >= 0)
			engine_appendf(notes, nlen, "sqpoll on (cpu %d, idle %d ms)", o->sqpoll_cpu,
			               o->sq_thread_idle);
		else
			engine_appendf(notes, nlen, "sqpoll on (unpinned, idle %d ms)",
			               o->sq_thread_idle);
		return 0;
	}

	ret = -EINVAL;
	for (i = 0; i < sizeof(taskrun_modes) / sizeof(taskrun_modes[0]); i++) {
		memset(&par, 0, sizeof(par));
		par.flags = base_flags | taskrun_modes[i].flags;
		ret = io_uring_queue_init_params(entries, &p->ring, &par);
		if (ret != -EINVAL)
			break;
	}
	if (ret < 0) {
		uring_explain_setup(-ret, "io_uring_queue_init_params", e);
		return ret;
	}
	/* Both modes post completions only when this thread next enters the kernel. */
	p->enter_to_reap =
	        taskrun_modes[i].flags & (IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_COOP_TASKRUN);
	engine_appendf(notes, nlen, "sqpoll off, %s", taskrun_modes[i].name);
	/*
	 * A registered ring fd spares io_uring_enter() the file-table lookup of the ring on
	 * every call (liburing then passes IORING_ENTER_REGISTERED_RING); Linux 5.18+.
	 */
	if (io_uring_register_ring_fd(&p->ring) == 1)
		engine_appendf(notes, nlen, ", ring fd registered");
	return 0;
}

static void register_buffers(struct uring_eng *p, const struct engine_setup *s, char *notes,
                             size_t nlen)
{
	char memlock[32];
	struct iovec *iov;
	unsigned i;
	int ret;

	if (!s->bufs || !s->nbufs) {
		engine_appendf(notes, nlen, ", fixedbufs off (no buffers to register)");
		return;
	}
	iov = calloc(s->nbufs, sizeof(*iov));
	if (!iov) {
		engine_appendf(notes, nlen, ", fixedbufs off (out of memory registering buffers)");
		return;
	}
	for (i = 0; i < s->nbufs; i++) {
		iov[i].iov_base = s->bufs[i];
		iov[i].iov_len = s->buf_len;
	}
	ret = io_uring_register_buffers(&p->ring, iov, s->nbufs);
	free(iov);
	if (ret == -ENOMEM)
		engine_appendf(
		        notes, nlen,
		        ", fixedbufs requested but io_uring_register_buffers failed with ENOMEM "
		        "(locked-memory limit %s, raise ulimit -l): plain buffers",
		        memlock_text(memlock, sizeof(memlock)));
	else if (ret < 0)
		engine_appendf(notes, nlen,
		               ", fixedbufs requested but io_uring_register_buffers failed (%s): "
		               "plain buffers",
		               strerror(-ret));
	else
		engine_appendf(notes, nlen, ", fixedbufs on");
	p->fixedbufs = ret == 0;
	p->nbufs = s->nbufs;
}

static void register_files(struct uring_eng *p, const struct engine_setup *s, char *notes,
                           size_t nlen)
{
	int ret;

	if (!s->nfiles) {
		engine_appendf(notes, nlen, ", regfiles off (no files)");
		return;
	}
	ret = io_uring_register_files(&p->ring, s->fds, s->nfiles);
	if (ret < 0)
		engine_appendf(
		        notes, nlen,
		        ", regfiles requested but io_uring_register_files failed (%s): plain fds",
		        strerror(-ret));
	else
		engine_appendf(notes, nlen, ", regfiles on");
	p->regfiles = ret == 0;
}

/*
 * SQPOLL: how long reap watches the completion ring before it sleeps.  The poller posts
 * completions while the thread runs, so a thread that sleeps pays a wake-up (an IPI, and in
 * a VM an exit) for each one, which at QD 1 on a cached file is most of an I/O's time.
 * Watching the ring costs the thread's CPU, which llmio counts, so it only does so when every
 * thread and its poller can each have a CPU; oversubscribed, a spinning thread would take the
 * CPU its own poller needs.
 *
 * The auto window: from a few wake-ups' worth, widened by the gaps it misses (spin_window.h)
 * up to a cap past which a wake-up is a small part of the wait: 1 ms under O_DIRECT, where
 * the device keeps working while the thread wakes, and 4 ms through the page cache, where the
 * poller does the copies itself and idles from posting a round until the woken thread
 * refills it, so the gap between rounds of large cached reads must be watched through.  Each
 * bound was kept because no row measured slower than with the fixed window and the bursty
 * rows measured faster (docs/accuracy.md, SQPOLL; the runs: bench/results/2026-11-sqpoll.md).
 */
#define SPIN_AUTO_MIN_NS        200000u
#define SPIN_AUTO_MAX_DIRECT_NS 1000000u
#define SPIN_AUTO_MAX_CACHED_NS 4000000u

/*
 * 0 = auto.  Through the page cache, I/Os complete inside the submit call in bursts of
 * iodepth: take them all and refill in one system call.  Under O_DIRECT the device is the
 * limit and completions trickle in: hand each freed slot straight back to the device (a
 * submit per completion, as fio does by default) instead of refilling in bursts, which leave
 * the device's queue part empty between bursts.  With SQPOLL the poller takes whatever SQEs
 * are published when it looks: a quarter of the depth per reap keeps a steady stream in
 * moderate batches, where all of it made the whole depth go to the device and come back in
 * lockstep (the device alternating between full and empty).  Criterion for each default:
 * more IOPS than the alternative in interleaved pairs at no more off-device time per I/O
 * (docs/accuracy.md, "Where llmio is faster on O_DIRECT" and "O_DIRECT: what the device
 * decided"; the runs: bench/results/2026-11-odirect.md and 2026-11-sqpoll.md).
 */
static unsigned uring_reap_batch(int reap_batch, bool sqpoll, bool direct, unsigned depth)
{
	if (reap_batch > 0)
		return (unsigned)reap_batch < depth ? (unsigned)reap_batch : depth;
	if (direct)
		return sqpoll && depth >= 8 ? depth / 4 : 1;
	return depth;
}

static struct spin_window sqpoll_spin_window(const struct uring_opts *o, unsigned nworkers,
                                             bool direct, char *notes, size_t nlen)
{
	const unsigned max_ns = direct ? SPIN_AUTO_MAX_DIRECT_NS : SPIN_AUTO_MAX_CACHED_NS;
	unsigned threads = nworkers ? nworkers : 1, cpus = 1;
	struct spin_window w = {0, 0, 0};
	cpu_set_t set;

	if (o->sqpoll_spin > 0) {
		engine_appendf(notes, nlen, ", completions: watch the ring %d us, then sleep",
		               o->sqpoll_spin);
		w.ns = w.min_ns = w.max_ns = (uint64_t)o->sqpoll_spin * 1000u;
		return w;
	}
	if (o->sqpoll_spin == 0) {
		engine_appendf(notes, nlen, ", completions: sleep at once (sqpoll_spin=0)");
		return w;
	}
	if (!sched_getaffinity(0, sizeof(set), &set))
		cpus = (unsigned)CPU_COUNT(&set);
	if (cpus >= 2 * threads) {
		engine_appendf(notes, nlen,
		               ", completions: watch the ring %u-%u us (wider for gaps it misses), "
		               "then sleep (auto: %u CPUs for %u thread%s and poller%s)",
		               SPIN_AUTO_MIN_NS / 1000u, max_ns / 1000u, cpus, threads,
		               threads > 1 ? "s" : "", threads > 1 ? "s" : "");
		w.ns = w.min_ns = SPIN_AUTO_MIN_NS;
		w.max_ns = max_ns;
		return w;
	}
	engine_appendf(notes, nlen,
	               ", completions: sleep at once (auto: %u CPUs are too few to watch the ring "
	               "beside %u poller%s)",
	               cpus, threads, threads > 1 ? "s" : "");
	return w;
}

/* The SQE templates: what every read or write SQE of this ring has in common. */
static void sqe_templates(struct uring_eng *p)
{
	static const unsigned char ops[2][2] = {
	        [ENGINE_OP_READ] = {IORING_OP_READ, IORING_OP_READ_FIXED},
	        [ENGINE_OP_WRITE] = {IORING_OP_WRITE, IORING_OP_WRITE_FIXED},
	};

	for (int op = 0; op < 2; op++) {
		memset(&p->tmpl[op], 0, sizeof(p->tmpl[op]));
		p->tmpl[op].opcode = ops[op][p->fixedbufs];
		p->tmpl[op].flags = p->regfiles ? IOSQE_FIXED_FILE : 0;
	}
	p->buf_idx_mask = p->fixedbufs ? 0xffff : 0;
}

static int uring_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	static const struct uring_opts defaults = {
	        .sqpoll_cpu = -1, .sq_thread_idle = 1000, .fixedbufs = 1, .regfiles = 1};
	const struct uring_opts *o = s->opts ? s->opts : &defaults;
	unsigned depth = s->iodepth ? s->iodepth : 1;
	char iopoll_note[200] = "";
	unsigned flags = 0;
	struct uring_eng *p;
	int ret;

	ctx->priv = NULL;
	ctx->notes[0] = '\0';
	p = calloc(1, sizeof(*p));
	if (!p)
		return llmio_err(e, -ENOMEM, "io_uring: out of memory for the engine state");

	/*
	 * IOPOLL spins on the device's poll queues instead of taking an interrupt.  An IOPOLL
	 * ring fails buffered I/O, and O_DIRECT I/O to a device without poll queues, with
	 * EOPNOTSUPP, so in both cases we run with interrupts and say why.
	 */
	if (o->iopoll) {
		const char *dev = s->devname && s->devname[0] ? s->devname : "the target's device";

		if (!s->direct)
			snprintf(iopoll_note, sizeof(iopoll_note),
			         ", iopoll requested but the files are buffered (direct=0): ran "
			         "with interrupt completions");
		else if (s->dev_io_poll == 0)
			snprintf(iopoll_note, sizeof(iopoll_note),
			         ", iopoll requested but %s has no poll queues (queue/io_poll=0): "
			         "ran with interrupt completions",
			         dev);
		else if (s->dev_io_poll < 0)
			snprintf(iopoll_note, sizeof(iopoll_note),
			         ", iopoll requested but the target has no block device whose poll "
			         "queues could be checked: ran with interrupt completions");
		else
			flags |= IORING_SETUP_IOPOLL;
	}

	ret = ring_create(p, o, depth, flags, ctx->notes, sizeof(ctx->notes), e);
	if (ret < 0)
		goto free_state;
	if (flags & IORING_SETUP_IOPOLL) {
		p->enter_to_reap = true;
		engine_appendf(ctx->notes, sizeof(ctx->notes), ", iopoll on");
	} else if (!o->iopoll) {
		engine_appendf(ctx->notes, sizeof(ctx->notes), ", iopoll off");
	}

	p->fds = s->fds;
	p->nfiles = s->nfiles;
	if (o->fixedbufs)
		register_buffers(p, s, ctx->notes, sizeof(ctx->notes));
	else
		engine_appendf(ctx->notes, sizeof(ctx->notes), ", fixedbufs off");
	if (o->regfiles)
		register_files(p, s, ctx->notes, sizeof(ctx->notes));
	else
		engine_appendf(ctx->notes, sizeof(ctx->notes), ", regfiles off");

	sqe_templates(p);
	/* 0: never alone; the worker always reaps right after commit, and reap submits */
	p->submit_batch = o->submit_batch > 0 ? (unsigned)o->submit_batch : UINT_MAX;
	p->reap_batch = uring_reap_batch(o->reap_batch, o->sqpoll, s->direct, depth);
	p->sqpoll = o->sqpoll;
	if (p->sqpoll) {
		engine_appendf(ctx->notes, sizeof(ctx->notes),
		               ", SQEs published on every commit / reap %u%s", p->reap_batch,
		               iopoll_note);
		p->spin = sqpoll_spin_window(o, s->nworkers, s->direct, ctx->notes,
		                             sizeof(ctx->notes));
	} else if (p->submit_batch == UINT_MAX)
		engine_appendf(ctx->notes, sizeof(ctx->notes),
		               ", submit and wait in one system call / reap %u%s", p->reap_batch,
		               iopoll_note);
	else
		engine_appendf(ctx->notes, sizeof(ctx->notes), ", batch submit %u / reap %u%s",
		               p->submit_batch, p->reap_batch, iopoll_note);
	ctx->priv = p;
	return 0;

free_state:
	free(p);
	ctx->notes[0] = '\0';
	return ret;
}

/*
 * The op's template, then this I/O's fields: the SQE liburing's io_uring_prep_read_fixed() (or
 * _write, _read, _write_fixed) and IOSQE_FIXED_FILE would make, with a third of the
 * instructions (tests/test_uring_sqe.c compares the two).  A file index out of range becomes a
 * plain descriptor of -1, which the kernel completes with -EBADF.
 */
static inline void sqe_fill(const struct uring_eng *p, struct io_uring_sqe *sqe,
                            const struct io_req *io)
{
	*sqe = p->tmpl[io->op];
	if (p->regfiles) {
		sqe->fd = io->file;
	} else if (io->file < p->nfiles) {
		sqe->fd = p->fds[io->file];
	} else {
		sqe->fd = -1;
		sqe->flags = 0;
	}
	sqe->off = io->off;
	sqe->addr = (uint64_t)(uintptr_t)io->buf;
	sqe->len = io->len;
	sqe->ioprio = io->prio; /* fio's cmdprio: 0 is the thread's priority */
	sqe->buf_index = (uint16_t)(io->buf_idx & p->buf_idx_mask);
	/* the tensor store hands in callers' own buffers too (buf_idx past the registered ones) */
	if (p->fixedbufs && io->buf_idx >= p->nbufs) {
		sqe->opcode = io->op == ENGINE_OP_WRITE ? IORING_OP_WRITE : IORING_OP_READ;
		sqe->buf_index = 0;
	}
	io_uring_sqe_set_data(sqe, (void *)io);
}

static int uring_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct uring_eng *p = ctx->priv;
	struct io_uring_sqe *sqe;

	if (io->file >= p->nfiles) {
		io->res = -EBADF;
		return ENGINE_Q_COMPLETED;
	}
	sqe = io_uring_get_sqe(&p->ring);
	if (!sqe)
		return ENGINE_Q_BUSY;
	sqe_fill(p, sqe, io);
	p->inflight++;
	return ENGINE_Q_QUEUED;
}

/*
 * queue() of n I/Os: the free SQ slots are counted once and the tail moved once, where
 * io_uring_get_sqe() reads the kernel's head and writes the tail for every SQE.  The ring is
 * never set up with IORING_SETUP_SQE128, so SQE i of the batch is at (tail + i) & mask.  A
 * file index out of range is not completed here (queue_batch's contract): with registered
 * files the kernel refuses the index, without them sqe_fill() gives it descriptor -1; either
 * way its completion carries -EBADF.
 */
static int uring_queue_batch(struct engine_ctx *ctx, struct io_req *const *ios, unsigned n)
{
	struct uring_eng *p = ctx->priv;
	struct io_uring_sq *sq = &p->ring.sq;
	const unsigned tail = sq->sqe_tail, room = io_uring_sq_space_left(&p->ring);

	if (n > room)
		n = room;
	for (unsigned i = 0; i < n; i++)
		sqe_fill(p, &sq->sqes[(tail + i) & sq->ring_mask], ios[i]);
	sq->sqe_tail = tail + n;
	p->inflight += n;
	return (int)n;
}

static int uring_commit(struct engine_ctx *ctx)
{
	struct uring_eng *p = ctx->priv;
	unsigned ready = io_uring_sq_ready(&p->ring);
	int ret;

	/*
	 * Lazy: the worker reaps right after every commit, and reap submits and waits in one
	 * io_uring_enter, so holding SQEs here saves a system call per round.  With SQPOLL
	 * publishing SQEs costs no system call, so never hold them.
	 */
	if (!ready || (!p->sqpoll && ready < p->submit_batch))
		return 0;
	ret = io_uring_submit(&p->ring);
	/* Whatever the kernel did not take now is submitted again by reap(). */
	if (ret >= 0 || ret == -EAGAIN || ret == -EBUSY || ret == -EINTR)
		return 0;
	return ret;
}

/*
 * Move up to max completions into evs without entering the kernel.  The ring's tail is read
 * once and its head written once per call, where io_uring_for_each_cqe() reads the tail
 * again for every CQE; the ring has 16-byte CQEs (no IORING_SETUP_CQE32).
 */
static unsigned drain(struct io_uring *ring, struct io_req **evs, unsigned max)
{
	struct io_uring_cq *cq = &ring->cq;
	const unsigned head = *cq->khead; /* only this thread moves the head */
	unsigned n = io_uring_smp_load_acquire(cq->ktail) - head;

	if (n > max)
		n = max;
	for (unsigned i = 0; i < n; i++) {
		const struct io_uring_cqe *cqe = &cq->cqes[(head + i) & cq->ring_mask];
		struct io_req *io = io_uring_cqe_get_data(cqe);

		io->res = cqe->res;
		evs[i] = io;
	}
	if (n) /* the kernel may reuse the CQEs only after they were read */
		io_uring_smp_store_release(cq->khead, head + n);
	return n;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Watch the CQ ring until `until` for `want` completions; true when they are there. */
static bool spin_for_cqes(struct io_uring *ring, unsigned want, uint64_t until)
{
	for (unsigned i = 1;; i++) {
		if (io_uring_cq_ready(ring) >= want)
			return true;
		if (!(i & 63) && now_ns() > until)
			return false;
		cpu_relax();
	}
}

/*
 * Sleep until `want` completions are posted.  The poller thread may go to sleep just as SQEs
 * are published; liburing wakes it when it sees IORING_SQ_NEED_WAKEUP, but a wait that is
 * bounded (100 ms) and followed by an explicit wake-up makes a lost wake-up cost 100 ms
 * instead of a hung job, whatever the liburing version.
 */
static int sqpoll_sleep(struct uring_eng *p, unsigned want)
{
	struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
	struct io_uring_cqe *cqe;

	for (;;) {
		int ret = io_uring_wait_cqes(&p->ring, &cqe, want, &ts, NULL);

		if (ret != -ETIME)
			return ret;
		syscall(__NR_io_uring_enter, p->ring.ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL,
		        0);
	}
}

/* Wait for completions with an SQPOLL ring: watch the ring for the window, then sleep. */
static int sqpoll_wait(struct uring_eng *p, unsigned want)
{
	uint64_t t0;
	int ret = io_uring_submit(&p->ring);

	if (ret < 0)
		return ret;
	if (!p->spin.ns)
		return sqpoll_sleep(p, want);
	t0 = now_ns();
	if (spin_for_cqes(&p->ring, want, t0 + p->spin.ns))
		return 0;
	ret = sqpoll_sleep(p, want);
	spin_window_slept(&p->spin, now_ns() - t0);
	return ret;
}

static int uring_reap(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max)
{
	static const struct timespec backoff = {.tv_sec = 0, .tv_nsec = EAGAIN_RETRY_NS};
	struct uring_eng *p = ctx->priv;
	struct io_uring *ring = &p->ring;
	struct io_uring_cqe *cqe;
	unsigned n, want, tries = 0;
	int ret;

	if (min > max)
		min = max;
	if (min > p->inflight)
		min = p->inflight; /* never wait for I/Os that were not queued */
	if (max > p->reap_batch)
		max = p->reap_batch > min ? p->reap_batch : min;

	/* The common case with completions already posted costs no system call. */
	n = drain(ring, evs, max);
	if (n >= min && !io_uring_sq_ready(ring) && (n || !p->enter_to_reap || !p->inflight))
		goto out;

	for (;;) {
		want = n < min ? min - n : 0;
		if (want && p->sqpoll)
			ret = sqpoll_wait(p, want);
		else if (want)
			ret = io_uring_submit_and_wait(ring, want);
		else if (!n && p->enter_to_reap)
			ret = io_uring_submit_and_get_events(ring);
		else
			ret = io_uring_submit(ring);

		if (ret == -EAGAIN || ret == -EBUSY) {
			/*
			 * The kernel is short of requests or its completion backlog is full:
			 * take completions without submitting, or back off if there are none
			 * to wait for.
			 */
			if (want && p->inflight - n > io_uring_sq_ready(ring))
				ret = io_uring_wait_cqe_nr(ring, &cqe, 1);
			else if (want && ++tries <= EAGAIN_RETRIES)
				ret = nanosleep(&backoff, NULL) ? -EINTR : 0;
		}
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			return ret;
		if (tries > EAGAIN_RETRIES)
			return ret;
		n += drain(ring, evs + n, max - n);
		if (n >= min)
			break;
	}
out:
	p->inflight -= n;
	return (int)n;
}

/* Consume every posted completion without looking at it; how many. */
static unsigned drain_discard(struct io_uring *ring)
{
	unsigned n = io_uring_cq_ready(ring);

	io_uring_cq_advance(ring, n);
	return n;
}

static void uring_cleanup(struct engine_ctx *ctx)
{
	struct uring_eng *p = ctx->priv;
	struct io_uring_cqe *cqe;
	unsigned kernel, seen;

	if (!p)
		return;
	/*
	 * Closing the ring tears it down in the background, and I/O still in flight would then
	 * land in buffers the caller is about to free: wait for what the kernel holds first.
	 * Without SQPOLL, SQEs never submitted are dropped with the ring.  With SQPOLL every
	 * queued SQE has been published and the poller will take it, so all are waited for;
	 * the SQ head cannot tell which are taken, because the poller posts the completions of
	 * a batch before it moves the head (a count from the head underflowed to "billions in
	 * flight" and hung here).  With DEFER_TASKRUN only the worker thread can wait;
	 * elsewhere the wait fails (-EEXIST) and we stop trying.
	 */
	if (p->sqpoll) {
		io_uring_submit(&p->ring);
		kernel = p->inflight;
	} else {
		unsigned queued = io_uring_sq_ready(&p->ring);

		kernel = p->inflight > queued ? p->inflight - queued : 0;
	}
	while (kernel) {
		int ret = p->sqpoll ? sqpoll_sleep(p, 1) : io_uring_wait_cqe(&p->ring, &cqe);

		if (ret == -EINTR)
			continue;
		seen = drain_discard(&p->ring);
		if (!seen)
			break;
		kernel -= seen < kernel ? seen : kernel;
	}
	/*
	 * The ring's teardown runs in the background and drops registered files late (tens of
	 * ms): a raw device written through the ring would still look in use after llmio exits.
	 * Unregistering now releases them synchronously.  Errors only mean nothing was there.
	 */
	io_uring_unregister_files(&p->ring);
	io_uring_unregister_buffers(&p->ring);
	io_uring_queue_exit(&p->ring);
	free(p);
	ctx->priv = NULL;
}

/* --emit-fio: reap_batch as the engine resolves it, so fio batches completions the same way. */
static void uring_fio_option(const struct llmio_optdesc *o, int v, struct engine_fio_job *j)
{
	const struct uring_opts *uo = j->opts;

	fprintf(j->f, "%s=%u\n", optdesc_fio_name(o),
	        uring_reap_batch(v, uo->sqpoll, j->direct, j->depth));
}

/* Each takes another path: unregistered, SQPOLL, IOPOLL, eager submit with batched reaps. */
static const char *const uring_variants[] = {
        "fixedbufs=0,regfiles=0",
        "sqpoll=1,sq_thread_idle=10",
        "iopoll=1",
        "submit_batch=4,reap_batch=2",
        NULL,
};

const struct engine_ops engine_io_uring = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "io_uring",
        .summary = "io_uring via liburing: registered files and buffers, lazy batched submit, "
                   "optional SQPOLL and IOPOLL",
        .caps = ENGINE_CAP_ASYNC | ENGINE_CAP_DIRECT | ENGINE_CAP_POLLED | ENGINE_CAP_CMDPRIO,
        .opts = uring_options,
        .opts_size = sizeof(struct uring_opts),
        .probe = uring_probe,
        .init = uring_init,
        .queue = uring_queue,
        .commit = uring_commit,
        .reap = uring_reap,
        .sync = NULL,
        .cleanup = uring_cleanup,
        .fio_option = uring_fio_option,
        .test_variants = uring_variants,
        .queue_batch = uring_queue_batch,
};
