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
 * What we build is G10's step (transformer_op_datalow_pass() and
 * transformer_scheduling_kernels() in its src/analysis.cc, read, not copied), so that the
 * kernels, the tensors and their lifetimes, hence the bytes a policy moves, are G10's: one
 * forward kernel per operator, the loss, then backward in reverse order (backward_op()).  An
 * input no record produces is a parameter when its id is below G10's border, else the step's
 * data (or the value of an operator G10's parser dropped, a Reshape or Broadcast), which
 * appears at its first reader.  Kernel time: FLOPs (2*M*N*K for Dot/BatchMatMul, one per input
 * element otherwise) at `tflops` plus the bytes touched at 1555 GB/s (the A100-40GB that G10
 * simulates); each backward gradient kernel as long as the operator's forward; sums, updates
 * and the loss the bytes they stream.  With total_s > 0 the times are scaled so that the
 * step's compute is total_s (the sum of G10's measured kernel times for that batch,
 * results/<model>/cudnn<batch>.txt).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "migrate/lifetime.h"

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

/* A tensor of the step: a forward value (keyed by the id of the operator that produces it or,
 * for a parameter or the data, the id readers name) or a gradient (one per consumer and input,
 * as G10 makes them; key -1).  Its touches are the kernels that read or write it. */
struct tinfo {
	long id;
	uint64_t bytes;
	bool param, data, grad;
	long from;         /* a gradient: the consumer op's id */
	int64_t next_dout; /* a gradient: the next one into the same producer, or -1 */
	uint32_t *uses;
	uint32_t nuses, cap;
	unsigned line;
};

struct g10_kern {
	char name[LT_NAME_MAX];
	double sec;
};

struct g10_build {
	struct tinfo *ts;
	uint32_t nts, tcap;
	struct g10_kern *ks;
	uint32_t nks, kcap;
	int64_t *dout_head, *dout_tail; /* per op: gradients of its output, G10's order */
	int64_t (*din)[G10_MAX_INPUTS]; /* per op and input: its gradient, or -1 (a constant) */
	int64_t (*vin)[G10_MAX_INPUTS]; /* per op and input: its forward value */
	int64_t *out;                   /* per op: its output value */
};

/* Room for one more element in the array at *pp (a pointer to the array's pointer) of n
 * elements (capacity *cap, doubling from first): 0 or -ENOMEM.  The pointer is copied in and
 * out with memcpy, so any element type's pointer can be passed. */
static int grow(void *pp, uint32_t n, uint32_t *cap, size_t elem, uint32_t first)
{
	uint32_t c;
	void *p, *q;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : first;
	memcpy(&p, pp, sizeof(p));
	q = realloc(p, (size_t)c * elem);
	if (!q)
		return -ENOMEM;
	memcpy(pp, &q, sizeof(q));
	*cap = c;
	return 0;
}

static int add_use(struct tinfo *t, uint32_t k)
{
	if (t->nuses && t->uses[t->nuses - 1] == k)
		return 0;
	if (grow(&t->uses, t->nuses, &t->cap, sizeof(*t->uses), 8))
		return -ENOMEM;
	t->uses[t->nuses++] = k;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort a tensor's touches and drop repeats (a kernel may read one value twice). */
static void sort_uses(struct tinfo *t)
{
	uint32_t n = 0;

	qsort(t->uses, t->nuses, sizeof(uint32_t), cmp_u32);
	for (uint32_t i = 0; i < t->nuses; i++)
		if (!n || t->uses[n - 1] != t->uses[i])
			t->uses[n++] = t->uses[i];
	t->nuses = n;
}

/* A new tensor's index, or -1 when out of memory. */
static int64_t new_tensor(struct g10_build *b, long id)
{
	if (grow(&b->ts, b->nts, &b->tcap, sizeof(*b->ts), 256))
		return -1;
	memset(&b->ts[b->nts], 0, sizeof(b->ts[0]));
	b->ts[b->nts].id = id;
	b->ts[b->nts].next_dout = -1;
	return b->nts++;
}

/* The forward value with this id, or -1. */
static int64_t value_of(const struct g10_build *b, long id)
{
	for (uint32_t i = 0; i < b->nts; i++)
		if (!b->ts[i].grad && b->ts[i].id == id)
			return i;
	return -1;
}

/* Append a kernel; its index, or -1 when out of memory. */
static int64_t kernel(struct g10_build *b, bool fwd, long id, const char *what, double sec)
{
	if (grow(&b->ks, b->nks, &b->kcap, sizeof(*b->ks), 1024))
		return -1;
	snprintf(b->ks[b->nks].name, sizeof(b->ks[0].name), "%s.%ld.%s", fwd ? "fwd" : "bwd", id,
	         what);
	b->ks[b->nks].sec = sec;
	return b->nks++;
}

/* Kernel k reads or writes tensor t (-1: a constant, nothing to record). */
static int touch(struct g10_build *b, int64_t k, int64_t t)
{
	return t < 0 || k < 0 ? 0 : add_use(&b->ts[t], (uint32_t)k);
}

/* Time of a kernel that only streams these bytes (a gradient sum, an update, the loss). */
static double stream_s(const struct g10_build *b, int64_t t, int n)
{
	return t < 0 ? 0 : (double)b->ts[t].bytes * n / (G10_HBM_GBPS * 1e9);
}

/* A kernel of op i's backward that reads r0, r1, r2 and writes w0, w1 (-1: none); -1 when out
 * of memory. */
static int bkernel(struct g10_build *b, const struct g10_op *op, const char *what, double sec,
                   int64_t r0, int64_t r1, int64_t r2, int64_t w0, int64_t w1)
{
	int64_t k = kernel(b, false, op->id, what, sec);

	if (k < 0 || touch(b, k, r0) || touch(b, k, r1) || touch(b, k, r2) || touch(b, k, w0) ||
	    touch(b, k, w1))
		return -ENOMEM;
	return 0;
}

/* G10's backward of op i (transformer_scheduling_kernels() in its src/analysis.cc, read, not
 * copied): the gradients of its output are summed first when there are several; then one
 * kernel per input gradient, each reading the gradient of the output and the forward values
 * that operator's derivative needs; then a parameter's update (read its gradient and itself,
 * write itself). */
static int backward_op(struct g10_build *b, const struct g10_op *op, uint32_t i, double sec)
{
	const int64_t *v = b->vin[i], *d = b->din[i];
	int64_t d0 = b->dout_head[i];
	int w = -1, x = -1, ret = 0;
	const char *ty = op->type;

	if (d0 < 0)
		return 0; /* nothing reads its output: no gradient reaches it */
	for (uint32_t j = 0; j < op->nin; j++)
		if (b->ts[v[j]].param)
			w = (int)j;
		else
			x = (int)j;
	if (b->ts[d0].next_dout >= 0) {
		int64_t k = kernel(b, false, op->id, "AddMultiGradient", 0);
		int n = 0;

		if (k < 0)
			return -ENOMEM;
		for (int64_t g = d0; g >= 0 && !ret; g = b->ts[g].next_dout, n++)
			ret = touch(b, k, g);
		b->ks[k].sec = stream_s(b, d0, n + 1);
	}
	if (!strcmp(ty, "Dot") || !strcmp(ty, "Convolution") || !strcmp(ty, "GatherV2")) {
		bool gather = !strcmp(ty, "GatherV2");

		ret = ret
		              ?: bkernel(b, op, gather ? "Backward" : "BackwardWeight", sec, d0,
		                         x >= 0 ? v[x] : -1, -1, w >= 0 ? d[w] : -1,
		                         gather && x >= 0 ? d[x] : -1);
		if (!gather && x >= 0 && d[x] >= 0)
			ret = ret
			              ?: bkernel(b, op, "BackwardInput", sec, w >= 0 ? v[w] : -1,
			                         d0, -1, d[x], -1);
	} else if (!strcmp(ty, "Add") || !strcmp(ty, "Subtract")) {
		int64_t k = kernel(b, false, op->id, "Backward", stream_s(b, d0, 1 + (int)op->nin));

		ret = ret ?: k < 0 ? -ENOMEM : touch(b, k, d0);
		for (uint32_t j = 0; j < op->nin && !ret; j++)
			ret = touch(b, k, d[j]);
	} else if ((!strcmp(ty, "BatchMatMul") || !strcmp(ty, "Multiply") ||
	            !strcmp(ty, "Divide")) &&
	           op->nin == 2) {
		bool div = !strcmp(ty, "Divide");

		/* d(a*b): the other factor; d(a/b) by a: b; by b: b and the quotient */
		if (d[0] >= 0)
			ret = ret ?: bkernel(b, op, "BackwardA", sec, d0, v[1], -1, d[0], -1);
		if (d[1] >= 0)
			ret = ret
			              ?: bkernel(b, op, "BackwardB", sec, d0, div ? v[1] : v[0],
			                         div ? b->out[i] : -1, d[1], -1);
	} else if (!strcmp(ty, "Power") && op->nin == 2) {
		ret = ret ?: bkernel(b, op, "Backward", sec, d0, v[0], v[1], d[0], -1);
	} else {
		/* Relu, SoftmaxBasic, Sqrt, Sum, Tanh, Erf: the input and the output's gradient;
		 * an operator G10 does not know: the same over every input */
		int64_t k = kernel(b, false, op->id, "Backward", sec);

		ret = ret ?: k < 0 ? -ENOMEM : touch(b, k, d0);
		for (uint32_t j = 0; j < op->nin && !ret; j++)
			ret = touch(b, k, v[j]) ?: touch(b, k, d[j]);
	}
	if (w >= 0 && d[w] >= 0)
		ret = ret
		              ?: bkernel(b, op, "ApplyGrad", stream_s(b, v[w], 3), d[w], v[w], -1,
		                         -1, -1);
	return ret;
}

int lt_read_g10(struct lt_step *s, FILE *f, const char *path, const struct lt_g10_opts *g,
                struct llmio_error *e)
{
	struct tok t = {.f = f, .path = path, .line = 1};
	struct g10_op *ops = NULL, skip;
	struct g10_build b = {0};
	uint32_t nops = 0, opcap = 0;
	long border = 0;
	double total = 0, scale = 1;
	char name[LT_NAME_MAX];
	int ret;

	if (!g || !g->batch || !(g->tflops > 0) || !g->elem_bytes)
		return llmio_err(e, -EINVAL,
		                 "reading a G10 graph needs a batch size, tflops > 0 and "
		                 "element bytes");
	for (;;) {
		if (nops == opcap) {
			/* room for one past the limit: the graph is refused only if it is there */
			uint32_t c = opcap ? opcap * 2 : 256;
			struct g10_op *p;

			if (c > G10_MAX_OPS + 1)
				c = G10_MAX_OPS + 1;
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
		if (++nops > G10_MAX_OPS) {
			ret = llmio_err(e, -E2BIG, "%s:%u: more than %u operators", path,
			                ops[nops - 1].line, G10_MAX_OPS);
			goto out;
		}
	}
	ret = 0;
	if (!nops) {
		ret = llmio_err(e, -EINVAL, "%s: no operators", path);
		goto out;
	}
	snprintf(s->origin, sizeof(s->origin), "%s (G10 graph, batch %u)", path, g->batch);
	b.dout_head = malloc(nops * sizeof(*b.dout_head));
	b.dout_tail = malloc(nops * sizeof(*b.dout_tail));
	b.din = malloc(nops * sizeof(*b.din));
	b.vin = malloc(nops * sizeof(*b.vin));
	b.out = malloc(nops * sizeof(*b.out));
	if (!b.dout_head || !b.dout_tail || !b.din || !b.vin || !b.out)
		goto nomem;
	/* G10's parameters are the ids below its "trans_borden" (210 for BERT, 184 for ViT in
	 * its configurations): its files number the parameters first, the step's inputs next.
	 * Some parameters are broadcast at the batch's shape (a LayerNorm's constants), so the
	 * batch dimension cannot tell; the border is one past the largest parameter that has no
	 * batch dimension, which gives G10's border on both of its transformer files. */
	for (uint32_t i = 0; i < nops; i++)
		for (uint32_t j = 0; j < ops[i].nin; j++)
			if (!ops[i].in[j].batch && ops[i].in[j].id >= border &&
			    op_index(ops, nops, ops[i].in[j].id) < 0)
				border = ops[i].in[j].id + 1;
	/* forward values, sized where they are read: an input id is produced by an op (an
	 * activation) or not (a parameter below the border, else the data) */
	for (uint32_t i = 0; i < nops; i++) {
		b.dout_head[i] = b.dout_tail[i] = -1;
		for (uint32_t j = 0; j < ops[i].nin; j++) {
			const struct g10_input *in = &ops[i].in[j];
			int64_t vt = value_of(&b, in->id);

			if (vt < 0) {
				bool produced = op_index(ops, nops, in->id) >= 0;

				vt = new_tensor(&b, in->id);
				if (vt < 0)
					goto nomem;
				b.ts[vt].bytes = numel(in) * g->elem_bytes;
				b.ts[vt].line = ops[i].line;
				b.ts[vt].param = !produced && in->id < border;
				b.ts[vt].data = !produced && in->id >= border;
			}
			b.vin[i][j] = vt;
		}
	}
	/* an output nothing reads (the last op's) is sized like its first input, as G10 does */
	for (uint32_t i = 0; i < nops; i++) {
		int64_t vt = value_of(&b, ops[i].id);

		if (vt < 0) {
			vt = new_tensor(&b, ops[i].id);
			if (vt < 0)
				goto nomem;
			b.ts[vt].bytes = ops[i].nin ? b.ts[b.vin[i][0]].bytes : g->elem_bytes;
			b.ts[vt].line = ops[i].line;
		}
		b.out[i] = vt;
	}
	/* gradients, G10's way: one per consumer and input, for what an op produced and for a
	 * parameter (but not a Power's exponent); each joins its producer's list, in forward order
	 */
	for (uint32_t i = 0; i < nops; i++)
		for (uint32_t j = 0; j < ops[i].nin; j++) {
			long p = op_index(ops, nops, ops[i].in[j].id);
			const struct tinfo *v = &b.ts[b.vin[i][j]];
			int64_t d;

			b.din[i][j] = -1;
			if (p < 0 && (!v->param || !strcmp(ops[i].type, "Power")))
				continue;
			d = new_tensor(&b, v->id);
			if (d < 0)
				goto nomem;
			b.ts[d].grad = true;
			b.ts[d].from = ops[i].id;
			b.ts[d].bytes = b.ts[b.vin[i][j]].bytes;
			b.ts[d].line = ops[i].line;
			b.din[i][j] = d;
			if (p < 0)
				continue;
			if (b.dout_tail[p] >= 0)
				b.ts[b.dout_tail[p]].next_dout = d;
			else
				b.dout_head[p] = d;
			b.dout_tail[p] = d;
		}
	/* kernels: forward in order, the loss, backward in reverse */
	for (uint32_t i = 0; i < nops && !ret; i++) {
		int64_t k = kernel(&b, true, ops[i].id, ops[i].type, op_seconds(&ops[i], g));

		if (k < 0)
			goto nomem;
		for (uint32_t j = 0; j < ops[i].nin && !ret; j++)
			ret = touch(&b, k, b.vin[i][j]);
		ret = ret ?: touch(&b, k, b.out[i]);
	}
	if (!ret) {
		int64_t last = b.out[nops - 1], loss = new_tensor(&b, -1), k;

		if (loss < 0)
			goto nomem;
		b.ts[loss].grad = true;
		b.ts[loss].bytes = b.ts[last].bytes;
		b.dout_head[nops - 1] = loss; /* nothing reads the last op's output */
		k = kernel(&b, false, ops[nops - 1].id, "makeLoss", stream_s(&b, last, 2));
		ret = k < 0 ? -ENOMEM : touch(&b, k, last) ?: touch(&b, k, loss);
	}
	for (uint32_t i = nops; i-- > 0 && !ret;)
		ret = backward_op(&b, &ops[i], i, op_seconds(&ops[i], g));
	if (ret)
		goto nomem;
	for (uint32_t k = 0; k < b.nks; k++)
		total += b.ks[k].sec;
	if (g->total_s > 0 && total > 0)
		scale = g->total_s / total;
	for (uint32_t k = 0; k < b.nks && !ret; k++)
		ret = lt_add_kernel(s, b.ks[k].name, b.ks[k].sec * scale, e);
	/* a parameter lives across steps; anything else from its first touch to its last */
	for (uint32_t i = 0; i < b.nts && !ret; i++) {
		struct tinfo *ti = &b.ts[i];
		bool persist = ti->param && !ti->grad;

		if (!ti->nuses)
			continue;
		sort_uses(ti);
		if (ti->grad && ti->id < 0)
			snprintf(name, sizeof(name), "loss");
		else if (ti->grad)
			snprintf(name, sizeof(name), "g%ld.%ld", ti->id, ti->from);
		else
			snprintf(name, sizeof(name), "%s%ld", persist ? "w" : "a", ti->id);
		ret = lt_add_tensor(s, name, ti->bytes,
		                    ti->grad  ? LT_GRADIENT
		                    : persist ? LT_WEIGHT
		                              : LT_ACTIVATION,
		                    persist ? LT_PERSISTENT : ti->uses[0], ti->uses + !persist,
		                    ti->nuses - !persist, e);
		if (!ret)
			s->tensors[s->ntensors - 1].line = ti->line;
	}
	if (!ret)
		ret = lt_finish(s, e);
	goto out;
nomem:
	ret = llmio_err(e, -ENOMEM, "out of memory reading %s", path);
out:
	for (uint32_t i = 0; i < b.nts; i++)
		free(b.ts[i].uses);
	free(b.ts);
	free(b.ks);
	free(b.dout_head);
	free(b.dout_tail);
	free(b.din);
	free(b.vin);
	free(b.out);
	free(ops);
	return ret;
}
