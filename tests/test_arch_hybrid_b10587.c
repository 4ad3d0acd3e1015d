/*
 * test_arch_hybrid_b10587.c - the hybrid architectures llama.cpp gained
 * between b10309 and b10587: minimax-01 (lightning attention and full
 * attention), kimi-k3 (KDA and MLA, latent experts) and bailingmoe3 (KDA
 * and MLA with an MTP block). Small header-only models with the keys the
 * converter writes and the tensors load_tensors creates, projected on one
 * RPC device and on the CPU alone, with flash attention on and off; the
 * compute buffers must come from the graph and every figure must be
 * llama.cpp b10587's (data/oracle/b10587/). llama.cpp b10309 refuses each,
 * naming the build that added it.
 */
#include "arch_spec.h"

enum { FX = 128 };

/* llama.cpp b10309 refuses the model: the architecture came later. */
static void refused_at_b10309(const model_spec *s, const char *added)
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
    p.llama_build = 10309;
    ggfit_projection pr;
    ggfit_status rc = ggfit_project(m, &p, NULL, 0, &pr, NULL, &err);
    if (rc != GGFIT_EUNSUPPORTED || !err || !strstr(err, added))
        fail_msg("%s: expected b10309 to refuse it (%s), got %s: %s", s->arch, added,
                 ggfit_status_str(rc), err ? err : "");
    ggfit_free(err);
    ggfit_model_free(m);
    gw_free(&w);
}

/* ---- minimax-01 ---------------------------------------------------------- */

/* n blocks; the converter writes no recurrent_layers and no interval, so
 * every 8th block attends. Partial rotary (rotary_dim), head_dim given. */
static void minimax_01_spec(model_spec *s, uint32_t n, bool gate_exps)
{
    spec_init(s, "minimax-01");
    s->kvs[0].u = n;        /* block_count */
    s->kvs[4].u = FX;       /* feed_forward_length: the experts' */
    s->kvs[7].u = HD / 2;   /* rope.dimension_count: rotary_dim */
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "attention.key_length", HD);
    key_u32(s, "attention.value_length", HD);
    key_f32(s, "residual_scale", 2.0f);
    head(s, true, false);
    for (int il = 0; il < (int)n; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if ((il + 1) % 8 == 0) {
            tensor(s, "blk.%d.attn_q.weight", il, E, NH * HD, 1);
            tensor(s, "blk.%d.attn_k.weight", il, E, NKV * HD, 1);
            tensor(s, "blk.%d.attn_v.weight", il, E, NKV * HD, 1);
        } else {
            tensor(s, "blk.%d.attn_norm_2.weight", il, NH * HD, 1, 1);
            tensor(s, "blk.%d.attn_qkv.weight", il, E, 3 * NH * HD, 1);
            tensor(s, "blk.%d.attn_gate.weight", il, E, NH * HD, 1);
        }
        tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        if (gate_exps)
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
    }
}

static void test_minimax_01(void **state)
{
    (void)state;
    model_spec s;
    /* Seven lightning blocks, then one full-attention block. */
    minimax_01_spec(&s, 8, true);
    project_all(&s, 0);
    refused_at_b10309(&s, "added in b10437");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimax_01),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
