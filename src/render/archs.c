/*
 * archs.c - the list of architectures and what ggfit does with each, as a
 * table, JSON, or the Markdown README.md shows (tests/cli.sh keeps the
 * README's copy equal to it).
 */
#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

static const char *const status_word[] = {
    [GGFIT_ARCH_EXACT] = "exact",
    [GGFIT_ARCH_NO_GRAPH] = "estimated compute",
    [GGFIT_ARCH_GENERIC] = "estimated",
};

/* Why a status is what it is, in the words a user needs. */
static const char *const status_reason[] = {
    [GGFIT_ARCH_EXACT] = "weights, cache and compute buffers as llama.cpp's",
    [GGFIT_ARCH_NO_GRAPH] = "llama.cpp's memory rules; its graph is not rebuilt yet",
    [GGFIT_ARCH_GENERIC] = "no rules yet: weights exact, cache and compute from generic rules",
};

/* Why a row is not exact: its own reason, else what its status implies
 * (no reason recorded for it yet); NULL for an exact row. */
static const char *why_of(const ggfit_arch_info *a)
{
    if (a->status == GGFIT_ARCH_EXACT)
        return NULL;
    if (a->why)
        return a->why;
    return a->status == GGFIT_ARCH_NO_GRAPH
               ? "no reason recorded: its graph is not rebuilt yet"
               : "no reason recorded: ggfit has no rules for it yet";
}

/* The supported llama.cpp versions ggfit is exact for with row i:
 * "b10309 b10587", "b10587 (added in b10342)" (short: "since b10342"), or
 * "-" for none. */
static const char *versions_of(size_t i, bool brief, char *buf, size_t n)
{
    uint32_t added = ggfit_arch_added(i, NULL);
    if (brief && added && ggfit_arch_exact_at(i, 0)) {
        snprintf(buf, n, "since b%u", added);
        return buf;
    }
    size_t len = 0;
    buf[0] = 0;
    uint32_t b;
    for (size_t v = 0; (b = ggfit_llama_version_supported(v)) && len < n; v++)
        if (ggfit_arch_exact_at(i, b))
            len += (size_t)snprintf(buf + len, n - len, "%sb%u", len ? " " : "", b);
    if (len && added && len < n)
        snprintf(buf + len, n - len, " (added in b%u)", added);
    if (!buf[0])
        snprintf(buf, n, "-");
    return buf;
}

char *ggfit_archs_text(void)
{
    ggfit_sb sb = {0};
    size_t n = ggfit_arch_count(), counts[3] = {0};
    ggfit__sb_printf(&sb, "%-18s %-17s %-13s %s\n", "architecture", "status", "exact for",
                     "memory");
    for (size_t i = 0; i < n; i++) {
        ggfit_arch_info a;
        char vs[64];
        if (ggfit_arch_get(i, &a) != GGFIT_OK)
            continue;
        counts[a.status]++;
        ggfit__sb_printf(&sb, "%-18s %-17s %-13s %s%s\n", a.name, status_word[a.status],
                         versions_of(i, true, vs, sizeof vs), a.memory,
                         a.in_llama ? "" : " (not in llama.cpp's list)");
        if (why_of(&a))
            ggfit__sb_printf(&sb, "%-18s why: %s\n", "", why_of(&a));
    }
    ggfit__sb_printf(&sb, "%zu exact, %zu with estimated compute, %zu estimated\n", counts[0],
                     counts[1], counts[2]);
    return ggfit__text_take(&sb);
}

char *ggfit_archs_markdown(void)
{
    ggfit_sb sb = {0};
    size_t n = ggfit_arch_count(), counts[3] = {0};
    ggfit__sb_printf(&sb, "| architecture | status | exact for llama.cpp | memory | why not "
                          "exact |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        ggfit_arch_info a;
        char vs[64];
        if (ggfit_arch_get(i, &a) != GGFIT_OK)
            continue;
        counts[a.status]++;
        ggfit__sb_printf(&sb, "| %s%s | %s | %s | %s | %s |\n", a.name,
                         a.in_llama ? "" : " (not in llama.cpp's list)", status_word[a.status],
                         versions_of(i, false, vs, sizeof vs), a.memory, why_of(&a) ? why_of(&a) : "");
    }
    ggfit__sb_printf(&sb, "\n%zu exact, %zu with estimated compute, %zu estimated.\n", counts[0],
                     counts[1], counts[2]);
    return ggfit__sb_take(&sb);
}

char *ggfit_archs_json(void)
{
    json_t *list = json_array();
    size_t n = ggfit_arch_count();
    bool ok = list != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        ggfit_arch_info a;
        if (ggfit_arch_get(i, &a) != GGFIT_OK)
            continue;
        const char *commit;
        uint32_t added = ggfit_arch_added(i, &commit);
        json_t *exact = json_array();
        uint32_t b;
        for (size_t v = 0; exact && (b = ggfit_llama_version_supported(v)); v++)
            if (ggfit_arch_exact_at(i, b) && json_array_append_new(exact, json_integer(b)))
                json_decref(exact), exact = NULL;
        json_t *o = exact ? json_pack("{s:s, s:s, s:s, s:s, s:b, s:s?, s:o, s:o}", "name", a.name,
                                      "status", status_word[a.status], "reason",
                                      status_reason[a.status], "memory", a.memory, "in_llama",
                                      a.in_llama, "why", why_of(&a), "exact_for", exact, "added",
                                      added ? json_pack("{s:I, s:s}", "build", (json_int_t)added,
                                                        "commit", commit)
                                            : json_null())
                          : NULL;
        ok = o && json_array_append_new(list, o) == 0;
    }
    /* an object around the list, so that it carries the version (docs/json.md) */
    json_t *root = ok ? json_pack("{s:O}", "archs", list) : NULL;
    json_decref(list);
    return ggfit__json_doc(root, "archs", GGFIT__JSON_FLAGS);
}
