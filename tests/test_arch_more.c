/*
 * test_arch_more.c - the graph builders of deepseek (DeepSeek V1 MoE),
 * jais2, deepseek2-ocr, paddleocr, cogvlm and chameleon (the text models of
 * vision and OCR models): small header-only models with the tensors llama.cpp's
 * load_tensors creates for each (names and shapes), projected on one RPC
 * device and on the CPU alone, with flash attention on and off; the
 * compute buffers must come from the graph. The same headers
 * (GGFIT_ARCHS_DUMP) are data/tiny/<arch>-<n>.gguf, which
 * tools/llamacmp.py checked against llama.cpp (data/oracle/).
 */
#include "arch_spec.h"

enum { FX = 128 };

/* ---- deepseek ------------------------------------------------------------ */

/* n_dense leading dense blocks, then experts plus n_shared shared ones
 * (one tensor of n_shared * FX rows); qkv: one fused attn_qkv. */
static void deepseek_spec(model_spec *s, uint32_t n_dense, uint32_t n_shared, bool qkv,
                          bool output)
{
    spec_init(s, "deepseek");
    if (n_dense)
        key_u32(s, "leading_dense_block_count", n_dense);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", n_shared);
    key_f32(s, "expert_weights_scale", 1.5f);
    head(s, output, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (qkv) {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, E + 2 * NKV * HD, 1);
            tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        } else {
            attn_qkv(s, il, false);
        }
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if ((uint32_t)il < n_dense) {
            ffn_swiglu(s, il);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FX * n_shared, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, FX * n_shared, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FX * n_shared, 1);
        }
    }
}

static void test_deepseek(void **state)
{
    (void)state;
    model_spec s;
    deepseek_spec(&s, 1, 2, false, true);
    project_all(&s, 0);
    deepseek_spec(&s, 0, 1, true, false);   /* fused QKV, tied output, all MoE */
    project_all(&s, 0);
}

/* ---- jais2 --------------------------------------------------------------- */

static void jais2_spec(model_spec *s, bool output)
{
    spec_init(s, "jais2");
    s->kvs[6].u = NH;   /* head_count_kv: the K/V biases are n_embd wide */
    key_f32(s, "attention.layer_norm_epsilon", 1e-5f);
    head(s, output, false);
    tensor(s, "output_norm.bias", 0, E, 1, 1);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_norm.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_q.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_k.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_v.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_q.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_k.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_v.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.bias", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, F, 1);
        tensor(s, "blk.%d.ffn_up.bias", il, F, 1, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "blk.%d.ffn_down.bias", il, E, 1, 1);
    }
}

static void test_jais2(void **state)
{
    (void)state;
    model_spec s;
    jais2_spec(&s, true);
    project_all(&s, 0);
    jais2_spec(&s, false);   /* tied output */
    project_all(&s, 2048);
}

/* ---- deepseek2-ocr --------------------------------------------------------- */

/* deepseek2's OCR path: full heads (head_count_kv = head_count), n_dense
 * leading dense blocks; fused: ffn_gate_up_exps; gating 2 with a bias on
 * the choice and normalised weights, else the default softmax. */
static void ocr_spec(model_spec *s, uint32_t n_dense, bool fused, uint32_t gating)
{
    spec_init(s, "deepseek2-ocr");
    s->kvs[6].u = NH;   /* head_count_kv */
    if (n_dense)
        key_u32(s, "leading_dense_block_count", n_dense);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 2);
    if (gating) {
        key_u32(s, "expert_gating_func", gating);
        key_bool(s, "expert_weights_norm", true);
        key_f32(s, "expert_weights_scale", 2.5f);
    }
    head(s, !fused, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_q.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_k.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_v.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if ((uint32_t)il < n_dense) {
            tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
            tensor(s, "blk.%d.ffn_up.weight", il, E, F, 1);
            tensor(s, "blk.%d.ffn_gate.weight", il, E, F, 1);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            if (gating == 2) {
                tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
                s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
            }
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
            if (fused) {
                tensor(s, "blk.%d.ffn_gate_up_exps.weight", il, E, 2 * FX, NX);
            } else {
                tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
                tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
            }
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, 2 * FX, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, 2 * FX, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, 2 * FX, 1);
        }
    }
}

static void test_deepseek2ocr(void **state)
{
    (void)state;
    model_spec s;
    ocr_spec(&s, 1, false, 2);
    project_all(&s, 0);
    ocr_spec(&s, 0, true, 0);   /* fused gate/up experts, softmax, tied output */
    project_all(&s, 0);
}

/* ---- paddleocr ----------------------------------------------------------- */

/* ERNIE 4.5's dense tensors with M-RoPE sections; qkv: one fused attn_qkv
 * without biases, else separate Q/K/V with biases and attn_output.bias. */
static void paddleocr_spec(model_spec *s, bool qkv)
{
    static const uint32_t sections[4] = { 16, 8, 8, 0 };
    spec_init(s, "paddleocr");
    key_arr4(s, "rope.dimension_sections", sections);
    head(s, !qkv, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (qkv) {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, E + 2 * NKV * HD, 1);
            tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        } else {
            attn_qkv(s, il, true);
            tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
        }
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

static void test_paddleocr(void **state)
{
    (void)state;
    model_spec s;
    paddleocr_spec(&s, false);
    project_all(&s, 0);
    paddleocr_spec(&s, true);   /* fused QKV, tied output */
    project_all(&s, 0);
}

/* ---- cogvlm -------------------------------------------------------------- */

static void cogvlm_spec(model_spec *s, bool output)
{
    spec_init(s, "cogvlm");
    s->kvs[6].u = NH;   /* head_count_kv: Q, K and V are thirds of attn_qkv */
    head(s, output, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_qkv.weight", il, E, 3 * E, 1);
        tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(s, "blk.%d.vis_attn_qkv.weight", il, E, 3 * E, 1);
        tensor(s, "blk.%d.vis_attn_output.weight", il, E, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
        tensor(s, "blk.%d.vis_gate.weight", il, E, F, 1);
        tensor(s, "blk.%d.vis_down.weight", il, F, E, 1);
        tensor(s, "blk.%d.vis_up.weight", il, E, F, 1);
    }
}

static void test_cogvlm(void **state)
{
    (void)state;
    model_spec s;
    cogvlm_spec(&s, true);
    project_all(&s, 0);
    cogvlm_spec(&s, false);   /* tied output */
    project_all(&s, 0);
}

/* ---- chameleon ----------------------------------------------------------- */

/* The vocabulary holds the image tokens 4..8195 (the graph overwrites
 * their logits); Q/K LayerNorms per head, their biases when bias; swin:
 * the norms after each sublayer. */
static void chameleon_spec(model_spec *s, bool swin, bool bias, bool output)
{
    enum { CV = 8448 };
    spec_init(s, "chameleon");
    s->kvs[1].u = CV;   /* vocab_size */
    if (swin)
        key_bool(s, "swin_norm", true);
    tensor(s, "token_embd.weight", 0, E, CV, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    if (output)
        tensor(s, "output.weight", 0, E, CV, 1);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, NH, 1);
        s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, NKV, 1);
        s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
        if (bias) {
            tensor(s, "blk.%d.attn_q_norm.bias", il, HD, NH, 1);
            s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
            tensor(s, "blk.%d.attn_k_norm.bias", il, HD, NKV, 1);
            s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
        }
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

static void test_chameleon(void **state)
{
    (void)state;
    model_spec s;
    chameleon_spec(&s, false, true, true);
    project_all(&s, 0);
    chameleon_spec(&s, true, false, false);   /* swin_norm, tied output */
    project_all(&s, 0);
}

/* cogvlm with rope_freqs (llama.cpp loads the one tensor for every layer;
 * the graph does not read it): last, to keep the other files' numbers. */
static void test_rope_freqs(void **state)
{
    (void)state;
    model_spec s;
    cogvlm_spec(&s, true);
    tensor(&s, "rope_freqs.weight", 0, HD / 2, 1, 1);
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deepseek),
        cmocka_unit_test(test_jais2),
        cmocka_unit_test(test_deepseek2ocr),
        cmocka_unit_test(test_paddleocr),
        cmocka_unit_test(test_cogvlm),
        cmocka_unit_test(test_chameleon),
        cmocka_unit_test(test_rope_freqs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
