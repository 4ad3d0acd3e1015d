/*
 * test_arch_bert.c - the encoders without a memory module (bert,
 * nomic-bert, nomic-bert-moe): small headers with the tensors llama.cpp's
 * load_tensors creates, projected on one RPC device and on the CPU alone,
 * with flash attention on and off; the compute buffers must come from the
 * graph, and no context (KV cache) is reserved.
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
