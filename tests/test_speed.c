/*
 * test_speed.c - the speed model (src/speed/) against the worked example of
 * shared/background/002: gpt-oss-120b at 32K on an RTX 3090 (936 GB/s) with
 * the experts of 25 layers in dual-channel DDR5-6000 (96 GB/s), with that
 * text's constants (79% of peak + 0.74 ms per token for consumer CUDA, 100%
 * of the DDR peak): GPU leg ~3.8 ms for ~2.27 GB, CPU leg ~13.8 ms for
 * ~1.33 GB, ~57 tok/s, ~562 KiB per token over PCIe.
 */
#include "test_util.h"

#include "speed/speed.h"

static void speed_of(const char *file, ggfit_params *p, const char *gpu,
                     const ggfit_speed_options *o, ggfit_speed *sp)
{
    char path[512];
    model_path(path, sizeof path, file);
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_model_open(path, &m, &err), GGFIT_OK);
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n = 0;
    if (gpu)
        assert_int_equal(ggfit_devices_parse(gpu, devs, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    ggfit_projection *pr = calloc(1, sizeof *pr);
    int32_t *pl = calloc(ggfit_model_n_tensors(m), sizeof *pl);
    assert_non_null(pr);
    assert_non_null(pl);
    assert_int_equal(ggfit_project(m, p, devs, n, pr, pl, &err), GGFIT_OK);
    assert_int_equal(ggfit_speed_of(m, p, pr, pl, devs, n, o, sp, &err), GGFIT_OK);
    free(pl);
    free(pr);
    ggfit_model_free(m);
}

static void assert_near(double got, double want, double tol)
{
    if (got - want > tol || want - got > tol) {
        print_error("got %.4f, want %.4f +- %.4f\n", got, want, tol);
        fail();
    }
}

static void test_worked_example(void **state)
{
    (void)state;
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 32768;
    p.n_gpu_layers = GGFIT_NGL_ALL;
    p.n_cpu_moe = 25;
    p.set_n_ctx = p.set_n_gpu_layers = true;
    ggfit_speed_options o;
    ggfit_speed_options_init(&o);
    o.n_gen = 0;              /* the text counts no KV cache read */
    o.efficiency = 0.79;
    o.fixed_ms = 0.74;
    o.host_bw_gbs = 96;
    o.host_efficiency = 1.0;
    o.cross_ms = 0;           /* and the crossings by their bytes alone */
    o.host_tflops = 1e6;      /* and the CPU's compute not at all */
    ggfit_speed sp;
    speed_of("gpt-oss-120b-mxfp4.gguf", &p, "rtx-3090", &o, &sp);
    assert_int_equal(sp.n_legs, 2);
    const ggfit_speed_leg *gpu = &sp.legs[0], *cpu = &sp.legs[1];
    assert_string_equal(gpu->name, "CUDA0");
    assert_int_equal(cpu->device, -1);
    assert_near(gpu->bandwidth_gbs, 936, 0);
    assert_near(gpu->bytes_per_token / 1e9, 2.27, 0.01);
    assert_near(gpu->ms_per_token, 3.8, 0.05);
    assert_near(cpu->bytes_per_token / 1e9, 1.33, 0.01);
    /* 25 layers x 53,015,040 bytes of routed experts read per token, and
     * the token embedding's row (2880 Q8_0: 3060 bytes; the input layer
     * stays on the CPU) */
    assert_int_equal(cpu->weight_bytes, 25 * 53015040ull + 3060);
    assert_near(cpu->ms_per_token, 13.8, 0.05);
    assert_near(sp.tg_tps, 57, 0.5);
    /* 25 layers x 2 crossings x 2880 F32 = 576,000 bytes, ~562 KiB */
    assert_int_equal(sp.n_crossings, 50);
    assert_int_equal(sp.link_bytes_per_token, 576000);
    assert_near(sp.link_bytes_per_token / 1024.0, 562.5, 0.1);
    /* prompt processing: the experts in RAM cross PCIe once per ubatch */
    assert_true(cpu->offload_bytes > 25 * 1696481280ull * 99 / 100);
    assert_true(sp.pp_tps > 0 && sp.pp_tps < 1000);
}

/* Dense, all on one GPU: tg is the weights over the bandwidth; the KV
 * cache's read grows with depth, so tg falls; another quant reads more. */
static void test_dense_depth_and_type(void **state)
{
    (void)state;
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 40960;
    p.set_n_ctx = true;
    ggfit_speed_options o;
    ggfit_speed_options_init(&o);
    ggfit_speed a, b, c;
    speed_of("llama-3.1-8b-Q4_K_M.gguf", &p, "rtx-4090", &o, &a);
    o.depth = 32768;
    speed_of("llama-3.1-8b-Q4_K_M.gguf", &p, "rtx-4090", &o, &b);
    o.depth = 0;
    o.as_type = GGFIT_TYPE_F16;
    speed_of("llama-3.1-8b-Q4_K_M.gguf", &p, "rtx-4090", &o, &c);
    /* the GPU, and the host with the token embedding's row */
    assert_int_equal(a.n_legs, 2);
    assert_int_equal(a.legs[1].device, -1);
    assert_true(a.legs[1].weight_bytes < 20000);
    assert_int_equal(a.n_crossings, 0);
    assert_true(a.legs[0].weight_bytes > 4.5e9 && a.legs[0].weight_bytes < 5.0e9);
    assert_true(b.tg_tps < a.tg_tps && b.pp_tps < a.pp_tps);
    /* 32 layers x 8 heads x 128 x 2 (K, V) x 2 bytes x 32832 cells */
    assert_int_equal(b.legs[0].kv_bytes, 32ull * 8 * 256 * 2 * (32768 + 64));
    assert_true(c.legs[0].weight_bytes > 15.0e9 && c.legs[0].weight_bytes < 16.5e9);
    assert_true(c.tg_tps < a.tg_tps / 2.5);
}

/* Prompt-processing TFLOPS of laptop parts: the catalog's laptop GPUs match
 * their own rows, below the desktop card of the same number where the chip
 * is smaller, and a laptop without a row takes bandwidth x
 * GGFIT__SPEED_FLOP_PER_BYTE, never the figure of the desktop row its name
 * contains. */
static void test_laptop_tflops(void **state)
{
    (void)state;
    bool tab = false;
    double desk = ggfit__speed_tflops("NVIDIA GeForce RTX 4090", 1008, &tab);
    assert_true(tab);
    assert_near(desk, 330.3, 0.05);
    double lap = ggfit__speed_tflops("NVIDIA GeForce RTX 4090 Laptop GPU", 576, &tab);
    assert_true(tab);
    assert_near(lap, 158.8, 0.05);  /* 76 SMs x 1024 x 2.040 GHz */
    assert_true(lap < desk);
    /* the longest laptop name wins: Ti over the plain part */
    assert_near(ggfit__speed_tflops("NVIDIA GeForce RTX 3080 Ti Laptop GPU", 512, &tab), 94.4, 0.05);
    assert_near(ggfit__speed_tflops("NVIDIA GeForce RTX 3080 Laptop GPU 16GB", 448, &tab), 84.0, 0.05);
    /* a real part with no row (the desktop "RTX 5070 Ti" is 175.8) */
    lap = ggfit__speed_tflops("NVIDIA GeForce RTX 5070 Ti Laptop GPU", 672, &tab);
    assert_false(tab);
    assert_near(lap, 672 * GGFIT__SPEED_FLOP_PER_BYTE / 1000.0, 1e-9);
    /* the desktop rows are unchanged by the laptop rows */
    assert_near(ggfit__speed_tflops("NVIDIA GeForce RTX 3070", 448, &tab), 81.3, 0.05);
    /* every laptop in the catalog: a row of its own but the RTX 5060 Laptop
     * (no top boost clock found) */
    size_t n_laptop = 0;
    for (size_t i = 0; i < ggfit_catalog_count(); i++) {
        const ggfit_catalog_entry *e = ggfit_catalog_get(i);
        if (!strstr(e->id, "-laptop"))
            continue;
        n_laptop++;
        double t = ggfit__speed_tflops(e->name, e->bandwidth_gbs, &tab);
        if (strcmp(e->id, "rtx-5060-laptop") == 0) {
            assert_false(tab);
            assert_near(t, e->bandwidth_gbs * GGFIT__SPEED_FLOP_PER_BYTE / 1000.0, 1e-9);
        } else if (!tab) {
            print_error("%s (%s): no TFLOPS row\n", e->id, e->name);
            fail();
        }
    }
    assert_true(n_laptop >= 15);
}

/* The experts a step touches: k for one token, nearly all for a ubatch. */
static void test_experts_touched(void **state)
{
    (void)state;
    assert_near(ggfit__experts_touched(128, 8, 1), 8, 1e-9);
    assert_near(ggfit__experts_touched(32, 4, 0), 4, 1e-9);
    /* 2 tokens: 128 (1 - (120/128)^2) = 15.5 */
    assert_near(ggfit__experts_touched(128, 8, 2), 15.5, 1e-9);
    assert_true(ggfit__experts_touched(128, 8, 512) > 127.9);
    assert_near(ggfit__experts_touched(8, 8, 3), 8, 1e-9);
    assert_near(ggfit__experts_touched(0, 0, 3), 0, 1e-9);
}

/* A MoE prompt: each ubatch reads the experts it touches (nearly all of
 * them), so a short prompt pays for them over fewer tokens; generation
 * reads k of n. Several sequences decoding at once read the weights once. */
static void test_moe_steps(void **state)
{
    (void)state;
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 8192;
    p.set_n_ctx = true;
    ggfit_speed_options o;
    ggfit_speed_options_init(&o);
    ggfit_speed a, b, c;
    speed_of("qwen3-30b-a3b-Q4_K_M.gguf", &p, "rtx-6000-ada", &o, &a);
    assert_int_equal(a.n_experts_pp, 128);
    assert_int_equal(a.n_experts_tg, 8);
    const ggfit_speed_leg *g = &a.legs[0];
    assert_true(g->flops_moe > 0 && g->flops_moe < g->flops_per_token);
    assert_true(g->expert_bytes_per_ubatch > 15e9);   /* every expert of 48 layers */
    o.n_prompt = 64;
    speed_of("qwen3-30b-a3b-Q4_K_M.gguf", &p, "rtx-6000-ada", &o, &b);
    assert_true(b.n_experts_pp < 128 && b.n_experts_pp > 8);
    o.n_prompt = 512;
    o.n_parallel = 4;
    speed_of("qwen3-30b-a3b-Q4_K_M.gguf", &p, "rtx-6000-ada", &o, &c);
    assert_int_equal(c.n_parallel, 4);
    assert_int_equal(c.n_experts_tg, 29);   /* 128 (1 - (120/128)^4) = 29.1 */
    /* four tokens touch 29 experts, not 32: a little more in all, each slower */
    assert_true(c.tg_tps < a.tg_tps && c.tg_tps_total > 1.2 * a.tg_tps);
    assert_near(c.tg_tps_total, 4 * c.tg_tps, 1e-9);
    assert_true(c.legs[0].weight_bytes > a.legs[0].weight_bytes);
    /* flash attention off: attention at the other efficiency */
    o.n_parallel = 0;
    o.depth = 4096;
    p.flash_attn = GGFIT_FA_OFF;
    ggfit_speed d, e;
    speed_of("qwen3-30b-a3b-Q4_K_M.gguf", &p, "rtx-6000-ada", &o, &d);
    p.flash_attn = GGFIT_FA_ON;
    speed_of("qwen3-30b-a3b-Q4_K_M.gguf", &p, "rtx-6000-ada", &o, &e);
    assert_false(d.flash_attn);
    assert_true(e.flash_attn);
    assert_true(d.legs[0].pp_efficiency_attn < e.legs[0].pp_efficiency_attn);
    assert_true(d.pp_tps < e.pp_tps);
}

/* On the CPU: its threads' compute decides prompt processing (twice the
 * threads, about twice the speed), quantized generation can be
 * compute-bound, and the tied output's matrix (token_embd again) is read
 * per token. op offload needs a ubatch of 32 tokens. */
static void test_cpu(void **state)
{
    (void)state;
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 4096;
    p.set_n_ctx = true;
    ggfit_speed_options o;
    ggfit_speed_options_init(&o);
    o.host_bw_gbs = 27.3;
    o.host_efficiency = 1;
    o.host_gflops = 176;
    o.n_threads = 1;
    ggfit_speed a, b;
    speed_of("qwen3-0.6b-f16.gguf", &p, NULL, &o, &a);
    o.n_threads = 2;
    speed_of("qwen3-0.6b-f16.gguf", &p, NULL, &o, &b);
    assert_int_equal(a.n_threads, 1);
    assert_near(a.host_gflops, 176, 1e-9);
    assert_near(b.host_gflops, 352, 1e-9);
    assert_near(b.pp_tps / a.pp_tps, 2, 0.01);
    /* qwen3 0.6B ties its output to token_embd: 28 blocks (0.88 GB of F16)
     * and the 151936 x 1024 F16 output matrix read per token */
    const ggfit_speed_leg *h = &b.legs[0];
    assert_int_equal(h->device, -1);
    assert_true(h->weight_bytes > 151936ull * 1024 * 2 + 800000000ull);
    /* all threads measured together cap them (threads sharing a core) */
    o.host_gflops_all = 200;
    speed_of("qwen3-0.6b-f16.gguf", &p, NULL, &o, &b);
    assert_near(b.host_gflops, 200, 1e-9);
    /* a GPU with the blocks in RAM: a 64-token prompt goes to the GPU, a
     * 16-token one stays with the CPU */
    p.n_gpu_layers = 0;
    p.set_n_gpu_layers = true;
    o.n_prompt = 64;
    speed_of("qwen3-0.6b-f16.gguf", &p, "rtx-4090", &o, &a);
    assert_true(a.link_offload_ms > 0);
    o.n_prompt = 16;
    speed_of("qwen3-0.6b-f16.gguf", &p, "rtx-4090", &o, &b);
    assert_near(b.link_offload_ms, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_dense_depth_and_type),
        cmocka_unit_test(test_laptop_tflops),
        cmocka_unit_test(test_experts_touched),
        cmocka_unit_test(test_moe_steps),
        cmocka_unit_test(test_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
