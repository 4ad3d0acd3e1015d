/*
 * llada_moe.c - src/models/llada-moe.cpp and rnd1.cpp: LLaDA-MoE and RND1
 * (a Qwen3-MoE turned diffusion model), diffusion language models with RMS
 * Q/K norms and softmax-gated experts. Like Dream and LLaDA they have no
 * memory module and never attend causally: attention over the ubatch's own
 * tokens (build_attn_inp_no_cache), and the graph ends in the logits.
 */
#include "llama/graph.h"

/* llama_model_llada_moe::graph (rnd1 false) and llama_model_rnd1::graph
 * (rnd1 true): LLaDA-MoE norms Q and K before roping either, RND1 ropes Q
 * before norming K, and normalizes the chosen experts' weights; both leave
 * expert_weights_scale unread (0: no scale). */
static void build(bctx *b, bool rnd1)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const gb_params *p = b->p;
    int n_layer = (int)hp->n_layer;
    if (hp->n_embd_head_v != hp->n_embd_head_k || hp->n_expert == 0 ||
        hp->n_expert_used == 0 ||
        (!rnd1 && ggfit_gguf_find_tensor(b->gguf, "output.weight") < 0)) {
        b->missing = true;   /* llama.cpp asserts or throws; LLaDA-MoE needs its output */
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    b->inp_pos = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_tokens), NULL);
    gb_inputs_no_cache(b);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
        gb_cb(b, q, "Qcur_normed", il);
        if (rnd1)
            q = gg_rope(g, q, b->inp_pos, -1);
        k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
        gb_cb(b, k, "Kcur_normed", il);
        if (!rnd1)
            q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        /* RND1 passes attn_output.bias, which neither loads */
        cur = gb_attn_no_cache(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v,
                               il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_moe_ffn(b, cur, il, rnd1);
        gb_cb(b, cur, "ffn_moe_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

static void build_llada_moe(bctx *b)
{
    build(b, false);
}

static void build_rnd1(bctx *b)
{
    build(b, true);
}

const ggfit_arch ggfit__model_llada_moe = {
    .name = "llada-moe",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .non_causal = true,
    .build = build_llada_moe,
};

const ggfit_arch ggfit__model_rnd1 = {
    .name = "rnd1",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .non_causal = true,
    .build = build_rnd1,
};
