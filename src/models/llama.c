/*
 * build_llama.c - llama_model_llama::graph, llama_model_qwen3::graph and
 * llama_model_mistral3::graph (src/models/llama.cpp, qwen3.cpp,
 * qwen3moe.cpp, mistral3.cpp, qwen3vl.cpp, qwen3vlmoe.cpp): pre-norm
 * attention with RoPE, a dense or MoE SwiGLU FFN. Mixtral is a llama with
 * experts; Mistral 3 is a llama with optional attention temperature tuning;
 * Qwen3-VL is a qwen3 (or qwen3moe) with M-RoPE and deepstack layers.
 */
#include "llama/graph.h"

/* The three graphs differ in Q/K norms (qwen3), and in Mistral 3's
 * temperature scale on Q (temp: the model has one) and its LongRoPE
 * factors (long_short: read rope_factors_long/short without rope_freqs). */
static void build(bctx *b, bool qk_norm, bool long_short, bool temp)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t n_layer = hp->n_layer;
    int32_t rf_leaf[GGFIT_MAX_BUFTS];
    for (int i = 0; i < GGFIT_MAX_BUFTS; i++)
        rf_leaf[i] = -1;
    int32_t inpL = gb_inp_embd(b);
    b->attn_temp = temp;
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t rf = qk_norm ? -1 : gb_rope_factors(b, il);
        if (long_short && rf < 0)   /* LongRoPE's long or short factors */
            rf = gb_rope_factors_ls(b, il, rf_leaf);
        int32_t q, k, v;
        gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        if (qk_norm) {
            q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
            gb_cb(b, q, "Qcur_normed", il);
            q = gg_rope(g, q, b->inp_pos, -1);
            k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
            gb_cb(b, k, "Kcur_normed", il);
            k = gg_rope(g, k, b->inp_pos, -1);
        } else {
            q = gb_rope(b, q, rf, il);
            k = gb_rope(b, k, rf, il);
        }
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        if (b->inp_attn_scale >= 0) {
            q = gg_binary(g, GGFIT_OP_MUL, q, b->inp_attn_scale);
            gb_cb(b, q, "Qcur_attn_temp_scaled", il);
        }
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                         gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
        if (!qk_norm)
            gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
            cur = gb_ffn(b, cur, il);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            /* Mistral 3's gate experts are optional, as llama's are. */
            cur = gb_moe_ffn(b, cur, il, !qk_norm || hp->n_expert_used > 0);
            gb_cb(b, cur, "ffn_moe_out", il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        if (!qk_norm)
            gb_cb(b, cur, "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        if (il < b->n_deepstack) {
            /* Deepstack: the embedding slice il + 1 of each input row is
             * added after layer il, image or not (for text it is the
             * padding's zeros). */
            const gg_tensor *e = &g->t[b->t_inp_embd];
            int32_t ds = gb_view_2d(b, b->t_inp_embd, hp->n_embd, b->p->n_tokens, e->nb[1],
                                    (uint64_t)(il + 1) * hp->n_embd * sizeof(float));
            /* After the last layer only the output rows are left: ggml_add
             * aborts unless the slice repeats onto them (llama.cpp has no
             * graph for a deepstack that reaches the last layer then). */
            if (gb_ne(b, cur, 1) % b->p->n_tokens != 0)
                b->missing = true;
            cur = gg_binary(g, GGFIT_OP_ADD, cur, ds);
            gb_cb(b, cur, "deepstack_out", il);
        }
        inpL = cur;
    }
    gb_output(b, inpL);
}

/* llama_model_llama::graph and llama_model_qwen3::graph (and qwen3moe). */
void gb_build_llama_like(bctx *b, bool qk_norm)
{
    build(b, qk_norm, false, false);
}

/* llama_model_mistral3::graph: the temperature input exists when
 * attention.temperature_scale is set. */
void gb_build_mistral3(bctx *b)
{
    build(b, false, true, gb_key(b, "attention.temperature_scale", 0) != 0);
}

/* llama_model_qwen3vl::graph and llama_model_qwen3vlmoe::graph: qwen3 and
 * qwen3moe with four positions a token (ggml_rope_multi allocates as
 * ggml_rope_ext does) and n_deepstack_layers extra embedding slices. */
void gb_build_qwen3vl(bctx *b)
{
    b->n_pos_per_embd = 4;
    b->n_deepstack = (int64_t)gb_key(b, "n_deepstack_layers", 0);
    if (b->n_deepstack < 0 || b->n_deepstack > (int64_t)b->hp->n_layer) {
        b->missing = true;
        return;
    }
    build(b, true, false, false);
}
