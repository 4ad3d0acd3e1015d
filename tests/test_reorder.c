/*
 * test_reorder.c - ggfit reorder: small models with real data rewritten
 * with the output layer last, every tensor's bytes read back identical,
 * Metal's span shrunk to the tensors, and the refusals (header-only input,
 * an existing output, a failed write that leaves nothing behind, an output
 * that is no regular file, for a split model's every shard).
 */
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "gguf_writer.h"

#define MiB (1ull << 20)

static char dir[256];

/* A llama-like model with its output layer stored first, and data: each
 * byte of the data section is a function of its position. */
static void write_model(const char *path, uint32_t n_layer, uint32_t n_embd, bool with_data)
{
    gw w = {0};
    gw_tiny_model_order(&w, "llama", n_layer, n_embd, 2 * n_embd, 1000, GGFIT_TYPE_F16, true);
    ggfit_gguf *g;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "m", &g, &err), 0);
    uint64_t end = 0;
    for (uint64_t i = 0; i < ggfit_gguf_n_tensors(g); i++) {
        const ggfit_tensor_info *t = ggfit_gguf_tensor(g, i);
        if (t->offset + t->n_bytes > end)
            end = t->offset + t->n_bytes;
    }
    uint64_t data = ggfit_gguf_data_offset(g, 0);
    ggfit_gguf_close(g);
    assert_int_equal(w.len, data);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(w.data, 1, w.len, f), w.len);
    for (uint64_t k = 0; with_data && k < end; k++)
        fputc((int)((k * 2654435761u) >> 13 & 0xff), f);
    assert_int_equal(fclose(f), 0);
    gw_free(&w);
}

static unsigned char *tensor_bytes(const char *path, const ggfit_gguf *g, const char *name,
                                   uint64_t *n)
{
    const ggfit_tensor_info *t = ggfit_gguf_tensor(g, (uint64_t)ggfit_gguf_find_tensor(g, name));
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *b = malloc(t->n_bytes);
    assert_int_equal(fseek(f, (long)(ggfit_gguf_data_offset(g, t->shard) + t->offset), SEEK_SET),
                     0);
    assert_int_equal(fread(b, 1, t->n_bytes, f), t->n_bytes);
    fclose(f);
    *n = t->n_bytes;
    return b;
}

static void test_round_trip(void **state)
{
    (void)state;
    char in[320], out[320];
    snprintf(in, sizeof in, "%s/in.gguf", dir);
    snprintf(out, sizeof out, "%s/out.gguf", dir);
    write_model(in, 4, 256, true);
    char *err = NULL;
    assert_int_equal(ggfit_reorder(in, out, false, &err), 0);

    ggfit_gguf *a, *b;
    assert_int_equal(ggfit_gguf_open(in, &a, &err), 0);
    assert_int_equal(ggfit_gguf_open(out, &b, &err), 0);
    assert_int_equal(ggfit_gguf_n_tensors(a), ggfit_gguf_n_tensors(b));
    assert_int_equal(ggfit_gguf_n_kv(a), ggfit_gguf_n_kv(b));
    uint64_t nt = ggfit_gguf_n_tensors(b);
    assert_string_equal(ggfit_gguf_tensor(a, 0)->name, "output_norm.weight");
    assert_string_equal(ggfit_gguf_tensor(b, 0)->name, "token_embd.weight");
    assert_string_equal(ggfit_gguf_tensor(b, nt - 1)->name, "output.weight");
    for (uint64_t i = 0; i < nt; i++) {
        const ggfit_tensor_info *t = ggfit_gguf_tensor(a, i);
        uint64_t na, nb;
        unsigned char *x = tensor_bytes(in, a, t->name, &na);
        unsigned char *y = tensor_bytes(out, b, t->name, &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(x, y, na);
        free(x);
        free(y);
    }
    /* Reordering again changes nothing. */
    char again[320];
    snprintf(again, sizeof again, "%s/again.gguf", dir);
    assert_int_equal(ggfit_reorder(out, again, false, &err), 0);
    struct stat s1, s2;
    assert_int_equal(stat(out, &s1), 0);
    assert_int_equal(stat(again, &s2), 0);
    assert_int_equal(s1.st_size, s2.st_size);
    ggfit_gguf_close(a);
    ggfit_gguf_close(b);
    unlink(again);

    /* Refusals: an existing output without --force, the input itself. */
    assert_int_equal(ggfit_reorder(in, out, false, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "exists (--force replaces it)"));
    ggfit_free(err);
    assert_int_equal(ggfit_reorder(in, out, true, &err), 0);
    assert_int_equal(ggfit_reorder(in, in, true, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "the output is the input"));
    ggfit_free(err);
    unlink(in);
    unlink(out);
}

/* Metal's span of a partial offload: the whole file before, the tensors
 * after. */
static uint64_t span_of(const char *path, uint64_t *tensors)
{
    ggfit_model *m;
    char *err = NULL;
    assert_int_equal(ggfit_model_open(path, &m, &err), 0);
    ggfit_device d;
    size_t n;
    assert_int_equal(ggfit_devices_parse("m3-max-64gb", &d, 1, &n, &err), 0);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 512;
    p.n_gpu_layers = 2;
    ggfit_projection pr;
    ggfit_verdict *v = malloc(sizeof *v);
    ggfit_host_mem host = { .total = 64ull << 30, .free = 60ull << 30, .source = "test" };
    ggfit_fit_options o;
    ggfit_fit_options_init(&o);
    assert_int_equal(ggfit_project(m, &p, &d, 1, &pr, NULL, &err), 0);
    assert_int_equal(ggfit_verdict_of(m, &p, &pr, &d, 1, &host, &o, v, &err), 0);
    uint64_t span = v->metal_mapped;
    *tensors = v->metal_tensors;
    free(v);
    ggfit_model_free(m);
    return span;
}

static void test_span_shrinks(void **state)
{
    (void)state;
    char in[320], out[320];
    snprintf(in, sizeof in, "%s/span-in.gguf", dir);
    snprintf(out, sizeof out, "%s/span-out.gguf", dir);
    write_model(in, 8, 512, true);
    char *err = NULL;
    assert_int_equal(ggfit_reorder(in, out, false, &err), 0);
    uint64_t t_in, t_out;
    uint64_t before = span_of(in, &t_in), after = span_of(out, &t_out);
    assert_int_equal(t_in, t_out);
    assert_true(before > 2 * t_in);
    assert_true(after >= t_out && after < t_out + 4096);
    unlink(in);
    unlink(out);
}

static void test_header_only_refused(void **state)
{
    (void)state;
    char in[320], out[320];
    snprintf(in, sizeof in, "%s/hdr.gguf", dir);
    snprintf(out, sizeof out, "%s/hdr-out.gguf", dir);
    write_model(in, 2, 256, false);
    char *err = NULL;
    assert_int_equal(ggfit_reorder(in, out, false, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "header-only file or a partial download"));
    ggfit_free(err);
    assert_int_not_equal(access(out, F_OK), 0);
    unlink(in);
}

/* A write that fails (here the file-size limit, as a full disk would)
 * leaves neither the output nor a temporary file. */
static void test_write_failure(void **state)
{
    (void)state;
    char in[320], out[320];
    snprintf(in, sizeof in, "%s/big.gguf", dir);
    snprintf(out, sizeof out, "%s/big-out.gguf", dir);
    write_model(in, 4, 512, true);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = { 1 << 20, 1 << 20 };
        setrlimit(RLIMIT_FSIZE, &rl);
        char *err = NULL;
        int rc = ggfit_reorder(in, out, false, &err);
        /* The answer as a signal: under valgrind an exit would run its leak
         * check on the test's own memory, which a SIGKILL does not. */
        raise(rc == GGFIT_EIO && err && strstr(err, "write failed") ? SIGKILL : SIGTERM);
        _exit(1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    assert_int_not_equal(access(out, F_OK), 0);
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)))
        assert_null(strstr(e->d_name, ".tmp."));
    closedir(d);
    unlink(in);
}

/* ---- outputs that are no regular file ------------------------------------ */

/* The files in dir whose name holds part, counted (temporary files left). */
static int files_with(const char *part)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, part) != NULL;
    if (d)
        closedir(d);
    return n;
}

static void expect_refused(const char *in, const char *out, const char *what)
{
    char *err = NULL;
    int rc = ggfit_reorder(in, out, true, &err);
    if (rc != GGFIT_EINVAL || !err || strncmp(err, out, strlen(out)) != 0 || !strstr(err, what))
        fail_msg("%s: status %s, message %s; expected '%s is %s'", out, ggfit_status_str(rc),
                 err ? err : "(none)", out, what);
    ggfit_free(err);
    assert_int_equal(files_with(".tmp."), 0);
}

/* A directory, a device, a FIFO, a socket or a symbolic link as OUT is
 * refused even with force, before the input is read (here an input that
 * does not exist, then a real one), and stays as it was. */
static void test_out_not_regular(void **state)
{
    (void)state;
    char in[320], none[320], sub[320], fifo[320], sock[320], link_[320], target[320];
    snprintf(in, sizeof in, "%s/in.gguf", dir);
    snprintf(none, sizeof none, "%s/none.gguf", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sock, sizeof sock, "%s/sock", dir);
    snprintf(link_, sizeof link_, "%s/link.gguf", dir);
    snprintf(target, sizeof target, "%s/target.gguf", dir);
    write_model(in, 2, 256, true);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    assert_true(strlen(sock) < sizeof sa.sun_path);
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    assert_true(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    FILE *f = fopen(target, "wb");
    assert_true(f && fputs("kept", f) >= 0 && fclose(f) == 0);
    assert_int_equal(symlink(target, link_), 0);
    for (int pass = 0; pass < 2; pass++) {
        const char *src = pass ? in : none;
        struct stat st;
        if (stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode))
            expect_refused(src, "/dev/full", "a character device, not a regular file");
        expect_refused(src, sub, "a directory, not a regular file");
        expect_refused(src, fifo, "a FIFO, not a regular file");
        expect_refused(src, sock, "a socket, not a regular file");
        expect_refused(src, link_, "a symbolic link, not a regular file");
    }
    struct stat st;
    assert_int_equal(lstat(link_, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_size, 4);
    assert_int_equal(stat(sub, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    close(fd);
    unlink(sock);
    unlink(link_);
    unlink(target);
    unlink(fifo);
    rmdir(sub);
    unlink(in);
}

/* Shard no (0-based) of a two-shard llama with data: token_embd and output
 * in the first, block 0's two tensors in the second. */
static void write_split_shard(const char *base, uint16_t no)
{
    static const char *const names[2][2] = {
        { "token_embd.weight", "output.weight" },
        { "blk.0.attn_q.weight", "blk.0.attn_k.weight" },
    };
    gw w = {0};
    char path[320];
    gw_header(&w, 3, 2, no == 0 ? 7 : 2);
    if (no == 0) {
        gw_kv_str(&w, "general.architecture", "llama");
        gw_kv_u32(&w, "llama.block_count", 1);
        gw_kv_u32(&w, "llama.context_length", 4096);
        gw_kv_u32(&w, "llama.embedding_length", 64);
    }
    gw_key(&w, "split.no", GGFIT_GGUF_UINT16);
    gw_u16(&w, no);
    gw_key(&w, "split.count", GGFIT_GGUF_UINT16);
    gw_u16(&w, 2);
    if (no == 0) {
        gw_key(&w, "split.tensors.count", GGFIT_GGUF_INT32);
        gw_u32(&w, 4);
    }
    for (int i = 0; i < 2; i++) {
        int64_t ne[2] = { 64, 4 };
        gw_tensor(&w, names[no][i], 2, ne, GGFIT_TYPE_F32, (uint64_t)i * 1024);
    }
    gw_pad(&w, 32);
    for (int k = 0; k < 2048; k++)
        gw_u8(&w, (uint8_t)(k * 7 + no));
    snprintf(path, sizeof path, "%s-%05u-of-00002.gguf", base, no + 1u);
    assert_int_equal(gw_write_file(&w, path), 0);
    gw_free(&w);
}

/* A split model's other shard names are checked as OUT is, before the
 * first shard is written: a directory where the second goes leaves no
 * first shard behind. */
static void test_split_names(void **state)
{
    (void)state;
    char base[320], in[340], out[340], out2[340];
    snprintf(base, sizeof base, "%s/sm", dir);
    write_split_shard(base, 0);
    write_split_shard(base, 1);
    snprintf(in, sizeof in, "%s-00001-of-00002.gguf", base);
    snprintf(out, sizeof out, "%s/re-00001-of-00002.gguf", dir);
    snprintf(out2, sizeof out2, "%s/re-00002-of-00002.gguf", dir);
    assert_int_equal(mkdir(out2, 0700), 0);
    expect_refused(in, out2, "a directory, not a regular file");
    char *err = NULL;
    assert_int_equal(ggfit_reorder(in, out, true, &err), GGFIT_EINVAL);
    if (!strstr(err, "re-00002-of-00002.gguf is a directory"))
        fail_msg("%s", err);
    ggfit_free(err);
    assert_int_not_equal(access(out, F_OK), 0);
    /* A shard name that is one of the input's shards is the input. */
    rmdir(out2);
    snprintf(out, sizeof out, "%s-00001-of-00002.gguf", base);
    assert_int_equal(ggfit_reorder(in, out, true, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "the output is the input"));
    ggfit_free(err);
    /* And with a free name, both shards are written. */
    snprintf(out, sizeof out, "%s/re-00001-of-00002.gguf", dir);
    if (ggfit_reorder(in, out, false, &err) != GGFIT_OK)
        fail_msg("%s", err);
    assert_int_equal(access(out, F_OK), 0);
    assert_int_equal(access(out2, F_OK), 0);
    unlink(out);
    unlink(out2);
    unlink(in);
    snprintf(in, sizeof in, "%s-00002-of-00002.gguf", base);
    unlink(in);
}

static int setup(void **state)
{
    (void)state;
    /* a fresh folder: one left by a run that crashed, or by another
     * process with this pid, is not ours */
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/ggfit-reorder-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_span_shrinks),
        cmocka_unit_test(test_header_only_refused),
        cmocka_unit_test(test_write_failure),
        cmocka_unit_test(test_out_not_regular),
        cmocka_unit_test(test_split_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
