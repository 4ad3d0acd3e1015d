/*
 * test_arch_diffusion.c - the graph builders of the diffusion language
 * models dream, llada, llada-moe and rnd1 (no memory module, non-causal
 * attention, an output head), and of T5's encoder (t5encoder): small header-only models with the tensors
 * llama.cpp's load_tensors creates for each (names and shapes), projected
 * on one RPC device and on the CPU alone, with flash attention on and off;
 * the compute buffers must come from the graph. The same headers
 * (GGFIT_ARCHS_DUMP) are data/tiny/<arch>-<n>.gguf, which
 * tools/llamacmp.py checked against llama.cpp (data/oracle/).
 */
#include "arch_spec.h"

enum { FX = 128 };

/* ---- dream --------------------------------------------------------------- */

/* llama_model_dream::load_arch_tensors: create_tensor_qkv (fused or
 * separate Q/K/V with biases), an optional output and its bias. */
static void dream_spec(model_spec *s, bool output, bool fused)
{
    spec_init(s, "dream");
    head(s, output, output);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (fused) {
            tensor(s, "blk.%d.attn_qkv.weight", il, E, (NH + 2 * NKV) * HD, 1);
            tensor(s, "blk.%d.attn_qkv.bias", il, (NH + 2 * NKV) * HD, 1, 1);
            tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        } else {
            attn_qkv(s, il, true);
        }
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

static void test_dream(void **state)
{
    (void)state;
    model_spec s;
    dream_spec(&s, false, false);   /* tied output */
    project_all(&s, 0);
    dream_spec(&s, true, true);     /* its own output and bias, fused QKV */
    project_all(&s, 0);
}

/* ---- llada --------------------------------------------------------------- */

/* llama_model_llada::load_arch_tensors: separate Q/K/V without biases, an
 * optional attn_output bias, rope_freqs (on the first block), and the
 * optional FFN biases, none of which the graph reads. */
static void llada_spec(model_spec *s, bool output, bool extras)
{
    spec_init(s, "llada");
    s->kvs[0].u = 4;   /* block_count */
    head(s, output, false);
    if (extras)
        tensor(s, "rope_freqs.weight", 0, HD / 2, 1, 1);
    for (int il = 0; il < 4; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        if (extras)
            tensor(s, "blk.%d.attn_output.bias", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
        if (extras) {
            tensor(s, "blk.%d.ffn_gate.bias", il, F, 1, 1);
            tensor(s, "blk.%d.ffn_down.bias", il, E, 1, 1);
            tensor(s, "blk.%d.ffn_up.bias", il, F, 1, 1);
        }
    }
}

static void test_llada(void **state)
{
    (void)state;
    model_spec s;
    llada_spec(&s, true, false);
    project_all(&s, 0);
    llada_spec(&s, false, true);   /* tied output, biases, rope_freqs */
    project_all(&s, 0);
}

/* ---- llada-moe and rnd1 -------------------------------------------------- */

/* llama_model_llada_moe::load_arch_tensors and llama_model_rnd1's: Q/K
 * norms, softmax-gated experts of expert_feed_forward_length (else n_ff /
 * n_expert_used) rows. */
static void moe_spec(model_spec *s, const char *arch, bool output, bool n_ff_exp)
{
    spec_init(s, arch);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    if (n_ff_exp)
        key_u32(s, "expert_feed_forward_length", FX);
    int64_t fx = n_ff_exp ? FX : F / 2;
    head(s, output, false);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, fx, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, fx, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, fx, NX);
    }
}

static void test_llada_moe(void **state)
{
    (void)state;
    model_spec s;
    moe_spec(&s, "llada-moe", true, true);
    project_all(&s, 0);
    moe_spec(&s, "llada-moe", true, false);   /* n_ff / n_expert_used */
    project_all(&s, 0);
}

static void test_rnd1(void **state)
{
    (void)state;
    model_spec s;
    moe_spec(&s, "rnd1", true, true);
    project_all(&s, 0);
    moe_spec(&s, "rnd1", false, true);   /* tied output */
    project_all(&s, 0);
}

/* ---- t5encoder ----------------------------------------------------------- */

enum { N_BKTS = 32 };

/* llama_model_t5encoder::load_arch_tensors: "enc." blocks, one KV head per
 * head (Q is n_embd_k_gqa wide), a relative position bias on the first
 * block (all: rel_all), a GEGLU gate (flan-T5) or ReLU. */
static void t5encoder_spec(model_spec *s, bool output, bool gated, bool rel_all)
{
    spec_init(s, "t5encoder");
    s->kvs[6].u = NH;   /* head_count_kv */
    key_u32(s, "attention.relative_buckets_count", N_BKTS);
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "enc.output_norm.weight", 0, E, 1, 1);
    if (output)
        tensor(s, "output.weight", 0, E, V, 1);
    for (int il = 0; il < NL; il++) {
        tensor(s, "enc.blk.%d.attn_norm.weight", il, E, 1, 1);
        if (il == 0 || rel_all) {
            tensor(s, "enc.blk.%d.attn_rel_b.weight", il, NH, N_BKTS, 1);
            s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
        }
        tensor(s, "enc.blk.%d.attn_q.weight", il, E, NH * HD, 1);
        tensor(s, "enc.blk.%d.attn_k.weight", il, E, NH * HD, 1);
        tensor(s, "enc.blk.%d.attn_v.weight", il, E, NH * HD, 1);
        tensor(s, "enc.blk.%d.attn_o.weight", il, NH * HD, E, 1);
        tensor(s, "enc.blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (gated)
            tensor(s, "enc.blk.%d.ffn_gate.weight", il, E, F, 1);
        tensor(s, "enc.blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "enc.blk.%d.ffn_up.weight", il, E, F, 1);
    }
}

static void test_t5encoder(void **state)
{
    (void)state;
    model_spec s;
    t5encoder_spec(&s, false, true, false);   /* flan-T5: tied output, GEGLU */
    project_all(&s, 0);
    t5encoder_spec(&s, true, false, true);    /* T5: ReLU, a bias per block */
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dream),
        cmocka_unit_test(test_llada),
        cmocka_unit_test(test_llada_moe),
        cmocka_unit_test(test_rnd1),
        cmocka_unit_test(test_t5encoder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
