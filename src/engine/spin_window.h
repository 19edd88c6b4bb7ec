/* SPDX-License-Identifier: MIT */
/*
 * How long an SQPOLL reap watches the completion ring before it sleeps, adapted to the waits
 * it sees.  Sleeping costs a wake-up when the completion comes (an IPI, and in a VM an exit);
 * watching costs CPU the thread would have left idle.  A device that completes in bursts
 * makes a fixed window that is shorter than the gap between bursts pay both: the thread
 * watches, gives up before the burst, sleeps and is woken for it, so it spends more time per
 * I/O off the device than a tool that never sleeps.  The window therefore grows to the gaps
 * it misses and shrinks back from gaps too long to be worth watching (docs/accuracy.md,
 * SQPOLL; the runs that chose it: bench/results/2026-11-sqpoll.md).
 */
#ifndef LLMIO_SPIN_WINDOW_H
#define LLMIO_SPIN_WINDOW_H

#include <stdint.h>

struct spin_window {
	uint64_t ns;     /* the window now */
	uint64_t min_ns; /* never shorter */
	uint64_t max_ns; /* never longer: past it, a wake-up is a small part of the wait */
};

/*
 * After a wait that outlasted the window (the thread slept) and took waited_ns in all.  One
 * that max_ns would have covered widens the window to the wait and a quarter, so the next
 * such gap is watched through; one longer than max_ns was not worth watching, so the window
 * halves back towards min_ns.  Waits the window caught leave it as it is: a wide window
 * costs nothing when completions come early.
 */
static inline void spin_window_slept(struct spin_window *w, uint64_t waited_ns)
{
	uint64_t want = waited_ns + waited_ns / 4;

	if (waited_ns <= w->max_ns) {
		if (want > w->ns)
			w->ns = want < w->max_ns ? want : w->max_ns;
	} else {
		w->ns /= 2;
		if (w->ns < w->min_ns)
			w->ns = w->min_ns;
	}
}

#endif
