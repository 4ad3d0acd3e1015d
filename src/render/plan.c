/*
 * plan.c - renderers of a whole plan: llama.cpp's decision and memory
 * (the fit and projection renderers), then ggfit's verdict on the whole
 * machine beside it, in words for a person and as JSON.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"
#include "versions/version.h"

static const char *const pool_kinds[] = { "device", "host", "unified" };

/* A Metal span's fixes: their flags, and what each does. */
static const char *const fix_flags[] = {
    [GGFIT_FIX_OUTPUT_CPU] = "-ot \"^output=CPU\"",
    [GGFIT_FIX_REORDER] = "ggfit reorder IN OUT",
    [GGFIT_FIX_NO_MMAP] = "--no-mmap",
};
static const char *const fix_what[] = {
    [GGFIT_FIX_OUTPUT_CPU] = "keeps the output layer in system RAM, so the span ends at the "
                             "offloaded blocks",
    [GGFIT_FIX_REORDER] = "rewrites the file in llama.cpp's offload order (experts first, "
                          "then the blocks, the output layer last)",
    [GGFIT_FIX_NO_MMAP] = "loads the weights into buffers of their own size instead of "
                          "mapping the file",
};
_Static_assert(sizeof fix_flags / sizeof fix_flags[0] == GGFIT_FIX_NO_MMAP + 1, "fix_flags");
_Static_assert(sizeof fix_what / sizeof fix_what[0] == GGFIT_FIX_NO_MMAP + 1, "fix_what");
static const char *const verdict_ids[] = { "fits", "no_fit", "host_short" };

char *ggfit_plan_args(const ggfit_plan *pl)
{
    if (!pl->has_alternative && (pl->print_memory || pl->verdict.status != GGFIT_VERDICT_FITS)) {
        char *s = ggfit__malloc(1);
        if (s)
            s[0] = '\0';
        return s;
    }
    if (pl->program == GGFIT_FOR_FIT_PARAMS)   /* its own line, as it prints it */
        return ggfit_fit_args(pl->has_alternative ? &pl->alternative : &pl->fit, pl->devices,
                              pl->n_devices);
    char **argv = ggfit_plan_argv(pl, pl->program, NULL);
    char *line = argv ? ggfit_argv_join(argv) : NULL;
    ggfit_argv_free(argv);
    return line;
}

/* ---- text ----------------------------------------------------------------- */

/* The verdict in one sentence: the first pool short, or the Host's use
 * when every pool holds. */
char *ggfit_verdict_summary(const ggfit_verdict *v, char *buf, size_t n)
{
    const ggfit_pool *h = NULL, *bad = v->first_short >= 0 ? &v->pools[v->first_short] : NULL;
    for (uint32_t i = 0; i < v->n_pools; i++)
        if (v->pools[i].kind == GGFIT_POOL_HOST)
            h = &v->pools[i];
    if (n)
        buf[0] = '\0';
    if (!v->n_pools || !n)
        return buf;   /* not judged */
    if (!bad) {
        snprintf(buf, n,
                 "fits: every device keeps its margin, and system memory holds the %.0f MiB "
                 "left on the host (%.0f MiB free)", h ? ggfit__mib(h->used) : 0.0,
                 ggfit__mib(h ? h->free : 0));   /* the host's free memory */
    } else if (bad->kind == GGFIT_POOL_DEVICE && bad->short_by < bad->margin) {
        /* it loads, with less than the margin left (llama.cpp's fit lands
         * there: its estimates are approximate) */
        snprintf(buf, n,
                 "inside the margin: %s needs %.0f MiB of %.0f MiB free and keeps %.0f MiB of "
                 "its %.0f MiB margin: %.0f MiB inside it", bad->name, ggfit__mib(bad->used),
                 ggfit__mib(bad->free), ggfit__mib((uint64_t)bad->free_after), ggfit__mib(bad->margin),
                 ggfit__mib(bad->short_by));
    } else if (bad->kind == GGFIT_POOL_DEVICE) {
        snprintf(buf, n,
                 "does not fit: %s needs %.0f MiB and keeps a %.0f MiB margin, %.0f MiB are "
                 "free: short by %.0f MiB", bad->name, ggfit__mib(bad->used), ggfit__mib(bad->margin),
                 ggfit__mib(bad->free), ggfit__mib(bad->short_by));
    } else if (bad->kind == GGFIT_POOL_HOST && v->status == GGFIT_VERDICT_NO_FIT) {
        snprintf(buf, n,
                 "does not fit in system memory: it needs %.0f MiB and keeps a %.0f MiB margin, "
                 "%.0f MiB are free: short by %.0f MiB", ggfit__mib(bad->used), ggfit__mib(bad->margin),
                 ggfit__mib(bad->free), ggfit__mib(bad->short_by));
    } else if (bad->kind == GGFIT_POOL_UNIFIED) {
        snprintf(buf, n,
                 "does not fit: the GPU and the host share one memory; together they need "
                 "%.0f MiB, %.0f MiB are free: short by %.0f MiB", ggfit__mib(bad->used),
                 ggfit__mib(bad->free), ggfit__mib(bad->short_by));
    } else if (bad->used - bad->mapped + bad->margin <= bad->free) {
        snprintf(buf, n,
                 "fits on the GPUs but not in system memory: the host needs %.0f MiB, %.0f MiB "
                 "of them weights mapped from the file, and %.0f MiB are free: %.0f MiB of "
                 "weights would be read from disk again and again (slow)", ggfit__mib(bad->used),
                 ggfit__mib(bad->mapped), ggfit__mib(bad->free), ggfit__mib(bad->short_by));
    } else {
        snprintf(buf, n,
                 "fits on the GPUs but not in system memory: the host needs %.0f MiB, %.0f MiB "
                 "are free: short by %.0f MiB", ggfit__mib(bad->used), ggfit__mib(bad->free),
                 ggfit__mib(bad->short_by));
    }
    return buf;
}

/* The summary as a value, for a format's argument. */
typedef struct summary_text {
    char s[320];
} summary_text;

static summary_text summary(const ggfit_verdict *v)
{
    summary_text t;
    ggfit_verdict_summary(v, t.s, sizeof t.s);
    return t;
}

/* What the plan leaves out, one line each, in the order it was planned:
 * the flags, -ts, the speculative flags, the draft, the projector. Within
 * the 1024 bytes the plan's notes always had (a longer text is cut as it
 * was). */
#define NOTES_CAP 1024

static void note(char *buf, const char *fmt, ...)
{
    size_t k = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (k < NOTES_CAP)
        vsnprintf(buf + k, NOTES_CAP - k, fmt, ap);
    va_end(ap);
}

static void vocab_why(const ggfit_vocab_check *c, char *out, size_t cap)
{
    switch (c->mismatch) {
    case GGFIT_VOCAB_TYPE:
        snprintf(out, cap, "its vocabulary type (%s) is not the target's (%s)", c->type_draft,
                 c->type_target);
        break;
    case GGFIT_VOCAB_SPECIAL:
        snprintf(out, cap, "its %s token is not the target's (add %d - %d, id %lld - %lld)",
                 c->eos ? "EOS" : "BOS", c->add_target, c->add_draft, (long long)c->id_target,
                 (long long)c->id_draft);
        break;
    case GGFIT_VOCAB_SIZE:
        snprintf(out, cap, "its vocabulary (%llu tokens) is %llu tokens from the target's "
                 "(%llu), more than 128", (unsigned long long)c->n_draft,
                 (unsigned long long)c->n_apart, (unsigned long long)c->n_target);
        break;
    case GGFIT_VOCAB_TOKEN:
        snprintf(out, cap, "its token %lld is not the target's", (long long)c->token);
        break;
    default:
        out[0] = '\0';
    }
}

static void notes_of(const ggfit_plan *pl, char *buf)
{
    size_t k = 0, cap = NOTES_CAP;
    buf[0] = '\0';
    if (pl->n_ignored) {
        k += (size_t)snprintf(buf + k, cap - k, "ignored (no effect on memory):");
        for (uint32_t i = 0; i < pl->n_ignored && k < cap; i++)
            k += (size_t)snprintf(buf + k, cap - k, " %s", pl->ignored[i]);
        if (k < cap)
            k += (size_t)snprintf(buf + k, cap - k, "\n");
    }
    if (pl->n_not_counted && k < cap) {
        k += (size_t)snprintf(buf + k, cap - k, "not counted yet (they add memory ggfit "
                                                "does not project):");
        for (uint32_t i = 0; i < pl->n_not_counted && k < cap; i++)
            k += (size_t)snprintf(buf + k, cap - k, " %s", pl->not_counted[i]);
        if (k < cap)
            k += (size_t)snprintf(buf + k, cap - k, "\n");
    }
    if (pl->ts_given && k < cap)
        snprintf(buf + k, cap - k, "-ts gives %u proportions for %u devices: llama.cpp "
                 "uses the first %u\n", pl->ts_given, pl->ts_used, pl->ts_used);
    if (pl->spec_rollback)
        note(buf, "--spec-type: DeepSeek V4's rollback snapshots (n_rs_seq %d) and its MTP "
                  "context's cache are not counted yet\n", pl->spec_n_rs_seq);
    if (pl->has_draft) {
        const ggfit_vocab_check *c = &pl->draft_vocab;
        char why[192];
        vocab_why(c, why, sizeof why);
        const char *who = pl->draft_mtp ? "--spec-type draft-mtp" : "-md";
        if (c->checked && c->aborts)
            note(buf, "-md: neither file has a tokenizer: llama-server aborts when "
                      "draft-simple compares their tokens after its fit (GGML_ASSERT in "
                      "llama_vocab::token_get_text); model files with one are compared\n");
        else if (c->checked && why[0])
            note(buf, "-md: %s: llama-server refuses the draft after its fit "
                      "(common_speculative_are_compatible) and serves without speculative "
                      "decoding; its bytes were counted in the fit all the same\n", why);
        else if (c->checked && c->unknown >= 0)
            note(buf, "-md: the vocabularies' %s is not in the files: that check of "
                      "llama-server's is not made here\n",
                 c->unknown ? "add_eos_token" : "add_bos_token");
        if (pl->draft_unused)
            note(buf, "-md without --spec-type draft-simple: llama-server measures and loads "
                      "the draft (counted here), then finds no type to run and frees it\n");
        if (pl->draft_mtp && pl->draft.compute_estimated)
            note(buf, "--spec-type draft-mtp: ggfit has no graph for %s's MTP head yet: the "
                      "MTP context's compute buffers are estimated\n", pl->draft_arch);
        if (pl->draft_rpc)
            note(buf, "%s: planned as on a GPU machine, the draft's bytes on each device "
                      "added to that device's fit target; a CPU build of llama-server with "
                      "RPC devices lists the CPU first and adds them one device on (the last "
                      "device's are lost)\n", who);
    }
    if (pl->has_mmproj) {
        const ggfit_mmproj_usage *u = &pl->mmproj_usage;
        for (size_t k2 = 0; k2 < u->n_encoders; k2++)
            if (u->enc[k2].compute_estimated)
                note(buf, "--mmproj: ggfit has no graph for the %s encoder yet: its compute "
                          "buffer is estimated from its dimensions (weights exact)\n",
                     u->enc[k2].projector);
        if (pl->mmproj_rpc)
            note(buf, "%s", "--mmproj: planned as on a GPU machine, the projector's bytes "
                            "added to its device's fit target; a CPU build of llama-server "
                            "with RPC devices lists the CPU first and adds them one device on "
                            "(its CPU bytes to the first device)\n");
    }
}

/* --fit-around's words: the flags it kept (those llama.cpp's fit stops
 * at, and -c), as given. */
static void around_kept(const ggfit_plan *pl, char *buf, size_t n)
{
    const ggfit_params *p = &pl->asked;
    size_t nd = pl->n_devices, k = 0;
    buf[0] = '\0';
#define PUT(...) do { if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__); } while (0)
    if (p->set_n_ctx)
        PUT(" -c %u", p->n_ctx);
    if (p->n_gpu_layers == GGFIT_NGL_ALL)
        PUT(" -ngl all");
    else if (p->n_gpu_layers != GGFIT_NGL_AUTO)
        PUT(" -ngl %d", p->n_gpu_layers);
    bool ts = false;
    for (size_t d = 0; nd > 1 && d < nd; d++)
        ts |= p->tensor_split[d] != 0.0f;
    for (size_t d = 0; ts && d < nd; d++)
        PUT("%s%g", d ? "," : " -ts ", p->tensor_split[d]);
    for (uint32_t i = 0; i < p->n_overrides; i++)
        PUT("%s%s=%s", i ? "," : " -ot ", p->overrides[i].pattern, p->overrides[i].buffer);
    if (p->cpu_moe)
        PUT(" -cmoe");
    else if (p->n_cpu_moe)
        PUT(" -ncmoe %u", p->n_cpu_moe);
#undef PUT
    if (buf[0] == ' ')
        memmove(buf, buf + 1, strlen(buf));
}

/* What the fit chose around them: the context, -ngl and -ts where unset,
 * and the overrides it added after the user's; "" unless it fits. */
static void around_fitted(const ggfit_plan *pl, char *buf, size_t n)
{
    const ggfit_params *asked = &pl->asked, *p = &pl->alternative.params;
    size_t nd = pl->n_devices, k = 0;
    buf[0] = '\0';
    if (!pl->has_alternative || pl->around != GGFIT_AROUND_FITS)
        return;
#define PUT(...) do { if (k < n) k += (size_t)snprintf(buf + k, n - k, __VA_ARGS__); } while (0)
    if (!asked->set_n_ctx)
        PUT(" -c %u", pl->alternative.projection.n_ctx);
    if (asked->n_gpu_layers == GGFIT_NGL_AUTO)
        PUT(" -ngl %d", p->n_gpu_layers);
    bool ts = false, ts_asked = false;
    for (size_t d = 0; nd > 1 && d < nd; d++) {
        ts |= p->tensor_split[d] != 0.0f;
        ts_asked |= asked->tensor_split[d] != 0.0f;
    }
    for (size_t d = 0; ts && !ts_asked && d < nd; d++)
        PUT("%s%g", d ? "," : " -ts ", p->tensor_split[d]);
    uint32_t added = p->n_overrides - asked->n_overrides, moe = 0;
    for (uint32_t i = asked->n_overrides; i < p->n_overrides; i++)
        moe += strstr(p->overrides[i].pattern, "exps") != NULL;
    if (added)
        PUT("%s-ot with %u tensor override%s%s (the experts of %u block%s, part of the FFN of "
            "%u) to system RAM or the next device", k ? ", " : " ", added,
            added > 1 ? "s" : "", asked->n_overrides ? " after yours" : "", moe,
            moe == 1 ? "" : "s", added - moe);
#undef PUT
    if (buf[0] == ' ')
        memmove(buf, buf + 1, strlen(buf));
    if (!buf[0])
        snprintf(buf, n, "nothing: the set flags fit as they are");
}

/* Why the fit around them is not the plan; "" when it is. */
static void around_reason(const ggfit_plan *pl, char *buf, size_t n)
{
    buf[0] = '\0';
    switch (pl->around) {
    case GGFIT_AROUND_FAILED:
        snprintf(buf, n, "%s", pl->alternative.reason);
        break;
    case GGFIT_AROUND_SHORT:
        snprintf(buf, n, "the flags fitted around the set ones keep every device's margin, "
                 "but not the whole machine: %.200s", summary(&pl->alternative_verdict).s);
        break;
    case GGFIT_AROUND_NOT_FITTED:
        snprintf(buf, n, "%s the flags as given: nothing is fitted, so nothing is fitted "
                 "around them", pl->print_memory ? "-fitp on projects" : "-fit off checks");
        break;
    default:
        break;
    }
}

/* The devices' assumed free memory, said once for the devices that share a
 * reason: "free assumed 24077 of 24576 MiB: REASON" of each device becomes
 * "CUDA0, CUDA1: free assumed 24077 of 24576, 11789 of 12288 MiB: REASON". */
static void assumed_text(ggfit_sb *sb, const ggfit_plan *pl)
{
    static const char head[] = "free assumed ";
    bool done[GGFIT_MAX_DEVICES] = {0};
    for (size_t d = 0; d < pl->n_devices && d < GGFIT_MAX_DEVICES; d++) {
        const char *a = pl->devices[d].assumed, *why = strstr(a, " MiB: ");
        if (done[d] || !a[0])
            continue;
        if (strncmp(a, head, sizeof head - 1) || !why) {
            ggfit__sb_printf(sb, "  %s: %s\n", pl->devices[d].name, a);
            continue;
        }
        ggfit_sb names = {0}, nums = {0};
        for (size_t e = d; e < pl->n_devices && e < GGFIT_MAX_DEVICES; e++) {
            const char *b = pl->devices[e].assumed, *wb = strstr(b, " MiB: ");
            if (done[e] || !wb || strncmp(b, head, sizeof head - 1) || strcmp(wb, why))
                continue;
            done[e] = true;
            ggfit__sb_printf(&names, "%s%s", e == d ? "" : ", ", pl->devices[e].name);
            ggfit__sb_printf(&nums, "%s%.*s", e == d ? "" : ", ",
                             (int)(wb - b - (sizeof head - 1)), b + sizeof head - 1);
        }
        char *n = ggfit__sb_take(&names), *m = ggfit__sb_take(&nums);
        if (n && m)
            ggfit__sb_printf(sb, "  %s: %s%s%s\n", n, head, m, why);
        else
            sb->oom = true;
        free(n);
        free(m);
    }
}

void ggfit__verdict_text(ggfit_sb *sb, const ggfit_verdict *v, const ggfit_plan *pl)
{
    ggfit__sb_printf(sb, "whole machine [MiB] (ggfit's verdict; llama.cpp's fit looks at the "
                         "GPUs' margins only)\n");
    /* free now: before loading (the breakdown's "left after" is after) */
    int w = (int)strlen("memory");
    for (uint32_t i = 0; i < v->n_pools; i++) {
        int n = (int)strlen(v->pools[i].name);
        w = n > w ? (n < 24 ? n : 24) : w;
    }
    ggfit__sb_printf(sb, "  %-*s %9s %9s %9s %11s  %s\n", w, "memory", "free now", "used",
                     "margin", "left after", "");
    for (uint32_t i = 0; i < v->n_pools; i++) {
        const ggfit_pool *p = &v->pools[i];
        char state[64];
        if (p->short_by)
            snprintf(state, sizeof state, "short by %.0f", ggfit__mib(p->short_by));
        else
            snprintf(state, sizeof state, "ok");
        if ((int)strlen(p->name) > w)
            ggfit__sb_printf(sb, "  %s\n", p->name);
        ggfit__sb_printf(sb, "  %-*s %9.0f %9.0f %9.0f %11.0f  %s\n", w,
                         (int)strlen(p->name) > w ? "" : p->name, ggfit__mib(p->free), ggfit__mib(p->used),
                         ggfit__mib(p->margin), (double)p->free_after / GGFIT_MiB, state);
    }
    for (uint32_t i = 0; i < v->n_pools; i++)
        if (v->pools[i].kind == GGFIT_POOL_HOST && v->pools[i].mapped)
            ggfit__sb_printf(sb, "  Host: %.0f MiB of what it uses are weights mapped from the "
                                 "file, which must stay in memory not to be read from disk\n",
                             ggfit__mib(v->pools[i].mapped));
    if (v->prompt_cache)
        ggfit__sb_printf(sb, "  Host: %.0f MiB of what it uses are llama-server's prompt cache "
                             "(--cache-ram; 0 turns it off), beyond llama.cpp's fit\n",
                         ggfit__mib(v->prompt_cache));
    assumed_text(sb, pl);
    if (pl->host.source[0])
        ggfit__sb_printf(sb, "  system memory: %s\n", pl->host.source);
    if (v->n_spans) {
        ggfit__sb_printf(sb, "  Metal maps %.0f MiB of the file for %.0f MiB of tensors (one "
                             "span per file, from its first to its last tensor there)\n",
                         ggfit__mib(v->metal_mapped), ggfit__mib(v->metal_tensors));
        for (uint32_t i = 0; i < v->n_fixes; i++)
            ggfit__sb_printf(sb, "    %s %s: Metal maps %.0f MiB, %s\n",
                             fix_flags[v->fixes[i].kind], fix_what[v->fixes[i].kind],
                             ggfit__mib(v->fixes[i].mapped),
                             ggfit_verdict_status_str(v->fixes[i].status));
    }
    ggfit__sb_printf(sb, "verdict: %s\n", summary(v).s);
}

static const char *where(const ggfit_plan *pl, int32_t d)
{
    return d >= 0 && (size_t)d < pl->n_devices ? pl->devices[d].name : "system RAM (CPU)";
}

/* Where llama.cpp's decision keeps less than a margin: "RPC0 98 MiB inside
 * its 1024 MiB margin, ...", into buf. */
static const char *inside_margins(const ggfit_plan *pl, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < pl->verdict.n_pools && k < n; i++) {
        const ggfit_pool *p = &pl->verdict.pools[i];
        /* with no GPU, system memory is the device the fit keeps a margin on */
        if ((p->kind == GGFIT_POOL_DEVICE || !pl->n_devices) && p->short_by)
            k += (size_t)snprintf(buf + k, n - k, "%s%s %.0f MiB inside its %.0f MiB margin",
                                  k ? ", " : "", p->name, ggfit__mib(p->short_by), ggfit__mib(p->margin));
    }
    return buf;
}

/* Whether the verdict fails only on devices that keep part of their
 * margin: the plan loads, with less than the margin free. */
static bool inside_margin_only(const ggfit_plan *pl)
{
    const ggfit_verdict *v = &pl->verdict;
    if (v->status != GGFIT_VERDICT_NO_FIT)
        return false;
    for (uint32_t i = 0; i < v->n_pools; i++)
        if (v->pools[i].short_by &&
            (v->pools[i].kind != GGFIT_POOL_DEVICE || v->pools[i].short_by >= v->pools[i].margin))
            return false;
    return true;
}

/* A block whose experts' tensors are in several places: those other than
 * the block's own, from the placement the printed flags come from. */
static void split_experts(ggfit_sb *sb, const ggfit_plan *pl, const ggfit_layer_range *r)
{
    const char *sep = ", part of the experts ";
    for (int32_t d = 0; d < (int32_t)pl->n_devices && d < GGFIT_MAX_DEVICES; d++)
        if (d != r->device && (r->experts_on >> d & 1)) {
            ggfit__sb_printf(sb, "%son %s", sep, pl->devices[d].name);
            sep = " and ";
        }
    if (r->device != -1 && (r->experts_on >> GGFIT_MAX_DEVICES & 1))
        ggfit__sb_printf(sb, "%sin system RAM", sep);
}

/* Where the layers went and the context, one line per decision. */
/* -fitc where it says more than its number: at or above the trained
 * context (the fit cannot reduce the context: llama.cpp logs "-> no
 * change" and offloads fewer layers), or below 512 tokens. */
static void fitc_text(ggfit_sb *sb, const ggfit_plan *pl)
{
    uint32_t min = pl->fit_options.n_ctx_min;
    if (pl->print_memory || pl->asked.set_n_ctx || min == 4096 || !pl->n_ctx_train)
        return;
    uint32_t n_ctx = pl->projection.n_ctx;
    if (min >= pl->n_ctx_train)
        ggfit__sb_printf(sb, "  -fitc %u is at least the trained context (%u): the fit does not "
                             "reduce the context (llama.cpp logs \"no change\"); where memory "
                             "is short, it keeps fewer layers on the GPUs\n",
                         min, pl->n_ctx_train);
    else if (min < 512 && n_ctx < 512)
        ggfit__sb_printf(sb, "  -fitc %u is below 512 tokens: the fit reduced the context to %u, "
                             "which leaves little room for a prompt (and llama.cpp's batches "
                             "shrink to it: -ub %u here)\n",
                         min, n_ctx, pl->projection.n_ubatch);
    else if (min < 512)
        ggfit__sb_printf(sb, "  -fitc %u (below 512 tokens) was not reached: the fit stopped at "
                             "%u\n", min, n_ctx);
}

static void placement_text(ggfit_sb *sb, const ggfit_plan *pl)
{
    const ggfit_verdict *v = &pl->verdict;
    const ggfit_projection *pr = &pl->projection;
    uint32_t asked = pl->asked.n_ctx;
    ggfit__sb_printf(sb, "placement:\n  context: %u tokens", pr->n_ctx);
    if (pr->n_seq > 1 && pl->asked.kv_unified)
        ggfit__sb_printf(sb, " shared by %u sequences (-np %u -kvu)", pr->n_seq, pr->n_seq);
    else if (pr->n_seq > 1)
        ggfit__sb_printf(sb, " over %u sequences, %u each", pr->n_seq, pr->n_ctx / pr->n_seq);
    if (!pl->print_memory && pl->fit.status == GGFIT_FIT_FITS && !pl->asked.set_n_ctx &&
        (asked ? asked : pl->n_ctx_train) != pr->n_ctx)
        ggfit__sb_printf(sb, ", reduced by the fit from %s", asked ? "the -c given" :
                                                             "the trained context");
    ggfit__sb_printf(sb, "\n");
    fitc_text(sb, pl);
    for (uint32_t i = 0; i < v->n_ranges; i++) {
        const ggfit_layer_range *r = &v->ranges[i];
        char name[48];
        if (r->output)
            snprintf(name, sizeof name, "output layer");
        else if (r->first == r->last)
            snprintf(name, sizeof name, "layer %u", r->first);
        else
            snprintf(name, sizeof name, "layers %u-%u", r->first, r->last);
        ggfit__sb_printf(sb, "  %s: %s", name, where(pl, r->device));
        if (r->experts == -2)
            split_experts(sb, pl, r);
        else if (r->experts == -1 && r->device != -1)
            ggfit__sb_printf(sb, ", experts in system RAM");
        else if (r->experts != r->device)
            ggfit__sb_printf(sb, ", experts on %s", where(pl, r->experts));
        ggfit__sb_printf(sb, "\n");
    }
}

/* What a failure of llama.cpp's fit means, and what to do. */
static void failure_text(ggfit_sb *sb, const ggfit_plan *pl)
{
    const ggfit_fit_result *r = &pl->fit;
    ggfit__sb_printf(sb, "llama.cpp: failed to fit params to free device memory: %s\n",
                     r->reason);
    if (strstr(r->reason, "already set by user")) {
        char where[320];
        ggfit__sb_printf(sb, "what it means: llama.cpp's fit only chooses what you left "
                             "unset; with -ngl, -ts, -ot, -cmoe or -ncmoe given it stops here "
                             "and llama-server loads the flags as given.\n");
        if (pl->verdict.status == GGFIT_VERDICT_FITS)
            ggfit__sb_printf(sb, "as given they fit, so the load succeeds; the flags are "
                                 "printed as they are\n");
        else if (pl->fit_around && pl->has_alternative)
            ggfit__sb_printf(sb, "as given they do not fit; --fit-around keeps them and fits "
                                 "the unset flags around them (below)\n");
        else if (inside_margin_only(pl))
            ggfit__sb_printf(sb, "as given they load, with less than the margin free (%s): "
                                 "the margin is what keeps a run from running out of memory "
                                 "later; drop the flag named above (or lower it) and let the "
                                 "fit choose\n", inside_margins(pl, where, sizeof where));
        else
            ggfit__sb_printf(sb, "as given they do not fit, so the load runs out of memory: "
                                 "drop the flag named above (or lower it) and let the fit "
                                 "choose\n");
    } else if (strstr(r->reason, "system memory")) {
        ggfit__sb_printf(sb, "what it means: even at the smallest context (-fitc %u) the model "
                             "does not fit in system memory\n", pl->fit_options.n_ctx_min);
    } else if (strstr(r->reason, "-fit off")) {
        ggfit__sb_printf(sb, "what it means: the flags as given leave a device short; "
                             "-fit on lets llama.cpp choose\n");
    }
}

/* llama.cpp's fit left the host short and no smaller context helped. */
/* Whose speed the plan carries: "plan" (the flags it prints, or with
 * -fitp on those it reports), "flags_as_given" (a failed fit's) or
 * "llama_cpp_fit" (a fit the whole machine does not hold). */
const ggfit_verdict *ggfit__plan_verdict(const ggfit_plan *pl)
{
    return pl->has_alternative ? &pl->alternative_verdict : &pl->verdict;
}

const char *ggfit__speed_whose(const ggfit_plan *pl)
{
    if (pl->print_memory || pl->has_alternative || pl->verdict.status == GGFIT_VERDICT_FITS)
        return "plan";
    return pl->fit.status == GGFIT_FIT_FAILED ? "flags_as_given" : "llama_cpp_fit";
}

static void speed_text(ggfit_sb *sb, const ggfit_plan *pl)
{
    const ggfit_plan_speed *s = &pl->speed;
    if (!s->ok)
        return;
    const char *whose = ggfit__speed_whose(pl);
    ggfit__sb_printf(sb, "predicted speed%s: pp%u %.0f t/s, tg%u %.1f t/s (llama-bench at depth "
                         "%u, an empty cache",
                     whose[0] == 'p'   ? ""
                     : whose[0] == 'f' ? " of the flags as given, were they to fit"
                                       : " of llama.cpp's fit, were it to fit",
                     s->n_prompt, s->pp_tps, s->n_gen, s->tg_tps, s->depth);
    /* system memory's figure, where part of the weights are read there */
    if (s->host_used)
        ggfit__sb_printf(sb, "; host memory %.1f GB/s, %s", s->host_bw_gbs, s->host_bw_from);
    ggfit__sb_printf(sb, "; ggfit bench shows each device's share)\n");
}

static json_t *speed_json(const ggfit_plan *pl)
{
    const ggfit_plan_speed *s = &pl->speed;
    if (!s->ok)
        return json_null();
    return json_pack("{s:f, s:f, s:i, s:i, s:i, s:I, s:s, s:f, s:s}", "pp_tps", s->pp_tps,
                     "tg_tps", s->tg_tps, "n_prompt", (int)s->n_prompt, "n_gen", (int)s->n_gen,
                     "depth", (int)s->depth, "host_bytes_per_token",
                     (json_int_t)s->host_bytes_per_token, "of", ggfit__speed_whose(pl),
                     "host_bw_gbs", s->host_bw_gbs, "host_bw_from", s->host_bw_from);
}

static bool host_refit_failed(const ggfit_plan *pl)
{
    return !pl->print_memory && !pl->has_alternative &&
           pl->verdict.status == GGFIT_VERDICT_HOST && pl->fit.status != GGFIT_FIT_FAILED &&
           !pl->fit.params.set_n_ctx && pl->n_changes == 0;
}

/* --for server --mmproj: the projector's rows, as llama-server measures it */
static void mmproj_text(ggfit_sb *sb, const ggfit_plan *pl)
{
    const ggfit_mmproj_usage *u = &pl->mmproj_usage;
    ggfit__sb_printf(sb, "multimodal projector %s (%s), measured as llama-server does "
                         "before its fit (mtmd_get_memory_usage: weights + the warmup "
                         "graph's compute buffer); its bytes on each device are added to "
                         "that device's fit target, and counted below:\n"
                         "  %-12s  %-20s %8s  %-10s %10s %9s\n", pl->mmproj,
                     pl->mmproj_auto ? "-hf's, loaded with the model" : "--mmproj", "mmproj [MiB]",
                     "encoder", "warmup", "flash attn", "weights", "compute");
    for (size_t k = 0; k < u->n_encoders; k++) {
        const ggfit_mmproj_encoder *e = &u->enc[k];
        const char *where = e->device >= 0 ? pl->devices[e->device].name : "CPU";
        char warm[32];
        snprintf(warm, sizeof warm, e->audio ? "%u fr" : "%u px", e->warmup);
        ggfit__sb_printf(sb, "  %-12.12s  %-20.20s %8s  %-10s %10.0f %9.0f%s\n", where,
                         e->projector, warm, e->flash_attn ? "on" : "off",
                         e->weights / GGFIT_MiB, e->compute / GGFIT_MiB,
                         e->compute_estimated ? " (estimated)" : "");
        if (e->device >= 0 && e->cpu_compute)
            ggfit__sb_printf(sb, "  %-12s  %-20s %8s  %-10s %10.0f %9.0f (its inputs; in no "
                                 "fit target)\n", "CPU", "", "", "", 0.0,
                             e->cpu_compute / GGFIT_MiB);
    }
}

void ggfit__changes_text(ggfit_sb *sb, const ggfit_plan *pl)
{
    if (pl->n_changes) {
        ggfit__sb_printf(sb, "nearest changes that fit (each projected):");
        for (size_t i = 0; i < pl->n_changes; i++)
            ggfit__sb_printf(sb, "%s %s%s%s (%.0f MiB to spare)", i ? "; or" : "",
                             pl->changes[i].flags, pl->changes[i].drop[0] ? " in place of " : "",
                             pl->changes[i].drop, ggfit__mib(pl->changes[i].worst_left));
        ggfit__sb_printf(sb, "\n");
    } else if (pl->verdict.status != GGFIT_VERDICT_FITS && !pl->has_alternative &&
               !host_refit_failed(pl)) {
        ggfit__sb_printf(sb, "no single change of -ngl, -c, the cache type or -ncmoe fits: "
                             "more memory or a smaller quant is needed\n");
    }
}

char *ggfit_plan_text(const ggfit_plan *pl, bool with_log)
{
    ggfit_sb sb = {0}, log = {0};   /* llama.cpp's log is as llama.cpp writes it */
    const ggfit_fit_result *r = &pl->fit;
    if (with_log && !pl->print_memory && r->log)
        ggfit__sb_printf(&log, "%s", r->log);
    if (with_log && pl->fit_around && pl->has_alternative && pl->alternative.log)
        ggfit__sb_printf(&log, "--fit-around: the fit around the set flags:\n%s",
                         pl->alternative.log);
    char *table = ggfit_projection_text(&pl->projection, pl->devices);
    if (!table)
        return free(ggfit__sb_take(&log)), NULL;   /* and the log written so far */
    char version[256];
    ggfit__sb_printf(&sb, "for llama.cpp %s\n",
                     ggfit_llama_version_str(&pl->llama, version, sizeof version));
    ggfit__sb_printf(&sb, "%s", table);
    ggfit_free(table);
    /* --for server -md: the draft, as llama-server measures it */
    if (pl->has_draft) {
        char *dt = ggfit_projection_text(&pl->draft, pl->devices);
        if (!dt) {
            free(ggfit__sb_take(&log));
            free(ggfit__sb_take(&sb));
            return NULL;
        }
        /* b10309: measured once before the fit, its bytes added to the
         * margins; from b10584 (2fb989b9e) fitted as an extra model,
         * measured again at each context the fit tries */
        bool extra = ggfit__llama_has(pl->llama.rules, LLAMA_CHANGE_FIT_N_STREAMS);
        const char *how = extra ? "fitted with the target as llama.cpp's fit does (an extra "
                                  "model, measured again at each context it tries), shown at "
                                  "the fitted context"
                                : "measured as llama-server does before its fit (the target's "
                                  "-c), its bytes on each device added to that device's fit "
                                  "target";
        if (pl->draft_mtp)   /* --spec-type draft-mtp: a context on the target */
            ggfit__sb_printf(&sb, "MTP context (--spec-type draft-mtp) on the target's "
                                  "weights (-ctkd/-ctvd), %s; counted below (its model column "
                                  "is the target's weights, counted once):\n%s", how, dt);
        else
            ggfit__sb_printf(&sb, "draft model %s (-md; -ngld/-ctkd/-ctvd/-otd), %s; counted "
                                  "below:\n%s", pl->draft_model, how, dt);
        ggfit_free(dt);
    }
    if (pl->has_mmproj)
        mmproj_text(&sb, pl);
    placement_text(&sb, pl);
    speed_text(&sb, pl);
    ggfit__verdict_text(&sb, &pl->verdict, pl);
    char notes[NOTES_CAP];
    notes_of(pl, notes);
    if (pl->n_from_env) {   /* the text's alone: the JSON is as it was */
        ggfit__sb_printf(&sb, "note: from the environment:");
        for (uint32_t i = 0; i < pl->n_from_env; i++)
            ggfit__sb_printf(&sb, "%s %s", i ? "," : "", pl->from_env[i]);
        ggfit__sb_printf(&sb, "\n");
    }
    if (pl->unsloth_type)
        ggfit__sb_printf(&sb, "note: weights of type %s (Unsloth's llama.cpp, "
                              "unslothai/llama.cpp #91): only Unsloth's prebuilt llama.cpp "
                              "(from 2026-08-11) loads this file; upstream llama.cpp (b%u "
                              "here) refuses it (\"invalid ggml type %u\")\n",
                         ggfit_type_name(pl->unsloth_type), pl->llama.build, pl->unsloth_type);
    if (pl->llama_config[0])   /* the text's alone, as the environment's */
        ggfit__sb_printf(&sb, "note: llama.cpp's config files, read before the environment and "
                              "the flags: %s\n", pl->llama_config);
    for (const char *p = notes; *p;) {
        size_t n = strcspn(p, "\n");
        ggfit__sb_printf(&sb, "note: %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
    /* --for server: the prompt cache alone can make up the host's lack */
    for (uint32_t i = 0; i < pl->verdict.n_pools && pl->verdict.prompt_cache; i++) {
        const ggfit_pool *h = &pl->verdict.pools[i];
        if (h->kind != GGFIT_POOL_HOST || !h->short_by)
            continue;
        uint64_t keep = h->short_by < pl->verdict.prompt_cache
                            ? (pl->verdict.prompt_cache - h->short_by) >> 20 : 0;
        ggfit__sb_printf(&sb, "note: %.0f MiB of the host's use are llama-server's prompt cache: "
                              "--cache-ram %llu %s\n", ggfit__mib(pl->verdict.prompt_cache),
                         (unsigned long long)keep,
                         keep ? "leaves system memory enough" : "turns it off, and that is "
                                "not enough alone");
    }
    if (!pl->print_memory && r->status == GGFIT_FIT_FAILED)
        failure_text(&sb, pl);
    ggfit__changes_text(&sb, pl);
    char kept[512], fitted[256], why[320];
    around_kept(pl, kept, sizeof kept);
    around_fitted(pl, fitted, sizeof fitted);
    around_reason(pl, why, sizeof why);
    if (pl->has_alternative && pl->fit_around) {
        const ggfit_verdict *av = &pl->alternative_verdict;
        ggfit__sb_printf(&sb, "--fit-around: kept as given: %s; fitted around them: %s; the "
                              "printed flags are that plan (%s)\n", kept, fitted, summary(av).s);
        ggfit__sb_printf(&sb, "  with it [MiB]:");
        for (uint32_t i = 0; i < av->n_pools; i++)
            ggfit__sb_printf(&sb, "%s %s %.0f used, %.0f left", i ? ";" : "",
                             av->pools[i].name, ggfit__mib(av->pools[i].used),
                             (double)av->pools[i].free_after / GGFIT_MiB);
        ggfit__sb_printf(&sb, "\n");
    } else if (pl->has_alternative) {
        char where_short[320];
        char *a = ggfit_fit_args(r, pl->devices, pl->n_devices);
        char *b = ggfit_fit_args(&pl->alternative, pl->devices, pl->n_devices);
        if (a && b && pl->verdict.status == GGFIT_VERDICT_HOST)
            ggfit__sb_printf(&sb, "llama.cpp's fit (%s) leaves the host short; the largest "
                                  "context the whole machine holds: %s (%s)\n", a, b,
                             summary(&pl->alternative_verdict).s);
        else if (a && b)
            ggfit__sb_printf(&sb, "llama.cpp's fit (%s) runs, but its estimate lands %s; the "
                                  "nearest plan that keeps every margin: %s (%s)\n", a,
                             inside_margins(pl, where_short, sizeof where_short), b,
                             summary(&pl->alternative_verdict).s);
        ggfit_free(a);
        ggfit_free(b);
    } else if (pl->fit_around && why[0] && (pl->print_memory || pl->fit_options.check_only)) {
        ggfit__sb_printf(&sb, "--fit-around: %s\n", why);
    } else if (pl->fit_around && why[0]) {
        ggfit__sb_printf(&sb, "--fit-around: kept as given: %s; nothing fits around them: %s\n",
                         kept, why);
    } else if (host_refit_failed(pl)) {
        ggfit__sb_printf(&sb, "no context down to %u leaves enough system memory: add memory, "
                              "or take a smaller quant\n", pl->fit_options.n_ctx_min);
    }
    char *body = ggfit__text_take(&sb);
    if (!log.buf || !body)
        return free(ggfit__sb_take(&log)), body;
    ggfit__sb_printf(&log, "%s", body);
    ggfit_free(body);
    return ggfit__sb_take(&log);
}

/* ---- JSON ----------------------------------------------------------------- */

json_t *ggfit__verdict_json(const ggfit_verdict *v)
{
    json_t *pools = json_array(), *spans = json_array(), *fixes = json_array();
    json_t *o = NULL;
    if (!pools || !spans || !fixes)
        goto fail;
    for (uint32_t i = 0; i < v->n_pools; i++) {
        const ggfit_pool *p = &v->pools[i];
        json_t *j = json_pack("{s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}",
                              "name", p->name, "kind", pool_kinds[p->kind],
                              "device", p->device >= 0 ? json_integer(p->device) : json_null(),
                              "total", (json_int_t)p->total, "free", (json_int_t)p->free,
                              "used", (json_int_t)p->used, "mapped", (json_int_t)p->mapped,
                              "margin", (json_int_t)p->margin,
                              "free_after", (json_int_t)p->free_after,
                              "short_by", (json_int_t)p->short_by, "ok", p->short_by == 0);
        if (!j || json_array_append_new(pools, j))
            goto fail;
    }
    for (uint32_t i = 0; i < v->n_spans; i++) {
        const ggfit_span *s = &v->spans[i];
        json_t *j = json_pack("{s:I, s:I, s:I, s:I, s:I}", "device", (json_int_t)s->device,
                              "shard", (json_int_t)s->shard, "first", (json_int_t)s->first,
                              "last", (json_int_t)s->last, "tensors", (json_int_t)s->tensors);
        if (!j || json_array_append_new(spans, j))
            goto fail;
    }
    for (uint32_t i = 0; i < v->n_fixes; i++) {
        const ggfit_span_fix *f = &v->fixes[i];
        json_t *j = json_pack("{s:s, s:s, s:I, s:s}", "flags", fix_flags[f->kind], "what",
                              fix_what[f->kind],
                              "mapped", (json_int_t)f->mapped, "status",
                              verdict_ids[f->status]);
        if (!j || json_array_append_new(fixes, j))
            goto fail;
    }
    o = json_pack("{s:s, s:s, s:o, s:o, s:I, s:I, s:o, s:o}", "status",
                  verdict_ids[v->status], "summary", summary(v).s, "short",
                  v->first_short >= 0 ? json_string(v->pools[v->first_short].name) : json_null(),
                  "pools", pools, "metal_mapped", (json_int_t)v->metal_mapped, "metal_tensors",
                  (json_int_t)v->metal_tensors, "metal_spans", spans, "metal_fixes", fixes);
    /* --for server: llama-server's prompt cache, in the Host pool's used */
    if (o && v->prompt_cache &&
        json_object_set_new(o, "prompt_cache", json_integer((json_int_t)v->prompt_cache))) {
        json_decref(o);
        return NULL;
    }
    return o;
fail:
    json_decref(pools);
    json_decref(spans);
    json_decref(fixes);
    return NULL;
}

static json_t *changes_json(const ggfit_plan *pl)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < pl->n_changes; i++) {
        const ggfit_change *c = &pl->changes[i];
        if (json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:I}", "change", c->flags,
                                               "in_place_of", c->drop,
                                               "flags_changed", (json_int_t)c->n_changes,
                                               "spare", (json_int_t)c->worst_left))) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *ggfit__json_lines(const char *text)
{
    json_t *a = json_array();
    for (const char *p = text; a && *p;) {
        size_t n = strcspn(p, "\n");
        if (json_array_append_new(a, json_stringn(p, n))) {
            json_decref(a);
            return NULL;
        }
        p += n + (p[n] == '\n');
    }
    return a;
}

/* The plan's words for its program, as an array (empty when it does not
 * fit): what an exec() takes, with no quoting to undo. */
static json_t *argv_json(const ggfit_plan *pl)
{
    json_t *a = json_array();
    if (!a || (!pl->has_alternative &&
               (pl->print_memory || pl->verdict.status != GGFIT_VERDICT_FITS)))
        return a;
    char **w = ggfit_plan_argv(pl, pl->program, NULL);
    for (size_t i = 0; w && w[i]; i++)
        if (json_array_append_new(a, json_string(w[i]))) {
            json_decref(a);
            a = NULL;
            break;
        }
    if (!w) {
        json_decref(a);
        a = NULL;
    }
    ggfit_argv_free(w);
    return a;
}

static json_t *mmproj_json(const ggfit_plan *pl)
{
    const ggfit_mmproj_usage *u = &pl->mmproj_usage;
    json_t *encs = json_array(), *devs = json_array();
    for (size_t k = 0; encs && k < u->n_encoders; k++) {
        const ggfit_mmproj_encoder *e = &u->enc[k];
        json_array_append_new(encs, json_pack(
            "{s:s, s:b, s:i, s:b, s:b, s:o, s:I, s:I, s:I}", "projector", e->projector,
            "audio", e->audio, "warmup", (int)e->warmup, "flash_attn", e->flash_attn,
            "compute_estimated", e->compute_estimated, "device",
            e->device >= 0 ? json_string(pl->devices[e->device].name) : json_null(),
            "weights", (json_int_t)e->weights, "compute", (json_int_t)e->compute,
            "cpu_compute", (json_int_t)e->cpu_compute));
    }
    for (size_t d = 0; devs && d < pl->n_devices; d++)
        json_array_append_new(devs, json_pack("{s:s, s:I}", "name", pl->devices[d].name,
                                              "bytes", (json_int_t)u->device[d]));
    return json_pack("{s:s, s:o, s:o, s:I}", "file", pl->mmproj, "encoders", encs ? encs
                     : json_null(), "devices", devs ? devs : json_null(), "cpu",
                     (json_int_t)u->cpu);
}

static const char *const match_names[] = { "exact", "between", "newer", "older" };

json_t *ggfit__llama_json(const ggfit_llama_version *v)
{
    char text[256];
    return json_pack("{s:I, s:s, s:s?, s:s?, s:I, s:s, s:b, s:s}", "build", (json_int_t)v->build,
                     "commit", v->commit, "date", v->date[0] ? v->date : NULL, "semver",
                     v->semver[0] ? v->semver : NULL, "rules", (json_int_t)v->rules, "match",
                     match_names[v->match], "exact", v->match == GGFIT_LLAMA_EXACT, "text",
                     ggfit_llama_version_str(v, text, sizeof text));
}

json_t *ggfit__plan_tree(const ggfit_plan *pl)
{
    json_t *root = pl->print_memory ? ggfit__projection_tree(&pl->projection, pl->devices)
                                    : ggfit__fit_tree(&pl->fit, pl->devices, pl->n_devices);
    json_t *out = NULL;
    char *args = ggfit_plan_args(pl);
    if (!root || !args)
        goto done;
    json_t *devs = json_object_get(root, "devices");
    for (size_t i = 0; devs && i < json_array_size(devs); i++) {
        json_t *d = json_array_get(devs, i);
        const ggfit_pool *p = i < pl->verdict.n_pools ? &pl->verdict.pools[i] : NULL;
        const ggfit_device *dev = p && p->device >= 0 ? &pl->devices[p->device] : NULL;
        if (p && json_object_set_new(d, "free_after", json_integer(p->free_after)))
            goto done;
        if (dev && dev->assumed[0] &&
            json_object_set_new(d, "assumed", json_string(dev->assumed)))
            goto done;
    }
    char notes[NOTES_CAP];
    notes_of(pl, notes);
    json_t *alt = json_null();
    if (pl->has_alternative) {
        char *a = ggfit_fit_args(&pl->alternative, pl->devices, pl->n_devices);
        alt = a ? json_pack("{s:s, s:I, s:I, s:o}", "args", a, "n_ctx",
                            (json_int_t)pl->alternative.projection.n_ctx, "n_gpu_layers",
                            (json_int_t)pl->alternative.params.n_gpu_layers, "verdict",
                            ggfit__verdict_json(&pl->alternative_verdict))
                : NULL;
        ggfit_free(a);
    }
    if (json_object_set_new(root, "llama", ggfit__llama_json(&pl->llama)) ||
        json_object_set_new(root, "system_memory",
                            json_pack("{s:I, s:I, s:s}", "total", (json_int_t)pl->host.total,
                                      "free", (json_int_t)pl->host.free, "source",
                                      pl->host.source)) ||
        json_object_set_new(root, "verdict", ggfit__verdict_json(&pl->verdict)) ||
        json_object_set_new(root, "alternative", alt) ||
        json_object_set_new(root, "plan_args", json_string(args)) ||
        json_object_set_new(root, "argv", argv_json(pl)) ||
        json_object_set_new(root, "notes", ggfit__json_lines(notes)) ||
        json_object_set_new(root, "changes", changes_json(pl)) ||
        json_object_set_new(root, "speed", speed_json(pl)) ||
        json_object_set_new(root, "exit_status", json_integer(ggfit_plan_exit_status(pl))))
        goto done;
    /* --for server -md: the draft's projection (devices[], host, in bytes) */
    if (pl->has_draft) {
        json_t *dp = ggfit__projection_tree(&pl->draft, pl->devices);
        json_t *dr = !dp ? NULL
                     : pl->draft_mtp ? json_pack("{s:b, s:o}", "mtp", 1, "projection", dp)
                                     : json_pack("{s:s, s:o}", "model", pl->draft_model,
                                                 "projection", dp);
        if (!dr || json_object_set_new(root, "draft", dr))
            goto done;
    }
    /* --for server --mmproj: the projector's bytes per encoder and device */
    if (pl->has_mmproj && json_object_set_new(root, "mmproj", mmproj_json(pl)))
        goto done;
    /* only with --fit-around, so that other plans' JSON is as it was */
    if (pl->fit_around) {
        char kept[512], fitted[256], why[320];
        around_kept(pl, kept, sizeof kept);
        around_fitted(pl, fitted, sizeof fitted);
        around_reason(pl, why, sizeof why);
        if (json_object_set_new(root, "fit_around",
                                json_pack("{s:s, s:b, s:s, s:s}", "kept", kept, "fits",
                                          pl->has_alternative, "fitted", fitted, "reason",
                                          why)))
            goto done;
    }
    out = root;
    root = NULL;
done:
    json_decref(root);
    ggfit_free(args);
    return out;
}

char *ggfit_plan_json(const ggfit_plan *pl)
{
    return ggfit__json_doc(ggfit__plan_tree(pl), "plan", GGFIT__JSON_FLAGS);
}
