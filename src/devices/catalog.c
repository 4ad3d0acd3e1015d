/*
 * catalog.c - GPUs and Macs described by name (--gpu rtx-3090, m3-pro-18gb),
 * and the Metal working-set rule that sizes a Mac.
 *
 * The table is data/gpus.tsv, turned into C at build time by
 * scripts/gen_catalog.awk ($(B)/catalog_data.h); the TSV is the one source.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "devices/catalog.h"

/* ---- the Metal working-set rule ---------------------------------------------
 *
 * llama.cpp budgets a Mac's GPU from MTLDevice.recommendedMaxWorkingSetSize.
 * Absent iogpu.wired_limit_mb, macOS derives it from hw.memsize: a share of
 * the memory, rounded up to a whole 16 KiB page. The share depends on the
 * memory size, and it changed with macOS 26:
 *
 *   memsize      macOS 26      macOS 15 and earlier
 *   <= 8 GiB     2/3           2/3
 *   <= 24 GiB    0.74          2/3
 *   <= 32 GiB    0.78          2/3
 *   <= 48 GiB    0.78          3/4
 *   <= 96 GiB    0.81          3/4
 *   <= 128 GiB   0.84          3/4
 *   larger       0.87          3/4
 *
 * Reported figures it reproduces to the byte or to the MiB llama.cpp prints:
 * macOS 26: 24 GiB 19,069,665,280 B (18,186 MiB), 128 GiB 115,448,725,504 B,
 * 256 GiB 239,143,780,352 B; 16 GiB 12,124 MiB, 32 GiB 25,559 MiB, 36 GiB
 * 28,753, 48 GiB 38,338, 64 GiB 53,084, 96 GiB 79,626, 128 GiB 110,100.
 * macOS 15: 8 GiB 5,461 MiB, 16 GiB 10,922, 18 GiB 12,288, 24 GiB 16,384,
 * 32 GiB 21,845, 36 GiB 27,648. (llama.cpp's "12287 MiB free" on an 18 GB Mac
 * is this 12,288 less what Metal already held.) Sizes with no report behind
 * them (18 GiB and 192/512 GiB on macOS 26) follow the nearest band.
 *
 * A constant expression, so that the generated table can use it.
 */
#define WS_PAGE 16384u
#define WS_SHARE_26(m) ((m) <= GGFIT__GIB(8) ? 200u : (m) <= GGFIT__GIB(24) ? 222u \
                        : (m) <= GGFIT__GIB(48) ? 234u : (m) <= GGFIT__GIB(96) ? 243u \
                        : (m) <= GGFIT__GIB(128) ? 252u : 261u)
#define WS_SHARE_15(m) ((m) <= GGFIT__GIB(32) ? 200u : 225u)   /* in 300ths */
#define WS_OF(m, share) (((m) / WS_PAGE * (share) + 299u) / 300u * WS_PAGE)
#define GGFIT__METAL_WS(m) WS_OF((uint64_t)(m), WS_SHARE_26((uint64_t)(m)))

uint64_t ggfit__metal_working_set(uint64_t memsize, uint64_t wired_limit_mb,
                                  unsigned macos_major)
{
    if (wired_limit_mb) {  /* Metal reports the raised limit as it is */
        uint64_t mb = memsize >> 20;
        return (wired_limit_mb < mb ? wired_limit_mb : mb) << 20;
    }
    if (memsize > UINT64_MAX / 300)
        return 0;
    if (macos_major && macos_major < 26)
        return WS_OF(memsize, WS_SHARE_15(memsize));
    return GGFIT__METAL_WS(memsize);
}

/* ---- the table ------------------------------------------------------------- */

#include "catalog_data.h"

size_t ggfit_catalog_count(void)
{
    return sizeof catalog / sizeof catalog[0];
}

const ggfit_catalog_entry *ggfit_catalog_get(size_t i)
{
    return i < ggfit_catalog_count() ? &catalog[i] : NULL;
}

const ggfit_catalog_entry *ggfit_catalog_find(const char *id)
{
    if (!id)
        return NULL;
    for (size_t i = 0; i < ggfit_catalog_count(); i++)
        if (strcasecmp(catalog[i].id, id) == 0)
            return &catalog[i];
    return NULL;
}

/* ---- the catalog listed ---------------------------------------------------- */

/* Whether hay contains needle, ignoring case. */
static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return true;
    return n == 0;
}

size_t ggfit_catalog_list(const char *filter, const ggfit_catalog_entry **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < ggfit_catalog_count(); i++) {
        const ggfit_catalog_entry *e = &catalog[i];
        if (filter && !contains_nocase(e->id, filter) && !contains_nocase(e->name, filter))
            continue;
        if (out && n < max)
            out[n] = e;
        n++;
    }
    return n;
}

/* ---- suggestions for a mistyped id -----------------------------------------
 *
 * An id is tokens joined by '-' ("rtx-4060-laptop"): a family, a model
 * number, variants. A mistyped id is most often a right one with a token
 * misspelt, left off or added, and the model number weighs most: rtx-4060
 * is a different GPU from rtx-3060, rtx-4060-laptop the same chip's laptop
 * part. So a candidate's distance from what was typed is an edit distance
 * over tokens, in half edits:
 *  - a token replaced: twice the letters that differ, twice that again
 *    where either token holds a digit (a model number, a size);
 *  - a token of the candidate's that was not typed: 1 (typed short,
 *    "rtx-4060-ti" for rtx-4060-ti-8gb);
 *  - a typed token the candidate lacks: 3 (a variant the catalog does not
 *    have, "rtx-4060-mobile" for rtx-4060).
 * The same letters with other dashes ("rtx4090") are 1 away. So after
 * "rtx-4060-laptopp" come rtx-4060-laptop (2), rtx-4060 (3), and not
 * rtx-3060-ti. Ties go to the candidate with more tokens typed exactly,
 * then to the smaller edit distance of the whole ids ("rtx-390": rtx-3090
 * before rtx-3070), then to the catalog's order. What is further than half the
 * typed length (in edits), or shares no token with it and is that far letter
 * by letter, is not suggested. */

enum { MAX_TOKENS = 16, COST_ADD = 1, COST_DROP = 3 };

typedef struct { const char *s; size_t n; } token;

/* Splits s at '-' into at most MAX_TOKENS tokens (the last takes the rest). */
static size_t tokens_of(const char *s, token *t)
{
    size_t n = 0;
    for (;;) {
        const char *dash = n + 1 < MAX_TOKENS ? strchr(s, '-') : NULL;
        t[n].s = s;
        t[n].n = dash ? (size_t)(dash - s) : strlen(s);
        n++;
        if (!dash)
            return n;
        s = dash + 1;
    }
}

static bool has_digit(const token *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (isdigit((unsigned char)t->s[i]))
            return true;
    return false;
}

/* From typed tokens a to candidate tokens b, in half edits. */
static size_t token_distance(const token *a, size_t na, const token *b, size_t nb)
{
    size_t row[MAX_TOKENS + 1];
    for (size_t j = 0; j <= nb; j++)
        row[j] = j * COST_ADD;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i * COST_DROP;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t sub = 2 * ggfit__edit_distance(a[i - 1].s, a[i - 1].n, b[j - 1].s, b[j - 1].n);
            if (has_digit(&a[i - 1]) || has_digit(&b[j - 1]))
                sub *= 2;
            sub += diag;
            size_t drop = up + COST_DROP, add = row[j - 1] + COST_ADD;
            size_t best = drop < add ? drop : add;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[nb];
}

/* Whether a and b are the same letters once their dashes are left out. */
static bool same_but_dashes(const char *a, const char *b)
{
    for (;; a++, b++) {
        while (*a == '-')
            a++;
        while (*b == '-')
            b++;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
        if (!*a)
            return true;
    }
}

/* How many of a's tokens are among b's, ignoring case. */
static size_t tokens_shared(const token *a, size_t na, const token *b, size_t nb)
{
    size_t k = 0;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            if (a[i].n == b[j].n && strncasecmp(a[i].s, b[j].s, a[i].n) == 0) {
                k++;
                break;
            }
    return k;
}

typedef struct { size_t i, dist, shared, chars; } ranked;

/* Whether x ranks before y. */
static bool ranks_before(const ranked *x, const ranked *y)
{
    if (x->dist != y->dist)
        return x->dist < y->dist;
    if (x->shared != y->shared)
        return x->shared > y->shared;
    if (x->chars != y->chars)
        return x->chars < y->chars;
    return x->i < y->i;
}

size_t ggfit__catalog_suggest(const char *id, char *out, size_t cap)
{
    enum { N_BEST = 3 };
    ranked best[N_BEST];
    size_t n_best = 0, n_id = strlen(id);
    size_t limit = n_id > 4 ? n_id : 4;   /* half the length, in half edits */
    token t_id[MAX_TOKENS], t_c[MAX_TOKENS];
    size_t nt_id = tokens_of(id, t_id);
    if (cap)
        out[0] = '\0';
    for (size_t i = 0; i < ggfit_catalog_count(); i++) {
        const char *c = catalog[i].id;
        size_t nt_c = tokens_of(c, t_c);
        ranked r = { .i = i, .chars = ggfit__edit_distance(id, n_id, c, strlen(c)) };
        r.dist = same_but_dashes(id, c) ? 1 : token_distance(t_id, nt_id, t_c, nt_c);
        r.shared = tokens_shared(t_id, nt_id, t_c, nt_c);
        /* related at all: a token in common, or close letter by letter
         * (dropping and adding whole tokens reaches anything) */
        if (r.dist > limit || (r.shared == 0 && 2 * r.chars > limit))
            continue;
        if (n_best == N_BEST && !ranks_before(&r, &best[N_BEST - 1]))
            continue;
        size_t k = n_best < N_BEST ? n_best++ : N_BEST - 1;
        for (; k > 0 && ranks_before(&r, &best[k - 1]); k--)
            best[k] = best[k - 1];
        best[k] = r;
    }
    size_t len = 0;
    for (size_t k = 0; k < n_best && cap; k++) {
        int w = snprintf(out + len, cap - len, "%s%s", k ? ", " : "", catalog[best[k].i].id);
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
    }
    return n_best;
}
