/*
 * test_archs.c - the graph builders of architectures llama.cpp has no
 * recorded graphs for here (qwen2, phi3, gemma2, granite, granitemoe,
 * glm4, llama4, mistral3, qwen2moe, smollm3, seed_oss, ernie4_5,
 * ernie4_5-moe, qwen3vl, qwen3vlmoe, cohere2, exaone4, olmo2, minimax-m2,
 * dots1, hunyuan-moe, hunyuan-dense, bailingmoe2, apertus, gemma3n), and
 * one hostile header that reached a division by zero in a builder.
 * Each test writes a small header-only GGUF with the tensors llama.cpp's
 * load_tensors creates for the architecture (names and shapes), projects it
 * on one RPC device and on the CPU alone, with flash attention on and off,
 * and checks that the compute buffers came from the graph, not from the
 * estimate.
 */
#include "arch_spec.h"

static void test_qwen2(void **state)
{
    (void)state;
    model_spec s;
    spec_init(&s, "qwen2");
    key_f32(&s, "rope.freq_base", 1000000.0f);
    head(&s, false, false);   /* tied output */
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(&s, il, true);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(&s, il);
    }
    project_all(&s, 0);
    spec_init(&s, "qwen2");
    head(&s, true, true);     /* own output with a bias */
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(&s, il, true);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(&s, il);
    }
    project_all(&s, 2048);
}

/* A header whose heads have no values (embedding_length below head_count,
 * so n_embd_head_k is 0) with a quantized K cache: the key rotation's size
 * search divided by zero. Any status will do; the projection must return. */
static void test_zero_head(void **state)
{
    (void)state;
    model_spec s;
    spec_init(&s, "qwen2");
    s.kvs[2].u = NH - 1;   /* embedding_length */
    head(&s, false, false);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(&s, il, false);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(&s, il);
    }
    gw w;
    write_spec(&s, &w);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 512;
    p.flash_attn = GGFIT_FA_ON;
    p.type_k = GGFIT_TYPE_Q8_0;
    ggfit_projection pr;
    ggfit_project(m, &p, NULL, 0, &pr, NULL, &err);
    ggfit_free(err);
    ggfit_model_free(m);
    gw_free(&w);
}

static void phi3_spec(model_spec *s, bool fused, bool factors, bool window)
{
    spec_init(s, "phi3");
    if (window)
        key_u32(s, "attention.sliding_window", 2047);   /* llama.cpp ignores it */
    key_u32(s, "rope.scaling.original_context_length", 4096);
    head(s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (fused) {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, NH * HD + 2 * NKV * HD, 1);
            tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        } else {
            attn_qkv(s, il, false);
        }
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, 2 * F, 1);
    }
    if (factors) {
        tensor(s, "rope_factors_long.weight", 0, HD / 2, 1, 1);
        tensor(s, "rope_factors_short.weight", 0, HD / 2, 1, 1);
    }
}

static void test_phi3(void **state)
{
    (void)state;
    model_spec s;
    phi3_spec(&s, true, true, true);
    project_all(&s, 0);       /* short factors */
    project_all(&s, 16384);   /* long factors */
    phi3_spec(&s, false, false, false);
    project_all(&s, 0);
}

static void gemma2_spec(model_spec *s)
{
    spec_init(s, "gemma2");
    key_u32(s, "attention.key_length", HD);
    key_u32(s, "attention.value_length", HD);
    key_u32(s, "attention.sliding_window", 1024);
    key_f32(s, "attn_logit_softcapping", 50.0f);
    key_f32(s, "final_logit_softcapping", 30.0f);
    head(s, false, false);    /* gemma2 always ties its output */
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.post_attention_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
        tensor(s, "blk.%d.post_ffw_norm.weight", il, E, 1, 1);
    }
}

static void test_gemma2(void **state)
{
    (void)state;
    model_spec s;
    gemma2_spec(&s);
    project_all(&s, 0);
    project_all(&s, 512);     /* the window covers the whole context */
}

static void granite_spec(model_spec *s, const char *arch, bool moe, bool shexp, bool rope,
                         bool biases)
{
    spec_init(s, arch);
    key_f32(s, "logit_scale", 8.0f);
    key_f32(s, "residual_scale", 0.22f);
    key_f32(s, "embedding_scale", 12.0f);
    key_f32(s, "attention.scale", 0.0078125f);
    if (!rope)
        key_bool(s, "rope.scaling.finetuned", false);
    if (moe) {
        key_u32(s, "expert_count", NX);
        key_u32(s, "expert_used_count", 2);
    }
    if (shexp)
        key_u32(s, "expert_shared_feed_forward_length", F);
    head(s, false, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        if (biases)
            tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (!moe) {
            ffn_swiglu(s, il);
            if (biases) {
                tensor(s, "blk.%d.ffn_gate.bias", il, F, 1, 1);
                tensor(s, "blk.%d.ffn_down.bias", il, E, 1, 1);
                tensor(s, "blk.%d.ffn_up.bias", il, F, 1, 1);
            }
            continue;
        }
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, F, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, F, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, F, NX);
        if (shexp) {
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, F, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, F, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, F, E, 1);
        }
    }
}

static void test_granite(void **state)
{
    (void)state;
    model_spec s;
    granite_spec(&s, "granite", false, false, true, false);
    project_all(&s, 0);
    granite_spec(&s, "granite", false, false, false, true);   /* no RoPE, biases */
    project_all(&s, 0);
}

static void test_granitemoe(void **state)
{
    (void)state;
    model_spec s;
    granite_spec(&s, "granitemoe", true, false, true, false);
    project_all(&s, 0);
    granite_spec(&s, "granitemoe", true, true, true, false);  /* shared expert */
    project_all(&s, 0);
}

/* GLM-4-0414: biased Q/K/V (or fused), RoPE on half of each head, norms
 * after the attention and the FFN, a fused gate_up FFN. */
static void glm4_spec(model_spec *s, bool fused)
{
    spec_init(s, "glm4");
    s->kvs[7].u = HD / 2;     /* rope.dimension_count: partial RoPE */
    key_f32(s, "rope.freq_base", 10000.0f);
    head(s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (fused) {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, NH * HD + 2 * NKV * HD, 1);
            tensor(s, "blk.%d.attn_qkv.bias", il, NH * HD + 2 * NKV * HD, 1, 1);
            tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        } else {
            attn_qkv(s, il, true);
        }
        tensor(s, "blk.%d.post_attention_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, 2 * F, 1);
        tensor(s, "blk.%d.post_ffw_norm.weight", il, E, 1, 1);
    }
}

static void test_glm4(void **state)
{
    (void)state;
    model_spec s;
    glm4_spec(&s, false);
    project_all(&s, 0);
    glm4_spec(&s, true);
    project_all(&s, 2048);
}

/* Llama 4 in miniature: 8 layers, so chunked (0-2, 4-6) and no-RoPE (3, 7)
 * layers, dense (even) and MoE (odd) FFNs meet in every combination; top-1
 * of 4 experts. n_experts 128 drops the Q/K norms (Maverick). window: write
 * sliding_window (0 turns the chunks off). */
static void llama4_spec(model_spec *s, uint32_t n_experts, bool window, uint32_t n_window)
{
    enum { L4 = 8 };
    spec_init(s, "llama4");
    s->kvs[0].u = L4;          /* block_count */
    s->kvs[2].u = 32768;       /* context_length */
    key_u32(s, "expert_count", n_experts);
    key_u32(s, "expert_used_count", 1);
    key_u32(s, "expert_feed_forward_length", F / 2);
    key_u32(s, "interleave_moe_layer_step", 2);
    key_f32(s, "rope.freq_base", 500000.0f);
    if (window)
        key_u32(s, "attention.sliding_window", n_window);
    head(s, true, false);
    tensor(s, "rope_freqs.weight", 0, HD / 2, 1, 1);
    for (int il = 0; il < L4; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (il % 2 == 0) {
            ffn_swiglu(s, il);
            continue;
        }
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, n_experts, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, F / 2, n_experts);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, F / 2, E, n_experts);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, F / 2, n_experts);
        tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, F / 2, 1);
        tensor(s, "blk.%d.ffn_down_shexp.weight", il, F / 2, E, 1);
        tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, F / 2, 1);
    }
}

static void test_llama4(void **state)
{
    (void)state;
    model_spec s;
    llama4_spec(&s, NX, false, 0);
    project_all(&s, 0);
    project_all(&s, 20000);   /* past the chunk: a smaller SWA cache */
    llama4_spec(&s, 128, false, 0);   /* Maverick: no Q/K norms */
    project_all(&s, 0);
    llama4_spec(&s, NX, true, 0);     /* no chunks, RoPE on all but the last layer */
    project_all(&s, 0);
}

/* Mistral 3: a llama with optional temperature tuning and, with
 * LongRoPE, long and short factors; dense or with experts (softmax gating,
 * normalised weights; gate experts optional). */
static void mistral3_spec(model_spec *s, bool moe, bool gate_exps, bool temp, bool longrope)
{
    spec_init(s, "mistral3");
    key_f32(s, "rope.freq_base", 1000000.0f);
    if (temp) {
        key_f32(s, "attention.temperature_scale", 0.1f);
        key_u32(s, "rope.scaling.original_context_length", 1024);
        key_str(s, "rope.scaling.type", "yarn");
        key_f32(s, "rope.scaling.factor", 4.0f);
    }
    if (longrope) {
        key_str(s, "rope.scaling.type", "longrope");
        key_u32(s, "rope.scaling.original_context_length", 4096);
    }
    if (moe) {
        key_u32(s, "expert_count", NX);
        key_u32(s, "expert_used_count", 2);
    }
    head(s, !temp, false);   /* tied output with temperature tuning */
    if (longrope) {
        tensor(s, "rope_factors_long.weight", 0, HD / 2, 1, 1);
        tensor(s, "rope_factors_short.weight", 0, HD / 2, 1, 1);
    }
    if (!moe && !longrope)
        tensor(s, "rope_freqs.weight", 0, HD / 2, 1, 1);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (!moe) {
            ffn_swiglu(s, il);
            continue;
        }
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        if (gate_exps)
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, F, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, F, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, F, NX);
    }
}

static void test_mistral3(void **state)
{
    (void)state;
    model_spec s;
    mistral3_spec(&s, false, false, true, false);   /* rope_freqs, temperature */
    project_all(&s, 0);
    mistral3_spec(&s, true, true, false, false);    /* experts */
    project_all(&s, 0);
    mistral3_spec(&s, true, false, false, true);    /* SiLU experts, LongRoPE */
    project_all(&s, 0);       /* short factors */
    project_all(&s, 16384);   /* long factors */
}

/* Qwen2-MoE: Q/K/V biases, experts of their own length (softmax gating,
 * weights not normalised) plus a gated shared expert in every block. */
static void qwen2moe_spec(model_spec *s, bool lengths)
{
    enum { FX = 128, FS = 384 };
    spec_init(s, "qwen2moe");
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    if (lengths) {
        key_u32(s, "expert_feed_forward_length", FX);
        key_u32(s, "expert_shared_feed_forward_length", FS);
    }
    /* Without the lengths: n_ff / n_expert_used per expert, n_ff shared. */
    int64_t fx = lengths ? FX : F / 2, fs = lengths ? FS : F;
    head(s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, true);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, fx, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, fx, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, fx, NX);
        tensor(s, "blk.%d.ffn_gate_inp_shexp.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, fs, 1);
        tensor(s, "blk.%d.ffn_down_shexp.weight", il, fs, E, 1);
        tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, fs, 1);
    }
}

static void test_qwen2moe(void **state)
{
    (void)state;
    model_spec s;
    qwen2moe_spec(&s, true);
    project_all(&s, 0);
    qwen2moe_spec(&s, false);
    project_all(&s, 0);
}

/* SmolLM3: a llama whose every 4th layer skips RoPE, so four layers. */
static void test_smollm3(void **state)
{
    (void)state;
    model_spec s;
    for (int tied = 0; tied <= 1; tied++) {
        spec_init(&s, "smollm3");
        s.kvs[0].u = NL + 1;   /* block_count */
        key_f32(&s, "rope.freq_base", 5000000.0f);
        head(&s, !tied, false);
        for (int il = 0; il < NL + 1; il++) {
            tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
            attn_qkv(&s, il, false);
            tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
            ffn_swiglu(&s, il);
        }
        project_all(&s, tied ? 2048 : 0);
    }
}

/* Seed-OSS: Q/K/V biases; the FFN's norm is post_attention_norm. */
static void test_seed_oss(void **state)
{
    (void)state;
    model_spec s;
    spec_init(&s, "seed_oss");
    key_f32(&s, "rope.freq_base", 10000000.0f);
    head(&s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(&s, il, true);
        tensor(&s, "blk.%d.post_attention_norm.weight", il, E, 1, 1);
        ffn_swiglu(&s, il);
    }
    project_all(&s, 0);
}

/* ERNIE 4.5 (dense): an output bias llama.cpp loads and never adds. */
static void test_ernie4_5(void **state)
{
    (void)state;
    model_spec s;
    spec_init(&s, "ernie4_5");
    head(&s, false, false);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(&s, il, false);
        tensor(&s, "blk.%d.attn_output.bias", il, E, 1, 1);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(&s, il);
    }
    project_all(&s, 0);
}

/* ERNIE 4.5 MoE: leading dense layers (lead of them), then softmax-gated
 * experts with normalised weights, a selection bias and, when shared, a
 * shared expert. */
static void ernie4_5_moe_spec(model_spec *s, int lead, bool shared)
{
    enum { FX = 128, FS = 384 };
    spec_init(s, "ernie4_5-moe");
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    if (shared)
        key_u32(s, "expert_shared_feed_forward_length", FS);
    key_u32(s, "interleave_moe_layer_step", 1);
    key_u32(s, "leading_dense_block_count", (uint32_t)lead);
    head(s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (il < lead) {
            ffn_swiglu(s, il);
            continue;
        }
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        if (shared)
            tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
        if (shared) {
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FS, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, FS, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FS, 1);
        }
    }
}

/* Qwen3-VL's text model: qwen3 (or qwen3moe) with M-RoPE sections and
 * n_deep extra embedding slices (none: the plain input width). */
static void qwen3vl_spec(model_spec *s, bool moe, uint32_t n_deep)
{
    enum { FX = 128 };
    static const uint32_t sections[4] = { 12, 10, 10, 0 };  /* HD / 2 */
    spec_init(s, moe ? "qwen3vlmoe" : "qwen3vl");
    key_arr4(s, "rope.dimension_sections", sections);
    if (n_deep)
        key_u32(s, "n_deepstack_layers", n_deep);
    if (moe) {
        key_u32(s, "expert_count", NX);
        key_u32(s, "expert_used_count", 2);
        key_u32(s, "expert_feed_forward_length", FX);
    }
    head(s, !moe, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (moe) {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
        } else {
            ffn_swiglu(s, il);
        }
    }
}

static void test_ernie4_5_moe(void **state)
{
    (void)state;
    model_spec s;
    ernie4_5_moe_spec(&s, 1, true);
    project_all(&s, 0);
    ernie4_5_moe_spec(&s, 0, false);
    project_all(&s, 0);
}

static void test_qwen3vl(void **state)
{
    (void)state;
    model_spec s;
    qwen3vl_spec(&s, false, 2);
    project_all(&s, 0);
    qwen3vl_spec(&s, false, 0);
    project_all(&s, 0);
}

static void test_qwen3vlmoe(void **state)
{
    (void)state;
    model_spec s;
    qwen3vl_spec(&s, true, 2);
    project_all(&s, 0);
}

/* A deepstack reaching the last layer adds a slice of every token to the
 * output rows alone: llama.cpp's ggml_add aborts unless the tokens repeat
 * onto them (-np 3: 3 outputs of 512 tokens), so there is no graph and the
 * compute buffers are estimated; with every token an output it builds. */
static void test_qwen3vl_deepstack_last(void **state)
{
    (void)state;
    model_spec s;
    qwen3vl_spec(&s, true, NL);
    gw w;
    write_spec(&s, &w);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    for (int np = 1; np <= 3; np += 2) {
        char value[16];
        snprintf(value, sizeof value, "%d", np);
        char flag[] = "-np";
        char *argv[] = { flag, value };
        int i = 0;
        ggfit_params p;
        ggfit_params_init(&p);
        p.n_ctx = 16384;
        assert_int_equal(ggfit_params_parse_arg(&p, 2, argv, &i, NULL, &err), GGFIT_OK);
        ggfit_projection pr;
        assert_int_equal(ggfit_project(m, &p, NULL, 0, &pr, NULL, &err), GGFIT_OK);
        assert_int_equal(pr.compute_estimated, np == 3);
    }
    ggfit_model_free(m);
    gw_free(&w);
}

/* Command R7B-like: a parallel block under one layer norm, iSWA over
 * n_layer blocks (the default period 4: three windowed, one global), a
 * logit scale; Q/K/V fused when asked, with a pattern of its own. */
static void cohere2_spec(model_spec *s, int n_layer, bool fused, uint32_t pattern)
{
    spec_init(s, "cohere2");
    s->kvs[0].u = (uint32_t)n_layer;   /* block_count */
    key_u32(s, "attention.sliding_window", 256);
    if (pattern)
        key_u32(s, "attention.sliding_window_pattern", pattern);
    key_f32(s, "attention.layer_norm_epsilon", 1e-5f);
    key_f32(s, "logit_scale", 0.125f);
    key_f32(s, "rope.freq_base", 50000.0f);
    head(s, false, false);    /* cohere2 always ties its output */
    for (int il = 0; il < n_layer; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (fused) {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, NH * HD + 2 * NKV * HD, 1);
            tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        } else {
            attn_qkv(s, il, false);
        }
        ffn_swiglu(s, il);
    }
}

static void test_cohere2(void **state)
{
    (void)state;
    model_spec s;
    cohere2_spec(&s, 4, false, 0);
    project_all(&s, 0);
    cohere2_spec(&s, 6, true, 3);
    project_all(&s, 0);
    project_all(&s, 128);     /* the window covers the whole context */
}

/* OLMo 2 / EXAONE 4.0 blocks: Q/K norms (OLMo's over whole rows, EXAONE's
 * per head), norms after attention and FFN, no pre-norm. */
static void post_norm_spec(model_spec *s, const char *arch, int n_layer, uint32_t window,
                           bool output, bool factors)
{
    spec_init(s, arch);
    s->kvs[0].u = (uint32_t)n_layer;   /* block_count */
    if (window)
        key_u32(s, "attention.sliding_window", window);
    head(s, output, false);
    bool olmo = !strcmp(arch, "olmo2");
    for (int il = 0; il < n_layer; il++) {
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_q_norm.weight", il, olmo ? NH * HD : HD, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, olmo ? NKV * HD : HD, 1, 1);
        tensor(s, "blk.%d.post_attention_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
        tensor(s, "blk.%d.post_ffw_norm.weight", il, E, 1, 1);
    }
    if (factors)
        tensor(s, "rope_freqs.weight", 0, HD / 2, 1, 1);
}

static void test_exaone4(void **state)
{
    (void)state;
    model_spec s;
    /* Only the 64-block model (32B) has windows: three in four layers. */
    post_norm_spec(&s, "exaone4", 64, 512, true, false);
    project_all(&s, 0);
    /* No window in the file: 4096 tokens, under a longer context. */
    post_norm_spec(&s, "exaone4", 64, 0, false, true);
    project_all(&s, 16384);
    /* 1.2B-like: no windows whatever the file says, rope factors. */
    post_norm_spec(&s, "exaone4", NL, 512, false, true);
    project_all(&s, 0);
}

/* EXAONE 4.5 as convert_hf_to_gguf.py writes it: 64 blocks and an MTP one
 * (block_count 65, nextn_predict_layers 1) with the MTP block's tensors,
 * sliding_window 4096 and sliding_window_pattern one bool per main block
 * (layer_types, LLLG). load_arch_hparams counts the blocks before it
 * reads nextn_predict_layers: 65, not 64, so no sliding window at all, the
 * pattern never read: the projection of the same file without both keys. */
static void exaone45_spec(model_spec *s, bool swa_keys)
{
    static uint8_t lllg[64];
    for (int i = 0; i < 64; i++)
        lllg[i] = i % 4 != 3;
    post_norm_spec(s, "exaone4", 65, swa_keys ? 4096 : 0, true, true);
    key_u32(s, "nextn_predict_layers", 1);
    if (swa_keys)
        key_arr(s, "attention.sliding_window_pattern", GGFIT_GGUF_BOOL, lllg, 64);
    tensor(s, "blk.%d.nextn.eh_proj.weight", 64, 2 * E, E, 1);
    tensor(s, "blk.%d.nextn.enorm.weight", 64, E, 1, 1);
    tensor(s, "blk.%d.nextn.hnorm.weight", 64, E, 1, 1);
    tensor(s, "blk.%d.nextn.shared_head_norm.weight", 64, E, 1, 1);
}

static void test_exaone45(void **state)
{
    (void)state;
    model_spec s, plain;
    exaone45_spec(&s, true);
    exaone45_spec(&plain, false);
    assert_true(same_projection(&s, &plain, 16384));
    /* EXAONE 4.0 32B with that array: windows on three layers in four,
     * the array passed over (the period 4 stands), as without it. */
    static const uint8_t none[64];
    post_norm_spec(&s, "exaone4", 64, 4096, true, true);
    post_norm_spec(&plain, "exaone4", 64, 4096, true, true);
    key_arr(&s, "attention.sliding_window_pattern", GGFIT_GGUF_BOOL, none, 64);
    assert_true(same_projection(&s, &plain, 16384));
    /* whose windowed cache is smaller than EXAONE 4.5's full one */
    ggfit_projection with_swa, without;
    project_one(&s, 16384, &with_swa);
    exaone45_spec(&s, true);
    project_one(&s, 16384, &without);
    assert_true(with_swa.host.context < without.host.context);
}

static void test_olmo2(void **state)
{
    (void)state;
    model_spec s;
    post_norm_spec(&s, "olmo2", 4, 256, true, false);   /* OLMo 3: windows */
    project_all(&s, 0);
    post_norm_spec(&s, "olmo2", NL, 0, true, false);    /* OLMo 2 */
    project_all(&s, 0);
}

/* MiniMax-M2: Q/K norms over whole rows, RoPE on half of each head;
 * sigmoid-gated experts of n_ff rows with a selection bias in every block. */
static void test_minimax_m2(void **state)
{
    (void)state;
    model_spec s;
    spec_init(&s, "minimax-m2");
    s.kvs[7].u = HD / 2;   /* rope.dimension_count */
    key_u32(&s, "expert_count", NX);
    key_u32(&s, "expert_used_count", 2);
    key_u32(&s, "expert_feed_forward_length", F);
    key_u32(&s, "expert_gating_func", 2);
    head(&s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(&s, il, false);
        tensor(&s, "blk.%d.attn_q_norm.weight", il, NH * HD, 1, 1);
        tensor(&s, "blk.%d.attn_k_norm.weight", il, NKV * HD, 1, 1);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(&s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(&s, "blk.%d.ffn_gate_exps.weight", il, E, F, NX);
        tensor(&s, "blk.%d.ffn_down_exps.weight", il, F, E, NX);
        tensor(&s, "blk.%d.ffn_up_exps.weight", il, E, F, NX);
        tensor(&s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
    }
    project_all(&s, 0);
}

/* dots.llm1: qwen3's attention without GQA (llama.cpp loads K and V
 * with n_head heads); one leading dense block, then sigmoid-gated
 * experts (selection bias, normalised and scaled weights) plus a shared
 * expert. */
static void test_dots1(void **state)
{
    (void)state;
    enum { FX = 128 };
    model_spec s;
    spec_init(&s, "dots1");
    s.kvs[6].u = NH;   /* head_count_kv: llama.cpp loads K and V with n_head heads */
    key_u32(&s, "expert_count", NX);
    key_u32(&s, "expert_used_count", 2);
    key_u32(&s, "expert_feed_forward_length", FX);
    key_u32(&s, "expert_shared_count", 2);
    key_u32(&s, "leading_dense_block_count", 1);
    key_u32(&s, "expert_gating_func", 2);
    key_bool(&s, "expert_weights_norm", true);
    key_f32(&s, "expert_weights_scale", 2.5f);
    head(&s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(&s, "blk.%d.attn_q.weight", il, E, NH * HD, 1);
        tensor(&s, "blk.%d.attn_k.weight", il, E, NH * HD, 1);
        tensor(&s, "blk.%d.attn_v.weight", il, E, NH * HD, 1);
        tensor(&s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        tensor(&s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(&s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (il < 1) {
            ffn_swiglu(&s, il);
            continue;
        }
        tensor(&s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(&s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
        tensor(&s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
        tensor(&s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
        tensor(&s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
        tensor(&s, "blk.%d.ffn_gate_shexp.weight", il, E, 2 * FX, 1);
        tensor(&s, "blk.%d.ffn_down_shexp.weight", il, 2 * FX, E, 1);
        tensor(&s, "blk.%d.ffn_up_shexp.weight", il, E, 2 * FX, 1);
    }
    project_all(&s, 0);
}

/* Hunyuan: RoPE before the per-head K/Q norms; hunyuan-moe runs a shared
 * expert (its own length, tied output) then softmax-gated experts of n_ff
 * rows, hunyuan-dense a SwiGLU FFN. */
static void test_hunyuan(void **state)
{
    (void)state;
    enum { FS = 384 };
    model_spec s;
    for (int moe = 0; moe <= 1; moe++) {
        spec_init(&s, moe ? "hunyuan-moe" : "hunyuan-dense");
        if (moe) {
            key_u32(&s, "expert_count", NX);
            key_u32(&s, "expert_used_count", 2);
            key_u32(&s, "expert_feed_forward_length", F);
            key_u32(&s, "expert_shared_feed_forward_length", FS);
        }
        head(&s, !moe, false);
        for (int il = 0; il < NL; il++) {
            tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
            attn_qkv(&s, il, false);
            tensor(&s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
            tensor(&s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
            tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
            if (!moe) {
                ffn_swiglu(&s, il);
                continue;
            }
            tensor(&s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            tensor(&s, "blk.%d.ffn_gate_exps.weight", il, E, F, NX);
            tensor(&s, "blk.%d.ffn_down_exps.weight", il, F, E, NX);
            tensor(&s, "blk.%d.ffn_up_exps.weight", il, E, F, NX);
            tensor(&s, "blk.%d.ffn_gate_shexp.weight", il, E, FS, 1);
            tensor(&s, "blk.%d.ffn_up_shexp.weight", il, E, FS, 1);
            tensor(&s, "blk.%d.ffn_down_shexp.weight", il, FS, E, 1);
        }
        project_all(&s, 0);
    }
}

/* Ling 2.0: fused QKV with Q/K norms; dense leading blocks, then 8 routed
 * experts (top 2) plus a shared one. grouped: sigmoid gating with a
 * selection bias over 4 groups (2 used), one dense block and one NextN
 * block; else softmax over all experts, every block MoE. */
static void bailingmoe2_spec(model_spec *s, bool grouped)
{
    enum { NE = 8, FE = F / 4 };
    uint32_t n_dense = grouped ? 1 : 0;
    spec_init(s, "bailingmoe2");
    key_u32(s, "expert_count", NE);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FE);
    key_u32(s, "expert_shared_count", 1);
    key_u32(s, "expert_gating_func", grouped ? 2 : 1);
    key_bool(s, "expert_weights_norm", grouped);
    key_f32(s, "expert_weights_scale", grouped ? 2.5f : 1.0f);
    key_f32(s, "rope.freq_base", 10000.0f);
    if (grouped) {
        key_u32(s, "leading_dense_block_count", n_dense);
        key_u32(s, "expert_shared_feed_forward_length", FE);
        key_u32(s, "expert_group_count", 4);
        key_u32(s, "expert_group_used_count", 2);
        key_u32(s, "nextn_predict_layers", 1);
    }
    head(s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_qkv.weight", il, E, NH * HD + 2 * NKV * HD, 1);
        tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if ((uint32_t)il < n_dense) {
            ffn_swiglu(s, il);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NE, 1);
            if (grouped)
                tensor(s, "blk.%d.exp_probs_b.bias", il, NE, 1, 1);
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FE, NE);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FE, E, NE);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FE, NE);
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FE, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, FE, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FE, 1);
        }
        if (grouped && il == NL - 1) {   /* the NextN block */
            tensor(s, "blk.%d.nextn.eh_proj.weight", il, 2 * E, E, 1);
            tensor(s, "blk.%d.nextn.enorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.nextn.hnorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.layer_output_norm.weight", il, E, 1, 1);
        }
    }
}

static void test_bailingmoe2(void **state)
{
    (void)state;
    model_spec s;
    bailingmoe2_spec(&s, true);
    project_all(&s, 0);
    bailingmoe2_spec(&s, false);
    project_all(&s, 2048);
}

/* The last key without the "<arch>." prefix (llama.cpp's xielu.* keys). */
static void unprefix_last(model_spec *s)
{
    kv *k = &s->kvs[s->n_kv - 1];
    size_t n = strlen(s->arch) + 1;
    memmove(k->key, k->key + n, strlen(k->key + n) + 1);
}

/* Apertus: Q/K norms (with the biases llama.cpp loads and leaves out of
 * the graph), an ungated xIELU FFN. fused: one attn_qkv and rope_freqs,
 * per-layer xIELU arrays; else separate Q/K/V, an output bias and LongRoPE
 * factors (the long ones past 2048 cells). */
static void apertus_spec(model_spec *s, bool fused)
{
    static const uint32_t alpha[4] = { 0x41000000, 0x41000000, 0x41000000, 0 }; /* 8.0f */
    spec_init(s, "apertus");
    if (fused) {
        kv *k = &s->kvs[s->n_kv];
        key_arr4(s, "xielu.alpha_n", alpha);
        unprefix_last(s);
        k->kind = 'g';   /* f32 array, NL values */
        k->u = NL;
        k = &s->kvs[s->n_kv];
        key_arr4(s, "xielu.alpha_p", alpha);
        unprefix_last(s);
        k->kind = 'g';
        k->u = NL;
    } else {
        key_f32(s, "xielu.alpha_n", 8.0f);
        unprefix_last(s);
        key_f32(s, "xielu.alpha_p", 8.0f);
        unprefix_last(s);
        key_str(s, "rope.scaling.type", "longrope");
        key_u32(s, "rope.scaling.original_context_length", 2048);
    }
    key_f32(s, "xielu.beta", 0.5f);
    unprefix_last(s);
    key_f32(s, "xielu.eps", -1e-6f);
    unprefix_last(s);
    key_f32(s, "rope.freq_base", 10000.0f);
    head(s, true, false);
    if (fused) {
        tensor(s, "rope_freqs.weight", 0, HD / 2, 1, 1);
    } else {
        tensor(s, "rope_factors_long.weight", 0, HD / 2, 1, 1);
        tensor(s, "rope_factors_short.weight", 0, HD / 2, 1, 1);
    }
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (fused) {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, NH * HD + 2 * NKV * HD, 1);
            tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        } else {
            attn_qkv(s, il, false);
            tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
            tensor(s, "blk.%d.attn_q_norm.bias", il, HD, 1, 1);
            tensor(s, "blk.%d.attn_k_norm.bias", il, HD, 1, 1);
        }
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, F, 1);
    }
}

static void test_apertus(void **state)
{
    (void)state;
    model_spec s;
    apertus_spec(&s, true);
    project_all(&s, 0);
    apertus_spec(&s, false);
    project_all(&s, 4096);
}

/* Gemma 3n: per-layer embeddings (256 wide whatever the file says), AltUp
 * over 4 streams, LAuReL of rank 64, iSWA every fifth layer dense; layers
 * from 20 on reuse the caches of layers 18 and 19. */
static void gemma3n_spec(model_spec *s, int n_layer)
{
    enum { ALTUP = 4, PL = 256, LR = 64 };
    spec_init(s, "gemma3n");
    s->kvs[0].u = (uint32_t)n_layer;   /* block_count */
    key_u32(s, "attention.key_length", HD);
    key_u32(s, "attention.value_length", HD);
    key_u32(s, "attention.sliding_window", 512);
    key_f32(s, "final_logit_softcapping", 30.0f);
    key_f32(s, "rope.freq_base_swa", 10000.0f);
    head(s, false, false);
    tensor(s, "altup_proj.weight", 0, E, E, ALTUP - 1);
    tensor(s, "altup_unembd_proj.weight", 0, E, E, ALTUP - 1);
    tensor(s, "per_layer_token_embd.weight", 0, PL * n_layer, V, 1);
    tensor(s, "per_layer_model_proj.weight", 0, E, PL * n_layer, 1);
    tensor(s, "per_layer_proj_norm.weight", 0, PL, 1, 1);
    for (int il = 0; il < n_layer; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.post_attention_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
        tensor(s, "blk.%d.post_ffw_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.inp_gate.weight", il, E, PL, 1);
        tensor(s, "blk.%d.proj.weight", il, PL, E, 1);
        tensor(s, "blk.%d.post_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.altup_correct_coef.weight", il, ALTUP, ALTUP, 1);
        tensor(s, "blk.%d.altup_correct_scale.weight", il, E, 1, 1);
        tensor(s, "blk.%d.altup_predict_coef.weight", il, ALTUP, ALTUP * ALTUP, 1);
        tensor(s, "blk.%d.altup_router.weight", il, E, ALTUP, 1);
        tensor(s, "blk.%d.altup_router_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.laurel_l.weight", il, E, LR, 1);
        tensor(s, "blk.%d.laurel_r.weight", il, LR, E, 1);
        tensor(s, "blk.%d.laurel_post_norm.weight", il, E, 1, 1);
    }
}

static void test_gemma3n(void **state)
{
    (void)state;
    model_spec s;
    gemma3n_spec(&s, 22);
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qwen2),
        cmocka_unit_test(test_zero_head),
        cmocka_unit_test(test_phi3),
        cmocka_unit_test(test_gemma2),
        cmocka_unit_test(test_granite),
        cmocka_unit_test(test_granitemoe),
        cmocka_unit_test(test_glm4),
        cmocka_unit_test(test_llama4),
        cmocka_unit_test(test_mistral3),
        cmocka_unit_test(test_qwen2moe),
        cmocka_unit_test(test_smollm3),
        cmocka_unit_test(test_seed_oss),
        cmocka_unit_test(test_ernie4_5),
        cmocka_unit_test(test_ernie4_5_moe),
        cmocka_unit_test(test_qwen3vl),
        cmocka_unit_test(test_qwen3vlmoe),
        cmocka_unit_test(test_qwen3vl_deepstack_last),
        cmocka_unit_test(test_cohere2),
        cmocka_unit_test(test_exaone4),
        cmocka_unit_test(test_olmo2),
        cmocka_unit_test(test_minimax_m2),
        cmocka_unit_test(test_dots1),
        cmocka_unit_test(test_hunyuan),
        cmocka_unit_test(test_bailingmoe2),
        cmocka_unit_test(test_apertus),
        cmocka_unit_test(test_gemma3n),
        cmocka_unit_test(test_exaone45),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
