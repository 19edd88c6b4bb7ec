/* SPDX-License-Identifier: MIT */
/*
 * Sweep journals (src/report/dataset.c over src/sweep/journal.c), as `llmio report` and
 * `llmio advise` read them, and what both build from a journal that loads: the advice (text
 * and JSON) and the report document without charts (Markdown and HTML), into /dev/null.
 */
#include "fuzz_common.h"

#include "report/report.h"

static void use(const struct dataset *d, FILE *null)
{
	struct advice_set *a = malloc(sizeof(*a)); /* large: off the stack */
	struct doc *doc;

	if (!a)
		abort();
	advise_all(d, a);
	advise_write_text(null, d, a);
	advise_write_json(null, d, a);
	doc = doc_create("fuzz");
	if (!doc)
		abort();
	if (report_build(d, doc, NULL) == 0) {
		doc_write_md(null, doc);
		doc_write_html(null, doc);
	}
	doc_destroy(doc);
	free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct dataset d;
	struct llmio_error err = {0};
	char path[64];
	int fd;

	if (!null && !(null = fopen("/dev/null", "we")))
		abort();
	fd = fuzz_file(data, size, path, sizeof(path));
	if (dataset_load(&d, path, &err) == 0) {
		use(&d, null);
		dataset_release(&d);
	}
	fuzz_file_close(fd);
	return 0;
}
