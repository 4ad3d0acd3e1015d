/*
 * test_verdict.c - the whole machine's verdict beside llama.cpp's
 * decision: host memory, unified memory, Metal's mapped span, the free
 * memory a real driver leaves, the refit when the host decides, and the
 * exit statuses.
 */
#include "test_util.h"
#include "gguf_writer.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* A plan as the CLI makes it, from an argv without the program name. */
static int plan_of(ggfit_plan *pl, const char *const *args)
{
    static char store[32][512];
    char *argv[32];
    int argc = 0;
    snprintf(store[argc], sizeof store[0], "ggfit");
    argv[argc] = store[argc];
    argc++;
    for (; *args && argc < 32; args++, argc++) {
        snprintf(store[argc], sizeof store[0], "%s", *args);
        argv[argc] = store[argc];
    }
    ggfit_request r;
    ggfit_request_init(&r);
    char *err = NULL;
    for (int i = 1; i < argc;)
        if (ggfit_request_parse_arg(&r, argc, argv, &i, NULL, &err)) {
            fprintf(stderr, "%s\n", err);
            ggfit_free(err);
            return -1;
        }
    int rc = ggfit_request_plan(&r, pl, &err);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        ggfit_free(err);
    }
    return rc;
}

static const ggfit_pool *pool(const ggfit_verdict *v, ggfit_pool_kind k)
{
    for (uint32_t i = 0; i < v->n_pools; i++)
        if (v->pools[i].kind == k)
            return &v->pools[i];
    return NULL;
}

/* llama.cpp says fits on a 3090 (experts in system RAM); 16 GiB of RAM
 * cannot hold them: fits on the GPU, not in host memory, exit 3. */
static void test_host_short(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "gpt-oss-120b-mxfp4.gguf");
    static ggfit_plan pl;
    const char *args[] = { "-m", m, "--gpu", "rtx-3090", "--host-mem", "16GiB", NULL };
    assert_int_equal(plan_of(&pl, args), 0);
    assert_int_not_equal(pl.fit.status, GGFIT_FIT_FAILED);   /* llama.cpp's decision */
    assert_int_equal(pl.verdict.status, GGFIT_VERDICT_HOST);
    const ggfit_pool *h = pool(&pl.verdict, GGFIT_POOL_HOST);
    assert_non_null(h);
    assert_true(h->used > 30000 * MiB);
    assert_int_equal(h->total, 16 * GiB);
    assert_true(h->free < h->total);            /* the system keeps some */
    assert_int_equal(h->short_by, h->used - h->free);
    assert_int_equal(pl.verdict.pools[pl.verdict.first_short].kind, GGFIT_POOL_HOST);
    assert_false(pl.has_alternative);           /* the context is at -fitc already */
    assert_int_equal(ggfit_plan_exit_status(&pl), 3);
    char *json = ggfit_plan_json(&pl);
    assert_non_null(strstr(json, "\"status\": \"host_short\""));
    assert_non_null(strstr(json, "\"short\": \"Host\""));
    ggfit_free(json);
    ggfit_plan_free(&pl);

    /* With the memory given as TOTAL/FREE, it fits. */
    const char *big[] = { "-m", m, "--gpu", "rtx-3090", "--host-mem", "128GiB/100GiB", NULL };
    assert_int_equal(plan_of(&pl, big), 0);
    assert_int_equal(pl.verdict.status, GGFIT_VERDICT_FITS);
    assert_int_equal(pool(&pl.verdict, GGFIT_POOL_HOST)->free, 100 * GiB);
    assert_int_equal(ggfit_plan_exit_status(&pl), 0);
    ggfit_plan_free(&pl);
}

/* A huge context set by the user on a host-resident cache: llama.cpp's fit
 * keeps -c; the verdict says no. */
static void test_huge_context(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "qwen3-0.6b-f16.gguf");
    static ggfit_plan pl;
    const char *args[] = { "-m", m, "--gpu", "none", "--host-mem", "64GiB", "-c", "100000000",
                           "-fitp", "on", NULL };
    assert_int_equal(plan_of(&pl, args), 0);
    assert_int_equal(pl.verdict.status, GGFIT_VERDICT_NO_FIT);   /* no GPU: host is all */
    assert_true(pool(&pl.verdict, GGFIT_POOL_HOST)->short_by > 1000 * GiB);
    assert_int_equal(ggfit_plan_exit_status(&pl), 1);
    ggfit_plan_free(&pl);
}

/* When the host decides, the largest context that the whole machine holds
 * is proposed beside llama.cpp's decision (a KV cache kept on the host). */
static void test_refit_context(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "llama-3.1-8b-Q4_K_M.gguf");
    static ggfit_plan pl;
    const char *args[] = { "-m", m, "--gpu", "rtx-3060-12gb", "--host-mem", "16GiB/14GiB",
                           "-nkvo", NULL };
    assert_int_equal(plan_of(&pl, args), 0);
    assert_int_equal(pl.verdict.status, GGFIT_VERDICT_HOST);
    assert_true(pl.has_alternative);
    assert_int_equal(pl.alternative_verdict.status, GGFIT_VERDICT_FITS);
    uint32_t c = pl.alternative.projection.n_ctx;
    assert_true(c < pl.fit.projection.n_ctx && c >= 4096);
    assert_int_equal(ggfit_plan_exit_status(&pl), 0);
    char *a = ggfit_plan_args(&pl);
    char want[32];
    snprintf(want, sizeof want, "-c %u ", c);
    assert_non_null(strstr(a, want));
    ggfit_free(a);
    ggfit_plan_free(&pl);

    /* 256 tokens more no longer fit in the host: c is the largest. */
    char cs[16];
    snprintf(cs, sizeof cs, "%u", c + 256);
    const char *more[] = { "-m", m, "--gpu", "rtx-3060-12gb", "--host-mem", "16GiB/14GiB",
                           "-nkvo", "-c", cs, NULL };
    assert_int_equal(plan_of(&pl, more), 0);
    assert_int_equal(pl.verdict.status, GGFIT_VERDICT_HOST);
    assert_false(pl.has_alternative);   /* the user's -c is kept */
    ggfit_plan_free(&pl);
}

/* Catalog and bare-size GPUs get a real driver's free memory, unless
 * /FREE is given; Metal and rpc take theirs as they are. */
static void test_driver_free(void **state)
{
    (void)state;
    ggfit_device d[4];
    size_t n;
    char *err = NULL;
    assert_int_equal(ggfit_devices_parse("rtx-3090,cuda:24GiB,cuda:24GiB/24GiB,rpc:24GiB", d, 4,
                                         &n, &err), 0);
    assert_int_equal(d[0].free, 24077 * MiB);
    assert_non_null(strstr(d[0].assumed, "24077 of 24576"));
    assert_int_equal(d[1].free, 24077 * MiB);
    assert_int_equal(d[2].free, 24 * GiB);
    assert_string_equal(d[2].assumed, "");
    assert_int_equal(d[3].free, 24 * GiB);
    assert_string_equal(d[3].assumed, "");
    assert_int_equal(ggfit_devices_parse("m3-pro-18gb", d, 4, &n, &err), 0);
    assert_int_equal(d[0].free, d[0].total);
    assert_true(d[0].unified);
    assert_int_equal(d[0].system_memory, 18 * GiB);
    assert_int_equal(ggfit_driver_free(GGFIT_BACKEND_ROCM, 16 * GiB, NULL, 0),
                     16 * GiB - 499 * MiB);
}

/* A Mac from the catalog is a whole machine: its memory is the host's, and
 * its CPU decides repacking (ARM, not this machine's x86). */
static void test_mac_host(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "qwen3-14b-Q4_K_M.gguf");
    static ggfit_plan pl;
    const char *args[] = { "-m", m, "--gpu", "m1-8gb", "-fitp", "on", NULL };
    assert_int_equal(plan_of(&pl, args), 0);
    assert_int_equal(pl.host.total, 8 * GiB);
    assert_true(pl.host.cpu_features & GGFIT_CPU_NEON_DOTPROD);
    assert_false(pl.host.cpu_features & (GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512));
    assert_false(pl.host.cpu_features & GGFIT_CPU_NEON_I8MM);   /* M1 */
    assert_int_equal(pl.verdict.status, GGFIT_VERDICT_NO_FIT);
    ggfit_plan_free(&pl);

    /* Fitted: llama.cpp's fit moves layers to the CPU, which on a Mac is the
     * same memory: the model still does not fit in 8 GB. */
    const char *fit[] = { "-m", m, "--gpu", "m1-8gb", NULL };
    assert_int_equal(plan_of(&pl, fit), 0);
    assert_int_not_equal(pl.fit.status, GGFIT_FIT_FAILED);
    assert_int_equal(pl.verdict.status, GGFIT_VERDICT_NO_FIT);
    const ggfit_pool *u = pool(&pl.verdict, GGFIT_POOL_UNIFIED);
    assert_non_null(u);
    assert_true(u->short_by > 0);
    assert_int_equal(pl.verdict.pools[pl.verdict.first_short].kind, GGFIT_POOL_UNIFIED);
    ggfit_plan_free(&pl);
}

/* On unified memory moving the experts "to the CPU" frees nothing: the
 * pool's sum is the same, and so is the verdict. */
static void test_unified_experts(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "qwen3-30b-a3b-Q4_K_M.gguf");
    static ggfit_plan a, b;
    const char *gpu[] = { "-m", m, "--gpu", "m3-pro-18gb", "-c", "4096", "-fitp", "on",
                          "--no-mmap", NULL };
    const char *cpu[] = { "-m", m, "--gpu", "m3-pro-18gb", "-c", "4096", "-fitp", "on",
                          "--no-mmap", "--cpu-moe", "--no-repack", NULL };
    assert_int_equal(plan_of(&a, gpu), 0);
    assert_int_equal(plan_of(&b, cpu), 0);
    const ggfit_pool *da = &a.verdict.pools[0], *db = &b.verdict.pools[0];
    assert_true(da->short_by > 0);      /* the experts do not fit in Metal... */
    assert_int_equal(db->short_by, 0);  /* ...and in system RAM they do, for llama.cpp */
    assert_int_equal(a.verdict.status, GGFIT_VERDICT_NO_FIT);
    assert_int_equal(b.verdict.status, GGFIT_VERDICT_NO_FIT);   /* but not for the Mac */
    const ggfit_pool *ua = pool(&a.verdict, GGFIT_POOL_UNIFIED);
    const ggfit_pool *ub = pool(&b.verdict, GGFIT_POOL_UNIFIED);
    assert_true(ub->short_by > 0);
    /* The same bytes either way, give or take the compute buffers. */
    assert_true(ua->used > ub->used - 512 * MiB && ua->used < ub->used + 512 * MiB);
    ggfit_plan_free(&a);
    ggfit_plan_free(&b);
}

/* An APU from the catalog is a whole machine too: one pool, and the
 * experts' place does not change what it holds. */
static void test_apu_pool(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "gpt-oss-120b-mxfp4.gguf");
    static ggfit_plan a, b;
    const char *gpu[] = { "-m", m, "--gpu", "ryzen-ai-max-395-128gb", "-c", "32768", "-fitp",
                          "on", "--no-repack", NULL };
    const char *cpu[] = { "-m", m, "--gpu", "ryzen-ai-max-395-128gb", "-c", "32768", "-fitp",
                          "on", "--no-repack", "--cpu-moe", NULL };
    assert_int_equal(plan_of(&a, gpu), 0);
    assert_int_equal(plan_of(&b, cpu), 0);
    assert_int_equal(a.host.total, 128 * GiB);
    assert_true(a.host.cpu_features & GGFIT_CPU_AVX2);
    const ggfit_pool *ua = pool(&a.verdict, GGFIT_POOL_UNIFIED);
    const ggfit_pool *ub = pool(&b.verdict, GGFIT_POOL_UNIFIED);
    assert_non_null(ua);
    assert_non_null(ub);
    assert_true(a.verdict.pools[0].used > 4 * b.verdict.pools[0].used);   /* moved */
    assert_true(ua->used > ub->used - 1024 * MiB && ua->used < ub->used + 1024 * MiB);
    assert_int_equal(a.verdict.status, b.verdict.status);
    ggfit_plan_free(&a);
    ggfit_plan_free(&b);

    /* DGX Spark: an integrated CUDA device reports the system's memory. */
    ggfit_device d;
    size_t n;
    char *err = NULL;
    assert_int_equal(ggfit_devices_parse("dgx-spark", &d, 1, &n, &err), 0);
    assert_true(d.unified);
    assert_int_equal(d.free, ggfit_host_free_assumed(128 * GiB, NULL, 0));
}

/* The buffer type named name in a projection, or NULL. */
static const ggfit_buft_mem *buft(const ggfit_projection *pr, const char *name)
{
    for (uint32_t b = 0; b < pr->n_bufts; b++)
        if (!strcmp(pr->bufts[b].name, name))
            return &pr->bufts[b];
    return NULL;
}

/* A described CPU with AMX (a Xeon since Sapphire Rapids): llama.cpp puts
 * the F16 matrices of the CPU's layers in the AMX buffer type, which its
 * table leaves out of the Host row; the verdict counts them as the host
 * memory they are. Qwen3 0.6B on the CPU alone, llama-fit-params -fitp on
 * with default flags: an AMX machine's llama.cpp printed Host model
 * 311,427,072 B (token_embd and the norms). AMX holds the 7 matrices of
 * each of the 28 blocks, 31,457,280 B a block, and the output layer's copy
 * of the tied token_embd (311,164,928 B), which AMX takes too. */
static void test_amx_cpu(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "qwen3-0.6b-f16.gguf");
    static ggfit_plan amx, plain, nr;
    const char *a[] = { "-m", m, "--gpu", "none", "--cpu", "sapphire-rapids", "-fitp", "on",
                        "--host-mem", "64GiB/60GiB", "--for", "fit-params", NULL };
    const char *p[] = { "-m", m, "--gpu", "none", "-fitp", "on", "--host-mem", "64GiB/60GiB",
                        "--for", "fit-params", NULL };
    const char *n[] = { "-m", m, "--gpu", "none", "--cpu", "sapphire-rapids", "-fitp", "on",
                        "--host-mem", "64GiB/60GiB", "--for", "fit-params", "--no-repack",
                        NULL };
    assert_int_equal(plan_of(&amx, a), 0);
    assert_int_equal(plan_of(&plain, p), 0);
    assert_int_equal(plan_of(&nr, n), 0);
    assert_int_equal(amx.host.cpu_features,
                     GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512 | GGFIT_CPU_AMX);
    const ggfit_projection *pa = &amx.projection, *pp = &plain.projection;
    assert_int_equal(pa->host.model, 311427072);                /* llama.cpp's Host row */
    assert_int_equal(pp->host.model, 1192230912);               /* no AMX: all of it */
    const ggfit_buft_mem *x = buft(pa, "AMX");
    assert_non_null(x);
    assert_false(x->is_host);
    assert_int_equal(x->device, -1);
    assert_int_equal(x->mem.model, 28 * 31457280ull + 311164928ull);
    assert_int_equal(pa->cpu_extra.model, x->mem.model);
    assert_null(buft(pp, "AMX"));
    /* The cache and the compute buffers do not move. */
    assert_int_equal(pa->host.context, pp->host.context);
    assert_int_equal(pa->host.compute, pp->host.compute);
    /* The verdict's host pool: the Host row and AMX; the tied copy is all
     * AMX adds to the host's bytes. */
    const ggfit_pool *ha = pool(&amx.verdict, GGFIT_POOL_HOST);
    const ggfit_pool *hp = pool(&plain.verdict, GGFIT_POOL_HOST);
    assert_int_equal(ha->used, pa->host.model + pa->host.context + pa->host.compute +
                               x->mem.model);
    assert_int_equal(ha->used, hp->used + 311164928ull);
    assert_int_equal(ha->mapped, 311427072);   /* AMX is allocated, never mapped */
    char *t = ggfit_projection_text(pa, amx.devices);
    assert_non_null(strstr(t, "\n  AMX    "));   /* a row of its own, under Host */
    ggfit_free(t);
    /* --no-repack: no extra buffer type at all, AMX included. */
    assert_int_equal(nr.projection.host.model, 1192230912);
    assert_null(buft(&nr.projection, "AMX"));
    ggfit_plan_free(&amx);
    ggfit_plan_free(&plain);
    ggfit_plan_free(&nr);
}

/* Projects a small llama of type t on the CPU alone with features f. */
static void project_tiny(uint32_t t, uint32_t f, ggfit_projection *pr)
{
    gw w = {0};
    gw_tiny_model(&w, "llama", 2, 256, 768, 1000, t);
    ggfit_gguf *g;
    ggfit_model *m;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "tiny.gguf", &g, &err), 0);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), 0);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 256;
    p.cpu_features = f;
    assert_int_equal(ggfit_project(m, &p, NULL, 0, pr, NULL, &err), 0);
    ggfit_model_free(m);
    gw_free(&w);
}

/* AMX's own bytes (amx/mmq.cpp ggml_backend_amx_get_alloc_size): a block
 * of each row packed for its kernels, with what the kernel keeps beside it
 * (Q8_0 4 B, Q4_K 4, IQ4_XS 2, Q4_0 and Q6_K none; F16 unpacked); which
 * matrices it takes (32 rows at a time: not the 1000-row output, which
 * CPU_REPACK takes where it can, after AMX); BF16 not at all. Two blocks
 * of four 256x256 matrices, two 256x768 and one 768x256: 2560 rows of 256
 * columns and 256 of 768 per block. */
static void test_amx_types(void **state)
{
    (void)state;
    static const struct {
        uint32_t type;
        uint64_t row256;          /* packed bytes of a 256-column row */
    } cases[] = {
        { GGFIT_TYPE_Q8_0, 8 * (34 + 4) },
        { GGFIT_TYPE_Q4_K, 144 + 4 },
        { GGFIT_TYPE_IQ4_XS, 136 + 2 },
        { GGFIT_TYPE_Q6_K, 210 },
        { GGFIT_TYPE_Q4_0, 8 * 18 },
        { GGFIT_TYPE_F16, 512 },
    };
    const uint32_t amx = GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512 | GGFIT_CPU_AMX;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ggfit_projection pr;
        project_tiny(cases[i].type, amx, &pr);
        const ggfit_buft_mem *x = buft(&pr, "AMX");
        assert_non_null(x);
        assert_int_equal(x->mem.model, 2 * (2560 + 256 * 3) * cases[i].row256);
        /* The output's 1000 rows: CPU_REPACK for Q4_0 and Q4_K (AVX2),
         * else CPU. */
        const ggfit_buft_mem *r = buft(&pr, "CPU_REPACK");
        uint32_t ty = cases[i].type;
        if (ty == GGFIT_TYPE_Q4_0 || ty == GGFIT_TYPE_Q4_K)
            assert_int_equal(r ? r->mem.model : 0, ggfit_row_bytes(ty, 256) * 1000);
        else
            assert_null(r);
        /* AMX is first in the list: without it, CPU_REPACK takes the
         * blocks' Q4_0 and Q4_K matrices as before. */
        ggfit_projection no;
        project_tiny(cases[i].type, GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512, &no);
        assert_null(buft(&no, "AMX"));
        assert_int_equal(pr.host.context, no.host.context);
    }
    ggfit_projection bf;
    project_tiny(GGFIT_TYPE_BF16, amx, &bf);
    assert_null(buft(&bf, "AMX"));

    /* Experts are MUL_MAT_ID's, which AMX does not run: CPU_REPACK takes
     * the Q4_K ones, AMX the attention's matrices beside them. */
    char path[512], *err = NULL;
    model_path(path, sizeof path, "qwen3-30b-a3b-Q4_K_M.gguf");
    ggfit_model *m;
    assert_int_equal(ggfit_model_open(path, &m, &err), 0);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 4096;
    p.cpu_features = amx;
    uint64_t nt = ggfit_model_n_tensors(m);
    int32_t *place = malloc(nt * sizeof *place);
    ggfit_projection pr;
    assert_int_equal(ggfit_project(m, &p, NULL, 0, &pr, place, &err), 0);
    const ggfit_buft_mem *x = buft(&pr, "AMX"), *r = buft(&pr, "CPU_REPACK");
    assert_true(x && r);
    for (uint64_t i = 0; i < nt; i++) {
        const ggfit_tensor_info *t = ggfit_model_tensor(m, i)->info;
        if (strstr(t->name, "_exps.") && t->type == GGFIT_TYPE_Q4_K)
            assert_ptr_equal(&pr.bufts[place[i]], r);
        if (!strcmp(t->name, "blk.0.attn_q.weight"))
            assert_ptr_equal(&pr.bufts[place[i]], x);
    }
    free(place);
    ggfit_model_free(m);
}

/* Metal maps one span per file: output first and blocks last maps the
 * whole file for a partial offload; stored last, only what it holds. */
static ggfit_model *layout(bool output_first)
{
    gw w = {0};
    gw_tiny_model_order(&w, "llama", 32, 4096, 14336, 128256, GGFIT_TYPE_Q4_K, output_first);
    ggfit_gguf *g;
    ggfit_model *m;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "layout.gguf", &g, &err), 0);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), 0);
    gw_free(&w);
    return m;
}

static void metal_verdict(ggfit_model *m, ggfit_params *p, ggfit_verdict *v)
{
    ggfit_device d;
    size_t n;
    char *err = NULL;
    assert_int_equal(ggfit_devices_parse("m3-max-64gb", &d, 1, &n, &err), 0);
    ggfit_host_mem host = { 64 * GiB, 60 * GiB, 0, "test" };
    ggfit_fit_options o;
    ggfit_fit_options_init(&o);
    ggfit_projection pr;
    assert_int_equal(ggfit_project(m, p, &d, 1, &pr, NULL, &err), 0);
    assert_int_equal(ggfit_verdict_of(m, p, &pr, &d, 1, &host, &o, v, &err), 0);
}

static void test_metal_span(void **state)
{
    (void)state;
    ggfit_model *first = layout(true), *last = layout(false);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 4096;
    p.n_gpu_layers = 2;   /* the last block and the output layer */
    ggfit_verdict *v = malloc(sizeof *v);

    metal_verdict(first, &p, v);
    assert_int_equal(v->n_spans, 1);
    uint64_t tensors = v->metal_tensors;
    assert_true(v->metal_mapped > 3 * GiB);              /* nearly the whole file */
    assert_true(v->metal_mapped > 5 * tensors);
    assert_true(v->n_fixes >= 2);
    assert_int_equal(v->fixes[0].kind, GGFIT_FIX_OUTPUT_CPU);
    assert_true(v->fixes[0].mapped < tensors);           /* the block alone */
    assert_int_equal(v->fixes[v->n_fixes - 1].kind, GGFIT_FIX_NO_MMAP);
    assert_int_equal(v->fixes[v->n_fixes - 1].mapped, tensors);
    assert_int_equal(v->fixes[1].kind, GGFIT_FIX_REORDER);
    assert_true(v->fixes[1].mapped <= tensors);
    /* The device pool holds the span, not the tensors. */
    assert_true(v->pools[0].used >= v->metal_mapped);

    /* The first fix applied: the span ends at the offloaded block. */
    ggfit_params q = p;
    snprintf(q.overrides[0].pattern, sizeof q.overrides[0].pattern, "^output");
    snprintf(q.overrides[0].buffer, sizeof q.overrides[0].buffer, "CPU");
    q.n_overrides = 1;
    q.set_overrides = true;
    uint64_t fixed = v->fixes[0].mapped;
    metal_verdict(first, &q, v);
    assert_int_equal(v->metal_mapped, fixed);
    assert_int_equal(v->n_fixes, 0);
    assert_true(v->metal_mapped < v->metal_tensors + 64 * MiB);

    metal_verdict(last, &p, v);
    assert_int_equal(v->n_spans, 1);
    assert_true(v->metal_mapped >= v->metal_tensors);
    assert_true(v->metal_mapped < v->metal_tensors + 64 * MiB);   /* contiguous */
    assert_int_equal(v->n_fixes, 0);

    /* Without mmap nothing is mapped: the tensors' own bytes. */
    p.use_mmap = false;
    metal_verdict(first, &p, v);
    assert_int_equal(v->n_spans, 0);
    assert_int_equal(v->metal_mapped, 0);
    assert_int_equal(v->pools[0].mapped, 0);

    free(v);
    ggfit_model_free(first);
    ggfit_model_free(last);
}

/* Expert offload shrinks nothing that Metal maps: the experts lie inside
 * the span of the blocks. */
static void test_metal_span_cpu_moe(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "gpt-oss-20b-mxfp4.gguf");
    static ggfit_plan a, b;
    const char *all[] = { "-m", m, "--gpu", "m3-pro-18gb", "-c", "4096", "-fitp", "on", NULL };
    const char *moe[] = { "-m", m, "--gpu", "m3-pro-18gb", "-c", "4096", "-fitp", "on",
                          "--cpu-moe", NULL };
    assert_int_equal(plan_of(&a, all), 0);
    assert_int_equal(plan_of(&b, moe), 0);
    assert_true(b.verdict.metal_tensors < a.verdict.metal_tensors / 4);
    assert_true(b.verdict.metal_mapped > a.verdict.metal_mapped * 9 / 10);
    assert_true(b.verdict.n_fixes >= 1);
    assert_int_equal(b.verdict.fixes[b.verdict.n_fixes - 1].kind, GGFIT_FIX_NO_MMAP);
    ggfit_plan_free(&a);
    ggfit_plan_free(&b);
}

/* Free after loading, as llama.cpp's breakdown means it, in the table. */
static void test_free_after(void **state)
{
    (void)state;
    char m[512];
    model_path(m, sizeof m, "qwen3-14b-f16.gguf");
    static ggfit_plan pl;
    const char *args[] = { "-m", m, "--gpu", "8GiB/8GiB", "-fitp", "on", "-c", "4096",
                           "--host-mem", "64GiB/60GiB", NULL };
    assert_int_equal(plan_of(&pl, args), 0);
    const ggfit_pool *d = &pl.verdict.pools[0];
    assert_true(d->free_after < 0);
    assert_int_equal(pl.verdict.status, GGFIT_VERDICT_NO_FIT);
    char *t = ggfit_plan_text(&pl, false);
    char want[64];
    snprintf(want, sizeof want, "%9.0f", (double)d->free_after / MiB);
    assert_non_null(strstr(t, want));
    assert_non_null(strstr(t, "verdict: does not fit: CUDA0"));
    ggfit_free(t);
    ggfit_plan_free(&pl);
}

/* Whether the words a and b name the same flag (llama.cpp's two names). */
static bool same_flag(const char *a, const char *b)
{
    static const char *const names[][2] = { { "-cmoe", "--cpu-moe" }, { "-ot", "--override-tensor" },
                                           { "-ncmoe", "--n-cpu-moe" } };
    if (!strcmp(a, b))
        return true;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if ((!strcmp(a, names[k][0]) || !strcmp(a, names[k][1])) &&
            (!strcmp(b, names[k][0]) || !strcmp(b, names[k][1])))
            return true;
    return false;
}

/* A change applied as a user would: the command line without the flags it
 * replaces (c->drop), then its words; planned again, the whole machine
 * must hold it. */
static void apply_change(const char *const *args, const ggfit_change *c)
{
    static char words[2][512];
    const char *w[48];
    size_t k = 0;
    snprintf(words[0], sizeof words[0], "%s", c->drop);
    snprintf(words[1], sizeof words[1], "%s", c->flags);
    for (; *args && k < 40; args++) {
        bool dropped = false;
        char *save = NULL, tmp[512];
        snprintf(tmp, sizeof tmp, "%s", words[0]);
        for (char *t = strtok_r(tmp, " ", &save); t && !dropped; t = strtok_r(NULL, " ", &save)) {
            if (!same_flag(*args, t))
                continue;
            bool valued = strcmp(t, "-cmoe") != 0;   /* -ot PATTERN=BUF, -ncmoe N */
            char *v = valued ? strtok_r(NULL, " ", &save) : NULL;
            dropped = !valued || (args[1] && v && !strcmp(args[1], v));
        }
        if (dropped) {
            args += strcmp(*args, "-cmoe") && strcmp(*args, "--cpu-moe");
            continue;
        }
        w[k++] = *args;
    }
    char *save = NULL;
    for (char *t = strtok_r(words[1], " ", &save); t && k < 46; t = strtok_r(NULL, " ", &save))
        w[k++] = t;
    w[k] = NULL;
    static ggfit_plan pl;
    assert_int_equal(plan_of(&pl, w), 0);
    if (ggfit_plan_exit_status(&pl) != 0)
        fail_msg("'%s' in place of '%s', applied, does not fit: %s", c->flags, c->drop,
                 ggfit_verdict_summary(&pl.verdict, (char[320]){0}, 320));
    ggfit_plan_free(&pl);
}

/* Flags as constraints: with a set flag that stops llama.cpp's fit and
 * flags that do not fit, the nearest changes that fit, each one checked
 * here by projecting it and judging the whole machine, and by applying it
 * to the command line. */
static void check_changes(const char *model, const char *const *flags, size_t want_min)
{
    char m[512];
    model_path(m, sizeof m, model);
    const char *args[24];
    size_t k = 0;
    args[k++] = "-m";
    args[k++] = m;
    for (; *flags; flags++)
        args[k++] = *flags;
    args[k] = NULL;
    static ggfit_plan pl;
    assert_int_equal(plan_of(&pl, args), 0);
    assert_int_not_equal(pl.verdict.status, GGFIT_VERDICT_FITS);
    assert_true(pl.verdict.first_short >= 0);
    assert_true(pl.verdict.pools[pl.verdict.first_short].short_by > 0);
    assert_true(pl.n_changes >= want_min);
    for (size_t i = 0; i < pl.n_changes; i++) {
        ggfit_projection pr;
        ggfit_verdict *v = malloc(sizeof *v);
        ggfit_model *mo;
        char *err = NULL;
        assert_int_equal(ggfit_model_open(m, &mo, &err), 0);
        assert_int_equal(ggfit_project(mo, &pl.changes[i].params, pl.devices, pl.n_devices, &pr,
                                       NULL, &err), 0);
        assert_int_equal(ggfit_verdict_of(mo, &pl.changes[i].params, &pr, pl.devices,
                                          pl.n_devices, &pl.host, &pl.fit_options, v, &err), 0);
        if (v->status != GGFIT_VERDICT_FITS)
            fail_msg("%s: '%s' does not fit: %s", model, pl.changes[i].flags,
                     ggfit_verdict_summary(v, (char[320]){0}, 320));
        if (i)   /* fewest changes first */
            assert_true(pl.changes[i].n_changes >= pl.changes[i - 1].n_changes);
        free(v);
        ggfit_model_free(mo);
    }
    static ggfit_change changes[GGFIT_MAX_CHANGES];   /* pl is planned again below */
    size_t n_changes = pl.n_changes;
    memcpy(changes, pl.changes, n_changes * sizeof *changes);
    ggfit_plan_free(&pl);
    for (size_t i = 0; i < n_changes; i++)
        apply_change((const char *const *)args, &changes[i]);
    assert_int_equal(plan_of(&pl, args), 0);
    char *t = ggfit_plan_text(&pl, false);
    if (want_min)
        assert_non_null(strstr(t, "nearest changes that fit"));
    ggfit_free(t);
    ggfit_plan_free(&pl);
}

static void test_nearest_changes(void **state)
{
    (void)state;
    const char *a[] = { "--gpu", "rtx-3090", "-ngl", "99", "-c", "32768", "--host-mem",
                        "64GiB", NULL };
    check_changes("qwen3-14b-f16.gguf", a, 1);
    const char *b[] = { "--gpu", "rtx-3090", "-ngl", "99", "-c", "32768", "--host-mem",
                        "96GiB", NULL };
    check_changes("gpt-oss-120b-mxfp4.gguf", b, 2);   /* -ngl, -ncmoe */
    const char *c[] = { "--gpu", "rtx-4060", "-c", "65536", "-ncmoe", "8", "--host-mem",
                        "64GiB", NULL };
    check_changes("qwen3-30b-a3b-Q4_K_M.gguf", c, 1);
    const char *d[] = { "--gpu", "rtx-3060-12gb", "-c", "131072", "-fitp", "on", "--host-mem",
                        "64GiB", NULL };
    check_changes("llama-3.1-8b-Q4_K_M.gguf", d, 2);  /* -c, the cache, -ngl */
    const char *e[] = { "--gpu", "rtx-4060", "-cmoe", "-c", "131072", "-np", "4",
                        "--host-mem", "128GiB", NULL };
    check_changes("gpt-oss-120b-mxfp4.gguf", e, 3);   /* -ngl, -c, the cache */
    const char *f[] = { "--gpu", "rtx-4060", "-ot", "exps=CUDA0", "-c", "16384", "--host-mem",
                        "64GiB", NULL };
    check_changes("qwen3-30b-a3b-Q4_K_M.gguf", f, 0);
    /* the given expert placement replaced: -cmoe and -ot exps=CPU leave the
     * host short of glm-4.5-air's experts, -ncmoe N in their place fits */
    const char *g[] = { "--gpu", "rtx-3090", "--host-mem", "64GiB", "-c", "32768", "--cpu-moe",
                        NULL };
    check_changes("glm-4.5-air-Q4_K_M.gguf", g, 1);
    const char *h[] = { "--gpu", "rtx-3090", "--host-mem", "64GiB", "-c", "32768", "-ot",
                        "exps=CPU", NULL };
    check_changes("glm-4.5-air-Q4_K_M.gguf", h, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_short),
        cmocka_unit_test(test_huge_context),
        cmocka_unit_test(test_refit_context),
        cmocka_unit_test(test_driver_free),
        cmocka_unit_test(test_mac_host),
        cmocka_unit_test(test_unified_experts),
        cmocka_unit_test(test_apu_pool),
        cmocka_unit_test(test_amx_cpu),
        cmocka_unit_test(test_amx_types),
        cmocka_unit_test(test_metal_span),
        cmocka_unit_test(test_metal_span_cpu_moe),
        cmocka_unit_test(test_free_after),
        cmocka_unit_test(test_nearest_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
