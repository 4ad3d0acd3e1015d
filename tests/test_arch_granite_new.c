/*
 * test_arch_granite_new.c - the architectures llama.cpp gained between
 * b10309 and b10587 that this file covers: pockettts (Pocket TTS's text
 * backbone), muse-glimmer, granite_swa (dense and MoE) and graniteswitch.
 * Small header-only models with the keys each converter writes
 * (conversion/<family>.py) and the tensors load_tensors creates, projected
 * on one RPC device and on the CPU, flash attention on and off; the
 * compute buffers must come from the graph. The same headers
 * (GGFIT_ARCHS_DUMP) are data/tiny/<arch>-<n>.gguf, which tools/llamacmp.py
 * checked against llama.cpp b10587 (data/oracle/b10587/). llama.cpp b10309
 * knows none of them: the projection refuses each under that version,
 * naming the build that added it.
 */
#include "arch_spec.h"

/* The projection of s under llama.cpp at build refuses the file, naming
 * the build and commit that added the architecture. */
static void refused_before(const model_spec *s, uint32_t build, const char *added)
{
    gw w;
    write_spec(s, &w);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    ggfit_params p;
    ggfit_params_init(&p);
    p.llama_build = build;
    ggfit_projection pr;
    ggfit_status rc = ggfit_project(m, &p, NULL, 0, &pr, NULL, &err);
    char want[128];
    snprintf(want, sizeof want, "b%u cannot load this architecture (%s: added in %s", build,
             s->arch, added);
    if (rc != GGFIT_EUNSUPPORTED || !err || !strstr(err, want))
        fail_msg("%s at b%u: expected a refusal naming '%s', got %s: %s", s->arch, build, want,
                 ggfit_status_str(rc), err ? err : "");
    ggfit_free(err);
    /* The newest version loads it. */
    p.llama_build = 0;
    if (ggfit_project(m, &p, NULL, 0, &pr, NULL, &err) != GGFIT_OK)
        fail_msg("%s at the newest build: %s", s->arch, err);
    ggfit_model_free(m);
    gw_free(&w);
}

/* ---- pockettts ----------------------------------------------------------- */

/* conversion/pockettts.py: TextModel's keys (no head_count_kv, no rope
 * dimension count: head_dim 64), LayerNorms with biases, Q/K/V split from
 * in_proj, no output matrix. */
static void pockettts_spec(model_spec *s, uint32_t n_layer)
{
    spec_init(s, "pockettts");
    key_u32(s, "block_count", n_layer);
    key_drop(s, "attention.head_count_kv");
    key_drop(s, "rope.dimension_count");
    key_drop(s, "attention.layer_norm_rms_epsilon");
    key_f32(s, "rope.freq_base", 10000.0f);
    key_f32(s, "attention.layer_norm_epsilon", 1e-5f);
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    tensor(s, "output_norm.bias", 0, E, 1, 1);
    for (int il = 0; il < (int)n_layer; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_norm.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_q.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_k.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_v.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.bias", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, F, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
    }
}

static void test_pockettts(void **state)
{
    (void)state;
    model_spec s;
    pockettts_spec(&s, NL);
    project_all(&s, 0);
    pockettts_spec(&s, 6);
    project_all(&s, 2048);
    refused_before(&s, 10309, "b10369, 6e62ba538");
}

/* ---- muse-glimmer -------------------------------------------------------- */

/* conversion/muse_glimmer.py: TextModel's keys with head_dim (key and
 * value lengths), the soft cap, the output multiplier, the window and the
 * per-layer pattern from layer_types; synthesized Q/K norms, the attention
 * gate, pre and post norms. */
static const bool muse_pattern[] = { true, true, true, false, true, true, true, false };

static void muse_spec(model_spec *s, uint32_t n_layer, uint32_t head_dim, uint32_t window)
{
    spec_init(s, "muse-glimmer");
    key_u32(s, "block_count", n_layer);
    key_drop(s, "rope.dimension_count");
    key_f32(s, "rope.freq_base", 500000.0f);
    key_u32(s, "attention.key_length", head_dim);
    key_u32(s, "attention.value_length", head_dim);
    key_f32(s, "final_logit_softcapping", 30.0f);
    key_f32(s, "logit_scale", 0.5f);
    key_u32(s, "attention.sliding_window", window);
    key_arr(s, "attention.sliding_window_pattern", GGFIT_GGUF_BOOL, muse_pattern, n_layer);
    uint32_t q = NH * head_dim, kvw = NKV * head_dim;
    head(s, true, false);
    for (int il = 0; il < (int)n_layer; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.post_attention_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_q.weight", il, E, q, 1);
        tensor(s, "blk.%d.attn_k.weight", il, E, kvw, 1);
        tensor(s, "blk.%d.attn_v.weight", il, E, kvw, 1);
        tensor(s, "blk.%d.attn_output.weight", il, q, E, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, head_dim, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, head_dim, 1, 1);
        tensor(s, "blk.%d.attn_gate.weight", il, E, q, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.post_ffw_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

static void test_muse_glimmer(void **state)
{
    (void)state;
    model_spec s;
    muse_spec(&s, 4, HD, 128);
    project_all(&s, 0);
    muse_spec(&s, 8, 2 * HD, 512);   /* wider heads, two global layers */
    project_all(&s, 2048);
    refused_before(&s, 10309, "b10349, 62bf73d25");
}

/* ---- granite_swa --------------------------------------------------------- */

enum { FX = 128, SH = 96 };

/* conversion/granite.py's GraniteSWAModel (LlamaModel's keys, Granite's
 * scales, the window, the pattern from layer_types, the RoPE pattern from
 * no_rope_layers) and GraniteMoeSWAModel (experts with gate and up fused,
 * a shared expert kept fused, tied output). */
static const bool swa_layers[] = { false, true, true, true, false, true };
static const bool rope_layers[] = { true, true, true, false, true, true };

static void granite_swa_spec(model_spec *s, uint32_t n_layer, bool moe, bool rope_pattern)
{
    spec_init(s, "granite_swa");
    key_u32(s, "block_count", n_layer);
    key_f32(s, "rope.freq_base", 10000.0f);
    key_f32(s, "attention.scale", 0.015625f);
    key_f32(s, "embedding_scale", 12.0f);
    key_f32(s, "residual_scale", 0.22f);
    key_f32(s, "logit_scale", 8.0f);
    key_u32(s, "attention.sliding_window", 128);
    key_arr(s, "attention.sliding_window_pattern", GGFIT_GGUF_BOOL, swa_layers, n_layer);
    if (rope_pattern)
        key_arr(s, "attention.rope_pattern", GGFIT_GGUF_BOOL, rope_layers, n_layer);
    if (moe) {
        key_u32(s, "feed_forward_length", FX);
        key_u32(s, "expert_count", NX);
        key_u32(s, "expert_used_count", 2);
        key_u32(s, "expert_shared_feed_forward_length", SH);
    }
    head(s, !moe, false);
    for (int il = 0; il < (int)n_layer; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_sinks.weight", il, NH, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (moe) {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            tensor(s, "blk.%d.ffn_gate_up_exps.weight", il, E, 2 * FX, NX);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, 2 * SH, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, SH, E, 1);
        } else {
            ffn_swiglu(s, il);
        }
    }
}

static void test_granite_swa(void **state)
{
    (void)state;
    model_spec s;
    granite_swa_spec(&s, 4, false, true);
    project_all(&s, 0);
    granite_swa_spec(&s, 6, true, false);   /* GraniteMoeSWA */
    project_all(&s, 2048);
    refused_before(&s, 10309, "b10514, 7221e24f5");
}

/* get_arr reads the sliding-window pattern: an array of any length (the
 * layers past it are global ones), never a scalar. */
static const bool swa_short[] = { false, true, true, true };
static const bool swa_padded[] = { false, true, true, true, false, false };

static void test_granite_swa_pattern(void **state)
{
    (void)state;
    model_spec a, b;
    granite_swa_spec(&a, 6, true, false);
    key_arr(&a, "attention.sliding_window_pattern", GGFIT_GGUF_BOOL, swa_short, 4);
    granite_swa_spec(&b, 6, true, false);
    key_arr(&b, "attention.sliding_window_pattern", GGFIT_GGUF_BOOL, swa_padded, 6);
    assert_true(same_projection(&a, &b, 4096));
    key_u32(&a, "attention.sliding_window_pattern", 4);
    refused_with(&a, "attention.sliding_window_pattern' is not an array");
}

/* ---- graniteswitch ------------------------------------------------------- */

enum { RANK = 16 };

/* conversion/granite.py's GraniteSwitchModel: GraniteMoeModel's keys for a
 * dense model (block_count one less than num_hidden_layers, the router's
 * slot; expert_used_count pinned to 0; the shared FFN's length), the
 * adapters' count, rank, token ids and router gain; fused QKV, gate and up
 * split, each projection's stacked lora_a/lora_b over n_adapters + 1
 * slots; lm_head tied. */
static const int32_t activate_ids[] = { 990, 991, 992, 993 };
static const int32_t substitute_ids[] = { 5, 6, 7, 8 };

static void lora(model_spec *s, const char *proj, int il, int64_t n_in, int64_t n_out,
                 int64_t slots)
{
    char fmt[64];
    snprintf(fmt, sizeof fmt, "blk.%%d.%s.lora_a", proj);
    tensor(s, fmt, il, n_in, RANK, slots);
    snprintf(fmt, sizeof fmt, "blk.%%d.%s.lora_b", proj);
    tensor(s, fmt, il, RANK, n_out, slots);
}

static void graniteswitch_spec(model_spec *s, uint32_t n_layer, uint32_t n_adapters, bool rope)
{
    spec_init(s, "graniteswitch");
    key_u32(s, "block_count", n_layer);
    key_f32(s, "rope.freq_base", 10000.0f);
    key_u32(s, "expert_used_count", 0);
    key_f32(s, "attention.scale", 0.015625f);
    key_f32(s, "embedding_scale", 12.0f);
    key_f32(s, "residual_scale", 0.22f);
    key_f32(s, "logit_scale", 8.0f);
    key_u32(s, "expert_shared_feed_forward_length", F);
    if (!rope)
        key_bool(s, "rope.scaling.finetuned", false);
    key_u32(s, "adapters.count", n_adapters);
    key_u32(s, "adapters.lora_rank", RANK);
    key_arr(s, "adapters.token_ids_activate", GGFIT_GGUF_INT32, activate_ids, n_adapters);
    key_arr(s, "adapters.token_ids_substitute", GGFIT_GGUF_INT32, substitute_ids, n_adapters);
    key_f32(s, "adapters.router_gain", 15.0f);
    int64_t slots = n_adapters + 1, q = NH * HD, kvw = NKV * HD;
    head(s, false, false);
    for (int il = 0; il < (int)n_layer; il++) {
        tensor(s, "blk.%d.attn_qkv.weight", il, E, q + 2 * kvw, 1);
        lora(s, "attn_q", il, E, q, slots);
        lora(s, "attn_k", il, E, kvw, slots);
        lora(s, "attn_v", il, E, kvw, slots);
        tensor(s, "blk.%d.attn_output.weight", il, q, E, 1);
        lora(s, "attn_output", il, q, E, slots);
        tensor(s, "blk.%d.ffn_gate.weight", il, E, F, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, F, 1);
        lora(s, "ffn_gate", il, E, F, slots);
        lora(s, "ffn_up", il, E, F, slots);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
        lora(s, "ffn_down", il, F, E, slots);
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
    }
}

static void test_graniteswitch(void **state)
{
    (void)state;
    model_spec s;
    graniteswitch_spec(&s, NL, 3, true);
    project_all(&s, 0);
    graniteswitch_spec(&s, 4, 4, false);   /* no RoPE (rope.scaling.finetuned false) */
    project_all(&s, 2048);
    refused_before(&s, 10309, "b10342, 157b81fe6");
}

/* What llama.cpp refuses of Granite Switch's adapters (load_arch_hparams'
 * and load_arch_tensors' throws): more than 4096 adapters, token id arrays
 * of another length, a substitute token outside the vocabulary. */
static const int32_t bad_substitute_ids[] = { 5, 6, V, 8 };

static void test_graniteswitch_refused(void **state)
{
    (void)state;
    model_spec s;
    graniteswitch_spec(&s, NL, 3, true);
    key_u32(&s, "adapters.count", 4097);
    refused_with(&s, "at most 4096 adapters");
    graniteswitch_spec(&s, NL, 3, true);
    key_u32(&s, "adapters.count", 2);
    refused_with(&s, "holds 3 ids for 2 adapters");
    graniteswitch_spec(&s, NL, 4, true);
    key_arr(&s, "adapters.token_ids_substitute", GGFIT_GGUF_INT32, bad_substitute_ids, 4);
    refused_with(&s, "token id 1000, outside the 1000 tokens");
    graniteswitch_spec(&s, NL, 3, true);
    key_drop(&s, "adapters.token_ids_activate");
    refused_with(&s, "adapters.token_ids_activate' is missing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pockettts),
        cmocka_unit_test(test_muse_glimmer),
        cmocka_unit_test(test_granite_swa),
        cmocka_unit_test(test_granite_swa_pattern),
        cmocka_unit_test(test_graniteswitch),
        cmocka_unit_test(test_graniteswitch_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
