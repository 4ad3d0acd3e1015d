/*
 * test_spec.c - llama-server's speculative decoding beyond the draft
 * model's own rows (test_draft.c): an MTP context on the target
 * (--spec-type draft-mtp: its context and compute added to the fit
 * targets, the NextN weights loaded and counted in the fit's layers), the
 * draft tokens in the target's n_outputs_max, -devd, and what the server
 * does with a draft it cannot use. The figures are llama-server's own
 * (tools/servercmp.py --mtp, --rows target, on glm-4.5-air and
 * qwen3-next-80b-a3b); the two small models with an MTP head below are in
 * data/tiny (deepseek2-0, mimo2-1), checked the same way.
 */
#include <jansson.h>

#include "arch_spec.h"

enum { FX = 128, KV_LORA = 128, Q_LORA = 128, N_ROPE = 32, HK_MLA = 96, HV_MLA = 64 };

/* The llama.cpp whose figures the plans answer with: b10309's for the
 * tests below (their figures are its), each version's for its records
 * (recorded). */
static uint32_t spec_build = 10309;

static ggfit_status plan_args(ggfit_plan *pl, const char *model, const char *gpu,
                              const char *const *words, int n, char **err)
{
    ggfit_request r;
    ggfit_request_init(&r);
    char version[32];
    snprintf(version, sizeof version, "b%u", spec_build);
    assert_int_equal(ggfit_llama_version_parse(version, &r.llama, NULL), GGFIT_OK);
    static char store[40][512];
    char *argv[40];
    int argc = 0;
    snprintf(store[argc++], 512, "-m");
    if (strchr(model, '/'))   /* a path, else a shipped layout's name */
        snprintf(store[argc++], 512, "%s", model);
    else
        model_path(store[argc++], 512, model);
    snprintf(store[argc++], 512, "--gpu");
    snprintf(store[argc++], 512, "%s", gpu);
    snprintf(store[argc++], 512, "--host-mem");
    snprintf(store[argc++], 512, "256GiB");
    for (int k = 0; k < n && argc < 40; k++) {
        if (!strcmp(words[k], "DRAFT"))   /* the draft model's path */
            model_path(store[argc++], 512, "qwen3-0.6b-f16.gguf");
        else
            snprintf(store[argc++], 512, "%s", words[k]);
    }
    for (int k = 0; k < argc; k++)
        argv[k] = store[k];
    for (int i = 0; i < argc;) {
        ggfit_status rc = ggfit_request_parse_arg(&r, argc, argv, &i, NULL, err);
        if (rc)
            return rc;
    }
    return ggfit_request_plan(&r, pl, err);
}

static void plan_of(ggfit_plan *pl, const char *model, const char *gpu,
                    const char *const *words, int n)
{
    char *err = NULL;
    if (plan_args(pl, model, gpu, words, n, &err))
        fail_msg("%s", err);
}

/* GLM-4.5-Air has no MTP graph at the reference version: its MTP context
 * is a second context like the target's (one output per slot, F16 cache);
 * llama-server's rows on one device at -c 4096. The fit adds its context
 * and compute, not its weights. */
static void mtp_glm(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *const w[] = { "--for", "server", "-c", "4096", "--spec-type", "draft-mtp",
                              "-fitp", "on" };
    plan_of(&pl, "glm-4.5-air-Q4_K_M.gguf", "rpc:81920MiB", w, 8);
    assert_true(pl.has_draft);
    assert_true(pl.draft_mtp);
    assert_null(pl.draft_model);
    assert_false(pl.draft.compute_estimated);
    assert_int_equal(pl.draft.devices[0].model, 70089677312ull);
    assert_int_equal(pl.draft.devices[0].context, 788529152ull);
    assert_int_equal(pl.draft.devices[0].compute, 159393824ull);
    assert_int_equal(pl.draft.host.compute, 20983840ull);
    assert_int_equal(pl.fit_options.extra_used[0], 788529152ull + 159393824ull);
    /* the target: load_mtp (no NextN weights on GLM-4.5 at this version),
     * 4 slots x (1 + 3 draft tokens) outputs */
    assert_true(pl.asked.load_mtp);
    assert_int_equal(pl.asked.n_outputs_max, 16);
    assert_int_equal(pl.projection.devices[0].model, 70089677312ull);
    char *json = ggfit_plan_json(&pl);
    assert_non_null(strstr(json, "\"mtp\": true"));
    ggfit_free(json);
    ggfit_plan_free(&pl);
}

/* Qwen3-Next: the MTP context runs the NextN block's own graph on a KV
 * cache of that block alone; load_mtp loads the block's weights in the
 * target too. llama-server's rows, -c 4096, no device. */
static void mtp_qwen3next(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *const w[] = { "--for", "server", "-c", "4096", "--spec-type", "draft-mtp",
                              "-fitp", "on" };
    plan_of(&pl, "qwen3-next-80b-a3b-Q4_K_M.gguf", "none", w, 8);
    assert_false(pl.draft.compute_estimated);
    assert_int_equal(pl.draft.host.model, 11927112704ull);
    assert_int_equal(pl.draft.host.context, 8388608ull);
    assert_int_equal(pl.draft.host.compute, 46149664ull);
    assert_int_equal(pl.projection.host.model, 11927112704ull);   /* 11480744960 without */
    ggfit_plan_free(&pl);

    /* the fit counts the NextN block among its layers (hp_ngl 49) */
    const char *const f[] = { "--for", "server", "-c", "0", "--spec-type", "draft-mtp" };
    plan_of(&pl, "qwen3-next-80b-a3b-Q4_K_M.gguf", "rpc:24576MiB", f, 6);
    assert_true(pl.has_draft);
    assert_true(pl.fit_options.extra_used[0] > 0);
    char *line = ggfit_plan_args(&pl);
    assert_non_null(strstr(line, " --spec-type draft-mtp -fit off"));
    assert_null(strstr(line, "-md "));
    ggfit_free(line);
    ggfit_plan_free(&pl);
}

/* A model without NextN blocks has no MTP context: llama-server fails to
 * start; an unknown type is refused as arg.cpp refuses it; an MLA model's
 * MTP context takes one cache type for K and V. */
static void mtp_refused(void **state)
{
    (void)state;
    static ggfit_plan pl;
    char *err = NULL;
    const char *const w[] = { "--for", "server", "--spec-type", "draft-mtp" };
    assert_int_equal(plan_args(&pl, "qwen3-14b-Q4_K_M.gguf", "rpc:16GiB", w, 4, &err),
                     GGFIT_EINVAL);
    assert_non_null(strstr(err, "no NextN"));
    ggfit_free(err);
    err = NULL;
    const char *const u[] = { "--for", "server", "--spec-type", "draft-simple,bogus" };
    assert_int_equal(plan_args(&pl, "qwen3-14b-Q4_K_M.gguf", "rpc:16GiB", u, 4, &err),
                     GGFIT_EINVAL);
    assert_non_null(strstr(err, "unknown speculative type: bogus"));
    ggfit_free(err);
}

/* server_n_outputs_max: slots x (1 + the most tokens a type drafts), at
 * most -b; not with embeddings. */
static void outputs(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *const a[] = { "--for", "server", "--spec-type", "ngram-mod" };
    plan_of(&pl, "qwen3-14b-Q4_K_M.gguf", "rpc:16GiB", a, 4);
    assert_int_equal(pl.asked.n_outputs_max, 4 * 65);
    assert_false(pl.has_draft);
    char *line = ggfit_plan_args(&pl);
    assert_non_null(strstr(line, " --spec-type ngram-mod"));
    ggfit_free(line);
    ggfit_plan_free(&pl);
    const char *const b[] = { "--for", "server", "-np", "2", "--spec-type", "draft-simple",
                              "--spec-draft-n-max", "8", "-md", "DRAFT", "-fitp", "on" };
    plan_of(&pl, "qwen3-14b-Q4_K_M.gguf", "rpc:16GiB", b, 12);
    assert_int_equal(pl.asked.n_outputs_max, 2 * 9);
    assert_int_equal(pl.draft_params.n_outputs_max, 2);   /* the draft: one per slot */
    ggfit_plan_free(&pl);
    const char *const c[] = { "--for", "server", "--spec-default", "-b", "128", "-ub", "128",
                              "-fitp", "on" };
    plan_of(&pl, "qwen3-14b-Q4_K_M.gguf", "rpc:16GiB", c, 9);
    assert_int_equal(pl.asked.n_outputs_max, 128);
    ggfit_plan_free(&pl);
    const char *const d[] = { "--for", "server", "--embedding", "--spec-type", "ngram-cache",
                              "-fitp", "on" };
    plan_of(&pl, "qwen3-14b-Q4_K_M.gguf", "rpc:16GiB", d, 7);
    assert_int_equal(pl.asked.n_outputs_max, 512);
    ggfit_plan_free(&pl);
}

/* -devd: the draft on the devices named (or none), its bytes added to
 * those devices' targets only. */
static void draft_devices(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *const w[] = { "--for", "server", "-c", "8192", "-md", "DRAFT", "-devd",
                              "RPC1", "--spec-type", "draft-simple" };
    plan_of(&pl, "qwen3-14b-Q4_K_M.gguf", "rpc:16GiB,rpc:16GiB", w, 10);
    assert_int_equal(pl.draft.n_devices, 1);
    assert_int_equal(pl.draft.device_of[0], 1);
    assert_int_equal(pl.fit_options.extra_used[0], 0);
    assert_true(pl.fit_options.extra_used[1] > pl.draft.devices[0].model);
    char *line = ggfit_plan_args(&pl);
    assert_non_null(strstr(line, " -devd RPC1"));
    ggfit_free(line);
    ggfit_plan_free(&pl);
    const char *const n[] = { "--for", "server", "-md", "DRAFT", "-devd", "none" };
    plan_of(&pl, "qwen3-14b-Q4_K_M.gguf", "rpc:16GiB,rpc:16GiB", n, 6);
    assert_int_equal(pl.draft.n_devices, 0);
    assert_int_equal(pl.fit_options.extra_used[0] + pl.fit_options.extra_used[1], 0);
    assert_true(pl.fit_options.extra_host > 0);
    ggfit_plan_free(&pl);
    char *err = NULL;
    const char *const bad[] = { "--for", "server", "-md", "DRAFT", "-devd", "CUDA7" };
    assert_int_equal(plan_args(&pl, "qwen3-14b-Q4_K_M.gguf", "rpc:16GiB", bad, 6, &err),
                     GGFIT_EINVAL);
    assert_non_null(strstr(err, "invalid device: CUDA7"));
    ggfit_free(err);
}

/* A tiny llama whose add_bos_token is add_bos, with a WordPiece
 * tokenizer ("bert": the keys are read; write_spec's "none" renamed) or
 * none (then llama.cpp reads no more keys). */
static void vocab_model(const char *path, bool add_bos, bool tokenizer)
{
    model_spec s;
    spec_init(&s, "llama");
    kv *k = &s.kvs[s.n_kv++];
    snprintf(k->key, sizeof k->key, "tokenizer.ggml.add_bos_token");
    k->kind = 'b';
    k->u = add_bos;
    head(&s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(&s, il, false);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(&s, il);
    }
    gw w;
    write_spec(&s, &w);
    static const char none[] = "\x04\0\0\0\0\0\0\0none";
    for (size_t i = 0; tokenizer && i + sizeof none - 1 <= w.len; i++)
        if (!memcmp(w.data + i, none, sizeof none - 1)) {
            memcpy(w.data + i + 8, "bert", 4);
            break;
        }
    assert_int_equal(gw_write_file(&w, path), 0);
    gw_free(&w);
}

/* common_speculative_are_compatible, which draft-simple runs after the
 * fit: a refused draft is noted (the server serves without speculative
 * decoding); -md with no type to run is noted too. */
static void vocab(void **state)
{
    (void)state;
    static ggfit_plan pl;
    const char *t = "/tmp/ggfit_test_spec_t.gguf", *d = "/tmp/ggfit_test_spec_d.gguf";
    vocab_model(t, true, true);
    vocab_model(d, false, true);
    const char *const w[] = { "--for", "server", "-md", d, "--spec-type", "draft-simple" };
    plan_of(&pl, t, "none", w, 6);
    assert_non_null(strstr(notes_of(&pl), "its BOS token is not the target's"));
    assert_non_null(strstr(notes_of(&pl), "serves without speculative decoding"));
    ggfit_plan_free(&pl);
    const char *const same[] = { "--for", "server", "-md", t, "--spec-type", "draft-simple" };
    plan_of(&pl, t, "none", same, 6);
    assert_null(strstr(notes_of(&pl), "refuses the draft"));
    ggfit_plan_free(&pl);
    const char *const none[] = { "--for", "server", "-md", d };
    plan_of(&pl, t, "none", none, 4);
    assert_non_null(strstr(notes_of(&pl), "finds no type to run"));
    ggfit_plan_free(&pl);
    /* no tokenizer in either (the shipped layouts): add_bos_token unread,
     * the dummy tokens compared: llama-server aborts */
    vocab_model(t, true, false);
    vocab_model(d, false, false);
    plan_of(&pl, t, "none", w, 6);
    assert_non_null(strstr(notes_of(&pl), "llama-server aborts"));
    assert_null(strstr(notes_of(&pl), "refuses the draft"));
    ggfit_plan_free(&pl);
    remove(t);
    remove(d);
}

/* The MTP context of a tiny model: its head's graph, not estimated. */
/* SPEC_TYPE_MTP (b10415): -md without --spec-type takes draft-mtp where the
 * draft's last block has a NextN head (common_speculative_types_from_gguf);
 * the target then loads its NextN weights, the MTP context runs on the
 * draft's file. llama-server b10587's rows for deepseek2-0 with -md
 * deepseek2-0 (servercmp.py --draft, the draft's and --rows target) are
 * ggfit's; b10309 runs no type: the draft is loaded, then freed. */
static void type_from_draft(void **state)
{
    (void)state;
    static ggfit_plan pl;
    char path[512];
    snprintf(path, sizeof path, "data/tiny/deepseek2-0.gguf");
    const char *const w[] = { "--for", "server", "-c", "4096", "-md", path };
    spec_build = 10587;
    plan_of(&pl, path, "rpc:81920MiB", w, 6);
    spec_build = 10309;
    assert_non_null(strstr(pl.spec_args, "--spec-type draft-mtp"));
    assert_true(pl.asked.load_mtp);
    assert_true(pl.has_draft);
    assert_false(pl.draft_unused);
    ggfit_plan_free(&pl);
    plan_of(&pl, path, "rpc:81920MiB", w, 6);
    assert_null(strstr(pl.spec_args, "draft-mtp"));
    assert_false(pl.asked.load_mtp);
    assert_true(pl.draft_unused);
    ggfit_plan_free(&pl);
}

static void project_mtp(const model_spec *s)
{
    gw w;
    write_spec(s, &w);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    if (ggfit_gguf_open_memory(w.data, w.len, "mtp", &g, &err) ||
        ggfit_model_from_gguf(g, &m, &err))
        fail_msg("%s", err);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 4096;
    p.load_mtp = p.ctx_mtp = true;
    ggfit_projection out;
    if (ggfit_project(m, &p, NULL, 0, &out, NULL, &err))
        fail_msg("%s", err);
    assert_false(out.compute_estimated);
    assert_true(out.host.context > 0);
    ggfit_model_free(m);
    gw_free(&w);
}

/* deepseek2 (GLM-4.7 Flash's layout): MLA, a dense block, experts, and one
 * NextN block after them. */
static void deepseek2_mtp_spec(model_spec *s)
{
    spec_init(s, "deepseek2");
    s->kvs[0].u = NL + 1;   /* block_count: the NextN block too */
    s->kvs[6].u = 1;        /* head_count_kv: one latent head */
    s->kvs[7].u = N_ROPE;
    key_u32(s, "attention.key_length", KV_LORA + N_ROPE);
    key_u32(s, "attention.value_length", KV_LORA);
    key_u32(s, "attention.key_length_mla", HK_MLA);
    key_u32(s, "attention.value_length_mla", HV_MLA);
    key_u32(s, "attention.q_lora_rank", Q_LORA);
    key_u32(s, "attention.kv_lora_rank", KV_LORA);
    key_u32(s, "leading_dense_block_count", 1);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    key_u32(s, "expert_gating_func", 2);
    key_bool(s, "expert_weights_norm", true);
    key_u32(s, "nextn_predict_layers", 1);
    head(s, true, false);
    for (int il = 0; il <= NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.attn_q_a_norm.weight", il, Q_LORA, 1, 1);
        tensor(s, "blk.%d.attn_kv_a_norm.weight", il, KV_LORA, 1, 1);
        tensor(s, "blk.%d.attn_q_a.weight", il, E, Q_LORA, 1);
        tensor(s, "blk.%d.attn_q_b.weight", il, Q_LORA, NH * HK_MLA, 1);
        tensor(s, "blk.%d.attn_kv_a_mqa.weight", il, E, KV_LORA + N_ROPE, 1);
        tensor(s, "blk.%d.attn_k_b.weight", il, HK_MLA - N_ROPE, KV_LORA, NH);
        tensor(s, "blk.%d.attn_v_b.weight", il, KV_LORA, HV_MLA, NH);
        tensor(s, "blk.%d.attn_output.weight", il, NH * HV_MLA, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (il == 0) {
            ffn_swiglu(s, il);
            continue;
        }
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
        tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FX, 1);
        tensor(s, "blk.%d.ffn_down_shexp.weight", il, FX, E, 1);
        tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FX, 1);
        if (il == NL) {
            tensor(s, "blk.%d.nextn.eh_proj.weight", il, 2 * E, E, 1);
            tensor(s, "blk.%d.nextn.enorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.nextn.hnorm.weight", il, E, 1, 1);
            tensor(s, "blk.%d.nextn.shared_head_norm.weight", il, E, 1, 1);
        }
    }
}

/* MiMo-V2 with fused QKV, a window on every other block (one value per
 * block, the NextN block's included) and a dense NextN block. */
static void mimo2_mtp_spec(model_spec *s)
{
    static const uint32_t swa[4] = { 1, 0, 1, 0 };
    spec_init(s, "mimo2");
    s->kvs[0].u = 4;
    key_u32(s, "attention.key_length", HD);
    key_u32(s, "attention.value_length", HD);
    key_u32(s, "attention.sliding_window", 128);
    key_arr4(s, "attention.sliding_window_pattern", swa);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "nextn_predict_layers", 1);
    head(s, true, false);
    for (int il = 0; il < 4; il++) {
        tensor(s, "blk.%d.attn_qkv.weight", il, E, (NH + 2 * NKV) * HD, 1);
        tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (il == 0 || il == 3) {
            ffn_swiglu(s, il);
        } else {
            tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
            tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
            tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
        }
    }
    tensor(s, "blk.%d.nextn.eh_proj.weight", 3, 2 * E, E, 1);
    tensor(s, "blk.%d.nextn.enorm.weight", 3, E, 1, 1);
    tensor(s, "blk.%d.nextn.hnorm.weight", 3, E, 1, 1);
}

static void tiny_heads(void **state)
{
    (void)state;
    model_spec s;
    deepseek2_mtp_spec(&s);
    project_all(&s, 0);
    project_mtp(&s);
    mimo2_mtp_spec(&s);
    project_all(&s, 0);
    project_mtp(&s);
}

/* data/oracle/<version>/spec.jsonl: each llama-server's rows with an MTP context
 * (tools/servercmp.py --mtp --record, "rows_of" the MTP context's, or with
 * --rows target the target's), replayed as whole --for server plans with
 * -fitp on (the flags as given, as the server measures them). */
static bool rows_equal(const ggfit_projection *pr, const ggfit_device *devs, json_t *rows)
{
    size_t n = json_array_size(rows);
    if (n != pr->n_devices + 1)
        return false;
    for (size_t d = 0; d < n; d++) {
        json_t *row = json_array_get(rows, d);
        const ggfit_mem *m = d + 1 < n ? &pr->devices[d] : &pr->host;
        const char *name = d + 1 < n ? devs[pr->device_of[d]].name : "Host";
        if (strcmp(json_string_value(json_array_get(row, 0)), name) ||
            m->model != (uint64_t)json_integer_value(json_array_get(row, 1)) ||
            m->context != (uint64_t)json_integer_value(json_array_get(row, 2)) ||
            m->compute != (uint64_t)json_integer_value(json_array_get(row, 3)))
            return false;
    }
    return true;
}

static void recorded_version(uint32_t build)
{
    char path_rec[64];
    snprintf(path_rec, sizeof path_rec, "data/oracle/b%u/spec.jsonl", build);
    spec_build = build;
    FILE *f = fopen(path_rec, "r");
    if (!f)
        fail_msg("cannot open %s", path_rec);
    char line[4096];
    int n_cases = 0, n_same = 0;
    static ggfit_plan pl;
    while (fgets(line, sizeof line, f)) {
        json_error_t jerr;
        json_t *c = json_loads(line, 0, &jerr);
        if (!c)
            fail_msg("spec.jsonl: %s", jerr.text);
        const char *file = json_string_value(json_object_get(c, "model"));
        const char *args = json_string_value(json_object_get(c, "args"));
        const char *of = json_string_value(json_object_get(c, "rows_of"));
        long nd = (long)json_integer_value(json_object_get(c, "devices"));
        assert_true(file && args && of && nd >= 0 && nd <= 2);
        char path[512], gpu[64], buf[512];
        model_path(path, sizeof path, file);
        FILE *probe = fopen(path, "rb");
        if (probe)
            fclose(probe);
        else
            snprintf(path, sizeof path, "data/tiny/%s", file);
        snprintf(gpu, sizeof gpu, "%s", nd == 0 ? "none" : nd == 1 ? "rpc:81920MiB"
                                                   : "rpc:81920MiB,rpc:81920MiB");
        const char *words[40];
        int n = 0;
        snprintf(buf, sizeof buf, "%s", args);
        for (char *tok = strtok(buf, " "); tok && n < 38; tok = strtok(NULL, " "))
            words[n++] = tok;
        words[n++] = "-fitp";
        words[n++] = "on";
        plan_of(&pl, path, gpu, words, n);
        bool same = rows_equal(!strcmp(of, "draft") ? &pl.draft : &pl.projection, pl.devices,
                               json_object_get(c, "rows"));
        if (!same)
            printf("spec b%u: %s, %ld devices, %s (%s): differs from llama-server\n", build,
                   file, nd, args, of);
        n_cases++;
        n_same += same;
        ggfit_plan_free(&pl);
        json_decref(c);
    }
    fclose(f);
    printf("spec b%u: %d/%d cases equal to llama-server's bytes\n", build, n_same, n_cases);
    spec_build = 10309;
    assert_true(n_cases > 0);
    assert_int_equal(n_same, n_cases);
}

static void recorded(void **state)
{
    (void)state;
    for (size_t v = 0; ggfit_llama_version_supported(v); v++)
        recorded_version(ggfit_llama_version_supported(v));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mtp_glm),
        cmocka_unit_test(mtp_qwen3next),
        cmocka_unit_test(mtp_refused),
        cmocka_unit_test(outputs),
        cmocka_unit_test(draft_devices),
        cmocka_unit_test(vocab),
        cmocka_unit_test(tiny_heads),
        cmocka_unit_test(type_from_draft),
        cmocka_unit_test(recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
