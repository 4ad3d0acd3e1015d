/*
 * inspect.c - two renderers of a model description: a readable
 * report with a per-layer table, and JSON with the same data in bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

/* "63,374,323,968" into buf. */
static const char *commas(uint64_t v, char buf[32])
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v), k = 0;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = tmp[i];
    }
    buf[k] = '\0';
    return buf;
}

/* Bytes of the experts of each layer that has them: min and max. */
static void expert_range(const ggfit_model *m, uint64_t *lo, uint64_t *hi,
                         uint32_t *n_layers)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    *lo = UINT64_MAX;
    *hi = 0;
    *n_layers = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        uint64_t b = ggfit_model_layer(m, il)->role_bytes[GGFIT_ROLE_EXPERTS];
        if (!b)
            continue;
        (*n_layers)++;
        if (b < *lo)
            *lo = b;
        if (b > *hi)
            *hi = b;
    }
    if (!*n_layers)
        *lo = 0;
}

static void text_hparams(ggfit_sb *sb, const ggfit_hparams *hp)
{
    char a[32], b[32], c[32];
    ggfit__sb_printf(sb, "  layers     %u blocks%s + output layer; context %s, embedding %s, vocab %s\n",
                     hp->n_layer, hp->n_nextn ? " (NextN/MTP included)" : "",
                     commas(hp->n_ctx_train, a), commas(hp->n_embd, b), commas(hp->n_vocab, c));
    if (hp->n_nextn)
        ggfit__sb_printf(sb, "  nextn      last %u block(s) predict extra tokens (NextN/MTP)\n",
                         hp->n_nextn);
    if (hp->n_head_max)
        ggfit__sb_printf(sb, "  attention  %u heads, %u kv heads (max), head size k %u / v %u\n",
                         hp->n_head_max, hp->n_head_kv_max, hp->n_embd_head_k,
                         hp->n_embd_head_v);
    if (hp->n_ff_max)
        ggfit__sb_printf(sb, "  ffn        %s (max)\n", commas(hp->n_ff_max, a));
    if (hp->n_expert)
        ggfit__sb_printf(sb, "  experts    %u, %u used per token, %u shared; expert ffn %u\n",
                         hp->n_expert, hp->n_expert_used, hp->n_expert_shared, hp->n_ff_exp);
    if (hp->n_layer_dense_lead)
        ggfit__sb_printf(sb, "  dense lead %u block(s) before the MoE blocks\n",
                         hp->n_layer_dense_lead);
    if (hp->n_swa) {
        ggfit__sb_printf(sb, "  sliding    window %u", hp->n_swa);
        if (hp->has_swa_layers)
            ggfit__sb_printf(sb, ", layers marked per layer");
        else if (hp->swa_pattern)
            ggfit__sb_printf(sb, ", pattern every %u layers", hp->swa_pattern);
        ggfit__sb_printf(sb, "\n");
    }
    if (hp->n_lora_kv || hp->n_embd_head_k_mla)
        ggfit__sb_printf(sb, "  MLA        kv rank %u, q rank %u, key %u / value %u per head\n",
                         hp->n_lora_kv, hp->n_lora_q, hp->n_embd_head_k_mla,
                         hp->n_embd_head_v_mla);
    if (hp->ssm_d_inner || hp->ssm_d_state)
        ggfit__sb_printf(sb, "  SSM        conv %u, inner %u, state %u, dt rank %u, groups %u\n",
                         hp->ssm_d_conv, hp->ssm_d_inner, hp->ssm_d_state, hp->ssm_dt_rank,
                         hp->ssm_n_group);
    if (hp->full_attn_interval)
        ggfit__sb_printf(sb, "  hybrid     full attention every %u layers\n",
                         hp->full_attn_interval);
    if (hp->shortconv_l_cache)
        ggfit__sb_printf(sb, "  shortconv  cache %u\n", hp->shortconv_l_cache);
}

char *ggfit_inspect_text(const ggfit_model *m)
{
    ggfit_sb sb = {0};
    const ggfit_gguf *g = ggfit_model_gguf(m);
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    char a[32], b[32];
    uint64_t total = ggfit_gguf_tensor_bytes(g);

    ggfit__sb_printf(&sb, "%s\n", ggfit_gguf_shard_path(g, 0));
    ggfit__sb_printf(&sb, "  model      %s%s%s%s, GGUF v%u, %u file%s\n", hp->arch,
                     hp->name[0] ? " \"" : "", hp->name, hp->name[0] ? "\"" : "",
                     ggfit_gguf_version(g), ggfit_gguf_n_shards(g),
                     ggfit_gguf_n_shards(g) == 1 ? "" : "s");
    ggfit__sb_printf(&sb, "  tensors    %llu, %s B of data (%.2f GiB); header %s B, alignment %u\n",
                     (unsigned long long)ggfit_gguf_n_tensors(g), commas(total, a),
                     (double)total / (GGFIT_MiB * 1024), commas(ggfit_gguf_data_offset(g, 0), b),
                     ggfit_gguf_alignment(g));
    for (uint64_t i = 0; i < ggfit_model_n_tensors(m); i++) {
        uint32_t t = ggfit_model_tensor(m, i)->info->type;
        if (ggfit_type_unsloth(t)) {   /* the first one says it */
            ggfit__sb_printf(&sb, "  loads in   Unsloth's prebuilt llama.cpp only (from "
                                  "2026-08-11): %s weights (unslothai/llama.cpp #91); upstream "
                                  "llama.cpp refuses the file (invalid ggml type %u)\n",
                             ggfit_type_name(t), t);
            break;
        }
    }
    text_hparams(&sb, hp);

    uint64_t exps = ggfit_model_role_bytes(m, GGFIT_ROLE_EXPERTS);
    if (exps) {
        uint64_t lo, hi;
        uint32_t n;
        expert_range(m, &lo, &hi, &n);
        ggfit__sb_printf(&sb, "  experts    %s B in %u layers", commas(exps, a), n);
        if (lo == hi)
            ggfit__sb_printf(&sb, " (%s B per layer)", commas(lo, a));
        else
            ggfit__sb_printf(&sb, " (%.2f to %.2f MiB per layer)", ggfit__mib(lo), ggfit__mib(hi));
        ggfit__sb_printf(&sb, "; the rest %s B\n", commas(total - exps, b));
    }

    /* Per-layer table: only the roles some block has. */
    bool used[GGFIT_ROLE_COUNT] = {0};
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(m, il);
        for (int r = 0; r < GGFIT_ROLE_COUNT; r++)
            used[r] |= li->role_bytes[r] != 0;
        if (li->n_bytes < lo)
            lo = li->n_bytes;
        if (li->n_bytes > hi)
            hi = li->n_bytes;
    }
    if (hp->n_layer)
        ggfit__sb_printf(&sb, "  blocks     %.2f to %.2f MiB each\n", ggfit__mib(lo), ggfit__mib(hi));
    ggfit__sb_printf(&sb, "  offload    %.2f MiB for all blocks and the output layer "
                     "(the input layer, %.2f MiB, stays in system RAM)\n",
                     ggfit__mib(total - ggfit_model_input_bytes(m)), ggfit__mib(ggfit_model_input_bytes(m)));
    /* The roles' columns that fit 80 columns beside the rest, the most telling
     * first; those left out are named under the table (--wide keeps them). */
    static const int order[] = { GGFIT_ROLE_ATTENTION, GGFIT_ROLE_EXPERTS, GGFIT_ROLE_FFN,
                                 GGFIT_ROLE_SHARED_EXPERTS, GGFIT_ROLE_RECURRENT,
                                 GGFIT_ROLE_NEXTN, GGFIT_ROLE_ROUTER, GGFIT_ROLE_NORM,
                                 GGFIT_ROLE_OTHER, GGFIT_ROLE_TOKEN_EMBD, GGFIT_ROLE_OUTPUT,
                                 GGFIT_ROLE_OUTPUT_NORM };
    _Static_assert(sizeof order / sizeof order[0] == GGFIT_ROLE_COUNT, "a role in order[]");
    bool shown[GGFIT_ROLE_COUNT] = {0}, left_out = false;
    int cw[GGFIT_ROLE_COUNT], room = (int)ggfit__text_cols();
    room = room ? room - 40 : 1 << 20;   /* layer, MiB, heads/kv, ffn, swa or nextn */
    for (int i = 0; i < GGFIT_ROLE_COUNT; i++) {
        int r = order[i], n = (int)strlen(ggfit_role_name(r));
        cw[r] = (n > 7 ? n : 7) + 1;
        if (used[r] && cw[r] <= room) {
            shown[r] = true;
            room -= cw[r];
        } else if (used[r]) {
            left_out = true;
            room = 0;   /* the columns after one left out are left out too */
        }
    }
    ggfit__sb_printf(&sb, "\n  %-5s %8s", "layer", "MiB");
    for (int r = 0; r < GGFIT_ROLE_COUNT; r++)
        if (shown[r])
            ggfit__sb_printf(&sb, " %*s", cw[r] - 1, ggfit_role_name(r));
    ggfit__sb_printf(&sb, "  heads/kv   n_ff\n");
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(m, il);
        ggfit__sb_printf(&sb, "  %-5u %8.2f", il, ggfit__mib(li->n_bytes));
        for (int r = 0; r < GGFIT_ROLE_COUNT; r++)
            if (shown[r])
                ggfit__sb_printf(&sb, " %*.2f", cw[r] - 1, ggfit__mib(li->role_bytes[r]));
        ggfit__sb_printf(&sb, "  %3u/%-4u %6u%s\n", li->n_head, li->n_head_kv, li->n_ff,
                         li->nextn ? "  nextn" : li->swa ? "  swa" : "");
    }
    if (left_out) {
        ggfit__sb_printf(&sb, "  (left out to fit 80 columns:");
        for (int r = 0, k = 0; r < GGFIT_ROLE_COUNT; r++)
            if (used[r] && !shown[r])
                ggfit__sb_printf(&sb, "%s %s", k++ ? "," : "", ggfit_role_name(r));
        ggfit__sb_printf(&sb, "; --wide shows them)\n");
    }
    ggfit__sb_printf(&sb, "  %-6s %7.2f  (output, output_norm: on the last GPU when offloaded)\n",
                     "output", ggfit__mib(ggfit_model_output_bytes(m)));
    ggfit__sb_printf(&sb, "  %-6s %7.2f  (token_embd and other inputs: always in system RAM)\n",
                     "input", ggfit__mib(ggfit_model_input_bytes(m)));
    ggfit__sb_printf(&sb, "\n  by role (MiB):");
    for (int r = 0; r < GGFIT_ROLE_COUNT; r++) {
        uint64_t rb = ggfit_model_role_bytes(m, (ggfit_role)r);
        if (rb)
            ggfit__sb_printf(&sb, " %s %.2f;", ggfit_role_name(r), ggfit__mib(rb));
    }
    ggfit__sb_printf(&sb, "\n");
    return ggfit__text_take(&sb);
}

/* ---- JSON ------------------------------------------------------------------ */

/* A JSON string of s. GGUF strings need not be UTF-8 and JSON strings
 * must be: bytes that do not form valid UTF-8 become '?'. */
static json_t *text(const char *s)
{
    json_t *j = json_string(s);
    if (j || !s)
        return j;
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (!c)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        c[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
    j = json_string(c);
    free(c);
    return j;
}

static json_t *role_object(const uint64_t bytes[GGFIT_ROLE_COUNT])
{
    json_t *o = json_object();
    for (int r = 0; o && r < GGFIT_ROLE_COUNT; r++)
        if (bytes[r] && json_object_set_new(o, ggfit_role_name(r),
                                            json_integer((json_int_t)bytes[r])) != 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static json_t *hparams_json(const ggfit_hparams *hp)
{
    return json_pack("{s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
                     " s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
                     " s:I, s:I, s:I, s:I, s:I, s:I}",
                     "arch", text(hp->arch), "name", text(hp->name),
                     "n_layer", (json_int_t)hp->n_layer,
                     "n_nextn", (json_int_t)hp->n_nextn,
                     "n_ctx_train", (json_int_t)hp->n_ctx_train,
                     "n_embd", (json_int_t)hp->n_embd,
                     "n_vocab", (json_int_t)hp->n_vocab,
                     "n_head", (json_int_t)hp->n_head_max,
                     "n_head_kv", (json_int_t)hp->n_head_kv_max,
                     "n_ff", (json_int_t)hp->n_ff_max,
                     "n_embd_head_k", (json_int_t)hp->n_embd_head_k,
                     "n_embd_head_v", (json_int_t)hp->n_embd_head_v,
                     "n_embd_head_k_swa", (json_int_t)hp->n_embd_head_k_swa,
                     "n_embd_head_v_swa", (json_int_t)hp->n_embd_head_v_swa,
                     "n_rot", (json_int_t)hp->n_rot,
                     "n_expert", (json_int_t)hp->n_expert,
                     "n_expert_used", (json_int_t)hp->n_expert_used,
                     "n_expert_shared", (json_int_t)hp->n_expert_shared,
                     "n_ff_exp", (json_int_t)hp->n_ff_exp,
                     "n_ff_shexp", (json_int_t)hp->n_ff_shexp,
                     "n_layer_dense_lead", (json_int_t)hp->n_layer_dense_lead,
                     "n_swa", (json_int_t)hp->n_swa,
                     "swa_pattern", (json_int_t)hp->swa_pattern,
                     "n_lora_q", (json_int_t)hp->n_lora_q,
                     "n_lora_kv", (json_int_t)hp->n_lora_kv,
                     "n_embd_head_k_mla", (json_int_t)hp->n_embd_head_k_mla,
                     "n_embd_head_v_mla", (json_int_t)hp->n_embd_head_v_mla,
                     "ssm_d_conv", (json_int_t)hp->ssm_d_conv,
                     "ssm_d_inner", (json_int_t)hp->ssm_d_inner,
                     "ssm_d_state", (json_int_t)hp->ssm_d_state,
                     "ssm_dt_rank", (json_int_t)hp->ssm_dt_rank,
                     "ssm_n_group", (json_int_t)hp->ssm_n_group,
                     "full_attn_interval", (json_int_t)hp->full_attn_interval);
}

static json_t *tensor_json(const ggfit_tensor *t)
{
    const ggfit_tensor_info *ti = t->info;
    json_t *ne = json_array();
    for (uint32_t d = 0; ne && d < ti->n_dims; d++)
        if (json_array_append_new(ne, json_integer(ti->ne[d]))) {
            json_decref(ne);
            return NULL;
        }
    return json_pack("{s:o, s:s, s:o, s:I, s:I, s:I, s:i, s:s, s:b}",
                     "name", text(ti->name), "type", ggfit_type_name(ti->type), "ne", ne,
                     "offset", (json_int_t)ti->offset, "bytes", (json_int_t)ti->n_bytes,
                     "shard", (json_int_t)ti->shard, "layer", (int)t->layer,
                     "role", ggfit_role_name(t->role), "output_layer", t->output_layer);
}

/* Appends v to the array a, consuming v; false on failure (v is freed). */
static bool append(json_t *a, json_t *v)
{
    return v && json_array_append_new(a, v) == 0;
}

char *ggfit_inspect_json(const ggfit_model *m, bool with_tensors)
{
    const ggfit_gguf *g = ggfit_model_gguf(m);
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    uint64_t roles[GGFIT_ROLE_COUNT];
    char *out = NULL;
    for (int r = 0; r < GGFIT_ROLE_COUNT; r++)
        roles[r] = ggfit_model_role_bytes(m, (ggfit_role)r);

    json_t *layers = json_array(), *shards = json_array(), *tensors = NULL;
    json_t *root = NULL;
    if (!layers || !shards)
        goto done;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(m, il);
        if (!append(layers, json_pack("{s:I, s:I, s:o, s:I, s:I, s:I, s:b, s:b}",
                                      "index", (json_int_t)il, "bytes", (json_int_t)li->n_bytes,
                                      "roles", role_object(li->role_bytes),
                                      "n_head", (json_int_t)li->n_head,
                                      "n_head_kv", (json_int_t)li->n_head_kv,
                                      "n_ff", (json_int_t)li->n_ff, "swa", li->swa,
                                      "nextn", li->nextn)))
            goto done;
    }
    for (uint32_t s = 0; s < ggfit_gguf_n_shards(g); s++)
        if (!append(shards, json_pack("{s:o, s:I}", "path", text(ggfit_gguf_shard_path(g, s)),
                                      "data_offset", (json_int_t)ggfit_gguf_data_offset(g, s))))
            goto done;
    if (with_tensors) {
        if (!(tensors = json_array()))
            goto done;
        for (uint64_t i = 0; i < ggfit_model_n_tensors(m); i++)
            if (!append(tensors, tensor_json(ggfit_model_tensor(m, i))))
                goto done;
    }
    root = json_pack("{s:o, s:I, s:I, s:o, s:I, s:I, s:o, s:o, s:I, s:I, s:o}",
                     "file", text(ggfit_gguf_shard_path(g, 0)),
                     "version", (json_int_t)ggfit_gguf_version(g),
                     "alignment", (json_int_t)ggfit_gguf_alignment(g),
                     "shards", shards,
                     "n_tensors", (json_int_t)ggfit_gguf_n_tensors(g),
                     "tensor_bytes", (json_int_t)ggfit_gguf_tensor_bytes(g),
                     "hparams", hparams_json(hp),
                     "roles", role_object(roles),
                     "input_bytes", (json_int_t)ggfit_model_input_bytes(m),
                     "output_bytes", (json_int_t)ggfit_model_output_bytes(m),
                     "layers", layers);
    shards = layers = NULL;   /* owned by root now, or freed by json_pack */
    if (root && tensors) {
        json_object_set_new(root, "tensors", tensors);
        tensors = NULL;
    }
    if (root)
        out = ggfit__json_doc(json_incref(root), "inspect", GGFIT__JSON_FLAGS);
done:
    json_decref(root);
    json_decref(layers);
    json_decref(shards);
    json_decref(tensors);
    return out;
}
