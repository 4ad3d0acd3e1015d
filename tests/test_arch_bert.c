/*
 * test_arch_bert.c - the encoders without a memory module (bert,
 * nomic-bert, nomic-bert-moe, jina-bert-v2, jina-bert-v3, modern-bert,
 * eurobert, neo-bert, gemma-embedding): small headers with the tensors
 * llama.cpp's load_tensors creates, projected on one RPC device and on the
 * CPU alone, with flash attention on and off; the compute buffers must come
 * from the graph. test_no_context checks that no KV cache is reserved.
 */
#include "arch_spec.h"

/* A key outside "<arch>.", as the tokenizer's token type count. */
static void key_raw_u32(model_spec *s, const char *key, uint32_t v)
{
    kv *k = &s->kvs[s->n_kv++];
    snprintf(k->key, sizeof k->key, "%s", key);
    k->kind = 'u';
    k->u = v;
}

/* The keys every BERT-like header has: full heads, LayerNorm's epsilon,
 * bidirectional attention, a pooling type, two token types. */
static void encoder_init(model_spec *s, const char *arch, uint32_t pooling)
{
    spec_init(s, arch);
    s->kvs[6].u = NH;   /* attention.head_count_kv */
    key_f32(s, "attention.layer_norm_epsilon", 1e-12f);
    key_bool(s, "attention.causal", false);
    key_u32(s, "pooling_type", pooling);
    key_raw_u32(s, "tokenizer.ggml.token_type_count", 2);
}

static void norm_wb(model_spec *s, const char *fmt_w, const char *fmt_b, int il)
{
    tensor(s, fmt_w, il, E, 1, 1);
    tensor(s, fmt_b, il, E, 1, 1);
}

static void embeddings(model_spec *s, bool types, bool pos, int64_t n_pos)
{
    tensor(s, "token_embd.weight", 0, E, V, 1);
    if (types)
        tensor(s, "token_types.weight", 0, E, 2, 1);
    if (pos)
        tensor(s, "position_embd.weight", 0, E, n_pos, 1);
    norm_wb(s, "token_embd_norm.weight", "token_embd_norm.bias", 0);
}

/* BERT: separate Q/K/V with biases, GELU FFN with biases, learned
 * positions; the second has no token types, a classifier head (unused
 * without --embeddings, but loaded in the output layer) and a context of
 * 512. */
static void bert_spec(model_spec *s, bool cls)
{
    encoder_init(s, "bert", cls ? 2 : 1);
    if (cls)
        s->kvs[2].u = 512;   /* context_length */
    embeddings(s, !cls, true, cls ? 512 : 4096);
    if (cls) {
        tensor(s, "cls.weight", 0, E, E, 1);
        tensor(s, "cls.bias", 0, E, 1, 1);
    }
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_q.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_q.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_k.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_k.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_v.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_v.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
        norm_wb(s, "blk.%d.attn_output_norm.weight", "blk.%d.attn_output_norm.bias", il);
        tensor(s, "blk.%d.ffn_up.weight", il, E, F, 1);
        tensor(s, "blk.%d.ffn_up.bias", il, F, 1, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "blk.%d.ffn_down.bias", il, E, 1, 1);
        norm_wb(s, "blk.%d.layer_output_norm.weight", "blk.%d.layer_output_norm.bias", il);
    }
}

static void test_bert(void **state)
{
    (void)state;
    model_spec s;
    bert_spec(&s, false);
    project_all(&s, 0);
    bert_spec(&s, true);
    project_all(&s, 0);
}

/* nomic-bert: fused QKV without biases, RoPE, SwiGLU FFN. */
static void test_nomic_bert(void **state)
{
    (void)state;
    model_spec s;
    encoder_init(&s, "nomic-bert", 1);
    key_f32(&s, "rope.freq_base", 1000.0f);
    embeddings(&s, true, false, 0);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_qkv.weight", il, E, 3 * E, 1);
        tensor(&s, "blk.%d.attn_output.weight", il, E, E, 1);
        norm_wb(&s, "blk.%d.attn_output_norm.weight", "blk.%d.attn_output_norm.bias", il);
        tensor(&s, "blk.%d.ffn_up.weight", il, E, F, 1);
        tensor(&s, "blk.%d.ffn_gate.weight", il, E, F, 1);
        tensor(&s, "blk.%d.ffn_down.weight", il, F, E, 1);
        norm_wb(&s, "blk.%d.layer_output_norm.weight", "blk.%d.layer_output_norm.bias", il);
    }
    project_all(&s, 0);
}

/* nomic-bert-moe: fused QKV with a bias, RoPE, every second layer a GELU
 * MoE (moe_every_n_layers 2), the others a GELU FFN with biases. */
static void test_nomic_bert_moe(void **state)
{
    (void)state;
    model_spec s;
    encoder_init(&s, "nomic-bert-moe", 1);
    key_f32(&s, "rope.freq_base", 10000.0f);
    key_u32(&s, "moe_every_n_layers", 2);
    key_u32(&s, "expert_count", NX * 2);
    key_u32(&s, "expert_used_count", 2);
    embeddings(&s, true, false, 0);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_qkv.weight", il, E, 3 * E, 1);
        tensor(&s, "blk.%d.attn_qkv.bias", il, 3 * E, 1, 1);
        tensor(&s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(&s, "blk.%d.attn_output.bias", il, E, 1, 1);
        norm_wb(&s, "blk.%d.attn_output_norm.weight", "blk.%d.attn_output_norm.bias", il);
        if (il % 2 == 1) {
            tensor(&s, "blk.%d.ffn_gate_inp.weight", il, E, NX * 2, 1);
            tensor(&s, "blk.%d.ffn_up_exps.weight", il, E, F, NX * 2);
            tensor(&s, "blk.%d.ffn_down_exps.weight", il, F, E, NX * 2);
        } else {
            tensor(&s, "blk.%d.ffn_up.weight", il, E, F, 1);
            tensor(&s, "blk.%d.ffn_up.bias", il, F, 1, 1);
            tensor(&s, "blk.%d.ffn_down.weight", il, F, E, 1);
            tensor(&s, "blk.%d.ffn_down.bias", il, E, 1, 1);
        }
        norm_wb(&s, "blk.%d.layer_output_norm.weight", "blk.%d.layer_output_norm.bias", il);
    }
    project_all(&s, 0);
}

/* jina-bert-v2: ALiBi (no positions), separate Q/K/V with biases and
 * LayerNorms on Q and K, a second attention norm; the FFN a GEGLU over the
 * halves of a 2 n_ff up, or over a separate gate. */
static void jina_bert_v2_spec(model_spec *s, bool gate)
{
    encoder_init(s, "jina-bert-v2", 1);
    embeddings(s, true, false, 0);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_q.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_q.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_k.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_k.bias", il, E, 1, 1);
        tensor(s, "blk.%d.attn_v.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_v.bias", il, E, 1, 1);
        if (!gate) {
            norm_wb(s, "blk.%d.attn_q_norm.weight", "blk.%d.attn_q_norm.bias", il);
            norm_wb(s, "blk.%d.attn_k_norm.weight", "blk.%d.attn_k_norm.bias", il);
        }
        tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
        norm_wb(s, "blk.%d.attn_output_norm.weight", "blk.%d.attn_output_norm.bias", il);
        if (!gate)
            norm_wb(s, "blk.%d.attn_norm_2.weight", "blk.%d.attn_norm_2.bias", il);
        if (gate)
            tensor(s, "blk.%d.ffn_gate.weight", il, E, F, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, gate ? F : 2 * F, 1);
        if (gate)
            tensor(s, "blk.%d.ffn_up.bias", il, F, 1, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "blk.%d.ffn_down.bias", il, E, 1, 1);
        norm_wb(s, "blk.%d.layer_output_norm.weight", "blk.%d.layer_output_norm.bias", il);
    }
}

static void test_jina_bert_v2(void **state)
{
    (void)state;
    model_spec s;
    jina_bert_v2_spec(&s, false);
    project_all(&s, 0);
    jina_bert_v2_spec(&s, true);
    project_all(&s, 0);
}

/* jina-bert-v3: fused QKV with a bias, RoPE, GELU FFN with biases. */
static void test_jina_bert_v3(void **state)
{
    (void)state;
    model_spec s;
    encoder_init(&s, "jina-bert-v3", 1);
    key_f32(&s, "rope.freq_base", 10000.0f);
    embeddings(&s, true, false, 0);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_qkv.weight", il, E, 3 * E, 1);
        tensor(&s, "blk.%d.attn_qkv.bias", il, 3 * E, 1, 1);
        tensor(&s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(&s, "blk.%d.attn_output.bias", il, E, 1, 1);
        norm_wb(&s, "blk.%d.attn_output_norm.weight", "blk.%d.attn_output_norm.bias", il);
        tensor(&s, "blk.%d.ffn_up.weight", il, E, F, 1);
        tensor(&s, "blk.%d.ffn_up.bias", il, F, 1, 1);
        tensor(&s, "blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(&s, "blk.%d.ffn_down.bias", il, E, 1, 1);
        norm_wb(&s, "blk.%d.layer_output_norm.weight", "blk.%d.layer_output_norm.bias", il);
    }
    project_all(&s, 0);
}

/* modern-bert: pre-norm LayerNorms without biases (none before the first
 * layer's attention), fused QKV, RoPE, GeGLU over a 2 n_ff up; the second
 * with a sliding window (every third layer dense) and a classifier head. */
static void modern_bert_spec(model_spec *s, bool swa)
{
    encoder_init(s, "modern-bert", swa ? 2 : 1);
    if (swa) {
        key_u32(s, "attention.sliding_window", 128);
        key_f32(s, "rope.freq_base_swa", 10000.0f);
    }
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "token_embd_norm.weight", 0, E, 1, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    for (int il = 0; il < NL; il++) {
        if (il != 0 || swa)
            tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_qkv.weight", il, E, 3 * E, 1);
        tensor(s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, E, 2 * F, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
    }
    if (swa) {
        tensor(s, "cls.weight", 0, E, E, 1);
        tensor(s, "cls.norm.weight", 0, E, 1, 1);
    }
}

static void test_modern_bert(void **state)
{
    (void)state;
    model_spec s;
    modern_bert_spec(&s, false);
    project_all(&s, 0);
    modern_bert_spec(&s, true);
    project_all(&s, 0);
}

/* eurobert: RMS norms, separate Q/K/V with grouped KV heads, RoPE, SwiGLU. */
static void test_eurobert(void **state)
{
    (void)state;
    model_spec s;
    spec_init(&s, "eurobert");
    key_bool(&s, "attention.causal", false);
    key_u32(&s, "pooling_type", 1);
    tensor(&s, "token_embd.weight", 0, E, V, 1);
    tensor(&s, "output_norm.weight", 0, E, 1, 1);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(&s, il, false);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(&s, il);
    }
    project_all(&s, 0);
}

/* neo-bert: RMS norms, fused QKV with grouped KV heads, RoPE, SwiGLU over
 * the halves of a 2 n_ff up, the final norm as enc.output_norm, and a
 * classifier head. */
static void test_neo_bert(void **state)
{
    (void)state;
    model_spec s;
    spec_init(&s, "neo-bert");
    key_bool(&s, "attention.causal", false);
    key_u32(&s, "pooling_type", 2);
    tensor(&s, "token_embd.weight", 0, E, V, 1);
    tensor(&s, "cls.weight", 0, E, E, 1);
    tensor(&s, "cls.bias", 0, E, 1, 1);
    tensor(&s, "enc.output_norm.weight", 0, E, 1, 1);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(&s, "blk.%d.attn_qkv.weight", il, E, E + 2 * NKV * HD, 1);
        tensor(&s, "blk.%d.attn_output.weight", il, E, E, 1);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(&s, "blk.%d.ffn_up.weight", il, E, 2 * F, 1);
        tensor(&s, "blk.%d.ffn_down.weight", il, F, E, 1);
    }
    project_all(&s, 0);
}

/* No memory module: no context bytes anywhere, whatever -c and -np say,
 * and the batch is not cut to a small context (non-causal attention). */
static void test_no_context(void **state)
{
    (void)state;
    model_spec s;
    bert_spec(&s, false);
    gw w;
    write_spec(&s, &w);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    ggfit_device devs[2];
    size_t n_dev = 0;
    assert_int_equal(ggfit_devices_parse("rpc:8GiB,rpc:8GiB", devs, 2, &n_dev, &err), GGFIT_OK);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 256;
    p.n_seq = 2;
    ggfit_projection pr;
    if (ggfit_project(m, &p, devs, n_dev, &pr, NULL, &err) != GGFIT_OK)
        fail_msg("bert: %s", err);
    assert_false(pr.compute_estimated);
    assert_int_equal(pr.host.context, 0);
    for (uint32_t d = 0; d < pr.n_devices; d++)
        assert_int_equal(pr.devices[d].context, 0);
    assert_int_equal(pr.n_batch, p.n_batch);
    ggfit_model_free(m);
    gw_free(&w);
}

/* Real sizes: bge-small-en (bert: 12 layers of 384, heads of 32, context
 * 512, 30522 tokens) and nomic-embed-text-v1.5 (nomic-bert: 12 layers of
 * 768, fused QKV, context 2048). */
static void real_spec(model_spec *s, bool nomic)
{
    const int64_t e = nomic ? 768 : 384, f = 4 * e, v = 30522, ctx = nomic ? 2048 : 512;
    const int nl = 12;
    encoder_init(s, nomic ? "nomic-bert" : "bert", nomic ? 1 : 2);
    s->kvs[0].u = nl;            /* block_count */
    s->kvs[1].u = (uint32_t)v;   /* vocab_size */
    s->kvs[2].u = (uint32_t)ctx; /* context_length */
    s->kvs[3].u = (uint32_t)e;   /* embedding_length */
    s->kvs[4].u = (uint32_t)f;   /* feed_forward_length */
    s->kvs[5].u = 12;            /* attention.head_count */
    s->kvs[6].u = 12;            /* attention.head_count_kv */
    s->kvs[7].u = (uint32_t)(e / 12);
    tensor(s, "token_embd.weight", 0, e, v, 1);
    tensor(s, "token_types.weight", 0, e, 2, 1);
    if (!nomic)
        tensor(s, "position_embd.weight", 0, e, ctx, 1);
    tensor(s, "token_embd_norm.weight", 0, e, 1, 1);
    tensor(s, "token_embd_norm.bias", 0, e, 1, 1);
    for (int il = 0; il < nl; il++) {
        if (nomic) {
            tensor(s, "blk.%d.attn_qkv.weight", il, e, 3 * e, 1);
        } else {
            tensor(s, "blk.%d.attn_q.weight", il, e, e, 1);
            tensor(s, "blk.%d.attn_q.bias", il, e, 1, 1);
            tensor(s, "blk.%d.attn_k.weight", il, e, e, 1);
            tensor(s, "blk.%d.attn_k.bias", il, e, 1, 1);
            tensor(s, "blk.%d.attn_v.weight", il, e, e, 1);
            tensor(s, "blk.%d.attn_v.bias", il, e, 1, 1);
        }
        tensor(s, "blk.%d.attn_output.weight", il, e, e, 1);
        if (!nomic)
            tensor(s, "blk.%d.attn_output.bias", il, e, 1, 1);
        tensor(s, "blk.%d.attn_output_norm.weight", il, e, 1, 1);
        tensor(s, "blk.%d.attn_output_norm.bias", il, e, 1, 1);
        tensor(s, "blk.%d.ffn_up.weight", il, e, f, 1);
        if (nomic)
            tensor(s, "blk.%d.ffn_gate.weight", il, e, f, 1);
        else
            tensor(s, "blk.%d.ffn_up.bias", il, f, 1, 1);
        tensor(s, "blk.%d.ffn_down.weight", il, f, e, 1);
        if (!nomic)
            tensor(s, "blk.%d.ffn_down.bias", il, e, 1, 1);
        tensor(s, "blk.%d.layer_output_norm.weight", il, e, 1, 1);
        tensor(s, "blk.%d.layer_output_norm.bias", il, e, 1, 1);
    }
}

static void test_real_sizes(void **state)
{
    (void)state;
    model_spec s;
    real_spec(&s, false);
    project_all(&s, 0);
    real_spec(&s, true);
    project_all(&s, 0);
}

/* gemma-embedding: never causal (no attention.causal key needed), symmetric
 * sliding windows on all but every sixth layer, RMS-normed Q and K, GeGLU,
 * a tied output that is still loaded; the second with the dense_2/dense_3
 * projections of the output layer. Seven layers: the sixth is dense. */
static void gemma_embedding_spec(model_spec *s, bool dense)
{
    spec_init(s, "gemma-embedding");
    s->kvs[0].u = 7;   /* block_count */
    key_u32(s, "attention.sliding_window", 256);
    key_f32(s, "rope.freq_base_swa", 10000.0f);
    key_u32(s, "pooling_type", 1);
    if (dense) {
        key_u32(s, "dense_2_feat_in", E);
        key_u32(s, "dense_2_feat_out", 2 * E);
        key_u32(s, "dense_3_feat_in", 2 * E);
        key_u32(s, "dense_3_feat_out", E);
    }
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    if (dense) {
        tensor(s, "dense_2.weight", 0, E, 2 * E, 1);
        tensor(s, "dense_3.weight", 0, 2 * E, E, 1);
    }
    for (int il = 0; il < 7; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.post_attention_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
        tensor(s, "blk.%d.post_ffw_norm.weight", il, E, 1, 1);
    }
}

static void test_gemma_embedding(void **state)
{
    (void)state;
    model_spec s;
    gemma_embedding_spec(&s, false);
    project_all(&s, 0);
    gemma_embedding_spec(&s, true);
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bert),
        cmocka_unit_test(test_nomic_bert),
        cmocka_unit_test(test_nomic_bert_moe),
        cmocka_unit_test(test_jina_bert_v2),
        cmocka_unit_test(test_jina_bert_v3),
        cmocka_unit_test(test_modern_bert),
        cmocka_unit_test(test_eurobert),
        cmocka_unit_test(test_neo_bert),
        cmocka_unit_test(test_no_context),
        cmocka_unit_test(test_real_sizes),
        cmocka_unit_test(test_gemma_embedding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
