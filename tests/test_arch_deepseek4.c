/*
 * test_arch_deepseek4.c - deepseek4 (DeepSeek V4): a raw sliding-window K
 * cache plus compressed K-only caches per layer (llama_kv_cache_dsv4):
 * CSA layers (compression ratio 4, with a lightning indexer and its own
 * compressed key cache), HCA layers (ratio 128) and uncompressed ones,
 * hyper-connections (4 residual streams), hash-routed leading MoE layers.
 * Small header-only models with the tensors llama.cpp's load_tensors
 * creates (names and shapes). The same headers (GGFIT_ARCHS_DUMP) are
 * data/tiny/deepseek4-<n>.gguf, which tools/llamacmp.py checked against
 * llama.cpp (data/oracle/).
 */
#include "arch_spec.h"

enum { HK = 128, Q_LORA = 128, O_GROUPS = 2, O_LORA = 64, HC = 4, FX = 128,
       N_IH = 4, TOP_K = 64, N_SWA = 128 };

/* n_block blocks, the last n_nextn of them NextN, with compression ratios
 * ratios[il]; the first n_hash layers route by token id (tid2eid); indexer
 * heads of ih, n_rot roped values a head. llama.cpp always rotates (a
 * Hadamard matrix) the keys of a cache whose head is the indexer's, the
 * others only when quantized. */
static void dsv4_spec(model_spec *s, uint32_t n_block, uint32_t n_nextn, const uint32_t ratios[4],
                      uint32_t n_hash, int64_t ih, uint32_t n_rot)
{
    spec_init(s, "deepseek4");
    s->kvs[0].u = n_block;  /* block_count */
    s->kvs[6].u = 1;        /* head_count_kv: one K head */
    s->kvs[7].u = n_rot;    /* rope.dimension_count */
    /* feed_forward_length (unused: every layer is MoE) gives its slot to
     * value_length, which the graph wants equal to key_length */
    snprintf(s->kvs[4].key, sizeof s->kvs[4].key, "deepseek4.attention.value_length");
    s->kvs[4].u = HK;
    key_u32(s, "attention.key_length", HK);
    key_u32(s, "attention.q_lora_rank", Q_LORA);
    key_u32(s, "attention.sliding_window", N_SWA);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    key_f32(s, "expert_weights_scale", 1.5f);
    key_bool(s, "expert_weights_norm", true);
    key_u32(s, "expert_gating_func", 4);   /* sqrt-softplus */
    key_f32(s, "swiglu_clamp_exp", 10.0f);
    key_u32(s, "attention.indexer.head_count", N_IH);
    key_u32(s, "attention.indexer.key_length", ih);
    key_u32(s, "attention.indexer.top_k", TOP_K);
    key_u32(s, "attention.output_group_count", O_GROUPS);
    key_u32(s, "attention.output_lora_rank", O_LORA);
    key_f32(s, "attention.compress_rope_freq_base", 160000.0f);
    key_u32(s, "hyper_connection.count", HC);
    key_u32(s, "hyper_connection.sinkhorn_iterations", 20);
    key_f32(s, "hyper_connection.epsilon", 1e-6f);
    key_u32(s, "hash_layer_count", n_hash);
    key_arr4(s, "attention.compress_ratios", ratios);
    if (n_nextn)
        key_u32(s, "nextn_predict_layers", n_nextn);
    head(s, true, false);
    tensor(s, "output_hc_fn.weight", 0, HC * E, HC, 1);
    tensor(s, "output_hc_base.weight", 0, HC, 1, 1);
    tensor(s, "output_hc_scale.weight", 0, 1, 1, 1);
    const int64_t mix = (2 + HC) * HC;
    for (uint32_t il = 0; il < n_block; il++) {
        int i = (int)il;
        tensor(s, "blk.%d.attn_norm.weight", i, E, 1, 1);
        tensor(s, "blk.%d.attn_sinks.weight", i, NH, 1, 1);
        tensor(s, "blk.%d.attn_q_a.weight", i, E, Q_LORA, 1);
        tensor(s, "blk.%d.attn_q_a_norm.weight", i, Q_LORA, 1, 1);
        tensor(s, "blk.%d.attn_q_b.weight", i, Q_LORA, NH * HK, 1);
        tensor(s, "blk.%d.attn_kv.weight", i, E, HK, 1);
        tensor(s, "blk.%d.attn_kv_a_norm.weight", i, HK, 1, 1);
        /* the file's shape; load_tensors reshapes it to 3-D */
        tensor(s, "blk.%d.attn_output_a.weight", i, NH * HK / O_GROUPS, O_LORA * O_GROUPS, 1);
        tensor(s, "blk.%d.attn_output_b.weight", i, O_GROUPS * O_LORA, E, 1);
        tensor(s, "blk.%d.hc_attn_fn.weight", i, HC * E, mix, 1);
        tensor(s, "blk.%d.hc_attn_base.weight", i, mix, 1, 1);
        tensor(s, "blk.%d.hc_attn_scale.weight", i, 3, 1, 1);
        tensor(s, "blk.%d.hc_ffn_fn.weight", i, HC * E, mix, 1);
        tensor(s, "blk.%d.hc_ffn_base.weight", i, mix, 1, 1);
        tensor(s, "blk.%d.hc_ffn_scale.weight", i, 3, 1, 1);
        uint32_t ratio = ratios[il];
        if (ratio) {
            int64_t coff = ratio == 4 ? 2 : 1;
            tensor(s, "blk.%d.attn_compressor_kv.weight", i, E, coff * HK, 1);
            tensor(s, "blk.%d.attn_compressor_gate.weight", i, E, coff * HK, 1);
            tensor(s, "blk.%d.attn_compressor_ape.weight", i, coff * HK, ratio, 1);
            tensor(s, "blk.%d.attn_compressor_norm.weight", i, HK, 1, 1);
        }
        if (ratio == 4) {
            tensor(s, "blk.%d.indexer.proj.weight", i, E, N_IH, 1);
            tensor(s, "blk.%d.indexer.attn_q_b.weight", i, Q_LORA, N_IH * ih, 1);
            tensor(s, "blk.%d.indexer_compressor_kv.weight", i, E, 2 * ih, 1);
            tensor(s, "blk.%d.indexer_compressor_gate.weight", i, E, 2 * ih, 1);
            tensor(s, "blk.%d.indexer_compressor_ape.weight", i, 2 * ih, ratio, 1);
            tensor(s, "blk.%d.indexer_compressor_norm.weight", i, ih, 1, 1);
        }
        tensor(s, "blk.%d.ffn_gate_inp.weight", i, E, NX, 1);
        if (il < n_hash) {
            tensor(s, "blk.%d.ffn_gate_tid2eid.weight", i, 2, V, 1);
            s->t[s->n_t - 1].type = GGFIT_TYPE_I32;
        } else {
            tensor(s, "blk.%d.exp_probs_b.bias", i, NX, 1, 1);
        }
        tensor(s, "blk.%d.ffn_norm.weight", i, E, 1, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", i, E, FX, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", i, FX, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", i, E, FX, NX);
        tensor(s, "blk.%d.ffn_gate_shexp.weight", i, E, FX, 1);
        tensor(s, "blk.%d.ffn_down_shexp.weight", i, FX, E, 1);
        tensor(s, "blk.%d.ffn_up_shexp.weight", i, E, FX, 1);
        if (il >= n_block - n_nextn) {
            tensor(s, "blk.%d.nextn.eh_proj.weight", i, 2 * E, E, 1);
            tensor(s, "blk.%d.nextn.enorm.weight", i, E, 1, 1);
            tensor(s, "blk.%d.nextn.hnorm.weight", i, E, 1, 1);
            tensor(s, "blk.%d.nextn.shared_head_norm.weight", i, E, 1, 1);
        }
    }
}

/* Key suffix of s as an f32 array of one value per block (kind 'g'), as
 * real files write swiglu_clamp_exp (arr[f32,43]): in place when the key
 * is there, else added. */
static void key_f32_arr4(model_spec *s, const char *suffix, const float v[4])
{
    char key[96];
    snprintf(key, sizeof key, "%s.%s", s->arch, suffix);
    kv *k = NULL;
    for (size_t i = 0; i < s->n_kv && !k; i++)
        if (!strcmp(s->kvs[i].key, key))
            k = &s->kvs[i];
    if (!k) {
        k = &s->kvs[s->n_kv++];
        snprintf(k->key, sizeof k->key, "%s", key);
    }
    k->kind = 'g';
    k->u = 4;
    memcpy(k->a, v, sizeof k->a);
}

static void test_deepseek4(void **state)
{
    (void)state;
    model_spec s;
    /* An uncompressed layer, two CSA layers and an HCA one; one hash layer. */
    static const uint32_t r0[4] = { 0, 4, 128, 4 };
    dsv4_spec(&s, 4, 0, r0, 1, 64, 32);
    project_all(&s, 0);
    /* A NextN block (raw and compressed cells in the main context too, no
     * compressor state), two hash layers. */
    static const uint32_t r1[4] = { 128, 4, 0, 4 };
    dsv4_spec(&s, 4, 1, r1, 2, HK, 64);
    project_all(&s, 0);
    /* The clamps per layer (get_key_or_arr: an array of block_count values),
     * 0 where a layer does not clamp; the shared experts' their own. */
    static const uint32_t r2[4] = { 0, 4, 128, 128 };
    static const float clamp_exp[4] = { 10.0f, 0.0f, 7.5f, 10.0f };
    static const float clamp_shexp[4] = { 0.0f, 10.0f, 10.0f, 2.0f };
    dsv4_spec(&s, 4, 0, r2, 1, 64, 32);
    key_f32_arr4(&s, "swiglu_clamp_exp", clamp_exp);
    key_f32_arr4(&s, "swiglu_clamp_shexp", clamp_shexp);
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deepseek4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
