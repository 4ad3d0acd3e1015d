/*
 * regex.c - -ot's patterns (regex.h): PCRE2, or in WebAssembly the
 * JavaScript engine's RegExp, held by wasm/ggfit.js (through
 * wasm/library.js).
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "project/regex.h"

#ifdef __EMSCRIPTEN__

/* wasm/library.js: a RegExp kept in a table, its index returned (or -1,
 * its SyntaxError's words in msg); tested; dropped. */
extern int ggfit_js_regex_new(const char *pattern, char *msg, size_t n);
extern int ggfit_js_regex_test(int id, const char *s);
extern void ggfit_js_regex_free(int id);

struct ggfit__regex {
    int id;
};

ggfit_status ggfit__regex_new(const char *pattern, ggfit__regex **out, char *msg, size_t n)
{
    ggfit__regex *re = *out = ggfit__malloc(sizeof *re);
    if (!re)
        return GGFIT_ENOMEM;
    /* JavaScript says what is wrong, not where */
    if ((re->id = ggfit_js_regex_new(pattern, msg, n)) < 0) {
        free(re);
        *out = NULL;
        return GGFIT_EINVAL;
    }
    return GGFIT_OK;
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

ggfit_status ggfit__regex_new(const char *pattern, ggfit__regex **out, char *msg, size_t n)
{
    int code;
    PCRE2_SIZE at = 0;
    char why[160];
    ggfit__regex *re = *out = ggfit__calloc(1, sizeof *re);
    if (!re)
        return GGFIT_ENOMEM;
    /* ECMAScript's \u escapes and unset back references, as std::regex. */
    re->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                             PCRE2_ALT_BSUX | PCRE2_MATCH_UNSET_BACKREF, &code, &at, NULL);
    if (!re->code) {
        pcre2_get_error_message(code, (PCRE2_UCHAR *)why, sizeof why);
        snprintf(msg, n, "%s at %zu", why, (size_t)at);
        free(re);
        *out = NULL;
        return GGFIT_EINVAL;
    }
    if (!(re->md = pcre2_match_data_create(8, NULL))) {
        ggfit__regex_free(re);
        *out = NULL;
        return GGFIT_ENOMEM;
    }
    return GGFIT_OK;
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
