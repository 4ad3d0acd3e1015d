/*
 * test_arch_gemma4.c - small Gemma 4 models: the tensors llama.cpp's
 * llama_model_gemma4::load_arch_tensors creates (names and shapes) for the
 * keys load_arch_hparams reads, projected on one RPC device and on the CPU
 * alone, with flash attention on and off; the compute buffers must come
 * from the graph. Variants: E2B-like (per-layer embeddings, the last
 * two layers sharing the caches of the first two, double-wide FFNs on the
 * shared layers, a tied output) and 26B-A4B-like (MoE beside the dense FFN,
 * fused and separate gate/up experts, per-layer KV heads, full-attention
 * layers whose V is K, an output scale per layer, its own output); and a
 * dense 31B-like one whose V rows differ in width between layer kinds;
 * the first two again with Q4_0 matrices.
 */
#include "arch_spec.h"

enum {
    NL4 = 4,          /* blocks: the per-layer arrays hold four values */
    HD_FULL = 128,    /* key_length: the full-attention layers' heads */
    HD_SWA = 64,      /* key_length_swa */
    PL = 64,          /* embedding_length_per_layer_input */
    NE = 4, NU = 2, FE = 128, /* experts, used, expert_feed_forward_length */
};

/* Key number i of spec_init's as a four-value array. */
static void set_arr4(model_spec *s, size_t i, const uint32_t v[4])
{
    s->kvs[i].kind = 'a';
    s->kvs[i].u = 4;
    memcpy(s->kvs[i].a, v, sizeof s->kvs[i].a);
}

/* The keys both variants share; swa: 1 for a sliding-window layer. */
static void gemma4_keys(model_spec *s, const uint32_t swa[4], float softcap)
{
    spec_init(s, "gemma4");
    s->kvs[0].u = NL4;        /* block_count */
    s->kvs[7].u = HD_FULL;    /* rope.dimension_count */
    key_u32(s, "attention.key_length", HD_FULL);
    key_u32(s, "attention.value_length", HD_FULL);
    key_u32(s, "attention.key_length_swa", HD_SWA);
    key_u32(s, "attention.value_length_swa", HD_SWA);
    key_u32(s, "rope.dimension_count_swa", HD_SWA);
    key_f32(s, "rope.freq_base", 1000000.0f);
    key_f32(s, "rope.freq_base_swa", 10000.0f);
    key_u32(s, "attention.sliding_window", 512);
    key_arr4(s, "attention.sliding_window_pattern", swa);
    key_f32(s, "final_logit_softcapping", softcap);
}

/* Attention of layer il: Q always, K and V unless kv is false, V only when
 * with_v; heads of the layer's kind. */
static void gemma4_attn(model_spec *s, int il, bool swa, uint32_t n_kv, bool has_kv, bool with_v)
{
    int64_t hd = swa ? HD_SWA : HD_FULL;
    tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
    tensor(s, "blk.%d.attn_q.weight", il, E, hd * NH, 1);
    if (has_kv)
        tensor(s, "blk.%d.attn_k.weight", il, E, hd * n_kv, 1);
    if (has_kv && with_v)
        tensor(s, "blk.%d.attn_v.weight", il, E, hd * n_kv, 1);
    tensor(s, "blk.%d.attn_output.weight", il, hd * NH, E, 1);
    tensor(s, "blk.%d.attn_q_norm.weight", il, hd, 1, 1);
    if (has_kv)
        tensor(s, "blk.%d.attn_k_norm.weight", il, hd, 1, 1);
    tensor(s, "blk.%d.post_attention_norm.weight", il, E, 1, 1);
}

static void gemma4_ffn(model_spec *s, int il, int64_t n_ff)
{
    tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
    tensor(s, "blk.%d.ffn_gate.weight", il, E, n_ff, 1);
    tensor(s, "blk.%d.ffn_up.weight", il, E, n_ff, 1);
    tensor(s, "blk.%d.ffn_down.weight", il, n_ff, E, 1);
    tensor(s, "blk.%d.post_ffw_norm.weight", il, E, 1, 1);
}

/* E2B-like: per-layer embeddings, layers 2 and 3 read the caches of
 * layers 0 (SWA) and 1 (full), with FFNs twice as wide. */
static void gemma4_e2b_spec(model_spec *s)
{
    static const uint32_t swa[4] = { 1, 0, 1, 0 };
    static const uint32_t ff[4] = { F, F, 2 * F, 2 * F };
    gemma4_keys(s, swa, 30.0f);
    set_arr4(s, 4, ff);       /* feed_forward_length */
    s->kvs[6].u = 1;          /* head_count_kv */
    key_u32(s, "attention.shared_kv_layers", 2);
    key_u32(s, "embedding_length_per_layer_input", PL);
    head(s, false, false);    /* tied output */
    tensor(s, "per_layer_token_embd.weight", 0, PL * NL4, V, 1);
    tensor(s, "per_layer_model_proj.weight", 0, E, PL * NL4, 1);
    tensor(s, "per_layer_proj_norm.weight", 0, PL, 1, 1);
    tensor(s, "rope_freqs.weight", 0, HD_FULL / 2, 1, 1);
    for (int il = 0; il < NL4; il++) {
        gemma4_attn(s, il, swa[il] != 0, 1, il < 2, true);
        gemma4_ffn(s, il, ff[il]);
        tensor(s, "blk.%d.inp_gate.weight", il, E, PL, 1);
        tensor(s, "blk.%d.proj.weight", il, PL, E, 1);
        tensor(s, "blk.%d.post_norm.weight", il, E, 1, 1);
    }
}

/* 26B-A4B-like: every layer an MoE beside its dense FFN, experts fused in
 * the last two; one full-attention layer with fewer KV heads and V = K. */
static void gemma4_moe_spec(model_spec *s)
{
    static const uint32_t swa[4] = { 1, 1, 0, 1 };
    static const uint32_t n_kv[4] = { NKV, NKV, 1, NKV };
    gemma4_keys(s, swa, 30.0f);
    set_arr4(s, 6, n_kv);       /* head_count_kv */
    key_u32(s, "expert_count", NE);
    key_u32(s, "expert_used_count", NU);
    key_u32(s, "expert_feed_forward_length", FE);
    key_u32(s, "embedding_length_per_layer_input", 0);
    head(s, true, false);
    tensor(s, "rope_freqs.weight", 0, HD_FULL / 2, 1, 1);
    for (int il = 0; il < NL4; il++) {
        gemma4_attn(s, il, swa[il] != 0, n_kv[il], true, swa[il] != 0);
        tensor(s, "blk.%d.layer_output_scale.weight", il, 1, 1, 1);
        gemma4_ffn(s, il, F);
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NE, 1);
        tensor(s, "blk.%d.ffn_gate_inp.scale", il, E, 1, 1);
        tensor(s, "blk.%d.pre_ffw_norm_2.weight", il, E, 1, 1);
        tensor(s, "blk.%d.post_ffw_norm_1.weight", il, E, 1, 1);
        tensor(s, "blk.%d.post_ffw_norm_2.weight", il, E, 1, 1);
        if (il >= 2) {
            tensor(s, "blk.%d.ffn_gate_up_exps.weight", il, E, 2 * FE, NE);
        } else {
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FE, NE);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FE, NE);
        }
        tensor(s, "blk.%d.ffn_down_exps.weight", il, FE, E, NE);
    }
}

/* 31B-like: dense, no per-layer embeddings, shared_kv_layers 0; the SWA
 * layers' V rows (4 heads of 64) wider than the full layer's (1 of 128,
 * V = K), no soft-capping. */
static void gemma4_dense_spec(model_spec *s)
{
    static const uint32_t swa[4] = { 1, 1, 1, 0 };
    static const uint32_t n_kv[4] = { NH, NH, NH, 1 };
    gemma4_keys(s, swa, 0.0f);
    set_arr4(s, 6, n_kv);     /* head_count_kv */
    key_u32(s, "attention.shared_kv_layers", 0);
    key_u32(s, "embedding_length_per_layer_input", 0);
    head(s, true, false);
    tensor(s, "rope_freqs.weight", 0, HD_FULL / 2, 1, 1);
    for (int il = 0; il < NL4; il++) {
        gemma4_attn(s, il, swa[il] != 0, n_kv[il], true, swa[il] != 0);
        gemma4_ffn(s, il, F);
        tensor(s, "blk.%d.layer_output_scale.weight", il, 1, 1, 1);
    }
}

/* The matrices in Q4_0, as a quantized file has them: on the CPU llama.cpp
 * repacks those of the matrix products (CPU_REPACK), never the
 * embeddings. */
static void quantize(model_spec *s)
{
    for (size_t i = 0; i < s->n_t; i++)
        if (s->t[i].n_dims >= 2)
            s->t[i].type = GGFIT_TYPE_Q4_0;
}

static void test_gemma4_e2b(void **state)
{
    (void)state;
    model_spec s;
    gemma4_e2b_spec(&s);
    project_all(&s, 0);
}

static void test_gemma4_moe(void **state)
{
    (void)state;
    model_spec s;
    gemma4_moe_spec(&s);
    project_all(&s, 2048);
}

static void test_gemma4_dense(void **state)
{
    (void)state;
    model_spec s;
    gemma4_dense_spec(&s);
    project_all(&s, 0);
}

static void test_gemma4_q4_0(void **state)
{
    (void)state;
    model_spec s;
    gemma4_e2b_spec(&s);
    quantize(&s);
    project_all(&s, 0);
    gemma4_moe_spec(&s);
    quantize(&s);
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemma4_e2b),
        cmocka_unit_test(test_gemma4_moe),
        cmocka_unit_test(test_gemma4_dense),
        cmocka_unit_test(test_gemma4_q4_0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
