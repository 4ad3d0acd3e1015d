/*
 * graph.h - the building blocks of llama.cpp's graphs (llama-graph.cpp),
 * shared by the per-architecture builders in src/models/<arch>.c. Each
 * block follows the llama.cpp function named in its comment op for op, in
 * the same order: the allocator's result depends on the order tensors are
 * created and expanded. An architecture's builder is static in its file
 * and reached through its registry row (ggfit_arch.build).
 */
#ifndef GGFIT_GRAPH_H
#define GGFIT_GRAPH_H

#include "llama/build.h"

/* gb_weight's memo of a block weight's format (at its address) and its
 * rest's number, so that each format is looked up once a build, not once a
 * layer. */
#define GB_REST_MEMO 128
typedef struct gb_rest_memo {
    const char *fmt;            /* NULL: empty */
    const char *rest;           /* the model's text of rest number id */
    uint32_t id;
} gb_rest_memo;

typedef struct bctx {
    gg_graph *g;
    const gb_params *p;
    const ggfit_hparams *hp;
    const ggfit_gguf *gguf;
    int32_t *leaf_of;           /* model tensor -> graph tensor, -1 */
    int32_t rope_leaf[GGFIT_MAX_BUFTS]; /* rope_freqs per buffer type */
    /* inputs */
    int32_t inp_pos, inp_out_ids, k_idxs, v_idxs, kq_mask, kq_mask_swa;
    int32_t k_idxs_swa, v_idxs_swa, k_rot, v_rot;
    int32_t k_rot_swa, v_rot_swa; /* rotations of the SWA cache, -1 */
    int32_t s_copy_main, s_copy_extra; /* state rows to read (gb_inputs_rs) */
    bool missing;               /* a required weight was not found */
    bool attn_soft_cap;         /* Gemma 2: tanh soft-capping of the KQ logits */
    /* Llama 4, Mistral 3: the inputs of a KV cache (gb_inputs_kv, _iswa)
     * include the attention temperature (build_inp_attn_scale) after the
     * positions. */
    bool attn_temp;
    int32_t inp_attn_scale;     /* 1x1xn_tokens, -1 */
    /* Qwen3-VL: positions per token (M-RoPE's 4; 0 means 1), and the
     * deepstack layers, whose extra embedding slices ride along the token
     * embeddings (hparams.n_embd_inp() = n_embd * (1 + n_deepstack)). */
    int64_t n_pos_per_embd, n_deepstack;
    int32_t t_inp_embd;         /* res->t_inp_embd: the first n_embd of each row */
    int32_t *cache_k, *cache_v; /* per layer: its iSWA cache tensors once made, -1 */
    /* gb_build_llama_like's end of the graph, from the last layer's output;
     * NULL: gb_output (Qwen3-TTS pads its codec head's logits). */
    void (*output)(struct bctx *b, int32_t inpL);
    /* res->t_embd: the last hidden states (the tensor gb_cb names
     * result_norm, result_embd or final_norm_out), which --embedding pools;
     * -1 until named. */
    int32_t t_embd;
    gb_rest_memo rest_memo[GB_REST_MEMO];
} bctx;

/* Weights: the graph tensor of model weight fmt (with %d = il), created on
 * first use in its buffer type; -1 when the model has none. gb_required
 * marks the graph unsupported instead. */
int32_t gb_weight(bctx *b, const char *fmt, int il);
int32_t gb_required(bctx *b, const char *fmt, int il);
int32_t gb_output_weight(bctx *b);
/* The usual end of a graph: output_norm (RMS), then the output matrix,
 * both outputs, expanded. */
void gb_output(bctx *b, int32_t inpL);
int32_t gb_rope_factors(bctx *b, int il);
int32_t gb_layer_copy(bctx *b, const char *name, int il, int32_t *leaf);
int32_t gb_rope(bctx *b, int32_t x, int32_t rf, int il);

/* llama.cpp's cb(): names "<name>-<il>" and pins "norm" when asked. */
void gb_cb_named(bctx *b, int32_t t, const char *name, int il);
static inline void gb_cb(bctx *b, int32_t t, const char *name, int il)
{
    /* Only a kept name, the last hidden states (il < 0) or a pin does
     * anything: most calls stop here. */
    if (b->g->names || il < 0 || b->p->pin_norms)
        gb_cb_named(b, t, name, il);
}
int64_t gb_ne(bctx *b, int32_t t, int d);

int32_t gb_reshape_2d(bctx *b, int32_t t, int64_t a, int64_t c);
int32_t gb_reshape_3d(bctx *b, int32_t t, int64_t a, int64_t c, int64_t d);
int32_t gb_reshape_4d(bctx *b, int32_t t, int64_t a, int64_t c, int64_t d, int64_t e);
int32_t gb_view_2d(bctx *b, int32_t t, int64_t a, int64_t c, uint64_t nb1, uint64_t offs);
int32_t gb_view_3d(bctx *b, int32_t t, int64_t a, int64_t c, int64_t d, uint64_t nb1,
                   uint64_t nb2, uint64_t offs);
int32_t gb_view_4d(bctx *b, int32_t t, int64_t a, int64_t c, int64_t d, int64_t e,
                   uint64_t nb1, uint64_t nb2, uint64_t nb3, uint64_t offs);

/* Inputs: build_inp_embd; the inputs of a plain KV cache (positions, k/v
 * indices, mask, rotations, output ids), in llama.cpp's creation order. */
int32_t gb_inp_embd(bctx *b);
/* build_inp_embd when hparams.f_embedding_scale != 0: the token rows
 * scaled (no deepstack). */
int32_t gb_inp_embd_scaled(bctx *b);
void gb_inputs_kv(bctx *b);

int32_t gb_norm(bctx *b, int32_t cur, int32_t w, int il);          /* RMS norm */
int32_t gb_hadamard(bctx *b, int32_t cur, int32_t rot);
void gb_qkv(bctx *b, int32_t cur, int il, int64_t n_head, int64_t n_head_kv, int32_t *q,
            int32_t *k, int32_t *v);
int32_t gb_attn_mha(bctx *b, int32_t q, int32_t k, int32_t v, int32_t mask, int32_t sinks,
                    int il);
int32_t gb_attn(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                int32_t sinks, int il);
/* gb_attn with a KQ bias kq_b added before the soft max (T5's relative
 * positions): build_attn_mha never uses flash attention then. */
int32_t gb_attn_kq_b(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                     int32_t kq_b, int il);
/* iSWA (llama_kv_cache_iswa): gb_inputs_kv with two caches (positions,
 * build_attn_inp_kv_iswa, output ids), and build_attn on the layer's cache,
 * the SWA one for GB_LAYER_SWA layers. */
void gb_inputs_kv_iswa(bctx *b);
int32_t gb_attn_iswa(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                     int32_t sinks, int il);
/* build_attn on iSWA caches without new keys and values: layer il attends
 * over the cache of the earlier layer il_kv (KV sharing, Gemma 3n), which
 * must have been built. */
int32_t gb_attn_iswa_shared(bctx *b, int32_t wo, int32_t q, int il, int il_kv);
int32_t gb_ffn(bctx *b, int32_t cur, int il);                        /* SwiGLU */
/* gb_ffn where the model requires the gate too (a missing one means no graph). */
int32_t gb_ffn_gated(bctx *b, int32_t cur, int il);
/* The last layer keeps only the output rows: of cur and of the residual. */
void gb_out_rows(bctx *b, int32_t *cur, int32_t *res);
int32_t gb_moe_ffn(bctx *b, int32_t cur, int il, bool norm_w);

/* Recurrent state (llama_memory_recurrent): gb_inputs_rs is
 * build_rs_inp_impl (the state copy indices); gb_state is layer il's cache_r
 * (which 'r') or cache_s ('s') tensor; gb_rs is build_rs, reading the states
 * the ubatch uses with get_rows or, when given, rows(b, states, ids, arg). */
typedef int32_t (*gb_rows_fn)(bctx *b, int32_t states, int32_t ids, void *arg);
void gb_inputs_rs(bctx *b);
int32_t gb_state(bctx *b, int il, char which);
int32_t gb_rs(bctx *b, int32_t s, int64_t state_size, gb_rows_fn rows, void *arg);
/* RWKV's token shifts in the r state r_all of a layer (gb_state 'r'):
 * build_rwkv_token_shift_load (n_embd x token_shift_count x n_seqs) and
 * build_rwkv_token_shift_store (expands the copy of ts into r_all). */
int32_t gb_rwkv_shift_load(bctx *b, int32_t r_all);
void gb_rwkv_shift_store(bctx *b, int32_t ts, int32_t r_all);
/* ggml_cont and ggml_cont_4d, named "<name> (cont)" as ggml names them
 * (gg_cont leaves them unnamed). */
int32_t gb_cont(bctx *b, int32_t t);
int32_t gb_cont_4d(bctx *b, int32_t t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);

/* Numbers under "<arch>.<suffix>" in the file, def when absent. */
double gb_key(bctx *b, const char *suffix, double def);
/* A per-layer float key (get_key_or_arr: one number for all layers, or an
 * array of float32, one a block): layer il's value, 0 when absent. */
double gb_key_layer(bctx *b, const char *suffix, int il);

/* A K-only cache (MLA, llm_graph_input_attn_k): gb_inputs_k builds the
 * positions, K indices, mask and output ids; gb_attn_k is build_attn on it,
 * V being the first v->ne[0] values of each key row. gb_attn_mha_v is
 * build_attn_mha with v_mla (-1: none), which turns the attention over the
 * latent back into one value per head. */
void gb_inputs_k(bctx *b);
int32_t gb_attn_k(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                  int32_t v_mla, int il);
int32_t gb_attn_mha_v(bctx *b, int32_t q, int32_t k, int32_t v, int32_t mask, int32_t sinks,
                      int32_t v_mla, int il);

/* build_ffn with SiLU on given weights: a parallel gate unless gate < 0. */
int32_t gb_ffn_w(bctx *b, int32_t cur, int32_t up, int32_t gate, int32_t down, int il);

/* build_moe_ffn with any of llama.cpp's gatings, SiLU or GPT-OSS's SwiGLU
 * experts, and optional biases. */
enum {                          /* llama_expert_gating_func_type */
    GB_GATING_SOFTMAX = 1,
    GB_GATING_SIGMOID = 2,
    GB_GATING_SOFTMAX_WEIGHT = 3, /* softmax over the chosen experts' logits */
    GB_GATING_SQRT_SOFTPLUS = 4,  /* sqrt(softplus(logits)) (DeepSeek V4) */
};
enum {                          /* build_moe_ffn's type_op */
    GB_MOE_SILU = 0,            /* SwiGLU with gate experts, else SiLU */
    GB_MOE_SWIGLU_OAI = 1,      /* GPT-OSS's clamped SwiGLU: the same op, its own name */
    GB_MOE_RELU_SQR = 2,        /* squared ReLU of up (no gate experts), Nemotron-H */
    GB_MOE_GELU = 3,            /* GEGLU with gate experts, else GELU (Gemma 4) */
    GB_MOE_SITU = 4,            /* situ of gate and up (Kimi-K3): beta tanh(gate /
                                   beta) sigmoid(gate), times up, itself through
                                   linear_beta tanh(up / linear_beta) when
                                   situ_linear */
};
typedef struct gb_moe {
    int32_t gate_inp, up_exps, gate_exps, down_exps; /* gate_exps -1: SiLU only */
    int32_t gate_up_exps;       /* gate and up in one tensor, else -1 */
    int32_t exp_probs_b;        /* bias on the choice, not the weights; -1 */
    int32_t gate_inp_b;         /* bias on the logits, for choice and weights; -1 */
    /* Each chosen expert's bias (ggml_add_id) after its up, gate or down
     * product; -1: none. With gate_up_exps only down's is read. */
    int32_t up_exps_b, gate_exps_b, down_exps_b;
    int act;                    /* GB_MOE_* */
    int gating;                 /* GB_GATING_* */
    bool norm_w;                /* the chosen weights sum to 1 */
    bool weight_before_ffn;     /* Llama 4: the weights scale each expert's input */
    bool select_logits;         /* Llama 4: the experts are chosen on the raw logits */
    float w_scale;              /* scales the weights unless 0 or 1 */
    int64_t n_expert, n_expert_used;
    uint32_t n_groups, n_group_used; /* expert groups (DeepSeek-V3); 0: none */
    /* probs_in: the router logits, made by the caller (has_logits_in),
     * instead of gate_inp times the input. */
    bool has_logits_in;
    int32_t logits_in;
    /* hparams.swiglu_clamp_exp[il] (Step-3.5): with separate gate and up
     * experts and SiLU, up is clamped, silu(gate) clamped, and the two
     * multiplied; 0: the plain SwiGLU. */
    float swiglu_limit;
    /* GroveMoE: the experts are chosen on sigmoid(logits), after any bias;
     * sel_div > 1: the chosen ones, among sel_n_expert, are divided by
     * sel_div (ggml_cast, ggml_scale, cast back: chunk experts) and the
     * weights read from sel_n_expert probabilities. Zero: neither. */
    bool sel_sigmoid;
    int64_t sel_n_expert, sel_div;
    /* selected_experts_in: the chosen experts, made by the caller (DeepSeek
     * V4's hash layers: token id to experts), instead of the top-k. */
    bool has_selected_in;
    int32_t selected_in;
    /* DeepSeek V4's swiglu_limit: up clamped, the gate clamped before the
     * SwiGLU (not silu(gate) after), one SWIGLU op. */
    bool clamp_gate;
    /* The chosen experts' per-expert down scale (ffn_down_exps.scale,
     * build_lora_mm_id's w_s, {n_expert}: Gemma 4): reshaped to
     * {1, n_expert, 1}, repeated over the tokens, its rows of the chosen
     * experts taken, the down product multiplied. */
    bool has_down_exps_s;
    int32_t down_exps_s;
    bool situ_linear;           /* GB_MOE_SITU: activation.situ_linear_beta > 0 */
} gb_moe;
int32_t gb_moe_ffn_ex(bctx *b, int32_t cur, const gb_moe *o, int il);
/* The routed experts o plus the shared ones (blk.N.ffn_{up,gate,down}_shexp)
 * on the same input, summed: the DeepSeek family's FFN ("ffn_moe_out",
 * "ffn_shexp", "ffn_out"); gb_moe_shared_layer with gb_moe_layer's
 * experts and gating. */
int32_t gb_moe_shared(bctx *b, int32_t cur, const gb_moe *o, int il);
int32_t gb_moe_shared_layer(bctx *b, int gating, int32_t cur, int il);
/* The MoE of layer il under llama.cpp's usual tensor names and keys
 * (expert_gating_func, else gating; expert_weights_norm and _scale; expert
 * groups). Gate and up experts are required unless fused as gate_up; no
 * biases, SiLU. */
void gb_moe_layer(bctx *b, int il, int gating, gb_moe *o);

/* Layer il's rope_factors_long or _short (llama_model::get_rope_factors:
 * long when a sequence's context exceeds the original one), one copy per
 * buffer type in leaf[GGFIT_MAX_BUFTS] (start at -1); -1 when absent. */
int32_t gb_rope_factors_ls(bctx *b, int il, int32_t *leaf);
/* build_qkv's fused path: Q, K and V are views of one attn_qkv product,
 * with its bias if any. */
void gb_qkv_fused(bctx *b, int32_t cur, int32_t wqkv, int il, int64_t n_head,
                  int64_t n_head_kv, int32_t *q, int32_t *k, int32_t *v);
/* build_ffn with SiLU, a parallel gate and the optional biases of up, gate
 * and down. */
int32_t gb_ffn_bias(bctx *b, int32_t cur, int il);
/* build_ffn with LLM_FFN_SWIGLU, LLM_FFN_SEQ and no gate: SwiGLU over the
 * halves of an up of 2 n_ff rows. */
int32_t gb_ffn_gate_up(bctx *b, int32_t cur, int il);

/* build_ffn in general: up, gate and down with their biases, each -1 when
 * absent; act one of GB_FFN_*; par: the gate reads the input (LLM_FFN_PAR),
 * else up's output (LLM_FFN_SEQ). */
enum {
    GB_FFN_SILU = 0,            /* SwiGLU with a parallel gate */
    GB_FFN_GELU = 1,            /* GEGLU with a parallel gate */
    GB_FFN_RELU = 2,            /* ReGLU with a parallel gate */
    GB_FFN_RELU_SQR = 3,        /* squared ReLU */
    GB_FFN_SWIGLU = 4,          /* SwiGLU over the halves of one product */
};
int32_t gb_build_ffn(bctx *b, int32_t cur, int32_t up, int32_t up_b, int32_t gate,
                     int32_t gate_b, int32_t down, int32_t down_b, int act, bool par, int il);

/* MiniCPM3's and PLM's attention over Q (n_embd_head_k a head, its last
 * n_rot values roped) and attn_kv_a_mqa's compressed keys and values, on a
 * plain KV cache (frequency factors rf, -1: none); v_flat: the values
 * stored as 2-D rows (PLM). */
int32_t gb_attn_kv_lora(bctx *b, int32_t cur, int32_t q, int32_t rf, bool v_flat, int il);

/* The Mamba1 and Mamba2 mixers of layer il (build_mamba_layer and
 * build_mamba2_layer, graph_mamba.c): they read and store the layer's
 * recurrent state (gb_inputs_rs first), or set b->missing. */
int32_t gb_mamba_layer(bctx *b, int32_t cur, int il);
int32_t gb_mamba2_layer(bctx *b, int32_t cur, int il);

/* The KDA layer of layer il (Kimi Delta Attention, graph_kda.c), as Kimi
 * Linear, Kimi-K3 and BailingMoE3 build it: it reads and stores the
 * layer's recurrent state (gb_inputs_rs first), or sets b->missing. The
 * decay gate is A * softplus(x + dt_bias) (SOFTPLUS) or lower_bound *
 * sigmoid(A * (x + dt_bias)), negated inside the sigmoid for BOUNDED_NEG;
 * the output gate is sigmoid(g_b(g_a(x))), g_a(x) alone without g_b. The
 * names are llama.cpp's cb() names at each point (NULL: none), which each
 * file sets its own way. gb_kda_state_size: the KDA layers' n_embd_r and
 * n_embd_s. gb_recurrent_attn (graph_delta.c): build_recurrent_attn
 * (delta-net-base.cpp) with the fused gated delta net: stores the final state, or with
 * n_rs_seq snapshots the last min(tokens, n_rs_seq + 1) states, one slot
 * of rows each; returns the outputs. */
enum { GB_KDA_SOFTPLUS, GB_KDA_BOUNDED, GB_KDA_BOUNDED_NEG };
enum {
    GB_KDA_N_CONV_STATES,       /* the layer's conv states */
    GB_KDA_N_F_B,               /* f_b(f_a(x)) */
    GB_KDA_N_G1,                /* the decay gate, 3-D */
    GB_KDA_N_GATE,              /* the decay gate, 4-D */
    GB_KDA_N_BETA_RAW,          /* beta before its sigmoid */
    GB_KDA_N_BETA,              /* beta */
    GB_KDA_N_SCAN_CONT,         /* the delta net's outputs, contiguous (no rollback) */
    GB_KDA_N_NEW_STATE,         /* its new state (no rollback) */
    GB_KDA_N_G2_RAW,            /* the output gate's product */
    GB_KDA_N_G2,                /* the output gate, 3-D */
    GB_KDA_N_NORMED,            /* the normed outputs */
    GB_KDA_N_COUNT
};
typedef struct gb_kda {
    bool f_b;                   /* the decay gate on f_b(f_a(x)), else on f_a(x) */
    int gate;                   /* GB_KDA_SOFTPLUS, _BOUNDED or _BOUNDED_NEG */
    const char *g_a, *g_b;      /* the output gate's weights (g_b NULL: g_a alone) */
    bool flat;                  /* g_a reads the input as it is (else reshaped by
                                 * sequences and back, as Kimi's files do) */
    bool rollback;              /* n_rs_seq snapshots of the conv windows and states */
    const char *names[GB_KDA_N_COUNT];
} gb_kda;
int32_t gb_kda_layer(bctx *b, int32_t cur, int il, const gb_kda *o);
void gb_kda_state_size(const ggfit_hparams *hp, uint64_t *r, uint64_t *s);
/* The MLA layers Kimi Linear and Kimi-K3 interleave with their KDA ones
 * (graph_kda.c): no RoPE, Q from attn_q or the LoRA pair, absorbed into
 * the latent (attn_k_b), attention over the K-only cache, attn_v_b per
 * head, the sigmoid gate where the layer has attn_gate, the output
 * projection; named: the Q/K/V steps get Kimi Linear's cb() names. */
int32_t gb_kimi_mla_layer(bctx *b, int32_t cur, int il, bool named);
/* The start of Kimi Linear's and Kimi-K3's graphs (the embeddings, named
 * embd_name, the recurrent state's and the K-only cache's inputs; -1 and
 * b->missing without the MLA head sizes), and their token mixer: the
 * attention norm of x, then the KDA layer (o) or the MLA layer,
 * whichever layer il is. */
int32_t gb_kimi_inputs(bctx *b, const char *embd_name);
int32_t gb_kimi_mixer(bctx *b, int32_t x, int il, const gb_kda *o, bool mla_named);
int32_t gb_recurrent_attn(bctx *b, int32_t s_all, int32_t q, int32_t k, int32_t v, int32_t gate,
                          int32_t beta, int32_t s, int il);

/* Granite's block (graph_granite.c: build_attention_layer, then
 * build_layer_ffn: a dense SiLU FFN with optional biases, or ffn_moe where
 * the layer has a router), the output rows picked on the last layer; and
 * the end of its graph (output norm, output matrix, 1 / logit_scale). */
typedef struct gb_granite {
    bool rope;                  /* RoPE on this layer (NoPE without) */
    bool res_scale;             /* residual_scale on both branches */
    bool swa;                   /* Granite SWA: build_qkv (attn_qkv when the file has
                                 * it), the iSWA cache and the layer's sinks */
    int32_t *rf_leaf;           /* LongRoPE factors' leaves per buffer type */
    int32_t (*ffn_moe)(bctx *b, int32_t cur, int il);
} gb_granite;
int32_t gb_granite_layer(bctx *b, int32_t inpL, int il, bool last, const gb_granite *o);
void gb_granite_output(bctx *b, int32_t inpL);

/* The whole graph of llama_model_llama::graph and the architectures that
 * repeat it, or b->missing; flags say how they differ. */
enum {
    GB_LLAMA_QK_NORM = 1,       /* Q/K RMS norms before a plain RoPE (Qwen3) */
    GB_LLAMA_LONG_SHORT = 2,    /* LongRoPE's factors without rope_freqs */
    GB_LLAMA_TEMP = 4,          /* the attention temperature input scales Q */
    GB_LLAMA_ANY_QKV = 8,       /* fused attn_qkv when the file has it (gb_build_qkv_clamp) */
};
void gb_build_llama_like(bctx *b, unsigned flags);

/* Without a memory module (encoders): build_norm with LLM_NORM, its weight
 * and bias optional (-1); build_attn_inp_no_cache, the n_tokens x n_tokens
 * mask (and the SWA one when the model has SWA layers); build_attn on it,
 * which expands q, k, v in that order and attends over the ubatch. */
int32_t gb_layer_norm(bctx *b, int32_t cur, int32_t w, int32_t bias, int il);
void gb_inputs_no_cache(bctx *b);
int32_t gb_attn_no_cache(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                         int il);

/* The older transformers: build_qkv on what create_tensor_qkv loaded (the
 * fused path when the layer has attn_qkv, else separate Q/K/V), each
 * product clamped when clamp (hparams.f_clamp_kqv, for the architectures
 * that read attention.clamp_kqv) and the file's value is above 0;
 * build_ffn on the layer's up, optional parallel gate and down, with their
 * optional biases, GB_FFN_SILU or GB_FFN_GELU, and the optional
 * activation scales; the end of a graph with LayerNorm
 * (optional biases of output_norm and output); the learned positions added
 * to the embeddings (after gb_inputs_kv). */
void gb_build_qkv_clamp(bctx *b, int32_t cur, int il, int64_t n_head, int64_t n_head_kv,
                        bool clamp, int32_t *q, int32_t *k, int32_t *v);
int32_t gb_ffn_act(bctx *b, int32_t cur, int il, int act);
void gb_output_ln(bctx *b, int32_t inpL);
int32_t gb_inp_embd_pos(bctx *b, int32_t inpL);
/* The GPT-2-like stack (GPT-2, StarCoder, StarCoder 2, CodeShell, GPT-NeoX,
 * BLOOM, MPT): LayerNorm, build_qkv, attention, GELU FFN, biases where the
 * file has them; learned positions whenever position_embd is there. */
enum {
    GB_GPT_POS = 1,             /* position_embd is required */
    GB_GPT_ROPE = 2,            /* RoPE on Q and K */
    GB_GPT_TOK_NORM = 4,        /* LayerNorm of the embeddings (BLOOM) */
    GB_GPT_PAR = 8,             /* parallel attention and FFN residuals */
    GB_GPT_CLAMP = 16,          /* attention.clamp_kqv clamps Q, K, V (MPT) */
};
void gb_build_gpt_like(bctx *b, unsigned flags);

/* MTP heads (graph_mtp.c): the token's embedding rows (the NextN block's
 * embed_tokens, else token_embd) and the hidden-state input, as the
 * DECODER_MTP graphs create them; their RMS norms joined and projected by
 * nextn.eh_proj (block il); the shared head: the output rows picked before
 * the norm (ROWS_FIRST, h_nextn unnormed), after it (ROWS_NORMED) or not
 * (ROWS_NONE: picked earlier), the RMS norm (norm_w, -1:
 * nextn.shared_head_norm, else output_norm), shared_head_head else the
 * output matrix, expanded. */
enum { GB_MTP_ROWS_NONE, GB_MTP_ROWS_NORMED, GB_MTP_ROWS_FIRST };
void gb_mtp_embd(bctx *b, int il, int32_t *emb, int32_t *h);
int32_t gb_mtp_eh_proj(bctx *b, int il, int32_t emb, int32_t h);
void gb_mtp_head(bctx *b, int32_t cur, int il, int rows, int32_t norm_w);
/* The end of the trunk's graph of a model with an MTP head: output_norm
 * over every token, kept as h_nextn (res->t_h_nextn, what the head reads),
 * then the output rows, the output matrix, expanded. */
void gb_mtp_trunk_output(bctx *b, int32_t inpL);

#endif
