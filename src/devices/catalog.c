/*
 * catalog.c - GPUs and Macs described by name (--gpu rtx-3090, m3-pro-18gb),
 * and the Metal working-set rule that sizes a Mac.
 *
 * The table is data/gpus.tsv, turned into C at build time by
 * scripts/gen_catalog.awk ($(B)/catalog_data.h); the TSV is the one source.
 */
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

/* ---- suggestions for a mistyped id ----------------------------------------- */

size_t ggfit__catalog_suggest(const char *id, char *out, size_t cap)
{
    enum { N_BEST = 3 };
    size_t best[N_BEST], score[N_BEST], n_best = 0, n_id = strlen(id);
    size_t limit = n_id > 4 ? n_id : 4;   /* half the length, in half edits */
    if (cap)
        out[0] = '\0';
    for (size_t i = 0; i < ggfit_catalog_count(); i++) {
        const char *c = catalog[i].id;
        size_t n_c = strlen(c);
        /* in half edits: a whole prefix ("rtx-4060-ti" of "rtx-4060-ti-16gb")
         * ranks before one mistyped letter */
        size_t s = 2 * ggfit__edit_distance(id, n_id, c, n_c);
        if (n_id < n_c) {
            size_t p = 2 * ggfit__edit_distance(id, n_id, c, n_id) + 1;
            s = p < s ? p : s;
        }
        if (s > limit)
            continue;
        size_t k = n_best < N_BEST ? n_best++ : N_BEST;
        if (k == N_BEST && s >= score[N_BEST - 1])
            continue;
        if (k == N_BEST)
            k = N_BEST - 1;
        for (; k > 0 && score[k - 1] > s; k--) {
            best[k] = best[k - 1];
            score[k] = score[k - 1];
        }
        best[k] = i;
        score[k] = s;
    }
    size_t len = 0;
    for (size_t k = 0; k < n_best && cap; k++) {
        int w = snprintf(out + len, cap - len, "%s%s", k ? ", " : "", catalog[best[k]].id);
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
    }
    return n_best;
}
