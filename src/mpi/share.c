/* SPDX-License-Identifier: MIT */
/* Each rank's share of a `llmio run` job (dist.h): its own file or its own region of one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "mpi/ranks.h"
#include "workload/segsrc.h"

static const char *const layout_names[] = {
        [RANKS_FILE_PER_PROCESS] = "file-per-process",
        [RANKS_SHARED_FILE] = "shared-file",
};

const char *ranks_layout_name(enum ranks_layout l)
{
	return l <= RANKS_SHARED_FILE ? layout_names[l] : "?";
}

int ranks_layout_parse(const char *s, enum ranks_layout *l, struct llmio_error *e)
{
	for (unsigned i = 0; i <= RANKS_SHARED_FILE; i++)
		if (!strcmp(s, layout_names[i])) {
			*l = (enum ranks_layout)i;
			return 0;
		}
	return llmio_err(e, -EINVAL,
	                 "--mpi_layout=%s: use file-per-process (IOR -F) or shared-file (IOR's "
	                 "default)",
	                 s);
}

/* Blocks of rank r out of `blocks` over n ranks: equal shares, the remainder to the first. */
static uint64_t share_blocks(uint64_t blocks, unsigned n, unsigned r, uint64_t *first)
{
	uint64_t per = blocks / n, extra = blocks % n;

	*first = r * per + (r < extra ? r : extra);
	return per + (r < extra);
}

/* The region [off, off + len) split over the job's threads, block by block. */
static int region(struct llmio_job_opts *o, struct ranks_share *sh, uint64_t off, uint64_t len,
                  struct llmio_error *e)
{
	struct segsrc *s = calloc(1, sizeof(*s));
	uint64_t blocks = len / o->bs;
	int ret;

	if (!s)
		return llmio_err(e, -ENOMEM, "out of memory");
	ret = segsrc_init(s, o->numjobs, (uint32_t)o->bs, o->direct ? 4096 : 1,
	                  o->rw == LLMIO_RW_WRITE);
	for (unsigned t = 0; t < o->numjobs && !ret; t++) {
		uint64_t first, n = share_blocks(blocks, o->numjobs, t, &first);

		if (n)
			ret = segsrc_add(s, t, 0, off + first * o->bs, n * o->bs);
	}
	if (ret) {
		segsrc_release(s);
		free(s);
		return llmio_err(e, ret, "out of memory");
	}
	sh->segs = s;
	sh->file = (struct llmio_file){.path = sh->path, .size = o->size};
	o->filename[0] = '\0'; /* the file list names it */
	o->files = &sh->file;
	o->nfiles_list = 1;
	o->io_source = &s->src;
	return 0;
}

int ranks_job_share(struct llmio_job_opts *o, unsigned rank, unsigned size,
                    enum ranks_layout layout, unsigned reorder_shift, struct ranks_share *sh,
                    struct llmio_error *e)
{
	bool reads = o->rw == LLMIO_RW_READ || o->rw == LLMIO_RW_RANDREAD;
	unsigned src = reads && size ? (rank + reorder_shift) % size : rank;
	uint64_t first, blocks, mine;

	memset(sh, 0, sizeof(*sh));
	if (!o->filename[0] && o->directory[0]) {
		/* a directory (sweep --dir): the ranks' file is llmio's own, in its work directory
		 */
		char work[LLMIO_PATH_MAX];
		int ret = llmio_work_dir(o->directory, work, sizeof(work), e);

		if (ret)
			return ret;
		if (snprintf(o->filename, sizeof(o->filename), "%s/mpi.dat", work) >=
		    (int)sizeof(o->filename))
			return llmio_err(e, -ENAMETOOLONG, "--directory is too long");
		o->directory[0] = '\0';
		o->nrfiles = 1;
	}
	if (!o->filename[0])
		return llmio_err(e, -EINVAL,
		                 "under mpirun, llmio run needs --filename or --directory: each "
		                 "rank's file or region is named from it (docs/mpi.md)");
	if (!o->size || !o->bs)
		return llmio_err(
		        e, -EINVAL,
		        "under mpirun, llmio run needs --size: the ranks share it (docs/mpi.md)");
	blocks = o->size / o->bs;
	mine = share_blocks(blocks, size, src, &first) * o->bs;
	if (!mine)
		return llmio_err(
		        e, -EINVAL,
		        "--size=%llu is %llu blocks of --bs for %u ranks: rank %u has nothing "
		        "to do; raise --size",
		        (unsigned long long)o->size, (unsigned long long)blocks, size, src);
	snprintf(sh->path, sizeof(sh->path), "%s", o->filename);
	if (layout == RANKS_FILE_PER_PROCESS) {
		/* IOR's name for file-per-process: the rank as 8 digits after a dot */
		if (snprintf(o->filename, sizeof(o->filename), "%s.%08u", sh->path, src) >=
		    (int)sizeof(o->filename))
			return llmio_err(e, -ENAMETOOLONG,
			                 "--filename is too long for a rank suffix");
		o->size = mine;
		return 0;
	}
	if (o->rw == LLMIO_RW_READ || o->rw == LLMIO_RW_WRITE)
		return region(o, sh, first * o->bs, mine, e);
	/* random over the whole shared file, as fio's jobs on one file: this rank's share of I/O */
	if (!o->runtime_ns) { /* with --runtime the ranks run for that long instead */
		o->io_size = mine / o->numjobs / o->bs * o->bs;
		if (!o->io_size)
			o->io_size = o->bs;
	}
	return 0;
}

void ranks_share_release(struct ranks_share *sh)
{
	if (sh->segs) {
		segsrc_release(sh->segs);
		free(sh->segs);
	}
	sh->segs = NULL;
}
