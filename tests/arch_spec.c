/*
 * arch_spec.c - small header-only models of an architecture, written from
 * a spec (the tensors llama.cpp's load_tensors creates, small shapes), and
 * the projections every architecture test runs on them (test_arch*.c).
 */
#include "arch_spec.h"
#include "llama/arch.h"

/* The key's entry: the one s has (a key set again takes the new value), or
 * a new one at the end. */
static kv *slot(model_spec *s, const char *suffix)
{
    char key[sizeof s->kvs[0].key];
    snprintf(key, sizeof key, "%s.%s", s->arch, suffix);
    for (size_t i = 0; i < s->n_kv; i++)
        if (!strcmp(s->kvs[i].key, key))
            return &s->kvs[i];
    assert_true(s->n_kv < sizeof s->kvs / sizeof s->kvs[0]);
    kv *k = &s->kvs[s->n_kv++];
    snprintf(k->key, sizeof k->key, "%s", key);
    return k;
}

void key_u32(model_spec *s, const char *suffix, uint32_t v)
{
    kv *k = slot(s, suffix);
    k->kind = 'u';
    k->u = v;
}

void key_f32(model_spec *s, const char *suffix, float v)
{
    kv *k = slot(s, suffix);
    k->kind = 'f';
    k->f = v;
}

void key_bool(model_spec *s, const char *suffix, bool v)
{
    kv *k = slot(s, suffix);
    k->kind = 'b';
    k->u = v;
}

void key_arr4(model_spec *s, const char *suffix, const uint32_t v[4])
{
    kv *k = slot(s, suffix);
    k->kind = 'a';
    k->u = 4;
    memcpy(k->a, v, sizeof k->a);
}

void key_arr(model_spec *s, const char *suffix, uint32_t type, const void *v, uint32_t n)
{
    kv *k = slot(s, suffix);
    k->kind = 'r';
    k->u = n;
    k->arr = v;
    k->arr_type = type;
}

void key_str(model_spec *s, const char *suffix, const char *v)
{
    kv *k = slot(s, suffix);
    k->kind = 's';
    k->s = v;
}

void key_drop(model_spec *s, const char *suffix)
{
    char key[96];
    snprintf(key, sizeof key, "%s.%s", s->arch, suffix);
    for (size_t i = 0; i < s->n_kv;)
        if (!strcmp(s->kvs[i].key, key)) {
            memmove(&s->kvs[i], &s->kvs[i + 1], (s->n_kv - i - 1) * sizeof s->kvs[0]);
            s->n_kv--;
        } else {
            i++;
        }
}

void key_required(model_spec *s)
{
    bool known;
    const ggfit_arch *a = ggfit__arch(s->arch, &known);
    for (int since = 0; since < 2; since++) {
        const char *const *r = !a ? NULL : since ? a->required_keys_since : a->required_keys;
        for (; r && *r; r++) {
            char key[96];
            snprintf(key, sizeof key, "%s.%s", s->arch, *r);
            bool have = false;
            for (size_t i = 0; i < s->n_kv && !have; i++)
                have = !strcmp(s->kvs[i].key, key);
            if (!have)
                key_u32(s, *r, 1);
        }
    }
}

/* A tensor named fmt (with the layer for %d), F16 unless it is 1-D. */
void tensor(model_spec *s, const char *fmt, int il, int64_t ne0, int64_t ne1,
                   int64_t ne2)
{
    size_t i = s->n_t++;
    snprintf(s->names[i], sizeof s->names[i], fmt, il);
    gw_tensor_spec *t = &s->t[i];
    t->name = s->names[i];
    t->n_dims = ne2 > 1 ? 3 : ne1 > 1 ? 2 : 1;
    t->type = t->n_dims == 1 ? GGFIT_TYPE_F32 : GGFIT_TYPE_F16;
    t->ne[0] = ne0;
    t->ne[1] = ne1;
    t->ne[2] = ne2;
    t->ne[3] = 1;
}

/* The hparams every architecture here reads. */
void spec_init(model_spec *s, const char *arch)
{
    memset(s, 0, sizeof *s);
    s->arch = arch;
    key_u32(s, "block_count", NL);
    key_u32(s, "vocab_size", V);
    key_u32(s, "context_length", 4096);
    key_u32(s, "embedding_length", E);
    key_u32(s, "feed_forward_length", F);
    key_u32(s, "attention.head_count", NH);
    key_u32(s, "attention.head_count_kv", NKV);
    key_u32(s, "rope.dimension_count", HD);
    key_f32(s, "attention.layer_norm_rms_epsilon", 1e-6f);
}

void write_spec(const model_spec *s, gw *w)
{
    memset(w, 0, sizeof *w);
    gw_header(w, 3, s->n_t, s->n_kv + 4);
    gw_kv_str(w, "general.architecture", s->arch);
    gw_kv_str(w, "general.name", "tiny");
    gw_kv_u32(w, "general.alignment", 32);
    /* No tokenizer, as in the shipped layouts: llama.cpp then takes the
     * vocabulary size from <arch>.vocab_size. */
    gw_kv_str(w, "tokenizer.ggml.model", "none");
    for (size_t i = 0; i < s->n_kv; i++) {
        const kv *k = &s->kvs[i];
        if (k->kind == 'u') {
            gw_kv_u32(w, k->key, k->u);
        } else if (k->kind == 'f') {
            gw_kv_f32(w, k->key, k->f);
        } else if (k->kind == 'a') {
            gw_kv_arr_u32(w, k->key, k->a, k->u);
        } else if (k->kind == 'g') {   /* f32 array: a holds the bits */
            gw_key(w, k->key, GGFIT_GGUF_ARRAY);
            gw_u32(w, GGFIT_GGUF_FLOAT32);
            gw_u64(w, k->u);
            for (uint32_t j = 0; j < k->u; j++)
                gw_u32(w, k->a[j]);
        } else if (k->kind == 'r') {
            gw_key(w, k->key, GGFIT_GGUF_ARRAY);
            gw_u32(w, k->arr_type);
            gw_u64(w, k->u);
            gw_bytes(w, k->arr, (k->arr_type == GGFIT_GGUF_BOOL ? 1 : 4) * (size_t)k->u);
        } else if (k->kind == 'b') {
            gw_key(w, k->key, GGFIT_GGUF_BOOL);
            gw_u8(w, (uint8_t)k->u);
        } else {
            gw_kv_str(w, k->key, k->s);
        }
    }
    uint64_t off = 0;
    for (size_t i = 0; i < s->n_t; i++) {
        const gw_tensor_spec *t = &s->t[i];
        gw_tensor(w, t->name, t->n_dims, t->ne, t->type, off);
        uint64_t rows = (uint64_t)(t->ne[1] * t->ne[2] * t->ne[3]);
        off += (ggfit_row_bytes(t->type, (uint64_t)t->ne[0]) * rows + 31) / 32 * 32;
    }
    gw_pad(w, 32);
}

/* Separate Q/K/V, with biases when asked; the output projection. */
void attn_qkv(model_spec *s, int il, bool bias)
{
    tensor(s, "blk.%d.attn_q.weight", il, E, NH * HD, 1);
    tensor(s, "blk.%d.attn_k.weight", il, E, NKV * HD, 1);
    tensor(s, "blk.%d.attn_v.weight", il, E, NKV * HD, 1);
    if (bias) {
        tensor(s, "blk.%d.attn_q.bias", il, NH * HD, 1, 1);
        tensor(s, "blk.%d.attn_k.bias", il, NKV * HD, 1, 1);
        tensor(s, "blk.%d.attn_v.bias", il, NKV * HD, 1, 1);
    }
    tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
}

void ffn_swiglu(model_spec *s, int il)
{
    tensor(s, "blk.%d.ffn_gate.weight", il, E, F, 1);
    tensor(s, "blk.%d.ffn_down.weight", il, F, E, 1);
    tensor(s, "blk.%d.ffn_up.weight", il, E, F, 1);
}

void head(model_spec *s, bool output, bool output_bias)
{
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    if (output)
        tensor(s, "output.weight", 0, E, V, 1);
    if (output_bias)
        tensor(s, "output.bias", 0, V, 1, 1);
}

uint64_t total(const ggfit_mem *m)
{
    return m->model + m->context + m->compute;
}

/* Layers split between two devices and the CPU, -ngl 0 to all in turn on
 * one open model (whose kept graphs are re-targeted: rope factors change
 * copies) and each on a freshly opened one: the same bytes. */
void kept_equals_fresh(const model_spec *s, const gw *w, ggfit_model *kept,
                              uint32_t n_ctx)
{
    ggfit_device devs[2];
    size_t n_dev = 0;
    char *err = NULL;
    assert_int_equal(ggfit_devices_parse("rpc:8GiB,rpc:4GiB", devs, 2, &n_dev, &err), GGFIT_OK);
    for (int ngl = 0; ngl <= NL + 1; ngl++) {
        char value[16];
        snprintf(value, sizeof value, "%d", ngl);
        char flag[] = "-ngl";
        char *argv[] = { flag, value };
        int i = 0;
        ggfit_params p;
        ggfit_params_init(&p);
        p.n_ctx = n_ctx;
        assert_int_equal(ggfit_params_parse_arg(&p, 2, argv, &i, NULL, &err), GGFIT_OK);
        ggfit_projection a, b;
        if (ggfit_project(kept, &p, devs, n_dev, &a, NULL, &err) != GGFIT_OK)
            fail_msg("%s -ngl %d: %s", s->arch, ngl, err);
        ggfit_gguf *g = NULL;
        ggfit_model *fresh = NULL;
        assert_int_equal(ggfit_gguf_open_memory(w->data, w->len, "tiny.gguf", &g, &err), GGFIT_OK);
        assert_int_equal(ggfit_model_from_gguf(g, &fresh, &err), GGFIT_OK);
        if (ggfit_project(fresh, &p, devs, n_dev, &b, NULL, &err) != GGFIT_OK)
            fail_msg("%s -ngl %d: %s", s->arch, ngl, err);
        ggfit_model_free(fresh);
        for (uint32_t d = 0; d < a.n_devices; d++)
            if (total(&a.devices[d]) != total(&b.devices[d]))
                fail_msg("%s -ngl %d: device %u: %llu bytes on a kept graph, %llu on a fresh one",
                         s->arch, ngl, d, (unsigned long long)total(&a.devices[d]),
                         (unsigned long long)total(&b.devices[d]));
        assert_int_equal(total(&a.host), total(&b.host));
    }
}

/* s written into w and opened as a model (the caller frees both). */
static ggfit_model *open_spec(const model_spec *s, gw *w)
{
    write_spec(s, w);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w->data, w->len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    return m;
}

void project_one(const model_spec *s, uint32_t n_ctx, ggfit_projection *pr)
{
    gw w;
    ggfit_model *m = open_spec(s, &w);
    char *err = NULL;
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = n_ctx;
    if (ggfit_project(m, &p, NULL, 0, pr, NULL, &err) != GGFIT_OK)
        fail_msg("%s: %s", s->arch, err);
    ggfit_model_free(m);
    gw_free(&w);
}

bool same_projection(const model_spec *a, const model_spec *b, uint32_t n_ctx)
{
    ggfit_projection pa, pb;
    project_one(a, n_ctx, &pa);
    project_one(b, n_ctx, &pb);
    return pa.host.model == pb.host.model && pa.host.context == pb.host.context &&
           pa.host.compute == pb.host.compute;
}

void refused_with(const model_spec *s, const char *what)
{
    gw w;
    ggfit_model *m = open_spec(s, &w);
    char *err = NULL;
    ggfit_params p;
    ggfit_params_init(&p);
    ggfit_projection pr;
    ggfit_status rc = ggfit_project(m, &p, NULL, 0, &pr, NULL, &err);
    if (rc != GGFIT_EFORMAT || !err || !strstr(err, what))
        fail_msg("%s: expected a refusal naming '%s', got %s: %s", s->arch, what,
                 ggfit_status_str(rc), err ? err : "");
    ggfit_free(err);
    ggfit_model_free(m);
    gw_free(&w);
}

/* ------------------------------------------------------------------------
 * Written headers and llama.cpp's figures for them
 * ------------------------------------------------------------------------ */

void oracle_params(ggfit_params *p, const char *args)
{
    char buf[512], *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", args);
    for (char *tok = strtok(buf, " "); tok && argc < 64; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    ggfit_params_init(p);
    bool server = false;
    for (int i = 0; i < argc;) {
        char *err = NULL;
        if (!strcmp(argv[i], "--for") && i + 1 < argc && !strcmp(argv[i + 1], "server")) {
            server = true;
            i += 2;
            continue;
        }
        if (ggfit_params_parse_arg(p, argc, argv, &i, NULL, &err) != GGFIT_OK)
            fail_msg("%s: %s", args, err ? err : "unknown flag");
    }
    if (server)
        ggfit_params_server(p, -2);
}

/* The first of row's figures (name, weights, cache, compute) m differs in,
 * into why; false when none does. */
static bool row_differs(const ggfit_mem *m, const char *name, json_t *row, char *why, size_t n)
{
    static const char *const what[] = { "weights", "cache", "compute" };
    const uint64_t ours[] = { m->model, m->context, m->compute };
    const char *theirs = json_string_value(json_array_get(row, 0));
    if (!theirs || strcmp(theirs, name)) {
        snprintf(why, n, "a row of %s where llama.cpp printed %s", name, theirs ? theirs : "?");
        return true;
    }
    for (size_t i = 0; i < 3; i++) {
        uint64_t want = (uint64_t)json_integer_value(json_array_get(row, i + 1));
        if (ours[i] != want) {
            snprintf(why, n, "%s %s %llu bytes, llama.cpp printed %llu", name, what[i],
                     (unsigned long long)ours[i], (unsigned long long)want);
            return true;
        }
    }
    return false;
}

bool oracle_case(ggfit_model *m, json_t *c, uint32_t build, char *why, size_t n)
{
    static ggfit_device devs[GGFIT_MAX_DEVICES];
    static size_t n_devs;
    if (!n_devs)
        assert_int_equal(ggfit_devices_parse("rpc:81920MiB,rpc:81920MiB,rpc:81920MiB,rpc:81920MiB",
                                             devs, GGFIT_MAX_DEVICES, &n_devs, NULL), GGFIT_OK);
    const char *args = json_string_value(json_object_get(c, "args"));
    size_t nd = (size_t)json_integer_value(json_object_get(c, "devices"));
    json_t *rows = json_object_get(c, "rows");
    size_t n_rows = json_array_size(rows);
    assert_true(args && nd <= n_devs && n_rows >= 1 && n_rows <= nd + 1);
    ggfit_params p;
    oracle_params(&p, args);
    p.llama_build = build;
    ggfit_projection pr;
    char *err = NULL;
    if (ggfit_project(m, &p, devs, nd, &pr, NULL, &err) != GGFIT_OK) {
        snprintf(why, n, "refused: %s", err ? err : "");
        ggfit_free(err);
        return false;
    }
    /* llama.cpp lists the devices the model uses (-sm none: the main one),
     * then Host; so does the projection. */
    if (n_rows != pr.n_devices + 1) {
        snprintf(why, n, "%u devices used, llama.cpp used %zu", pr.n_devices, n_rows - 1);
        return false;
    }
    for (uint32_t d = 0; d < pr.n_devices; d++)
        if (row_differs(&pr.devices[d], devs[pr.device_of[d]].name, json_array_get(rows, d),
                        why, n))
            return false;
    return !row_differs(&pr.host, "Host", json_array_get(rows, n_rows - 1), why, n);
}

const char *oracle_path(uint32_t build)
{
    static char path[2][512];
    const char *d = getenv("GGFIT_ORACLE_DIR");
    char *out = path[build == ggfit_llama_version_supported(0)];
    snprintf(out, sizeof path[0], "%s/b%u/llamacpp.jsonl", d && *d ? d : "data/oracle", build);
    return out;
}

/* The recorded cases of each supported version, read once per test
 * program: model file -> array; freed at exit, where valgrind would count
 * them as a leak. */
#define N_ORACLE 4
static json_t *by_file[N_ORACLE];

static void oracle_cases_free(void)
{
    for (size_t v = 0; v < N_ORACLE; v++)
        json_decref(by_file[v]);
}

static json_t *oracle_cases(size_t v)
{
    if (by_file[v])
        return by_file[v];
    static bool registered;
    if (!registered)
        atexit(oracle_cases_free);
    registered = true;
    const char *path = oracle_path(ggfit_llama_version_supported(v));
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s: the figures the architecture tests are held to", path);
    by_file[v] = json_object();
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        json_error_t jerr;
        json_t *c = json_loads(line, 0, &jerr);
        if (!c)
            fail_msg("%s: %s", path, jerr.text);
        const char *file = json_string_value(json_object_get(c, "model"));
        assert_non_null(file);
        json_t *list = json_object_get(by_file[v], file);
        if (!list) {
            list = json_array();
            json_object_set_new(by_file[v], file, list);
        }
        json_array_append_new(list, c);
    }
    fclose(f);
    return by_file[v];
}

/* Every supported version's cases for file, each projected with that
 * version's rules. */
int oracle_check(ggfit_model *m, const char *file, const char *where)
{
    int n = 0;
    uint32_t build;
    for (size_t v = 0; v < N_ORACLE && (build = ggfit_llama_version_supported(v)); v++) {
        json_t *list = json_object_get(oracle_cases(v), file);
        size_t i;
        json_t *c;
        json_array_foreach(list, i, c) {
            char why[256];
            if (!oracle_case(m, c, build, why, sizeof why))
                fail_msg("%s (the spec at %s), b%u, %lld devices, %s: %s", file, where, build,
                         (long long)json_integer_value(json_object_get(c, "devices")),
                         json_string_value(json_object_get(c, "args")), why);
        }
        n += (int)json_array_size(list);
    }
    return n;
}

/* data/tiny/, or the folder GGFIT_TINY names. */
static const char *tiny_dir(void)
{
    const char *d = getenv("GGFIT_TINY");
    return d && *d ? d : "data/tiny";
}

/* Whether data/tiny/<file> holds w's bytes; *at: where they first differ,
 * -1 when there is no such file. */
static bool tiny_same(const char *file, const gw *w, long *at)
{
    char path[768];
    snprintf(path, sizeof path, "%s/%s", tiny_dir(), file);
    FILE *f = fopen(path, "rb");
    *at = -1;
    if (!f)
        return false;
    size_t i = 0;
    int ch;
    while ((ch = getc(f)) != EOF && i < w->len && (uint8_t)ch == w->data[i])
        i++;
    fclose(f);
    *at = (long)i;
    return ch == EOF && i == w->len;
}

/* A file of data/tiny/ other than `not` that holds w's bytes, into found;
 * false if none. */
static bool tiny_find(const gw *w, const char *not, char *found, size_t n)
{
    DIR *d = opendir(tiny_dir());
    if (!d)
        return false;
    bool hit = false;
    for (struct dirent *e; !hit && (e = readdir(d));) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, not))
            continue;
        long at;
        hit = tiny_same(e->d_name, w, &at);
        if (hit)
            snprintf(found, n, "%s", e->d_name);
    }
    closedir(d);
    return hit;
}

void check_recorded(const char *file, const gw *w, ggfit_model *m, const char *where)
{
    long at;
    char found[256];
    if (tiny_same(file, w, &at)) {
        /* A second projection of a spec writes a copy, whose figures
         * were recorded under the first name. */
        if (!oracle_check(m, file, where) && tiny_find(w, file, found, sizeof found))
            oracle_check(m, found, where);
        return;
    }
    /* Numbered otherwise (a spec added or removed before it, or an
     * earlier test of this program that failed and wrote fewer): its own
     * file's figures still hold; test_tiny reports the numbering. */
    if (tiny_find(w, file, found, sizeof found)) {
        printf("note: the spec at %s writes %s's bytes, numbered %s here\n", where, found, file);
        oracle_check(m, found, where);
        return;
    }
    if (at < 0)   /* a new spec: test_tiny asks for its file */
        return;
    fail_msg("the spec at %s writes a header no file of %s holds (%s differs from byte %ld): "
             "the spec changed; write data/tiny/ again (tools/write_tiny.py) and record "
             "llama.cpp's figures for it", where, tiny_dir(), file, at);
}

/* Projects the model under -fa on/off, on one RPC device and on the CPU:
 * the graph must build every time. Then the figures llama.cpp printed for
 * the file the spec writes, and kept_equals_fresh. Returns the compute
 * bytes of the last of the first. */
uint64_t project_all_at(const model_spec *s, uint32_t n_ctx, const char *where)
{
    gw w;
    write_spec(s, &w);
    /* The file's name: the architecture and how many headers this test
     * program wrote before it (data/tiny/ and the recorded figures name
     * the files so; GGFIT_ARCHS_DUMP=DIR keeps them). */
    static int n_written;
    char file[128];
    snprintf(file, sizeof file, "%s-%d.gguf", s->arch, n_written++);
    assert_int_equal(gw_dump(&w, "GGFIT_ARCHS_DUMP", file, where), 0);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n_dev = 0;
    assert_int_equal(ggfit_devices_parse("rpc:8GiB", devs, GGFIT_MAX_DEVICES, &n_dev, &err),
                     GGFIT_OK);
    assert_int_equal(n_dev, 1);
    uint64_t compute = 0;
    static const int fas[] = { GGFIT_FA_AUTO, GGFIT_FA_ON, GGFIT_FA_OFF };
    for (size_t f = 0; f < sizeof fas / sizeof fas[0]; f++)
        for (size_t nd = 0; nd <= 1; nd++) {
            ggfit_params p;
            ggfit_params_init(&p);
            p.n_ctx = n_ctx;
            p.flash_attn = fas[f];
            ggfit_projection pr;
            if (ggfit_project(m, &p, nd ? devs : NULL, nd, &pr, NULL, &err) != GGFIT_OK)
                fail_msg("%s (the spec at %s): %s", file, where, err);
            if (pr.compute_estimated)
                fail_msg("%s (the spec at %s), fa %d, %zu devices: compute estimated: %s", file,
                         where, fas[f], nd, pr.warning);
            compute = pr.host.compute;
            for (uint32_t d = 0; d < pr.n_devices; d++)
                compute += pr.devices[d].compute;
            assert_true(compute > 0);
        }
    check_recorded(file, &w, m, where);
    kept_equals_fresh(s, &w, m, n_ctx);
    ggfit_model_free(m);   /* and g, which it owns */
    gw_free(&w);
    return compute;
}
