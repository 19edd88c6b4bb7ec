/* SPDX-License-Identifier: MIT */
/*
 * What the tracer leaves out by default (shared by the preload library and the strace import;
 * no dependencies).  Not the program's own file I/O: pipes, sockets and other non-paths,
 * /proc, /sys, /dev, system libraries and data (/usr/lib, /lib, /usr/share, ...) and an
 * interpreter's imports anywhere (*.py, *.pyc, *.so, *.so.N, __pycache__).
 */
#ifndef LLMIO_TRACE_SCOPE_H
#define LLMIO_TRACE_SCOPE_H

#include <stdbool.h>

/* Is p under prefix pre (a whole path component: "/data" covers "/data/x", not "/database")? */
bool trace_path_under(const char *p, const char *pre);
/*
 * Is p an interpreter's import by its name (*.py, *.pyc, *.pyi, *.pth, *.so, *.so.N,
 * __pycache__)?  Decidable on the name a program opens, before it is resolved.
 */
bool trace_path_is_import(const char *p);
/* Is p left out by the default scope? */
bool trace_path_default_excluded(const char *p);

#endif
