/*
 * regex.c - -ot's patterns (regex.h): PCRE2, or in WebAssembly the
 * JavaScript engine's RegExp, held by wasm/ggfit_lib.js.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "project/regex.h"

#ifdef __EMSCRIPTEN__

/* wasm/ggfit_lib.js: a RegExp kept in a table, its index returned (or -1,
 * its SyntaxError's words in msg); tested; dropped. */
extern int ggfit_js_regex_new(const char *pattern, char *msg, size_t n);
extern int ggfit_js_regex_test(int id, const char *s);
extern void ggfit_js_regex_free(int id);

struct ggfit__regex {
    int id;
};

ggfit__regex *ggfit__regex_new(const char *pattern, char *msg, size_t n, size_t *off)
{
    *off = SIZE_MAX;   /* JavaScript says what is wrong, not where */
    ggfit__regex *re = ggfit__malloc(sizeof *re);
    if (!re) {
        snprintf(msg, n, "out of memory");
        return NULL;
    }
    if ((re->id = ggfit_js_regex_new(pattern, msg, n)) < 0) {
        free(re);
        return NULL;
    }
    return re;
}

bool ggfit__regex_search(ggfit__regex *re, const char *s)
{
    return ggfit_js_regex_test(re->id, s) != 0;
}

void ggfit__regex_free(ggfit__regex *re)
{
    if (re)
        ggfit_js_regex_free(re->id);
    free(re);
}

#else

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

struct ggfit__regex {
    pcre2_code *code;
    pcre2_match_data *md;
};

ggfit__regex *ggfit__regex_new(const char *pattern, char *msg, size_t n, size_t *off)
{
    int code;
    PCRE2_SIZE at = 0;
    ggfit__regex *re = ggfit__calloc(1, sizeof *re);
    *off = SIZE_MAX;
    if (!re) {
        snprintf(msg, n, "out of memory");
        return NULL;
    }
    /* ECMAScript's \u escapes and unset back references, as std::regex. */
    re->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                             PCRE2_ALT_BSUX | PCRE2_MATCH_UNSET_BACKREF, &code, &at, NULL);
    if (!re->code) {
        pcre2_get_error_message(code, (PCRE2_UCHAR *)msg, n);
        *off = (size_t)at;
        free(re);
        return NULL;
    }
    if (!(re->md = pcre2_match_data_create(8, NULL))) {
        snprintf(msg, n, "out of memory");
        ggfit__regex_free(re);
        return NULL;
    }
    return re;
}

bool ggfit__regex_search(ggfit__regex *re, const char *s)
{
    return pcre2_match(re->code, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, re->md, NULL) >= 0;
}

void ggfit__regex_free(ggfit__regex *re)
{
    if (!re)
        return;
    pcre2_match_data_free(re->md);
    pcre2_code_free(re->code);
    free(re);
}

#endif
