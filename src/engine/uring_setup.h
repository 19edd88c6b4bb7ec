/* SPDX-License-Identifier: MIT */
/* What io_uring.c and uring_cmd.c share: the words for a ring that could not be set up. */
#ifndef LLMIO_ENGINE_URING_SETUP_H
#define LLMIO_ENGINE_URING_SETUP_H

struct llmio_error;

/*
 * Put into e what a failed io_uring_setup() (-err, from `what`) means and what to change:
 * io_uring absent, disabled by sysctl or a policy, or out of locked memory.
 */
void uring_explain_setup(int err, const char *what, struct llmio_error *e);

#endif
