/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "trace/trace_scope.h"

bool trace_path_under(const char *p, const char *pre)
{
	size_t n = strlen(pre);

	if (!n || strncmp(p, pre, n))
		return false;
	return p[n] == '\0' || p[n] == '/' || pre[n - 1] == '/';
}

static bool has_suffix(const char *p, const char *suf)
{
	size_t n = strlen(p), m = strlen(suf);

	return n >= m && !strcmp(p + n - m, suf);
}

bool trace_path_is_import(const char *p)
{
	static const char *const suf[] = {".py", ".pyc", ".so", ".pth", ".pyi"};

	for (size_t i = 0; i < sizeof(suf) / sizeof(suf[0]); i++)
		if (has_suffix(p, suf[i]))
			return true;
	return strstr(p, ".so.") != NULL || strstr(p, "/__pycache__/") != NULL ||
	       !strncmp(p, "__pycache__/", 12);
}

bool trace_path_default_excluded(const char *p)
{
	static const char *const pre[] = {
	        "/proc", "/sys",   "/dev",       "/usr/lib",       "/usr/lib64",
	        "/lib",  "/lib64", "/usr/share", "/usr/local/lib", "/etc/ld.so.cache"};

	if (p[0] != '/')
		return true;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (trace_path_under(p, pre[i]))
			return true;
	return trace_path_is_import(p);
}
