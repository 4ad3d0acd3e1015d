/*
 * test_params.c - llama.cpp's flags and the --gpu device descriptions.
 */
#include <sys/stat.h>

#include "test_util.h"

static ggfit_status parse(ggfit_params *p, const char *line, char **err)
{
    char buf[512], *argv[32];
    int argc = 0;
    ggfit_status rc = GGFIT_OK;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *tok = strtok(buf, " "); tok && argc < 32; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    ggfit_params_init(p);
    for (int i = 0; i < argc && rc == GGFIT_OK;)
        rc = ggfit_params_parse_arg(p, argc, argv, &i, NULL, err);
    return rc;
}

static void test_defaults(void **state)
{
    (void)state;
    ggfit_params p;
    ggfit_params_init(&p);
    assert_int_equal(p.n_ctx, 0);
    assert_int_equal(p.n_batch, 2048);
    assert_int_equal(p.n_ubatch, 512);
    assert_int_equal(p.n_seq, 1);
    assert_int_equal(p.flash_attn, GGFIT_FA_AUTO);
    assert_int_equal(p.type_k, GGFIT_TYPE_F16);
    assert_int_equal(p.n_gpu_layers, GGFIT_NGL_AUTO);
    assert_false(p.set_n_ctx);
}

static void test_flags(void **state)
{
    (void)state;
    ggfit_params p;
    char *err = NULL;
    assert_int_equal(parse(&p, "-c 8192 -b 4096 -ub 1024 -np 4 -kvu -fa off -ctk q8_0 "
                               "-ctv q4_0 --swa-full -ngl 12 -ts 3,1 -nkvo --no-repack", &err),
                     GGFIT_OK);
    assert_int_equal(p.n_ctx, 8192);
    assert_true(p.set_n_ctx);
    assert_int_equal(p.n_batch, 4096);
    assert_int_equal(p.n_ubatch, 1024);
    assert_int_equal(p.n_seq, 4);
    assert_true(p.kv_unified && p.swa_full && p.no_kv_offload && p.no_repack);
    assert_int_equal(p.flash_attn, GGFIT_FA_OFF);
    assert_int_equal(p.type_k, GGFIT_TYPE_Q8_0);
    assert_int_equal(p.type_v, GGFIT_TYPE_Q4_0);
    assert_int_equal(p.n_gpu_layers, 12);
    assert_true(p.tensor_split[0] == 3.0f && p.tensor_split[1] == 1.0f);

    assert_int_equal(parse(&p, "-ngl all --cpu-moe --n-cpu-moe 6 -ot a=CPU,b\\.c=CUDA0", &err),
                     GGFIT_OK);
    assert_int_equal(p.n_gpu_layers, GGFIT_NGL_ALL);
    assert_true(p.cpu_moe);
    assert_int_equal(p.n_cpu_moe, 6);
    assert_int_equal(p.n_overrides, 2);
    assert_string_equal(p.overrides[1].pattern, "b\\.c");
    assert_string_equal(p.overrides[1].buffer, "CUDA0");
    /* The pattern is everything before the last '='. */
    assert_int_equal(parse(&p, "-ot x=y=CPU", &err), GGFIT_OK);
    assert_string_equal(p.overrides[0].pattern, "x=y");
}

static void test_bad_flags(void **state)
{
    (void)state;
    static const struct { const char *line; const char *msg; } bad[] = {
        { "-c", "-c needs a value" },
        { "-c -5", "expected a non-negative integer" },
        { "-c 12x", "expected a non-negative integer" },
        { "-fa maybe", "expected on, off or auto" },
        { "-ctk q3_k", "unsupported cache type 'q3_k'" },
        { "-ot nothing", "expected PATTERN=BUFFER" },
        { "-ot =CPU", "expected PATTERN=BUFFER" },
        { "-np 0", "expected 1 to 256 sequences" },
        { "-np 257", "expected 1 to 256 sequences (llama.cpp's LLAMA_MAX_SEQ), got '257'" },
        { "-b 0", "-b: expected at least 1 token, got '0'" },
        { "-ub 0", "-ub: expected at least 1 token, got '0'" },
        { "-ts nan,1", "expected proportions like 3,1 (finite, not negative)" },
        { "-ts 1,", "expected proportions like 3,1 (finite, not negative)" },
        { "-ot exps=CPU,", "a trailing comma" },
        { "-c 4294967295", "-c: 4294967295 is too large (at most 4294967040" },
        { "-sm diagonal", "expected none, layer or row" },
        { "-ts 1,x", "expected proportions" },
        /* a count past its type is too large, not "no integer" */
        { "-c 99999999999", "-c: 99999999999 is too large (at most 4294967040)" },
        { "-c 99999999999999999999999", "is too large (at most 4294967040)" },
        { "-b 99999999999", "-b: 99999999999 is too large (at most 4294967295)" },
        { "-np 99999999999", "expected 1 to 256 sequences" },
        /* a long value is not echoed whole */
        { "-ts 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,x",
          "got '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,...'" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ggfit_params p;
        char *err = NULL;
        assert_int_equal(parse(&p, bad[k].line, &err), GGFIT_EINVAL);
        if (!err || !strstr(err, bad[k].msg))
            fail_msg("'%s': got '%s'", bad[k].line, err ? err : "(null)");
        ggfit_free(err);
    }
    /* A flag that is not llama.cpp's: the caller's with used, else an error. */
    ggfit_params p;
    char flag[] = "--frobnicate", *argv[] = { flag };
    int i = 0;
    bool used = true;
    char *err = NULL;
    ggfit_params_init(&p);
    assert_int_equal(ggfit_params_parse_arg(&p, 1, argv, &i, &used, &err), GGFIT_OK);
    assert_false(used);
    assert_int_equal(i, 0);
    assert_null(err);
    assert_int_equal(ggfit_params_parse_arg(&p, 1, argv, &i, NULL, &err), GGFIT_EINVAL);
    assert_string_equal(err, "unknown argument '--frobnicate'");
    assert_int_equal(i, 0);
    ggfit_free(err);
}

static void test_devices(void **state)
{
    (void)state;
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n;
    char *err = NULL;
    assert_int_equal(ggfit_devices_parse("24GiB,cuda:12GiB,rpc:81920MiB,rocm:24000MB/20000MB,"
                                         "metal:18GB",
                                         d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(n, 5);
    assert_string_equal(d[0].name, "CUDA0");
    assert_int_equal(d[0].total, 24ull << 30);
    assert_string_equal(d[1].name, "CUDA1");
    assert_string_equal(d[2].name, "RPC0");
    assert_int_equal(d[2].kind, GGFIT_BACKEND_RPC);
    assert_int_equal(d[2].total, 81920ull << 20);
    assert_string_equal(d[3].name, "ROCm0");
    assert_int_equal(d[3].total, 24000000000ull);
    assert_int_equal(d[3].free, 20000000000ull);
    assert_string_equal(d[4].name, "Metal");
    assert_int_equal(ggfit_devices_parse("none", d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(n, 0);
    static const char *const bad[] = { "tpu:8GiB", "cuda:", "8XB", "8GiB/9GiB", "8GiB,,4GiB" };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(ggfit_devices_parse(bad[k], d, GGFIT_MAX_DEVICES, &n, &err),
                         GGFIT_EINVAL);
        assert_non_null(strstr(err, "--gpu"));
        ggfit_free(err);
    }
    assert_int_equal(ggfit_devices_parse("1GiB,1GiB,1GiB", d, 2, &n, &err), GGFIT_EINVAL);
    ggfit_free(err);
    uint64_t b;
    assert_int_equal(ggfit_size_parse("1024", &b), GGFIT_OK);   /* bare: MiB */
    assert_int_equal(b, 1ull << 30);
    assert_int_equal(ggfit_size_parse("1.5GiB", &b), GGFIT_OK);
    assert_int_equal(b, 3ull << 29);
}

/* ---- requests: the CLI's flags and plan -------------------------------- */

/* Splits line at spaces into argv (pointers into buf). */
static int split(char *buf, size_t size, const char *line, char **argv, int max)
{
    int argc = 0;
    snprintf(buf, size, "%s", line);
    for (char *tok = strtok(buf, " "); tok && argc < max; tok = strtok(NULL, " "))
        argv[argc++] = tok;
    return argc;
}

/* Parses line into r as the CLI does; the first flag nobody knows stops it
 * and is returned (NULL when every flag was used). */
static const char *parse_request(ggfit_request *r, const char *line, ggfit_status *rc,
                                 char **err)
{
    static char buf[1024];
    static char *argv[64];
    int argc = split(buf, sizeof buf, line, argv, 64);
    ggfit_request_init(r);
    *rc = GGFIT_OK;
    for (int i = 0; i < argc;) {
        bool used;
        if ((*rc = ggfit_request_parse_arg(r, argc, argv, &i, &used, err)))
            return NULL;
        if (!used)
            return argv[i];
    }
    return NULL;
}

static void test_request_flags(void **state)
{
    (void)state;
    ggfit_request r;
    ggfit_status rc;
    char *err = NULL;
    ggfit_request_init(&r);
    assert_null(r.model);
    assert_null(r.gpu);
    assert_false(r.fit.check_only || r.print_memory);
    assert_int_equal(r.fit.n_ctx_min, 4096);
    assert_int_equal(r.rpc_timeout_ms, 5000);
    assert_int_equal(r.params.n_batch, 2048);

    assert_null(parse_request(&r, "-m a.gguf --gpu 8GiB --rpc h:1 --host-mem 64GiB -fit off "
                                  "-fitt 512,2G -fitc 2048 -fitp on -c 8192 -ngl 4", &rc, &err));
    assert_int_equal(rc, GGFIT_OK);
    assert_string_equal(r.model, "a.gguf");
    assert_string_equal(r.gpu, "8GiB");
    assert_string_equal(r.rpc, "h:1");
    assert_string_equal(r.host_mem, "64GiB");
    assert_true(r.fit.check_only && r.print_memory);
    assert_int_equal(r.fit.n_margins, 2);
    assert_int_equal(r.fit.margin[0], 512ull << 20);
    assert_int_equal(r.fit.margin[1], 2ull << 30);
    assert_int_equal(r.fit.n_ctx_min, 2048);
    assert_true(r.params.n_ctx == 8192 && r.params.set_n_ctx && r.params.n_gpu_layers == 4);
    /* Later flags win, as in llama.cpp; -fitp takes on or off. */
    assert_null(parse_request(&r, "--model b.gguf -fit off -fit on --print-memory -fitp off",
                              &rc, &err));
    assert_string_equal(r.model, "b.gguf");
    assert_false(r.fit.check_only || r.print_memory);
    /* --json is the CLI's: handed back with *i on it. */
    const char *rest = parse_request(&r, "-m a.gguf --json -c 1", &rc, &err);
    assert_int_equal(rc, GGFIT_OK);
    assert_non_null(rest);
    assert_string_equal(rest, "--json");
    assert_string_equal(r.model, "a.gguf");
    assert_false(r.params.set_n_ctx);
    /* Without used, a flag nobody knows is an error. */
    char buf[64], *argv[4];
    int argc = split(buf, sizeof buf, "-m a.gguf --json", argv, 4), i = 0;
    assert_int_equal(ggfit_request_parse_arg(&r, argc, argv, &i, NULL, &err), GGFIT_OK);
    assert_int_equal(i, 2);
    assert_int_equal(ggfit_request_parse_arg(&r, argc, argv, &i, NULL, &err), GGFIT_EINVAL);
    assert_string_equal(err, "unknown argument '--json'");
    ggfit_free(err);
}

static void test_request_bad_flags(void **state)
{
    (void)state;
    /* The messages are the CLI's, which prints them after "ggfit: ". */
    static const struct { const char *line; const char *msg; } bad[] = {
        { "-m", "-m needs a value" },
        { "--gpu", "--gpu needs a value" },
        { "-fitp", "-fitp needs a value" },
        { "--fit-ctx", "--fit-ctx needs a value" },
        { "-c", "-c needs a value" },
        { "-fit maybe", "-fit: expected on or off" },
        { "-fitt lots", "-fitt: expected MiB values like 1024 or 512,2048" },
        { "-fitt 512,,1024", "-fitt: expected MiB values like 1024 or 512,2048" },
        { "-fitt 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
          "-fitt: expected MiB values like 1024 or 512,2048" },
        { "-fitc 12x", "-fitc: expected a context size" },
        { "-fitc -5", "-fitc: expected a context size" },
        { "-fitc 4294967296", "-fitc: 4294967296 is too large (at most 4294967295)" },
        { "-ctk q3_k", "-ctk: unsupported cache type 'q3_k'" },
        { "--cpu", "--cpu needs a value" },
        /* ggfit's own sizes need a unit: 32 is not 32 MiB */
        { "--host-mem 32", "--host-mem 32: give a unit: 32GiB" },
        { "--host-mem 64GiB/50", "--host-mem 64GiB/50: give a unit: 64GiB/50GiB" },
        { "--host-mem 1.5", "--host-mem 1.5: give a unit: 1.5GiB" },
        { "-mu ftp://host/m.gguf", "-mu ftp://host/m.gguf: only http and https URLs" },
        { "-m s3://bucket/m.gguf", "-m s3://bucket/m.gguf: only http and https URLs" },
        { "-fitc 99999999999999999999999", "-fitc: 99999999999999999999999 is too large" },
        { "-cram 99999999999", "-cram: 99999999999 is too large (at most 2147483647)" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ggfit_request r;
        ggfit_status rc;
        char *err = NULL;
        assert_null(parse_request(&r, bad[k].line, &rc, &err));
        assert_int_equal(rc, GGFIT_EINVAL);
        if (!err || strncmp(err, bad[k].msg, strlen(bad[k].msg)))
            fail_msg("'%s': got '%s'", bad[k].line, err ? err : "(null)");
        ggfit_free(err);
    }
}

/* Writes text to path. */
static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A decimal unit likely meant as the binary one: a note, and the figure. */
static void test_size_note(void **state)
{
    (void)state;
    char note[256];
    assert_true(ggfit_size_note("--gpu", "24GB", note, sizeof note));
    assert_string_equal(note, "--gpu 24GB is 22888 MiB, 7% less than 24GiB: give 24GiB if that "
                              "is the size meant");
    assert_true(ggfit_size_note("--gpu", "24GiB,cuda:16GB/15GB", note, sizeof note));
    assert_non_null(strstr(note, "--gpu 16GB is 15259 MiB"));
    assert_true(ggfit_size_note("--host-mem", "64GiB/60GB", note, sizeof note));
    assert_non_null(strstr(note, "--host-mem 60GB is 57220 MiB"));
    assert_true(ggfit_size_note("--host-mem", "2TB", note, sizeof note));
    assert_non_null(strstr(note, "9% less than 2TiB"));
    /* binary units, catalog ids and bare numbers: nothing to say */
    assert_false(ggfit_size_note("--gpu", "24GiB,rtx-3090,rpc:8192MiB", note, sizeof note));
    assert_string_equal(note, "");
    assert_false(ggfit_size_note("--host-mem", "64GiB/60GiB", NULL, 0));
    /* a small decimal unit is too close to matter (KB: 2.4%) */
    assert_false(ggfit_size_note("--gpu", "24000000KB", note, sizeof note));
}

static void test_request_devices(void **state)
{
    (void)state;
    ggfit_request r;
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n = 99;
    ggfit_status rc;
    char *err = NULL;
    /* Described devices, and a described host: nothing is probed. */
    parse_request(&r, "--gpu rpc:8GiB,cuda:8GiB,rpc:4GiB --host-mem 64GiB/60GiB", &rc, &err);
    r.params.cpu_features = 0;
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(n, 3);
    assert_string_equal(d[0].name, "RPC0");
    assert_string_equal(d[1].name, "CUDA0");
    assert_string_equal(d[2].name, "RPC1");
    assert_int_equal(r.fit.host_free, 60ull << 30);
    assert_int_equal(r.host.total, 64ull << 30);
    assert_int_equal(r.params.cpu_features, 0);
    assert_int_equal(d[1].free, (8ull << 30) - (499ull << 20));   /* a real driver's */
    assert_int_equal(d[0].free, 8ull << 30);                      /* as an rpc-server says */
    assert_int_equal(ggfit_request_devices(&r, d, 2, &n, &err), GGFIT_EINVAL);
    assert_string_equal(err, "--gpu: more than 2 devices");
    ggfit_free(err);
    parse_request(&r, "--gpu none --host-mem lots", &rc, &err);
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_EINVAL);
    assert_string_equal(err, "--host-mem: bad size 'lots' (a size like 64GiB, or TOTAL/FREE "
                             "with FREE <= TOTAL)");
    ggfit_free(err);

    /* No --gpu: this machine, here a fake root with 4 GiB (512 MiB
     * available), AVX2 and no GPU; --host-mem still overrides its memory. */
    char root[256], path[320];
    snprintf(root, sizeof root, "%s/request-root", tmp_dir());
    snprintf(path, sizeof path, "%s/proc", root);
    assert_true(mkdir(root, 0755) == 0 && mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/proc/meminfo", root);
    put_file(path, "MemTotal: 4194304 kB\nMemAvailable: 524288 kB\n");
    snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
    put_file(path, "model name\t: Fake CPU\nflags\t\t: fpu avx2\n");
    ggfit_request_init(&r);
    r.probe.sysroot = root;
    r.probe.nvml_path = "/none";
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(n, 0);
    assert_int_equal(r.params.cpu_features, GGFIT_CPU_AVX2);
    assert_int_equal(r.fit.host_free, 512ull << 20);
    r.host_mem = "3GiB";   /* a total: the system is assumed to keep 1 GiB */
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(r.fit.host_free, 2ull << 30);
    assert_non_null(strstr(r.host.source, "free assumed"));
    r.host_mem = "3GiB/3GiB";
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(r.fit.host_free, 3ull << 30);
    /* Described devices without --host-mem: the host is still probed. */
    r.gpu = "8GiB";
    r.host_mem = NULL;
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(n, 1);
    assert_int_equal(r.fit.host_free, 512ull << 20);
    r.probe.sysroot = path;   /* a file, not a root: the probe's error */
    assert_int_not_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_non_null(strstr(err, "meminfo"));
    ggfit_free(err);
}

/* --cpu: the CPU planned for, by class or features (devices/cpu.c). */
static void test_cpu(void **state)
{
    (void)state;
    const uint32_t avx512 = GGFIT_CPU_AVX2 | GGFIT_CPU_AVX512;
    static const struct { const char *spec; uint32_t want; } ok[] = {
        { "sapphire-rapids", avx512 | GGFIT_CPU_AMX },
        { "Granite-Rapids", avx512 | GGFIT_CPU_AMX },   /* any case */
        { "zen4", avx512 },
        { "alder-lake", GGFIT_CPU_AVX2 },
        { "apple-m1", GGFIT_CPU_NEON_DOTPROD },
        { "apple-m2", GGFIT_CPU_NEON_DOTPROD | GGFIT_CPU_NEON_I8MM },
        { "none", 0 },
        { "avx2", GGFIT_CPU_AVX2 },
        { "avx512", avx512 },                  /* AVX-512 brings AVX2 */
        { "amx", avx512 | GGFIT_CPU_AMX },     /* built with AVX512-VNNI */
        { "zen4,amx", avx512 | GGFIT_CPU_AMX },
        { "dotprod,i8mm", GGFIT_CPU_NEON_DOTPROD | GGFIT_CPU_NEON_I8MM },
    };
    char *err = NULL;
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        uint32_t f = 12345;
        if (ggfit_cpu_parse(ok[k].spec, &f, &err) != GGFIT_OK)
            fail_msg("%s: %s", ok[k].spec, err);
        if (f != ok[k].want)
            fail_msg("%s: features %#x, want %#x", ok[k].spec, f, ok[k].want);
    }
    static const struct { const char *spec; const char *msg; } bad[] = {
        { "sapphire-rapid", "--cpu: unknown CPU or feature 'sapphire-rapid'; did you mean "
                            "sapphire-rapids?" },
        { "avx2,amz", "--cpu: unknown CPU or feature 'amz'; did you mean amx?" },
        { "frobnicate", "--cpu: unknown CPU or feature 'frobnicate' (a CPU such as" },
        { "avx2,,amx", "--cpu: an empty item in 'avx2,,amx'" },
        { "", "--cpu: an empty item in ''" },
        { "avx2,", "--cpu: an empty item in 'avx2,'" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        uint32_t f = 0;
        assert_int_equal(ggfit_cpu_parse(bad[k].spec, &f, &err), GGFIT_EINVAL);
        if (!err || strncmp(err, bad[k].msg, strlen(bad[k].msg)))
            fail_msg("'%s': got '%s'", bad[k].spec, err ? err : "(null)");
        ggfit_free(err);
    }
    /* Every class parses to its own features; the names are the bits'. */
    assert_true(ggfit_cpu_class_count() >= 10);
    assert_null(ggfit_cpu_class_get(ggfit_cpu_class_count()));
    for (size_t i = 0; i < ggfit_cpu_class_count(); i++) {
        const ggfit_cpu_class *c = ggfit_cpu_class_get(i);
        uint32_t f;
        assert_int_equal(ggfit_cpu_parse(c->id, &f, NULL), GGFIT_OK);
        assert_int_equal(f, c->features);
    }
    assert_string_equal(ggfit_cpu_feature_name(GGFIT_CPU_AMX), "amx");
    assert_null(ggfit_cpu_feature_name(GGFIT_CPU_AMX << 1));

    /* In a request it wins over the rest: the default (--gpu), a Mac's
     * own CPU; and a bad one is refused before any rpc-server is asked. */
    ggfit_request r;
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n;
    ggfit_status rc;
    parse_request(&r, "--gpu 8GiB --host-mem 64GiB --cpu sapphire-rapids", &rc, &err);
    assert_string_equal(r.cpu, "sapphire-rapids");
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(r.params.cpu_features, avx512 | GGFIT_CPU_AMX);
    assert_int_equal(r.host.cpu_features, avx512 | GGFIT_CPU_AMX);
    parse_request(&r, "--gpu m2-16gb", &rc, &err);
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(r.params.cpu_features, GGFIT_CPU_NEON_DOTPROD | GGFIT_CPU_NEON_I8MM);
    parse_request(&r, "--gpu m2-16gb --cpu zen4", &rc, &err);
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    assert_int_equal(r.params.cpu_features, avx512);
    parse_request(&r, "--rpc 127.0.0.1:1 --gpu 8GiB --cpu zen9", &rc, &err);
    assert_int_equal(ggfit_request_devices(&r, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_EINVAL);
    assert_string_equal(err, "--cpu: unknown CPU or feature 'zen9'; did you mean zen2?");
    ggfit_free(err);
}

static void test_request_plan(void **state)
{
    (void)state;
    ggfit_request r;
    static ggfit_plan plan;
    ggfit_status rc;
    char *err = NULL, line[512], model[256];
    model_path(model, sizeof model, "qwen3-14b-f16.gguf");

    parse_request(&r, "--gpu cuda:24576MiB/24077MiB -c 8192", &rc, &err);
    assert_int_equal(ggfit_request_plan(&r, &plan, &err), GGFIT_EINVAL);
    assert_string_equal(err, "-m FILE is needed");
    ggfit_free(err);
    /* The devices are checked before the model is opened. */
    parse_request(&r, "-m /nonexistent.gguf --gpu tpu:8GiB", &rc, &err);
    assert_int_equal(ggfit_request_plan(&r, &plan, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "unknown kind 'tpu'"));
    ggfit_free(err);

    /* llama.cpp's documented example, as the CLI answers it. */
    snprintf(line, sizeof line, "-m %s --for fit-params --gpu cuda:24576MiB/24077MiB -c 8192", model);
    parse_request(&r, line, &rc, &err);
    assert_int_equal(ggfit_request_plan(&r, &plan, &err), GGFIT_OK);
    assert_false(plan.print_memory);
    assert_int_equal(plan.n_devices, 1);
    assert_int_equal(plan.fit.status, GGFIT_FIT_FITS);
    assert_non_null(plan.fit.log);
    assert_memory_equal(&plan.projection, &plan.fit.projection, sizeof plan.projection);
    char *args = ggfit_fit_args(&plan.fit, plan.devices, plan.n_devices);
    assert_string_equal(args, "-c 8192 -ngl 33");
    ggfit_free(args);
    ggfit_free(plan.fit.log);

    /* -fit off: the flags as given only checked. */
    snprintf(line, sizeof line, "-m %s --for fit-params --gpu cuda:24576MiB/24077MiB -c 8192 -fit off", model);
    parse_request(&r, line, &rc, &err);
    assert_int_equal(ggfit_request_plan(&r, &plan, &err), GGFIT_OK);
    assert_int_equal(plan.fit.status, GGFIT_FIT_FAILED);
    assert_non_null(strstr(plan.fit.reason, "-fit off"));
    ggfit_free(plan.fit.log);

    /* -fitp on: the projection of the flags as given, and no fit. */
    snprintf(line, sizeof line, "-m %s --for fit-params --gpu cuda:24576MiB/24077MiB -c 8192 -fitp on", model);
    parse_request(&r, line, &rc, &err);
    assert_int_equal(ggfit_request_plan(&r, &plan, &err), GGFIT_OK);
    assert_true(plan.print_memory);
    assert_null(plan.fit.log);
    assert_int_equal(plan.projection.n_ctx, 8192);
    assert_int_equal(plan.projection.n_devices, 1);
    ggfit_model *m;
    ggfit_projection pr;
    assert_int_equal(ggfit_model_open(model, &m, &err), GGFIT_OK);
    assert_int_equal(ggfit_project(m, &r.params, plan.devices, plan.n_devices, &pr, NULL, &err),
                     GGFIT_OK);
    assert_memory_equal(&pr, &plan.projection, sizeof pr);
    ggfit_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_bad_flags),
        cmocka_unit_test(test_devices),
        cmocka_unit_test(test_request_flags),
        cmocka_unit_test(test_request_bad_flags),
        cmocka_unit_test(test_size_note),
        cmocka_unit_test(test_request_devices),
        cmocka_unit_test(test_cpu),
        cmocka_unit_test(test_request_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
