/*
 * deepseek32.c - src/models/deepseek32.cpp and glm-dsa.cpp: DeepSeek V3.2
 * and GLM-5, DeepSeek-V3's MLA and MoE with DSA sparse attention. A
 * "lightning indexer" per layer scores every cached token for each new one
 * (its own keys, one head of indexer.key_length, in a second K-only cache:
 * llama_kv_cache_dsa) and attention keeps only the top_k best: the MLA
 * mask is rebuilt per layer from those indices. GLM-5's "shared" indexer
 * layers (attention.indexer.types 0) have no indexer and no indexer cache:
 * they reuse the choice of the last full one. The NextN blocks keep no
 * cells in the main context (their draft head has its own).
 */
#include <stdio.h>
#include <string.h>

#include "llama/check.h"
#include "llama/graph.h"
#include "versions/version.h"

typedef struct dsa {
    int64_t n_head, n_tokens, n_stream;
    int64_t n_embd_head_k;      /* after decompression (key_length_mla) */
    int64_t n_rope, n_nope, kv_lora_rank;
    int64_t n_ih, ih;           /* indexer heads and their size */
    uint32_t top_k;
    bool glm;                   /* glm-dsa: per-layer indexer types */
    int32_t k_idxs_mla, mask_mla, k_idxs_lid, mask_lid, k_rot_lid;
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

/* build_attn_inp_k_dsa: the MLA cache's K indices and mask, then the
 * indexer cache's, whose mask is F16 (the fused indexer's), and its
 * Hadamard rotation (always made: its head is the cache's head). */
static void dsa_inputs(bctx *b, dsa *d)
{
    gg_graph *g = b->g;
    const gb_params *p = b->p;
    int64_t nt = p->n_tokens, ns = p->n_stream;
    b->inp_pos = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, nt), NULL);
    d->k_idxs_mla = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I64, nt), NULL);
    d->mask_mla = gg_input(g, gg_new_4d(g, p->flash_attn ? GGFIT_TYPE_F16 : GGFIT_TYPE_F32,
                                        p->n_kv, nt / ns, 1, ns), "attn_inp_kq_mask");
    d->k_idxs_lid = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I64, nt), NULL);
    d->mask_lid = gg_input(g, gg_new_4d(g, GGFIT_TYPE_F16,
                                        p->n_kv, nt / ns, 1, ns), "attn_inp_kq_mask");
    int64_t nrot = 64;
    do
        nrot *= 2;
    while (d->ih % nrot == 0);
    nrot /= 2;
    d->k_rot_lid = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, nrot, nrot), "attn_inp_k_rot");
    b->k_idxs = d->k_idxs_mla;
    b->kq_mask = d->mask_mla;
    b->v_idxs = b->k_rot = b->v_rot = -1;
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
}

/* Layer il's cache_k_l<il> of n_embd values a cell (llama_kv_cache). */
static int32_t cache_k(bctx *b, int il, int64_t n_embd)
{
    const gb_params *p = b->p;
    char name[GG_NAME] = "";
    int64_t ne[3] = { n_embd, p->n_kv, p->n_stream };
    if (b->g->names)   /* gg_memory copies it only then */
        snprintf(name, sizeof name, "cache_k_l%d", il);
    int32_t t = gg_memory(b->g, NULL, name, p->type_k, 3, ne, p->kv_buft[il], false);
    b->g->t[t].il = il;
    return t;
}

/* llama_kv_cache::cpy_k */
static int32_t cpy_k(bctx *b, int32_t ck, int32_t k, int32_t k_idxs)
{
    const gg_tensor *t = &b->g->t[k];
    int32_t kc = gb_view_2d(b, k, t->ne[0] * t->ne[1], t->ne[2], t->nb[2], 0);
    const gg_tensor *c = &b->g->t[ck];
    int32_t dst = ck;
    if (c->ne[2] > 1)
        dst = gb_reshape_2d(b, ck, c->ne[0], c->ne[1] * c->ne[2]);
    return gg_set_rows(b->g, dst, kc, k_idxs);
}

/* llama_kv_cache::get_k: all cells, heads of hk. */
static int32_t get_k(bctx *b, int32_t ck, int64_t hk)
{
    const gg_tensor *t = &b->g->t[ck];
    int64_t nk = t->ne[0], kv = t->ne[1], ns = t->ne[2];
    uint32_t type = t->type;
    return gb_view_4d(b, ck, hk, nk / hk, kv, ns, ggfit_row_bytes(type, (uint64_t)hk),
                      ggfit_row_bytes(type, (uint64_t)nk),
                      ggfit_row_bytes(type, (uint64_t)(nk * kv)), 0);
}

static int32_t same(bctx *b, uint8_t op, uint32_t type, int32_t a)
{
    const gg_tensor *t = &b->g->t[a];
    int64_t ne[4] = { t->ne[0], t->ne[1], t->ne[2], t->ne[3] };
    return gg_op_shape(b->g, op, type, 4, ne, 1, &a);
}

/* The lightning indexer of layer il: the top_k cells for each token. */
static int32_t dsa_indexer(bctx *b, const dsa *d, int32_t cur, int32_t qr, int il)
{
    gg_graph *g = b->g;
    int64_t nt = d->n_tokens, ih = d->ih, n_ih = d->n_ih, rope = d->n_rope;
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.attn_q_b.weight", il), qr);
    gb_cb(b, q, "indexer_q", il);
    /* DSA_INDEXER_ROPE: the heads ([rope | nope]) are roped whole, n_rope
     * dims; before, views of both parts, the rope part roped, then their
     * concat. */
    bool whole = ggfit__llama_has(b->p->llama_build, LLAMA_CHANGE_DSA_INDEXER_ROPE);
    uint64_t nb1 = f32_row(ih);
    if (whole) {
        q = gb_reshape_3d(b, q, ih, n_ih, nt);
        q = gg_rope(g, q, b->inp_pos, -1);
        gb_cb(b, q, "indexer_q", il);
    } else {
        int32_t q_pe = gb_view_3d(b, q, rope, n_ih, nt, nb1, nb1 * (uint64_t)n_ih, 0);
        gb_cb(b, q_pe, "indexer_q_pe", il);
        int32_t q_nope = gb_view_3d(b, q, ih - rope, n_ih, nt, nb1, nb1 * (uint64_t)n_ih,
                                    f32_row(ih - rope));
        gb_cb(b, q_nope, "indexer_q_nope", il);
        q_pe = gg_rope(g, q_pe, b->inp_pos, -1);
        gb_cb(b, q_pe, "indexer_q_pe", il);
        q = gg_concat(g, q_pe, q_nope, 0);
        gb_cb(b, q, "indexer_q", il);
    }

    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.attn_k.weight", il), cur);
    gb_cb(b, k, "indexer_k", il);
    k = gb_layer_norm(b, k, gb_required(b, "blk.%d.indexer.k_norm.weight", il),
                      gb_required(b, "blk.%d.indexer.k_norm.bias", il), il);
    gb_cb(b, k, "indexer_k", il);
    if (whole) {
        k = gb_reshape_3d(b, k, ih, 1, nt);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, k, "indexer_k", il);
    } else {
        int32_t k_pe = gb_view_3d(b, k, rope, 1, nt, nb1, nb1, 0);
        gb_cb(b, k_pe, "indexer_k_pe", il);
        int32_t k_nope = gb_view_3d(b, k, ih - rope, 1, nt, nb1, nb1, f32_row(ih - rope));
        gb_cb(b, k_nope, "indexer_k_nope", il);
        k_pe = gg_rope(g, k_pe, b->inp_pos, -1);
        gb_cb(b, k_pe, "indexer_k_pe", il);
        k = gg_concat(g, k_pe, k_nope, 0);
        gb_cb(b, k, "indexer_k", il);
    }

    q = gg_mul_mat(g, d->k_rot_lid, q);
    gb_cb(b, q, "indexer_q", il);
    k = gg_mul_mat(g, d->k_rot_lid, k);
    gb_cb(b, k, "indexer_k", il);

    int32_t ck = cache_k(b, il, ih);
    gg_expand(g, cpy_k(b, ck, k, d->k_idxs_lid));

    int32_t w = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.proj.weight", il), cur);
    gb_cb(b, w, "indexer_weights", il);

    k = get_k(b, ck, ih);
    int64_t ns = gb_ne(b, k, 3);
    const gg_tensor *tq = &g->t[q];
    q = gb_view_4d(b, q, tq->ne[0], tq->ne[1], tq->ne[2] / ns, ns, tq->nb[1], tq->nb[2],
                   tq->nb[3] / (uint64_t)ns, 0);
    const gg_tensor *tw = &g->t[w];
    w = gb_view_4d(b, w, tw->ne[0], tw->ne[1] / ns, tw->ne[2], ns, tw->nb[1],
                   tw->nb[2] / (uint64_t)ns, tw->nb[3] / (uint64_t)ns, 0);
    w = gg_scale(g, w);
    gb_cb(b, w, "indexer_weights", il);

    /* llama.cpp probes the fused indexer (resolve_fused_ops) and keeps it
     * when every node runs on its layer's device, which it always does: the
     * scheduler gives it the device of the indexer_weights product before
     * it, whose weight is the layer's. So the unfused path never runs. */
    const gg_tensor *tk = &g->t[k];
    tq = &g->t[q];
    int64_t sne[4] = { tk->ne[2], tq->ne[2], 1, tq->ne[3] };
    int32_t src[4] = { q, k, w, d->mask_lid };
    int32_t score = gg_op_shape(g, GGFIT_OP_LIGHTNING_INDEXER, GGFIT_TYPE_F32, 4, sne, 4, src);
    gb_cb(b, score, "indexer_score", il);
    const gg_tensor *ts = &g->t[score];
    int64_t n_top = ts->ne[0] < (int64_t)d->top_k ? ts->ne[0] : (int64_t)d->top_k;
    int64_t ne[4] = { n_top, ts->ne[1], ts->ne[2], ts->ne[3] };
    int32_t top = gg_op_shape(g, GGFIT_OP_TOP_K, GGFIT_TYPE_I32, 4, ne, 1, &score);
    top = gg_cont(g, top);
    gb_cb(b, top, "top_k", il);
    return top;
}

/* build_attn on llm_graph_input_attn_k_dsa: the MLA cache's mask opened
 * only at the top_k cells, then MQA over the latent. */
static int32_t dsa_attn(bctx *b, const dsa *d, int32_t q, int32_t k, int32_t v, int32_t top,
                        int il)
{
    gg_graph *g = b->g;
    gg_expand(g, q);
    gg_expand(g, v);
    gg_expand(g, k);
    int32_t ck = cache_k(b, il, d->kv_lora_rank + d->n_rope);
    gg_expand(g, cpy_k(b, ck, k, d->k_idxs_mla));

    const gg_tensor *tm = &g->t[d->mask_mla];
    int32_t all = same(b, GGFIT_OP_FILL, tm->type, d->mask_mla);
    const gg_tensor *ta = &g->t[all];
    all = gb_view_4d(b, all, 1, ta->ne[0], ta->ne[1], ta->ne[3], ta->nb[0], ta->nb[1],
                     ta->nb[2], 0);
    const gg_tensor *tt = &g->t[top];
    int32_t top3 = gb_view_4d(b, top, tt->ne[0], tt->ne[1], tt->ne[3], 1, tt->nb[1], tt->nb[2],
                              (uint64_t)tt->ne[3] * tt->nb[3], 0);
    const gg_tensor *t3 = &g->t[top3];
    int32_t zeros = gg_new_4d(g, GGFIT_TYPE_F32, 1, t3->ne[0], t3->ne[1], t3->ne[2]);
    zeros = same(b, GGFIT_OP_FILL, GGFIT_TYPE_F32, zeros);
    int32_t mask = gg_set_rows(g, all, zeros, top3);
    const gg_tensor *tk = &g->t[mask];
    mask = gb_view_4d(b, mask, tk->ne[1], tk->ne[2], 1, tk->ne[3], tk->nb[2], tk->nb[3],
                      tk->nb[3], 0);
    mask = gg_binary(g, GGFIT_OP_ADD, mask, d->mask_mla);

    int64_t hk = d->kv_lora_rank + d->n_rope;
    int32_t kk = get_k(b, ck, hk);
    const gg_tensor *t = &g->t[kk];
    int32_t vv = gb_view_4d(b, kk, gb_ne(b, v, 0), t->ne[1], t->ne[2], t->ne[3], t->nb[1],
                            t->nb[2], t->nb[3], 0);
    int32_t cur = gb_attn_mha_v(b, q, kk, vv, mask, -1,
                                gb_required(b, "blk.%d.attn_v_b.weight", il), il);
    gb_cb(b, cur, "kqv_out", il);
    return gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
}

static int32_t dsa_self_attn(bctx *b, const dsa *d, int32_t cur, int il, int32_t *prev_top)
{
    gg_graph *g = b->g;
    int64_t n_head = d->n_head, nt = d->n_tokens, n_rope = d->n_rope;
    int32_t qr = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_a.weight", il), cur);
    gb_cb(b, qr, "qr", il);
    qr = gb_norm(b, qr, gb_required(b, "blk.%d.attn_q_a_norm.weight", il), il);
    gb_cb(b, qr, "qr", il);

    int32_t top;
    if (!d->glm || glm_indexer_full(b->p->m, (uint32_t)il)) {
        top = dsa_indexer(b, d, cur, qr, il);
        *prev_top = top;
    } else {
        if (*prev_top < 0) {
            b->missing = true;   /* llama.cpp asserts */
            return -1;
        }
        top = *prev_top;
    }

    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_b.weight", il), qr);
    gb_cb(b, q, "q", il);
    uint64_t qb1 = f32_row(d->n_embd_head_k), qb2 = qb1 * (uint64_t)n_head;
    int32_t q_nope = gb_view_3d(b, q, d->n_nope, n_head, nt, qb1, qb2, 0);
    gb_cb(b, q_nope, "q_nope", il);
    int32_t q_pe = gb_view_3d(b, q, n_rope, n_head, nt, qb1, qb2, f32_row(d->n_nope));
    gb_cb(b, q_pe, "q_pe", il);

    int32_t kv_cmpr_pe = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_a_mqa.weight", il), cur);
    gb_cb(b, kv_cmpr_pe, "kv_cmpr_pe", il);
    uint64_t kb1 = f32_row(d->kv_lora_rank + n_rope);
    int32_t kv_cmpr = gb_view_2d(b, kv_cmpr_pe, d->kv_lora_rank, nt, kb1, 0);
    gb_cb(b, kv_cmpr, "kv_cmpr", il);
    int32_t k_pe = gb_view_3d(b, kv_cmpr_pe, n_rope, 1, nt, kb1, kb1, f32_row(d->kv_lora_rank));
    gb_cb(b, k_pe, "k_pe", il);
    q_pe = gg_rope(g, q_pe, b->inp_pos, -1);
    gb_cb(b, q_pe, "q_pe", il);
    k_pe = gg_rope(g, k_pe, b->inp_pos, -1);
    gb_cb(b, k_pe, "k_pe", il);
    kv_cmpr = gb_norm(b, kv_cmpr, gb_required(b, "blk.%d.attn_kv_a_norm.weight", il), il);
    gb_cb(b, kv_cmpr, "kv_cmpr", il);

    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    gb_cb(b, q_nope, "q_nope_perm", il);
    int32_t q_abs = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k_b.weight", il), q_nope);
    gb_cb(b, q_abs, "q_nope_absorbed", il);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    gb_cb(b, q_abs, "q_nope_absorbed_perm", il);
    int32_t qc = gg_concat(g, q_abs, q_pe, 0);
    gb_cb(b, qc, "Qcur", il);
    kv_cmpr = gb_reshape_3d(b, kv_cmpr, d->kv_lora_rank, 1, nt);
    gb_cb(b, kv_cmpr, "kv_cmpr_reshape", il);
    int32_t kc = gg_concat(g, kv_cmpr, k_pe, 0);
    gb_cb(b, kc, "Kcur", il);
    gb_cb(b, kv_cmpr, "Vcur", il);
    return dsa_attn(b, d, qc, kc, kv_cmpr, top, il);
}

/* Routed experts plus the shared ones (deepseek2's). */
static int32_t dsa_moe(bctx *b, const dsa *d, int32_t cur, int il)
{
    gb_moe o;
    gb_moe_layer(b, il, d->glm ? GB_GATING_SIGMOID : GB_GATING_SOFTMAX, &o);
    int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe_out, "ffn_moe_out", il);
    int32_t shexp = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, shexp, "ffn_shexp", il);
    cur = gg_binary(b->g, GGFIT_OP_ADD, moe_out, shexp);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

/* llama_model_deepseek32::graph and llama_model_glm_dsa::graph */
static void build_dsa(bctx *b, bool glm)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)(hp->n_layer - hp->n_nextn);
    dsa d = {
        .n_head = ggfit_model_layer(b->p->m, 0)->n_head, .n_tokens = b->p->n_tokens,
        .n_embd_head_k = hp->n_embd_head_k_mla, .n_rope = hp->n_rot,
        .kv_lora_rank = hp->n_lora_kv, .glm = glm,
        .n_ih = (int64_t)gb_key(b, "attention.indexer.head_count", 0),
        .ih = (int64_t)gb_key(b, "attention.indexer.key_length", 0),
        .top_k = (uint32_t)gb_key(b, "attention.indexer.top_k", 0),
    };
    d.n_nope = d.n_embd_head_k - d.n_rope;
    if (n_layer < 1 || d.n_nope < 1 || !hp->n_embd_head_v_mla || d.ih <= d.n_rope ||
        d.n_ih < 1 || d.top_k < 1) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    dsa_inputs(b, &d);
    int32_t prev_top = -1;
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        cur = dsa_self_attn(b, &d, cur, il, &prev_top);
        if (b->missing)
            return;
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        if ((uint32_t)il < hp->n_layer_dense_lead) {
            cur = gb_ffn_gated(b, cur, il);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            cur = dsa_moe(b, &d, cur, il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
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
    dsa d = {
        .n_head = ggfit_model_layer(b->p->m, (uint32_t)il)->n_head,
        .n_tokens = b->p->n_tokens, .n_embd_head_k = hp->n_embd_head_k_mla,
        .n_rope = hp->n_rot, .kv_lora_rank = hp->n_lora_kv, .glm = glm,
    };
    d.n_nope = d.n_embd_head_k - d.n_rope;
    if (d.n_nope < 1 || !hp->n_embd_head_v_mla) {
        b->missing = true;   /* graph_mtp asserts MLA */
        return;
    }
    int64_t n_head = d.n_head, nt = d.n_tokens, n_rope = d.n_rope;
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
    uint64_t qb1 = f32_row(d.n_embd_head_k), qb2 = qb1 * (uint64_t)n_head;
    int32_t q_nope = gb_view_3d(b, q, d.n_nope, n_head, nt, qb1, qb2, 0);
    int32_t q_pe = gb_view_3d(b, q, n_rope, n_head, nt, qb1, qb2, f32_row(d.n_nope));
    int32_t kv_cmpr_pe = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_a_mqa.weight", il), cur);
    gb_cb(b, kv_cmpr_pe, "mtp_kv_cmpr_pe", il);
    uint64_t kb1 = f32_row(d.kv_lora_rank + n_rope);
    int32_t kv_cmpr = gb_view_2d(b, kv_cmpr_pe, d.kv_lora_rank, nt, kb1, 0);
    int32_t k_pe = gb_view_3d(b, kv_cmpr_pe, n_rope, 1, nt, kb1, kb1, f32_row(d.kv_lora_rank));
    q_pe = gg_rope(g, q_pe, b->inp_pos, -1);
    k_pe = gg_rope(g, k_pe, b->inp_pos, -1);
    kv_cmpr = gb_norm(b, kv_cmpr, gb_required(b, "blk.%d.attn_kv_a_norm.weight", il), il);
    gb_cb(b, kv_cmpr, "mtp_kv_cmpr", il);
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    int32_t q_abs = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k_b.weight", il), q_nope);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    int32_t qc = gg_concat(g, q_abs, q_pe, 0);
    kv_cmpr = gb_reshape_3d(b, kv_cmpr, d.kv_lora_rank, 1, nt);
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
    cur = dsa_moe(b, &d, cur, il);
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
    /* the MLA cache's one K head is kv_lora_rank + the rope's width, which
     * get_k views it in heads of (llama.cpp's attn_kv_a_mqa has that
     * shape; the loader requires the rank) */
    hc_nonzero(c, "attention.kv_lora_rank", (uint64_t)c->hp->n_lora_kv + c->hp->n_rot,
               "the MLA cache's K head is kv_lora_rank + rope.dimension_count wide "
               "(llama.cpp's loader requires kv_lora_rank)");
    static const char *const keys[] = { "attention.indexer.head_count",
                                        "attention.indexer.key_length",
                                        "attention.indexer.top_k" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        hc_key_int(c, keys[i], 0, UINT32_MAX, 0, NULL,
                   "llama.cpp reads it as an unsigned 32-bit count");
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
