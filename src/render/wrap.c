/*
 * wrap.c - text as an 80-column terminal shows it. Every text renderer
 * takes its builder's text through ggfit__text_take, so that a note or a
 * sentence of any length is written once and broken here, the same way
 * everywhere: at spaces, the rest of the line indented two columns past the
 * line's own indent (a hanging indent). Tables are laid out to fit by their
 * renderers; a line of one word longer than the room stays whole.
 */
#include <stdlib.h>
#include <string.h>

#include "render/render.h"

/* The columns text fits: GGFIT_TEXT_COLS, or 0 for no limit (--wide). One
 * setting for the process, as a terminal is (ggfit_text_set_columns). */
static unsigned text_columns = GGFIT_TEXT_COLS;

void ggfit_text_set_columns(unsigned n_cols)
{
    text_columns = n_cols;
}

unsigned ggfit__text_cols(void)
{
    return text_columns;
}

/* Columns of n bytes of UTF-8 (a continuation byte takes none). */
static size_t text_cols(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* Where the word at s[at] ends: at the next space, or past a unit after a
 * number ("8789 MiB" is not broken between its number and its unit), or
 * past a flag's short value ("-ngl -1"). */
static size_t word_end(const char *s, size_t n, size_t at)
{
    static const char *const units[] = { "MiB", "GiB", "GB", "GB/s", "t/s", "tokens" };
    size_t w = at;
    bool number = true;
    while (w < n && s[w] != ' ') {
        number = number && (strchr("0123456789.,", s[w]) != NULL);
        w++;
    }
    /* a flag keeps a short value on its line: "-ngl -1", "-c 4096" */
    if (!number && s[at] == '-' && w - at >= 2 && w - at <= 20 && w < n && s[w + 1] != ' ') {
        size_t v = w + 1;
        while (v < n && s[v] != ' ')
            v++;
        bool flag = true;
        for (size_t i = at + 1; i < w && flag; i++)
            flag = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '-';
        if (flag && v - (w + 1) <= 8)
            return v;
    }
    if (!number || w >= n)
        return w;
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        size_t k = strlen(units[u]);
        if (w + 1 + k <= n && !strncmp(s + w + 1, units[u], k) &&
            (w + 1 + k == n || strchr(" ,;:)", s[w + 1 + k]))) {
            for (w += 1 + k; w < n && s[w] != ' ';)   /* and what sticks to it: "MiB)," */
                w++;
            return w;
        }
    }
    return w;
}

/* Appends the n bytes of one line at s, broken to width, and a newline
 * where nl says the line had one. */
static void wrap_line(ggfit_sb *sb, const char *s, size_t n, size_t width, bool nl)
{
    size_t indent = 0, col, at;
    bool first = true;   /* the next word starts an output line */
    if (!width || text_cols(s, n) <= width) {
        ggfit__sb_printf(sb, "%.*s%s", (int)n, s, nl ? "\n" : "");
        return;
    }
    while (indent < n && s[indent] == ' ')
        indent++;
    size_t hang = indent + 2 < width / 2 ? indent + 2 : width / 2;
    ggfit__sb_printf(sb, "%.*s", (int)indent, s);
    col = indent;
    at = indent;
    while (at < n) {
        size_t w = word_end(s, n, at), wc = text_cols(s + at, w - at);
        bool cut = false;
        if (!first && col + 1 + wc > width) {
            ggfit__sb_printf(sb, "\n%*s", (int)hang, "");
            col = hang;
            first = true;
        }
        /* a word longer than the line (a -ot list) is cut after a comma */
        if (first && col + wc > width) {
            size_t c = 0;
            for (size_t i = at; i < w && col + text_cols(s + at, i + 1 - at) <= width; i++)
                if (s[i] == ',')
                    c = i + 1;
            if (c) {
                w = c;
                wc = text_cols(s + at, w - at);
                cut = true;
            }
        }
        ggfit__sb_printf(sb, "%s%.*s", first ? "" : " ", (int)(w - at), s + at);
        col += (first ? 0 : 1) + wc;
        first = false;
        at = w;
        if (cut) {   /* the rest of the word on the next line */
            ggfit__sb_printf(sb, "\n%*s", (int)hang, "");
            col = hang;
            first = true;
        }
        while (at < n && s[at] == ' ')   /* the spaces between words fold to one */
            at++;
    }
    if (nl)
        ggfit__sb_printf(sb, "\n");
}

char *ggfit__text_take(ggfit_sb *sb)
{
    char *in = ggfit__sb_take(sb);
    ggfit_sb out = {0};
    if (!in)
        return NULL;
    for (const char *p = in; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        wrap_line(&out, p, n, text_columns, nl != NULL);
        p += n + (nl != NULL);
    }
    free(in);
    if (!out.buf && !out.oom)
        ggfit__sb_printf(&out, "%s", "");   /* empty text stays a string */
    return ggfit__sb_take(&out);
}
