/* SPDX-License-Identifier: MIT */
/*
 * Where a host I/O buffer starts within its page.  The kernel copies between the page cache
 * and the buffer (with `rep movsb` on CPUs with ERMS/FSRM), and how fast depends on where the
 * destination sits relative to the page-cache page, which starts at offset 0 of its page:
 *  - under O_DIRECT and below 64 KiB: page-aligned (a 4 KiB copy touches one page, not two;
 *    small copies ran faster aligned than at the malloc heap's arbitrary offsets);
 *  - through the page cache from 64 KiB up, on the Intel host of
 *    bench/results/2026-11-buffers.md, 16 bytes into a page (where malloc puts a large
 *    block) was 1.08-1.20x faster than page-aligned, and 64, 256 or 2048 bytes were like 0;
 *  - on the AMD host of bench/results/2026-12-uring.md, 16 bytes in cost 4.4x the CPU per GB
 *    of 0, 64, 256, 2048 or 4080 bytes (llmio's own 1 MiB cached reads: 4.1x with psync, 2.8x
 *    with io_uring).  So AMD CPUs get 64 bytes in: cache-line aligned, like 0 there, and
 *    still off the page boundary.
 */
#ifndef LLMIO_BUFPLACE_H
#define LLMIO_BUFPLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes into a page that a buffer of bs bytes starts at. */
static inline size_t buf_page_offset(uint64_t bs, bool direct)
{
	if (direct || bs < (64u << 10))
		return 0;
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_cpu_is("amd"))
		return 64;
#endif
	return 16;
}

#endif
