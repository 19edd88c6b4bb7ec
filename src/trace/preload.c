/* SPDX-License-Identifier: MIT */
/*
 * libllmio_trace.so: records file I/O at the libc boundary, loaded with LD_PRELOAD by
 * `llmio trace`.  No dependency on libllmio or anything but libc.
 *
 * The parts: this file holds the state, the scope and phases, and the process's life (the
 * constructor, fork); preload_record.c writes the record file; preload_fd.c keeps the table
 * of descriptors and brackets each call; the wrappers come in families: preload_open.c
 * (open, close, dup), preload_io.c (data transfer, sync and space, mappings, names: generated
 * from one table each), preload_stdio.c and preload_exec.c (exec and spawn).
 *
 * Design
 * - Each wrapper finds the real function with dlsym(RTLD_NEXT) and, when the descriptor is a
 *   traced file, times the call and appends one 64-byte record (src/trace/trace_format.h).
 * - Records go to a per-process file DIR/<pid>.<n>.trace ($LLMIO_TRACE_DIR) through a
 *   MAP_SHARED mapping: stores land in the page cache at once, so _exit, os._exit and SIGKILL
 *   lose at most the record being written.  The file grows in chunks; each thread takes a
 *   whole chunk with one atomic add and fills it alone, so no call takes a lock.
 * - Paths are resolved once per open (readlink of /proc/self/fd/N gives the absolute,
 *   canonical name) and kept in a fixed per-fd table with the tracked offset.  Descriptors
 *   opened before tracing or by calls not wrapped (pipe, socket) are resolved lazily the first
 *   time they are used.  Paths are interned as string records, one per open.
 * - A thread-local guard keeps the tracer's own calls, and calls made from inside a wrapped
 *   call, out of the trace.  Calls before the constructor has run pass through.
 * - fork: a pthread_atfork child handler starts a new file for the child, in the parent's
 *   phase; exec and spawn: the library, $LLMIO_TRACE_* and the current phase
 *   ($LLMIO_TRACE_PHASE) stay in the environment, restored by the wrappers of the calls that
 *   take an environment when the program passes one without them; the new image starts in
 *   that phase.
 * - stdio (fopen/fread/fwrite/...) is recorded at the stdio call: glibc's own read and write
 *   system calls inside stdio do not go through the PLT, so nothing is counted twice.
 */
#include <sys/stat.h>

#include "trace/preload_internal.h"

struct preload_state P = {.fd = -1};
struct fdent fds[FD_MAX];
struct mapping maps[MAP_MAX];
TLS struct preload_tls T;

/* ---- real functions ---- */

#define REAL_DEFINE(name) __typeof__(name) *real_##name;
REAL_FUNCS(REAL_DEFINE)
#undef REAL_DEFINE

void *resolve(const char *name)
{
	void *p;

	T.guard++;
	p = dlsym(RTLD_NEXT, name);
	T.guard--;
	return p;
}

/*
 * Scope.  User excludes win; with includes, only paths under them are traced; otherwise the
 * defaults of trace_scope.c apply (unless --all).
 */
bool excluded(const char *p)
{
	for (unsigned i = 0; i < P.nexc; i++)
		if (trace_path_under(p, P.exc[i]))
			return true;
	if (P.ninc) {
		for (unsigned i = 0; i < P.ninc; i++)
			if (trace_path_under(p, P.inc[i]))
				return false;
		return true;
	}
	return !P.all && trace_path_default_excluded(p);
}

/*
 * Is the name a program opens an interpreter's import under the default scope?  Then the
 * descriptor is left out without resolving its path: an interpreter's start opens a thousand
 * or more of them, and resolving a path costs more than the open itself.  (A file opened by a name
 * like x.py is left out even when that name is a symbolic link to a file of another name:
 * docs/tracing.md, "Scope".)
 */
bool excluded_by_name(const char *given)
{
	return given && !P.ninc && !P.all && trace_path_is_import(given);
}

/* ---- phases ---- */

/*
 * LLMIO_TRACE_PHASE=<the current phase's name> in P.phase_env, the string `environ` points at
 * (putenv in tracer_init): rewritten in place, so the environment array is never reallocated
 * behind a thread reading it.  The phase is read under the lock, so after two threads switch
 * at once the text names the phase that won.  A thread that execs during a switch may pass a
 * name cut short; the buffer always ends in NUL.
 */
static void set_phase_env(void)
{
	const char *name;
	unsigned id;
	size_t n;

	spin_lock(&P.phase_lock);
	id = __atomic_load_n(&P.phase, __ATOMIC_RELAXED);
	name = id ? P.phases[id].name : "";
	n = strnlen(name, sizeof(P.phases[0].name) - 1);
	memcpy(P.phase_env + PHASE_VAR_LEN, name, n);
	P.phase_env[PHASE_VAR_LEN + n] = '\0';
	spin_unlock(&P.phase_lock);
}

/* The phase id of name, defined if new (the table full: the last one). */
static unsigned phase_id(const char *name)
{
	unsigned id;

	spin_lock(&P.phase_lock);
	for (id = 1; id <= P.nphase; id++)
		if (!strncmp(P.phases[id].name, name, sizeof(P.phases[id].name) - 1))
			break;
	if (id > P.nphase && P.nphase < PHASE_MAX) {
		id = ++P.nphase;
		snprintf(P.phases[id].name, sizeof(P.phases[id].name), "%s", name);
	}
	spin_unlock(&P.phase_lock);
	return id > P.nphase ? P.nphase : id; /* table full: the last name takes the rest */
}

EXPORT void llmio_trace_phase(const char *name)
{
	unsigned id = 0;

	if (!enter())
		return;
	if (name && name[0])
		id = phase_id(name);
	__atomic_store_n(&P.phase, (uint16_t)id, __ATOMIC_RELAXED);
	set_phase_env();
	emit_phase(id, false);
	leave();
}

/* ---- process life ---- */

static void split_list(const char *env, char *buf, size_t len, const char **out, unsigned *n)
{
	char *save, *tok;

	*n = 0;
	if (!env)
		return;
	snprintf(buf, len, "%s", env);
	for (tok = strtok_r(buf, ":", &save); tok && *n < LIST_MAX;
	     tok = strtok_r(NULL, ":", &save))
		out[(*n)++] = tok;
}

static void keep_env(const char *name)
{
	const char *v = getenv(name);

	if (v && P.nenv < ENV_MAX)
		snprintf(P.env[P.nenv++], sizeof(P.env[0]), "%s=%s", name, v);
}

/* In a forked child: a new file; descriptors re-resolve lazily (their path ids belong to the
 * parent's file), phases are defined again. */
static void at_fork_child(void)
{
	int hwm;

	if (!P.on)
		return;
	P.on = 0;
	if (T.chunk)
		REAL(munmap)(T.chunk, TRACE_CHUNK);
	T.chunk = NULL;
	T.tid = 0;
	if (P.hdr)
		REAL(munmap)(P.hdr, TRACE_RAW_HDR);
	P.hdr = NULL;
	syscall(SYS_close, P.fd);
	P.grow_lock = 0;
	P.phase_lock = 0;
	P.ppid = P.pid;
	P.pid = (uint32_t)getpid();
	hwm = P.fd_hwm;
	for (int fd = 0; fd <= hwm && fd < FD_MAX; fd++)
		if (fds[fd].state != FD_UNKNOWN)
			fds[fd].state = FD_UNKNOWN;
	memset(maps, 0, sizeof(maps));
	P.nmaps = 0;
	if (open_proc_file())
		return;
	P.on = 1;
	T.guard = 1;
	for (unsigned id = 1; id <= P.nphase; id++)
		emit_phase(id, true);
	if (P.phase)
		emit_phase(P.phase, false);
	T.guard = 0;
}

/* The device of the filesystem mounted at /dev/shm, when it is a mount of its own (no other
 * files on it but under /dev/shm): its files are out of the default scope (out_by_kind). */
static void find_shm(void)
{
	struct stat shm, dev;

	if (!syscall(SYS_newfstatat, AT_FDCWD, "/dev/shm", &shm, 0) &&
	    !syscall(SYS_newfstatat, AT_FDCWD, "/dev", &dev, 0) && S_ISDIR(shm.st_mode) &&
	    shm.st_dev != dev.st_dev) {
		P.shm_dev = shm.st_dev;
		P.shm_known = true;
	}
}

__attribute__((constructor)) static void tracer_init(void)
{
	const char *dir = getenv("LLMIO_TRACE_DIR"), *phase;
	Dl_info info;

	/* resolve up front so that no wrapper looks a symbol up while the program runs */
	(void)REAL(openat);
	(void)REAL(close);
	(void)REAL(read);
	(void)REAL(write);
	(void)REAL(mmap);
	(void)REAL(munmap);
	if (!dir || !dir[0] || strlen(dir) >= sizeof(P.dir))
		return;
	T.guard = 1;
	snprintf(P.dir, sizeof(P.dir), "%s", dir);
	if (dladdr((void *)tracer_init, &info) && info.dli_fname)
		snprintf(P.lib, sizeof(P.lib), "%s", info.dli_fname);
	split_list(getenv("LLMIO_TRACE_INCLUDE"), P.inc_buf, sizeof(P.inc_buf), P.inc, &P.ninc);
	split_list(getenv("LLMIO_TRACE_EXCLUDE"), P.exc_buf, sizeof(P.exc_buf), P.exc, &P.nexc);
	P.all = getenv("LLMIO_TRACE_ALL") && !strcmp(getenv("LLMIO_TRACE_ALL"), "1");
	find_shm();
	keep_env("LD_PRELOAD");
	keep_env("LLMIO_TRACE_DIR");
	keep_env("LLMIO_TRACE_INCLUDE");
	keep_env("LLMIO_TRACE_EXCLUDE");
	keep_env("LLMIO_TRACE_ALL");
	P.pid = (uint32_t)getpid();
	P.ppid = (uint32_t)getppid();
	/* the phase of the process that exec'd or spawned this image */
	phase = getenv("LLMIO_TRACE_PHASE");
	if (phase && phase[0])
		P.phase = (uint16_t)phase_id(phase);
	memcpy(P.phase_env, PHASE_VAR, PHASE_VAR_LEN);
	set_phase_env();
	if (open_proc_file() == 0) {
		pthread_atfork(NULL, NULL, at_fork_child);
		P.on = 1;
		putenv(P.phase_env);
		if (P.phase)
			emit_phase(P.phase, false);
	}
	T.guard = 0;
}
