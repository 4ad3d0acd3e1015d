/*
 * test_threads.c - ggfit.h says concurrent ggfit_project and ggfit_fit calls
 * on one model are safe. Eight threads share one open model and run a mix
 * of projections and fits with varied flags, each thread in its own order,
 * so that calls meet the model's kept graph in use and build their own. Every
 * result must equal, byte for byte, the same call made alone beforehand.
 * `make tsan` runs this under ThreadSanitizer, which fails on any race.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "test_util.h"

#define N_THREADS 8
#define N_CALLS 3    /* per thread: quick enough under valgrind */

/* One call: a projection or a fit, with its flags and devices. */
typedef struct job {
    const char *name;
    bool fit;
    ggfit_params p;
    ggfit_device devs[2];
    size_t n_devs;
    ggfit_fit_options opt;
} job;

/* What a call gave: the structs as returned (the fit's log moved out) and
 * every text the renderers make of them. */
typedef struct result {
    ggfit_status rc;
    ggfit_projection pr;
    int32_t *placement;       /* one per tensor of the model */
    ggfit_fit_result fit;
    char *log, *text, *json, *args, *err;
} result;

static void devices(job *j, const char *spec)
{
    char *err = NULL;
    if (ggfit_devices_parse(spec, j->devs, 2, &j->n_devs, &err) != GGFIT_OK)
        fail_msg("%s: %s", spec, err);
}

static job *base_job(job *j, const char *name, bool fit, const char *devs, uint32_t n_ctx)
{
    memset(j, 0, sizeof *j);
    j->name = name;
    j->fit = fit;
    ggfit_params_init(&j->p);
    ggfit_fit_options_init(&j->opt);
    devices(j, devs);
    if (n_ctx) {
        j->p.n_ctx = n_ctx;
        j->p.set_n_ctx = true;
    }
    return j;
}

static void add_override(ggfit_params *p, const char *pattern, const char *buffer)
{
    ggfit_override *o = &p->overrides[p->n_overrides++];
    snprintf(o->pattern, sizeof o->pattern, "%s", pattern);
    snprintf(o->buffer, sizeof o->buffer, "%s", buffer);
    p->set_overrides = true;
}

/* The jobs, with flags set in the struct as the parser would set them;
 * projections and fits alternate. */
static size_t make_jobs(job *jobs)
{
    size_t n = 0;
    job *j;
    base_job(&jobs[n++], "project -c 4096", false, "cuda:24GiB", 4096);
    base_job(&jobs[n++], "fit", true, "cuda:24077MiB", 0);
    j = base_job(&jobs[n++], "project -c 8192 -ngl 10 -fa off -ts 3,1", false,
                 "cuda:8GiB,cuda:12GiB", 8192);
    j->p.n_gpu_layers = 10;
    j->p.set_n_gpu_layers = true;
    j->p.flash_attn = GGFIT_FA_OFF;
    j->p.tensor_split[0] = 3;
    j->p.tensor_split[1] = 1;
    j->p.set_tensor_split = true;
    base_job(&jobs[n++], "fit -c 16384", true, "cuda:8GiB,cuda:12GiB", 16384);
    j = base_job(&jobs[n++], "project -c 4096 -cmoe -fa on -ctk q8_0 -ctv q8_0", false,
                 "cuda:24GiB", 4096);
    j->p.cpu_moe = true;
    j->p.set_overrides = true;
    j->p.flash_attn = GGFIT_FA_ON;
    j->p.type_k = j->p.type_v = GGFIT_TYPE_Q8_0;
    j = base_job(&jobs[n++], "fit, CPU only, 16 GiB", true, "none", 0);
    j->opt.host_free = (uint64_t)16 << 30;
    j = base_job(&jobs[n++], "project -c 4096 -ncmoe 3 -nkvo -np 2 -ub 256", false,
                 "cuda:24GiB", 4096);
    j->p.n_cpu_moe = 3;
    j->p.set_overrides = true;
    j->p.no_kv_offload = true;
    j->p.n_seq = 2;
    j->p.n_ubatch = 256;
    j = base_job(&jobs[n++], "fit -fitt 512 -fitc 2048", true, "cuda:4GiB,cuda:4GiB", 0);
    j->opt.margin[0] = (uint64_t)512 << 20;
    j->opt.n_margins = 1;
    j->opt.n_ctx_min = 2048;
    j = base_job(&jobs[n++], "project -c 4096 -ot blk\\.1\\..*=CPU", false, "cuda:24GiB", 4096);
    add_override(&j->p, "blk\\.1\\..*", "CPU");
    j = base_job(&jobs[n++], "fit -c 32768 -ngl 20", true, "cuda:24077MiB", 32768);
    j->p.n_gpu_layers = 20;
    j->p.set_n_gpu_layers = true;
    base_job(&jobs[n++], "project -c 2048, CPU only", false, "none", 2048);
    j = base_job(&jobs[n++], "fit -fit off", true, "cuda:8GiB", 0);
    j->opt.check_only = true;
    return n;
}

static void run_job(const ggfit_model *m, const job *j, result *r)
{
    int32_t *placement = r->placement;
    memset(r, 0, sizeof *r);
    memset(placement, 0, ggfit_model_n_tensors(m) * sizeof placement[0]);
    r->placement = placement;
    if (!j->fit) {
        r->rc = ggfit_project(m, &j->p, j->devs, j->n_devs, &r->pr, r->placement, &r->err);
        if (r->rc == GGFIT_OK) {
            r->text = ggfit_projection_text(&r->pr, j->devs);
            r->json = ggfit_projection_json(&r->pr, j->devs);
        }
        return;
    }
    r->rc = ggfit_fit(m, &j->p, j->devs, j->n_devs, &j->opt, &r->fit, &r->err);
    r->log = r->fit.log;
    r->fit.log = NULL;
    if (r->rc == GGFIT_OK) {
        r->args = ggfit_fit_args(&r->fit, j->devs, j->n_devs);
        r->json = ggfit_fit_json(&r->fit, j->devs, j->n_devs);
    }
}

static void free_result(result *r)
{
    ggfit_free(r->log);
    ggfit_free(r->text);
    ggfit_free(r->json);
    ggfit_free(r->args);
    ggfit_free(r->err);
    r->log = r->text = r->json = r->args = r->err = NULL;
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The first difference between two results of one job, or NULL. */
static const char *differs(const result *a, const result *b, uint64_t n_tensors)
{
    if (a->rc != b->rc)
        return "the status";
    if (!same_str(a->err, b->err))
        return "the error message";
    if (memcmp(&a->pr, &b->pr, sizeof a->pr) != 0)
        return "the projection";
    if (memcmp(a->placement, b->placement, n_tensors * sizeof a->placement[0]) != 0)
        return "the placement";
    if (memcmp(&a->fit, &b->fit, sizeof a->fit) != 0)
        return "the fit result";
    if (!same_str(a->log, b->log))
        return "the fit log";
    if (!same_str(a->text, b->text) || !same_str(a->json, b->json) ||
        !same_str(a->args, b->args))
        return "the rendered text";
    return NULL;
}

typedef struct shared {
    const ggfit_model *m;
    uint64_t n_tensors;
    const job *jobs;
    const result *want;       /* one per job, made alone */
    size_t n_jobs;
    pthread_barrier_t start;
    atomic_int n_bad;
    char first_bad[256];      /* written by the first thread that sees one */
} shared;

typedef struct worker {
    shared *s;
    size_t id;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    shared *s = w->s;
    result got = { .placement = calloc(s->n_tensors ? s->n_tensors : 1, sizeof(int32_t)) };
    if (!got.placement)
        abort();
    pthread_barrier_wait(&s->start);
    for (size_t k = 0; k < N_CALLS; k++) {
        /* Jobs alternate projection and fit (even, odd), so threads run
         * both: thread t and t + 4 make the same three calls at the same
         * time, which find the model's kept graph in use, and the other
         * threads' calls overlap them; every job runs twice. */
        size_t i = (w->id * N_CALLS + k * 7) % s->n_jobs;
        run_job(s->m, &s->jobs[i], &got);
        const char *what = differs(&got, &s->want[i], s->n_tensors);
        if (what && atomic_fetch_add(&s->n_bad, 1) == 0)
            snprintf(s->first_bad, sizeof s->first_bad, "thread %zu, %s: %s differs", w->id,
                     s->jobs[i].name, what);
        free_result(&got);
    }
    free(got.placement);
    return NULL;
}

static void check_model(const char *file)
{
    char path[512];
    model_path(path, sizeof path, file);
    ggfit_model *m;
    char *err = NULL;
    if (ggfit_model_open(path, &m, &err) != GGFIT_OK)
        fail_msg("%s", err);
    static job jobs[16];
    static result want[16];
    size_t n_jobs = make_jobs(jobs);
    assert_int_equal(n_jobs, 12);   /* the threads' share of them assumes 12 */
    _Static_assert(N_THREADS == 8 && N_CALLS == 3, "the threads' share of the jobs");
    shared s = { .m = m, .n_tensors = ggfit_model_n_tensors(m), .jobs = jobs, .want = want,
                 .n_jobs = n_jobs };
    /* Alone first: the results every thread must reproduce. */
    for (size_t i = 0; i < n_jobs; i++) {
        want[i].placement = calloc(s.n_tensors ? s.n_tensors : 1, sizeof(int32_t));
        assert_non_null(want[i].placement);
        run_job(m, &jobs[i], &want[i]);
        if (want[i].rc != GGFIT_OK)
            fail_msg("%s, %s: %s", file, jobs[i].name, want[i].err ? want[i].err : "failed");
    }
    assert_int_equal(pthread_barrier_init(&s.start, NULL, N_THREADS), 0);
    pthread_t th[N_THREADS];
    worker w[N_THREADS];
    for (size_t t = 0; t < N_THREADS; t++) {
        w[t] = (worker){ .s = &s, .id = t };
        assert_int_equal(pthread_create(&th[t], NULL, work, &w[t]), 0);
    }
    for (size_t t = 0; t < N_THREADS; t++)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    pthread_barrier_destroy(&s.start);
    for (size_t i = 0; i < n_jobs; i++) {
        free_result(&want[i]);
        free(want[i].placement);
    }
    ggfit_model_free(m);
    int n_bad = atomic_load(&s.n_bad);
    if (n_bad)
        fail_msg("%s: %d of %d calls differ from the same call made alone; first: %s", file,
                 n_bad, N_THREADS * N_CALLS, s.first_bad);
    printf("threads: %s: %d calls in %d threads equal to the same calls alone\n", file,
           N_THREADS * N_CALLS, N_THREADS);
}

static void test_gpt_oss_20b(void **state)
{
    (void)state;
    check_model("gpt-oss-20b-mxfp4.gguf");
}

static void test_qwen3_30b_a3b(void **state)
{
    (void)state;
    check_model("qwen3-30b-a3b-Q4_K_M.gguf");
}

static void test_gemma3_4b(void **state)
{
    (void)state;
    check_model("gemma-3-4b-Q4_K_M.gguf");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpt_oss_20b),
        cmocka_unit_test(test_qwen3_30b_a3b),
        cmocka_unit_test(test_gemma3_4b),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
