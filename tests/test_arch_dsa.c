/*
 * test_arch_dsa.c - the graph builders of deepseek32 (DeepSeek V3.2) and
 * glm-dsa (GLM-5): MLA with DSA sparse attention, whose lightning indexer
 * keeps its keys in a second K-only cache. Small header-only models with
 * the tensors llama.cpp's load_tensors creates for each (names and shapes),
 * projected on one RPC device and on the CPU alone, with flash attention on
 * and off; the compute buffers must come from the graph. The same headers
 * (GGFIT_ARCHS_DUMP) are data/tiny/<arch>-<n>.gguf, which
 * tools/llamacmp.py checked against llama.cpp (data/oracle/).
 */
#include "arch_spec.h"

enum { FX = 128, KV_LORA = 128, Q_LORA = 128, N_ROPE = 32, HK_MLA = 96, HV_MLA = 64,
       /* llama.cpp places the unroped part of an indexer head at the rope
        * length: the two halves must be equal (as in the shipped models) */
       N_IH = 4, IH = 2 * N_ROPE, TOP_K = 256 };

/* n_block blocks, the last n_nextn of them NextN; n_dense leading dense
 * blocks. types: GLM-5's indexer types of the trunk's layers (NULL: no
 * key); a shared layer (0) then has no indexer tensors. */
static void dsa_spec(model_spec *s, const char *arch, uint32_t n_block, uint32_t n_nextn,
                     uint32_t n_dense, uint32_t gating, const uint32_t *types, bool output)
{
    spec_init(s, arch);
    s->kvs[0].u = n_block;  /* block_count */
    s->kvs[6].u = 1;        /* head_count_kv: one latent head */
    s->kvs[7].u = N_ROPE;   /* rope.dimension_count */
    key_u32(s, "attention.key_length", KV_LORA + N_ROPE);
    key_u32(s, "attention.value_length", KV_LORA);
    key_u32(s, "attention.key_length_mla", HK_MLA);
    key_u32(s, "attention.value_length_mla", HV_MLA);
    key_u32(s, "attention.q_lora_rank", Q_LORA);
    key_u32(s, "attention.kv_lora_rank", KV_LORA);
    key_u32(s, "attention.indexer.head_count", N_IH);
    key_u32(s, "attention.indexer.key_length", IH);
    key_u32(s, "attention.indexer.top_k", TOP_K);
    if (types) {
        uint32_t a[4] = { 0 };
        memcpy(a, types, (n_block - n_nextn) * sizeof *a);
        key_arr4(s, "attention.indexer.types", a);
        s->kvs[s->n_kv - 1].u = n_block - n_nextn;
    }
    key_u32(s, "leading_dense_block_count", n_dense);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    if (gating)
        key_u32(s, "expert_gating_func", gating);
    key_bool(s, "expert_weights_norm", true);
    key_f32(s, "expert_weights_scale", 2.5f);
    if (n_nextn)
        key_u32(s, "nextn_predict_layers", n_nextn);
    head(s, output, false);
    for (uint32_t il = 0; il < n_block; il++) {
        int i = (int)il;
        bool nextn = il >= n_block - n_nextn;
        tensor(s, "blk.%d.attn_norm.weight", i, E, 1, 1);
        tensor(s, "blk.%d.attn_q_a_norm.weight", i, Q_LORA, 1, 1);
        tensor(s, "blk.%d.attn_kv_a_norm.weight", i, KV_LORA, 1, 1);
        tensor(s, "blk.%d.attn_q_a.weight", i, E, Q_LORA, 1);
        tensor(s, "blk.%d.attn_q_b.weight", i, Q_LORA, NH * HK_MLA, 1);
        tensor(s, "blk.%d.attn_kv_a_mqa.weight", i, E, KV_LORA + N_ROPE, 1);
        tensor(s, "blk.%d.attn_k_b.weight", i, HK_MLA - N_ROPE, KV_LORA, NH);
        tensor(s, "blk.%d.attn_v_b.weight", i, KV_LORA, HV_MLA, NH);
        tensor(s, "blk.%d.attn_output.weight", i, NH * HV_MLA, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", i, E, 1, 1);
        if (!types || nextn || types[il]) {
            tensor(s, "blk.%d.indexer.k_norm.weight", i, IH, 1, 1);
            tensor(s, "blk.%d.indexer.k_norm.bias", i, IH, 1, 1);
            tensor(s, "blk.%d.indexer.proj.weight", i, E, N_IH, 1);
            tensor(s, "blk.%d.indexer.attn_k.weight", i, E, IH, 1);
            tensor(s, "blk.%d.indexer.attn_q_b.weight", i, Q_LORA, N_IH * IH, 1);
        }
        if (il < n_dense) {
            ffn_swiglu(s, i);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", i, E, NX, 1);
            tensor(s, "blk.%d.exp_probs_b.bias", i, NX, 1, 1);
            tensor(s, "blk.%d.ffn_down_exps.weight", i, FX, E, NX);
            tensor(s, "blk.%d.ffn_gate_exps.weight", i, E, FX, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", i, E, FX, NX);
            tensor(s, "blk.%d.ffn_gate_shexp.weight", i, E, FX, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", i, FX, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", i, E, FX, 1);
        }
        if (nextn) {
            tensor(s, "blk.%d.nextn.eh_proj.weight", i, 2 * E, E, 1);
            tensor(s, "blk.%d.nextn.enorm.weight", i, E, 1, 1);
            tensor(s, "blk.%d.nextn.hnorm.weight", i, E, 1, 1);
            tensor(s, "blk.%d.nextn.shared_head_norm.weight", i, E, 1, 1);
        }
    }
}

static void test_deepseek32(void **state)
{
    (void)state;
    model_spec s;
    dsa_spec(&s, "deepseek32", NL, 0, 1, 2, NULL, true);
    project_all(&s, 0);
    /* A NextN block (no cells in the main context), tied output, softmax. */
    dsa_spec(&s, "deepseek32", NL + 1, 1, 0, 1, NULL, false);
    project_all(&s, 0);
}

static void test_glm_dsa(void **state)
{
    (void)state;
    model_spec s;
    /* Full and shared indexer layers; sigmoid routing by default. */
    static const uint32_t types[4] = { 1, 0, 1, 0 };
    dsa_spec(&s, "glm-dsa", 4, 0, 1, 0, types, true);
    project_all(&s, 0);
    /* No types (all full before GLM-5.2) and a NextN block. */
    dsa_spec(&s, "glm-dsa", NL + 1, 1, 1, 0, NULL, true);
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deepseek32),
        cmocka_unit_test(test_glm_dsa),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
