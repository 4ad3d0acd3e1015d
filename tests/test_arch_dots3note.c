/*
 * test_arch_dots3note.c - dots3note (dots3-note, llama.cpp b10569): MLA on
 * every layer, DSA sparse attention (the lightning indexer) on the full
 * layers and a sliding window on the others, whose MLA has its own sizes,
 * a head-wise sigmoid output gate, sigmoid-routed experts. Its memory is
 * llama_kv_cache_dsa_iswa: a DSA cache (the latent keys and the indexer's
 * keys) of the full layers, a window-sized latent cache of the others.
 * Small header-only models written as the converter
 * (conversion/dots3.py, Dots3NoteModel over DeepseekV2Model) writes them:
 * per-layer head counts, the sliding-window and indexer-type arrays as
 * bools, the tensors load_tensors creates (the NextN block's skipped).
 * The same headers (GGFIT_ARCHS_DUMP) are data/tiny/dots3note-<n>.gguf,
 * which tools/llamacmp.py checked against llama.cpp b10587
 * (data/oracle/b10587/); b10309 refuses them.
 */
#include "arch_spec.h"

enum { FX = 128, Q_LORA = 128, N_ROPE = 32,
       /* full layers: 4 heads, latent 128, heads of 96 (64 + the rope) */
       KV_LORA = 128, HK_MLA = 96, HV_MLA = 64, NH_FULL = 4,
       /* sliding-window layers: 2 heads, latent 64, heads of 64 */
       KV_LORA_SWA = 64, HK_MLA_SWA = 64, HV_MLA_SWA = 32, NH_SWA = 2,
       /* the indexer: a power-of-two head (the Hadamard rotation is as wide) */
       N_IH = 4, IH = 64, TOP_K = 256, WINDOW = 128 };

/* n_trunk layers (swa[il]: a sliding-window one), then n_nextn NextN
 * blocks (the converter's sliding-window geometry, dense FFN); layer 0 is
 * the one dense leading layer. */
static void dots3_spec(model_spec *s, uint32_t n_trunk, const bool *swa, uint32_t n_nextn,
                       bool output)
{
    static int32_t heads[8];
    static bool swa_arr[8], full_arr[8];
    uint32_t n_block = n_trunk + n_nextn;
    spec_init(s, "dots3note");
    s->kvs[0].u = n_block;  /* block_count */
    for (uint32_t il = 0; il < n_block; il++)
        heads[il] = il >= n_trunk || swa[il] ? NH_SWA : NH_FULL;
    for (uint32_t il = 0; il < n_trunk; il++) {
        swa_arr[il] = swa[il];
        full_arr[il] = !swa[il];
    }
    key_arr(s, "attention.head_count", GGFIT_GGUF_INT32, heads, n_block);
    s->kvs[6].u = 1;        /* head_count_kv: one latent head */
    key_f32(s, "rope.freq_base", 10000.0f);
    key_f32(s, "rope.freq_base_swa", 10000.0f);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_gating_func", 2);   /* sigmoid */
    key_u32(s, "leading_dense_block_count", 1);
    key_u32(s, "attention.q_lora_rank", Q_LORA);
    key_u32(s, "attention.kv_lora_rank", KV_LORA);
    key_u32(s, "attention.key_length", KV_LORA + N_ROPE);
    key_u32(s, "attention.value_length", KV_LORA);
    key_u32(s, "attention.key_length_mla", HK_MLA);
    key_u32(s, "attention.value_length_mla", HV_MLA);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    key_f32(s, "expert_weights_scale", 2.5f);
    key_bool(s, "expert_weights_norm", true);
    s->kvs[7].u = N_ROPE;   /* rope.dimension_count */
    key_u32(s, "attention.sliding_window", WINDOW);
    key_arr(s, "attention.sliding_window_pattern", GGFIT_GGUF_BOOL, swa_arr, n_trunk);
    key_u32(s, "attention.kv_lora_rank_swa", KV_LORA_SWA);
    key_u32(s, "attention.key_length_swa", KV_LORA_SWA + N_ROPE);
    key_u32(s, "attention.value_length_swa", KV_LORA_SWA);
    key_u32(s, "attention.key_length_mla_swa", HK_MLA_SWA);
    key_u32(s, "attention.value_length_mla_swa", HV_MLA_SWA);
    if (n_nextn)
        key_u32(s, "nextn_predict_layers", n_nextn);
    key_u32(s, "attention.indexer.head_count", N_IH);
    key_u32(s, "attention.indexer.key_length", IH);
    key_u32(s, "attention.indexer.top_k", TOP_K);
    key_arr(s, "attention.indexer.types", GGFIT_GGUF_BOOL, full_arr, n_trunk);
    head(s, output, false);
    for (uint32_t il = 0; il < n_block; il++) {
        int i = (int)il;
        bool nextn = il >= n_trunk, w = nextn || swa[il];
        int64_t nh = heads[il], lora = w ? KV_LORA_SWA : KV_LORA;
        int64_t hk = w ? HK_MLA_SWA : HK_MLA, hv = w ? HV_MLA_SWA : HV_MLA;
        tensor(s, "blk.%d.attn_norm.weight", i, E, 1, 1);
        tensor(s, "blk.%d.attn_q_a_norm.weight", i, Q_LORA, 1, 1);
        tensor(s, "blk.%d.attn_kv_a_norm.weight", i, lora, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", i, N_ROPE, 1, 1);
        tensor(s, "blk.%d.attn_q_a.weight", i, E, Q_LORA, 1);
        tensor(s, "blk.%d.attn_q_b.weight", i, Q_LORA, nh * hk, 1);
        tensor(s, "blk.%d.attn_kv_a_mqa.weight", i, E, lora + N_ROPE, 1);
        tensor(s, "blk.%d.attn_k_b.weight", i, hk - N_ROPE, lora, nh);
        tensor(s, "blk.%d.attn_v_b.weight", i, lora, hv, nh);
        tensor(s, "blk.%d.attn_output.weight", i, nh * hv, E, 1);
        tensor(s, "blk.%d.attn_gate.weight", i, E, nh, 1);
        tensor(s, "blk.%d.ffn_norm.weight", i, E, 1, 1);
        if (!w) {
            tensor(s, "blk.%d.indexer.k_norm.weight", i, IH, 1, 1);
            tensor(s, "blk.%d.indexer.k_norm.bias", i, IH, 1, 1);
            tensor(s, "blk.%d.indexer.proj.weight", i, E, N_IH, 1);
            tensor(s, "blk.%d.indexer.attn_k.weight", i, E, IH, 1);
            tensor(s, "blk.%d.indexer.attn_q_b.weight", i, Q_LORA, N_IH * IH, 1);
        }
        if (nextn || il < 1) {
            ffn_swiglu(s, i);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", i, E, NX, 1);
            tensor(s, "blk.%d.exp_probs_b.bias", i, NX, 1, 1);
            tensor(s, "blk.%d.ffn_gate_exps.weight", i, E, FX, NX);
            tensor(s, "blk.%d.ffn_down_exps.weight", i, FX, E, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", i, E, FX, NX);
            tensor(s, "blk.%d.ffn_gate_shexp.weight", i, E, FX, 1);
            tensor(s, "blk.%d.ffn_down_shexp.weight", i, FX, E, 1);
            tensor(s, "blk.%d.ffn_up_shexp.weight", i, E, FX, 1);
        }
        if (nextn) {
            tensor(s, "blk.%d.nextn.eh_proj.weight", i, 2 * E, E, 1);
            tensor(s, "blk.%d.nextn.enorm.weight", i, E, 1, 1);
            tensor(s, "blk.%d.nextn.hnorm.weight", i, E, 1, 1);
            tensor(s, "blk.%d.nextn.embed_tokens.weight", i, E, V, 1);
            tensor(s, "blk.%d.nextn.shared_head_norm.weight", i, E, 1, 1);
        }
    }
}

static void test_dots3note(void **state)
{
    (void)state;
    model_spec s;
    /* Full, window, window, full; its own output matrix. */
    static const bool swa4[4] = { false, true, true, false };
    dots3_spec(&s, 4, swa4, 0, true);
    project_all(&s, 0);
    /* Window first, the last trunk layer full, a NextN block (no cells, its
     * tensors skipped), tied output. */
    static const bool swa3[3] = { true, false, true };
    dots3_spec(&s, 3, swa3, 1, false);
    project_all(&s, 0);
    /* A window of 0: still the two caches, the SWA one n_ubatch cells. */
    dots3_spec(&s, 4, swa4, 0, true);
    key_u32(&s, "attention.sliding_window", 0);
    project_all(&s, 0);
}

/* llama.cpp b10309 predates the architecture: the projection for it
 * refuses the file, naming the build that added it. */
static void test_dots3note_old_llama(void **state)
{
    (void)state;
    model_spec s;
    static const bool swa4[4] = { false, true, true, false };
    dots3_spec(&s, 4, swa4, 0, true);
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
    assert_int_equal(ggfit_project(m, &p, NULL, 0, &pr, NULL, &err), GGFIT_EUNSUPPORTED);
    assert_non_null(strstr(err, "b10309 cannot load this architecture"));
    assert_non_null(strstr(err, "added in b10569"));
    ggfit_free(err);
    /* The newest loads it. */
    p.llama_build = 0;
    err = NULL;
    assert_int_equal(ggfit_project(m, &p, NULL, 0, &pr, NULL, &err), GGFIT_OK);
    ggfit_model_free(m);
    gw_free(&w);
}

/* What llama.cpp refuses: the arrays it reads with get_arr must be arrays,
 * and the sliding-window sizes are required. */
static void test_dots3note_refused(void **state)
{
    (void)state;
    model_spec s;
    static const bool swa4[4] = { false, true, true, false };
    dots3_spec(&s, 4, swa4, 0, true);
    key_drop(&s, "attention.indexer.types");
    refused_with(&s, "attention.indexer.types");
    dots3_spec(&s, 4, swa4, 0, true);
    key_drop(&s, "attention.kv_lora_rank_swa");
    refused_with(&s, "kv_lora_rank_swa");
    dots3_spec(&s, 4, swa4, 0, true);
    key_drop(&s, "rope.freq_base_swa");
    refused_with(&s, "rope.freq_base_swa");
}

/* An indexer head llama.cpp's Hadamard product cannot take (not a power
 * of two, or 0: llama.cpp asserts) has no graph: the compute is estimated,
 * never a hang or a wrong graph. The key types are llama.cpp's. */
static void test_dots3note_bad_indexer(void **state)
{
    (void)state;
    model_spec s;
    static const bool swa4[4] = { false, true, true, false };
    static const uint32_t heads[] = { 96, 0, 32 };
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        dots3_spec(&s, 4, swa4, 0, true);
        key_u32(&s, "attention.indexer.key_length", heads[i]);
        ggfit_projection pr;
        project_one(&s, 4096, &pr);
        assert_true(pr.compute_estimated);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dots3note),
        cmocka_unit_test(test_dots3note_old_llama),
        cmocka_unit_test(test_dots3note_refused),
        cmocka_unit_test(test_dots3note_bad_indexer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
