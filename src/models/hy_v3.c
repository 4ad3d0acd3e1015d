/*
 * hy_v3.c - src/models/hy-v3.cpp: Hunyuan v3, RMS Q/K norms before RoPE,
 * dense SwiGLU FFNs in blocks without a router, else routed experts
 * (sigmoid gating unless the file says otherwise, exp_probs_b) plus a
 * shared expert; the output rows are picked after the final norm
 * (embeddings_nextn_masked is off). The last nextn_predict_layers blocks
 * are MTP heads: without --spec-type mtp llama.cpp skips the tensors it
 * creates with the block's flags and loads the optional ones; they get no
 * KV cells and are not in this graph (an MTP context's: build_hy_v3_mtp).
 */
#include <string.h>

#include "llama/graph.h"

/* The tensors of an MTP block created with mtp_flags (TENSOR_SKIP without
 * load_mtp); the optional ones are loaded. */
static bool nextn_loaded(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    static const char *const skipped[] = {
        "attn_norm.weight", "attn_qkv.weight", "attn_qkv.bias", "attn_q.weight",
        "attn_k.weight", "attn_v.weight", "attn_q.bias", "attn_k.bias", "attn_v.bias",
        "attn_output.weight", "attn_q_norm.weight", "attn_k_norm.weight", "ffn_norm.weight",
        "nextn.eh_proj.weight", "nextn.enorm.weight", "nextn.hnorm.weight",
    };
    const char *rest = strchr(t->info->name + 4, '.');   /* past "blk.N" */
    if (!rest)
        return false;
    rest++;
    for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++)
        if (strcmp(rest, skipped[i]) == 0)
            return false;
    return true;
}

static int32_t layer(bctx *b, int32_t inpL, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int32_t inpSA = inpL;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
    gb_cb(b, cur, "attn_norm", il);
    int32_t q, k, v;
    gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
    q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
    k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
    q = gb_rope(b, q, -1, il);
    k = gb_rope(b, k, -1, il);
    cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                  gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
    gb_cb(b, cur, "attn_out", il);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
        cur = gb_ffn_bias(b, cur, il);
        gb_cb(b, cur, "ffn_dense_out", il);
    } else {
        /* expert_gating_func, sigmoid when the file gives none */
        gb_moe o;
        gb_moe_layer(b, il, GB_GATING_SIGMOID, &o);
        o.exp_probs_b = gb_weight(b, "blk.%d.exp_probs_b", il);
        int32_t moe_out = gb_moe_ffn_ex(b, cur, &o, il);
        gb_cb(b, moe_out, "ffn_moe_out", il);
        int32_t sh = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                              gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                              gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
        gb_cb(b, sh, "ffn_shared_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, moe_out, sh);
        gb_cb(b, cur, "ffn_out", il);
    }
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* llama_model_hy_v3::graph */
static void build_hy_v3(bctx *b)
{
    int n_layer = (int)(b->hp->n_layer - b->hp->n_nextn);
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer && !b->missing; il++)
        inpL = layer(b, inpL, il);
    gb_mtp_trunk_output(b, inpL);
}

/* llama_model_hy_v3::graph_mtp: the first NextN block, a whole decoder
 * layer as the trunk's, on the joined embedding and hidden state; the head
 * on the output rows. */
static void build_hy_v3_mtp(bctx *b)
{
    int il = (int)(b->hp->n_layer - b->hp->n_nextn);
    int32_t emb, h;
    gb_mtp_embd(b, il, &emb, &h);
    gb_inputs_kv(b);
    int32_t cur = layer(b, gb_mtp_eh_proj(b, il, emb, h), il);
    if (!b->missing)
        gb_mtp_head(b, cur, il, GB_MTP_ROWS_NORMED, -1);
}

const ggfit_arch ggfit__model_hy_v3 = {
    .name = "hy_v3",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_feed_forward_length", NULL },
    .mtp = true,   /* load_mtp loads the NextN blocks */
    .mtp_kv_nextn = true,
    .build_mtp = build_hy_v3_mtp,
    .mem = GGFIT_MEM_KV,
    .nextn_loaded = nextn_loaded,
    .build = build_hy_v3,
};
