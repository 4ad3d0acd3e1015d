/*
 * test_hostile.c - hostile hyperparameters are refused, never obeyed: each
 * integer key of the tiny layouts in $GGFIT_TINY (default data/tiny), set
 * in turn to values that break arithmetic (0, 1, 3, the type's largest),
 * must give a projection and a fit (language models) or a measure
 * (projectors), or a refusal with a message: never a crash, a division by
 * zero or a hang. The files a fuzz run found are in the malformed
 * catalogue (tests/malformed/crash-*.gguf, test_malformed).
 *
 * GGFIT_HOSTILE=full sweeps wider, each mutation in a child process so
 * that a crash is reported with the mutation that caused it and the sweep
 * goes on: more values (up to 2^64 - 1, and -1 for signed keys), a
 * per-layer array's first element alone, every tensor dimension set to 0
 * and 1 (some minutes; half an hour under the sanitizers). With it:
 * GGFIT_HOSTILE_ONLY=PART sweeps the files whose name holds PART,
 * GGFIT_HOSTILE_SAVE=DIR keeps each crashing input as DIR/crash-N.gguf;
 * GGFIT_HOSTILE_FILE=PATH runs one such input in this process, for a
 * debugger (GGFIT_HOSTILE_MMPROJ=1: as a projector whatever its name).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "mtmd/clip.h"

static const char *tiny_dir(void)
{
    const char *d = getenv("GGFIT_TINY");
    return d && *d ? d : "data/tiny";
}

static bool full_sweep(void)
{
    const char *s = getenv("GGFIT_HOSTILE");
    return s && !strcmp(s, "full");
}

/* ---- reading a file's integers ------------------------------------------- */

/* Where an integer lies in the file: n elements of width bytes from offset
 * (an array's every element, a scalar, a tensor dimension). */
typedef struct site {
    size_t offset;
    uint32_t width;       /* 1, 2, 4 or 8 bytes */
    uint32_t stride;      /* between elements */
    uint64_t n;
    bool is_signed;
    char what[96];        /* the key, or "tensor NAME ne[d]" */
} site;

typedef struct cursor {
    const uint8_t *p;
    size_t len, at;
    bool bad;
} cursor;

static uint64_t rd(cursor *c, uint32_t n)
{
    uint64_t v = 0;
    if (c->at + n > c->len) {
        c->bad = true;
        return 0;
    }
    for (uint32_t i = 0; i < n; i++)
        v |= (uint64_t)c->p[c->at + i] << (8 * i);
    c->at += n;
    return v;
}

/* Width of a scalar GGUF type, 0 for strings and arrays. */
static uint32_t type_width(uint32_t t, bool *is_int, bool *is_signed)
{
    static const uint8_t w[] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
    *is_int = t <= 5 || t == 10 || t == 11;
    *is_signed = t == 1 || t == 3 || t == 5 || t == 11;
    return t < sizeof w ? w[t] : 0;
}

static bool skip_value(cursor *c, uint32_t type, int depth)
{
    bool is_int, is_signed;
    if (type == GGFIT_GGUF_STRING) {
        uint64_t n = rd(c, 8);
        if (n > c->len - c->at)
            return false;
        c->at += n;
        return true;
    }
    if (type == GGFIT_GGUF_ARRAY) {
        uint32_t et = (uint32_t)rd(c, 4);
        uint64_t n = rd(c, 8);
        if (depth > 8)
            return false;
        uint32_t w = type_width(et, &is_int, &is_signed);
        if (w) {
            if (n > (c->len - c->at) / w)
                return false;
            c->at += n * w;
            return true;
        }
        for (uint64_t i = 0; i < n && !c->bad; i++)
            if (!skip_value(c, et, depth + 1))
                return false;
        return !c->bad;
    }
    uint32_t w = type_width(type, &is_int, &is_signed);
    if (!w)
        return false;
    rd(c, w);
    return !c->bad;
}

/* The integers of a GGUF file's keys (tokenizer.* aside: their thousands
 * of token types say nothing about the model) and tensor dimensions;
 * returns how many, at most max. */
static size_t find_sites(const uint8_t *p, size_t len, site *s, size_t max)
{
    cursor c = { p, len, 0, false };
    size_t n = 0;
    rd(&c, 8);   /* magic, version */
    uint64_t n_tensors = rd(&c, 8), n_kv = rd(&c, 8);
    for (uint64_t k = 0; k < n_kv && !c.bad; k++) {
        uint64_t klen = rd(&c, 8);
        if (klen > len - c.at || klen >= sizeof s[0].what)
            return n;
        char key[96];
        memcpy(key, p + c.at, (size_t)klen);
        key[klen] = '\0';
        c.at += klen;
        uint32_t type = (uint32_t)rd(&c, 4);
        bool is_int, is_signed;
        uint32_t w = type_width(type, &is_int, &is_signed);
        size_t at = c.at;
        uint64_t count = 1;
        if (type == GGFIT_GGUF_ARRAY) {
            uint32_t et = (uint32_t)rd(&c, 4);
            count = rd(&c, 8);
            w = type_width(et, &is_int, &is_signed);
            at = c.at;
            c.at -= 12;
        }
        bool take = is_int && w && count && strncmp(key, "tokenizer.", 10) != 0;
        if (take && n < max) {
            s[n] = (site){ at, w, w, count, is_signed, "" };
            snprintf(s[n].what, sizeof s[n].what, "%s", key);
            n++;
        }
        if (!skip_value(&c, type, 0))
            return n;
    }
    for (uint64_t t = 0; t < n_tensors && !c.bad; t++) {
        uint64_t nlen = rd(&c, 8);
        if (nlen > len - c.at || nlen > 63)
            return n;
        char name[64];
        memcpy(name, p + c.at, (size_t)nlen);
        name[nlen] = '\0';
        c.at += nlen;
        uint32_t n_dims = (uint32_t)rd(&c, 4);
        for (uint32_t d = 0; d < n_dims && d < 4; d++) {
            if (n < max) {
                s[n] = (site){ c.at, 8, 8, 1, true, "" };
                snprintf(s[n].what, sizeof s[n].what, "tensor %s ne[%u]", name, d);
                n++;
            }
            rd(&c, 8);
        }
        rd(&c, 4);   /* type */
        rd(&c, 8);   /* offset */
    }
    return n;
}

static void patch(uint8_t *p, const site *s, uint64_t v)
{
    for (uint64_t i = 0; i < s->n; i++)
        for (uint32_t b = 0; b < s->width; b++)
            p[s->offset + i * s->stride + b] = (uint8_t)(v >> (8 * b));
}

/* ---- what a client does with a header -------------------------------------- */

/* In a full sweep's child process: failures end it, reported by its status. */
static bool in_child;

/* A refusal must say why; anything else it does is fine. */
static void refused(ggfit_status rc, char *err, const char *what)
{
    if (rc != GGFIT_OK && !err) {
        if (in_child) {
            fprintf(stderr, "%s: status %s without a message\n", what, ggfit_status_str(rc));
            _exit(3);
        }
        fail_msg("%s: status %s without a message", what, ggfit_status_str(rc));
    }
    ggfit_free(err);
}

static void use_model(ggfit_gguf *g, const char *what)
{
    ggfit_model *m = NULL;
    char *err = NULL;
    ggfit_status rc = ggfit_model_from_gguf(g, &m, &err);
    refused(rc, err, what);
    if (rc)
        return;
    ggfit_device dev[2];
    size_t n_dev = 0;
    assert_int_equal(ggfit_devices_parse("rpc:24GiB", dev, 2, &n_dev, NULL), GGFIT_OK);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 4096;
    p.set_n_ctx = true;
    ggfit_projection pr;
    err = NULL;
    rc = ggfit_project(m, &p, dev, n_dev, &pr, NULL, &err);
    refused(rc, err, what);
    if (rc == GGFIT_OK) {
        /* -fitp on, as the CLI runs it: the fit's own projections, from
         * the file's context down */
        ggfit_params_init(&p);
        ggfit_fit_options o;
        ggfit_fit_options_init(&o);
        o.no_log = true;
        ggfit_fit_result r;
        err = NULL;
        rc = ggfit_fit(m, &p, dev, n_dev, &o, &r, &err);
        refused(rc, err, what);
        if (rc == GGFIT_OK)
            ggfit_fit_result_clear(&r);
    }
    ggfit_model_free(m);
}

static void use_mmproj(ggfit_gguf *g, const char *what)
{
    ggfit_mmproj *mm = NULL;
    char *err = NULL;
    ggfit_status rc = ggfit__mmproj_from_gguf(g, "hostile.gguf", &mm, &err);
    refused(rc, err, what);
    if (rc)
        return;
    ggfit_device dev[2];
    size_t n_dev = 0;
    assert_int_equal(ggfit_devices_parse("rpc:24GiB", dev, 2, &n_dev, NULL), GGFIT_OK);
    ggfit_mmproj_params p;
    ggfit_mmproj_params_init(&p);
    ggfit_mmproj_usage u;
    err = NULL;
    rc = ggfit_mmproj_measure(mm, &p, dev, n_dev, &u, &err);
    refused(rc, err, what);
    ggfit_mmproj_free(mm);
}

static void use(const uint8_t *data, size_t len, bool mmproj, const char *what)
{
    ggfit_gguf *g = NULL;
    char *err = NULL;
    ggfit_status rc = ggfit_gguf_open_memory(data, len, "hostile.gguf", &g, &err);
    refused(rc, err, what);
    if (rc)
        return;
    if (mmproj)
        use_mmproj(g, what);
    else
        use_model(g, what);
}

/* ---- the sweep ------------------------------------------------------------ */

typedef struct sweep {
    size_t runs, crashes;
} sweep;

/* Runs one mutation; in a full sweep in a child process, whose death by a
 * signal (or a hang past 20 s) is reported and counted. */
static void try_one(sweep *sw, const uint8_t *data, size_t len, bool mmproj, const char *what)
{
    sw->runs++;
    if (!full_sweep()) {
        use(data, len, mmproj, what);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static const int sigs[] = { SIGFPE, SIGSEGV, SIGBUS, SIGILL, SIGABRT };
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
            signal(sigs[i], SIG_DFL);   /* cmocka's handlers would catch them */
        in_child = true;
        alarm(20);
        use(data, len, mmproj, what);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) != 0)) {
        fprintf(stderr, "CRASH %s (%s %d)\n", what, WIFSIGNALED(st) ? "signal" : "exit",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        sw->crashes++;
        const char *save = getenv("GGFIT_HOSTILE_SAVE");
        if (save && *save) {   /* the input, for a closer look */
            char path[512];
            snprintf(path, sizeof path, "%s/crash-%zu.gguf", save, sw->crashes);
            FILE *f = fopen(path, "wb");
            if (f && fwrite(data, 1, len, f) == len && fclose(f) == 0)
                fprintf(stderr, "  saved as %s\n", path);
        }
    }
}

static uint64_t type_max(const site *s)
{
    uint64_t all = s->width == 8 ? UINT64_MAX : (1ull << (8 * s->width)) - 1;
    return s->is_signed ? all >> 1 : all;
}

static void sweep_file(sweep *sw, const char *dir, const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *orig = malloc((size_t)len), *buf = malloc((size_t)len);
    assert_true(orig && buf && fread(orig, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    static site sites[4096];
    size_t n = find_sites(orig, (size_t)len, sites, 4096);
    bool mmproj = !strncmp(file, "mmproj-", 7);
    for (size_t i = 0; i < n; i++) {
        const site *s = &sites[i];
        bool tensor = !strncmp(s->what, "tensor ", 7);
        uint64_t small[] = { 0, 1, 3, type_max(s) };
        uint64_t more[] = { 0, 1, 2, 3, 5, 7, 13, 17, 100, 1000, 65537, type_max(s) / 2,
                            type_max(s), UINT64_MAX };
        const uint64_t *vals = full_sweep() ? more : small;
        size_t n_vals = full_sweep() ? sizeof more / sizeof more[0]
                                     : sizeof small / sizeof small[0];
        if (tensor)   /* a weight's dimensions: short ones (0 and 1), in a full sweep */
            n_vals = full_sweep() ? 2 : 0;
        /* a per-layer array: every layer, then the first alone */
        for (int first = 0; first < (s->n > 1 && full_sweep() ? 2 : 1); first++)
            for (size_t v = 0; v < n_vals; v++) {
                if (vals[v] == UINT64_MAX && !s->is_signed)
                    continue;   /* -1: the signed types' */
                site one = *s;
                one.n = first ? 1 : s->n;
                memcpy(buf, orig, (size_t)len);
                patch(buf, &one, vals[v]);
                char what[768];
                if (vals[v] == UINT64_MAX)
                    snprintf(what, sizeof what, "%s: %s%s = -1", file, s->what,
                             first ? "[0]" : "");
                else
                    snprintf(what, sizeof what, "%s: %s%s = %llu", file, s->what,
                             first ? "[0]" : "", (unsigned long long)vals[v]);
                try_one(sw, buf, (size_t)len, mmproj, what);
            }
    }
    free(orig);
    free(buf);
}

/* GGFIT_HOSTILE_FILE: one input as it is (a saved crash), in this process. */
static void use_file(const char *path)
{
    static uint8_t buf[1 << 22];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    use(buf, len, strstr(path, "mmproj") != NULL || getenv("GGFIT_HOSTILE_MMPROJ"), path);
}

static void test_sweep(void **state)
{
    (void)state;
    const char *one = getenv("GGFIT_HOSTILE_FILE"), *only = getenv("GGFIT_HOSTILE_ONLY");
    if (one && *one) {
        use_file(one);
        return;
    }
    model_name *names = calloc(1024, sizeof *names);
    DIR *d = opendir(tiny_dir());
    assert_true(names && d);
    size_t n = 0, n_swept = 0;
    for (struct dirent *e; n < 1024 && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 5 && len < sizeof names[0] && !strcmp(e->d_name + len - 5, ".gguf"))
            memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], model_name_cmp);
    sweep sw = { 0, 0 };
    for (size_t i = 0; i < n; i++)
        if (!only || strstr(names[i], only)) {
            sweep_file(&sw, tiny_dir(), names[i]);
            n_swept++;
        }
    fprintf(stderr, "hostile: %zu files, %zu mutations, %zu crashes\n", n_swept, sw.runs,
            sw.crashes);
    free(names);
    if (n_swept < 200 && !only)
        fail_msg("%s has %zu layouts; expected the tiny ones", tiny_dir(), n);
    assert_int_equal(sw.crashes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
