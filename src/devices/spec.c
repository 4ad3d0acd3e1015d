/*
 * spec.c - devices described on the command line (--gpu
 * [KIND:]SIZE[/FREE] or a catalog id), named as llama.cpp names them, and
 * the sizes they are given in.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "devices/catalog.h"
#include "devices/spec.h"
#include "ggml/backend.h"

ggfit_status ggfit_size_parse(const char *s, uint64_t *bytes)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || !isfinite(v))
        return GGFIT_EINVAL;
    static const struct { const char *unit; double mul; } units[] = {
        { "", 1048576.0 }, { "B", 1.0 },
        { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
        { "TiB", 1099511627776.0 },
        { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 },
        { "K", 1024.0 }, { "M", 1048576.0 }, { "G", 1073741824.0 }, { "T", 1099511627776.0 },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcasecmp(end, units[i].unit) == 0 &&
            (strcmp(units[i].unit, "B") || strcmp(end, "B") == 0)) {
            double b = v * units[i].mul;
            if (b >= 18446744073709551615.0)
                return GGFIT_EINVAL;
            *bytes = (uint64_t)(b + 0.5);
            return GGFIT_OK;
        }
    return GGFIT_EINVAL;
}

/* A bare number (no letter after it): "32", "1.5". */
static bool bare_number(const char *s, size_t n)
{
    size_t k = 0, dots = 0;
    while (k < n && (isdigit((unsigned char)s[k]) || (s[k] == '.' && !dots++)))
        k++;
    return n > 0 && k == n;
}

ggfit_status ggfit__sizes_have_units(const char *flag, const char *v, char **err)
{
    char fixed[128];
    size_t o = 0;
    bool bare = false;
    for (const char *p = v; o + 8 < sizeof fixed;) {
        size_t n = strcspn(p, "/");
        bool b = bare_number(p, n);
        bare |= b;
        o += (size_t)snprintf(fixed + o, sizeof fixed - o, "%.*s%s%s", (int)(n > 40 ? 40 : n),
                              p, b ? "GiB" : "", p[n] ? "/" : "");
        if (!p[n])
            break;
        p += n + 1;
    }
    if (!bare)
        return GGFIT_OK;
    return ggfit__fail(err, GGFIT_EINVAL, "%s %.*s%s: give a unit: %s", flag, GGFIT__CLIP(v),
                       fixed);
}

/* The decimal units and the binary ones people mean by them. */
static const struct { const char *dec, *bin; double ratio; } decimal_units[] = {
    { "TB", "TiB", 1e12 / 1099511627776.0 }, { "GB", "GiB", 1e9 / 1073741824.0 },
    { "MB", "MiB", 1e6 / 1048576.0 },
};

bool ggfit_size_note(const char *flag, const char *v, char *note, size_t n)
{
    if (n)
        note[0] = '\0';
    /* every size in v: the items of a device list, past a KIND:, and the
     * parts of TOTAL/FREE */
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",/");
        const char *colon = memchr(p, ':', len);
        const char *size = colon ? colon + 1 : p;
        size_t sl = (size_t)(p + len - size);
        char item[64];
        uint64_t bytes;
        if (sl > 2 && sl < sizeof item && isdigit((unsigned char)size[0])) {
            memcpy(item, size, sl);
            item[sl] = '\0';
            for (size_t u = 0; u < sizeof decimal_units / sizeof decimal_units[0]; u++) {
                const char *unit = item + sl - 2;
                double x = strtod(item, NULL);
                if (strcasecmp(unit, decimal_units[u].dec) || ggfit_size_parse(item, &bytes))
                    continue;
                /* what was typed, read in the binary unit: the decimal
                 * figure is within 10% under it (2.4% to 9%) */
                if (decimal_units[u].ratio < 0.9)
                    continue;
                if (n)
                    snprintf(note, n, "%s %s is %.0f MiB, %.0f%% less than %g%s: give %g%s "
                             "if that is the size meant", flag, item, (double)bytes / GGFIT_MiB,
                             100.0 * (1.0 - decimal_units[u].ratio), x, decimal_units[u].bin, x,
                             decimal_units[u].bin);
                return true;
            }
        }
        p += len + (p[len] != '\0');
    }
    return false;
}

/* ---- what a driver leaves free ----------------------------------------------
 *
 * A GPU never reports all of its memory free: the driver's context takes
 * its share before llama.cpp loads anything. What llama.cpp's fit works
 * with is that free figure, so a device described by its size alone is
 * given what a real one reports:
 *
 *   CUDA    total - 499 MiB. llama.cpp's fit-params example shows a 24 GB
 *           card (24,576 MiB) reporting 24,077 MiB free; the CUDA context's
 *           share is about constant across cards of one generation.
 *   ROCm,   the same share: no published llama.cpp figure for them; the
 *   Vulkan  runtime's context is of the same order (an assumption, said so).
 *   Metal   none: the catalog's Metal memory is recommendedMaxWorkingSetSize,
 *           which is what Metal reports free before a model is loaded.
 *   RPC     none: an rpc-server reports its device's free memory itself, and
 *           a described one is taken as reporting its size.
 */
static const struct {
    ggfit_backend kind;
    uint64_t reserve;
    const char *source;
} driver_share[] = {
    { GGFIT_BACKEND_CUDA, (uint64_t)499 << 20,
      "the CUDA context's share, as llama.cpp's example: 24,077 MiB free on a 24 GB card" },
    { GGFIT_BACKEND_ROCM, (uint64_t)499 << 20,
      "assumed like CUDA's context (no published ROCm figure)" },
    { GGFIT_BACKEND_VULKAN, (uint64_t)499 << 20,
      "assumed like CUDA's context (no published Vulkan figure)" },
};

uint64_t ggfit_driver_free(ggfit_backend kind, uint64_t total, char *why, size_t n)
{
    if (why && n)
        why[0] = '\0';
    for (size_t i = 0; i < sizeof driver_share / sizeof driver_share[0]; i++) {
        if (driver_share[i].kind != kind)
            continue;
        uint64_t r = driver_share[i].reserve;
        uint64_t free = total > r ? total - r : 0;
        if (why && n)
            snprintf(why, n, "free assumed %.0f of %.0f MiB: %s", (double)free / GGFIT_MiB,
                     (double)total / GGFIT_MiB, driver_share[i].source);
        return free;
    }
    return total;
}

/* A size with a unit (24GiB, 24077MiB): a bare number is refused in --gpu,
 * where "24" or "4090" is a mistake far more often than MiB. */
static bool has_unit(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && isalpha((unsigned char)s[n - 1]);
}

ggfit_status ggfit_devices_parse(const char *spec, ggfit_device *out, size_t max, size_t *n,
                                 char **err)
{
    unsigned count[GGFIT_BACKEND_COUNT] = {0};
    *n = 0;
    if (strcmp(spec, "none") == 0)
        return GGFIT_OK;
    size_t sl = strlen(spec);
    if (sl == 0)
        return ggfit__fail(err, GGFIT_EINVAL, "--gpu: empty (give none for the CPU alone, or "
                                              "devices like 24GiB or rtx-3090)");
    if (spec[sl - 1] == ',')
        return ggfit__fail(err, GGFIT_EINVAL, "--gpu: '%s' ends with a comma", spec);
    const char *p = spec;
    while (*p) {
        char item[128];
        size_t len = strcspn(p, ",");
        if (len == 0)
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: an empty item in '%s'", spec);
        if (len >= sizeof item)
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: bad device '%.*s'", (int)len, p);
        memcpy(item, p, len);
        item[len] = '\0';
        p += len + (p[len] == ',');
        if (*n >= max)
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: more than %zu devices", max);
        ggfit_device *d = &out[*n];
        memset(d, 0, sizeof *d);
        d->kind = GGFIT_BACKEND_CUDA;
        char *size = item, *colon = strchr(item, ':');
        bool kind_given = colon != NULL;
        if (colon) {
            *colon = '\0';
            int k;
            for (k = 1; k < GGFIT_BACKEND_COUNT; k++)
                if (strcasecmp(item, ggfit__backend(k)->name) == 0)
                    break;
            if (k == GGFIT_BACKEND_COUNT)
                return ggfit__fail(err, GGFIT_EINVAL,
                                   "--gpu: unknown kind '%s' (cuda, rocm, vulkan, metal, rpc)",
                                   item);
            d->kind = (ggfit_backend)k;
            size = colon + 1;
        }
        char *slash = strchr(size, '/');
        if (slash)
            *slash = '\0';
        if (isalpha((unsigned char)size[0])) {  /* a catalog id: rtx-3090, m3-pro-18gb */
            const ggfit_catalog_entry *c = ggfit_catalog_find(size);
            if (!c) {
                char near[160];
                if (ggfit__catalog_suggest(size, near, sizeof near))
                    return ggfit__fail(err, GGFIT_EINVAL,
                                       "--gpu: unknown device '%s'; did you mean %s?", size,
                                       near);
                return ggfit__fail(err, GGFIT_EINVAL,
                                   "--gpu: unknown device '%s' (a size such as 24GiB, or an "
                                   "id from data/gpus.tsv such as rtx-3090, m3-pro-18gb: "
                                   "ggfit devices --catalog lists them)", size);
            }
            if (!kind_given)
                d->kind = c->kind;
            d->total = c->memory;
            snprintf(d->description, sizeof d->description, "%s", c->name);
            d->bandwidth_gbs = c->bandwidth_gbs;
            d->unified = c->system_memory != 0;
            d->system_memory = c->system_memory;
        } else if (!has_unit(size)) {
            char id[32];
            snprintf(id, sizeof id, "rtx-%.20s", size);
            if (ggfit_catalog_find(id))
                return ggfit__fail(err, GGFIT_EINVAL, "--gpu %.*s%s: give a unit (24GiB) or a "
                                   "device id: did you mean %s?", GGFIT__CLIP(size), id);
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu %.*s%s: give a unit: %.40sGiB",
                               GGFIT__CLIP(size), size);
        } else if (ggfit_size_parse(size, &d->total) != GGFIT_OK) {
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: bad size '%s' (e.g. 24GiB, 24077MiB)",
                               size);
        } else if (d->total < ((uint64_t)1 << 20)) {
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu: a device of '%s' has no memory (give "
                               "none for the CPU alone)", size);
        }
        if (d->kind == GGFIT_BACKEND_METAL)
            d->unified = true;   /* Apple silicon: one pool with the host */
        d->free = d->total;
        if (slash && !has_unit(slash + 1))
            return ggfit__fail(err, GGFIT_EINVAL, "--gpu %.*s%s: give the free size a unit: "
                               "%.40sMiB", GGFIT__CLIP(slash + 1), slash + 1);
        if (slash && (ggfit_size_parse(slash + 1, &d->free) != GGFIT_OK || d->free > d->total))
            return ggfit__fail(err, GGFIT_EINVAL,
                               "--gpu: bad free size '%s' (TOTAL/FREE, FREE <= TOTAL)", slash + 1);
        if (!slash && d->unified && d->kind == GGFIT_BACKEND_CUDA && d->system_memory) {
            /* An integrated CUDA device (DGX Spark) reports the system's
             * available memory as free (ggml-cuda: MemAvailable on UMA). */
            char why[112];
            d->free = ggfit_host_free_assumed(d->system_memory, why, sizeof why);
            if (d->free > d->total)
                d->free = d->total;
            snprintf(d->assumed, sizeof d->assumed, "integrated: reports the system's %.100s",
                     why);
        } else if (!slash) {
            d->free = ggfit_driver_free(d->kind, d->total, d->assumed, sizeof d->assumed);
        }
        unsigned idx = count[d->kind]++;
        if (d->kind == GGFIT_BACKEND_METAL && idx == 0)
            snprintf(d->name, sizeof d->name, "Metal");
        else
            snprintf(d->name, sizeof d->name, "%s%u", ggfit__backend(d->kind)->device_prefix, idx);
        (*n)++;
    }
    return GGFIT_OK;
}


/* ---- what a machine leaves free ---------------------------------------------
 *
 * Described by its total alone (--host-mem 64GiB, a Mac from the catalog),
 * a machine is assumed to keep an eighth of its memory, at least 1 GiB and
 * at most 4 GiB, for the system, the desktop and the other programs: an
 * assumption, stated in every plan that uses it (give --host-mem
 * TOTAL/FREE to replace it). A machine ggfit runs on reports its own
 * (MemAvailable).
 */
uint64_t ggfit_host_free_assumed(uint64_t total, char *why, size_t n)
{
    uint64_t keep = total / 8;
    if (keep < GGFIT__GIB(1))
        keep = GGFIT__GIB(1);
    if (keep > GGFIT__GIB(4))
        keep = GGFIT__GIB(4);
    uint64_t free = total > keep ? total - keep : 0;
    if (why && n)
        snprintf(why, n, "free assumed %.0f of %.0f MiB (the system and other programs keep "
                 "%.0f MiB)", (double)free / GGFIT_MiB, (double)total / GGFIT_MiB,
                 (double)keep / GGFIT_MiB);
    return free;
}
