/*
 * dots3note.c - src/models/dots3note.cpp: dots3-note (llama.cpp b10569).
 * DeepSeek V3.2's absorbed MLA with DSA sparse attention on the full
 * layers, and on the others a sliding window over an MLA of their own
 * sizes (attention.kv_lora_rank_swa, key_length_mla_swa,
 * value_length_mla_swa; more or fewer heads: head_count is per layer). A
 * head-wise sigmoid gate scales each head's output before attn_output;
 * the rope half of the shared key is RMS-normed first; experts routed by
 * sigmoid with a bias, plus shared ones. Its memory is
 * llama_kv_cache_dsa_iswa: llama_kv_cache_dsa (the latent keys, and the
 * lightning indexer's keys of the layers attention.indexer.types marks
 * full) over the full layers, and a K-only cache of the window's cells
 * over the sliding-window ones (kv_cache.c counts both as an iSWA cache
 * with an indexer cache beside it). The NextN block is kept in the file
 * but never loaded: llama.cpp has no MTP graph for it yet, and
 * llama-server b10587 with --spec-type draft-mtp crashes while it makes
 * the SWA cache for the fit's first measurement; ggfit plans that MTP
 * context on this graph and memory (the row has no .mtp).
 */
#include <stdio.h>
#include <string.h>

#include "llama/check.h"
#include "llama/graph.h"
#include "versions/version.h"

typedef struct d3 {
    int64_t n_tokens, n_rope, n_ih, ih;
    uint32_t top_k;
    /* the DSA cache's latent and indexer inputs, the SWA cache's */
    int32_t k_idxs_mla, mask_mla, k_idxs_lid, mask_lid, k_rot_lid, k_idxs_swa, mask_swa;
} d3;

static uint64_t f32_row(int64_t n)
{
    return ggfit_row_bytes(GGFIT_TYPE_F32, (uint64_t)n);
}

static bool layer_swa(const bctx *b, int il)
{
    return (b->p->layer_flags[il] & GB_LAYER_SWA) != 0;
}

/* The indexer cache's row for layer il (filter_lid): the trunk's layers
 * that attention.indexer.types marks full (1), one head of
 * indexer.key_length. */
static uint32_t index_k(const ggfit_model *m, uint32_t il)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    if (il >= hp->n_layer - hp->n_nextn)
        return 0;
    const ggfit_gguf *g = ggfit_model_gguf(m);
    char key[160];
    snprintf(key, sizeof key, "%s.attention.indexer.types", hp->arch);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v, e;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v) || v.type != GGFIT_GGUF_ARRAY)
        return 0;
    ggfit_value_iter it = { 0 };
    bool full = false;   /* past the array's end: the default, not full */
    for (uint32_t j = 0; ggfit_value_next(&v, &it, &e); j++)
        if (j == il) {
            full = (e.type == GGFIT_GGUF_INT32 ? e.i : (int64_t)e.u) != 0;   /* bool: u */
            break;
        }
    snprintf(key, sizeof key, "%s.attention.indexer.key_length", hp->arch);
    i = ggfit_gguf_find_key(g, key);
    if (!full || i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v) || v.type == GGFIT_GGUF_ARRAY)
        return 0;
    return (uint32_t)v.u;
}

/* build_attn_inp_k_dsa_iswa after build_inp_pos: the DSA cache's latent
 * K indices and mask, its indexer's K indices, F16 mask (the fused
 * indexer's) and Hadamard rotation (always made: its head is the cache's
 * head, a power of two); then the SWA cache's K indices and mask (no rotation); then the
 * output ids. */
static void inputs(bctx *b, d3 *d)
{
    gg_graph *g = b->g;
    const gb_params *p = b->p;
    int64_t nt = p->n_tokens, ns = p->n_stream;
    uint32_t mask_type = p->flash_attn ? GGFIT_TYPE_F16 : GGFIT_TYPE_F32;
    b->inp_pos = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, nt), NULL);
    d->k_idxs_mla = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I64, nt), NULL);
    d->mask_mla = gg_input(g, gg_new_4d(g, mask_type, p->n_kv, nt / ns, 1, ns),
                           "attn_inp_kq_mask");
    d->k_idxs_lid = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I64, nt), NULL);
    d->mask_lid = gg_input(g, gg_new_4d(g, GGFIT_TYPE_F16, p->n_kv, nt / ns, 1, ns),
                           "attn_inp_kq_mask");
    d->k_rot_lid = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, d->ih, d->ih), "attn_inp_k_rot");
    d->k_idxs_swa = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I64, nt), NULL);
    d->mask_swa = gg_input(g, gg_new_4d(g, mask_type, p->n_kv_swa, nt / ns, 1, ns),
                           "attn_inp_kq_mask");
    b->k_idxs = d->k_idxs_mla;
    b->kq_mask = d->mask_mla;
    b->v_idxs = b->k_rot = b->v_rot = -1;
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
}

/* Layer il's cache_k_l<il> of n_embd values a cell, n_kv cells a stream. */
static int32_t cache_k(bctx *b, int il, int64_t n_embd, uint32_t n_kv)
{
    const gb_params *p = b->p;
    char name[GG_NAME] = "";
    int64_t ne[3] = { n_embd, n_kv, p->n_stream };
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

/* llama_kv_cache::get_k: all cells, one head of hk. */
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

/* The lightning indexer of a full layer: the top_k cells for each token
 * ([rope | nope] heads roped whole, Hadamard-rotated, keys to the indexer
 * cache, the fused score). */
static int32_t indexer(bctx *b, const d3 *d, int32_t cur, int32_t qr, int il)
{
    gg_graph *g = b->g;
    int64_t nt = d->n_tokens, ih = d->ih, n_ih = d->n_ih;
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.attn_q_b.weight", il), qr);
    gb_cb(b, q, "indexer_q", il);
    q = gb_reshape_3d(b, q, ih, n_ih, nt);
    q = gg_rope(g, q, b->inp_pos, -1);
    gb_cb(b, q, "indexer_q", il);
    int32_t k = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.attn_k.weight", il), cur);
    gb_cb(b, k, "indexer_k", il);
    k = gb_layer_norm(b, k, gb_required(b, "blk.%d.indexer.k_norm.weight", il),
                      gb_required(b, "blk.%d.indexer.k_norm.bias", il), il);
    gb_cb(b, k, "indexer_k", il);
    k = gb_reshape_3d(b, k, ih, 1, nt);
    k = gg_rope(g, k, b->inp_pos, -1);
    gb_cb(b, k, "indexer_k", il);

    q = gg_mul_mat(g, d->k_rot_lid, q);
    gb_cb(b, q, "indexer_q", il);
    k = gg_mul_mat(g, d->k_rot_lid, k);
    gb_cb(b, k, "indexer_k", il);

    int32_t ck = cache_k(b, il, ih, b->p->n_kv);
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

    /* The fused indexer, which llama.cpp keeps (as for DeepSeek V3.2:
     * every node of it runs on the layer's device). */
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

/* build_attn on the DSA input: the latent cache's mask opened only at the
 * top_k cells, MQA over the latent, decompressed by v_mla; no wo. */
static int32_t dsa_attn(bctx *b, const d3 *d, int32_t q, int32_t k, int32_t v, int32_t top,
                        int32_t v_mla, int il)
{
    gg_graph *g = b->g;
    gg_expand(g, q);
    gg_expand(g, v);
    gg_expand(g, k);
    int32_t ck = cache_k(b, il, (int64_t)b->hp->n_embd_head_k, b->p->n_kv);
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

    int32_t kk = get_k(b, ck, (int64_t)b->hp->n_embd_head_k);
    const gg_tensor *t = &g->t[kk];
    int32_t vv = gb_view_4d(b, kk, gb_ne(b, v, 0), t->ne[1], t->ne[2], t->ne[3], t->nb[1],
                            t->nb[2], t->nb[3], 0);
    int32_t cur = gb_attn_mha_v(b, q, kk, vv, mask, -1, v_mla, il);
    gb_cb(b, cur, "kqv_out", il);
    return cur;
}

/* build_attn on the SWA cache's K-only input: the window's cells, V the
 * latent part of each key; no wo. */
static int32_t swa_attn(bctx *b, const d3 *d, int32_t q, int32_t k, int32_t v, int32_t v_mla,
                        int il)
{
    gg_graph *g = b->g;
    gg_expand(g, q);
    gg_expand(g, v);
    gg_expand(g, k);
    int64_t hk = b->hp->n_embd_head_k_swa;
    int32_t ck = cache_k(b, il, hk, b->p->n_kv_swa);
    gg_expand(g, cpy_k(b, ck, k, d->k_idxs_swa));
    int32_t kk = get_k(b, ck, hk);
    const gg_tensor *t = &g->t[kk];
    int32_t vv = gb_view_4d(b, kk, gb_ne(b, v, 0), t->ne[1], t->ne[2], t->ne[3], t->nb[1],
                            t->nb[2], t->nb[3], 0);
    int32_t cur = gb_attn_mha_v(b, q, kk, vv, d->mask_swa, -1, v_mla, il);
    gb_cb(b, cur, "kqv_out", il);
    return cur;
}

static int32_t self_attn(bctx *b, const d3 *d, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    bool swa = layer_swa(b, il);
    int64_t nt = d->n_tokens, n_rope = d->n_rope;
    int64_t n_head = ggfit_model_layer(b->p->m, (uint32_t)il)->n_head;
    int64_t lora = swa ? (int64_t)gb_key(b, "attention.kv_lora_rank_swa", 0) : hp->n_lora_kv;
    int64_t hk = swa ? (int64_t)gb_key(b, "attention.key_length_mla_swa", 0)
                     : hp->n_embd_head_k_mla;
    int64_t hv = swa ? (int64_t)gb_key(b, "attention.value_length_mla_swa", 0)
                     : hp->n_embd_head_v_mla;
    int64_t nope = hk - n_rope;
    /* The cache's rows hold the latent and the rope (cpy_k's rows). */
    int64_t row = swa ? hp->n_embd_head_k_swa : hp->n_embd_head_k;
    if (lora < 1 || nope < 1 || hv < 1 || row != lora + n_rope) {
        b->missing = true;
        return -1;
    }
    int32_t attn_inp = cur;
    int32_t qr = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_a.weight", il), cur);
    gb_cb(b, qr, "qr", il);
    qr = gb_norm(b, qr, gb_required(b, "blk.%d.attn_q_a_norm.weight", il), il);
    gb_cb(b, qr, "qr", il);

    int32_t top = swa ? -1 : indexer(b, d, cur, qr, il);

    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_b.weight", il), qr);
    gb_cb(b, q, "q", il);
    uint64_t qb1 = f32_row(hk), qb2 = qb1 * (uint64_t)n_head;
    int32_t q_nope = gb_view_3d(b, q, nope, n_head, nt, qb1, qb2, 0);
    gb_cb(b, q_nope, "q_nope", il);
    int32_t q_pe = gb_view_3d(b, q, n_rope, n_head, nt, qb1, qb2, f32_row(nope));
    gb_cb(b, q_pe, "q_pe", il);

    int32_t kv_cmpr_pe = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_a_mqa.weight", il), cur);
    gb_cb(b, kv_cmpr_pe, "kv_cmpr_pe", il);
    uint64_t kb1 = f32_row(lora + n_rope);
    int32_t kv_cmpr = gb_view_2d(b, kv_cmpr_pe, lora, nt, kb1, 0);
    gb_cb(b, kv_cmpr, "kv_cmpr", il);
    int32_t k_pe = gb_view_3d(b, kv_cmpr_pe, n_rope, 1, nt, kb1, kb1, f32_row(lora));
    gb_cb(b, k_pe, "k_pe", il);
    k_pe = gb_norm(b, k_pe, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
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
    kv_cmpr = gb_reshape_3d(b, kv_cmpr, lora, 1, nt);
    gb_cb(b, kv_cmpr, "kv_cmpr_reshape", il);
    int32_t kc = gg_concat(g, kv_cmpr, k_pe, 0);
    gb_cb(b, kc, "Kcur", il);
    gb_cb(b, kv_cmpr, "Vcur", il);

    int32_t v_mla = gb_required(b, "blk.%d.attn_v_b.weight", il);
    if (b->missing)
        return -1;
    cur = swa ? swa_attn(b, d, qc, kc, kv_cmpr, v_mla, il)
              : dsa_attn(b, d, qc, kc, kv_cmpr, top, v_mla, il);
    gb_cb(b, cur, "attn_out", il);

    /* the head-wise output gate, before attn_output */
    int32_t gate = gg_mul_mat(g, gb_required(b, "blk.%d.attn_gate.weight", il), attn_inp);
    gb_cb(b, gate, "attn_gate", il);
    gate = gg_unary_op(g, GGFIT_OP_UNARY, gate);
    gb_cb(b, gate, "attn_gate_sigmoid", il);
    int32_t a3 = gb_reshape_3d(b, cur, hv, n_head, nt);
    int32_t g3 = gb_reshape_3d(b, gate, 1, n_head, nt);
    a3 = gg_binary(g, GGFIT_OP_MUL, a3, g3);
    gb_cb(b, a3, "attn_gated", il);
    cur = gb_reshape_2d(b, a3, hv * n_head, nt);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
    gb_cb(b, cur, "attn_output", il);
    return cur;
}

/* llama_model_dots3note::graph */
static void build_dots3note(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)(hp->n_layer - hp->n_nextn);
    d3 d = {
        .n_tokens = b->p->n_tokens, .n_rope = hp->n_rot,
        .n_ih = (int64_t)gb_key(b, "attention.indexer.head_count", 0),
        .ih = (int64_t)gb_key(b, "attention.indexer.key_length", 0),
        .top_k = (uint32_t)gb_key(b, "attention.indexer.top_k", 0),
    };
    /* The Hadamard rotation of the indexer cache is as wide as the largest
     * power of two from 64 up dividing its head, and llama.cpp multiplies
     * the heads by it (ggml_mul_mat asserts they are as wide). */
    int64_t nrot = 64;
    while (d.ih > 0 && nrot <= d.ih && d.ih % (2 * nrot) == 0)
        nrot *= 2;
    /* llama.cpp always makes the two caches (create_memory asserts a
     * sliding window); the indexer head holds the rope. */
    if (!b->p->swa || n_layer < 1 || d.ih < 1 || d.ih < d.n_rope || nrot != d.ih ||
        d.n_ih < 1 || d.top_k < 1 || !hp->n_embd_head_k_mla || !hp->n_embd_head_v_mla) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    inputs(b, &d);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        cur = self_attn(b, &d, cur, il);
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
            gb_moe o;
            gb_moe_layer(b, il, GB_GATING_SIGMOID, &o);
            int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
            gb_cb(b, moe_out, "ffn_moe_out", il);
            int32_t shexp = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                                     gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                                     gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
            gb_cb(b, shexp, "ffn_shexp", il);
            cur = gg_binary(g, GGFIT_OP_ADD, moe_out, shexp);
            gb_cb(b, cur, "ffn_out", il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (b->missing)
        return;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_arch_hparams reads the indexer types with get_arr: an array (of
 * bools or integers), one value for each trunk layer. */
static const ggfit_arr_key arr_keys[] = {
    { "attention.indexer.types", false, GGFIT_GGUF_UINT32, GGFIT_ARR_MAIN, true },
    { NULL },
};

/* The indexer's keys, converted to integers by the graph. */
static void check(hp_check *c)
{
    hc_nonzero(c, "attention.kv_lora_rank", (uint64_t)c->hp->n_lora_kv + c->hp->n_rot,
               "the MLA cache's K head is kv_lora_rank + rope.dimension_count wide "
               "(llama.cpp's loader requires kv_lora_rank)");
    static const char *const keys[] = { "attention.indexer.head_count",
                                        "attention.indexer.key_length",
                                        "attention.indexer.top_k",
                                        "attention.kv_lora_rank_swa",
                                        "attention.key_length_mla_swa",
                                        "attention.value_length_mla_swa" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        hc_key_int(c, keys[i], 0, UINT32_MAX, 0, NULL,
                   "llama.cpp reads it as an unsigned 32-bit count");
}

const ggfit_arch ggfit__model_dots3note = {
    .name = "dots3note",
    .added = LLAMA_CHANGE_DOTS3NOTE,
    .arr_keys = arr_keys,
    .mla_same_kv_types = true,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_shared_count", "expert_feed_forward_length", "leading_dense_block_count",
            "expert_gating_func", "attention.q_lora_rank", "attention.kv_lora_rank",
            "attention.key_length_mla", "attention.value_length_mla",
            "attention.kv_lora_rank_swa", "attention.key_length_mla_swa",
            "attention.value_length_mla_swa", "attention.sliding_window",
            "rope.freq_base_swa", "attention.indexer.head_count",
            "attention.indexer.key_length", "attention.indexer.top_k", NULL },
    .check = check,
    .mem = GGFIT_MEM_KV,
    /* attention.sliding_window_pattern read with get_arr after
     * nextn_predict_layers: one value a trunk layer */
    .swa_key = GGFIT_SWA_KEY_LAYERS,
    .swa_key_main = true,
    .swa_always = true,   /* swa_type is set whatever sliding_window says */
    .index_k = index_k,
    .build = build_dots3note,
};
