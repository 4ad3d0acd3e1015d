/*
 * test_arch_classic.c - the older transformers (falcon, gpt2, gptneox,
 * bloom, mpt, starcoder, starcoder2, stablelm, refact, codeshell, phi2,
 * qwen, command-r, gemma): small headers with the tensors llama.cpp's
 * load_tensors creates, projected on one RPC device and on the CPU alone,
 * with flash attention on and off; the compute buffers must come from the
 * graph.
 */
#include "arch_spec.h"

/* LayerNorm's epsilon, which these models require. */
static void classic_init(model_spec *s, const char *arch, uint32_t n_head_kv)
{
    spec_init(s, arch);
    s->kvs[6].u = n_head_kv;   /* attention.head_count_kv */
    key_f32(s, "attention.layer_norm_epsilon", 1e-5f);
}

static void norm_wb(model_spec *s, const char *name, int il)
{
    char w[64], b[64];
    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(b, sizeof b, "%s.bias", name);
    tensor(s, w, il, E, 1, 1);
    tensor(s, b, il, E, 1, 1);
}

/* token_embd, output_norm (weight, bias) and output when not tied. */
static void head_ln(model_spec *s, bool output)
{
    tensor(s, "token_embd.weight", 0, E, V, 1);
    norm_wb(s, "output_norm", 0);
    if (output)
        tensor(s, "output.weight", 0, E, V, 1);
}

/* A fused QKV for nkv heads of K and V, with its bias when asked, and the
 * attention output. */
static void qkv_fused(model_spec *s, int il, uint32_t nkv, bool bias, bool out_bias)
{
    tensor(s, "blk.%d.attn_qkv.weight", il, E, E + 2 * nkv * HD, 1);
    if (bias)
        tensor(s, "blk.%d.attn_qkv.bias", il, E + 2 * nkv * HD, 1, 1);
    tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
    if (out_bias)
        tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
}

/* A GELU FFN of n_ff, with biases when asked. */
static void ffn_gelu(model_spec *s, int il, bool bias)
{
    tensor(s, "blk.%d.ffn_up.weight", il, E, F, 1);
    if (bias)
        tensor(s, "blk.%d.ffn_up.bias", il, F, 1, 1);
    tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
    if (bias)
        tensor(s, "blk.%d.ffn_down.bias", il, E, 1, 1);
}

/* Falcon: 7B's single norm, MQA and a tied output; 40B's second norm
 * (attn_norm_2), GQA and its own output. */
static void falcon_spec(model_spec *s, bool big)
{
    classic_init(s, "falcon", big ? NKV : 1);
    head_ln(s, big);
    for (int il = 0; il < NL; il++) {
        norm_wb(s, "blk.%d.attn_norm", il);
        if (big)
            norm_wb(s, "blk.%d.attn_norm_2", il);
        qkv_fused(s, il, big ? NKV : 1, false, false);
        ffn_gelu(s, il, false);
    }
}

static void test_falcon(void **state)
{
    (void)state;
    model_spec s;
    falcon_spec(&s, false);
    project_all(&s, 0);
    falcon_spec(&s, true);
    project_all(&s, 0);
}

/* GPT-2 and StarCoder: learned positions, fused QKV and GELU FFN with
 * biases; GPT-2 with full heads and a tied output, StarCoder with MQA and
 * its own output. */
static void gpt2_spec(model_spec *s, const char *arch, uint32_t nkv, bool output)
{
    classic_init(s, arch, nkv);
    head_ln(s, output);
    tensor(s, "position_embd.weight", 0, E, 4096, 1);
    for (int il = 0; il < NL; il++) {
        norm_wb(s, "blk.%d.attn_norm", il);
        qkv_fused(s, il, nkv, true, true);
        norm_wb(s, "blk.%d.ffn_norm", il);
        ffn_gelu(s, il, true);
    }
}

static void test_gpt2(void **state)
{
    (void)state;
    model_spec s;
    gpt2_spec(&s, "gpt2", NH, false);
    project_all(&s, 0);
}

static void test_starcoder(void **state)
{
    (void)state;
    model_spec s;
    gpt2_spec(&s, "starcoder", 1, true);
    project_all(&s, 0);
}

/* GPT-NeoX: parallel residual or not, partial NeoX RoPE. */
static void gptneox_spec(model_spec *s, bool par)
{
    classic_init(s, "gptneox", NH);
    s->kvs[7].u = HD / 4;   /* rope.dimension_count */
    key_bool(s, "use_parallel_residual", par);
    head_ln(s, true);
    for (int il = 0; il < NL; il++) {
        norm_wb(s, "blk.%d.attn_norm", il);
        qkv_fused(s, il, NH, true, true);
        norm_wb(s, "blk.%d.ffn_norm", il);
        ffn_gelu(s, il, true);
    }
}

static void test_gptneox(void **state)
{
    (void)state;
    model_spec s;
    gptneox_spec(&s, true);
    project_all(&s, 0);
    gptneox_spec(&s, false);
    project_all(&s, 0);
}

/* BLOOM: the embeddings' LayerNorm, ALiBi, biases everywhere, tied. */
static void test_bloom(void **state)
{
    (void)state;
    model_spec s;
    classic_init(&s, "bloom", NH);
    head_ln(&s, false);
    norm_wb(&s, "token_embd_norm", 0);
    for (int il = 0; il < NL; il++) {
        norm_wb(&s, "blk.%d.attn_norm", il);
        qkv_fused(&s, il, NH, true, true);
        norm_wb(&s, "blk.%d.ffn_norm", il);
        ffn_gelu(&s, il, true);
    }
    project_all(&s, 0);
}

/* MPT: ALiBi, clamped QKV, no biases, tied (MPT-7B); then learned
 * positions and biases. (llama.cpp aborts on the LayerNorms of Q and K
 * with a fused QKV: ggml_reshape_2d of a view.) */
static void mpt_spec(model_spec *s, bool full)
{
    classic_init(s, "mpt", NH);
    key_f32(s, "attention.max_alibi_bias", full ? 0.0f : 8.0f);
    if (!full)
        key_f32(s, "attention.clamp_kqv", 6.0f);
    tensor(s, "token_embd.weight", 0, E, V, 1);
    if (full)
        tensor(s, "position_embd.weight", 0, E, 4096, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    if (full)
        tensor(s, "output_norm.bias", 0, E, 1, 1);
    for (int il = 0; il < NL; il++) {
        if (full)
            norm_wb(s, "blk.%d.attn_norm", il);
        else
            tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        qkv_fused(s, il, NH, full, full);
        if (full)
            norm_wb(s, "blk.%d.ffn_norm", il);
        else
            tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_gelu(s, il, full);
    }
}

static void test_mpt(void **state)
{
    (void)state;
    model_spec s;
    mpt_spec(&s, false);
    project_all(&s, 0);
    mpt_spec(&s, true);
    project_all(&s, 0);
}

/* StarCoder 2 and CodeShell: GPT-2's block with RoPE; StarCoder 2 with
 * separate Q/K/V and biases, GQA, tied; CodeShell fused, its own output. */
static void starcoder2_spec(model_spec *s, bool fused)
{
    classic_init(s, "starcoder2", NKV);
    head_ln(s, fused);
    for (int il = 0; il < NL; il++) {
        norm_wb(s, "blk.%d.attn_norm", il);
        if (fused) {
            qkv_fused(s, il, NKV, true, true);
        } else {
            attn_qkv(s, il, true);
            tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
        }
        norm_wb(s, "blk.%d.ffn_norm", il);
        ffn_gelu(s, il, true);
    }
}

static void test_starcoder2(void **state)
{
    (void)state;
    model_spec s;
    starcoder2_spec(&s, false);
    project_all(&s, 0);
    starcoder2_spec(&s, true);   /* a fused QKV, its own output */
    project_all(&s, 0);
}

static void test_codeshell(void **state)
{
    (void)state;
    model_spec s;
    classic_init(&s, "codeshell", NKV);
    head_ln(&s, true);
    for (int il = 0; il < NL; il++) {
        norm_wb(&s, "blk.%d.attn_norm", il);
        qkv_fused(&s, il, NKV, true, true);
        norm_wb(&s, "blk.%d.ffn_norm", il);
        ffn_gelu(&s, il, true);
    }
    project_all(&s, 0);
}

/* StableLM: separate Q/K/V with biases, partial RoPE, ffn_norm; then
 * StableLM 2 12B's per-head Q/K norms and no ffn_norm (parallel FFN). */
static void stablelm_spec(model_spec *s, bool qk_norm)
{
    classic_init(s, "stablelm", NKV);
    s->kvs[7].u = HD / 4;   /* rope.dimension_count */
    head_ln(s, true);
    for (int il = 0; il < NL; il++) {
        norm_wb(s, "blk.%d.attn_norm", il);
        attn_qkv(s, il, true);
        if (qk_norm) {
            tensor(s, "blk.%d.attn_q_norm.weight", il, HD, NH, 1);
            tensor(s, "blk.%d.attn_k_norm.weight", il, HD, NKV, 1);
        } else {
            norm_wb(s, "blk.%d.ffn_norm", il);
        }
        ffn_swiglu(s, il);
    }
}

static void test_stablelm(void **state)
{
    (void)state;
    model_spec s;
    stablelm_spec(&s, false);
    project_all(&s, 0);
    stablelm_spec(&s, true);
    project_all(&s, 0);
}

/* Refact: the llama block with ALiBi, RMS norms, tied; then with
 * rope_freqs (loaded, one copy per block's buffer type, but unused) and the
 * FFN biases the graph does not read. */
static void refact_spec(model_spec *s, bool extra)
{
    spec_init(s, "refact");
    head(s, extra, false);
    if (extra)
        tensor(s, "rope_freqs.weight", 0, HD / 2, 1, 1);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
        if (extra) {
            tensor(s, "blk.%d.ffn_gate.bias", il, F, 1, 1);
            tensor(s, "blk.%d.ffn_down.bias", il, E, 1, 1);
            tensor(s, "blk.%d.ffn_up.bias", il, F, 1, 1);
        }
    }
}

static void test_refact(void **state)
{
    (void)state;
    model_spec s;
    refact_spec(&s, false);
    project_all(&s, 0);
    refact_spec(&s, true);
    project_all(&s, 0);
}

/* Phi-2: fused QKV with its bias (then separate with biases), partial
 * RoPE, a GELU FFN with biases, a bias on the logits. */
static void phi2_spec(model_spec *s, bool fused)
{
    classic_init(s, "phi2", NH);
    s->kvs[7].u = HD / 2;   /* rope.dimension_count */
    tensor(s, "token_embd.weight", 0, E, V, 1);
    norm_wb(s, "output_norm", 0);
    tensor(s, "output.weight", 0, E, V, 1);
    tensor(s, "output.bias", 0, V, 1, 1);
    for (int il = 0; il < NL; il++) {
        norm_wb(s, "blk.%d.attn_norm", il);
        if (fused) {
            qkv_fused(s, il, NH, true, true);
        } else {
            tensor(s, "blk.%d.attn_q.weight", il, E, E, 1);
            tensor(s, "blk.%d.attn_k.weight", il, E, E, 1);
            tensor(s, "blk.%d.attn_v.weight", il, E, E, 1);
            tensor(s, "blk.%d.attn_q.bias", il, E, 1, 1);
            tensor(s, "blk.%d.attn_k.bias", il, E, 1, 1);
            tensor(s, "blk.%d.attn_v.bias", il, E, 1, 1);
            tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
            tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
        }
        ffn_gelu(s, il, true);
    }
}

static void test_phi2(void **state)
{
    (void)state;
    model_spec s;
    phi2_spec(&s, true);
    project_all(&s, 0);
    phi2_spec(&s, false);
    project_all(&s, 0);
}

/* Qwen (the first): fused QKV with bias, full heads, FFN of n_ff/2. */
static void test_qwen(void **state)
{
    (void)state;
    model_spec s;
    spec_init(&s, "qwen");
    s.kvs[6].u = NH;
    head(&s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(&s, "blk.%d.attn_qkv.weight", il, E, 3 * E, 1);
        tensor(&s, "blk.%d.attn_qkv.bias", il, 3 * E, 1, 1);
        tensor(&s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(&s, "blk.%d.ffn_gate.weight", il, E, F / 2, 1);
        tensor(&s, "blk.%d.ffn_down.weight", il, F / 2, E, 1);
        tensor(&s, "blk.%d.ffn_up.weight", il, E, F / 2, 1);
    }
    project_all(&s, 0);
}

/* Command R: LayerNorm without bias, parallel SwiGLU FFN, tied output with
 * a logit scale. */
static void command_r_spec(model_spec *s, int n_layer)
{
    classic_init(s, "command-r", NKV);
    s->kvs[0].u = (uint32_t)n_layer;   /* block_count */
    key_f32(s, "logit_scale", 0.0625f);
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    for (int il = 0; il < n_layer; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (n_layer >= 64) {   /* Command R+: per-head norms of Q and K */
            tensor(s, "blk.%d.attn_q_norm.weight", il, HD, NH, 1);
            tensor(s, "blk.%d.attn_k_norm.weight", il, HD, NKV, 1);
        }
        attn_qkv(s, il, false);
        ffn_swiglu(s, il);
    }
}

static void test_command_r(void **state)
{
    (void)state;
    model_spec s;
    command_r_spec(&s, NL);
    project_all(&s, 0);
    command_r_spec(&s, 64);
    project_all(&s, 0);
}

/* Gemma: RMS norms, MQA (2B), GEGLU FFN, tied output; then 7B's heads
 * wider than n_embd / n_head (key_length 128: Q is 2 n_embd wide). */
static void gemma_spec(model_spec *s, bool wide)
{
    int64_t hd = wide ? 2 * HD : HD, nkv = wide ? NH : 1;
    spec_init(s, "gemma");
    s->kvs[6].u = (uint32_t)nkv;
    if (wide) {
        s->kvs[7].u = (uint32_t)hd;   /* rope.dimension_count */
        key_u32(s, "attention.key_length", (uint32_t)hd);
        key_u32(s, "attention.value_length", (uint32_t)hd);
    }
    head(s, false, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_q.weight", il, E, NH * hd, 1);
        tensor(s, "blk.%d.attn_k.weight", il, E, nkv * hd, 1);
        tensor(s, "blk.%d.attn_v.weight", il, E, nkv * hd, 1);
        tensor(s, "blk.%d.attn_output.weight", il, NH * hd, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

static void test_gemma(void **state)
{
    (void)state;
    model_spec s;
    gemma_spec(&s, false);
    project_all(&s, 0);
    gemma_spec(&s, true);
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_falcon),     cmocka_unit_test(test_gpt2),
        cmocka_unit_test(test_starcoder),  cmocka_unit_test(test_gptneox),
        cmocka_unit_test(test_bloom),      cmocka_unit_test(test_mpt),
        cmocka_unit_test(test_starcoder2), cmocka_unit_test(test_codeshell),
        cmocka_unit_test(test_stablelm),   cmocka_unit_test(test_refact),
        cmocka_unit_test(test_phi2),       cmocka_unit_test(test_qwen),
        cmocka_unit_test(test_command_r),  cmocka_unit_test(test_gemma),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
