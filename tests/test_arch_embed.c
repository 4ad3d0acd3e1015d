/*
 * test_arch_embed.c - llama-server's embedding modes: --embedding
 * (--embeddings), --rerank (--reranking) and --pooling, which llama.cpp
 * accepts in llama-server alone. The flags as ggfit parses them, then small
 * models in each mode: a causal decoder (qwen3) with its KV cache, a Qwen3
 * reranker (cls.output and the softmax), a BERT reranker (the whole
 * classification head: cls, cls.output and their biases). The figures are
 * llama-server's own (tools/servercmp.py: its fit's first measurement,
 * printed in bytes), on the CPU with -c 4096 -np 4 -kvu, llama-server's
 * default -np auto.
 */
#include "arch_spec.h"

static ggfit_status parse(ggfit_params *p, const char *args, char **err)
{
    char buf[256], *argv[16];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", args);
    for (char *tok = strtok(buf, " "); tok && argc < 16; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    ggfit_params_init(p);
    for (int i = 0; i < argc;) {
        ggfit_status rc = ggfit_params_parse_arg(p, argc, argv, &i, NULL, err);
        if (rc)
            return rc;
    }
    return GGFIT_OK;
}

static void test_parse(void **state)
{
    (void)state;
    ggfit_params p;
    char *err = NULL;
    assert_int_equal(parse(&p, "-c 4096", &err), GGFIT_OK);
    assert_false(p.embeddings);
    assert_int_equal(p.pooling, GGFIT_POOLING_UNSPECIFIED);
    assert_int_equal(parse(&p, "--embedding", &err), GGFIT_OK);
    assert_true(p.embeddings);
    assert_int_equal(p.pooling, GGFIT_POOLING_UNSPECIFIED);
    assert_int_equal(parse(&p, "--embeddings", &err), GGFIT_OK);
    assert_true(p.embeddings);
    static const char *const rerank[] = { "--rerank", "--reranking" };
    for (int k = 0; k < 2; k++) {
        assert_int_equal(parse(&p, rerank[k], &err), GGFIT_OK);
        assert_true(p.embeddings);
        assert_int_equal(p.pooling, GGFIT_POOLING_RANK);
    }
    static const char *const names[] = { "none", "mean", "cls", "last", "rank" };
    for (int k = 0; k < 5; k++) {
        char args[64];
        snprintf(args, sizeof args, "--pooling %s", names[k]);
        assert_int_equal(parse(&p, args, &err), GGFIT_OK);
        assert_false(p.embeddings);   /* pooling alone does not embed */
        assert_int_equal(p.pooling, GGFIT_POOLING_NONE + k);
    }
    /* the last one wins, as in llama.cpp */
    assert_int_equal(parse(&p, "--rerank --pooling mean", &err), GGFIT_OK);
    assert_true(p.embeddings);
    assert_int_equal(p.pooling, GGFIT_POOLING_MEAN);
    assert_int_equal(parse(&p, "--pooling cls --rerank", &err), GGFIT_OK);
    assert_int_equal(p.pooling, GGFIT_POOLING_RANK);
    /* bad and missing values */
    assert_int_equal(parse(&p, "--pooling max", &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "max"));
    ggfit_free(err);
    err = NULL;
    assert_int_equal(parse(&p, "--pooling", &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "needs a value"));
    ggfit_free(err);
    err = NULL;
    /* the request takes them too (the CLI's parser) */
    ggfit_request r;
    ggfit_request_init(&r);
    char f1[] = "--rerank", f2[] = "-m", f3[] = "x.gguf";
    char *argv[] = { f1, f2, f3 };
    for (int i = 0; i < 3;)
        assert_int_equal(ggfit_request_parse_arg(&r, 3, argv, &i, NULL, &err), GGFIT_OK);
    assert_true(r.params.embeddings);
    assert_int_equal(r.params.pooling, GGFIT_POOLING_RANK);
}

/* Qwen3: RMS Q/K norms, SwiGLU, its own output; the reranker adds the
 * rerank head cls.output (one label: n_cls_out 1). */
static void qwen3_spec(model_spec *s, bool rerank)
{
    spec_init(s, "qwen3");
    key_u32(s, "attention.key_length", HD);
    key_u32(s, "attention.value_length", HD);
    head(s, true, false);
    if (rerank)
        tensor(s, "cls.output.weight", 0, E, 1, 1);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

/* A key outside "<arch>.", as the tokenizer's token type count. */
static void key_raw_u32(model_spec *s, const char *key, uint32_t v)
{
    kv *k = &s->kvs[s->n_kv++];
    snprintf(k->key, sizeof k->key, "%s", key);
    k->kind = 'u';
    k->u = v;
}

static void norm_wb(model_spec *s, const char *fmt_w, const char *fmt_b, int il)
{
    tensor(s, fmt_w, il, E, 1, 1);
    tensor(s, fmt_b, il, E, 1, 1);
}

/* A BERT reranker (bge-reranker style): pooling rank in the file, the
 * classification head cls (E x E, tanh) and cls.output (one label), both
 * with biases; a context of 512. */
static void bert_rerank_spec(model_spec *s)
{
    spec_init(s, "bert");
    s->kvs[2].u = 512;   /* context_length */
    s->kvs[6].u = NH;    /* attention.head_count_kv */
    key_f32(s, "attention.layer_norm_epsilon", 1e-12f);
    key_bool(s, "attention.causal", false);
    key_u32(s, "pooling_type", GGFIT_POOLING_RANK);
    key_raw_u32(s, "tokenizer.ggml.token_type_count", 2);
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "token_types.weight", 0, E, 2, 1);
    tensor(s, "position_embd.weight", 0, E, 512, 1);
    norm_wb(s, "token_embd_norm.weight", "token_embd_norm.bias", 0);
    tensor(s, "cls.weight", 0, E, E, 1);
    tensor(s, "cls.bias", 0, E, 1, 1);
    tensor(s, "cls.output.weight", 0, E, 1, 1);
    tensor(s, "cls.output.bias", 0, 1, 1, 1);
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

/* One CPU-only projection of s with the flags args. */
static ggfit_projection project_flags(const model_spec *s, const char *args)
{
    gw w;
    write_spec(s, &w);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    ggfit_params p;
    if (parse(&p, args, &err) != GGFIT_OK)
        fail_msg("%s: %s", args, err);
    ggfit_projection pr;
    if (ggfit_project(m, &p, NULL, 0, &pr, NULL, &err) != GGFIT_OK)
        fail_msg("%s %s: %s", s->arch, args, err);
    if (pr.compute_estimated)
        fail_msg("%s %s: compute estimated: %s", s->arch, args, pr.warning);
    ggfit_model_free(m);
    gw_free(&w);
    return pr;
}

typedef struct mode_case {
    const char *args;
    bool embeddings;
    int32_t pooling;
    uint64_t model, context, compute;   /* llama-server's Host row */
} mode_case;

static void check_modes(const model_spec *s, const mode_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ggfit_projection pr = project_flags(s, c[i].args);
        assert_int_equal(pr.embeddings, c[i].embeddings);
        if (c[i].embeddings)
            assert_int_equal(pr.pooling, c[i].pooling);
        if (pr.host.model != c[i].model || pr.host.context != c[i].context ||
            pr.host.compute != c[i].compute)
            fail_msg("%s %s: %llu %llu %llu, llama-server %llu %llu %llu", s->arch, c[i].args,
                     (unsigned long long)pr.host.model, (unsigned long long)pr.host.context,
                     (unsigned long long)pr.host.compute, (unsigned long long)c[i].model,
                     (unsigned long long)c[i].context, (unsigned long long)c[i].compute);
    }
}

/* A causal decoder keeps its KV cache in every mode; the pooling comes
 * after the logits. llama-server cuts -b to -ub with embeddings. */
static void test_qwen3(void **state)
{
    (void)state;
    model_spec s;
    qwen3_spec(&s, false);
    project_all(&s, 0);
    ggfit_projection pr = project_flags(&s, "-c 4096 -np 4 -kvu --embedding");
    assert_int_equal(pr.n_batch, 512);
    assert_int_equal(pr.pooling, GGFIT_POOLING_NONE);   /* the file gives none */
    assert_true(pr.host.context > 0);
    pr = project_flags(&s, "-c 4096 -np 4 -kvu");
    assert_int_equal(pr.n_batch, 2048);
    assert_false(pr.embeddings);
    static const mode_case c[] = {
        { "-c 4096 -np 4 -kvu --embedding", true, GGFIT_POOLING_NONE, 4571648, 6291456, 8927232 },
        { "-c 4096 -np 4 -kvu --embedding --pooling mean",
          true, GGFIT_POOLING_MEAN, 4571648, 6291456, 8935424 },
        { "-c 4096 -np 4 -kvu --embedding --pooling cls",
          true, GGFIT_POOLING_CLS, 4571648, 6291456, 8927264 },
        { "-c 4096 -np 4 -kvu --embedding --pooling last",
          true, GGFIT_POOLING_LAST, 4571648, 6291456, 8927264 },
        { "-c 4096 -np 4 -kvu --rerank", true, GGFIT_POOLING_RANK, 4571648, 6291456, 8927264 },
        { "-c 4096 -np 4 -kvu --pooling mean", false, 0, 4571648, 6291456, 8927232 },
    };
    check_modes(&s, c, sizeof c / sizeof c[0]);
}

static void test_qwen3_rerank(void **state)
{
    (void)state;
    model_spec s;
    qwen3_spec(&s, true);
    project_all(&s, 0);
    static const mode_case c[] = {
        { "-c 4096 -np 4 -kvu --rerank", true, GGFIT_POOLING_RANK, 4572672, 6291456, 8927264 },
        { "-c 4096 -np 1 --rerank -fa off", true, GGFIT_POOLING_RANK, 4572672, 6291456, 45099040 },
    };
    check_modes(&s, c, sizeof c / sizeof c[0]);
}

static void test_bert_rerank(void **state)
{
    (void)state;
    model_spec s;
    bert_rerank_spec(&s);
    project_all(&s, 0);
    static const mode_case c[] = {
        { "-c 4096 -np 4 -kvu --embedding", true, GGFIT_POOLING_RANK, 4089888, 0, 3414048 },
        { "-c 4096 -np 4 -kvu --rerank", true, GGFIT_POOLING_RANK, 4089888, 0, 3414048 },
        { "-c 4096 -np 4 -kvu --embedding --pooling mean",
          true, GGFIT_POOLING_MEAN, 4089888, 0, 3422208 },
        { "-c 4096 -np 4 -kvu --embedding --pooling none",
          true, GGFIT_POOLING_NONE, 4089888, 0, 3414016 },
    };
    check_modes(&s, c, sizeof c / sizeof c[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_qwen3),
        cmocka_unit_test(test_qwen3_rerank),
        cmocka_unit_test(test_bert_rerank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
