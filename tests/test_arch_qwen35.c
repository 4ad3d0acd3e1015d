/*
 * test_arch_qwen35.c - small Qwen3.5 / Qwen3.6 models (qwen35, qwen35moe):
 * gated delta net layers and gated full attention every
 * full_attention_interval-th layer, dense or MoE with a shared expert,
 * with fewer key heads than value heads or as many, with and without a
 * NextN (MTP) block. Each is projected on one RPC device and on the CPU,
 * flash attention on and off, with the compute buffers from the graph.
 */
#include "arch_spec.h"

enum { NB = 4, FX = 128, FS = 256 };

/* nk key heads and nv value heads of HD in the delta nets; every
 * interval-th layer attends (0: no key, llama.cpp's 4); n_mtp NextN blocks
 * after the NB others. */
static void qwen35_spec_recr(model_spec *s, bool moe, uint32_t nk, uint32_t nv,
                             uint32_t interval, uint32_t n_mtp, bool output,
                             const uint32_t recr[4])
{
    static const uint32_t sections[4] = { 11, 11, 10, 0 };   /* HD / 2 */
    spec_init(s, moe ? "qwen35moe" : "qwen35");
    s->kvs[0].u = NB + n_mtp;   /* block_count */
    key_arr4(s, "rope.dimension_sections", sections);
    key_f32(s, "rope.freq_base", 10000000.0f);
    key_u32(s, "ssm.conv_kernel", 4);
    key_u32(s, "ssm.state_size", HD);
    key_u32(s, "ssm.group_count", nk);
    key_u32(s, "ssm.time_step_rank", nv);
    key_u32(s, "ssm.inner_size", HD * nv);
    if (interval)
        key_u32(s, "full_attention_interval", interval);
    else
        interval = 4;   /* llama.cpp's default */
    if (recr)   /* attention.recurrent_layers: it decides over the interval */
        key_arr4(s, "attention.recurrent_layers", recr);
    if (n_mtp)
        key_u32(s, "nextn_predict_layers", n_mtp);
    if (moe) {
        key_u32(s, "expert_count", NX);
        key_u32(s, "expert_used_count", 2);
        key_u32(s, "expert_feed_forward_length", FX);
        key_u32(s, "expert_shared_feed_forward_length", FS);
    }
    head(s, output, false);
    int64_t key_dim = HD * nk, value_dim = HD * nv;
    for (int il = 0; il < (int)(NB + n_mtp); il++) {
        bool mtp = il >= NB;
        bool attn = mtp || (recr ? !recr[il] : (il + 1) % interval == 0);
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.post_attention_norm.weight", il, E, 1, 1);
        if (attn) {
            tensor(s, "blk.%d.attn_q.weight", il, E, 2 * NH * HD, 1);
            tensor(s, "blk.%d.attn_k.weight", il, E, NKV * HD, 1);
            tensor(s, "blk.%d.attn_v.weight", il, E, NKV * HD, 1);
            tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
            tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
            tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        } else {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, 2 * key_dim + value_dim, 1);
            tensor(s, "blk.%d.attn_gate.weight", il, E, value_dim, 1);
            tensor(s, "blk.%d.ssm_conv1d.weight", il, 4, 2 * key_dim + value_dim, 1);
            tensor(s, "blk.%d.ssm_dt.bias", il, nv, 1, 1);
            tensor(s, "blk.%d.ssm_a", il, nv, 1, 1);
            tensor(s, "blk.%d.ssm_beta.weight", il, E, nv, 1);
            tensor(s, "blk.%d.ssm_alpha.weight", il, E, nv, 1);
            tensor(s, "blk.%d.ssm_norm.weight", il, HD, 1, 1);
            tensor(s, "blk.%d.ssm_out.weight", il, value_dim, E, 1);
        }
        if (moe) {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_gate_inp_shexp.weight", il, E, 1, 1);
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FS, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FS, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, FS, E, 1);
        } else {
            ffn_swiglu(s, il);
        }
        if (mtp) {
            tensor(s, "blk.%d.nextn.eh_proj.weight", il, 2 * E, E, 1);
            tensor(s, "blk.%d.nextn.enorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.nextn.hnorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.nextn.shared_head_norm.weight", il, E, 1, 1);
        }
    }
}

/* Q4_0 for every matrix whose rows hold whole blocks (but the conv
 * kernels): the CPU repacks them, so the delta nets' beta and alpha
 * projections are placed as the matrix products they are. */
static void quantize(model_spec *s)
{
    for (size_t i = 0; i < s->n_t; i++) {
        gw_tensor_spec *t = &s->t[i];
        if (t->n_dims >= 2 && t->ne[0] % 32 == 0 && !strstr(t->name, "conv1d"))
            t->type = GGFIT_TYPE_Q4_0;
    }
}

static void qwen35_spec(model_spec *s, bool moe, uint32_t nk, uint32_t nv, uint32_t interval,
                        uint32_t n_mtp, bool output)
{
    qwen35_spec_recr(s, moe, nk, nv, interval, n_mtp, output, NULL);
}

static void test_qwen35(void **state)
{
    (void)state;
    model_spec s;
    qwen35_spec(&s, false, 2, 4, 2, 0, false);   /* tied, key heads repeat */
    project_all(&s, 0);
    qwen35_spec(&s, false, 4, 4, 4, 1, true);    /* one MTP block */
    project_all(&s, 0);
}

static void test_qwen35moe(void **state)
{
    (void)state;
    model_spec s;
    qwen35_spec(&s, true, 2, 4, 2, 0, true);
    project_all(&s, 0);
    qwen35_spec(&s, true, 2, 2, 4, 1, false);
    project_all(&s, 0);
}

static void test_qwen35_q4_0(void **state)
{
    (void)state;
    model_spec s;
    qwen35_spec(&s, false, 2, 4, 2, 0, true);
    quantize(&s);
    project_all(&s, 0);
}

/* No full_attention_interval: every fourth layer attends. */
static void test_qwen35_default_interval(void **state)
{
    (void)state;
    model_spec s;
    qwen35_spec(&s, false, 2, 4, 0, 0, false);
    project_all(&s, 0);
}

/* attention.recurrent_layers (4 blocks, so no MTP block here) overrides
 * full_attention_interval: only layer 1 attends. */
static void test_qwen35_recurrent_layers(void **state)
{
    (void)state;
    static const uint32_t recr[4] = { 1, 0, 1, 1 };
    model_spec s;
    qwen35_spec_recr(&s, true, 2, 4, 2, 0, true, recr);
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qwen35),
        cmocka_unit_test(test_qwen35moe),
        cmocka_unit_test(test_qwen35_q4_0),
        cmocka_unit_test(test_qwen35_default_interval),
        cmocka_unit_test(test_qwen35_recurrent_layers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
