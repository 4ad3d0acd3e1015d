/*
 * test_model.c - the model description on the shipped layouts: the figures
 * llama.cpp's reference data gives, hyperparameters, per-layer values and
 * tensor roles; and the two inspect renderers.
 */
#include <jansson.h>

#include "gguf_writer.h"
#include "test_util.h"

#define MiB (1024.0 * 1024.0)

static ggfit_model *open_model(const char *file)
{
    char path[512], *err = NULL;
    ggfit_model *m = NULL;
    model_path(path, sizeof path, file);
    if (ggfit_model_open(path, &m, &err) != GGFIT_OK)
        fail_msg("%s", err);
    return m;
}

/* MiB rounded to 2 decimals, as the figures are quoted. */
static void assert_mib(uint64_t bytes, double want)
{
    double got = (double)(int64_t)((double)bytes / MiB * 100.0 + 0.5) / 100.0;
    if (got != want)
        fail_msg("%.2f MiB (%llu B), expected %.2f MiB", got, (unsigned long long)bytes, want);
}

static void test_gpt_oss_120b(void **state)
{
    (void)state;
    ggfit_model *m = open_model("gpt-oss-120b-mxfp4.gguf");
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    assert_int_equal(ggfit_model_n_tensors(m), 687);
    assert_int_equal(ggfit_gguf_tensor_bytes(ggfit_model_gguf(m)), 63374323968ull);
    assert_int_equal(ggfit_model_role_bytes(m, GGFIT_ROLE_EXPERTS), 61073326080ull);
    for (uint32_t il = 0; il < hp->n_layer; il++)
        assert_int_equal(ggfit_model_layer(m, il)->role_bytes[GGFIT_ROLE_EXPERTS],
                         1696481280ull);
    uint64_t rest = 0;
    for (int r = 0; r < GGFIT_ROLE_COUNT; r++)
        if (r != GGFIT_ROLE_EXPERTS)
            rest += ggfit_model_role_bytes(m, (ggfit_role)r);
    assert_int_equal(rest, 2300997888ull);
    assert_string_equal(hp->arch, "gpt-oss");
    assert_int_equal(hp->n_layer, 36);
    assert_int_equal(hp->n_expert, 128);
    assert_int_equal(hp->n_expert_used, 4);
    assert_int_equal(hp->n_swa, 128);
    assert_int_equal(hp->n_vocab, 201088);
    assert_int_equal(hp->n_embd_head_k, 64);
    ggfit_model_free(m);
}

static void test_qwen3_14b(void **state)
{
    (void)state;
    ggfit_model *f16 = open_model("qwen3-14b-f16.gguf");
    for (uint32_t il = 0; il < 40; il++)
        assert_mib(ggfit_model_layer(f16, il)->n_bytes, 630.04);
    assert_mib(ggfit_model_output_bytes(f16), 1483.77);
    assert_mib(ggfit_model_role_bytes(f16, GGFIT_ROLE_TOKEN_EMBD), 1483.75);
    assert_mib(ggfit_model_input_bytes(f16), 1483.75);
    ggfit_model_free(f16);

    ggfit_model *q = open_model("qwen3-14b-Q4_K_M.gguf");
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t il = 0; il < 40; il++) {
        uint64_t b = ggfit_model_layer(q, il)->n_bytes;
        lo = b < lo ? b : lo;
        hi = b > hi ? b : hi;
    }
    assert_mib(lo, 177.23);
    assert_mib(hi, 200.43);
    uint64_t total = ggfit_gguf_tensor_bytes(ggfit_model_gguf(q));
    assert_mib(total - ggfit_model_role_bytes(q, GGFIT_ROLE_TOKEN_EMBD), 8161.75);
    ggfit_model_free(q);
}

static void test_llama_70b(void **state)
{
    (void)state;
    ggfit_model *m = open_model("llama-3.3-70b-Q4_K_M.gguf");
    assert_int_equal(ggfit_gguf_tensor_bytes(ggfit_model_gguf(m)), 42512531712ull);
    assert_int_equal(ggfit_model_hparams(m)->n_layer, 80);
    assert_int_equal(ggfit_model_layer(m, 79)->n_head_kv, 8);
    ggfit_model_free(m);
}

/* Every byte belongs to exactly one place: a block, the input or the output layer. */
static void test_bytes_add_up(void **state)
{
    (void)state;
    model_name files[64];
    size_t n_files = model_files(files, 64);
    assert_true(n_files >= 16);
    for (size_t k = 0; k < n_files; k++) {
        ggfit_model *m = open_model(files[k]);
        const ggfit_hparams *hp = ggfit_model_hparams(m);
        uint64_t sum = ggfit_model_input_bytes(m) + ggfit_model_output_bytes(m), roles = 0;
        for (uint32_t il = 0; il < hp->n_layer; il++) {
            const ggfit_layer_info *li = ggfit_model_layer(m, il);
            uint64_t lr = 0;
            for (int r = 0; r < GGFIT_ROLE_COUNT; r++)
                lr += li->role_bytes[r];
            assert_int_equal(lr, li->n_bytes);
            sum += li->n_bytes;
        }
        for (int r = 0; r < GGFIT_ROLE_COUNT; r++)
            roles += ggfit_model_role_bytes(m, (ggfit_role)r);
        assert_int_equal(sum, ggfit_gguf_tensor_bytes(ggfit_model_gguf(m)));
        assert_int_equal(roles, sum);
        assert_true(hp->n_vocab > 0);
        assert_true(hp->n_embd > 0);
        /* Nothing in these layouts is left unrecognised: "other" holds
         * only the rope frequency factors (64 F32 in Llama 3.x). */
        for (uint64_t i = 0; i < ggfit_model_n_tensors(m); i++) {
            const ggfit_tensor *t = ggfit_model_tensor(m, i);
            if (t->role == GGFIT_ROLE_OTHER)
                assert_string_equal(t->info->name, "rope_freqs.weight");
        }
        ggfit_model_free(m);
    }
}

static const ggfit_tensor *find(const ggfit_model *m, const char *name)
{
    for (uint64_t i = 0; i < ggfit_model_n_tensors(m); i++)
        if (!strcmp(ggfit_model_tensor(m, i)->info->name, name))
            return ggfit_model_tensor(m, i);
    fail_msg("no tensor %s", name);
    return NULL;
}

static void test_roles(void **state)
{
    (void)state;
    ggfit_model *m = open_model("deepseek-v2-lite-Q4_K_M.gguf");
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    assert_int_equal(hp->n_lora_kv, 512);
    assert_int_equal(hp->n_embd_head_k_mla, 192);
    assert_int_equal(hp->n_layer_dense_lead, 1);
    assert_int_equal(find(m, "blk.1.ffn_up_shexp.weight")->role, GGFIT_ROLE_SHARED_EXPERTS);
    assert_int_equal(find(m, "blk.1.ffn_gate_inp.weight")->role, GGFIT_ROLE_ROUTER);
    assert_int_equal(find(m, "blk.1.ffn_down_exps.weight")->role, GGFIT_ROLE_EXPERTS);
    assert_int_equal(find(m, "blk.0.ffn_down.weight")->role, GGFIT_ROLE_FFN);
    assert_int_equal(find(m, "blk.0.attn_kv_a_mqa.weight")->role, GGFIT_ROLE_ATTENTION);
    assert_int_equal(find(m, "blk.0.attn_kv_a_norm.weight")->role, GGFIT_ROLE_NORM);
    const ggfit_tensor *te = find(m, "token_embd.weight");
    assert_int_equal(te->role, GGFIT_ROLE_TOKEN_EMBD);
    assert_int_equal(te->layer, -1);
    assert_false(te->output_layer);
    const ggfit_tensor *out = find(m, "output.weight");
    assert_int_equal(out->role, GGFIT_ROLE_OUTPUT);
    assert_true(out->output_layer);
    assert_true(find(m, "output_norm.weight")->output_layer);
    assert_int_equal(find(m, "blk.26.attn_q.weight")->layer, 26);
    ggfit_model_free(m);

    /* GLM-4.5-Air: the last block is a NextN block. */
    m = open_model("glm-4.5-air-Q4_K_M.gguf");
    hp = ggfit_model_hparams(m);
    assert_int_equal(hp->n_layer, 47);
    assert_int_equal(hp->n_nextn, 1);
    assert_true(ggfit_model_layer(m, 46)->nextn);
    assert_false(ggfit_model_layer(m, 45)->nextn);
    assert_int_equal(find(m, "blk.46.nextn.eh_proj.weight")->role, GGFIT_ROLE_NEXTN);
    assert_true(ggfit_model_layer(m, 46)->role_bytes[GGFIT_ROLE_NEXTN] > 0);
    ggfit_model_free(m);

    /* Hybrids: recurrent layers have no KV heads. */
    m = open_model("lfm2-1.2b-Q4_K_M.gguf");
    assert_int_equal(ggfit_model_hparams(m)->shortconv_l_cache, 3);
    assert_int_equal(ggfit_model_layer(m, 0)->n_head_kv, 0);
    assert_int_equal(ggfit_model_layer(m, 2)->n_head_kv, 8);
    assert_int_equal(find(m, "blk.0.shortconv.conv.weight")->role, GGFIT_ROLE_RECURRENT);
    ggfit_model_free(m);

    m = open_model("nemotron-h-8b-Q4_K_M.gguf");
    hp = ggfit_model_hparams(m);
    assert_int_equal(hp->ssm_d_inner, 8192);
    assert_int_equal(hp->ssm_n_group, 8);
    assert_int_equal(ggfit_model_layer(m, 0)->n_ff, 0);
    assert_int_equal(ggfit_model_layer(m, 1)->n_ff, 21504);
    ggfit_model_free(m);

    m = open_model("qwen3-next-80b-a3b-Q4_K_M.gguf");
    hp = ggfit_model_hparams(m);
    assert_int_equal(hp->full_attn_interval, 4);
    assert_int_equal(hp->n_ff_shexp, 512);
    assert_int_equal(hp->n_nextn, 1);
    ggfit_model_free(m);

    m = open_model("gemma-3-27b-Q4_K_M.gguf");
    assert_int_equal(ggfit_model_hparams(m)->n_swa, 1024);
    assert_int_equal(ggfit_model_hparams(m)->n_embd_head_k_swa, 128);
    ggfit_model_free(m);
}

/* Keys llama.cpp defaults when absent, and the vocabulary fallbacks. */
static void test_defaults(void **state)
{
    (void)state;
    gw w = {0};
    ggfit_gguf *g;
    ggfit_model *m;
    char *err = NULL;
    gw_tiny_model(&w, "llama", 2, 256, 512, 1000, GGFIT_TYPE_F16);
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    assert_int_equal(hp->n_vocab, 1000);                 /* token_embd's rows */
    assert_int_equal(hp->n_embd_head_k, 256 / 4);        /* n_embd / n_head */
    assert_int_equal(ggfit_model_layer(m, 1)->n_head_kv, 4);   /* = n_head */
    assert_string_equal(hp->name, "tiny");
    assert_null(ggfit_model_layer(m, 2));
    assert_null(ggfit_model_tensor(m, ggfit_model_n_tensors(m)));
    ggfit_model_free(m);
    gw_free(&w);

    /* The tokenizer's token count when there is no vocab_size key. */
    gw_header(&w, 3, 0, 5);
    gw_kv_str(&w, "general.architecture", "qwen2");
    gw_kv_u32(&w, "qwen2.block_count", 1);
    gw_kv_u32(&w, "qwen2.context_length", 4096);
    gw_kv_u32(&w, "qwen2.embedding_length", 64);
    gw_key(&w, "tokenizer.ggml.tokens", GGFIT_GGUF_ARRAY);
    gw_u32(&w, GGFIT_GGUF_STRING);
    gw_u64(&w, 3);
    gw_str(&w, "a");
    gw_str(&w, "b");
    gw_str(&w, "c");
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tok.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_hparams(m)->n_vocab, 3);
    ggfit_model_free(m);
    gw_free(&w);
    ggfit_model_free(NULL);
}

static void test_inspect_text(void **state)
{
    (void)state;
    ggfit_model *m = open_model("gpt-oss-120b-mxfp4.gguf");
    char *t = ggfit_inspect_text(m);
    assert_non_null(t);
    assert_non_null(strstr(t, "687, 63,374,323,968 B of data"));
    assert_non_null(strstr(t, "61,073,326,080 B in 36 layers (1,696,481,280 B per layer)"));
    assert_non_null(strstr(t, "the rest 2,300,997,888 B"));
    ggfit_free(t);
    ggfit_model_free(m);

    m = open_model("qwen3-14b-Q4_K_M.gguf");
    t = ggfit_inspect_text(m);
    assert_non_null(strstr(t, "177.23 to 200.43 MiB each"));
    assert_non_null(strstr(t, "offload    8161.75 MiB"));
    ggfit_free(t);
    ggfit_model_free(m);
}

static void test_inspect_json(void **state)
{
    (void)state;
    ggfit_model *m = open_model("gpt-oss-120b-mxfp4.gguf");
    char *s = ggfit_inspect_json(m, true);
    json_error_t jerr;
    json_t *root = json_loads(s, 0, &jerr);
    assert_non_null(root);
    assert_int_equal(json_integer_value(json_object_get(root, "n_tensors")), 687);
    assert_true(json_integer_value(json_object_get(root, "tensor_bytes")) == 63374323968ll);
    json_t *roles = json_object_get(root, "roles");
    assert_true(json_integer_value(json_object_get(roles, "experts")) == 61073326080ll);
    json_t *layers = json_object_get(root, "layers");
    assert_int_equal(json_array_size(layers), 36);
    json_t *l0 = json_array_get(layers, 0);
    assert_true(json_integer_value(json_object_get(json_object_get(l0, "roles"), "experts")) ==
                1696481280ll);
    assert_int_equal(json_array_size(json_object_get(root, "tensors")), 687);
    json_t *hp = json_object_get(root, "hparams");
    assert_string_equal(json_string_value(json_object_get(hp, "arch")), "gpt-oss");
    json_decref(root);
    ggfit_free(s);

    s = ggfit_inspect_json(m, false);
    root = json_loads(s, 0, &jerr);
    assert_non_null(root);
    assert_null(json_object_get(root, "tensors"));
    json_decref(root);
    ggfit_free(s);
    ggfit_model_free(m);
}

/* GGUF strings need not be UTF-8; the JSON must still be valid, and a long
 * name is cut at a character boundary. */
static void test_json_non_utf8(void **state)
{
    (void)state;
    static const char *const names[] = { "caf\xe9", NULL };
    char longname[160];
    memset(longname, 'a', 126);
    memcpy(longname + 126, "\xc3\xa9x", 4);   /* 126 a, e-acute, x: 129 bytes */
    for (int k = 0; k < 2; k++) {
        gw w = {0};
        ggfit_gguf *g;
        ggfit_model *m;
        gw_header(&w, 3, 0, 5);
        gw_kv_str(&w, "general.architecture", "llama");
        gw_kv_str(&w, "general.name", names[k] ? names[k] : longname);
        gw_kv_u32(&w, "llama.block_count", 1);
        gw_kv_u32(&w, "llama.context_length", 4096);
        gw_kv_u32(&w, "llama.embedding_length", 64);
        assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "n.gguf", &g, NULL), GGFIT_OK);
        assert_int_equal(ggfit_model_from_gguf(g, &m, NULL), GGFIT_OK);
        char *s = ggfit_inspect_json(m, true);
        assert_non_null(s);
        json_t *root = json_loads(s, 0, NULL);
        assert_non_null(root);
        const char *name = json_string_value(json_object_get(json_object_get(root, "hparams"),
                                                             "name"));
        if (names[k])
            assert_string_equal(name, "caf?");
        else
            assert_int_equal(strlen(name), 126);   /* the cut falls before the e-acute */
        json_decref(root);
        ggfit_free(s);
        ggfit_model_free(m);
        gw_free(&w);
    }
}

/* Real-size layouts written as convert_hf_to_gguf.py writes them (data/real,
 * SOURCES.md): their sliding_window_pattern holds one bool per main block
 * (layer_types) while block_count counts the MTP block too. llama.cpp loads
 * both, reading the pattern as a uint32 and passing the array over; the
 * projections (-c 16384, f16 cache of 8 KV heads of 128: 4096 B a cell and
 * layer) are llama.cpp's (data/oracle/b10309/llamacpp.jsonl holds the rest). */
static void test_converter_layouts(void **state)
{
    (void)state;
    const uint64_t cell = 2 * 8 * 128 * 2, n_ctx = 16384;
    char *err = NULL;
    ggfit_model *m = NULL;
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = (uint32_t)n_ctx;
    ggfit_projection pr;
    /* EXAONE 4.5: 64 blocks and an MTP one. b10309 gives windows only
     * where block_count is 64, so none: every block caches the whole
     * context. b10587 (EXAONE4_MTP_SWA) counts the main blocks: three in
     * four of them keep a window of 4096 + a ubatch of 512 cells, the 16
     * others and the MTP block the whole context. */
    if (ggfit_model_open("data/real/exaone-4.5-33b-Q4_K_M.gguf", &m, &err) != GGFIT_OK)
        fail_msg("%s", err);
    p.llama_build = 10309;
    assert_int_equal(ggfit_project(m, &p, NULL, 0, &pr, NULL, &err), GGFIT_OK);
    assert_int_equal(pr.host.context, 65 * n_ctx * cell);
    p.llama_build = 10587;
    assert_int_equal(ggfit_project(m, &p, NULL, 0, &pr, NULL, &err), GGFIT_OK);
    assert_int_equal(pr.host.context, (17 * n_ctx + 48 * 4608) * cell);
    p.llama_build = 0;
    ggfit_model_free(m);
    /* K-EXAONE: 48 blocks and an MTP one, the period 4 of the architecture
     * over all 49 (12 global layers; 37 of a 128-token window plus a ubatch
     * of 512, padded to 768 cells). */
    if (ggfit_model_open("data/real/k-exaone-236b-a23b-Q4_K_M.gguf", &m, &err) != GGFIT_OK)
        fail_msg("%s", err);
    assert_int_equal(ggfit_project(m, &p, NULL, 0, &pr, NULL, &err), GGFIT_OK);
    assert_int_equal(pr.host.context, (12 * n_ctx + 37 * 768) * cell);
    ggfit_model_free(m);
}

int main(void)
{
    ggfit_text_set_columns(0);   /* whole lines: the phrases are checked, not the layout */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpt_oss_120b),
        cmocka_unit_test(test_qwen3_14b),
        cmocka_unit_test(test_llama_70b),
        cmocka_unit_test(test_bytes_add_up),
        cmocka_unit_test(test_roles),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_inspect_text),
        cmocka_unit_test(test_inspect_json),
        cmocka_unit_test(test_json_non_utf8),
        cmocka_unit_test(test_converter_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
