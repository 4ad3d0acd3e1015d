/*
 * kimi_k3.c - src/models/kimi-k3.cpp: Kimi-K3, the hybrid of KDA and MLA
 * layers of Kimi Linear (kimi_linear.c) with five changes: cross-layer
 * residual attention (every attn_res.block_size-th layer banks its raw
 * input; before each norm the banked checkpoints and the running stream
 * are mixed by a softmax of their RMS-normed scores), a latent MoE (the
 * routed experts run on a down-projected input, the router scores the
 * full one, routed_norm and routed_up bring the result back), the situ
 * activation everywhere SwiGLU was, a sigmoid output gate on the MLA
 * layers (no RoPE at all), and a full-rank KDA gate (ssm_g). With
 * kda.gate_lower_bound the decay gate is lower_bound * sigmoid(...)
 * instead of the softplus. Layers with head_count_kv 0 are the KDA ones.
 */
#include <stdio.h>
#include <string.h>

#include "llama/graph.h"
#include "versions/version.h"

static int32_t name_t(bctx *b, int32_t t, const char *name, int il)
{
    gb_cb(b, t, name, il);
    return t;
}

/* output_res_score belongs to the output layer (LLM_TENSOR_LAYER_OUTPUT). */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    if (!strcmp(t->info->name, "output_res_score.weight"))
        return ggfit_model_hparams(m)->n_layer;
    return -2;
}

/* The graph's own state: the banked checkpoints, [n_embd, n_ckpt, tokens]. */
typedef struct k3 {
    int32_t stack;
    bool situ_linear;
} k3;

/* situ(gate, up) = beta tanh(gate / beta) sigmoid(gate) * up, up through
 * linear_beta tanh(up / linear_beta) when linear_beta > 0. */
static int32_t situ(bctx *b, const k3 *k, int32_t gate, int32_t up)
{
    gg_graph *g = b->g;
    int32_t a = gg_scale(g, gg_unary_op(g, GGFIT_OP_UNARY, gg_scale(g, gate)));
    a = gg_binary(g, GGFIT_OP_MUL, a, gg_unary_op(g, GGFIT_OP_UNARY, gate));
    if (k->situ_linear)
        up = gg_scale(g, gg_unary_op(g, GGFIT_OP_UNARY, gg_scale(g, up)));
    return gg_binary(g, GGFIT_OP_MUL, a, up);
}

/* res_push: the raw stream appended to the checkpoints. */
static void res_push(bctx *b, k3 *k, int32_t cur)
{
    int32_t ckpt = gb_reshape_3d(b, cur, b->hp->n_embd, 1, b->p->n_tokens);
    k->stack = k->stack < 0 ? ckpt : gg_concat(b->g, k->stack, ckpt, 1);
}

/* res_mix: the checkpoints and the stream cur, each scored by score_w on
 * its RMS norm, weighed by the softmax of the scores; cur alone while
 * nothing is banked. */
static int32_t res_mix(bctx *b, const k3 *k, int32_t cur, int32_t score_w, int il)
{
    if (k->stack < 0)
        return cur;
    gg_graph *g = b->g;
    int64_t n_ckpt = gb_ne(b, k->stack, 1), nt = b->p->n_tokens;
    int32_t sc_src = gg_rms_norm(g, k->stack);
    sc_src = gg_sum_rows(g, gg_binary(g, GGFIT_OP_MUL, sc_src, score_w));
    sc_src = gb_reshape_2d(b, sc_src, n_ckpt, nt);
    int32_t sc_cur = gg_rms_norm(g, cur);
    sc_cur = gg_sum_rows(g, gg_binary(g, GGFIT_OP_MUL, sc_cur, score_w));
    int32_t scores = gg_concat(g, sc_src, sc_cur, 0);
    int32_t probs = name_t(b, gg_soft_max(g, scores, -1, -1), "res_probs", il);
    const gg_tensor *t = &g->t[probs];
    uint64_t nb1 = t->nb[1], nb0 = t->nb[0];
    int32_t p_src = gg_cont(g, gb_view_2d(b, probs, n_ckpt, nt, nb1, 0));
    int32_t p_cur = gg_cont(g, gb_view_2d(b, probs, 1, nt, nb1, nb0 * (uint64_t)n_ckpt));
    int64_t ne[2] = { b->hp->n_embd, nt };
    int32_t src[2] = { k->stack, p_src };
    int32_t out = gg_op_shape(g, GGFIT_OP_DSV4_HC_PRE, GGFIT_TYPE_F32, 2, ne, 2, src);
    return gg_binary(g, GGFIT_OP_ADD, out, gg_binary(g, GGFIT_OP_MUL, cur, p_cur));
}

/* build_kda_layer: the low-rank decay gate, A * softplus(f_b(f_a(x)) +
 * dt_bias), or with kda.gate_lower_bound lower_bound * sigmoid(-A *
 * (f_b(f_a(x)) + dt_bias)); the full-rank output gate ssm_g. */
static void kda_of(bctx *b, gb_kda *o)
{
    char key[160];
    snprintf(key, sizeof key, "%s.kda.gate_lower_bound", b->hp->arch);
    *o = (gb_kda){
        .f_b = true,
        .gate = ggfit_gguf_find_key(b->gguf, key) >= 0 ? GB_KDA_BOUNDED_NEG : GB_KDA_SOFTPLUS,
        .g_a = "blk.%d.ssm_g.weight",
        .names = {
            [GB_KDA_N_G1] = "kda_g1",
            [GB_KDA_N_BETA] = "kda_beta",
            [GB_KDA_N_SCAN_CONT] = "kda_scan_out",
            [GB_KDA_N_G2] = "kda_g2",
            [GB_KDA_N_NORMED] = "kda_normed",
        },
    };
}

/* build_latent_moe: the routed experts on the down-projected input (the
 * router on the full one), normed and projected back; the shared experts
 * on the full input. */
static int32_t latent_moe(bctx *b, const k3 *k, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t identity = cur;
    int32_t down = gb_weight(b, "blk.%d.ffn_routed_down.weight", il);
    int32_t routed_in = down >= 0 ? gg_mul_mat(g, down, cur) : cur;
    gb_moe o;
    gb_moe_layer(b, il, 0, &o);   /* expert_gating_func is required */
    int32_t logits = gg_mul_mat(g, o.gate_inp, identity);
    gb_cb(b, logits, "ffn_moe_logits", il);
    o.has_logits_in = true;
    o.logits_in = logits;
    o.exp_probs_b = gb_required(b, "blk.%d.exp_probs_b.bias", il);
    o.act = GB_MOE_SITU;
    o.situ_linear = k->situ_linear;
    if (o.gate_exps < 0)
        b->missing = true;   /* situ needs the gate experts */
    if (b->missing)
        return cur;
    int32_t out = name_t(b, gb_moe_ffn_ex(b, routed_in, &o, il), "ffn_moe_out", il);
    int32_t norm = gb_weight(b, "blk.%d.ffn_routed_norm.weight", il);
    if (norm >= 0)
        out = gb_norm(b, out, norm, il);
    int32_t up = gb_weight(b, "blk.%d.ffn_routed_up.weight", il);
    if (up >= 0)
        out = gg_mul_mat(g, up, out);
    int32_t gate_sh = gb_weight(b, "blk.%d.ffn_gate_shexp.weight", il);
    if (gate_sh >= 0) {
        int32_t gs = gg_mul_mat(g, gate_sh, identity);
        int32_t us = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up_shexp.weight", il), identity);
        int32_t sh = situ(b, k, gs, us);
        sh = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down_shexp.weight", il), sh);
        gb_cb(b, sh, "ffn_shexp", il);
        out = gg_binary(g, GGFIT_OP_ADD, out, sh);
    }
    gb_cb(b, out, "ffn_out", il);
    return out;
}

/* llama_model_kimi_k3::graph (the MLA cache: build_inp_mem_hybrid_k; no
 * positions, nothing is roped); the output rows are picked after the last
 * mix. */
static void build_kimi_k3(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)hp->n_layer;
    int32_t inpL = gb_kimi_inputs(b, "inp_embd");
    if (inpL < 0)
        return;
    k3 k = { .stack = -1, .situ_linear = gb_key(b, "activation.situ_linear_beta", 0) > 0 };
    uint32_t res_bs = (uint32_t)gb_key(b, "attn_res.block_size", 0);
    gb_kda kda;
    kda_of(b, &kda);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t prefix = inpL;
        int32_t cur = res_bs ? res_mix(b, &k, prefix, gb_required(b, "blk.%d.attn_res_score.weight",
                                                                  il), il)
                             : prefix;
        bool banked = res_bs && (uint32_t)il % res_bs == 0;
        if (banked)
            res_push(b, &k, prefix);   /* the raw layer input */
        cur = gb_kimi_mixer(b, cur, il, &kda, false);
        if (b->missing)
            return;
        prefix = banked ? cur : gg_binary(g, GGFIT_OP_ADD, prefix, cur);
        gb_cb(b, prefix, "prefix_sum_attn", il);
        cur = res_bs ? res_mix(b, &k, prefix, gb_required(b, "blk.%d.ffn_res_score.weight", il),
                               il)
                     : prefix;
        cur = gb_norm(b, cur, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        if ((uint32_t)il < hp->n_layer_dense_lead) {
            int32_t gt = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate.weight", il), cur);
            int32_t up = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
            cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), situ(b, &k, gt, up));
            gb_cb(b, cur, "ffn_out", il);
        } else {
            cur = latent_moe(b, &k, cur, il);
        }
        prefix = gg_binary(g, GGFIT_OP_ADD, prefix, cur);
        gb_cb(b, prefix, "l_out", il);
        inpL = prefix;
    }
    if (b->missing)
        return;
    int32_t cur = inpL;
    if (res_bs)
        cur = res_mix(b, &k, cur, gb_required(b, "output_res_score.weight", 0), -1);
    cur = gg_get_rows(g, cur, b->inp_out_ids);
    gb_output(b, cur);
}

/* KDA layers are those with head_count_kv 0 (load_arch_hparams). */
const ggfit_arch ggfit__model_kimi_k3 = {
    .name = "kimi-k3",
    .added = LLAMA_CHANGE_KIMI_K3,
    .mla_same_kv_types = true,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "attention.key_length_mla", "attention.value_length_mla", "attention.kv_lora_rank",
            "ssm.conv_kernel", "kda.head_dim", "expert_feed_forward_length", "expert_shared_count",
            "expert_gating_func", "attn_res.block_size", "activation.situ_beta",
            "activation.situ_linear_beta", NULL },
    .mem = GGFIT_MEM_HYBRID,
    .rec = GGFIT_REC_NO_KV_HEADS,
    .state_size = gb_kda_state_size,
    .tensor_layer = tensor_layer,
    .build = build_kimi_k3,
};
