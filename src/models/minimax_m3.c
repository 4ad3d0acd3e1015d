/*
 * minimax_m3.c - src/models/minimax-m3.cpp: MiniMax-M3, MiniMax-M2's
 * attention (per-head Q/K norms, partial RoPE) with DeepSeek-V3's leading
 * dense blocks and routed plus shared experts (swiglu_oai), and MiniMax
 * Sparse Attention (MSA) in the other blocks. Its memory is
 * llama_kv_cache_msa: the main KV cache of every layer, and beside it a
 * whole second KV cache for the sparse layers' indexer (one key head of
 * attention.indexer.key_length, one value head of the model's value
 * length), as many cells. With flash attention (and per-sequence streams)
 * the sparse layers pick position blocks by pooled indexer scores (top-k)
 * and attend through a per-stream mask; otherwise every layer attends
 * densely.
 */
#include <stdio.h>
#include <string.h>

#include "llama/check.h"
#include "llama/graph.h"

static uint32_t key_u32(const ggfit_model *m, const char *suffix)
{
    const ggfit_gguf *g = ggfit_model_gguf(m);
    char key[160];
    snprintf(key, sizeof key, "%s.%s", ggfit_model_hparams(m)->arch, suffix);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v) || v.type == GGFIT_GGUF_ARRAY)
        return 0;
    return (uint32_t)v.u;
}

/* The indexer cache's rows (filter_idx: the blocks after the dense lead). */
static uint32_t index_k(const ggfit_model *m, uint32_t il)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    if (il < hp->n_layer_dense_lead)
        return 0;
    return key_u32(m, "attention.indexer.key_length");
}

static uint32_t index_v(const ggfit_model *m, uint32_t il)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    return il < hp->n_layer_dense_lead ? 0 : hp->n_embd_head_v;
}

typedef struct msa {
    bool on;                    /* msa_enabled */
    int64_t blk, n_kv, n_ps, nblk, ns, n_tps, topk, n_idx, hd_idx;
    int32_t k_idxs_idx, bias, pos_mask, pos_slot_i, pos_slot_f, cell_blk, mf;
} msa;

/* A cache tensor of layer il (llama_kv_cache ctor): rows of n_embd. */
static int32_t cache_t(bctx *b, int il, char which, int64_t n_embd)
{
    const gb_params *p = b->p;
    char name[64] = "";
    int64_t ne[3] = { n_embd, p->n_kv, p->n_stream };
    if (b->g->names)   /* gg_memory copies it only then */
        snprintf(name, sizeof name, "cache_%c_l%d", which, il);
    int32_t t = gg_memory(b->g, NULL, name, which == 'k' ? p->type_k : p->type_v, 3, ne,
                          p->kv_buft[il], false);
    b->g->t[t].il = il;
    return t;
}

/* llama_kv_cache::cpy_k (and cpy_v without transposition). */
static int32_t cpy_rows(bctx *b, int32_t c, int32_t x, int32_t idxs)
{
    const gg_tensor *t = &b->g->t[x];
    int32_t xc = gb_view_2d(b, x, t->ne[0] * t->ne[1], t->ne[2], t->nb[2], 0);
    const gg_tensor *ct = &b->g->t[c];
    int32_t dst = c;
    if (ct->ne[2] > 1)
        dst = gb_reshape_2d(b, c, ct->ne[0], ct->ne[1] * ct->ne[2]);
    return gg_set_rows(b->g, dst, xc, idxs);
}

/* llama_kv_cache::get_k / get_v (not transposed): heads of h. */
static int32_t heads_of(bctx *b, int32_t c, int64_t h, int64_t n_head_kv)
{
    const gg_tensor *t = &b->g->t[c];
    int64_t n = t->ne[0], kv = t->ne[1], ns = t->ne[2];
    return gb_view_4d(b, c, h, n_head_kv, kv, ns, ggfit_row_bytes(t->type, (uint64_t)h),
                      ggfit_row_bytes(t->type, (uint64_t)n),
                      ggfit_row_bytes(t->type, (uint64_t)(n * kv)), 0);
}

static int32_t op4(bctx *b, uint8_t op, uint32_t type, int64_t a0, int64_t a1, int64_t a2,
                   int64_t a3, int n_src, const int32_t *src)
{
    int64_t ne[4] = { a0, a1, a2, a3 };
    return gg_op_shape(b->g, op, type, 4, ne, n_src, src);
}

/* build_attn_msa_fa: every GQA group in one flash attention. */
static int32_t msa_fa(bctx *b, int32_t q, int32_t k, int32_t v, int32_t mask, int64_t gp,
                      int il)
{
    gg_graph *g = b->g;
    int64_t d = gb_ne(b, q, 0), hq = gb_ne(b, q, 1), t = gb_ne(b, q, 2), c = gb_ne(b, k, 3);
    int64_t r = hq * t / (gp * c);
    q = gb_reshape_4d(b, q, d, gp, c, r);
    q = gg_permute(g, q, 0, 2, 3, 1);
    int32_t o = gg_flash_attn(g, q, k, v, mask, -1);
    g->t[o].il = il;
    gb_cb(b, o, "msa_fattn", il);
    o = gg_permute(g, o, 0, 1, 3, 2);
    if (r != 1 && c != 1)   /* ggml_is_contiguous skips dimensions of 1 */
        o = gg_cont(g, o);
    return gb_reshape_2d(b, o, d * hq, t);
}

/* One stream's sparse attention (the batch path). */
static int32_t msa_stream(bctx *b, const msa *m, int32_t iq, int32_t ik_kv, int32_t q,
                          int32_t k, int32_t v, int64_t st, int64_t gp, int il)
{
    gg_graph *g = b->g;
    int64_t n_idx = m->n_idx, hd = m->hd_idx, n_tps = m->n_tps, n_kv = m->n_kv;
    int64_t n_ps = m->n_ps, nblk = m->nblk, kk = m->topk < nblk ? m->topk : nblk;
    int64_t n_head = gb_ne(b, q, 1), dh = gb_ne(b, k, 0), hkv = gb_ne(b, k, 1);
    const gg_tensor *t;
    t = &g->t[iq];
    int32_t iq_s = gb_view_3d(b, iq, n_idx, hd, n_tps, t->nb[1], t->nb[2],
                              (uint64_t)(st * n_tps) * t->nb[2]);
    t = &g->t[ik_kv];
    int32_t ik_s = gb_view_2d(b, ik_kv, n_idx, n_kv, t->nb[2], (uint64_t)st * t->nb[3]);
    int64_t n1 = n_ps;
    t = &g->t[m->pos_slot_i];
    int32_t psl_s = gg_view(g, m->pos_slot_i, 1, &n1, NULL, (uint64_t)st * t->nb[1]);
    t = &g->t[m->pos_mask];
    int32_t pm_s = gb_view_3d(b, m->pos_mask, n_ps, 1, n_tps, t->nb[1], t->nb[1],
                              (uint64_t)(st * n_tps) * t->nb[1]);
    int64_t n2 = n_kv;
    t = &g->t[m->cell_blk];
    int32_t cb_s = gg_view(g, m->cell_blk, 1, &n2, NULL, (uint64_t)st * t->nb[1]);
    t = &g->t[m->mf];
    int32_t mf_s = gb_view_3d(b, m->mf, n_kv, n_tps, 1, t->nb[1], t->nb[3],
                              (uint64_t)st * t->nb[3]);
    t = &g->t[m->bias];
    int32_t bias_s = gb_view_3d(b, m->bias, nblk, 1, n_tps, t->nb[1], t->nb[1],
                                (uint64_t)(st * n_tps) * t->nb[1]);
    t = &g->t[q];
    int32_t q_s = gb_view_3d(b, q, dh, n_head, n_tps, t->nb[1], t->nb[2],
                             (uint64_t)(st * n_tps) * t->nb[2]);
    t = &g->t[k];
    int32_t k_s = gb_view_4d(b, k, dh, hkv, n_kv, 1, t->nb[1], t->nb[2], t->nb[3],
                             (uint64_t)st * t->nb[3]);
    t = &g->t[v];
    int32_t v_s = gb_view_4d(b, v, gb_ne(b, v, 0), hkv, n_kv, 1, t->nb[1], t->nb[2], t->nb[3],
                             (uint64_t)st * t->nb[3]);

    int32_t ikp = gg_get_rows(g, ik_s, psl_s);
    int32_t sc = gg_mul_mat(g, ikp, gb_reshape_2d(b, iq_s, n_idx, hd * n_tps));
    sc = gb_reshape_3d(b, sc, n_ps, hd, n_tps);
    sc = gg_add_inplace(g, sc, pm_s);
    int32_t bs = op4(b, GGFIT_OP_POOL_2D, GGFIT_TYPE_F32, (n_ps - m->blk) / m->blk + 1, hd,
                     n_tps, 1, 1, &sc);
    gb_cb(b, bs, "msa_bs", il);
    int32_t bsf = gg_binary(g, GGFIT_OP_ADD, bs, bias_s);
    gb_cb(b, bsf, "msa_bsf", il);
    int32_t idx = op4(b, GGFIT_OP_TOP_K, GGFIT_TYPE_I32, kk, hd, n_tps, 1, 1, &bsf);

    int32_t ninf = gg_scale(g, bias_s);
    ninf = gg_cpy_type(g, ninf, GGFIT_TYPE_F16);
    ninf = op4(b, GGFIT_OP_REPEAT, GGFIT_TYPE_F16, nblk, hd, n_tps, 1, 1, &ninf);
    int32_t zero = gg_scale(g, gg_cpy_type(g, idx, GGFIT_TYPE_F32));
    int32_t bm = gg_set_rows(g, gb_reshape_3d(b, ninf, 1, nblk, hd * n_tps),
                             gb_reshape_3d(b, zero, 1, kk, hd * n_tps),
                             gb_reshape_2d(b, idx, kk, hd * n_tps));
    bm = gb_reshape_3d(b, bm, nblk, hd, n_tps);
    bm = gg_cont(g, gg_permute(g, bm, 0, 2, 1, 3));
    gb_cb(b, bm, "msa_block_mask", il);
    int32_t bm2 = gg_cont(g, gg_transpose(g, gb_reshape_2d(b, bm, nblk, n_tps * hd)));
    int32_t bmc = gg_get_rows(g, bm2, cb_s);
    int32_t bmx = gg_cont(g, gg_transpose(g, bmc));
    bmx = gb_reshape_3d(b, bmx, n_kv, n_tps, hd);
    int32_t mask4 = gg_add_inplace(g, bmx, mf_s);
    mask4 = gg_cpy_type(g, gb_reshape_4d(b, mask4, n_kv, n_tps, 1, hd), GGFIT_TYPE_F16);
    gb_cb(b, mask4, "msa_mask4", il);
    int32_t kfa = gg_permute(g, k_s, 0, 3, 1, 2);
    int32_t vfa = gg_permute(g, v_s, 0, 3, 1, 2);
    return msa_fa(b, q_s, kfa, vfa, mask4, gp, il);
}

static int32_t arange(bctx *b, int64_t n)
{
    int64_t ne[1] = { n };
    return gg_op_shape(b->g, GGFIT_OP_ARANGE, GGFIT_TYPE_F32, 1, ne, 0, NULL);
}

/* The decode path (one token a stream): the top blocks of every stream at
 * once, their keys, values and mask gathered through the position -> cell
 * map, one grouped flash attention. */
static int32_t msa_decode(bctx *b, const msa *m, int32_t iq, int32_t ik_kv, int32_t q,
                          int32_t k, int32_t v, int64_t gp, int il)
{
    gg_graph *g = b->g;
    int64_t n_idx = m->n_idx, hd = m->hd_idx, n_kv = m->n_kv, ns = m->ns, blk = m->blk;
    int64_t n_ps = m->n_ps, nblk = m->nblk, kk = m->topk < nblk ? m->topk : nblk;
    int64_t dh = gb_ne(b, k, 0), hkv = gb_ne(b, k, 1);
    const gg_tensor *t = &g->t[ik_kv];
    int32_t ik3 = gb_view_3d(b, ik_kv, n_idx, n_kv, ns, t->nb[2], t->nb[3], 0);
    int32_t ikp = gg_get_rows(g, ik3, m->pos_slot_i);
    int32_t iq4 = gb_reshape_4d(b, iq, n_idx, hd, 1, ns);
    int32_t sc = gg_mul_mat(g, gb_reshape_4d(b, ikp, n_idx, n_ps, 1, ns), iq4);
    sc = gg_add_inplace(g, sc, gb_reshape_4d(b, m->pos_mask, n_ps, 1, 1, ns));
    int32_t bs = op4(b, GGFIT_OP_POOL_2D, GGFIT_TYPE_F32, (n_ps - blk) / blk + 1, hd, 1, ns,
                     1, &sc);
    gb_cb(b, bs, "msa_bs", il);
    int32_t bsf = gg_binary(g, GGFIT_OP_ADD, bs, gb_reshape_4d(b, m->bias, nblk, 1, 1, ns));
    int32_t idx = op4(b, GGFIT_OP_TOP_K, GGFIT_TYPE_I32, kk, hd, 1, ns, 1, &bsf);
    int32_t a = gg_scale(g, gg_cpy_type(g, idx, GGFIT_TYPE_F32));
    a = gb_reshape_4d(b, a, 1, kk, hd, ns);
    a = op4(b, GGFIT_OP_REPEAT, GGFIT_TYPE_F32, blk, kk, hd, ns, 1, &a);
    int32_t tj = gg_binary(g, GGFIT_OP_ADD, a, gb_reshape_3d(b, arange(b, blk), blk, 1, 1));
    int32_t tokj = gg_cpy_type(g, gb_reshape_2d(b, tj, blk * kk * hd, ns), GGFIT_TYPE_I32);
    int32_t cs = gg_get_rows(g, gb_reshape_3d(b, m->pos_slot_f, 1, n_ps, ns), tokj);
    cs = gb_reshape_4d(b, cs, blk, kk, hd, ns);
    int32_t tr = gg_binary(g, GGFIT_OP_ADD, gg_scale(g, cs),
                           gb_reshape_3d(b, arange(b, hkv), 1, 1, hd));
    int32_t tokr = gg_cpy_type(g, gb_reshape_2d(b, tr, blk * kk * hd, ns), GGFIT_TYPE_I32);
    t = &g->t[k];
    int32_t k3 = gb_view_3d(b, k, dh, hkv * n_kv, ns, t->nb[1], t->nb[3], 0);
    t = &g->t[v];
    int32_t v3 = gb_view_3d(b, v, gb_ne(b, v, 0), hkv * n_kv, ns, t->nb[1], t->nb[3], 0);
    int32_t mp = gb_reshape_3d(b, m->pos_mask, 1, n_ps, ns);
    int32_t kg = gg_get_rows(g, k3, tokr);
    int32_t vg = gg_get_rows(g, v3, tokr);
    int32_t mg = gg_get_rows(g, mp, tokj);
    uint32_t kt = ggfit_type_is_quantized(g->t[k].type) ? GGFIT_TYPE_F16 : g->t[k].type;
    uint32_t vt = ggfit_type_is_quantized(g->t[v].type) ? GGFIT_TYPE_F16 : g->t[v].type;
    int32_t kfa = gb_reshape_4d(b, kg, dh, blk * kk, 1, hd * ns);
    int32_t vfa = gb_reshape_4d(b, vg, gb_ne(b, v, 0), blk * kk, 1, hd * ns);
    if (g->t[kfa].type != kt)
        kfa = gg_cpy_type(g, kfa, kt);
    if (g->t[vfa].type != vt)
        vfa = gg_cpy_type(g, vfa, vt);
    int32_t mfa = gg_cpy_type(g, gb_reshape_4d(b, mg, blk * kk, 1, 1, hd * ns), GGFIT_TYPE_F16);
    return msa_fa(b, q, kfa, vfa, mfa, gp, il);
}

/* A sparse layer's attention: the indexer branch, the main cache, the
 * streams. */
static int32_t msa_attn(bctx *b, const msa *m, int32_t cur, int32_t q, int32_t k, int32_t v,
                        int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t nt = b->p->n_tokens, n_idx = m->n_idx, hd = m->hd_idx;
    int32_t iq = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.q_proj.weight", il), cur);
    int32_t ik = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.k_proj.weight", il), cur);
    iq = gb_reshape_3d(b, iq, n_idx, hd, nt);
    ik = gb_reshape_3d(b, ik, n_idx, 1, nt);
    iq = gb_norm(b, iq, gb_required(b, "blk.%d.indexer.q_norm.weight", il), il);
    ik = gb_norm(b, ik, gb_required(b, "blk.%d.indexer.k_norm.weight", il), il);
    iq = gg_rope(g, iq, b->inp_pos, -1);
    ik = gg_rope(g, ik, b->inp_pos, -1);
    int32_t c_idx = cache_t(b, il, 'k', n_idx);
    gg_expand(g, cpy_rows(b, c_idx, ik, m->k_idxs_idx));
    int32_t ik_kv = heads_of(b, c_idx, n_idx, 1);

    if (b->k_rot >= 0) {
        q = gb_hadamard(b, q, b->k_rot);
        k = gb_hadamard(b, k, b->k_rot);
    }
    if (b->v_rot >= 0)
        v = gb_hadamard(b, v, b->v_rot);
    gg_expand(g, q);
    gg_expand(g, k);
    gg_expand(g, v);
    int64_t n_head_kv = li->n_head_kv, hk = b->hp->n_embd_head_k, hv = b->hp->n_embd_head_v;
    int32_t ck = cache_t(b, il, 'k', hk * n_head_kv);
    int32_t cv = cache_t(b, il, 'v', hv * n_head_kv);
    gg_expand(g, cpy_rows(b, ck, k, b->k_idxs));
    gg_expand(g, cpy_rows(b, cv, v, b->v_idxs));
    int32_t kk = heads_of(b, ck, hk, n_head_kv);
    int32_t vv = heads_of(b, cv, hv, n_head_kv);
    if (n_head_kv != hd || !n_head_kv) {
        b->missing = true;   /* llama.cpp asserts one indexer head per group */
        return cur;
    }
    int64_t gp = li->n_head / n_head_kv;
    int32_t out = -1;
    if (m->n_tps == 1)
        out = msa_decode(b, m, iq, ik_kv, q, kk, vv, gp, il);
    for (int64_t st = 0; m->n_tps != 1 && st < m->ns; st++) {
        int32_t o = msa_stream(b, m, iq, ik_kv, q, kk, vv, st, gp, il);
        out = st == 0 ? o : gg_concat(g, out, o, 1);
    }
    if (b->v_rot >= 0)
        out = gb_hadamard(b, out, b->v_rot);
    gb_cb(b, out, "kqv_out", il);
    return gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), out);
}

static int32_t ffn(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    if ((uint32_t)il < b->hp->n_layer_dense_lead) {
        cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                       gb_required(b, "blk.%d.ffn_gate.weight", il),
                       gb_required(b, "blk.%d.ffn_down.weight", il), il);
        gb_cb(b, cur, "ffn_out", il);
        return cur;
    }
    gb_moe o;
    gb_moe_layer(b, il, 0, &o);   /* expert_gating_func is required */
    o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
    o.act = GB_MOE_SWIGLU_OAI;
    int32_t moe = gb_moe_ffn_ex(b, cur, &o, il);
    gb_cb(b, moe, "ffn_moe_out", il);
    int32_t sh = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                          gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                          gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, sh, "ffn_shexp", il);
    cur = gg_binary(g, GGFIT_OP_ADD, moe, sh);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

/* llama_model_minimax_m3::graph */
static void build_minimax_m3(bctx *b)
{
    gg_graph *g = b->g;
    const gb_params *p = b->p;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    msa m = { 0 };
    m.on = p->flash_attn && (p->n_seqs <= 1 || p->n_stream > 1);
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    if (m.on) {
        m.blk = (int64_t)gb_key(b, "attention.indexer.block_size", 0);
        m.topk = (int64_t)gb_key(b, "attention.indexer.top_k", 0);
        m.n_idx = (int64_t)gb_key(b, "attention.indexer.key_length", 0);
        m.hd_idx = (int64_t)gb_key(b, "attention.indexer.head_count", 0);
        if (m.blk <= 0 || m.topk <= 0 || m.n_idx <= 0 || m.hd_idx <= 0) {
            b->missing = true;
            return;
        }
        m.n_kv = p->n_kv;
        m.ns = p->n_stream;
        m.n_tps = p->n_tokens / p->n_stream;
        /* get_n_pos of the reserved (empty) cache: 256 */
        m.n_ps = (256 + m.blk - 1) / m.blk * m.blk;
        m.nblk = m.n_ps / m.blk;
        m.k_idxs_idx = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I64, p->n_tokens), NULL);
        m.bias = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, m.nblk, p->n_tokens), NULL);
        m.pos_mask = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, m.n_ps, p->n_tokens), NULL);
        m.pos_slot_i = gg_input(g, gg_new_2d(g, GGFIT_TYPE_I32, m.n_ps, m.ns), NULL);
        if (m.n_tps == 1) {   /* decode: gathers */
            m.pos_slot_f = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, m.n_ps, m.ns), NULL);
        } else {
            m.cell_blk = gg_input(g, gg_new_2d(g, GGFIT_TYPE_I32, m.n_kv, m.ns), NULL);
            m.mf = gg_cpy_type(g, b->kq_mask, GGFIT_TYPE_F32);
        }
    }
    for (int il = 0; il < n_layer && !b->missing; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "Qcur_normed", il);
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k, "Kcur_normed", il);
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        if (m.on && (uint32_t)il >= hp->n_layer_dense_lead)
            cur = msa_attn(b, &m, cur, q, k, v, il);
        else
            cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1,
                          il);
        if (b->missing)
            return;
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = ffn(b, cur, il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (b->missing)
        return;
    gb_output(b, inpL);
}

/* load_arch_hparams requires the indexer's keys. */
static const char *const required_keys[] = {
    "attention.indexer.head_count",
    "attention.indexer.key_length",
    "attention.indexer.top_k",
    "attention.indexer.block_size",
    "attention.indexer.local_blocks",
    "attention.layer_norm_rms_epsilon",
    "expert_feed_forward_length",
    "expert_shared_count",
    "expert_gating_func",
    NULL,
};

/* The sparse layers read the indexer's keys as counts: positions pooled
 * into blocks of block_size, the top_k blocks kept, heads of key_length;
 * their grouped flash attention divides by the query heads per KV head (a
 * whole number by the shared rules), which must be at least one. */
static void check(hp_check *c)
{
    for (uint32_t il = 0; il < c->hp->n_layer && !c->rc; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(c->m, il);
        if (li->n_head_kv && !li->n_head)
            hc_fail(c, "%s.attention.head_count is 0 in layer %u, which has %u KV heads: "
                    "MiniMax Sparse Attention divides the query heads into one group per "
                    "KV head", c->prefix, il, li->n_head_kv);
    }
    hc_key_int(c, "attention.indexer.block_size", 1, UINT32_MAX, 0, NULL,
               "MiniMax Sparse Attention pools the positions into blocks of this size");
    hc_key_int(c, "attention.indexer.top_k", 1, UINT32_MAX, 0, NULL,
               "MiniMax Sparse Attention keeps this many blocks");
    hc_key_int(c, "attention.indexer.key_length", 1, UINT32_MAX, 0, NULL,
               "the indexer's heads have this size");
    hc_key_int(c, "attention.indexer.head_count", 1, UINT32_MAX, 0, NULL,
               "the indexer has this many heads");
}

const ggfit_arch ggfit__model_minimax_m3 = {
    .name = "minimax-m3",
    .mem = GGFIT_MEM_KV,
    .index_k = index_k,
    .index_v = index_v,
    .required_keys = required_keys,
    .check = check,
    .build = build_minimax_m3,
};
