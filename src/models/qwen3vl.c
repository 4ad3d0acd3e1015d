/*
 * qwen3vl.c - src/models/qwen3vl.cpp and qwen3vl-moe.cpp: Qwen3-VL, Qwen3
 * (dense or MoE) with M-RoPE and deepstack layers, whose extra embedding
 * slices are added to the first layers' outputs. Both build one graph.
 */
#include "llama/check.h"
#include "llama/graph.h"

/* llama_model_qwen3vl::graph and llama_model_qwen3vlmoe::graph: Qwen3's
 * graph (dense or MoE) with four positions a token (ggml_rope_multi
 * allocates as ggml_rope_ext does) and n_deepstack_layers extra embedding
 * slices. */
static void build_qwen3vl(bctx *b)
{
    b->n_pos_per_embd = 4;
    b->n_deepstack = (int64_t)gb_key(b, "n_deepstack_layers", 0);
    if (b->n_deepstack < 0 || b->n_deepstack > (int64_t)b->hp->n_layer) {
        b->missing = true;
        return;
    }
    gb_build_llama_like(b, GB_LLAMA_QK_NORM);
}

/* load_arch_hparams reads the rope sections (get_key_or_arr, 4). */
static const ggfit_arr_key arr_keys[] = {
    GGFIT_ARR_ROPE_SECTIONS(true),
    { NULL },
};

/* The graph converts n_deepstack_layers to an integer. */
static void check(hp_check *c)
{
    hc_key_int(c, "n_deepstack_layers", 0, UINT32_MAX, 0, NULL,
               "llama.cpp reads it as an unsigned 32-bit count");
}

const ggfit_arch ggfit__model_qwen3vl = {
    .name = "qwen3vl",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .arr_keys = arr_keys,
    .check = check,
    .mem = GGFIT_MEM_KV,
    .build = build_qwen3vl,
    .rank_softmax = true,   /* build_pooling: the Qwen3 rerankers' softmax */
};

/* qwen3vlmoe: the same graph, whose FFNs are experts. */
const ggfit_arch ggfit__model_qwen3vlmoe = {
    .name = "qwen3vlmoe",
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", NULL },
    .arr_keys = arr_keys,
    .check = check,
    .mem = GGFIT_MEM_KV,
    .build = build_qwen3vl,
};
