/*
 * deepseek32.c - src/models/deepseek32.cpp and glm-dsa.cpp: DeepSeek V3.2
 * and GLM-5, DeepSeek-V3's MLA and MoE with DSA sparse attention. A
 * "lightning indexer" per layer scores every cached token for each new one
 * (its own keys, one head of indexer.key_length, in a second K-only cache:
 * llama_kv_cache_dsa) and attention keeps only the top_k best: the MLA
 * mask is rebuilt per layer from those indices. GLM-5's "shared" indexer
 * layers (attention.indexer.types 0) have no indexer and no indexer cache:
 * they reuse the choice of the last full one. The NextN blocks keep no
 * cells in the main context (their draft head has its own). The DSA
 * layers are llama/graph_dsa.c's, shared with dots3note.c.
 */
#include <stdio.h>
#include <string.h>

#include "llama/check.h"
#include "llama/graph_dsa.h"
#include "versions/version.h"

typedef struct dsa {
    gb_dsa x;
    gb_dsa_mla mla;             /* every layer's */
    bool glm;                   /* glm-dsa: per-layer indexer types */
    int32_t prev_top;           /* the last full layer's choice (glm-dsa) */
} dsa;

static uint64_t f32_row(int64_t n)
{
    return ggfit_row_bytes(GGFIT_TYPE_F32, (uint64_t)n);
}

/* "<arch>.<suffix>" of model m, def when absent (an integer or bool). */
static uint64_t key_u(const ggfit_model *m, const char *suffix, uint64_t def)
{
    const ggfit_gguf *g = ggfit_model_gguf(m);
    char key[160];
    snprintf(key, sizeof key, "%s.%s", ggfit_model_hparams(m)->arch, suffix);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v) || v.type == GGFIT_GGUF_ARRAY)
        return def;
    return v.type == GGFIT_GGUF_INT32 || v.type == GGFIT_GGUF_INT64 || v.type == GGFIT_GGUF_INT16 ||
                   v.type == GGFIT_GGUF_INT8
               ? (uint64_t)v.i
               : v.u;
}

/* GLM-5's hparams.is_indexer_full(il): attention.indexer.types (one per
 * layer, or one for all), else every layer before GLM-5.2 (a training
 * context under 2^20), else GLM-5.2's pattern: layers 0 and 1, then every
 * fourth. */
static bool glm_indexer_full(const ggfit_model *m, uint32_t il)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    bool full = hp->n_ctx_train < 1048576 ? true : il < 2 || (il - 2) % 4 == 0;
    const ggfit_gguf *g = ggfit_model_gguf(m);
    char key[160];
    snprintf(key, sizeof key, "%s.attention.indexer.types", hp->arch);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v, e;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v))
        return full;
    if (v.type != GGFIT_GGUF_ARRAY)
        return (v.type == GGFIT_GGUF_INT32 ? v.i : (int64_t)v.u) != 0;
    ggfit_value_iter it = { 0 };
    for (uint32_t j = 0; ggfit_value_next(&v, &it, &e); j++)
        if (j == il)
            return (e.type == GGFIT_GGUF_INT32 ? e.i : (int64_t)e.u) != 0;
    return full;
}

/* The indexer cache's row for layer il (llama_kv_cache_dsa's filter_lid):
 * the trunk's layers, GLM-5's full indexer layers only. */
static uint32_t index_k_ds32(const ggfit_model *m, uint32_t il)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    if (il >= hp->n_layer - hp->n_nextn)
        return 0;
    return (uint32_t)key_u(m, "attention.indexer.key_length", 0);
}

static uint32_t index_k_glm(const ggfit_model *m, uint32_t il)
{
    return glm_indexer_full(m, il) ? index_k_ds32(m, il) : 0;
}

/* load_arch_tensors creates every tensor of a NextN block with TENSOR_SKIP
 * (no MTP context), except the routing bias. */
static bool nextn_loaded(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    const char *rest = strchr(t->info->name + 4, '.');   /* past "blk.N" */
    return rest && strcmp(rest + 1, "exp_probs_b.bias") == 0;
}

static int32_t dsa_self_attn(bctx *b, void *ctx, int32_t cur, int il)
{
    dsa *d = ctx;
    gg_graph *g = b->g;
    int32_t qr = gb_dsa_qr(b, cur, il);

    int32_t top;
    if (!d->glm || glm_indexer_full(b->p->m, (uint32_t)il)) {
        top = gb_dsa_indexer(b, &d->x, cur, qr, il);
        d->prev_top = top;
    } else {
        if (d->prev_top < 0) {
            b->missing = true;   /* llama.cpp asserts */
            return -1;
        }
        top = d->prev_top;
    }

    int32_t qkv[3];
    gb_dsa_mla_qkv(b, &d->x, &d->mla, cur, qr, il, qkv);
    cur = gb_dsa_attn(b, &d->x, qkv, top, d->mla.lora + d->x.n_rope, -1, il);
    return gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
}

/* llama_model_deepseek32::graph and llama_model_glm_dsa::graph */
static void build_dsa(bctx *b, bool glm)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)(hp->n_layer - hp->n_nextn);
    dsa d = {
        .x = { .n_tokens = b->p->n_tokens, .n_rope = hp->n_rot,
               .n_ih = (int64_t)gb_key(b, "attention.indexer.head_count", 0),
               .ih = (int64_t)gb_key(b, "attention.indexer.key_length", 0),
               .top_k = (uint32_t)gb_key(b, "attention.indexer.top_k", 0) },
        .mla = { .n_head = ggfit_model_layer(b->p->m, 0)->n_head,
                 .head_k = hp->n_embd_head_k_mla, .lora = hp->n_lora_kv },
        .glm = glm, .prev_top = -1,
    };
    if (n_layer < 1 || d.mla.head_k - d.x.n_rope < 1 || !hp->n_embd_head_v_mla ||
        d.x.ih <= d.x.n_rope || d.x.n_ih < 1 || d.x.top_k < 1) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_dsa_inputs(b, &d.x);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, b->p->n_outputs), NULL);
    gb_dsa_trunk(b, inpL, n_layer, glm ? GB_GATING_SIGMOID : GB_GATING_SOFTMAX,
                 dsa_self_attn, &d);
}

static void build_deepseek32(bctx *b)
{
    build_dsa(b, false);
}

static void build_glm_dsa(bctx *b)
{
    build_dsa(b, true);
}

/* llama_model_deepseek32::graph_mtp (glm_dsa's is the same): the first
 * NextN block on the joined embedding and hidden state, with dense MLA
 * (absorbed, no indexer) on a plain K-only cache of the block, its experts
 * and shared experts; the head on the output rows. */
static void build_dsa_mtp(bctx *b, bool glm)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int il = (int)(hp->n_layer - hp->n_nextn);
    int64_t n_head = ggfit_model_layer(b->p->m, (uint32_t)il)->n_head;
    int64_t nt = b->p->n_tokens, n_rope = hp->n_rot, head_k = hp->n_embd_head_k_mla;
    int64_t n_nope = head_k - n_rope, lora = hp->n_lora_kv;
    if (n_nope < 1 || !hp->n_embd_head_v_mla) {
        b->missing = true;   /* graph_mtp asserts MLA */
        return;
    }
    int32_t emb, h;
    gb_mtp_embd(b, il, &emb, &h);
    gb_inputs_k(b);
    int32_t inpSA = gb_mtp_eh_proj(b, il, emb, h);
    int32_t cur = gb_norm(b, inpSA, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "mtp_attn_norm", il);
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_a.weight", il), cur);
    gb_cb(b, q, "mtp_q", il);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_a_norm.weight", il), il);
    gb_cb(b, q, "mtp_q", il);
    q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_b.weight", il), q);
    gb_cb(b, q, "mtp_q", il);
    uint64_t qb1 = f32_row(head_k), qb2 = qb1 * (uint64_t)n_head;
    int32_t q_nope = gb_view_3d(b, q, n_nope, n_head, nt, qb1, qb2, 0);
    int32_t q_pe = gb_view_3d(b, q, n_rope, n_head, nt, qb1, qb2, f32_row(n_nope));
    int32_t kv_cmpr_pe = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_a_mqa.weight", il), cur);
    gb_cb(b, kv_cmpr_pe, "mtp_kv_cmpr_pe", il);
    uint64_t kb1 = f32_row(lora + n_rope);
    int32_t kv_cmpr = gb_view_2d(b, kv_cmpr_pe, lora, nt, kb1, 0);
    int32_t k_pe = gb_view_3d(b, kv_cmpr_pe, n_rope, 1, nt, kb1, kb1, f32_row(lora));
    q_pe = gg_rope(g, q_pe, b->inp_pos, -1);
    k_pe = gg_rope(g, k_pe, b->inp_pos, -1);
    kv_cmpr = gb_norm(b, kv_cmpr, gb_required(b, "blk.%d.attn_kv_a_norm.weight", il), il);
    gb_cb(b, kv_cmpr, "mtp_kv_cmpr", il);
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    int32_t q_abs = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k_b.weight", il), q_nope);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    int32_t qc = gg_concat(g, q_abs, q_pe, 0);
    kv_cmpr = gb_reshape_3d(b, kv_cmpr, lora, 1, nt);
    int32_t kc = gg_concat(g, kv_cmpr, k_pe, 0);
    cur = gb_attn_k(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, qc, kc, kv_cmpr,
                    gb_required(b, "blk.%d.attn_v_b.weight", il), il);
    gb_cb(b, cur, "mtp_attn_out", il);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "mtp_ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "mtp_ffn_norm", il);
    gb_required(b, "blk.%d.ffn_gate_inp.weight", il);   /* graph_mtp asserts it */
    if (b->missing)
        return;
    cur = gb_moe_shared_layer(b, glm ? GB_GATING_SIGMOID : GB_GATING_SOFTMAX, cur, il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "mtp_post_ffn", il);
    gb_mtp_head(b, cur, il, GB_MTP_ROWS_NORMED, -1);
}

static void build_deepseek32_mtp(bctx *b)
{
    build_dsa_mtp(b, false);
}

static void build_glm_dsa_mtp(bctx *b)
{
    build_dsa_mtp(b, true);
}

/* load_arch_hparams: the optional rope sections; GLM-DSA's indexer types
 * too, one per block of the trunk (nextn_predict_layers is read first). */
static const ggfit_arr_key arr_keys_ds32[] = {
    GGFIT_ARR_ROPE_SECTIONS(false),
    { NULL },
};
static const ggfit_arr_key arr_keys_glm[] = {
    GGFIT_ARR_ROPE_SECTIONS(false),
    { "attention.indexer.types", true, GGFIT_GGUF_UINT32, GGFIT_ARR_MAIN, false },
    { NULL },
};
/* The lightning indexer's keys, converted to integers by the graph (its
 * own rules on them, heads wider than the rope, make it an estimate). */
static void check(hp_check *c)
{
    gb_dsa_check(c, NULL);
}

const ggfit_arch ggfit__model_deepseek32 = {
    .arr_keys = arr_keys_ds32,
    .mla_same_kv_types = true,
    .name = "deepseek32",
    .required_keys = (const char *const[]){ "expert_feed_forward_length",
            "attention.layer_norm_rms_epsilon", "expert_count", "expert_used_count",
            "expert_shared_count", "attention.q_lora_rank", "attention.kv_lora_rank",
            "attention.indexer.head_count", "attention.indexer.key_length",
            "attention.indexer.top_k", "expert_gating_func", NULL },
    .check = check,
    .mtp = true,   /* load_mtp loads the NextN blocks */
    .mtp_kv_nextn = true,
    .build_mtp = build_deepseek32_mtp,
    .mem = GGFIT_MEM_KV,
    .index_k = index_k_ds32,
    .nextn_loaded = nextn_loaded,
    .build = build_deepseek32,
};

const ggfit_arch ggfit__model_glm_dsa = {
    .arr_keys = arr_keys_glm,
    .mla_same_kv_types = true,
    .name = "glm-dsa",
    .required_keys = (const char *const[]){ "expert_feed_forward_length",
            "attention.layer_norm_rms_epsilon", "expert_count", "expert_used_count",
            "expert_shared_count", "attention.q_lora_rank", "attention.kv_lora_rank",
            "attention.indexer.head_count", "attention.indexer.key_length",
            "attention.indexer.top_k", NULL },
    .check = check,
    .mtp = true,
    .mtp_kv_nextn = true,
    .build_mtp = build_glm_dsa_mtp,
    .mem = GGFIT_MEM_KV,
    .index_k = index_k_glm,
    .nextn_loaded = nextn_loaded,
    .build = build_glm_dsa,
};
