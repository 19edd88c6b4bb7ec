// SPDX-License-Identifier: MIT
/* The tracer's exec and spawn wrappers: keep the tracer and the phase in the environment. */
#include "trace/preload_internal.h"

/*
 * What a new image must find in its environment: LD_PRELOAD and $LLMIO_TRACE_* (P.env, kept
 * at start) and LLMIO_TRACE_PHASE=<the current phase>, which the new image's constructor
 * reads (tracer_init).  The exec family without an envp argument (execv, execvp, execl,
 * execlp, system, popen, glibc's internal posix_spawn) passes `environ`, where P.phase_env
 * is kept up to date in place (llmio_trace_phase); calls that take an envp are wrapped and
 * get these entries added, or replaced: a program's copy of its environment (Python's
 * os.environ) holds the phase of the moment it was made, not the current one.
 */

static bool env_is(const char *e, const char *kv)
{
	size_t n = (size_t)(strchr(kv, '=') - kv) + 1;

	return !strncmp(e, kv, n);
}

static size_t env_count(char *const envp[])
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

/*
 * Fill out (room for env_count(envp) + ENV_MAX + 2 entries) with envp, then what it lacks of
 * P.env (an LD_PRELOAD without the tracer is replaced), then the current phase, always (in
 * phase: PHASE_VAR_LEN + 64 bytes).
 */
static char *const *env_fix(char *const envp[], char **out, char *phase)
{
	unsigned id = __atomic_load_n(&P.phase, __ATOMIC_RELAXED);
	bool have[ENV_MAX] = {false};
	size_t k = 0;

	for (size_t i = 0; envp && envp[i]; i++) {
		bool keep = !env_is(envp[i], PHASE_VAR);

		for (unsigned j = 0; j < P.nenv && keep; j++)
			if (env_is(envp[i], P.env[j])) {
				keep = strncmp(envp[i], "LD_PRELOAD=", 11) ||
				       strstr(envp[i], P.lib);
				have[j] = keep;
			}
		if (keep)
			out[k++] = envp[i];
	}
	for (unsigned j = 0; j < P.nenv; j++)
		if (!have[j])
			out[k++] = P.env[j];
	snprintf(phase, PHASE_VAR_LEN + sizeof(P.phases[0].name), "%s%s", PHASE_VAR,
	         id ? P.phases[id].name : "");
	out[k++] = phase;
	out[k] = NULL;
	return out;
}

/* Declare the fixed environment of envp as `var` (a VLA on the caller's stack: vfork-safe). */
#define FIXED_ENV(var, envp)                                                                       \
	char *var##_v[env_count(envp) + ENV_MAX + 2];                                              \
	char var##_phase[PHASE_VAR_LEN + sizeof(P.phases[0].name)];                                \
	char *const *var = env_fix(envp, var##_v, var##_phase)

/*
 * The exec calls that take an environment: X(name, (parameters), (the arguments before envp)).
 * The real function gets the same arguments with the fixed environment.
 */
#define EXEC_WRAPPERS(X)                                                                           \
	X(execve, (const char *path, char *const argv[], char *const envp[]), (path, argv))        \
	X(execvpe, (const char *file, char *const argv[], char *const envp[]), (file, argv))       \
	X(fexecve, (int fd, char *const argv[], char *const envp[]), (fd, argv))

#define EXEC_ARGS(...) __VA_ARGS__
#define EXEC_WRAPPER(name, params, args)                                                           \
	EXPORT int name params                                                                     \
	{                                                                                          \
		if (!P.on)                                                                         \
			return REAL(name)(EXEC_ARGS args, envp);                                   \
		{                                                                                  \
			FIXED_ENV(env, envp);                                                      \
                                                                                                   \
			return REAL(name)(EXEC_ARGS args, env);                                    \
		}                                                                                  \
	}
EXEC_WRAPPERS(EXEC_WRAPPER)

/* execle(path, arg0, ..., NULL, envp): glibc runs its internal execve, not the wrapper above */
EXPORT int execle(const char *path, const char *arg, ...)
{
	size_t n = 1;
	va_list ap;

	va_start(ap, arg);
	while (va_arg(ap, const char *))
		n++;
	va_end(ap);
	{
		char *argv[n + 1];
		char *const *envp;

		argv[0] = (char *)arg;
		va_start(ap, arg);
		for (size_t i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *);
		envp = va_arg(ap, char *const *);
		va_end(ap);
		return execve(path, argv, envp);
	}
}

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
                     const posix_spawnattr_t *, char *const[], char *const[]);

static int spawn_fixed(spawn_fn *fn, pid_t *pid, const char *path,
                       const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                       char *const argv[], char *const envp[])
{
	if (!P.on)
		return fn(pid, path, fa, attr, argv, envp);
	{
		FIXED_ENV(env, envp);

		return fn(pid, path, fa, attr, argv, env);
	}
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_fixed(&REAL(posix_spawn), pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_fixed(&REAL(posix_spawnp), pid, file, fa, attr, argv, envp);
}
