// SPDX-License-Identifier: MIT
/* Does the allocator reuse a freed block for the next request of the same size, when the blocks
 * are 64-byte aligned (posix_memalign: what torch's CPU allocator asks for every tensor) and a
 * live block sits right after the freed one, as the next tensors do in a forward pass?  And the
 * same with plain malloc, for contrast.  bench/offload.sh prints the answer beside its figures:
 * where the allocator does not reuse such a block, each tensor lands on memory not used before
 * in that step, so memory handed back to the system (the offload hooks' malloc_trim) is faulted
 * in again on the next step's tensors (docs/offload.md, "Why the step-time targets are missed").
 *
 *   cc -O1 -o aligned_reuse bench/aligned_reuse.c && ./aligned_reuse [MiB]   (default 12) */
#include <stdio.h>
#include <stdlib.h>

static void *get(int aligned, size_t n)
{
	void *p = NULL;
	if (!aligned)
		return malloc(n);
	return posix_memalign(&p, 64, n) == 0 ? p : NULL;
}

enum { ROUNDS = 8 };

/* Of ROUNDS rounds (a block, a live neighbour after it, the block freed, a block of its size
 * asked again; the neighbour and the second block stay live, as tensors do), how many got the
 * freed block back; -1: out of memory.  The first round is left out: the allocator's first
 * block from fresh memory can have free room behind it that later ones do not. */
static int reused(int aligned, size_t n)
{
	void *live[2 * ROUNDS] = {0};
	int hits = 0, nlive = 0;
	for (int r = 0; r < ROUNDS; r++) {
		void *a = get(aligned, n);
		void *after = malloc(4096);
		if (!a || !after) {
			free(a);
			free(after);
			hits = -1;
			break;
		}
		live[nlive++] = after;
		free(a);
		void *b = get(aligned, n);
		if (!b) {
			hits = -1;
			break;
		}
		live[nlive++] = b;
		hits += r > 0 && b == a;
	}
	while (nlive > 0)
		free(live[--nlive]);
	return hits;
}

int main(int argc, char **argv)
{
	char *end = NULL;
	long mib = argc > 1 ? strtol(argv[1], &end, 10) : 12;
	if (argc > 2 || (end && *end) || mib < 1 || mib > 1024) {
		fprintf(stderr,
		        "usage: aligned_reuse [MiB]: the block size, 1..1024 (default 12)\n");
		return 2;
	}
	size_t n = (size_t)mib << 20;
	/* glibc maps a block this large with mmap until it frees the first one, which raises its
	 * mmap threshold (mallopt(3)); torch's process is past that after its first step */
	void *warm = get(1, n);
	free(warm);
	int al = reused(1, n), pl = reused(0, n);
	if (al < 0 || pl < 0) {
		fprintf(stderr, "aligned_reuse: out of memory for %ld MiB blocks\n", mib);
		return 1;
	}
	printf("a freed %ld MiB block with a live one after it, reused by the next request of its "
	       "size: %d of %d times when 64-byte aligned (posix_memalign, as torch asks), %d of "
	       "%d with malloc\n",
	       mib, al, ROUNDS - 1, pl, ROUNDS - 1);
	return 0;
}
