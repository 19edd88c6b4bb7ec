/* SPDX-License-Identifier: MIT */
/* The shared part of the file-operation engines (fileop.h). */
#include <errno.h>
#include <stdlib.h>

#include "engine/fileop.h"

int fileop_probe(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

int fileop_init(struct engine_ctx *ctx, const struct engine_setup *s, struct llmio_error *e)
{
	struct fileop *f = calloc(1, sizeof(*f));

	(void)e;
	if (!f)
		return -ENOMEM;
	*f = (struct fileop){
	        .fds = s->fds,
	        .names = s->names,
	        .created = s->created,
	        .nfiles = s->nfiles,
	        .opts = s->opts,
	};
	ctx->priv = f;
	return 0;
}

void fileop_cleanup(struct engine_ctx *ctx)
{
	free(ctx->priv);
	ctx->priv = NULL;
}
