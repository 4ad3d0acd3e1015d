/*
 * test_arch_hybrid2.c - the graph builders of step35, kimi-linear and
 * minimax-m3: small header-only models with the tensors llama.cpp's
 * load_tensors creates for each (names and shapes), projected on one RPC
 * device and on the CPU alone, with flash attention on and off; the compute
 * buffers must come from the graph. The same headers (GGFIT_ARCHS_DUMP) are
 * data/tiny/<arch>-<n>.gguf, which tools/llamacmp.py checked against
 * llama.cpp (data/oracle/).
 */
#include "arch_spec.h"

enum { FX = 128, FS = 256 };

/* Key i (a scalar set by spec_init) becomes a per-layer array of 4. */
static void per_layer(model_spec *s, size_t i, const uint32_t v[4])
{
    s->kvs[i].kind = 'a';
    s->kvs[i].u = 4;
    memcpy(s->kvs[i].a, v, sizeof s->kvs[i].a);
}

/* A per-layer array of 4 f32 under "<arch>.<suffix>". */
static void key_f32_arr4(model_spec *s, const char *suffix, const float v[4])
{
    kv *k = &s->kvs[s->n_kv++];
    snprintf(k->key, sizeof k->key, "%s.%s", s->arch, suffix);
    k->kind = 'g';
    k->u = 4;
    memcpy(k->a, v, sizeof k->a);
}

/* ---- step35 -------------------------------------------------------------- */

/* The experts' and the shared expert's widths (wider in the clamp test,
 * so that their SwiGLUs size the compute buffers). */
static int64_t step35_fx = FX, step35_fs = FS;

/* Four blocks (the last an MTP one when mtp), heads[il] query heads,
 * swa[il] the sliding-window pattern; moe: blocks 1.. are experts plus a
 * shared expert (block 0 dense); gate: the head-wise attention gate; norms:
 * per-head Q/K norms; factors: rope_freqs. */
static void step35_spec(model_spec *s, const uint32_t heads[4], const uint32_t swa[4], bool mtp,
                        bool moe, bool gate, bool norms, bool factors)
{
    spec_init(s, "step35");
    s->kvs[0].u = 4;   /* block_count */
    per_layer(s, 5, heads);   /* attention.head_count */
    key_u32(s, "attention.sliding_window", 128);
    key_arr4(s, "attention.sliding_window_pattern", swa);
    key_f32(s, "rope.freq_base_swa", 10000.0f);
    key_u32(s, "expert_feed_forward_length", (uint32_t)step35_fx);
    if (moe) {
        key_u32(s, "expert_count", NX);
        key_u32(s, "expert_used_count", 2);
        key_u32(s, "expert_shared_feed_forward_length", (uint32_t)step35_fs);
        key_bool(s, "expert_weights_norm", true);
        key_f32(s, "expert_weights_scale", 2.0f);
    }
    if (mtp)
        key_u32(s, "nextn_predict_layers", 1);
    head(s, true, false);
    if (factors)
        tensor(s, "rope_freqs.weight", 0, HD / 2, 1, 1);
    for (int il = 0; il < 4; il++) {
        int64_t nh = heads[il];
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (norms) {
            tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
            tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        }
        tensor(s, "blk.%d.attn_q.weight", il, E, nh * HD, 1);
        tensor(s, "blk.%d.attn_k.weight", il, E, NKV * HD, 1);
        tensor(s, "blk.%d.attn_v.weight", il, E, NKV * HD, 1);
        tensor(s, "blk.%d.attn_output.weight", il, nh * HD, E, 1);
        if (gate)
            tensor(s, "blk.%d.attn_gate.weight", il, E, nh, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (!moe || il == 0) {
            ffn_swiglu(s, il);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, step35_fx, NX);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, step35_fx, E, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, step35_fx, NX);
            tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, step35_fs, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, step35_fs, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, step35_fs, E, 1);
        }
        if (mtp && il == 3) {
            tensor(s, "blk.%d.nextn.eh_proj.weight", il, 2 * E, E, 1);
            tensor(s, "blk.%d.nextn.enorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.nextn.hnorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.nextn.shared_head_norm.weight", il, E, 1, 1);
        }
    }
}

static void test_step35(void **state)
{
    (void)state;
    model_spec s;
    static const uint32_t heads[4] = { NH, NH, NH, NH }, heads2[4] = { NH, 2, NH, 2 };
    static const uint32_t swa[4] = { 0, 1, 1, 0 }, swa2[4] = { 1, 0, 1, 0 };
    /* MoE with the gate and Q/K norms, three blocks and an MTP one (its
     * optional tensors are loaded). */
    step35_spec(&s, heads, swa, true, true, true, true, false);
    project_all(&s, 0);
    /* Dense, per-layer head counts, rope factors, no MTP block. */
    step35_spec(&s, heads2, swa2, false, false, true, false, true);
    project_all(&s, 0);
    /* MoE, no gate, an MTP block, rope factors (the MTP block has its own
     * copy). */
    step35_spec(&s, heads, swa2, true, true, false, true, true);
    project_all(&s, 0);
}

/* ---- kimi-linear --------------------------------------------------------- */

enum { KDA = HD, D_CONV = 4, KV_RANK = 128, ROPE = 32, HK_MLA = 96, HV_MLA = 64 };

/* Four blocks: kinds[il] 'k' (KDA) or 'm' (MLA); n_dense leading dense
 * blocks, the others experts plus a shared expert; gating 1 softmax or 2
 * sigmoid. */
static void kimi_spec(model_spec *s, const char kinds[4], uint32_t n_dense, uint32_t gating)
{
    spec_init(s, "kimi-linear");
    s->kvs[0].u = 4;   /* block_count */
    uint32_t kvh[4];
    for (int il = 0; il < 4; il++)
        kvh[il] = kinds[il] == 'm' ? 1 : 0;
    per_layer(s, 6, kvh);   /* attention.head_count_kv */
    s->kvs[7].u = ROPE;     /* rope.dimension_count */
    key_u32(s, "attention.key_length", KV_RANK + ROPE);
    key_u32(s, "attention.value_length", KV_RANK);
    key_u32(s, "attention.key_length_mla", HK_MLA);
    key_u32(s, "attention.value_length_mla", HV_MLA);
    key_u32(s, "attention.kv_lora_rank", KV_RANK);
    key_u32(s, "ssm.conv_kernel", D_CONV);
    key_u32(s, "kda.head_dim", KDA);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    key_u32(s, "leading_dense_block_count", n_dense);
    key_f32(s, "expert_weights_scale", 2.446f);
    key_u32(s, "expert_gating_func", gating);
    head(s, true, false);
    for (int il = 0; il < 4; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (kinds[il] == 'k') {
            tensor(s, "blk.%d.ssm_conv1d_q.weight", il, D_CONV, 1, KDA * NH);
            tensor(s, "blk.%d.ssm_conv1d_k.weight", il, D_CONV, 1, KDA * NH);
            tensor(s, "blk.%d.ssm_conv1d_v.weight", il, D_CONV, 1, KDA * NH);
            tensor(s, "blk.%d.attn_q.weight", il, E, KDA * NH, 1);
            tensor(s, "blk.%d.attn_k.weight", il, E, KDA * NH, 1);
            tensor(s, "blk.%d.attn_v.weight", il, E, KDA * NH, 1);
            tensor(s, "blk.%d.ssm_f_a.weight", il, E, KDA, 1);
            tensor(s, "blk.%d.ssm_f_b.weight", il, KDA, KDA * NH, 1);
            tensor(s, "blk.%d.ssm_beta.weight", il, E, NH, 1);
            tensor(s, "blk.%d.ssm_a", il, 1, NH, 1);
            s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
            tensor(s, "blk.%d.ssm_dt.bias", il, KDA * NH, 1, 1);
            tensor(s, "blk.%d.ssm_g_a.weight", il, E, KDA, 1);
            tensor(s, "blk.%d.ssm_g_b.weight", il, KDA, KDA * NH, 1);
            tensor(s, "blk.%d.ssm_norm.weight", il, KDA, 1, 1);
            tensor(s, "blk.%d.attn_output.weight", il, KDA * NH, E, 1);
        } else {
            tensor(s, "blk.%d.attn_kv_a_norm.weight", il, KV_RANK, 1, 1);
            tensor(s, "blk.%d.attn_q.weight", il, E, NH * HK_MLA, 1);
            tensor(s, "blk.%d.attn_kv_a_mqa.weight", il, E, KV_RANK + ROPE, 1);
            tensor(s, "blk.%d.attn_k_b.weight", il, HK_MLA - ROPE, KV_RANK, NH);
            tensor(s, "blk.%d.attn_v_b.weight", il, KV_RANK, HV_MLA, NH);
            tensor(s, "blk.%d.attn_output.weight", il, NH * HV_MLA, E, 1);
        }
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if ((uint32_t)il < n_dense) {
            ffn_swiglu(s, il);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FX, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", il, FX, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FX, 1);
            tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
        }
    }
}

static void test_kimi_linear(void **state)
{
    (void)state;
    model_spec s;
    /* Three KDA blocks then MLA, a dense lead, sigmoid routing. */
    kimi_spec(&s, "kkkm", 1, 2);
    project_all(&s, 0);
    /* Alternating, all experts, softmax routing. */
    kimi_spec(&s, "mkmk", 0, 1);
    project_all(&s, 0);
}

/* ---- minimax-m3 ---------------------------------------------------------- */

enum { IDX_HD = 32 };

/* Four blocks, the first n_dense dense, the others experts plus a shared
 * expert with the MSA indexer. */
static void minimax_m3_spec(model_spec *s, uint32_t n_dense)
{
    spec_init(s, "minimax-m3");
    s->kvs[0].u = 4;   /* block_count */
    s->kvs[7].u = HD / 2;   /* rope.dimension_count: partial */
    key_u32(s, "leading_dense_block_count", n_dense);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    key_u32(s, "expert_gating_func", 2);
    key_bool(s, "expert_weights_norm", true);
    key_f32(s, "expert_weights_scale", 2.0f);
    key_u32(s, "attention.indexer.head_count", NKV);
    key_u32(s, "attention.indexer.key_length", IDX_HD);
    key_u32(s, "attention.indexer.top_k", 2);
    key_u32(s, "attention.indexer.block_size", 64);
    key_u32(s, "attention.indexer.local_blocks", 1);
    head(s, true, false);
    for (int il = 0; il < 4; il++) {
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if ((uint32_t)il < n_dense) {
            ffn_swiglu(s, il);
            continue;
        }
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
        tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FX, 1);
        tensor(s, "blk.%d.ffn_down_shexp.weight", il, FX, E, 1);
        tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FX, 1);
        tensor(s, "blk.%d.indexer.q_proj.weight", il, E, NKV * IDX_HD, 1);
        tensor(s, "blk.%d.indexer.k_proj.weight", il, E, IDX_HD, 1);
        tensor(s, "blk.%d.indexer.q_norm.weight", il, IDX_HD, 1, 1);
        tensor(s, "blk.%d.indexer.k_norm.weight", il, IDX_HD, 1, 1);
    }
}

static void test_minimax_m3(void **state)
{
    (void)state;
    model_spec s;
    /* A dense lead block, then MSA blocks. */
    minimax_m3_spec(&s, 1);
    project_all(&s, 0);
    /* No dense lead: every block sparse. */
    minimax_m3_spec(&s, 0);
    project_all(&s, 0);
}

/* The clamped SwiGLUs of step35 (swiglu_clamp_exp / _shexp per layer): the
 * experts of blocks 2-3, the shared and dense FFNs of blocks 0, 2, 3. Run
 * last, so that the other files keep their numbers. */
static void test_step35_clamp(void **state)
{
    (void)state;
    model_spec s;
    static const uint32_t heads[4] = { NH, NH, NH, NH }, swa[4] = { 0, 1, 1, 0 };
    static const float clamp_exp[4] = { 0, 0, 7, 7 }, clamp_shexp[4] = { 7, 0, 7, 7 };
    step35_fx = step35_fs = 8 * E;
    step35_spec(&s, heads, swa, true, true, true, true, false);
    key_f32_arr4(&s, "swiglu_clamp_exp", clamp_exp);
    key_f32_arr4(&s, "swiglu_clamp_shexp", clamp_shexp);
    project_all(&s, 0);
    step35_fx = FX;
    step35_fs = FS;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step35),
        cmocka_unit_test(test_kimi_linear),
        cmocka_unit_test(test_minimax_m3),
        cmocka_unit_test(test_step35_clamp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
