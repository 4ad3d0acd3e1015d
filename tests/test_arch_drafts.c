/*
 * test_arch_drafts.c - the graph builder of eagle3 (EAGLE-3 drafters, the
 * decoder that llama-fit-params reserves when the file has its own
 * token_embd and output): small header-only models with the tensors
 * llama.cpp's load_tensors creates (names and shapes), projected on one
 * RPC device and on the CPU alone, with flash attention on and off; the
 * compute buffers must come from the graph. The same headers
 * (GGFIT_ARCHS_DUMP) are data/tiny/eagle3-<n>.gguf, which
 * tools/llamacmp.py checked against llama.cpp (data/oracle/). A drafter
 * without its own embeddings or output loads only beside a target: no
 * graph then.
 */
#include "arch_spec.h"

enum { TGT = 384, DV = 600 };

/* One decoder block; fc over three target layers of TGT each; nbf:
 * norm_before_fc (enc.output_norm); nbr: norm_before_residual; rope:
 * rope_freqs; embd/output: the drafter's own; d2t: a draft vocabulary of
 * DV tokens mapped onto the target's V. */
static void eagle3_spec(model_spec *s, bool nbf, bool nbr, bool rope, bool embd, bool output,
                        bool d2t)
{
    static const uint32_t layers[4] = { 1, 7, 13, 0 };
    spec_init(s, "eagle3");
    s->kvs[0].u = 1;   /* block_count */
    key_arr4(s, "target_layers", layers);
    s->kvs[s->n_kv - 1].u = 3;
    key_u32(s, "target_hidden_size", TGT);
    if (nbf)
        key_bool(s, "norm_before_fc", true);
    if (nbr)
        key_bool(s, "norm_before_residual", true);
    tensor(s, "fc.weight", 0, 3 * TGT, E, 1);
    if (nbf)
        tensor(s, "enc.output_norm.weight", 0, 3 * TGT, 1, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    if (output)
        tensor(s, "output.weight", 0, E, d2t ? DV : V, 1);
    if (d2t) {   /* draft token -> target token */
        tensor(s, "d2t", 0, DV, 1, 1);
        s->t[s->n_t - 1].type = GGFIT_TYPE_I64;
    }
    if (embd)
        tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "blk.%d.attn_norm.weight", 0, E, 1, 1);
    tensor(s, "blk.%d.attn_norm_2.weight", 0, E, 1, 1);
    tensor(s, "blk.%d.attn_q.weight", 0, 2 * E, NH * HD, 1);
    tensor(s, "blk.%d.attn_k.weight", 0, 2 * E, NKV * HD, 1);
    tensor(s, "blk.%d.attn_v.weight", 0, 2 * E, NKV * HD, 1);
    tensor(s, "blk.%d.attn_output.weight", 0, NH * HD, E, 1);
    tensor(s, "blk.%d.ffn_norm.weight", 0, E, 1, 1);
    ffn_swiglu(s, 0);
    if (rope)
        tensor(s, "rope_freqs.weight", 0, HD / 2, 1, 1);
}

/* Without its own embeddings llama.cpp needs the target's: no graph. */
static void assert_estimated(const model_spec *s)
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
    ggfit_projection pr;
    assert_int_equal(ggfit_project(m, &p, NULL, 0, &pr, NULL, &err), GGFIT_OK);
    assert_true(pr.compute_estimated);
    ggfit_model_free(m);
    gw_free(&w);
}

/* --embedding: llama.cpp's build_pooling asserts (EAGLE-3 sets no
 * res->t_embd); the projection refuses, naming the assert. */
static void assert_embedding_refused(const model_spec *s)
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
    p.n_ctx = 4096;
    p.embeddings = true;
    ggfit_projection pr;
    assert_int_equal(ggfit_project(m, &p, NULL, 0, &pr, NULL, &err), GGFIT_EINVAL);
    assert_non_null(err);
    assert_non_null(strstr(err, "missing result_norm/result_embd tensor"));
    ggfit_free(err);
    ggfit_model_free(m);
    gw_free(&w);
}

static void test_eagle3(void **state)
{
    (void)state;
    model_spec s;
    eagle3_spec(&s, false, false, false, true, true, false);
    project_all(&s, 0);
    assert_embedding_refused(&s);
    eagle3_spec(&s, true, true, true, true, true, false);   /* both norms, rope factors */
    project_all(&s, 0);
    eagle3_spec(&s, false, false, false, false, true, false);   /* the target's embeddings */
    assert_estimated(&s);
    eagle3_spec(&s, false, false, false, true, false, false);   /* the target's output */
    assert_estimated(&s);
    eagle3_spec(&s, false, false, false, true, true, true);   /* a draft vocabulary */
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eagle3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
