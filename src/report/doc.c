/* SPDX-License-Identifier: MIT */
/*
 * A small document model (headings, paragraphs, charts, tables) written twice, as Markdown and
 * as self-contained HTML, so the two always hold the same text and the same numbers.  An
 * allocation failure is remembered (doc_error) instead of being checked after every call.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/fmt.h"
#include "report/report.h"

enum block_kind { B_HEADING, B_PARA, B_CHART, B_TABLE };

struct block {
	enum block_kind kind;
	int level;
	char *text; /* heading, paragraph, chart alt text */
	char *base; /* chart file name without extension */
	char **cells;
	size_t ncols, ncells, cap;
};

struct doc {
	char *title;
	struct block *b;
	size_t n, cap;
	int error;
};

struct doc *doc_create(const char *title)
{
	struct doc *d = calloc(1, sizeof(*d));

	if (d && !(d->title = strdup(title))) {
		free(d);
		d = NULL;
	}
	return d;
}

void doc_destroy(struct doc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->b[i].text);
		free(d->b[i].base);
		for (size_t k = 0; k < d->b[i].ncells; k++)
			free(d->b[i].cells[k]);
		free(d->b[i].cells);
	}
	free(d->b);
	free(d->title);
	free(d);
}

int doc_error(const struct doc *d)
{
	return d->error;
}

static struct block *add_block(struct doc *d, enum block_kind kind)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 32;
		struct block *nb = realloc(d->b, cap * sizeof(*nb));

		if (!nb) {
			d->error = -ENOMEM;
			return NULL;
		}
		d->b = nb;
		d->cap = cap;
	}
	memset(&d->b[d->n], 0, sizeof(d->b[d->n]));
	d->b[d->n].kind = kind;
	return &d->b[d->n++];
}

static char *vfmt(struct doc *d, const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0) {
		d->error = -ENOMEM;
		return NULL;
	}
	return s;
}

void doc_heading(struct doc *d, int level, const char *fmt, ...)
{
	struct block *b = add_block(d, B_HEADING);
	va_list ap;

	if (!b)
		return;
	b->level = level;
	va_start(ap, fmt);
	b->text = vfmt(d, fmt, ap);
	va_end(ap);
}

void doc_para(struct doc *d, const char *fmt, ...)
{
	struct block *b = add_block(d, B_PARA);
	va_list ap;

	if (!b)
		return;
	va_start(ap, fmt);
	b->text = vfmt(d, fmt, ap);
	va_end(ap);
}

void doc_chart(struct doc *d, const char *base, const char *alt)
{
	struct block *b = add_block(d, B_CHART);

	if (!b)
		return;
	b->base = strdup(base);
	b->text = strdup(alt);
	if (!b->base || !b->text)
		d->error = -ENOMEM;
}

static void add_cell(struct doc *d, char *s)
{
	struct block *b = d->n ? &d->b[d->n - 1] : NULL;

	if (!s || !b || b->kind != B_TABLE) {
		free(s);
		d->error = d->error ? d->error : -ENOMEM;
		return;
	}
	if (b->ncells == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		char **nc = realloc(b->cells, cap * sizeof(*nc));

		if (!nc) {
			free(s);
			d->error = -ENOMEM;
			return;
		}
		b->cells = nc;
		b->cap = cap;
	}
	b->cells[b->ncells++] = s;
}

void doc_table(struct doc *d, size_t ncols, ...)
{
	struct block *b = add_block(d, B_TABLE);
	va_list ap;

	if (!b)
		return;
	b->ncols = ncols;
	va_start(ap, ncols);
	for (size_t i = 0; i < ncols; i++)
		add_cell(d, strdup(va_arg(ap, const char *)));
	va_end(ap);
}

void doc_table_n(struct doc *d, size_t ncols)
{
	struct block *b = add_block(d, B_TABLE);

	if (b)
		b->ncols = ncols;
}

void doc_row(struct doc *d, ...)
{
	size_t ncols = d->n ? d->b[d->n - 1].ncols : 0;
	va_list ap;

	va_start(ap, d);
	for (size_t i = 0; i < ncols; i++)
		add_cell(d, strdup(va_arg(ap, const char *)));
	va_end(ap);
}

void doc_cell(struct doc *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_cell(d, vfmt(d, fmt, ap));
	va_end(ap);
}

static void md_text(FILE *f, const char *s, bool cell)
{
	for (; *s; s++) {
		if (cell && *s == '|')
			fputs("\\|", f);
		else if (cell && *s == '\n')
			fputc(' ', f);
		else
			fputc(*s, f);
	}
}

int doc_write_md(FILE *f, const struct doc *d)
{
	if (d->error)
		return d->error;
	fprintf(f, "# %s\n\n", d->title);
	for (size_t i = 0; i < d->n; i++) {
		const struct block *b = &d->b[i];

		switch (b->kind) {
		case B_HEADING:
			fprintf(f, "%.*s %s\n\n", b->level + 1, "######", b->text);
			break;
		case B_PARA:
			fprintf(f, "%s\n\n", b->text);
			break;
		case B_CHART:
			fprintf(f, "![%s](%s.png)\n\n[SVG](%s.svg)\n\n", b->text, b->base, b->base);
			break;
		case B_TABLE:
			for (size_t k = 0; k < b->ncells; k++) {
				fputs(k % b->ncols ? " | " : "| ", f);
				md_text(f, b->cells[k], true);
				if (k % b->ncols == b->ncols - 1)
					fputs(" |\n", f);
				if (k == b->ncols - 1) {
					for (size_t c = 0; c < b->ncols; c++)
						fputs(c ? " | ---" : "| ---", f);
					fputs(" |\n", f);
				}
			}
			fputc('\n', f);
			break;
		}
	}
	return ferror(f) ? -EIO : 0;
}

static void html_text(FILE *f, const char *s)
{
	fmt_html(f, s, strlen(s));
}

static const char css[] =
        "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;"
        "color:#222}\n"
        "h1,h2,h3{font-weight:600}h2{border-bottom:1px solid #ccc;padding-bottom:.2em}\n"
        "table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.9em}\n"
        "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}\n"
        "th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}\n"
        "tr:nth-child(even) td{background:#fafafa}\n"
        "figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}\n"
        "figcaption{font-size:.85em;color:#555}\n";

int doc_write_html(FILE *f, const struct doc *d)
{
	if (d->error)
		return d->error;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
	html_text(f, d->title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", css);
	html_text(f, d->title);
	fputs("</h1>\n", f);
	for (size_t i = 0; i < d->n; i++) {
		const struct block *b = &d->b[i];

		switch (b->kind) {
		case B_HEADING:
			fprintf(f, "<h%d>", b->level + 1);
			html_text(f, b->text);
			fprintf(f, "</h%d>\n", b->level + 1);
			break;
		case B_PARA:
			fputs("<p>", f);
			html_text(f, b->text);
			fputs("</p>\n", f);
			break;
		case B_CHART:
			fprintf(f, "<figure><a href=\"%s.svg\"><img src=\"%s.png\" alt=\"", b->base,
			        b->base);
			html_text(f, b->text);
			fputs("\"></a><figcaption>", f);
			html_text(f, b->text);
			fprintf(f, " (<a href=\"%s.svg\">SVG</a>)</figcaption></figure>\n",
			        b->base);
			break;
		case B_TABLE:
			fputs("<table>\n", f);
			for (size_t k = 0; k < b->ncells; k++) {
				const char *tag = k < b->ncols ? "th" : "td";

				if (k % b->ncols == 0)
					fputs("<tr>", f);
				fprintf(f, "<%s>", tag);
				html_text(f, b->cells[k]);
				fprintf(f, "</%s>", tag);
				if (k % b->ncols == b->ncols - 1)
					fputs("</tr>\n", f);
			}
			fputs("</table>\n", f);
			break;
		}
	}
	fputs("</body>\n</html>\n", f);
	return ferror(f) ? -EIO : 0;
}
