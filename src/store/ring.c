/* SPDX-License-Identifier: MIT */
/*
 * The single-producer single-consumer rings between the caller's thread and the store's I/O
 * thread.  A push publishes the slot's contents (release), a pop acquires them.  They never
 * fill: a ring holds slot numbers and there are STORE_OPS slots.
 */
#include "store/store_internal.h"

void store_ring_push(struct store_ring *r, uint32_t v)
{
	uint32_t t = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);

	r->slot[t % STORE_OPS] = v;
	__atomic_store_n(&r->tail, t + 1, __ATOMIC_SEQ_CST);
}

bool store_ring_pop(struct store_ring *r, uint32_t *v)
{
	uint32_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);

	if (h == __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE))
		return false;
	*v = r->slot[h % STORE_OPS];
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
	return true;
}

bool store_ring_empty(const struct store_ring *r)
{
	return __atomic_load_n(&r->head, __ATOMIC_SEQ_CST) ==
	       __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST);
}
