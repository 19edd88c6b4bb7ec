/* SPDX-License-Identifier: MIT */
/*
 * uring_cmd: NVMe passthrough through io_uring (IORING_OP_URING_CMD) on the namespace's
 * generic character device /dev/ngXnY: NVMe Read and Write commands built here, handed to the
 * driver without the block layer (no bio, no I/O scheduler, no request merging or splitting).
 *
 * The target is the namespace's block device (--filename /dev/nvme0n1): the job opens it with
 * the usual safety checks (writes need --allow_destructive, a mounted device is refused), its
 * size and poll queues come from there, and the engine opens the generic device of the same
 * namespace (nvme0n1 -> /dev/ng0n1) for the commands.  NVME_IOCTL_ID gives the namespace id;
 * the LBA size is the block device's logical block size (sysfs), which is the namespace's
 * formatted LBA size.
 *
 * The ring has 128-byte SQEs and 32-byte CQEs (IORING_SETUP_SQE128 | IORING_SETUP_CQE32): the
 * command (struct nvme_uring_cmd, 72 bytes) lives in the SQE, and the NVMe result in the CQE.
 * A CQE's res is 0 on success, the NVMe status when the device failed the command, or -errno.
 * iopoll=1 polls for completions (IORING_SETUP_IOPOLL) where the device has poll queues
 * (nvme.poll_queues=N); fixedbufs=1 registers the buffers (IORING_URING_CMD_FIXED).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/error.h"
#include "engine/engine.h"
#include "engine/uring_setup.h"

#define NVME_CMD_WRITE 0x01
#define NVME_CMD_READ  0x02

struct ucmd_opts {
	int iopoll;
	int fixedbufs;
	int cmd_type;
};

static const struct llmio_optdesc ucmd_options[] = {
        {
                .name = "iopoll",
                .alias = "hipri",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct ucmd_opts, iopoll),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "poll for completions (IORING_SETUP_IOPOLL); needs a device with poll "
                        "queues (nvme.poll_queues), otherwise runs with interrupts and says so",
                .fio_kind = OPTD_FIO_CUSTOM, /* hipri, and what fio's engine needs more */
        },
        {
                .name = "fixedbufs",
                .type = OPTD_BOOL,
                OPTD_FIELD(struct ucmd_opts, fixedbufs),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "0",
                .help = "register the buffers with the ring (IORING_URING_CMD_FIXED: no "
                        "per-I/O page pinning; Linux 6.1)",
                .fio_kind = OPTD_FIO_VALUE,
        },
        {
                /* fio's io_uring_cmd takes the same commands under cmd_type=nvme, its default */
                .name = "cmd_type",
                .type = OPTD_ENUM,
                OPTD_FIELD(struct ucmd_opts, cmd_type),
                .scope = OPTD_SCOPE_ENGINE,
                .def = "nvme",
                .choices = "nvme",
                .help = "the passthrough commands: nvme (fio's cmd_type; the only kind)",
                .fio_kind = OPTD_FIO_CUSTOM, /* written with iopoll's lines */
        },
        {.name = NULL},
};

struct ns_dev {
	int fd; /* /dev/ngXnY */
	uint32_t nsid;
	uint32_t lba;
	uint64_t size;
};

struct ucmd_eng {
	struct io_uring ring;
	struct ns_dev *ns;
	unsigned nfiles;
	unsigned inflight; /* queued or in the kernel */
	bool fixedbufs;
	unsigned nbufs;
	char first_err[160];
};

/* Is there an NVMe generic device, and may we open it?  0, or -errno with the reason. */
static int find_ng(char *why, size_t len)
{
	char path[PATH_MAX] = "";
	struct dirent *de;
	DIR *d = opendir("/dev");
	int fd;

	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "ng", 2) && strchr(de->d_name, 'n') &&
		    de->d_name[2] >= '0' && de->d_name[2] <= '9') {
			snprintf(path, sizeof(path), "/dev/%s", de->d_name);
			break;
		}
	if (d)
		closedir(d);
	if (!path[0]) {
		snprintf(why, len,
		         "no NVMe generic character device (/dev/ngXnY): this machine has no NVMe "
		         "namespace, or its kernel is older than 5.13; use io_uring on the block "
		         "device");
		return -ENODEV;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		snprintf(why, len,
		         "%.64s: %s: passthrough needs read-write access to the generic device "
		         "(root, or a udev rule giving a group rw on /dev/ng*)",
		         path, strerror(err));
		return -err;
	}
	close(fd);
	snprintf(why, len, "%s", path);
	return 0;
}

static int ucmd_probe(char *why, size_t len)
{
	struct io_uring_params par = {.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32};
	struct io_uring ring;
	char dev[PATH_MAX];
	int ret;

	ret = io_uring_queue_init_params(1, &ring, &par);
	if (ret == -EINVAL) {
		snprintf(why, len,
		         "this kernel is too old for NVMe passthrough: io_uring refuses 128-byte "
		         "SQEs (IORING_SETUP_SQE128 needs Linux 5.19)");
		return ret;
	}
	if (ret < 0) {
		struct llmio_error e;

		llmio_error_init(&e);
		uring_explain_setup(-ret, "io_uring_queue_init_params(SQE128|CQE32)", &e);
		snprintf(why, len, "%s", e.msg);
		return ret;
	}
	io_uring_queue_exit(&ring);
	ret = find_ng(dev, sizeof(dev));
	snprintf(why, len, "%s%s", ret ? "" : "NVMe generic devices, such as ", dev);
	return ret;
}

/* One line of a sysfs file of block device `name` into buf. */
static int sysfs_read(const char *name, const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/block/%s/%s", name, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The generic device of the namespace whose block device fd is open. */
static int open_ns(struct ns_dev *ns, unsigned i, int fd, uint64_t size, bool writable, uint64_t bs,
                   struct llmio_error *e)
{
	char link[PATH_MAX], target[PATH_MAX], ng[PATH_MAX + 8], text[32];
	const char *name;
	struct stat st;
	ssize_t n;
	int ret;

	if (fstat(fd, &st) || !S_ISBLK(st.st_mode))
		return llmio_err(
		        e, -EINVAL,
		        "uring_cmd does NVMe passthrough: give the namespace's block device "
		        "(--filename /dev/nvme0n1); file %u is not a block device",
		        i);
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return llmio_err(e, -ENODEV, "uring_cmd: %s: %s", link,
		                 n < 0 ? strerror(errno) : "empty link");
	target[n] = '\0';
	name = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
	if (strncmp(name, "nvme", 4) || !strchr(name + 4, 'n') || strchr(name, 'p'))
		return llmio_err(
		        e, -EINVAL,
		        "uring_cmd: %s is not an NVMe namespace (nvmeXnY, not a partition): "
		        "passthrough needs one; use io_uring for other devices",
		        name);
	snprintf(ng, sizeof(ng), "/dev/ng%s", name + 4);
	ns->fd = open(ng, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (ns->fd < 0)
		return llmio_err(
		        e, -errno, "uring_cmd: cannot open %s, the generic device of %s: %s%s", ng,
		        name, strerror(errno),
		        errno == ENOENT   ? " (kernel older than 5.13?)"
		        : errno == EACCES ? " (root, or a udev rule giving a group rw on /dev/ng*)"
		                          : "");
	ret = ioctl(ns->fd, NVME_IOCTL_ID);
	if (ret <= 0)
		return llmio_err(e, ret < 0 ? -errno : -ENODEV,
		                 "uring_cmd: NVME_IOCTL_ID on %s: %s", ng,
		                 ret < 0 ? strerror(errno) : "namespace id 0");
	ns->nsid = (uint32_t)ret;
	ret = sysfs_read(name, "queue/logical_block_size", text, sizeof(text));
	ns->lba = ret ? 0 : (uint32_t)strtoul(text, NULL, 10);
	if (!ns->lba || ns->lba & (ns->lba - 1))
		return llmio_err(e, -ENODEV, "uring_cmd: no LBA size for %s (sysfs %s)", name,
		                 ret ? strerror(-ret) : text);
	/* passthrough is not split by the block layer: an I/O above the device's limit fails */
	if (!sysfs_read(name, "queue/max_hw_sectors_kb", text, sizeof(text)) &&
	    bs > strtoull(text, NULL, 10) * 1024)
		return llmio_err(e, -EINVAL,
		                 "uring_cmd: bs=%llu is larger than what %s takes in one command "
		                 "(max_hw_sectors_kb %s): passthrough is not split; lower bs",
		                 (unsigned long long)bs, name, text);
	ns->size = size;
	return 0;
}

static void ucmd_free(struct ucmd_eng *p, bool ring)
{
	for (unsigned i = 0; p->ns && i < p->nfiles; i++)
		if (p->ns[i].fd >= 0)
			close(p->ns[i].fd);
	if (ring)
		io_uring_queue_exit(&p->ring);
	free(p->ns);
	free(p);
}

static void register_bufs(struct ucmd_eng *p, const struct engine_setup *s, char *notes,
                          size_t nlen)
{
	struct iovec *iov = calloc(s->nbufs ? s->nbufs : 1, sizeof(*iov));
	int ret = -ENOMEM;

	for (unsigned i = 0; iov && i < s->nbufs; i++)
		iov[i] = (struct iovec){.iov_base = s->bufs[i], .iov_len = s->buf_len};
	if (iov && s->nbufs)
		ret = io_uring_register_buffers(&p->ring, iov, s->nbufs);
	free(iov);
	p->fixedbufs = ret == 0;
	p->nbufs = s->nbufs;
	if (ret)
		engine_appendf(notes, nlen,
		               ", fixedbufs requested but io_uring_register_buffers failed (%s): "
		               "plain buffers",
		               strerror(-ret));
	else
		engine_appendf(notes, nlen, ", fixedbufs on (IORING_URING_CMD_FIXED)");
}

static int ucmd_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	const struct ucmd_opts *o = s->opts;
	struct io_uring_params par = {.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32};
	unsigned depth = s->iodepth ? s->iodepth : 1;
	char poll_note[200] = "";
	struct ucmd_eng *p;
	int ret;

	ctx->priv = NULL;
	ctx->notes[0] = '\0';
	p = calloc(1, sizeof(*p));
	if (!p)
		return llmio_err(e, -ENOMEM, "uring_cmd: out of memory for the engine state");
	p->nfiles = s->nfiles;
	p->ns = calloc(s->nfiles ? s->nfiles : 1, sizeof(*p->ns));
	if (!p->ns) {
		free(p);
		return llmio_err(e, -ENOMEM, "uring_cmd: out of memory for the engine state");
	}
	for (unsigned i = 0; i < s->nfiles; i++)
		p->ns[i].fd = -1;
	for (unsigned i = 0; i < s->nfiles; i++) {
		ret = open_ns(&p->ns[i], i, s->fds[i], s->file_sizes[i], s->writable, s->buf_len,
		              e);
		if (ret)
			goto fail;
	}
	if (o && o->iopoll) {
		const char *dev = s->devname && s->devname[0] ? s->devname : "the target";

		if (s->dev_io_poll == 1)
			par.flags |= IORING_SETUP_IOPOLL;
		else
			snprintf(poll_note, sizeof(poll_note),
			         ", iopoll requested but %s has no poll queues (queue/io_poll=0; "
			         "boot with nvme.poll_queues=N): interrupt completions",
			         dev);
	}
	ret = io_uring_queue_init_params(depth, &p->ring, &par);
	if (ret < 0) {
		uring_explain_setup(-ret, "io_uring_queue_init_params(SQE128|CQE32)", e);
		goto fail;
	}
	engine_appendf(ctx->notes, sizeof(ctx->notes),
	               "NVMe passthrough (IORING_OP_URING_CMD, NVME_URING_CMD_IO) on /dev/ng of "
	               "%s: nsid %u, %u-byte LBAs; SQE128/CQE32 ring, %s%s",
	               s->devname && s->devname[0] ? s->devname : "the namespace",
	               s->nfiles ? p->ns[0].nsid : 0, s->nfiles ? p->ns[0].lba : 0,
	               par.flags & IORING_SETUP_IOPOLL ? "iopoll on (polled completions)"
	                                               : "interrupt completions",
	               poll_note);
	if (o && o->fixedbufs)
		register_bufs(p, s, ctx->notes, sizeof(ctx->notes));
	engine_appendf(ctx->notes, sizeof(ctx->notes),
	               "; no block layer or page cache, whatever --direct says");
	ctx->priv = p;
	return 0;

fail:
	ucmd_free(p, false);
	return ret;
}

static int ucmd_queue(struct engine_ctx *ctx, struct io_req *io)
{
	struct ucmd_eng *p = ctx->priv;
	struct io_uring_sqe *sqe;
	struct nvme_uring_cmd *cmd;
	const struct ns_dev *ns;
	uint64_t n, slba;

	if (io->file >= p->nfiles) {
		io->res = -EBADF;
		return ENGINE_Q_COMPLETED;
	}
	ns = &p->ns[io->file];
	if (io->off % ns->lba || io->len % ns->lba) {
		io->res = -EINVAL; /* a command addresses whole LBAs */
		return ENGINE_Q_COMPLETED;
	}
	n = io->off < ns->size ? (ns->size - io->off < io->len ? ns->size - io->off : io->len) : 0;
	n -= n % ns->lba;
	if (!n) {
		io->res = 0; /* at the end, as pread says */
		return ENGINE_Q_COMPLETED;
	}
	sqe = io_uring_get_sqe(&p->ring);
	if (!sqe)
		return ENGINE_Q_BUSY;
	memset(sqe, 0, 2 * sizeof(*sqe)); /* a 128-byte SQE */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = ns->fd;
	sqe->cmd_op = NVME_URING_CMD_IO;
	if (p->fixedbufs && io->buf_idx < p->nbufs) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = io->buf_idx;
	}
	io_uring_sqe_set_data(sqe, io);
	slba = io->off / ns->lba;
	cmd = (struct nvme_uring_cmd *)sqe->cmd;
	cmd->opcode = io->op == ENGINE_OP_READ ? NVME_CMD_READ : NVME_CMD_WRITE;
	cmd->nsid = ns->nsid;
	cmd->addr = (uint64_t)(uintptr_t)io->buf;
	cmd->data_len = (uint32_t)n;
	cmd->cdw10 = (uint32_t)slba;
	cmd->cdw11 = (uint32_t)(slba >> 32);
	cmd->cdw12 = (uint32_t)(n / ns->lba - 1); /* number of LBAs, 0-based */
	io->res = (int64_t)n;                     /* unless the completion says otherwise */
	p->inflight++;
	return ENGINE_Q_QUEUED;
}

static int ucmd_commit(struct engine_ctx *ctx)
{
	(void)ctx;
	return 0; /* reap submits and waits in one system call */
}

static unsigned drain(struct ucmd_eng *p, struct io_req **evs, unsigned max)
{
	struct io_uring_cqe *cqe;
	unsigned n = 0;

	while (n < max && io_uring_peek_cqe(&p->ring, &cqe) == 0) {
		struct io_req *io = io_uring_cqe_get_data(cqe);

		if (cqe->res) { /* -errno, or the NVMe status the device answered */
			if (!p->first_err[0])
				snprintf(p->first_err, sizeof(p->first_err),
				         "%s at offset %llu: %s %d", io->op ? "write" : "read",
				         (unsigned long long)io->off,
				         cqe->res < 0 ? "errno" : "NVMe status",
				         cqe->res < 0 ? -cqe->res : cqe->res);
			io->res = cqe->res < 0 ? cqe->res : -EIO;
		}
		evs[n++] = io;
		io_uring_cqe_seen(&p->ring, cqe);
	}
	p->inflight -= n;
	return n;
}

static int ucmd_reap(struct engine_ctx *ctx, unsigned min, struct io_req **evs, unsigned max)
{
	struct ucmd_eng *p = ctx->priv;
	unsigned n = 0;

	if (min > p->inflight)
		min = p->inflight;
	if (min > max)
		min = max;
	for (;;) {
		int ret = io_uring_submit_and_wait(&p->ring, n < min ? min - n : 0);

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY)
			return ret;
		n += drain(p, evs + n, max - n);
		if (n >= min)
			return (int)n;
	}
}

static void ucmd_cleanup(struct engine_ctx *ctx)
{
	struct ucmd_eng *p = ctx->priv;
	struct io_req *evs[64];

	if (!p)
		return;
	/* what the kernel holds lands in buffers about to be freed: wait for it */
	p->inflight -= io_uring_sq_ready(&p->ring); /* never submitted */
	while (p->inflight) {
		unsigned want = p->inflight < 64 ? p->inflight : 64;

		if (io_uring_wait_cqe_nr(&p->ring, &(struct io_uring_cqe *){NULL}, 1) < 0 ||
		    !drain(p, evs, want))
			break;
	}
	if (p->first_err[0])
		engine_appendf(ctx->notes, sizeof(ctx->notes), "; first failed command: %s",
		               p->first_err);
	if (p->fixedbufs)
		io_uring_unregister_buffers(&p->ring);
	ucmd_free(p, true);
	ctx->priv = NULL;
}

/* --emit-fio: fio's io_uring_cmd engine is given the generic device itself. */
static void ucmd_fio_option(const struct llmio_optdesc *o, int v, struct engine_fio_job *j)
{
	if (!strcmp(o->name, "cmd_type"))
		return; /* written with iopoll's lines, below */
	fprintf(j->f,
	        "%s=%d\ncmd_type=nvme\n; differs: fio's io_uring_cmd takes the generic device as "
	        "its filename: /dev/ngXnY for the /dev/nvmeXnY given here\n",
	        optdesc_fio_name(o), v);
}

static const char *const ucmd_aliases[] = {"io_uring_cmd", NULL};
static const char *const ucmd_variants[] = {"iopoll=1", "fixedbufs=1", NULL};

const struct engine_ops engine_uring_cmd = {
        .abi_version = ENGINE_ABI_VERSION,
        .name = "uring_cmd",
        .aliases = ucmd_aliases,
        .fio_name = "io_uring_cmd",
        .summary = "NVMe passthrough through io_uring (IORING_OP_URING_CMD) on /dev/ngXnY: "
                   "NVMe read/write commands, no block layer; optional IOPOLL",
        .caps = ENGINE_CAP_ASYNC | ENGINE_CAP_DIRECT | ENGINE_CAP_POLLED | ENGINE_CAP_NAMESPACE,
        .opts = ucmd_options,
        .opts_size = sizeof(struct ucmd_opts),
        .probe = ucmd_probe,
        .init = ucmd_init,
        .queue = ucmd_queue,
        .commit = ucmd_commit,
        .reap = ucmd_reap,
        .cleanup = ucmd_cleanup,
        .fio_option = ucmd_fio_option,
        .test_variants = ucmd_variants,
};
