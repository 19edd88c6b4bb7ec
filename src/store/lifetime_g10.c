/* SPDX-License-Identifier: MIT */
/*
 * Reader of G10's operator graphs (platformxlab/G10, frontend/Nets/BERT_Base.txt and VIT.txt, as
 * frontend/Nets/parse_transformer_model.py writes them and src/ast.cc transformer_parse() reads
 * them).  The format was read from G10's source; no code is taken from it.  A record is
 * whitespace-separated:
 *
 *	ID TYPE NINPUTS  INPUT_ID x NINPUTS  (NDIMS DIM x NDIMS) x NINPUTS  -------------------
 *
 * An input's id is the id of the operator that produced it; an id no record defines is a model
 * parameter or the step's input.  A dimension of 99 stands for the batch size.  A SoftmaxBasic
 * record is followed by the three records of its decomposition, which G10 folds into it (the
 * softmax then has the last one's id); so do we.  G10's other graphs (the printed PyTorch module
 * trees of ResNet, Inception ...) are not operator lists and are refused with that reason.
 *
 * What we build: one forward kernel per operator; then one backward kernel per operator in
 * reverse order, which reads the operator's inputs and the gradient of its output and writes
 * the gradients of its inputs.  Parameters live across steps; their gradient is created by the
 * first backward kernel that touches the parameter and applied by the last one.  An input
 * that no record produces and that has the batch dimension is the step's data (or the value of
 * an operator G10's parser dropped, a Reshape or Broadcast): it appears at its first reader. Kernel
 *time: FLOPs (2*M*N*K for Dot/BatchMatMul, one per input element otherwise) at `tflops` plus the
 * bytes touched at 1555 GB/s (the A100-40GB that G10 simulates); backward takes twice its
 * forward.  With total_s > 0 the times are scaled so that the step's compute is total_s (the
 * sum of G10's measured kernel times for that batch, results/<model>/cudnn<batch>.txt).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "store/lifetime.h"

#define G10_MAX_OPS    16384 /* lookups are linear: bounded work for any file */
#define G10_MAX_INPUTS 16
#define G10_MAX_DIMS   8
#define G10_HBM_GBPS   1555.0
#define G10_SEPARATOR  "-------------------"

struct g10_input {
	long id;
	uint32_t ndims;
	uint64_t dims[G10_MAX_DIMS];
	bool batch; /* has the batch dimension */
};

struct g10_op {
	long id;
	char type[32];
	uint32_t nin;
	struct g10_input in[G10_MAX_INPUTS];
	unsigned line;
};

struct tok {
	FILE *f;
	const char *path;
	unsigned line;
	char buf[64];
};

/* Next whitespace-separated token; 0, 1 at end of file, -EINVAL when too long. */
static int next(struct tok *t, struct llmio_error *e)
{
	unsigned line = t->line;
	size_t n = 0;
	int c;

	while ((c = fgetc(t->f)) != EOF && (c == ' ' || c == '\t' || c == '\n' || c == '\r'))
		t->line += c == '\n';
	if (c == EOF) {
		t->line = line; /* "the file ends" where its last token is */
		return 1;
	}
	while (c != EOF && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
		if (n + 1 >= sizeof(t->buf))
			return llmio_err(e, -EINVAL, "%s:%u: token longer than %zu characters",
			                 t->path, t->line, sizeof(t->buf) - 1);
		t->buf[n++] = (char)c;
		c = fgetc(t->f);
	}
	t->buf[n] = 0;
	if (c == '\n')
		ungetc(c, t->f); /* counted by the next call, so errors name this token's line */
	return 0;
}

static int next_num(struct tok *t, const char *what, uint64_t max, uint64_t *out,
                    struct llmio_error *e)
{
	char *end;
	int ret = next(t, e);

	if (ret < 0)
		return ret;
	if (ret)
		return llmio_err(e, -EINVAL, "%s:%u: the file ends where %s was expected", t->path,
		                 t->line, what);
	errno = 0;
	*out = strtoull(t->buf, &end, 10);
	if (t->buf[0] < '0' || t->buf[0] > '9' || *end || errno || *out > max)
		return llmio_err(e, -EINVAL, "%s:%u: %s '%s' is not a number up to %llu", t->path,
		                 t->line, what, t->buf, (unsigned long long)max);
	return 0;
}

/* One record; 1 at a clean end of file. */
static int read_op(struct tok *t, struct g10_op *op, uint32_t batch, struct llmio_error *e)
{
	uint64_t v;
	int ret;

	memset(op, 0, sizeof(*op));
	ret = next(t, e);
	if (ret)
		return ret;
	op->line = t->line;
	if (t->buf[0] < '0' || t->buf[0] > '9')
		return llmio_err(
		        e, -EINVAL,
		        "%s:%u: '%s' is not an operator id (G10's module-tree graphs such as "
		        "ResNet152.txt are not operator lists; use BERT_Base.txt or VIT.txt)",
		        t->path, t->line, t->buf);
	op->id = strtol(t->buf, NULL, 10);
	if ((ret = next(t, e)) < 0)
		return ret;
	if (ret)
		return llmio_err(e, -EINVAL, "%s:%u: the file ends inside operator %ld", t->path,
		                 t->line, op->id);
	snprintf(op->type, sizeof(op->type), "%.31s", t->buf);
	if ((ret = next_num(t, "the number of inputs", G10_MAX_INPUTS, &v, e)))
		return ret;
	op->nin = (uint32_t)v;
	for (uint32_t i = 0; i < op->nin; i++) {
		if ((ret = next_num(t, "an input id", 1u << 30, &v, e)))
			return ret;
		op->in[i].id = (long)v;
	}
	for (uint32_t i = 0; i < op->nin; i++) {
		if ((ret = next_num(t, "a number of dimensions", G10_MAX_DIMS, &v, e)))
			return ret;
		op->in[i].ndims = (uint32_t)v;
		for (uint32_t d = 0; d < op->in[i].ndims; d++) {
			if ((ret = next_num(t, "a dimension", 1u << 30, &v, e)))
				return ret;
			if (v == 99) {
				v = batch;
				op->in[i].batch = true;
			}
			op->in[i].dims[d] = v;
		}
	}
	if ((ret = next(t, e)) < 0)
		return ret;
	if (ret || strcmp(t->buf, G10_SEPARATOR))
		return llmio_err(e, -EINVAL,
		                 "%s:%u: operator %ld: expected the separator %s after its inputs, "
		                 "found '%s'",
		                 t->path, t->line, op->id, G10_SEPARATOR,
		                 ret ? "end of file" : t->buf);
	return 0;
}

/* Elements of an input, saturated at 2^48 (lt_add_tensor refuses what is that large). */
static uint64_t numel(const struct g10_input *in)
{
	uint64_t n = 1;

	for (uint32_t d = 0; d < in->ndims; d++) {
		uint64_t v = in->dims[d] ? in->dims[d] : 1;

		n = n > (1ull << 48) / v ? 1ull << 48 : n * v;
	}
	return n;
}

static double op_seconds(const struct g10_op *op, const struct lt_g10_opts *g)
{
	double flops = 0, bytes = 0;

	for (uint32_t i = 0; i < op->nin; i++)
		bytes += (double)numel(&op->in[i]) * g->elem_bytes;
	if ((!strcmp(op->type, "Dot") || !strcmp(op->type, "BatchMatMul")) && op->nin >= 2 &&
	    op->in[1].ndims)
		flops = 2.0 * (double)numel(&op->in[0]) *
		        (double)op->in[1].dims[op->in[1].ndims - 1];
	else
		for (uint32_t i = 0; i < op->nin; i++)
			flops += (double)numel(&op->in[i]);
	return flops / (g->tflops * 1e12) + bytes / (G10_HBM_GBPS * 1e9);
}

/* Index of the op with this id, or -1 (a parameter or the step's input). */
static long op_index(const struct g10_op *ops, uint32_t n, long id)
{
	for (uint32_t i = 0; i < n; i++)
		if (ops[i].id == id)
			return i;
	return -1;
}

struct tinfo {
	long id;
	uint64_t bytes;
	bool param, data;
	uint32_t created;
	uint32_t *uses;
	uint32_t nuses, cap;
	unsigned line;
};

static int add_use(struct tinfo *t, uint32_t k)
{
	if (t->nuses && t->uses[t->nuses - 1] == k)
		return 0;
	if (t->nuses == t->cap) {
		uint32_t c = t->cap ? t->cap * 2 : 8;
		uint32_t *p = realloc(t->uses, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->uses = p;
		t->cap = c;
	}
	t->uses[t->nuses++] = k;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort a tensor's uses and drop repeats (an operator may read one value twice). */
static void sort_uses(struct tinfo *t)
{
	uint32_t n = 0;

	qsort(t->uses, t->nuses, sizeof(uint32_t), cmp_u32);
	for (uint32_t i = 0; i < t->nuses; i++)
		if (!n || t->uses[n - 1] != t->uses[i])
			t->uses[n++] = t->uses[i];
	t->nuses = n;
}

/* Tensor info for id (found or added); NULL when out of memory. */
static struct tinfo *tensor_of(struct tinfo **ts, uint32_t *n, uint32_t *cap, long id)
{
	for (uint32_t i = 0; i < *n; i++)
		if ((*ts)[i].id == id)
			return &(*ts)[i];
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 256;
		struct tinfo *p = realloc(*ts, c * sizeof(*p));

		if (!p)
			return NULL;
		*ts = p;
		*cap = c;
	}
	memset(&(*ts)[*n], 0, sizeof(**ts));
	(*ts)[*n].id = id;
	return &(*ts)[(*n)++];
}

int lt_read_g10(struct lt_step *s, FILE *f, const char *path, const struct lt_g10_opts *g,
                struct llmio_error *e)
{
	struct tok t = {.f = f, .path = path, .line = 1};
	struct g10_op *ops = NULL, skip;
	struct tinfo *ts = NULL, *gr = NULL;
	uint32_t nops = 0, opcap = 0, nts = 0, tcap = 0, ngr = 0, gcap = 0, nk;
	double total = 0, scale = 1;
	char name[LT_NAME_MAX];
	int ret;

	if (!g || !g->batch || !(g->tflops > 0) || !g->elem_bytes)
		return llmio_err(e, -EINVAL,
		                 "reading a G10 graph needs a batch size, tflops > 0 and "
		                 "element bytes");
	for (;;) {
		if (nops == opcap) {
			uint32_t c = opcap ? opcap * 2 : 256;
			struct g10_op *p;

			if (c > G10_MAX_OPS) {
				ret = llmio_err(e, -E2BIG, "%s:%u: more than %u operators", path,
				                t.line, G10_MAX_OPS);
				goto out;
			}
			p = realloc(ops, c * sizeof(*p));
			if (!p) {
				ret = llmio_err(e, -ENOMEM, "out of memory reading %s", path);
				goto out;
			}
			ops = p;
			opcap = c;
		}
		ret = read_op(&t, &ops[nops], g->batch, e);
		if (ret < 0)
			goto out;
		if (ret)
			break;
		if (!strcmp(ops[nops].type, "SoftmaxBasic"))
			for (int j = 0; j < 3; j++) {
				ret = read_op(&t, &skip, g->batch, e);
				if (ret) {
					if (ret > 0)
						ret = llmio_err(e, -EINVAL,
						                "%s:%u: SoftmaxBasic %ld is not "
						                "followed by "
						                "its three decomposition records",
						                path, t.line, ops[nops].id);
					goto out;
				}
				ops[nops].id = skip.id;
			}
		nops++;
	}
	ret = 0;
	if (!nops) {
		ret = llmio_err(e, -EINVAL, "%s: no operators", path);
		goto out;
	}
	snprintf(s->origin, sizeof(s->origin), "%s (G10 graph, batch %u)", path, g->batch);
	nk = 2 * nops;
	/* kernels: forward in order, backward in reverse */
	for (uint32_t i = 0; i < nops; i++)
		total += 3 * op_seconds(&ops[i], g);
	if (g->total_s > 0 && total > 0)
		scale = g->total_s / total;
	for (uint32_t k = 0; k < nk && !ret; k++) {
		const struct g10_op *op = &ops[k < nops ? k : nk - 1 - k];
		double sec = op_seconds(op, g) * (k < nops ? 1 : 2) * scale;

		snprintf(name, sizeof(name), "%s.%ld.%s", k < nops ? "fwd" : "bwd", op->id,
		         op->type);
		ret = lt_add_kernel(s, name, sec, e);
	}
	if (ret)
		goto out;
	/* forward values: an input id is produced by an op (an activation) or not (a parameter
	 * or the data); kernel i and kernel nk-1-i both read op i's inputs */
	for (uint32_t i = 0; i < nops; i++)
		for (uint32_t j = 0; j < ops[i].nin; j++) {
			const struct g10_input *in = &ops[i].in[j];
			long p = op_index(ops, nops, in->id);
			struct tinfo *ti = tensor_of(&ts, &nts, &tcap, in->id);
			struct tinfo *gi;

			if (!ti) {
				ret = llmio_err(e, -ENOMEM, "out of memory reading %s", path);
				goto out;
			}
			if (!ti->bytes) {
				ti->bytes = numel(in) * g->elem_bytes;
				ti->line = ops[i].line;
				ti->param = p < 0 && !in->batch;
				ti->data = p < 0 && in->batch;
				/* data (or a value of an operator G10's parser dropped) appears
				 * when it is first read */
				ti->created = p >= 0 ? (uint32_t)p : ti->param ? LT_PERSISTENT : i;
			}
			if (add_use(ti, i) || add_use(ti, nk - 1 - i)) {
				ret = llmio_err(e, -ENOMEM, "out of memory reading %s", path);
				goto out;
			}
			/* gradient of this input: written by this op's backward kernel; read by the
			 * producer's backward (an activation) or applied at its last use (a param)
			 */
			if (ti->data)
				continue;
			gi = tensor_of(&gr, &ngr, &gcap, in->id);
			if (!gi) {
				ret = llmio_err(e, -ENOMEM, "out of memory reading %s", path);
				goto out;
			}
			if (!gi->bytes) {
				gi->bytes = ti->bytes;
				gi->param = ti->param;
				gi->line = ops[i].line;
			}
			if (add_use(gi, nk - 1 - i) ||
			    (p >= 0 && add_use(gi, nk - 1 - (uint32_t)p))) {
				ret = llmio_err(e, -ENOMEM, "out of memory reading %s", path);
				goto out;
			}
		}
	for (uint32_t i = 0; i < nts && !ret; i++) {
		sort_uses(&ts[i]);
		snprintf(name, sizeof(name), "%s%ld", ts[i].param ? "w" : "a", ts[i].id);
		ret = lt_add_tensor(s, name, ts[i].bytes, ts[i].param ? LT_WEIGHT : LT_ACTIVATION,
		                    ts[i].created, ts[i].uses, ts[i].nuses, e);
		if (!ret)
			s->tensors[s->ntensors - 1].line = ts[i].line;
	}
	for (uint32_t i = 0; i < ngr && !ret; i++) {
		/* created by the first backward kernel that touches it (the last consumer's) */
		sort_uses(&gr[i]);
		gr[i].created = gr[i].uses[0];
		memmove(gr[i].uses, gr[i].uses + 1, (gr[i].nuses - 1) * sizeof(uint32_t));
		gr[i].nuses--;
		snprintf(name, sizeof(name), "g%ld", gr[i].id);
		ret = lt_add_tensor(s, name, gr[i].bytes, LT_GRADIENT, gr[i].created, gr[i].uses,
		                    gr[i].nuses, e);
		if (!ret)
			s->tensors[s->ntensors - 1].line = gr[i].line;
	}
	if (!ret)
		ret = lt_finish(s, e);
out:
	for (uint32_t i = 0; i < nts; i++)
		free(ts[i].uses);
	for (uint32_t i = 0; i < ngr; i++)
		free(gr[i].uses);
	free(ts);
	free(gr);
	free(ops);
	return ret;
}
