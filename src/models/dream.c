/*
 * dream.c - src/models/dream.cpp and llada.cpp: Dream and LLaDA, diffusion
 * language models on a Qwen2 / LLaMA shaped stack. They have no memory
 * module (llama_model::create_memory gives them nullptr) and never attend
 * causally (load_arch_hparams sets causal_attn false): attention runs over
 * the ubatch's own tokens with an n_tokens x n_tokens mask
 * (build_attn_inp_no_cache), and unlike the encoders the graph still ends
 * in the output head's logits.
 */
#include "llama/graph.h"

/* llama_model_dream::graph and llama_model_llada::graph: one graph. Dream
 * passes the layer's attn_output.bias, which it never loads, and LLaDA
 * none; Dream may load a fused attn_qkv (create_tensor_qkv), LLaDA only
 * separate Q, K and V, which build_qkv reads alike. */
static void build_dream(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const gb_params *p = b->p;
    int n_layer = (int)hp->n_layer;
    if (hp->n_embd_head_v != hp->n_embd_head_k) {
        b->missing = true;   /* llama.cpp asserts it */
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
        q = gg_rope(g, q, b->inp_pos, -1);
        k = gg_rope(g, k, b->inp_pos, -1);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn_no_cache(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q, k, v,
                               il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        /* build_ffn without biases, whatever LLaDA loads */
        cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                       gb_required(b, "blk.%d.ffn_gate.weight", il),
                       gb_required(b, "blk.%d.ffn_down.weight", il), il);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output(b, inpL);
}

const ggfit_arch ggfit__model_dream = {
    .name = "dream",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .non_causal = true,
    .build = build_dream,
};

const ggfit_arch ggfit__model_llada = {
    .name = "llada",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .non_causal = true,
    .build = build_dream,
};
