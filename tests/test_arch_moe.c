/*
 * test_arch_moe.c - the graph builders of nemotron_h_moe, mistral4,
 * olmoe, phimoe, qwen2vl and exaone-moe: small header-only models with the
 * tensors llama.cpp's load_tensors creates for each (names and shapes),
 * projected on one RPC device and on the CPU alone, with flash attention on
 * and off; the compute buffers must come from the graph. The same headers
 * (GGFIT_ARCHS_DUMP) are data/tiny/<arch>-<n>.gguf, which
 * tools/llamacmp.py checked against llama.cpp (data/oracle/).
 */
#include "arch_spec.h"

enum { FX = 128, FS = 256 };

/* The last tensor added is kept in F32 (llama.cpp's converters write
 * these so). */
static void last_f32(model_spec *s)
{
    s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
}

/* Key i (a scalar set by spec_init) becomes a per-layer array of 4. */
static void per_layer(model_spec *s, size_t i, const uint32_t v[4])
{
    s->kvs[i].kind = 'a';
    s->kvs[i].u = 4;
    memcpy(s->kvs[i].a, v, sizeof s->kvs[i].a);
}

/* ---- nemotron_h_moe ------------------------------------------------------ */

enum { D_INNER = 2 * E, D_STATE = 16, D_CONV = 4, N_GROUP = 2, N_SSM_HEAD = D_INNER / HD };

/* llama_model_nemotron_h::load_arch_tensors, one Mamba2 layer */
static void nemotron_mamba2(model_spec *s, int il)
{
    int64_t conv_dim = D_INNER + 2 * N_GROUP * D_STATE;
    tensor(s, "blk.%d.ssm_in.weight", il, E, 2 * D_INNER + 2 * N_GROUP * D_STATE + N_SSM_HEAD, 1);
    tensor(s, "blk.%d.ssm_conv1d.weight", il, D_CONV, conv_dim, 1);
    last_f32(s);
    tensor(s, "blk.%d.ssm_conv1d.bias", il, conv_dim, 1, 1);
    tensor(s, "blk.%d.ssm_dt.bias", il, N_SSM_HEAD, 1, 1);
    tensor(s, "blk.%d.ssm_a", il, 1, N_SSM_HEAD, 1);
    last_f32(s);
    tensor(s, "blk.%d.ssm_d", il, 1, N_SSM_HEAD, 1);
    last_f32(s);
    tensor(s, "blk.%d.ssm_norm.weight", il, D_INNER / N_GROUP, N_GROUP, 1);
    last_f32(s);
    tensor(s, "blk.%d.ssm_out.weight", il, D_INNER, E, 1);
}

/* Nemotron-H MoE (arch nemotron_h_moe or nemotron_h): four blocks, kinds[il] 'm' (Mamba2), 'a' (attention) or
 * 'e' (experts); latent > 0: the experts run in a latent space of that
 * width. */
static void nemotron_spec(model_spec *s, const char *arch, const char kinds[4], uint32_t latent)
{
    spec_init(s, arch);
    s->kvs[0].u = 4;   /* block_count */
    uint32_t kvh[4], ff[4];
    for (int il = 0; il < 4; il++) {
        kvh[il] = kinds[il] == 'a' ? NKV : 0;
        ff[il] = kinds[il] == 'e' ? F : 0;
    }
    per_layer(s, 4, ff);   /* feed_forward_length */
    per_layer(s, 6, kvh);   /* attention.head_count_kv */
    key_u32(s, "ssm.conv_kernel", D_CONV);
    key_u32(s, "ssm.inner_size", D_INNER);
    key_u32(s, "ssm.state_size", D_STATE);
    key_u32(s, "ssm.time_step_rank", N_SSM_HEAD);
    key_u32(s, "ssm.group_count", N_GROUP);
    /* the converter writes the config's layer_norm_epsilon (llama.cpp
     * requires it from 7a20b417f on, for the MTP head's final norm) */
    key_f32(s, "attention.layer_norm_epsilon", 1e-5f);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_feed_forward_length", FS);
    key_u32(s, "expert_shared_count", 1);
    key_bool(s, "expert_weights_norm", true);
    key_f32(s, "expert_weights_scale", 2.5f);
    if (latent)
        key_u32(s, "moe_latent_size", latent);
    int64_t moe_e = latent ? latent : E;
    head(s, true, false);
    for (int il = 0; il < 4; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (kinds[il] == 'm') {
            nemotron_mamba2(s, il);
        } else if (kinds[il] == 'a') {
            attn_qkv(s, il, false);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
            if (latent) {
                tensor(s, "blk.%d.ffn_latent_down.weight", il, E, moe_e, 1);
                tensor(s, "blk.%d.ffn_latent_up.weight", il, moe_e, E, 1);
            }
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, moe_e, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, moe_e, FX, NX);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, FS, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FS, 1);
        }
    }
}

static void test_nemotron_h_moe(void **state)
{
    (void)state;
    model_spec s;
    nemotron_spec(&s, "nemotron_h_moe", "meae", 0);
    project_all(&s, 0);
    nemotron_spec(&s, "nemotron_h_moe", "maem", 128);   /* latent experts */
    project_all(&s, 0);
}

/* attention.layer_norm_epsilon, which the converter writes: llama.cpp
 * reads it as required from 7a20b417f (NEMOTRON_H_MOE_MTP) on, for the
 * MTP head's final norm; b10309 did not read it. */
static void test_nemotron_h_norm_eps(void **state)
{
    (void)state;
    model_spec s;
    nemotron_spec(&s, "nemotron_h_moe", "meae", 0);
    key_drop(&s, "attention.layer_norm_epsilon");
    refused_with(&s, "key not found in model: nemotron_h_moe.attention.layer_norm_epsilon");
    gw w;
    write_spec(&s, &w);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    ggfit_params p;
    ggfit_params_init(&p);
    p.llama_build = 10309;
    ggfit_projection pr;
    if (ggfit_project(m, &p, NULL, 0, &pr, NULL, &err) != GGFIT_OK)
        fail_msg("b10309: %s", err);
    ggfit_model_free(m);
    gw_free(&w);
}

/* nemotron_h runs the same graph: with experts in the file, its MoE layers
 * (last here, to keep the other files' numbers). */
static void test_nemotron_h_experts(void **state)
{
    (void)state;
    model_spec s;
    nemotron_spec(&s, "nemotron_h", "mema", 128);
    project_all(&s, 0);
}

/* ---- mistral4 ------------------------------------------------------------ */

enum { KV_LORA = 128, Q_LORA = 128, N_ROPE = 32, HK_MLA = 96, HV_MLA = 64 };

/* deepseek2's tensors (MLA): q_lora > 0 is the low-rank Q; n_dense leading
 * dense blocks, then experts plus shared ones. */
static void mistral4_spec(model_spec *s, uint32_t q_lora, uint32_t n_dense, bool temp,
                          uint32_t gating)
{
    spec_init(s, "mistral4");
    s->kvs[6].u = 1;        /* head_count_kv: one latent head */
    s->kvs[7].u = N_ROPE;   /* rope.dimension_count */
    key_u32(s, "attention.key_length", KV_LORA + N_ROPE);
    key_u32(s, "attention.value_length", KV_LORA);
    key_u32(s, "attention.key_length_mla", HK_MLA);
    key_u32(s, "attention.value_length_mla", HV_MLA);
    key_u32(s, "attention.q_lora_rank", q_lora);
    key_u32(s, "attention.kv_lora_rank", KV_LORA);
    key_u32(s, "leading_dense_block_count", n_dense);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    key_u32(s, "expert_gating_func", gating);
    key_bool(s, "expert_weights_norm", gating == 2);
    key_f32(s, "expert_weights_scale", gating == 2 ? 2.5f : 1.0f);
    if (temp) {
        key_f32(s, "attention.temperature_scale", 0.1f);
        key_u32(s, "attention.temperature_length", 8192);
    }
    head(s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (q_lora)
            tensor(s, "blk.%d.attn_q_a_norm.weight", il, q_lora, 1, 1);
        tensor(s, "blk.%d.attn_kv_a_norm.weight", il, KV_LORA, 1, 1);
        if (q_lora) {
            tensor(s, "blk.%d.attn_q_a.weight", il, E, q_lora, 1);
            tensor(s, "blk.%d.attn_q_b.weight", il, q_lora, NH * HK_MLA, 1);
        } else {
            tensor(s, "blk.%d.attn_q.weight", il, E, NH * HK_MLA, 1);
        }
        tensor(s, "blk.%d.attn_kv_a_mqa.weight", il, E, KV_LORA + N_ROPE, 1);
        tensor(s, "blk.%d.attn_k_b.weight", il, HK_MLA - N_ROPE, KV_LORA, NH);
        tensor(s, "blk.%d.attn_v_b.weight", il, KV_LORA, HV_MLA, NH);
        tensor(s, "blk.%d.attn_output.weight", il, NH * HV_MLA, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if ((uint32_t)il < n_dense) {
            ffn_swiglu(s, il);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            if (gating == 2)
                tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FX, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, FX, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FX, 1);
        }
    }
}

static void test_mistral4(void **state)
{
    (void)state;
    model_spec s;
    mistral4_spec(&s, Q_LORA, 1, false, 1);
    project_all(&s, 0);
    mistral4_spec(&s, 0, 0, true, 2);   /* plain Q, temperature, sigmoid routing */
    project_all(&s, 0);
}

/* ---- olmoe --------------------------------------------------------------- */

static void olmoe_spec(model_spec *s, uint32_t n_used, bool scale)
{
    spec_init(s, "olmoe");
    s->kvs[6].u = NH;   /* head_count_kv: the Q/K norms span whole rows */
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", n_used);
    if (scale)
        key_f32(s, "expert_weights_scale", 2.0f);   /* olmoe reads none */
    head(s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_q.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_k.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_v.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, F, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, F, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, F, NX);
    }
}

static void test_olmoe(void **state)
{
    (void)state;
    model_spec s;
    olmoe_spec(&s, 2, true);
    project_all(&s, 0);
    olmoe_spec(&s, 1, false);   /* one expert a token: the sum is a cont */
    project_all(&s, 0);
}

/* ---- phimoe -------------------------------------------------------------- */

static void phimoe_spec(model_spec *s, bool fused, bool factors, uint32_t orig_ctx)
{
    spec_init(s, "phimoe");
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "rope.scaling.original_context_length", orig_ctx);
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    tensor(s, "output_norm.bias", 0, E, 1, 1);
    tensor(s, "output.weight", 0, E, V, 1);
    tensor(s, "output.bias", 0, V, 1, 1);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_norm.bias", il, E, 1, 1);
        if (fused) {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, NH * HD + 2 * NKV * HD, 1);
            tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        } else {
            attn_qkv(s, il, false);
        }
        tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.bias", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, F, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, F, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, F, NX);
    }
    if (factors) {
        tensor(s, "rope_factors_long.weight", 0, HD / 2, 1, 1);
        tensor(s, "rope_factors_short.weight", 0, HD / 2, 1, 1);
    }
}

static void test_phimoe(void **state)
{
    (void)state;
    model_spec s;
    phimoe_spec(&s, false, true, 2048);   /* long factors past 2048 tokens */
    project_all(&s, 0);
    phimoe_spec(&s, true, false, 4096);
    project_all(&s, 0);
}

/* ---- qwen2vl ------------------------------------------------------------- */

static void qwen2vl_spec(model_spec *s, bool output)
{
    static const uint32_t sections[4] = { 16, 8, 8, 0 };   /* HD / 2 */
    spec_init(s, "qwen2vl");
    key_f32(s, "rope.freq_base", 1000000.0f);
    key_arr4(s, "rope.dimension_sections", sections);
    head(s, output, output);   /* the output bias is loaded, not used */
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, true);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

static void test_qwen2vl(void **state)
{
    (void)state;
    model_spec s;
    qwen2vl_spec(&s, false);
    project_all(&s, 0);
    qwen2vl_spec(&s, true);
    project_all(&s, 0);
}

/* ---- exaone-moe ---------------------------------------------------------- */

/* n_layer blocks, the last n_nextn of them NextN ones (loaded, not run);
 * n_dense leading dense blocks; pattern 0: the default of 4. */
static void exaone_moe_spec(model_spec *s, int n_layer, uint32_t n_nextn, uint32_t n_dense,
                            uint32_t pattern, uint32_t gating, bool factors)
{
    spec_init(s, "exaone-moe");
    s->kvs[0].u = (uint32_t)n_layer;   /* block_count */
    key_u32(s, "attention.sliding_window", 256);
    if (pattern)
        key_u32(s, "attention.sliding_window_pattern", pattern);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    key_u32(s, "expert_shared_feed_forward_length", FS);
    key_u32(s, "expert_gating_func", gating);
    key_bool(s, "expert_weights_norm", gating == 2);
    key_f32(s, "expert_weights_scale", gating == 2 ? 2.5f : 1.0f);
    key_u32(s, "leading_dense_block_count", n_dense);
    if (n_nextn)
        key_u32(s, "nextn_predict_layers", n_nextn);
    head(s, true, false);
    int n_main = n_layer - (int)n_nextn;
    for (int il = 0; il < n_layer; il++) {
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if ((uint32_t)il < n_dense || il >= n_main) {
            ffn_swiglu(s, il);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            if (gating == 2)
                tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FS, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, FS, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FS, 1);
        }
        if (il >= n_main) {
            tensor(s, "blk.%d.nextn.eh_proj.weight", il, 2 * E, E, 1);
            tensor(s, "blk.%d.nextn.enorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.nextn.hnorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.nextn.shared_head_norm.weight", il, E, 1, 1);
        }
    }
    if (factors)
        tensor(s, "rope_freqs.weight", 0, HD / 2, 1, 1);
}

static void test_exaone_moe(void **state)
{
    (void)state;
    model_spec s;
    /* Four blocks (three sliding-window, one global) and a NextN one. */
    exaone_moe_spec(&s, 5, 1, 1, 0, 2, false);
    project_all(&s, 0);
    /* Every other block global, softmax routing, no dense lead, rope
     * factors (llama.cpp miscounts them with NextN blocks: it loads no such
     * file). */
    exaone_moe_spec(&s, NL, 0, 0, 2, 1, true);
    project_all(&s, 0);
}

/* EXAONE MoE (K-EXAONE) as convert_hf_to_gguf.py writes it:
 * sliding_window_pattern one bool per main block (layer_types, that is
 * num_hidden_layers of them: 4 of the 5 blocks, the NextN one not
 * counted). load_arch_hparams reads the key as a uint32 and, finding an
 * array, passes it over: the period stays 4 whatever the array says. */
static void test_exaone_moe_layer_types(void **state)
{
    (void)state;
    static const uint8_t lllg[4] = { 1, 1, 1, 0 }, none[4] = { 0, 0, 0, 0 };
    model_spec plain, s;
    exaone_moe_spec(&plain, 5, 1, 1, 0, 2, false);
    exaone_moe_spec(&s, 5, 1, 1, 0, 2, false);
    key_arr(&s, "attention.sliding_window_pattern", GGFIT_GGUF_BOOL, lllg, 4);
    assert_true(same_projection(&s, &plain, 0));
    key_drop(&s, "attention.sliding_window_pattern");
    key_arr(&s, "attention.sliding_window_pattern", GGFIT_GGUF_BOOL, none, 4);
    assert_true(same_projection(&s, &plain, 0));
    /* while a scalar is the period */
    key_drop(&s, "attention.sliding_window_pattern");
    key_u32(&s, "attention.sliding_window_pattern", 2);
    assert_false(same_projection(&s, &plain, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nemotron_h_moe),
        cmocka_unit_test(test_mistral4),
        cmocka_unit_test(test_olmoe),
        cmocka_unit_test(test_phimoe),
        cmocka_unit_test(test_qwen2vl),
        cmocka_unit_test(test_exaone_moe),
        cmocka_unit_test(test_nemotron_h_experts),
        cmocka_unit_test(test_nemotron_h_norm_eps),
        cmocka_unit_test(test_exaone_moe_layer_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
