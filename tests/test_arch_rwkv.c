/*
 * test_arch_rwkv.c - small RWKV models (rwkv6, rwkv6qwen2, rwkv7, arwkv7):
 * every layer a time mix over a wkv state and token shifts in the
 * recurrent memory, with RWKV's channel mix or a SwiGLU FFN; and the
 * PLaMo family (plamo2's Mamba + attention hybrid, plamo, plamo3 with
 * and without sliding windows) and bitnet (sub-norms, scales, no output
 * matrix), in f16 and in Q4_0. Each is projected on one RPC device and on
 * the CPU, with the compute buffers from the graph.
 */
#include <string.h>

#include "arch_spec.h"

enum { TMX = 32, TDX = 64, LD = 64, LI = 32, LV = 16, LG = 128 };

/* A tensor kept in f32 whatever its rank (RWKV's vectors and time_first),
 * of ne0 x ne1 x ne2 x ne3. */
static void tensor_f32(model_spec *s, const char *fmt, int il, int64_t ne0, int64_t ne1,
                       int64_t ne2, int64_t ne3)
{
    tensor(s, fmt, il, ne0, ne1, ne2);
    gw_tensor_spec *t = &s->t[s->n_t - 1];
    t->type = GGFIT_TYPE_F32;
    t->ne[3] = ne3;
    if (ne3 > 1)
        t->n_dims = 4;
}

/* The keys every RWKV reads: no attention heads, wkv heads of HD. */
static void rwkv_keys(model_spec *s, const char *arch, uint32_t n_head_kv)
{
    spec_init(s, arch);
    s->kvs[5].u = 0;            /* attention.head_count */
    s->kvs[6].u = n_head_kv;    /* attention.head_count_kv */
    key_f32(s, "attention.layer_norm_epsilon", 1e-5f);
    key_u32(s, "wkv.head_size", HD);
}

static void norm_wb(model_spec *s, const char *name, int il)
{
    char fmt[64];
    snprintf(fmt, sizeof fmt, "%s.weight", name);
    tensor(s, fmt, il, E, 1, 1);
    snprintf(fmt, sizeof fmt, "%s.bias", name);
    tensor(s, fmt, il, E, 1, 1);
}

/* RWKV6's time mix: the fused lerp (else the five separate ones),
 * time_first unless QRWKV, key and value of kv columns, the biases. */
static void rwkv6_time_mix(model_spec *s, int il, bool fused, bool first, int64_t n_kv,
                           bool bias, bool ln)
{
    tensor(s, "blk.%d.time_mix_w1.weight", il, E, TMX * 5, 1);
    tensor(s, "blk.%d.time_mix_w2.weight", il, TMX, E, 5);
    tensor_f32(s, "blk.%d.time_mix_lerp_x.weight", il, E, 1, 1, 1);
    if (fused) {
        tensor_f32(s, "blk.%d.time_mix_lerp_fused.weight", il, E, 1, 1, 5);
    } else {
        tensor_f32(s, "blk.%d.time_mix_lerp_w.weight", il, E, 1, 1, 1);
        tensor_f32(s, "blk.%d.time_mix_lerp_k.weight", il, E, 1, 1, 1);
        tensor_f32(s, "blk.%d.time_mix_lerp_v.weight", il, E, 1, 1, 1);
        tensor_f32(s, "blk.%d.time_mix_lerp_r.weight", il, E, 1, 1, 1);
        tensor_f32(s, "blk.%d.time_mix_lerp_g.weight", il, E, 1, 1, 1);
    }
    if (first)
        tensor_f32(s, "blk.%d.time_mix_first.weight", il, HD, E / HD, 1, 1);
    tensor_f32(s, "blk.%d.time_mix_decay.weight", il, E, 1, 1, 1);
    tensor(s, "blk.%d.time_mix_decay_w1.weight", il, E, TDX, 1);
    tensor(s, "blk.%d.time_mix_decay_w2.weight", il, TDX, E, 1);
    tensor(s, "blk.%d.time_mix_key.weight", il, E, n_kv, 1);
    tensor(s, "blk.%d.time_mix_value.weight", il, E, n_kv, 1);
    tensor(s, "blk.%d.time_mix_receptance.weight", il, E, E, 1);
    tensor(s, "blk.%d.time_mix_gate.weight", il, E, E, 1);
    if (bias) {
        tensor(s, "blk.%d.time_mix_key.bias", il, n_kv, 1, 1);
        tensor(s, "blk.%d.time_mix_value.bias", il, n_kv, 1, 1);
        tensor(s, "blk.%d.time_mix_receptance.bias", il, E, 1, 1);
    }
    if (ln)
        norm_wb(s, "blk.%d.time_mix_ln", il);
    tensor(s, "blk.%d.time_mix_output.weight", il, E, E, 1);
}

/* rwkv6: layer norms with biases, channel mix; fused or separate lerps,
 * rescale_every_n_layers (0: none). */
static void rwkv6_spec(model_spec *s, bool fused, uint32_t rescale)
{
    rwkv_keys(s, "rwkv6", 0);
    key_u32(s, "time_mix_extra_dim", TMX);
    key_u32(s, "time_decay_extra_dim", TDX);
    if (rescale)
        key_u32(s, "rescale_every_n_layers", rescale);
    key_u32(s, "token_shift_count", 2);
    tensor(s, "token_embd.weight", 0, E, V, 1);
    norm_wb(s, "token_embd_norm", 0);
    norm_wb(s, "output_norm", 0);
    tensor(s, "output.weight", 0, E, V, 1);
    for (int il = 0; il < NL; il++) {
        norm_wb(s, "blk.%d.attn_norm", il);
        norm_wb(s, "blk.%d.attn_norm_2", il);
        rwkv6_time_mix(s, il, fused, true, E, false, true);
        tensor_f32(s, "blk.%d.channel_mix_lerp_k.weight", il, E, 1, 1, 1);
        tensor_f32(s, "blk.%d.channel_mix_lerp_r.weight", il, E, 1, 1, 1);
        tensor(s, "blk.%d.channel_mix_key.weight", il, E, F, 1);
        tensor(s, "blk.%d.channel_mix_value.weight", il, F, E, 1);
        tensor(s, "blk.%d.channel_mix_receptance.weight", il, E, E, 1);
    }
}

/* rwkv6qwen2: RMS norms, SwiGLU, one token shift; QRWKV (no time_first:
 * its load_tensors has no time_mix_ln for the wkv6 path); n_head_kv
 * key/value heads (0: as many as wkv heads). */
static void rwkv6qwen2_spec(model_spec *s, bool first, uint32_t n_head_kv)
{
    rwkv_keys(s, "rwkv6qwen2", n_head_kv);
    key_u32(s, "time_mix_extra_dim", TMX);
    key_u32(s, "time_decay_extra_dim", TDX);
    key_u32(s, "token_shift_count", 1);
    head(s, true, false);
    int64_t n_kv = n_head_kv ? (int64_t)n_head_kv * HD : E;
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        rwkv6_time_mix(s, il, true, first, n_kv, n_head_kv != 0, false);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

static void test_rwkv6(void **state)
{
    (void)state;
    model_spec s;
    rwkv6_spec(&s, true, 0);
    project_all(&s, 0);
    rwkv6_spec(&s, false, 2);   /* separate lerps, halving every 2nd layer */
    project_all(&s, 0);
}

static void test_rwkv6qwen2(void **state)
{
    (void)state;
    model_spec s;
    rwkv6qwen2_spec(&s, false, 2);   /* QRWKV, key and value heads repeat */
    project_all(&s, 0);
    rwkv6qwen2_spec(&s, false, 0);   /* as many key heads, no biases */
    project_all(&s, 0);
}

/* RWKV7's time mix: the LoRAs of decay, in-context learning rate, value
 * residual (the first layer's of the iclr rank) and gate (optional in
 * arwkv7, with a fused lerp of five then), the group norm's weights. */
static void rwkv7_time_mix(model_spec *s, int il, bool gate, bool ln)
{
    tensor_f32(s, "blk.%d.time_mix_w0.weight", il, E, 1, 1, 1);
    tensor(s, "blk.%d.time_mix_w1.weight", il, E, LD, 1);
    tensor(s, "blk.%d.time_mix_w2.weight", il, LD, E, 1);
    tensor_f32(s, "blk.%d.time_mix_a0.weight", il, E, 1, 1, 1);
    tensor(s, "blk.%d.time_mix_a1.weight", il, E, LI, 1);
    tensor(s, "blk.%d.time_mix_a2.weight", il, LI, E, 1);
    int64_t lv = il == 0 ? LI : LV;
    tensor_f32(s, "blk.%d.time_mix_v0.weight", il, E, 1, 1, 1);
    tensor(s, "blk.%d.time_mix_v1.weight", il, E, lv, 1);
    tensor(s, "blk.%d.time_mix_v2.weight", il, lv, E, 1);
    if (gate) {
        tensor(s, "blk.%d.time_mix_g1.weight", il, E, LG, 1);
        tensor(s, "blk.%d.time_mix_g2.weight", il, LG, E, 1);
    }
    tensor_f32(s, "blk.%d.time_mix_lerp_fused.weight", il, E, 1, 1, gate ? 6 : 5);
    tensor_f32(s, "blk.%d.time_mix_k_k.weight", il, E, 1, 1, 1);
    tensor_f32(s, "blk.%d.time_mix_k_a.weight", il, E, 1, 1, 1);
    tensor_f32(s, "blk.%d.time_mix_r_k.weight", il, E, 1, 1, 1);
    tensor(s, "blk.%d.time_mix_key.weight", il, E, E, 1);
    tensor(s, "blk.%d.time_mix_value.weight", il, E, E, 1);
    tensor(s, "blk.%d.time_mix_receptance.weight", il, E, E, 1);
    if (ln)
        norm_wb(s, "blk.%d.time_mix_ln", il);
    tensor(s, "blk.%d.time_mix_output.weight", il, E, E, 1);
}

static void rwkv7_keys(model_spec *s, const char *arch, bool gate)
{
    rwkv_keys(s, arch, 0);
    key_u32(s, "attention.decay_lora_rank", LD);
    key_u32(s, "attention.iclr_lora_rank", LI);
    key_u32(s, "attention.value_residual_mix_lora_rank", LV);
    if (gate)
        key_u32(s, "attention.gate_lora_rank", LG);
}

/* rwkv7: layer norms with biases, channel mix, two token shifts; n_layer
 * blocks. */
static void rwkv7_spec(model_spec *s, int n_layer)
{
    rwkv7_keys(s, "rwkv7", true);
    s->kvs[0].u = (uint32_t)n_layer;   /* block_count */
    tensor(s, "token_embd.weight", 0, E, V, 1);
    norm_wb(s, "token_embd_norm", 0);
    norm_wb(s, "output_norm", 0);
    tensor(s, "output.weight", 0, E, V, 1);
    for (int il = 0; il < n_layer; il++) {
        norm_wb(s, "blk.%d.attn_norm", il);
        norm_wb(s, "blk.%d.attn_norm_2", il);
        rwkv7_time_mix(s, il, true, true);
        tensor_f32(s, "blk.%d.channel_mix_lerp_k.weight", il, E, 1, 1, 1);
        tensor(s, "blk.%d.channel_mix_key.weight", il, E, F, 1);
        tensor(s, "blk.%d.channel_mix_value.weight", il, F, E, 1);
    }
}

/* arwkv7: RMS norms, SwiGLU, one token shift; with the gate and the group
 * norm, or neither. */
static void arwkv7_spec(model_spec *s, bool gate_ln)
{
    rwkv7_keys(s, "arwkv7", gate_ln);
    key_u32(s, "token_shift_count", 1);
    head(s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        rwkv7_time_mix(s, il, gate_ln, gate_ln);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

static void test_rwkv7(void **state)
{
    (void)state;
    model_spec s;
    rwkv7_spec(&s, NL);
    project_all(&s, 0);
    rwkv7_spec(&s, 4);
    project_all(&s, 0);
}

static void test_arwkv7(void **state)
{
    (void)state;
    model_spec s;
    arwkv7_spec(&s, true);
    project_all(&s, 0);
    arwkv7_spec(&s, false);   /* no gate, no group norm */
    project_all(&s, 0);
}

/* plamo2: 4 blocks, the Mamba ones those without KV heads (n_kv[il] 0),
 * d_inner of n_ssm_heads heads, no groups; tied output or not. */
enum { DS = 16, DCONV = 4, DT = 64 };
static void plamo2_spec(model_spec *s, const uint32_t n_kv[4], uint32_t n_ssm_heads, bool output)
{
    spec_init(s, "plamo2");
    s->kvs[0].u = 4;   /* block_count */
    s->n_kv--;         /* spec_init's head_count_kv (key 6) goes: an array below */
    memmove(&s->kvs[6], &s->kvs[7], 2 * sizeof s->kvs[0]);
    key_arr4(s, "attention.head_count_kv", n_kv);
    key_u32(s, "attention.key_length", HD);
    key_u32(s, "attention.value_length", HD);
    key_u32(s, "ssm.conv_kernel", DCONV);
    key_u32(s, "ssm.inner_size", 2 * E);
    key_u32(s, "ssm.state_size", DS);
    key_u32(s, "ssm.time_step_rank", n_ssm_heads);
    key_u32(s, "ssm.group_count", 0);
    head(s, output, false);
    for (int il = 0; il < 4; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (n_kv[il] == 0) {
            tensor(s, "blk.%d.ssm_in.weight", il, E, 4 * E, 1);
            tensor_f32(s, "blk.%d.ssm_conv1d.weight", il, DCONV, 2 * E, 1, 1);
            tensor(s, "blk.%d.ssm_x.weight", il, 2 * E, DT + 2 * DS, 1);
            tensor(s, "blk.%d.ssm_dt.weight", il, DT, n_ssm_heads, 1);
            tensor(s, "blk.%d.ssm_dt.bias", il, n_ssm_heads, 1, 1);
            tensor(s, "blk.%d.ssm_a", il, n_ssm_heads, 1, 1);
            tensor(s, "blk.%d.ssm_d", il, n_ssm_heads, 1, 1);
            tensor(s, "blk.%d.ssm_out.weight", il, 2 * E, E, 1);
            tensor(s, "blk.%d.ssm_dt_norm", il, DT, 1, 1);
            tensor(s, "blk.%d.ssm_b_norm", il, DS, 1, 1);
            tensor(s, "blk.%d.ssm_c_norm", il, DS, 1, 1);
        } else {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, (NH + 2 * n_kv[il]) * HD, 1);
            tensor_f32(s, "blk.%d.attn_q_norm.weight", il, HD, NH, 1, 1);
            tensor_f32(s, "blk.%d.attn_k_norm.weight", il, HD, n_kv[il], 1, 1);
            tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        }
        tensor(s, "blk.%d.post_attention_norm", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, 2 * F, 1);
        tensor(s, "blk.%d.post_ffw_norm", il, E, 1, 1);
    }
}

static void test_plamo2(void **state)
{
    (void)state;
    static const uint32_t kv1[4] = { 0, NKV, 0, NKV }, kv2[4] = { 0, 0, 0, NH };
    model_spec s;
    plamo2_spec(&s, kv1, 8, false);
    project_all(&s, 0);
    plamo2_spec(&s, kv2, 4, true);
    project_all(&s, 0);
}

/* plamo: separate Q/K/V (GQA) or fused QKV, SwiGLU, parallel block. */
static void plamo_spec(model_spec *s, bool fused)
{
    spec_init(s, "plamo");
    head(s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (fused) {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, (NH + 2 * NKV) * HD, 1);
            tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        } else {
            attn_qkv(s, il, false);   /* with attn_output */
        }
        ffn_swiglu(s, il);
    }
}

/* plamo3: n_layer blocks; a sliding window (0: none) and its pattern
 * (0: llama.cpp's default of 8); tied output or not. */
static void plamo3_spec(model_spec *s, int n_layer, uint32_t window, uint32_t pattern,
                        bool output)
{
    spec_init(s, "plamo3");
    s->kvs[0].u = (uint32_t)n_layer;   /* block_count */
    if (window)
        key_u32(s, "attention.sliding_window", window);
    if (pattern)
        key_u32(s, "attention.sliding_window_pattern", pattern);
    head(s, output, false);
    for (int il = 0; il < n_layer; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_qkv.weight", il, E, (NH + 2 * NKV) * HD, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        tensor(s, "blk.%d.post_attention_norm", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.post_ffw_norm", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, 2 * F, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
    }
}

static void test_plamo(void **state)
{
    (void)state;
    model_spec s;
    plamo_spec(&s, false);
    project_all(&s, 0);
    plamo_spec(&s, true);
    project_all(&s, 0);
}

static void test_plamo3(void **state)
{
    (void)state;
    model_spec s;
    plamo3_spec(&s, 9, 128, 0, false);   /* the default pattern: one full layer in 8 */
    project_all(&s, 0);
    plamo3_spec(&s, 4, 256, 2, true);
    project_all(&s, 0);
    plamo3_spec(&s, NL, 0, 0, true);     /* no window: a plain cache */
    project_all(&s, 0);
}

/* bitnet: sub-norms, no output matrix; with the per-tensor scales or
 * without. */
static void bitnet_spec(model_spec *s, bool scales)
{
    static const char *const mats[7] = {
        "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_down", "ffn_up",
    };
    spec_init(s, "bitnet");
    head(s, false, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_sub_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_sub_norm.weight", il, F, 1, 1);
        ffn_swiglu(s, il);
        for (int i = 0; scales && i < 7; i++) {
            char fmt[64];
            snprintf(fmt, sizeof fmt, "blk.%%d.%s.scale", mats[i]);
            tensor(s, fmt, il, 1, 1, 1);
        }
    }
}

static void test_bitnet(void **state)
{
    (void)state;
    model_spec s;
    bitnet_spec(&s, true);
    project_all(&s, 0);
    bitnet_spec(&s, false);
    project_all(&s, 0);
}

/* Q4_0 for every matrix whose rows hold whole blocks (but the conv
 * kernels): the CPU repacks the 2-d ones, as llama.cpp's weight buffer
 * choice per tensor op allows. */
static void quantize(model_spec *s)
{
    for (size_t i = 0; i < s->n_t; i++) {
        gw_tensor_spec *t = &s->t[i];
        if (t->n_dims >= 2 && t->ne[0] % 32 == 0 && t->type == GGFIT_TYPE_F16 &&
            !strstr(t->name, "conv1d"))
            t->type = GGFIT_TYPE_Q4_0;
    }
}

static void test_rwkv_q4_0(void **state)
{
    (void)state;
    static const uint32_t kv1[4] = { 0, NKV, 0, NKV };
    model_spec s;
    rwkv6_spec(&s, true, 0);
    quantize(&s);
    project_all(&s, 0);
    rwkv7_spec(&s, NL);
    quantize(&s);
    project_all(&s, 0);
    plamo2_spec(&s, kv1, 8, true);
    quantize(&s);
    project_all(&s, 0);
    bitnet_spec(&s, true);
    quantize(&s);
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rwkv6),
        cmocka_unit_test(test_rwkv6qwen2),
        cmocka_unit_test(test_rwkv7),
        cmocka_unit_test(test_arwkv7),
        cmocka_unit_test(test_plamo2),
        cmocka_unit_test(test_plamo),
        cmocka_unit_test(test_plamo3),
        cmocka_unit_test(test_bitnet),
        cmocka_unit_test(test_rwkv_q4_0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
