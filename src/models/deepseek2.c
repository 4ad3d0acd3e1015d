/*
 * deepseek2.c - src/models/deepseek2.cpp: DeepSeek-V2/V3. Attention is
 * MLA: keys and values are compressed to one latent row per token, and the
 * cache holds only that latent plus the roped part of the key (K only, one
 * head). Q absorbs the key decompression (attn_k_b); the attention output is
 * decompressed per head by attn_v_b. Files without the MLA lengths use the
 * older path: attn_kv_b expands the latent into full heads, cached as K and
 * V. The first leading_dense_block_count blocks have a dense FFN, the others
 * experts plus shared experts.
 */
#include "llama/graph.h"
#include "versions/version.h"

typedef struct ds2 {
    int64_t n_head, n_tokens;
    int64_t n_embd_head_k, n_embd_head_v; /* per head, after decompression */
    int64_t n_rope, n_nope;     /* the roped and the position-free part of a key */
    int64_t kv_lora_rank;       /* the latent's width */
    bool mla;                   /* the K-only latent cache */
    int32_t attn_scale;         /* temperature tuning input (Mistral Large), -1 */
} ds2;

static uint64_t f32_row(int64_t n)
{
    return ggfit_row_bytes(GGFIT_TYPE_F32, (uint64_t)n);
}

/* Q: one projection (the Lite models) or a low-rank pair with a norm. */
static int32_t ds2_q(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t wq = gb_weight(b, "blk.%d.attn_q.weight", il);
    int32_t q;
    if (wq >= 0) {
        q = gg_mul_mat(g, wq, cur);
    } else {
        q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_a.weight", il), cur);
        gb_cb(b, q, "q", il);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_a_norm.weight", il), il);
        gb_cb(b, q, "q", il);
        q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_b.weight", il), q);
    }
    gb_cb(b, q, "q", il);
    return q;
}

static int32_t temp_scale(bctx *b, const ds2 *d, int32_t q, int il)
{
    if (d->attn_scale < 0)
        return q;
    q = gg_binary(b->g, GGFIT_OP_MUL, q, d->attn_scale);
    gb_cb(b, q, "Qcur_attn_temp_scaled", il);
    return q;
}

/* MLA with absorption: attention runs as MQA over the latent (one KV head)
 * and attn_v_b restores each head's value. */
static int32_t ds2_attn_mla(bctx *b, const ds2 *d, int32_t q_nope, int32_t q_pe,
                            int32_t kv_cmpr, int32_t k_pe, int il)
{
    gg_graph *g = b->g;
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    gb_cb(b, q_nope, "q_nope_perm", il);
    int32_t q_abs = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k_b.weight", il), q_nope);
    gb_cb(b, q_abs, "q_nope_absorbed", il);
    q_abs = gg_permute(g, q_abs, 0, 2, 1, 3);
    gb_cb(b, q_abs, "q_nope_absorbed_perm", il);
    /* The rope part goes last, so that a context shift can rope it in place. */
    int32_t q = gg_concat(g, q_abs, q_pe, 0);
    gb_cb(b, q, "Qcur", il);
    kv_cmpr = gb_reshape_3d(b, kv_cmpr, d->kv_lora_rank, 1, d->n_tokens);
    gb_cb(b, kv_cmpr, "kv_cmpr_reshape", il);
    int32_t k = gg_concat(g, kv_cmpr, k_pe, 0);
    gb_cb(b, k, "Kcur", il);
    int32_t v = kv_cmpr;
    gb_cb(b, v, "Vcur", il);
    q = temp_scale(b, d, q, il);
    return gb_attn_k(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v,
                     gb_required(b, "blk.%d.attn_v_b.weight", il), il);
}

/* MLA without absorption: attn_kv_b decompresses the latent into full heads
 * (MHA), cached as ordinary K and V. */
static int32_t ds2_attn_mha(bctx *b, const ds2 *d, int32_t q_nope, int32_t q_pe,
                            int32_t kv_cmpr, int32_t k_pe, int il)
{
    gg_graph *g = b->g;
    int64_t hv = d->n_embd_head_v, n_head = d->n_head, nt = d->n_tokens;
    int32_t kv = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_b.weight", il), kv_cmpr);
    gb_cb(b, kv, "kv", il);
    uint64_t nb1 = f32_row(d->n_nope + hv), nb2 = nb1 * (uint64_t)n_head;
    int32_t k_nope = gb_view_3d(b, kv, d->n_nope, n_head, nt, nb1, nb2, 0);
    gb_cb(b, k_nope, "k_nope_view", il);
    int32_t v = gb_view_3d(b, kv, hv, n_head, nt, nb1, nb2, f32_row(d->n_nope));
    gb_cb(b, v, "Vcur_view", il);
    v = gg_cont(g, v);
    gb_cb(b, v, "Vcur_cont", il);
    int32_t q, k;
    if (q_pe < 0) {   /* ROPE_SET_OFFSET: q_nope is the whole Q, roped past its nope part */
        q = gg_rope(g, q_nope, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        k = gg_concat(g, k_nope, gg_repeat_4d(g, k_pe, d->n_rope, n_head, nt, 1), 0);
    } else {
        q = gg_concat(g, q_nope, q_pe, 0);
        gb_cb(b, q, "Qcur", il);
        k = gg_concat(g, k_nope, gg_repeat(g, k_pe, q_pe), 0);
    }
    gb_cb(b, k, "Kcur", il);
    q = temp_scale(b, d, q, il);
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v, -1, il);
}

/* Q's nope and rope parts, views of q (n_embd_head_k x n_head x n_tokens),
 * the rope part roped. */
static void q_split(bctx *b, const ds2 *d, int32_t q, int32_t *q_nope, int32_t *q_pe, int il)
{
    int64_t n_head = d->n_head, nt = d->n_tokens;
    uint64_t qb1 = f32_row(d->n_embd_head_k), qb2 = qb1 * (uint64_t)n_head;
    *q_nope = gb_view_3d(b, q, d->n_nope, n_head, nt, qb1, qb2, 0);
    gb_cb(b, *q_nope, "q_nope", il);
    *q_pe = gb_view_3d(b, q, d->n_rope, n_head, nt, qb1, qb2, f32_row(d->n_nope));
    gb_cb(b, *q_pe, "q_pe", il);
}

/* main: the trunk's layers, which ROPE_SET_OFFSET changed; the MTP
 * block's attention (build_mtp) kept the split. */
static int32_t ds2_attn(bctx *b, const ds2 *d, int32_t cur, bool main, int il)
{
    gg_graph *g = b->g;
    int64_t n_head = d->n_head, nt = d->n_tokens, n_rope = d->n_rope;
    /* ROPE_SET_OFFSET: Q is reshaped to its heads; MLA then splits it
     * (below), MHA ropes it whole past an offset. Before, Q was split
     * first and its rope part roped beside K's. */
    bool offs = main && ggfit__llama_has(b->p->llama_build, LLAMA_CHANGE_ROPE_SET_OFFSET);
    int32_t q = ds2_q(b, cur, il), q_nope = -1, q_pe = -1;
    if (offs) {
        q = gb_reshape_3d(b, q, d->n_embd_head_k, n_head, nt);
        gb_cb(b, q, "q", il);
    } else {
        q_split(b, d, q, &q_nope, &q_pe, il);
    }

    int32_t kv_cmpr_pe = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_a_mqa.weight", il), cur);
    gb_cb(b, kv_cmpr_pe, "kv_cmpr_pe", il);
    uint64_t kb1 = f32_row(d->kv_lora_rank + n_rope);
    int32_t kv_cmpr = gb_view_2d(b, kv_cmpr_pe, d->kv_lora_rank, nt, kb1, 0);
    gb_cb(b, kv_cmpr, "kv_cmpr", il);
    int32_t k_pe = gb_view_3d(b, kv_cmpr_pe, n_rope, 1, nt, kb1, kb1, f32_row(d->kv_lora_rank));
    gb_cb(b, k_pe, "k_pe", il);

    if (!offs) {
        q_pe = gg_rope(g, q_pe, b->inp_pos, -1);
        gb_cb(b, q_pe, "q_pe", il);
    }
    k_pe = gg_rope(g, k_pe, b->inp_pos, -1);
    gb_cb(b, k_pe, "k_pe", il);
    kv_cmpr = gb_norm(b, kv_cmpr, gb_required(b, "blk.%d.attn_kv_a_norm.weight", il), il);
    gb_cb(b, kv_cmpr, "kv_cmpr", il);
    if (offs && d->mla) {
        q_split(b, d, q, &q_nope, &q_pe, il);
        q_pe = gg_rope(g, q_pe, b->inp_pos, -1);
        gb_cb(b, q_pe, "q_pe", il);
    } else if (offs) {
        q_nope = q;   /* ds2_attn_mha ropes it whole */
    }
    if (d->mla)
        return ds2_attn_mla(b, d, q_nope, q_pe, kv_cmpr, k_pe, il);
    return ds2_attn_mha(b, d, q_nope, q_pe, kv_cmpr, k_pe, il);
}

/* Routed experts plus the shared ones, on the same input. */
static int32_t ds2_moe(bctx *b, int32_t cur, int il)
{
    /* Files without expert_gating_func: softmax, except GLM-4.7 Lite. */
    const ggfit_hparams *hp = b->hp;
    uint32_t n_layer = hp->n_layer - hp->n_nextn;
    int gating = (n_layer == 47 || n_layer == 48) && hp->n_vocab == 154880 ? GB_GATING_SIGMOID
                                                                          : GB_GATING_SOFTMAX;
    return gb_moe_shared_layer(b, gating, cur, il);
}

static int32_t ds2_layer(bctx *b, const ds2 *d, int32_t inpL, int il, bool last)
{
    gg_graph *g = b->g;
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    cur = ds2_attn(b, d, cur, true, il);
    if (last)
        gb_out_rows(b, &cur, &inpSA);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    if ((uint32_t)il < b->hp->n_layer_dense_lead) {
        cur = gb_ffn_gated(b, cur, il);
        gb_cb(b, cur, "ffn_out", il);
    } else {
        cur = ds2_moe(b, cur, il);
    }
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_deepseek2::graph */
static void build_deepseek2(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    /* The NextN (MTP) blocks have their own graph. */
    int n_layer = (int)(hp->n_layer - hp->n_nextn);
    bool mla = hp->n_embd_head_k_mla && hp->n_embd_head_v_mla;
    ds2 d = {
        .n_head = ggfit_model_layer(b->p->m, 0)->n_head, .n_tokens = b->p->n_tokens,
        .n_embd_head_k = mla ? hp->n_embd_head_k_mla : hp->n_embd_head_k,
        .n_embd_head_v = mla ? hp->n_embd_head_v_mla : hp->n_embd_head_v,
        .n_rope = hp->n_rot, .kv_lora_rank = hp->n_lora_kv, .mla = mla, .attn_scale = -1,
    };
    d.n_nope = d.n_embd_head_k - d.n_rope;
    if (n_layer < 1 || d.n_nope < 1) {
        b->missing = true;   /* llama.cpp refuses these */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    if (gb_key(b, "attention.temperature_scale", 0) != 0)
        d.attn_scale = gg_input(g, gg_new_4d(g, GGFIT_TYPE_F32, 1, 1, d.n_tokens, 1),
                                "attn_scale");
    if (mla)
        gb_inputs_k(b);
    else
        gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++)
        inpL = ds2_layer(b, &d, inpL, il, il == n_layer - 1);
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);   /* also the NextN blocks' input */
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* llama_model_deepseek2::graph_mtp (GLM-4.7 Flash's head): the first
 * NextN block on the joined embedding and hidden state, absorbed MLA on
 * the K-only cache, experts plus shared experts; the head on the output
 * rows. */
static void build_deepseek2_mtp(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int il = (int)(hp->n_layer - hp->n_nextn);
    ds2 d = {
        .n_head = ggfit_model_layer(b->p->m, (uint32_t)il)->n_head,
        .n_tokens = b->p->n_tokens, .n_embd_head_k = hp->n_embd_head_k_mla,
        .n_embd_head_v = hp->n_embd_head_v_mla, .n_rope = hp->n_rot,
        .kv_lora_rank = hp->n_lora_kv, .mla = true, .attn_scale = -1,
    };
    d.n_nope = d.n_embd_head_k - d.n_rope;
    if (!hp->n_embd_head_k_mla || !hp->n_embd_head_v_mla || d.n_nope < 1) {
        b->missing = true;   /* graph_mtp asserts MLA */
        return;
    }
    int32_t emb, h;
    gb_mtp_embd(b, il, &emb, &h);
    gb_inputs_k(b);
    int32_t inpSA = gb_mtp_eh_proj(b, il, emb, h);
    int32_t cur = gb_norm(b, inpSA, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "mtp_attn_norm", il);
    cur = ds2_attn(b, &d, cur, false, il);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "mtp_ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "mtp_ffn_norm", il);
    cur = ds2_moe(b, cur, il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "mtp_post_ffn", il);
    if (!b->missing)
        gb_mtp_head(b, cur, il, GB_MTP_ROWS_NORMED, -1);
}

/* The NextN blocks are left out of the graph but keep their KV cells. */
const ggfit_arch ggfit__model_deepseek2 = {
    .mla_same_kv_types = true,
    .name = "deepseek2",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.kv_lora_rank", "expert_feed_forward_length", "expert_shared_count", NULL },
    .mtp = true,   /* load_mtp loads the NextN blocks */
    .build_mtp = build_deepseek2_mtp,
    .mem = GGFIT_MEM_KV,
    .nextn_kv = true,
    .build = build_deepseek2,
};

/* mistral4: llama_model_mistral4 reuses deepseek2's hparams, tensors and
 * graph. */
const ggfit_arch ggfit__model_mistral4 = {
    .mla_same_kv_types = true,
    .name = "mistral4",
    .mem = GGFIT_MEM_KV,
    .nextn_kv = true,
    .build = build_deepseek2,
};
