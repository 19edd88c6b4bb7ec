/* SPDX-License-Identifier: MIT */
/*
 * Phase markers for programs run under `llmio trace`.
 *
 * The tracer (libllmio_trace.so, preloaded by `llmio trace`) defines llmio_trace_phase().
 * Every file I/O call the program makes afterwards, in this process and in the children it
 * forks, execs or spawns later, is tagged with that phase until the next call.  An empty
 * name ("") means no phase.
 *
 * A program must also run without the tracer, so do not link against the library: call
 * llmio_trace_set_phase() below, which looks the symbol up at run time and does nothing when
 * the program is not traced.  Thread-safe; cheap enough to call per training step, but phase
 * names are interned (at most 255 distinct names per process, 63 bytes each; longer names are
 * cut).
 */
#ifndef LLMIO_TRACE_H
#define LLMIO_TRACE_H

#include <dlfcn.h>
#include <stddef.h>

#ifndef RTLD_DEFAULT /* without _GNU_SOURCE */
#define RTLD_DEFAULT ((void *)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Set the current phase (the tracer's own symbol; undefined when not traced). */
void llmio_trace_phase(const char *name);

typedef void (*llmio_trace_phase_fn)(const char *name);

/** Set the current phase if the program runs under `llmio trace`; a no-op otherwise. */
static inline void llmio_trace_set_phase(const char *name)
{
	static llmio_trace_phase_fn fn;
	static int looked;

	if (!looked) {
		void *sym = dlsym(RTLD_DEFAULT, "llmio_trace_phase");

		/* POSIX guarantees data and function pointers convert; copy the bits */
		__builtin_memcpy(&fn, &sym, sizeof(fn));
		looked = 1;
	}
	if (fn)
		fn(name);
}

#ifdef __cplusplus
}
#endif
#endif
