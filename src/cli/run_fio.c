/* SPDX-License-Identifier: MIT */
/*
 * fio at home in `llmio run` (docs/fio.md): fio's output options, and fio job files run as fio
 * runs them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run_fio.h"
#include "report/fio_json.h"
#include "report/fmt.h"

/* fio's --output-format: a comma list of what llmio can write; -EINVAL with a message. */
static int parse_format(const char *v, struct run_out *out)
{
	char buf[64];
	char *save = NULL;

	if (strlen(v) >= sizeof(buf)) {
		fprintf(stderr, "llmio: --output-format=%s: expected normal, json or json+\n", v);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", v);
	out->normal = out->json = out->plus = false;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "normal")) {
			out->normal = true;
		} else if (!strcmp(t, "json") || !strcmp(t, "json+")) {
			out->json = true;
			out->plus |= t[4] == '+';
		} else if (!strcmp(t, "terse")) {
			fprintf(stderr, "llmio: --output-format=terse: llmio does not write fio's "
			                "terse lines; use --csv FILE (one CSV line per job)\n");
			return -EINVAL;
		} else {
			fprintf(stderr,
			        "llmio: --output-format=%s: %s is not a format llmio writes: "
			        "normal, "
			        "json or json+\n",
			        v, t);
			return -EINVAL;
		}
	}
	if (!out->normal && !out->json) {
		fprintf(stderr, "llmio: --output-format needs normal, json or json+\n");
		return -EINVAL;
	}
	return 0;
}

/* What --output-format asked for, into one stream (fio's --output, or stdout). */
int run_out_write(FILE *f, void *arg)
{
	const struct run_out *x = arg;
	int ret = 0;

	for (size_t i = 0; x->normal && i < x->n; i++)
		table_print_result(f, x->r[i]);
	if (x->json)
		ret = fio_json_write(f, x->r, x->group, x->n, x->plus);
	return ret ? ret : ferror(f) ? -EIO : 0;
}

/*
 * fio's output options (--output-format, --output); *handled when a is one.  EXIT_USAGE on a
 * bad value.
 */
int run_out_arg(struct run_out *out, int argc, char **argv, int *i, bool *handled)
{
	const char *a = argv[*i], *v = NULL;
	bool fmt = !strncmp(a, "--output-format", 15), file = !strncmp(a, "--output", 8) && !fmt;
	size_t len = fmt ? 15 : 8;

	*handled = false;
	if ((!fmt && !file) || (a[len] && a[len] != '='))
		return 0;
	*handled = true;
	if (a[len] == '=')
		v = a + len + 1;
	else if (*i + 1 < argc)
		v = argv[++*i];
	if (!v || !v[0]) {
		fprintf(stderr, "llmio: %s needs a value\n", fmt ? "--output-format" : "--output");
		return EXIT_USAGE;
	}
	if (file) {
		out->path = v;
		return 0;
	}
	return parse_format(v, out) ? EXIT_USAGE : 0;
}
