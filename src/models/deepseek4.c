/*
 * deepseek4.c - src/models/deepseek4.cpp: DeepSeek V4. Attention keeps one
 * K head per token (K-only, as MLA) in a raw sliding-window cache, and per
 * layer a compressed cache of its past: CSA layers (compression ratio 4)
 * with a lightning indexer that picks the compressed rows to attend, HCA
 * layers (ratio 128) that attend all of theirs, and uncompressed ones
 * (ratio 0). The memory is llama_kv_cache_dsv4 (src/project/kv_cache.c,
 * the compress_ratio hook). Hyper-connections carry 4 residual streams;
 * the first hash_layer_count MoE layers route by token id. The NextN
 * blocks load nothing in the main context but keep raw and compressed
 * cells there. The graph is the reserve's: the compressors' inputs sized
 * by dsv4_build_reserve_comp_plan, llama.cpp's fused ops (the
 * hyper-connections' DSV4_HC_*, the lightning indexer), which its probes
 * always keep.
 */
#include <stdio.h>
#include <string.h>

#include "llama/check.h"
#include "llama/graph.h"
#include "versions/version.h"

/* An integer of the file, one of array key's elements (j-th), else def. */
static uint32_t key_elem(const ggfit_model *m, const char *suffix, uint32_t j, uint32_t def)
{
    const ggfit_gguf *g = ggfit_model_gguf(m);
    char key[160];
    snprintf(key, sizeof key, "%s.%s", ggfit_model_hparams(m)->arch, suffix);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v, e;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v))
        return def;
    if (v.type == GGFIT_GGUF_ARRAY) {
        ggfit_value_iter it = { 0 };
        bool found = false;
        for (uint32_t k = 0; !found && ggfit_value_next(&v, &it, &e); k++)
            found = k == j;
        if (!found)
            return def;
    } else {
        e = v;
    }
    bool is_signed = e.type == GGFIT_GGUF_INT32 || e.type == GGFIT_GGUF_INT64 ||
                     e.type == GGFIT_GGUF_INT16 || e.type == GGFIT_GGUF_INT8;
    return (uint32_t)(is_signed ? (uint64_t)e.i : e.u);
}

/* llama_model_loader::get_key_or_arr of a float key, element il: an array
 * of FLOAT32 with one value per block (block_count, NextN blocks included:
 * another length is refused) or one scalar for every layer. False when
 * the key is absent or llama.cpp would refuse it. */
static bool key_f32_layer(const ggfit_model *m, const char *suffix, uint32_t il, float *out)
{
    const ggfit_gguf *g = ggfit_model_gguf(m);
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    char key[160];
    snprintf(key, sizeof key, "%s.%s", hp->arch, suffix);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v, e;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v))
        return false;
    if (v.type != GGFIT_GGUF_ARRAY) {
        switch (v.type) {
        case GGFIT_GGUF_FLOAT32: case GGFIT_GGUF_FLOAT64: *out = (float)v.f; return true;
        case GGFIT_GGUF_INT8: case GGFIT_GGUF_INT16: case GGFIT_GGUF_INT32:
        case GGFIT_GGUF_INT64: *out = (float)v.i; return true;
        case GGFIT_GGUF_UINT8: case GGFIT_GGUF_UINT16: case GGFIT_GGUF_UINT32:
        case GGFIT_GGUF_UINT64: case GGFIT_GGUF_BOOL: *out = (float)v.u; return true;
        default: return false;
        }
    }
    if (v.elem_type != GGFIT_GGUF_FLOAT32 || v.n != hp->n_layer || il >= v.n)
        return false;
    ggfit_value_iter it = { 0 };
    for (uint32_t k = 0; ggfit_value_next(&v, &it, &e); k++)
        if (k == il) {
            *out = (float)e.f;
            return true;
        }
    return false;
}

/* hparams.swiglu_clamp_exp[il] and swiglu_clamp_shexp[il] (the latter the
 * former's when absent); false when llama.cpp would refuse the keys. */
static bool clamps(const ggfit_model *m, uint32_t il, float *lim, float *lim_sh)
{
    if (!key_f32_layer(m, "swiglu_clamp_exp", il, lim))
        return false;
    char key[160];
    snprintf(key, sizeof key, "%s.swiglu_clamp_shexp", ggfit_model_hparams(m)->arch);
    if (ggfit_gguf_find_key(ggfit_model_gguf(m), key) < 0) {
        *lim_sh = *lim;
        return true;
    }
    return key_f32_layer(m, "swiglu_clamp_shexp", il, lim_sh);
}

/* hparams.dsv4_compress_ratios[il] (attention.compress_ratios, one per
 * block, NextN blocks included). */
static uint32_t compress_ratio(const ggfit_model *m, uint32_t il)
{
    return key_elem(m, "attention.compress_ratios", il, 0);
}

/* The lightning indexer's key length (its compressed cache and state). */
static uint32_t index_k(const ggfit_model *m, uint32_t il)
{
    (void)il;
    return key_elem(m, "attention.indexer.key_length", 0, 0);
}

/* ---- the graph (llama_model_deepseek4::graph) ---------------------------- */

enum { CSA = 4, HCA = 128 };

/* One compressed cache's graph inputs (llm_graph_input_dsv4::comp_input,
 * from the reserve plan dsv4_build_reserve_comp_plan); -1 when absent. */
typedef struct comp_in {
    int32_t pos, persist_src, persist_dst, read, write, write_pos, mask, rot;
} comp_in;

typedef struct dsv4 {
    int64_t n_embd, n_head, nt, hk, rot, nope, n_groups, o_lora, hc, ih, n_ih;
    int64_t ns;                 /* streams: the caches' and the graph's */
    int64_t n_raw, n_csa, n_hca; /* cells of the raw, CSA/indexer, HCA caches */
    uint32_t top_k;
    int32_t tokens, k_idxs, mask_raw, rot_raw;
    comp_in csa, hca, lid;
} dsv4;

static uint64_t f32_row(int64_t n)
{
    return ggfit_row_bytes(GGFIT_TYPE_F32, (uint64_t)n);
}

static int32_t input_1d(bctx *b, uint32_t type, int64_t n)
{
    return n ? gg_input(b->g, gg_new_1d(b->g, type, n), NULL) : -1;
}

/* llama_kv_cache::build_input_k_rot: attn_rot_k of a cache whose heads are
 * head (0: no layer), as the cache's constructor decides it. */
static int32_t k_rot(bctx *b, const dsv4 *d, int64_t head, int64_t head_full, bool *bad)
{
    bool rot = (head > 0 && ggfit_type_is_quantized(b->p->type_k) && head_full % 64 == 0) ||
               head_full == d->ih;
    if (!rot)
        return -1;
    if (head <= 0) {
        *bad = true;   /* llama.cpp loops forever on a cache without layers */
        return -1;
    }
    int64_t nrot = 64;
    do
        nrot *= 2;
    while (head % nrot == 0);
    nrot /= 2;
    return gg_input(b->g, gg_new_2d(b->g, GGFIT_TYPE_F32, nrot, nrot), "attn_inp_k_rot");
}

/* dsv4_build_comp_inputs of one plan: ratio, overlapping windows (CSA and
 * the indexer), n_kv cells, the state's rows per stream. */
static void comp_inputs(bctx *b, const dsv4 *d, comp_in *c, int64_t ratio, bool overlap,
                        int64_t n_kv, int64_t state_size, uint32_t mask_type)
{
    const gb_params *p = b->p;
    int64_t nt = d->nt, n_seqs = p->n_seqs ? p->n_seqs : 1;
    int64_t n_seq_tokens = nt / n_seqs;
    if (n_seq_tokens < 1)
        n_seq_tokens = 1;
    int64_t n_blocks = n_seqs * ((n_seq_tokens + ratio - 1) / ratio);
    if (n_blocks < 1)
        n_blocks = 1;
    int64_t rows = state_size * d->ns, n_persist = nt < rows ? nt : rows;
    c->pos = input_1d(b, GGFIT_TYPE_I32, nt);
    c->persist_src = input_1d(b, GGFIT_TYPE_I32, n_persist);
    c->persist_dst = input_1d(b, GGFIT_TYPE_I32, n_persist);
    c->read = input_1d(b, GGFIT_TYPE_I32, (overlap ? 2 : 1) * ratio * n_blocks);
    c->write = input_1d(b, GGFIT_TYPE_I64, n_blocks);
    c->write_pos = input_1d(b, GGFIT_TYPE_I32, n_blocks);
    c->mask = gg_input(b->g, gg_new_4d(b->g, mask_type, n_kv, nt / d->ns, 1, d->ns), NULL);
}

/* build_inp_dsv4 */
static bool dsv4_inputs(bctx *b, dsv4 *d, bool has_csa, bool has_hca)
{
    gg_graph *g = b->g;
    const gb_params *p = b->p;
    int64_t nt = d->nt, ns = d->ns;
    uint32_t mt = p->flash_attn ? GGFIT_TYPE_F16 : GGFIT_TYPE_F32;
    bool bad = false;
    d->k_idxs = input_1d(b, GGFIT_TYPE_I64, nt);
    d->mask_raw = gg_input(g, gg_new_4d(g, mt, d->n_raw, nt / ns, 1, ns), "attn_inp_kq_mask");
    d->rot_raw = k_rot(b, d, d->hk, d->hk, &bad);
    comp_inputs(b, d, &d->csa, CSA, true, d->n_csa, 2 * CSA, mt);
    comp_inputs(b, d, &d->hca, HCA, false, d->n_hca, HCA, mt);
    /* the fused indexer's mask is F16 (llama.cpp keeps it: it always runs
     * on its layer's device) */
    comp_inputs(b, d, &d->lid, CSA, true, d->n_csa, 2 * CSA, GGFIT_TYPE_F16);
    d->csa.rot = k_rot(b, d, has_csa ? d->hk : 0, d->hk, &bad);
    d->hca.rot = k_rot(b, d, has_hca ? d->hk : 0, d->hk, &bad);
    d->lid.rot = k_rot(b, d, has_csa ? d->ih : 0, d->ih, &bad);
    return !bad;
}

/* A K-only cache of layer il: head values a cell, cells a stream. */
static int32_t cache_k(bctx *b, const dsv4 *d, int il, int64_t head, int64_t cells)
{
    char name[GG_NAME] = "";
    int64_t ne[3] = { head, cells, d->ns };
    if (b->g->names)   /* gg_memory copies it only then */
        snprintf(name, sizeof name, "cache_k_l%d", il);
    int32_t t = gg_memory(b->g, NULL, name, b->p->type_k, 3, ne, b->p->kv_buft[il], false);
    b->g->t[t].il = il;
    return t;
}

/* llama_kv_cache::cpy_k */
static int32_t cpy_k(bctx *b, int32_t ck, int32_t k, int32_t idxs)
{
    const gg_tensor *t = &b->g->t[k];
    int32_t kc = gb_view_2d(b, k, t->ne[0] * t->ne[1], t->ne[2], t->nb[2], 0);
    const gg_tensor *c = &b->g->t[ck];
    int32_t dst = ck;
    if (c->ne[2] > 1)
        dst = gb_reshape_2d(b, ck, c->ne[0], c->ne[1] * c->ne[2]);
    return gg_set_rows(b->g, dst, kc, idxs);
}

/* llama_kv_cache::get_k: all cells and streams, one head. */
static int32_t get_k(bctx *b, int32_t ck)
{
    const gg_tensor *t = &b->g->t[ck];
    int64_t nk = t->ne[0], kv = t->ne[1], ns = t->ne[2];
    uint32_t type = t->type;
    return gb_view_4d(b, ck, nk, 1, kv, ns, ggfit_row_bytes(type, (uint64_t)nk),
                      ggfit_row_bytes(type, (uint64_t)nk),
                      ggfit_row_bytes(type, (uint64_t)(nk * kv)), 0);
}

/* A compressor state tensor of layer il (llama_dsv4_comp_state): n values,
 * rows a stream; and get_kv_all's view of it. */
static int32_t state_all(bctx *b, const dsv4 *d, int il, const char *what, int64_t n,
                         int64_t rows)
{
    char name[GG_NAME] = "";
    int64_t ne[3] = { n, rows, d->ns };
    if (b->g->names)   /* gg_memory copies it only then */
        snprintf(name, sizeof name, "dsv4_%s_l%d", what, il);
    int32_t t = gg_memory(b->g, NULL, name, GGFIT_TYPE_F32, 3, ne, b->p->kv_buft[il], false);
    b->g->t[t].il = il;
    return gb_view_2d(b, t, n, rows * d->ns, f32_row(n), 0);
}

static int32_t same(bctx *b, uint8_t op, uint32_t type, int32_t a)
{
    const gg_tensor *t = &b->g->t[a];
    int64_t ne[4] = { t->ne[0], t->ne[1], t->ne[2], t->ne[3] };
    return gg_op_shape(b->g, op, type, 4, ne, 1, &a);
}

static int32_t view_1d(bctx *b, int32_t t, int64_t ne0, int64_t i0)
{
    int64_t ne[1] = { ne0 };
    uint64_t nb[1] = { ggfit_row_bytes(b->g->t[t].type, 1) };
    return gg_view(b->g, t, 1, ne, nb, ggfit_row_bytes(b->g->t[t].type, (uint64_t)i0));
}

/* dsv4_view_2d: rows of t from element i0. */
static int32_t view_2d(bctx *b, int32_t t, int64_t ne0, int64_t ne1, int64_t i0)
{
    return gb_view_2d(b, t, ne0, ne1, b->g->t[t].nb[1],
                      ggfit_row_bytes(b->g->t[t].type, (uint64_t)i0));
}

static int32_t permute_cont(bctx *b, int32_t t)
{
    return gg_cont(b->g, gg_permute(b->g, t, 1, 0, 2, 3));
}

/* dsv4_append_zero_row */
static int32_t append_zero_row(bctx *b, int32_t t)
{
    int64_t ne0 = gb_ne(b, t, 0);
    int32_t row = gg_scale(b->g, view_1d(b, t, ne0, 0));
    row = gb_reshape_2d(b, row, ne0, 1);
    return gg_concat(b->g, t, row, 1);
}

/* RoPE on the last rot values of each head of x (head x n1 x n2, F32,
 * contiguous), a backward rope when back: with ROPE_SET_OFFSET one rope of
 * the whole heads past an offset of head - rot values, before it views of
 * both parts, the rope of the second and their concat. */
static int32_t rope_tail(bctx *b, int32_t x, int64_t head, int64_t rot, int32_t pos, bool back)
{
    gg_graph *g = b->g;
    int32_t r;
    if (ggfit__llama_has(b->p->llama_build, LLAMA_CHANGE_ROPE_SET_OFFSET)) {
        r = gg_rope(g, x, pos, -1);
        if (back)
            g->t[r].op = GGFIT_OP_ROPE_BACK;   /* ggml_rope_ext_back */
        return r;
    }
    int64_t nope = head - rot, n1 = gb_ne(b, x, 1), n2 = gb_ne(b, x, 2);
    uint64_t nb1 = f32_row(head);
    int32_t x_nope = gb_view_3d(b, x, nope, n1, n2, nb1, nb1 * (uint64_t)n1, 0);
    int32_t x_pe = gb_view_3d(b, x, rot, n1, n2, nb1, nb1 * (uint64_t)n1, f32_row(nope));
    r = gg_rope(g, x_pe, pos, -1);
    if (back)
        g->t[r].op = GGFIT_OP_ROPE_BACK;
    return gg_concat(g, x_nope, r, 0);
}

/* The compressed rows' norm and RoPE (after the weighted sum): comp is
 * head x 1 x n_blocks. */
static int32_t comp_finish(bctx *b, const dsv4 *d, int32_t comp, int32_t norm, int64_t head,
                           int32_t pos, int il)
{
    comp = gb_norm(b, comp, norm, il);
    return rope_tail(b, comp, head, d->rot, pos, false);
}

/* build_overlap_compressed_kv_from_state */
static int32_t overlap_compress(bctx *b, const dsv4 *d, int32_t kv_state, int32_t score_state,
                                const comp_in *c, int32_t norm, int64_t ratio, int64_t head,
                                int il)
{
    gg_graph *g = b->g;
    int64_t n_blocks = gb_ne(b, c->write_pos, 0), n_read = ratio * n_blocks;
    kv_state = append_zero_row(b, kv_state);
    score_state = append_zero_row(b, score_state);
    int32_t kv_rows = gg_get_rows(g, kv_state, c->read);
    int32_t score_rows = gg_get_rows(g, score_state, c->read);
    uint64_t nkv = g->t[kv_rows].nb[1], nsc = g->t[score_rows].nb[1];
    int32_t kv_prev = gg_cont(g, gb_view_2d(b, kv_rows, head, n_read, nkv, 0));
    kv_prev = gb_reshape_3d(b, kv_prev, head, ratio, n_blocks);
    int32_t score_prev = gg_cont(g, gb_view_2d(b, score_rows, head, n_read, nsc, 0));
    score_prev = gb_reshape_3d(b, score_prev, head, ratio, n_blocks);
    int32_t kv_cur = gg_cont(g, gb_view_2d(b, kv_rows, head, n_read, nkv,
                                           (uint64_t)n_read * nkv + f32_row(head)));
    kv_cur = gb_reshape_3d(b, kv_cur, head, ratio, n_blocks);
    int32_t score_cur = gg_cont(g, gb_view_2d(b, score_rows, head, n_read, nsc,
                                              (uint64_t)n_read * nsc + f32_row(head)));
    score_cur = gb_reshape_3d(b, score_cur, head, ratio, n_blocks);
    int32_t values = permute_cont(b, gg_concat(g, kv_prev, kv_cur, 1));
    int32_t scores = permute_cont(b, gg_concat(g, score_prev, score_cur, 1));
    int32_t w = gg_soft_max(g, scores, -1, -1);
    int32_t comp = gg_sum_rows(g, gg_binary(g, GGFIT_OP_MUL, values, w));
    comp = permute_cont(b, comp);
    return comp_finish(b, d, comp, norm, head, c->write_pos, il);
}

/* build_hca_compressed_kv_from_state */
static int32_t hca_compress(bctx *b, const dsv4 *d, int32_t kv_state, int32_t score_state,
                            const comp_in *c, int32_t norm, int il)
{
    gg_graph *g = b->g;
    int64_t n_blocks = gb_ne(b, c->write_pos, 0), head = d->hk;
    int32_t kv = gb_reshape_3d(b, gg_get_rows(g, kv_state, c->read), head, HCA, n_blocks);
    int32_t score = gb_reshape_3d(b, gg_get_rows(g, score_state, c->read), head, HCA, n_blocks);
    int32_t values = permute_cont(b, kv);
    int32_t scores = permute_cont(b, score);
    int32_t w = gg_soft_max(g, scores, -1, -1);
    int32_t comp = gg_sum_rows(g, gg_binary(g, GGFIT_OP_MUL, values, w));
    comp = permute_cont(b, comp);
    return comp_finish(b, d, comp, norm, head, c->write_pos, il);
}

/* One compressor's state update for layer il (CSA, HCA or the indexer):
 * the ubatch's rows and scores, the compressed rows written to the cache
 * ck, the state's last rows persisted. */
static void compressor(bctx *b, const dsv4 *d, int32_t cur, int il, const comp_in *c,
                       const char *wkv, const char *wgate, const char *ape, const char *norm,
                       const char *name, int64_t head, int64_t ratio, int32_t ck)
{
    gg_graph *g = b->g;
    bool overlap = ratio == CSA;
    int64_t n_state = (overlap ? 2 : 1) * head, size = overlap ? 2 * ratio : ratio;
    int32_t state_kv = gg_mul_mat(g, gb_required(b, wkv, il), cur);
    int32_t state_score = gg_mul_mat(g, gb_required(b, wgate, il), cur);
    int32_t ape_rows = gg_get_rows(g, gb_required(b, ape, il), c->pos);
    state_score = gg_binary(g, GGFIT_OP_ADD, state_score, ape_rows);
    char what[32];
    snprintf(what, sizeof what, "%s_state_kv", name);
    int32_t all_kv = state_all(b, d, il, what, n_state, size);
    snprintf(what, sizeof what, "%s_state_score", name);
    int32_t all_score = state_all(b, d, il, what, n_state, size);
    int64_t n_rows = size * d->ns;
    int32_t base_kv = view_2d(b, all_kv, n_state, n_rows, 0);
    int32_t base_score = view_2d(b, all_score, n_state, n_rows, 0);
    int32_t src_kv = gg_concat(g, base_kv, state_kv, 1);
    int32_t src_score = gg_concat(g, base_score, state_score, 1);
    int32_t comp = overlap ? overlap_compress(b, d, src_kv, src_score, c, gb_required(b, norm, il),
                                              ratio, head, il)
                           : hca_compress(b, d, src_kv, src_score, c, gb_required(b, norm, il), il);
    if (c->rot >= 0)
        comp = gb_hadamard(b, comp, c->rot);
    gg_expand(g, cpy_k(b, ck, comp, c->write));
    int32_t persist_kv = gg_get_rows(g, state_kv, c->persist_src);
    int32_t persist_score = gg_get_rows(g, state_score, c->persist_src);
    gg_expand(g, gg_set_rows(g, all_kv, persist_kv, c->persist_dst));
    gg_expand(g, gg_set_rows(g, all_score, persist_score, c->persist_dst));
}

/* build_lid_top_k: the lightning indexer's top_k compressed rows. */
static int32_t lid_top_k(bctx *b, const dsv4 *d, int32_t qr, int32_t cur, int32_t ck, int il)
{
    gg_graph *g = b->g;
    int64_t ih = d->ih, n_ih = d->n_ih, nt = gb_ne(b, cur, 1);
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.attn_q_b.weight", il), qr);
    q = gb_reshape_3d(b, q, ih, n_ih, nt);
    q = rope_tail(b, q, ih, d->rot, b->inp_pos, false);
    q = gb_hadamard(b, q, d->lid.rot);
    int32_t w = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.proj.weight", il), cur);
    w = gg_scale(g, w);
    int32_t k = get_k(b, ck);
    const gg_tensor *tk = &g->t[k];
    int64_t n_lid = gb_ne(b, d->lid.mask, 0);
    k = gb_view_4d(b, k, tk->ne[0], tk->ne[1], n_lid, tk->ne[3], tk->nb[1], tk->nb[2], tk->nb[3], 0);
    int64_t ns = gb_ne(b, k, 3);
    const gg_tensor *tq = &g->t[q];
    q = gb_view_4d(b, q, tq->ne[0], tq->ne[1], tq->ne[2] / ns, ns, tq->nb[1], tq->nb[2],
                   tq->nb[3] / (uint64_t)ns, 0);
    const gg_tensor *tw = &g->t[w];
    w = gb_view_4d(b, w, tw->ne[0], tw->ne[1] / ns, tw->ne[2], ns, tw->nb[1],
                   tw->nb[2] / (uint64_t)ns, tw->nb[3] / (uint64_t)ns, 0);
    tk = &g->t[k];
    tq = &g->t[q];
    int64_t sne[4] = { tk->ne[2], tq->ne[2], 1, tq->ne[3] };
    int32_t src[4] = { q, k, w, d->lid.mask };
    int32_t score = gg_op_shape(g, GGFIT_OP_LIGHTNING_INDEXER, GGFIT_TYPE_F32, 4, sne, 4, src);
    const gg_tensor *ts = &g->t[score];
    int64_t n_top = ts->ne[0] < (int64_t)d->top_k ? ts->ne[0] : (int64_t)d->top_k;
    int64_t ne[4] = { n_top, ts->ne[1], ts->ne[2], ts->ne[3] };
    int32_t top = gg_op_shape(g, GGFIT_OP_TOP_K, GGFIT_TYPE_I32, 4, ne, 1, &score);
    return gg_cont(g, top);
}

/* build_top_k_mask */
static int32_t top_k_mask(bctx *b, int32_t mask, int32_t top)
{
    gg_graph *g = b->g;
    int32_t all = same(b, GGFIT_OP_FILL, g->t[mask].type, mask);
    const gg_tensor *ta = &g->t[all];
    all = gb_view_4d(b, all, 1, ta->ne[0], ta->ne[1], ta->ne[3], ta->nb[0], ta->nb[1], ta->nb[2], 0);
    const gg_tensor *tt = &g->t[top];
    int32_t top3 = gb_view_4d(b, top, tt->ne[0], tt->ne[1], tt->ne[3], 1, tt->nb[1], tt->nb[2],
                              (uint64_t)tt->ne[3] * tt->nb[3], 0);
    const gg_tensor *t3 = &g->t[top3];
    int32_t zeros = gg_new_4d(g, b->p->flash_attn ? GGFIT_TYPE_F16 : GGFIT_TYPE_F32, 1, t3->ne[0],
                              t3->ne[1], t3->ne[2]);
    zeros = same(b, GGFIT_OP_FILL, g->t[zeros].type, zeros);
    int32_t m = gg_set_rows(g, all, zeros, top3);
    const gg_tensor *tm = &g->t[m];
    m = gb_view_4d(b, m, tm->ne[1], tm->ne[2], 1, tm->ne[3], tm->nb[2], tm->nb[3], tm->nb[3], 0);
    return gg_binary(g, GGFIT_OP_ADD, m, mask);
}

/* build_raw_attention, build_hca_attention, build_csa_lid_attention: the
 * raw cache's keys, with the compressed cache's appended (CSA: its mask
 * opened at the indexer's top_k rows only). */
static int32_t attend(bctx *b, const dsv4 *d, int32_t q, int32_t kv, int32_t ck_raw,
                      int32_t ck_comp, const comp_in *c, int32_t top, int il)
{
    gg_graph *g = b->g;
    if (d->rot_raw >= 0) {
        q = gb_hadamard(b, q, d->rot_raw);
        kv = gb_hadamard(b, kv, d->rot_raw);
    }
    gg_expand(g, q);
    gg_expand(g, kv);
    gg_expand(g, cpy_k(b, ck_raw, kv, d->k_idxs));
    int32_t k = get_k(b, ck_raw), mask = d->mask_raw;
    if (ck_comp >= 0) {
        int32_t kc = get_k(b, ck_comp);
        const gg_tensor *t = &g->t[kc];
        kc = gb_view_4d(b, kc, t->ne[0], t->ne[1], gb_ne(b, c->mask, 0), t->ne[3], t->nb[1],
                        t->nb[2], t->nb[3], 0);
        k = gg_concat(g, k, kc, 2);
        int32_t cm = top >= 0 ? top_k_mask(b, c->mask, top) : c->mask;
        mask = gg_concat(g, d->mask_raw, cm, 0);
    }
    int32_t out = gb_attn_mha_v(b, q, k, k, mask,
                                gb_required(b, "blk.%d.attn_sinks.weight", il), -1, il);
    if (d->rot_raw >= 0)
        out = gb_hadamard(b, out, d->rot_raw);
    return out;
}

/* build_attention_impl (the trunk's layers) */
static int32_t dsv4_attention(bctx *b, const dsv4 *d, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int64_t nt = d->nt, hk = d->hk, nh = d->n_head, rot = d->rot;
    uint32_t ratio = compress_ratio(b->p->m, (uint32_t)il);
    int32_t qr = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_a.weight", il), cur);
    qr = gb_norm(b, qr, gb_required(b, "blk.%d.attn_q_a_norm.weight", il), il);
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_b.weight", il), qr);
    q = gg_rms_norm(g, gb_reshape_3d(b, q, hk, nh, nt));
    q = rope_tail(b, q, hk, rot, b->inp_pos, false);
    int32_t kv = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv.weight", il), cur);
    kv = gb_norm(b, kv, gb_required(b, "blk.%d.attn_kv_a_norm.weight", il), il);
    kv = gb_reshape_3d(b, kv, hk, 1, nt);
    kv = rope_tail(b, kv, hk, rot, b->inp_pos, false);

    int32_t ck_raw = cache_k(b, d, il, hk, d->n_raw), ck_comp = -1, ck_lid = -1, top = -1;
    const comp_in *c = NULL;
    if (ratio == HCA) {
        ck_comp = cache_k(b, d, il, hk, d->n_hca);
        c = &d->hca;
        compressor(b, d, cur, il, c, "blk.%d.attn_compressor_kv.weight",
                   "blk.%d.attn_compressor_gate.weight", "blk.%d.attn_compressor_ape.weight",
                   "blk.%d.attn_compressor_norm.weight", "hca", hk, HCA, ck_comp);
    } else if (ratio == CSA) {
        ck_comp = cache_k(b, d, il, hk, d->n_csa);
        ck_lid = cache_k(b, d, il, d->ih, d->n_csa);
        c = &d->csa;
        compressor(b, d, cur, il, c, "blk.%d.attn_compressor_kv.weight",
                   "blk.%d.attn_compressor_gate.weight", "blk.%d.attn_compressor_ape.weight",
                   "blk.%d.attn_compressor_norm.weight", "csa", hk, CSA, ck_comp);
        compressor(b, d, cur, il, &d->lid, "blk.%d.indexer_compressor_kv.weight",
                   "blk.%d.indexer_compressor_gate.weight", "blk.%d.indexer_compressor_ape.weight",
                   "blk.%d.indexer_compressor_norm.weight", "lid", d->ih, CSA, ck_lid);
        top = lid_top_k(b, d, qr, cur, ck_lid, il);
    }
    int32_t out = attend(b, d, q, kv, ck_raw, ck_comp, c, top, il);

    out = gb_reshape_3d(b, out, hk, nh, nt);
    out = rope_tail(b, out, hk, rot, b->inp_pos, true);
    out = gb_reshape_3d(b, out, nh / d->n_groups * hk, d->n_groups, nt);
    out = gg_permute(g, out, 0, 2, 1, 3);
    /* wo_a is loaded 3-D (TENSOR_ALLOW_RESHAPE): per group */
    int32_t wo_a = gb_required(b, "blk.%d.attn_output_a.weight", il);
    gg_tensor *w = &g->t[wo_a];
    if (w->ne[1] % d->n_groups) {
        b->missing = true;
        return out;
    }
    w->ne[1] /= d->n_groups;
    w->ne[2] = d->n_groups;
    w->nb[2] = w->nb[1] * (uint64_t)w->ne[1];
    w->nb[3] = w->nb[2] * (uint64_t)w->ne[2];
    int32_t oa = gg_mul_mat(g, wo_a, out);
    oa = gg_permute(g, oa, 0, 2, 1, 3);
    int64_t ne[2] = { d->o_lora * d->n_groups, nt };
    oa = gg_cont_shape(g, oa, 2, ne);
    return gg_mul_mat(g, gb_required(b, "blk.%d.attn_output_b.weight", il), oa);
}

/* build_hc_pre: the streams mixed into one input (fused), post and comb
 * for build_hc_post. */
static int32_t hc_pre(bctx *b, const dsv4 *d, int32_t x, const char *which, int il,
                      int32_t *post, int32_t *comb)
{
    gg_graph *g = b->g;
    char fn[64], sc[64], ba[64];
    snprintf(fn, sizeof fn, "blk.%%d.hc_%s_fn.weight", which);
    snprintf(sc, sizeof sc, "blk.%%d.hc_%s_scale.weight", which);
    snprintf(ba, sizeof ba, "blk.%%d.hc_%s_base.weight", which);
    int64_t hc = d->hc, nt = gb_ne(b, x, 2);
    int32_t w_fn = gb_required(b, fn, il), w_sc = gb_required(b, sc, il);
    int32_t w_ba = gb_required(b, ba, il);
    int32_t flat = gg_rms_norm(g, gb_reshape_2d(b, x, hc * d->n_embd, nt));
    int32_t mixes = gg_mul_mat(g, w_fn, flat);
    int32_t pre = view_2d(b, mixes, hc, nt, 0);
    pre = gg_binary(g, GGFIT_OP_MUL, pre, view_1d(b, w_sc, 1, 0));
    pre = gg_binary(g, GGFIT_OP_ADD, pre, view_1d(b, w_ba, hc, 0));
    pre = gg_scale(g, gg_unary_op(g, GGFIT_OP_UNARY, pre));
    int32_t p = view_2d(b, mixes, hc, nt, hc);
    p = gg_binary(g, GGFIT_OP_MUL, p, view_1d(b, w_sc, 1, 1));
    p = gg_binary(g, GGFIT_OP_ADD, p, view_1d(b, w_ba, hc, hc));
    *post = gg_scale(g, gg_unary_op(g, GGFIT_OP_UNARY, p));
    int64_t cne[3] = { hc, hc, nt };
    int32_t csrc[3] = { mixes, w_sc, w_ba };
    *comb = gg_op_shape(g, GGFIT_OP_DSV4_HC_COMB, GGFIT_TYPE_F32, 3, cne, 3, csrc);
    int64_t ne[2] = { d->n_embd, nt };
    int32_t src[2] = { x, pre };
    return gg_op_shape(g, GGFIT_OP_DSV4_HC_PRE, GGFIT_TYPE_F32, 2, ne, 2, src);
}

static int32_t hc_post(bctx *b, const dsv4 *d, int32_t x, int32_t residual, int32_t post,
                       int32_t comb)
{
    int64_t ne[3] = { d->n_embd, d->hc, gb_ne(b, x, 1) };
    int32_t src[4] = { x, residual, post, comb };
    return gg_op_shape(b->g, GGFIT_OP_DSV4_HC_POST, GGFIT_TYPE_F32, 3, ne, 4, src);
}

/* The routed experts (hash-routed in the first hash_layer_count layers)
 * plus the shared ones, both with DeepSeek V4's clamped SwiGLU. */
static int32_t dsv4_ffn(bctx *b, const dsv4 *d, int32_t cur, int il)
{
    gg_graph *g = b->g;
    bool hash = (uint32_t)il < (uint32_t)gb_key(b, "hash_layer_count", 0);
    float clamp_exp = 0, clamp_shexp = 0;
    clamps(b->p->m, (uint32_t)il, &clamp_exp, &clamp_shexp);
    gb_moe o = {
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
        .gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .gate_up_exps = -1, .exp_probs_b = -1, .gate_inp_b = -1,
        .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .act = GB_MOE_SILU, .gating = GB_GATING_SQRT_SOFTPLUS,
        .norm_w = gb_key(b, "expert_weights_norm", 0) != 0,
        .w_scale = (float)gb_key(b, "expert_weights_scale", 0),
        .n_expert = b->hp->n_expert, .n_expert_used = b->hp->n_expert_used,
        .swiglu_limit = clamp_exp, .clamp_gate = true,
    };
    if (hash) {
        o.has_selected_in = true;
        o.selected_in = gg_get_rows(g, gb_required(b, "blk.%d.ffn_gate_tid2eid.weight", il),
                                    d->tokens);
    } else {
        o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
    }
    int32_t moe = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe, "ffn_moe_out", il);
    int32_t up = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up_shexp.weight", il), cur);
    int32_t gate = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate_shexp.weight", il), cur);
    int32_t act;
    if (clamp_shexp > 1e-6f) {
        up = gg_clamp(g, up);
        gate = gg_clamp(g, gate);
    }
    act = gg_glu_split(g, gate, up);
    int32_t sh = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down_shexp.weight", il), act);
    return gg_binary(g, GGFIT_OP_ADD, moe, sh);
}

/* llama_model_deepseek4::graph */
static void build_deepseek4(bctx *b)
{
    gg_graph *g = b->g;
    const gb_params *p = b->p;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)(hp->n_layer - hp->n_nextn);
    dsv4 d = {
        .n_embd = hp->n_embd, .n_head = ggfit_model_layer(p->m, 0)->n_head, .nt = p->n_tokens,
        .hk = hp->n_embd_head_k, .rot = hp->n_rot,
        .n_groups = (int64_t)gb_key(b, "attention.output_group_count", 0),
        .o_lora = (int64_t)gb_key(b, "attention.output_lora_rank", 0),
        .hc = (int64_t)gb_key(b, "hyper_connection.count", 0),
        .ih = (int64_t)gb_key(b, "attention.indexer.key_length", 0),
        .n_ih = (int64_t)gb_key(b, "attention.indexer.head_count", 0),
        .top_k = (uint32_t)gb_key(b, "attention.indexer.top_k", 0),
        .ns = p->n_seqs ? p->n_seqs : 1,
        .n_raw = p->n_kv_swa,
    };
    d.nope = d.hk - d.rot;
    d.n_csa = (int64_t)GGFIT_PAD((p->n_kv + CSA - 1) / CSA, 256);
    d.n_hca = (int64_t)GGFIT_PAD((p->n_kv + HCA - 1) / HCA, 256);
    /* Gated by what the graph asserts, and by clamp keys llama.cpp reads
     * (per layer or one for all) or refuses. */
    if (n_layer < 1 || d.nope < 1 || d.hc != 4 || d.n_groups < 1 || d.n_head % d.n_groups ||
        hp->n_embd_head_v != hp->n_embd_head_k || d.ih <= d.rot || d.n_ih < 1 || d.top_k < 1 ||
        d.nt % d.ns || hp->n_head_kv_max != 1) {
        b->missing = true;
        return;
    }
    for (int il = 0; il < n_layer; il++) {
        float ce, cs;
        if (!clamps(p->m, (uint32_t)il, &ce, &cs)) {
            b->missing = true;
            return;
        }
    }
    bool has_csa = false, has_hca = false;
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        uint32_t r = compress_ratio(p->m, il);
        has_csa |= r == CSA;
        has_hca |= r == HCA;
    }
    int32_t inp = gb_inp_embd(b);
    d.tokens = g->t[inp].src[1];
    b->inp_pos = input_1d(b, GGFIT_TYPE_I32, d.nt);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
    if (!dsv4_inputs(b, &d, has_csa, has_hca)) {
        b->missing = true;
        return;
    }
    gg_expand(g, d.mask_raw);
    int32_t inpL = gb_reshape_3d(b, inp, d.n_embd, 1, d.nt);
    int64_t rne[4] = { d.n_embd, d.hc, d.nt, 1 };
    inpL = gg_op_shape(g, GGFIT_OP_REPEAT, GGFIT_TYPE_F32, 4, rne, 1, &inpL);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t residual = inpL, post, comb;
        int32_t cur = hc_pre(b, &d, inpL, "attn", il, &post, &comb);
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        cur = dsv4_attention(b, &d, cur, il);
        if (b->missing)
            return;
        inpL = hc_post(b, &d, cur, residual, post, comb);
        residual = inpL;
        cur = hc_pre(b, &d, inpL, "ffn", il, &post, &comb);
        gg_expand(g, residual);
        gg_expand(g, post);
        gg_expand(g, comb);
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = dsv4_ffn(b, &d, cur, il);
        inpL = hc_post(b, &d, cur, residual, post, comb);
    }
    if (b->missing)
        return;
    int32_t flat = gb_reshape_2d(b, inpL, d.n_embd * d.hc, d.nt);
    flat = gg_get_rows(g, flat, b->inp_out_ids);
    inpL = gb_reshape_3d(b, flat, d.n_embd, d.hc, p->n_outputs);
    /* build_hc_head */
    int32_t w_sc = gb_required(b, "output_hc_scale.weight", 0);
    int32_t w_ba = gb_required(b, "output_hc_base.weight", 0);
    int32_t mixes = gg_mul_mat(g, gb_required(b, "output_hc_fn.weight", 0),
                               gg_rms_norm(g, gb_reshape_2d(b, inpL, d.n_embd * d.hc,
                                                            p->n_outputs)));
    int32_t pre = gg_binary(g, GGFIT_OP_ADD, gg_binary(g, GGFIT_OP_MUL, mixes, w_sc), w_ba);
    pre = gg_scale(g, gg_unary_op(g, GGFIT_OP_UNARY, pre));
    /* build_hc_pre with il -1: never fused, the weighted sum of the streams */
    int32_t cur = -1;
    for (int64_t ih = 0; ih < d.hc; ih++) {
        const gg_tensor *tx = &g->t[inpL], *tw = &g->t[pre];
        int32_t xh = gb_view_2d(b, inpL, d.n_embd, p->n_outputs, tx->nb[2],
                                (uint64_t)ih * tx->nb[1]);
        int32_t wh = gb_view_2d(b, pre, 1, p->n_outputs, tw->nb[1], (uint64_t)ih * tw->nb[0]);
        int32_t m = gg_binary(g, GGFIT_OP_MUL, xh, wh);
        cur = cur < 0 ? m : gg_binary(g, GGFIT_OP_ADD, cur, m);
    }
    cur = gb_norm(b, cur, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_tensors: the head's hyper-connection mix (output_hc_fn, _base,
 * _scale) is of the output layer (LLM_TENSOR_LAYER_OUTPUT). */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    return strncmp(t->info->name, "output_hc_", 10) ? -2 : (int64_t)ggfit_model_hparams(m)->n_layer;
}

static bool name_ends(const char *name, const char *tail)
{
    size_t n = strlen(name), k = strlen(tail);
    return n >= k && !strcmp(name + n - k, tail);
}

/* load_tensors' tensors where the name and the file's shape mislead: the
 * compressors' position embeddings (attn_/indexer_compressor_ape) and the
 * hash layers' tid2eid are GET_ROWS weights (llm_tensor_info_for), which
 * CPU_REPACK does not take; attn_output_a is created 3-D {n_head *
 * head / o_groups, o_lora_rank, o_groups} from the file's 2-D
 * (TENSOR_ALLOW_RESHAPE), which CPU_REPACK's 2-D products refuse. */
static weight_op weight_probe(const ggfit_model *m, const ggfit_tensor *t, weight_op op,
                              ggfit_tensor_info *created)
{
    const char *n = t->info->name;
    if (t->layer < 0)
        return op;
    if (name_ends(n, "compressor_ape.weight") || name_ends(n, ".ffn_gate_tid2eid.weight"))
        return OP_GET_ROWS;
    if (name_ends(n, ".attn_output_a.weight")) {
        int64_t groups = (int64_t)key_elem(m, "attention.output_group_count", 0, 0);
        int64_t rank = (int64_t)key_elem(m, "attention.output_lora_rank", 0, 0);
        if (groups < 1 || rank < 1 || created->ne[1] != groups * rank || created->ne[2] != 1)
            return op;
        created->ne[1] = rank;
        created->ne[2] = groups;
        created->n_dims = groups > 1 ? 3 : rank > 1 ? 2 : 1;
    }
    return op;
}

/* load_arch_hparams: the SwiGLU clamps (one per block, NextN blocks
 * included, or one for all; the shared experts' optional) and the
 * compression ratios (get_arr: at least block_count of them, required). */
static const ggfit_arr_key arr_keys[] = {
    { "swiglu_clamp_exp", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, true },
    { "swiglu_clamp_shexp", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, false },
    { "attention.compress_ratios", false, GGFIT_GGUF_UINT32, GGFIT_ARR_BLOCKS, true },
    { NULL },
};

/* The keys the graph converts to integers (its own rules on them make
 * it an estimate). */
static void check(hp_check *c)
{
    static const char *const keys[] = {
        "hash_layer_count", "attention.output_group_count", "attention.output_lora_rank",
        "hyper_connection.count", "attention.indexer.key_length",
        "attention.indexer.head_count", "attention.indexer.top_k",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        hc_key_int(c, keys[i], 0, UINT32_MAX, 0, NULL,
                   "llama.cpp reads it as an unsigned 32-bit count");
}

const ggfit_arch ggfit__model_deepseek4 = {
    .name = "deepseek4",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.q_lora_rank", "attention.sliding_window", "expert_feed_forward_length",
            "expert_shared_count", "expert_weights_scale", "expert_weights_norm",
            "attention.indexer.head_count", "attention.indexer.key_length",
            "attention.indexer.top_k", "attention.output_group_count", "attention.output_lora_rank",
            "attention.compress_rope_freq_base", "hyper_connection.count",
            "hyper_connection.sinkhorn_iterations", "hyper_connection.epsilon", "hash_layer_count",
            "expert_gating_func", NULL },
    .arr_keys = arr_keys,
    .check = check,
    .mtp = true,   /* load_mtp loads the NextN blocks; the MTP context is noted, not counted */
    .mem = GGFIT_MEM_KV,
    .index_k = index_k,
    .compress_ratio = compress_ratio,
    .tensor_layer = tensor_layer,
    .same_kv_types = true,
    /* the raw cache's window cells (n_kv_swa); no layer is marked SWA */
    .swa_period = 1, .swa_dense_first = true,
    .build = build_deepseek4,
    .weight_probe = weight_probe,
};
