/*
 * bailingmoe3.c - src/models/bailingmoe3.cpp: BailingMoE3 (Ling 3), a
 * hybrid of KDA layers (Kimi Delta Attention: Q, K and V each through its
 * own short causal convolution, a full-rank decay gate bounded by
 * gate_lower_bound * sigmoid, the gated delta net over a recurrent state,
 * an RMS norm gated by sigmoid(ssm_g_a(x))) and MLA layers with partial
 * RoPE and a head-wise sigmoid output gate (the K-only latent cache of
 * DeepSeek-V2, Q from one projection or a LoRA pair). Layers with
 * head_count_kv 0 are the KDA ones. The first leading_dense_block_count
 * blocks have a dense FFN, the others routed experts plus a shared
 * expert, each SwiGLU clamped where swiglu_clamp_exp / _shexp say. The
 * last nextn_predict_layers blocks are an MTP head (graph_mtp), whose
 * context keeps a plain K cache of its block alone. From b10581 the
 * recurrent state keeps rollback snapshots (n_rs_seq): each of the last
 * n_rs_seq + 1 states, and conv windows, is stored.
 */
#include <stdio.h>

#include "llama/check.h"
#include "llama/graph.h"
#include "versions/version.h"

static int32_t name_t(bctx *b, int32_t t, const char *name, int il)
{
    gb_cb(b, t, name, il);
    return t;
}

static uint64_t f32_row(int64_t n)
{
    return ggfit_row_bytes(GGFIT_TYPE_F32, (uint64_t)n);
}

/* build_ffn with SiLU and a parallel gate; with swiglu_clamp_shexp[il]
 * set, up is clamped, silu(gate) clamped and the two multiplied. */
static int32_t ffn_w(bctx *b, int32_t cur, int32_t up, int32_t gate, int32_t down, int il)
{
    gg_graph *g = b->g;
    if (gb_key_layer(b, "swiglu_clamp_shexp", il) <= 1e-6)
        return gb_ffn_w(b, cur, up, gate, down, il);
    int32_t tmp = gg_mul_mat(g, up, cur);
    gb_cb(b, tmp, "ffn_up", il);
    cur = gg_mul_mat(g, gate, cur);
    gb_cb(b, cur, "ffn_gate", il);
    tmp = name_t(b, gg_clamp(g, tmp), "ffn_up_clamped", il);
    int32_t act = name_t(b, gg_unary_op(g, GGFIT_OP_UNARY, cur), "ffn_silu", il);
    act = name_t(b, gg_clamp(g, act), "ffn_silu_clamped", il);
    cur = name_t(b, gg_binary(g, GGFIT_OP_MUL, act, tmp), "ffn_swiglu_limited", il);
    return gg_mul_mat(g, down, cur);
}

/* The KDA layer of llama_model_bailingmoe3::graph: the full-rank decay
 * gate lower_bound * sigmoid(A * (f_a(x) + dt_bias)), the output gate
 * ssm_g_a on the input as it is, rollback snapshots. */
static const gb_kda kda = {
    .gate = GB_KDA_BOUNDED,
    .g_a = "blk.%d.ssm_g_a.weight",
    .flat = true,
    .rollback = true,
    .names = { [GB_KDA_N_GATE] = "kda_gate" },
};

/* The MLA layer (the trunk's and the MTP block's): Q from attn_q or the
 * LoRA pair, the roped parts of Q and of the latent, Q absorbed into the
 * latent (attn_k_b), attention over the K-only cache, attn_v_b per head,
 * a sigmoid gate per head, the output projection. */
static int32_t mla_layer(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t n_head = li->n_head, nt = b->p->n_tokens;
    int64_t hk = hp->n_embd_head_k_mla, hv = hp->n_embd_head_v_mla;
    int64_t n_rope = hp->n_rot, n_nope = hk - n_rope, rank = hp->n_lora_kv;
    if (n_nope <= 0) {
        b->missing = true;
        return cur;
    }
    int32_t attn_input = cur, q;
    int32_t wq_a = gb_weight(b, "blk.%d.attn_q_a.weight", il);
    if (wq_a >= 0) {
        q = name_t(b, gg_mul_mat(g, wq_a, cur), "q_a", il);
        q = name_t(b, gb_norm(b, q, gb_required(b, "blk.%d.attn_q_a_norm.weight", il), il),
                   "q_a_norm", il);
        q = name_t(b, gg_mul_mat(g, gb_required(b, "blk.%d.attn_q_b.weight", il), q), "q_b",
                   il);
    } else {
        q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    }
    uint64_t qb1 = f32_row(hk), qb2 = qb1 * (uint64_t)n_head;
    int32_t q_nope = gb_view_3d(b, q, n_nope, n_head, nt, qb1, qb2, 0);
    int32_t q_pe = gb_view_3d(b, q, n_rope, n_head, nt, qb1, qb2, f32_row(n_nope));
    int32_t kv_all = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_a_mqa.weight", il), cur);
    uint64_t kb1 = f32_row(rank + n_rope);
    int32_t kv = gb_view_2d(b, kv_all, rank, nt, kb1, 0);
    int32_t k_pe = gb_view_3d(b, kv_all, n_rope, 1, nt, kb1, kb1, f32_row(rank));
    q_pe = gg_rope(g, q_pe, b->inp_pos, -1);
    k_pe = gg_rope(g, k_pe, b->inp_pos, -1);
    kv = gb_norm(b, kv, gb_required(b, "blk.%d.attn_kv_a_norm.weight", il), il);
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    q_nope = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k_b.weight", il), q_nope);
    q_nope = gg_permute(g, q_nope, 0, 2, 1, 3);
    q = gg_concat(g, q_nope, q_pe, 0);
    kv = gb_reshape_3d(b, kv, rank, 1, nt);
    int32_t k = gg_concat(g, kv, k_pe, 0);
    int32_t wv_b = gb_required(b, "blk.%d.attn_v_b.weight", il);
    if (b->missing)
        return cur;
    cur = gb_attn_k(b, -1, -1, q, k, kv, wv_b, il);

    int32_t gate = gg_mul_mat(g, gb_required(b, "blk.%d.attn_gate.weight", il), attn_input);
    gate = gg_unary_op(g, GGFIT_OP_UNARY, gb_reshape_3d(b, gate, 1, n_head, nt));
    cur = gb_reshape_3d(b, cur, hv, n_head, nt);
    cur = gg_binary(g, GGFIT_OP_MUL, cur, gate);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il),
                     gb_cont_4d(b, cur, hv * n_head, nt, 1, 1));
    gb_cb(b, cur, "mla_out", il);
    return cur;
}

/* Routed experts (the file's gating, normalisation and scale, experts
 * clamped where swiglu_clamp_exp says) plus the shared expert. */
static int32_t moe(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    gb_moe o;
    gb_moe_layer(b, il, 0, &o);   /* expert_gating_func is required */
    o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
    o.swiglu_limit = (float)gb_key_layer(b, "swiglu_clamp_exp", il);
    int32_t m = gb_moe_ffn_ex(b, cur, &o, il);
    int32_t sh = ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                       gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                       gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    return gg_binary(g, GGFIT_OP_ADD, m, sh);
}

/* llama_model_bailingmoe3::graph (the MLA cache: build_inp_mem_hybrid_k),
 * with embeddings_nextn_masked off: the output rows are picked after the
 * final norm. */
static void build_bailingmoe3(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)(hp->n_layer - hp->n_nextn);
    if (!hp->n_embd_head_k_mla || !hp->n_embd_head_v_mla) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    gb_cb(b, inpL, "model.input_embed", -1);
    gb_inputs_rs(b);
    gb_inputs_k(b);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        if (b->p->layer_flags[il] & GB_LAYER_STATE)
            cur = gb_kda_layer(b, cur, il, &kda);
        else
            cur = mla_layer(b, cur, il);
        if (b->missing)
            return;
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        if ((uint32_t)il < hp->n_layer_dense_lead)
            cur = ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                        gb_required(b, "blk.%d.ffn_gate.weight", il),
                        gb_required(b, "blk.%d.ffn_down.weight", il), il);
        else
            cur = moe(b, cur, il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    if (b->missing)
        return;
    gb_mtp_trunk_output(b, inpL);
}

/* llama_model_bailingmoe3::graph_mtp: the first NextN block on the token's
 * embedding and the target's hidden state, its MLA attention on its own K
 * cache, experts and the shared expert, then the head (layer_output_norm,
 * the output rows, the output matrix). */
static void build_bailingmoe3_mtp(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int il = (int)(hp->n_layer - hp->n_nextn);
    int32_t emb, h;
    gb_mtp_embd(b, il, &emb, &h);
    int32_t cur = gb_mtp_eh_proj(b, il, emb, h);
    gb_inputs_k(b);
    int32_t inpSA = cur;
    cur = gb_norm(b, cur, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    cur = mla_layer(b, cur, il);
    if (b->missing)
        return;
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    cur = moe(b, cur, il);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_mtp_head(b, cur, il, GB_MTP_ROWS_NORMED,
                gb_required(b, "blk.%d.layer_output_norm.weight", il));
}

/* The value of key "<arch>.<suffix>" into *v; false when absent. */
static bool key_value(hp_check *c, const char *suffix, ggfit_value *v)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", c->prefix, suffix);
    int64_t i = ggfit_gguf_find_key(c->g, key);
    return i >= 0 && ggfit_gguf_value(c->g, (uint64_t)i, v);
}

/* load_arch_hparams asserts a safe gate (kda.safe_gate, true when absent)
 * and a negative kda.gate_lower_bound. */
static void check(hp_check *c)
{
    ggfit_value v;
    if (key_value(c, "kda.safe_gate", &v) && v.type == GGFIT_GGUF_BOOL && !v.u) {
        hc_fail(c, "%s.kda.safe_gate is false: llama.cpp's load_arch_hparams asserts a safe "
                "gate", c->prefix);
        return;
    }
    if (key_value(c, "kda.gate_lower_bound", &v) &&
        (v.type == GGFIT_GGUF_FLOAT32 || v.type == GGFIT_GGUF_FLOAT64) && !(v.f < 0))
        hc_fail(c, "%s.kda.gate_lower_bound is %g: llama.cpp's load_arch_hparams asserts it is "
                "below 0", c->prefix, v.f);
}

/* load_arch_hparams: the SwiGLU clamps, one per block (NextN blocks
 * included) or one for all. */
static const ggfit_arr_key arr_keys[] = {
    { "swiglu_clamp_exp", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, false },
    { "swiglu_clamp_shexp", true, GGFIT_GGUF_FLOAT32, GGFIT_ARR_BLOCKS, false },
    { NULL },
};

/* KDA layers are those with head_count_kv 0 (load_arch_hparams). */
const ggfit_arch ggfit__model_bailingmoe3 = {
    .name = "bailingmoe3",
    .added = LLAMA_CHANGE_BAILINGMOE3,
    .mla_same_kv_types = true,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.key_length_mla", "attention.value_length_mla", "attention.kv_lora_rank",
            "ssm.conv_kernel", "kda.head_dim", "kda.gate_lower_bound",
            "expert_feed_forward_length", "expert_shared_count", "leading_dense_block_count",
            "expert_gating_func", NULL },
    .arr_keys = arr_keys,
    .check = check,
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
    .state_size = gb_kda_state_size,
    .mtp = true,   /* load_mtp loads the NextN blocks */
    .mtp_kv_nextn = true,
    .build_mtp = build_bailingmoe3_mtp,
    /* the hybrid memory's default filter (not recurrent) keeps the NextN
     * block's K cache in the trunk's context too */
    .nextn_kv = true,
    .rs_rollback = true,
    .rs_rollback_since = LLAMA_CHANGE_ROLLBACK_BAILINGMOE3,
    .build = build_bailingmoe3,
};
