/*
 * nanbeige.c - src/models/nanbeige.cpp: Nanbeige, Llama's block (RoPE with
 * rope_freqs when present, SwiGLU FFN with optional biases). Files that
 * loop their blocks (num_loops > 1) have blocks * loops layers (the model
 * expands them, llama/model.c's looping_archs): each pass has
 * its own KV cells and device and runs the weights of the file's block
 * il % blocks where that block was placed; output_norm runs between passes
 * unless skip_loop_final_norm.
 */
#include "llama/graph.h"

/* llama_model_nanbeige::graph: layer il runs the weights of block w (the
 * weights' names and rope factors), its own KV cache and norms' device. */
static void build_nanbeige(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_layer = b->hp->n_layer;
    bool loops = ggfit__model_block_of(b->p->m, (uint32_t)(n_layer - 1)) != (uint32_t)(n_layer - 1);
    bool loop_norm = loops && !gb_key(b, "skip_loop_final_norm", 0);
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int w = (int)ggfit__model_block_of(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", w), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t rf = gb_rope_factors(b, w);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, w, li->n_head, li->n_head_kv, false, &q, &k, &v);
        q = gb_rope(b, q, rf, w);
        k = gb_rope(b, k, rf, w);
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", w),
                      gb_weight(b, "blk.%d.attn_output.bias", w), q, k, v, -1, il);
        gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", w), il);
        gb_cb(b, cur, "ffn_norm", il);
        cur = gb_ffn_bias(b, cur, w);
        gb_cb(b, cur, "ffn_out", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
        if (loop_norm && ggfit__model_block_of(b->p->m, (uint32_t)il + 1) == 0 &&
            il + 1 < n_layer) {
            inpL = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), il);
            gb_cb(b, inpL, "loop_norm", il);
        }
    }
    gb_output(b, inpL);
}

/* load_tensors creates rope_freqs for the file's blocks only. */
static bool rope_freqs_layer(const ggfit_model *m, uint32_t il)
{
    return ggfit__model_block_of(m, il) == il;
}

const ggfit_arch ggfit__model_nanbeige = {
    .name = "nanbeige",
    .num_loops = true,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .mem = GGFIT_MEM_KV,
    .build = build_nanbeige,
    .rope_freqs_layer = rope_freqs_layer,
};
