/*
 * graph_dsa.c - DSA sparse attention, as DeepSeek V3.2, GLM-5 and
 * dots3-note build it (deepseek32.c, dots3note.c): the inputs of the DSA
 * cache, the lightning indexer, the absorbed MLA's Q and K, and attention
 * over the latent cells the indexer chose. graph_dsa.h documents it.
 */
#include <stdio.h>

#include "llama/graph_dsa.h"
#include "versions/version.h"

static uint64_t f32_row(int64_t n)
{
    return ggfit_row_bytes(GGFIT_TYPE_F32, (uint64_t)n);
}

void gb_dsa_inputs(bctx *b, gb_dsa *d)
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
    while (d->ih > 0 && d->ih % (2 * nrot) == 0)
        nrot *= 2;
    d->k_rot_lid = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, nrot, nrot), "attn_inp_k_rot");
    b->k_idxs = d->k_idxs_mla;
    b->kq_mask = d->mask_mla;
    b->v_idxs = b->k_rot = b->v_rot = -1;
}

int32_t gb_dsa_cache_k(bctx *b, int il, int64_t n_embd, uint32_t n_kv)
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
int32_t gb_dsa_cpy_k(bctx *b, int32_t ck, int32_t k, int32_t k_idxs)
{
    const gg_tensor *t = &b->g->t[k];
    int32_t kc = gb_view_2d(b, k, t->ne[0] * t->ne[1], t->ne[2], t->nb[2], 0);
    const gg_tensor *c = &b->g->t[ck];
    int32_t dst = ck;
    if (c->ne[2] > 1)
        dst = gb_reshape_2d(b, ck, c->ne[0], c->ne[1] * c->ne[2]);
    return gg_set_rows(b->g, dst, kc, k_idxs);
}

/* llama_kv_cache::get_k */
int32_t gb_dsa_get_k(bctx *b, int32_t ck, int64_t hk)
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

int32_t gb_dsa_qr(bctx *b, int32_t cur, int il)
{
    int32_t qr = gg_mul_mat(b->g, gb_required(b, "blk.%d.attn_q_a.weight", il), cur);
    gb_cb(b, qr, "qr", il);
    qr = gb_norm(b, qr, gb_required(b, "blk.%d.attn_q_a_norm.weight", il), il);
    gb_cb(b, qr, "qr", il);
    return qr;
}

int32_t gb_dsa_indexer(bctx *b, const gb_dsa *d, int32_t cur, int32_t qr, int il)
{
    gg_graph *g = b->g;
    int64_t nt = d->n_tokens, ih = d->ih, n_ih = d->n_ih, rope = d->n_rope;
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.attn_q_b.weight", il), qr);
    gb_cb(b, q, "indexer_q", il);
    /* DSA_INDEXER_ROPE: the heads ([rope | nope]) are roped whole, n_rope
     * dims; before, views of both parts, the rope part roped, then their
     * concat (dots3note came later: always whole). */
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

    int32_t ck = gb_dsa_cache_k(b, il, ih, b->p->n_kv);
    gg_expand(g, gb_dsa_cpy_k(b, ck, k, d->k_idxs_lid));

    int32_t w = gg_mul_mat(g, gb_required(b, "blk.%d.indexer.proj.weight", il), cur);
    gb_cb(b, w, "indexer_weights", il);

    k = gb_dsa_get_k(b, ck, ih);
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

void gb_dsa_mla_qkv(bctx *b, const gb_dsa *d, const gb_dsa_mla *o, int32_t cur, int32_t qr,
                    int il, int32_t qkv[3])
{
    gg_graph *g = b->g;
    int64_t n_head = o->n_head, nt = d->n_tokens, n_rope = d->n_rope, lora = o->lora;
    int64_t nope = o->head_k - n_rope;
    int32_t q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_b.weight", il), qr);
    gb_cb(b, q, "q", il);
    uint64_t qb1 = f32_row(o->head_k), qb2 = qb1 * (uint64_t)n_head;
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
    if (o->k_norm) {
        k_pe = gb_norm(b, k_pe, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k_pe, "k_pe", il);
    }
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
    qkv[0] = gg_concat(g, q_abs, q_pe, 0);
    gb_cb(b, qkv[0], "Qcur", il);
    kv_cmpr = gb_reshape_3d(b, kv_cmpr, lora, 1, nt);
    gb_cb(b, kv_cmpr, "kv_cmpr_reshape", il);
    qkv[1] = gg_concat(g, kv_cmpr, k_pe, 0);
    gb_cb(b, qkv[1], "Kcur", il);
    qkv[2] = kv_cmpr;
    gb_cb(b, kv_cmpr, "Vcur", il);
}

int32_t gb_dsa_attn(bctx *b, const gb_dsa *d, const int32_t qkv[3], int32_t top, int64_t hk,
                    int32_t v_mla, int il)
{
    gg_graph *g = b->g;
    int32_t v = qkv[2];
    gg_expand(g, qkv[0]);
    gg_expand(g, v);
    gg_expand(g, qkv[1]);
    int32_t ck = gb_dsa_cache_k(b, il, hk, b->p->n_kv);
    gg_expand(g, gb_dsa_cpy_k(b, ck, qkv[1], d->k_idxs_mla));

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

    int32_t kk = gb_dsa_get_k(b, ck, hk);
    const gg_tensor *t = &g->t[kk];
    int32_t vv = gb_view_4d(b, kk, gb_ne(b, v, 0), t->ne[1], t->ne[2], t->ne[3], t->nb[1],
                            t->nb[2], t->nb[3], 0);
    if (v_mla < 0)
        v_mla = gb_required(b, "blk.%d.attn_v_b.weight", il);
    int32_t cur = gb_attn_mha_v(b, qkv[0], kk, vv, mask, -1, v_mla, il);
    gb_cb(b, cur, "kqv_out", il);
    return cur;
}

void gb_dsa_trunk(bctx *b, int32_t inpL, int n_layer, int gating, gb_dsa_attn_fn attn,
                  void *ctx)
{
    gg_graph *g = b->g;
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        cur = attn(b, ctx, cur, il);
        if (b->missing)
            return;
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        if ((uint32_t)il < b->hp->n_layer_dense_lead) {
            cur = gb_ffn_gated(b, cur, il);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            cur = gb_moe_shared_layer(b, gating, cur, il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (!b->missing)
        gb_output(b, inpL);
}

static void count_key(hp_check *c, const char *key)
{
    hc_key_int(c, key, 0, UINT32_MAX, 0, NULL, "llama.cpp reads it as an unsigned 32-bit count");
}

void gb_dsa_check(hp_check *c, const char *const *more)
{
    /* the MLA cache's one K head is kv_lora_rank + the rope's width, which
     * get_k views it in heads of (llama.cpp's attn_kv_a_mqa has that
     * shape; the loader requires the rank) */
    hc_nonzero(c, "attention.kv_lora_rank", (uint64_t)c->hp->n_lora_kv + c->hp->n_rot,
               "the MLA cache's K head is kv_lora_rank + rope.dimension_count wide "
               "(llama.cpp's loader requires kv_lora_rank)");
    static const char *const keys[] = { "attention.indexer.head_count",
                                        "attention.indexer.key_length",
                                        "attention.indexer.top_k", NULL };
    for (size_t i = 0; keys[i]; i++)
        count_key(c, keys[i]);
    for (size_t i = 0; more && more[i]; i++)
        count_key(c, more[i]);
}
