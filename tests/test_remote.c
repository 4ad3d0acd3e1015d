/*
 * test_remote.c - models read over HTTP (src/remote/): a real nginx on
 * 127.0.0.1 (tests/http_server.sh: its own config, logs and files in a
 * temporary folder) serving header-only and sparse files with Range, a
 * redirect, a redirect loop, 401, 404, 429, a server block that ignores
 * Range, a stalled one, and a Hugging Face API laid out as files. Skipped
 * with a message only where nginx is not installed (scripts/deps.sh test
 * installs it).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "gguf_writer.h"
#include "remote/remote.h"

static http_fixture srv;

static int start_server(void **state)
{
    (void)state;
    if (http_fixture_start(&srv, "remote", true, "the remote tests") || srv.none)
        return srv.none ? 0 : -1;
    /* Hugging Face's API here; MODEL_ENDPOINT would win over it. */
    unsetenv("MODEL_ENDPOINT");
    setenv("HF_ENDPOINT", srv.base, 1);
    unsetenv("HF_TOKEN");
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache", srv.dir);
    setenv("GGFIT_CACHE_DIR", cache, 1);
    return 0;
}

static int stop_server(void **state)
{
    (void)state;
    return http_fixture_stop(&srv);
}

#define NEED_SERVER() do { if (srv.none) skip(); } while (0)

static void opts(ggfit_remote_options *o)
{
    ggfit_remote_options_init(o);
    o->connect_timeout_ms = 2000;
    o->stall_timeout_ms = 1000;
    o->cache_dir[0] = '\0';   /* every byte counted, none from the cache */
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (uint64_t)st.st_size;
}

/* The same header as the local file, and what it cost. */
static void same_as_local(const char *url_path, const char *file, const ggfit_remote_options *o,
                          ggfit_remote_stats *st)
{
    char url[512], local[512], *err = NULL;
    ggfit_gguf *r, *l;
    snprintf(url, sizeof url, "%s/%s", srv.base, url_path);
    model_path(local, sizeof local, file);
    memset(st, 0, sizeof *st);
    if (ggfit_gguf_open_url(url, o, st, &r, &err))
        fail_msg("%s", err);
    assert_int_equal(ggfit_gguf_open(local, &l, &err), GGFIT_OK);
    assert_int_equal(ggfit_gguf_n_tensors(r), ggfit_gguf_n_tensors(l));
    assert_int_equal(ggfit_gguf_n_kv(r), ggfit_gguf_n_kv(l));
    assert_int_equal(ggfit_gguf_tensor_bytes(r), ggfit_gguf_tensor_bytes(l));
    assert_int_equal(ggfit_gguf_data_offset(r, 0), ggfit_gguf_data_offset(l, 0));
    assert_string_equal(ggfit_gguf_shard_path(r, 0), url);
    ggfit_gguf_close(r);
    ggfit_gguf_close(l);
}

static void test_range_reads(void **state)
{
    (void)state;
    NEED_SERVER();
    ggfit_remote_options o;
    ggfit_remote_stats st;
    char local[512];
    opts(&o);
    model_path(local, sizeof local, "gpt-oss-120b-mxfp4.gguf");
    uint64_t size = file_size(local);
    /* A 43 KB header: the first 32 KiB, then the tensor infos estimated
     * from those read. */
    same_as_local("files/gpt-oss-120b-mxfp4.gguf", "gpt-oss-120b-mxfp4.gguf", &o, &st);
    assert_int_equal(st.requests, 2);
    assert_int_equal(st.bytes, size);
    /* The same header in front of 4 GiB of data: under 1.1x its bytes. */
    char *err = NULL;
    ggfit_gguf *g;
    char url[256];
    snprintf(url, sizeof url, "%s/files/big.gguf", srv.base);
    memset(&st, 0, sizeof st);
    if (ggfit_gguf_open_url(url, &o, &st, &g, &err))
        fail_msg("%s", err);
    uint64_t header = ggfit_gguf_data_offset(g, 0);
    ggfit_gguf_close(g);
    if (st.bytes > header * 11 / 10)
        fail_msg("%llu bytes received for a %llu-byte header", (unsigned long long)st.bytes,
                 (unsigned long long)header);
    /* From 4 KiB, never a byte twice. */
    o.first_bytes = 4096;
    same_as_local("files/gpt-oss-120b-mxfp4.gguf", "gpt-oss-120b-mxfp4.gguf", &o, &st);
    assert_true(st.requests >= 2);
    assert_true(st.requests < 16);
    assert_true(st.bytes <= size);
    /* Every shipped layout reads the same over HTTP. */
    model_name names[64];
    size_t n = model_files(names, 64);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        char p[200];
        snprintf(p, sizeof p, "files/%s", names[i]);
        same_as_local(p, names[i], &o, &st);
    }
}

static void test_redirect(void **state)
{
    (void)state;
    NEED_SERVER();
    ggfit_remote_options o;
    ggfit_remote_stats st;
    opts(&o);
    o.first_bytes = 8192;
    same_as_local("redirect/qwen3-14b-f16.gguf", "qwen3-14b-f16.gguf", &o, &st);
    assert_true(st.requests > 1);
}

/* A server that ignores Range sends a 4 GiB file whole: ggfit stops once
 * the header is there. */
static void test_range_ignored(void **state)
{
    (void)state;
    NEED_SERVER();
    ggfit_remote_options o;
    ggfit_remote_stats st;
    char url[256], *err = NULL;
    ggfit_gguf *g;
    opts(&o);
    for (int k = 0; k < 2; k++) {
        o.first_bytes = k ? 4096 : 0;
        memset(&st, 0, sizeof st);
        snprintf(url, sizeof url, "%s/norange/big.gguf", srv.base);
        time_t t0 = time(NULL);
        if (ggfit_gguf_open_url(url, &o, &st, &g, &err))
            fail_msg("%s", err);
        assert_int_equal(ggfit_gguf_n_tensors(g), 687);
        ggfit_gguf_close(g);
        assert_true(time(NULL) - t0 < 5);
        if (st.bytes > ((uint64_t)32 << 20))
            fail_msg("%llu bytes received for a 43 KB header", (unsigned long long)st.bytes);
    }
}

static void expect_error(const char *path, const ggfit_remote_options *o, int status,
                         const char *needle)
{
    char url[512], *err = NULL;
    ggfit_gguf *g = (ggfit_gguf *)1;
    snprintf(url, sizeof url, "%s/%s", path[0] == '/' ? "" : srv.base, path);
    int rc = ggfit_gguf_open_url(path[0] == '/' ? path + 1 : url, o, NULL, &g, &err);
    if (rc != status || !err || !strstr(err, needle))
        fail_msg("%s: status %d, '%s'; expected %d with '%s'", url, rc, err ? err : "(none)",
                 status, needle);
    assert_null(g);
    ggfit_free(err);
}

static void test_errors(void **state)
{
    (void)state;
    NEED_SERVER();
    ggfit_remote_options o;
    opts(&o);
    expect_error("files/no-such.gguf", &o, GGFIT_EIO, "HTTP 404: no such file");
    expect_error("gated/model.gguf", &o, GGFIT_EIO, "gated or private: set HF_TOKEN");
    expect_error("gated/model.gguf", &o, GGFIT_EIO, "Access to model ggfit/gated is restricted");
    o.token = "hf_0123456789abcdefghijklmnopqrstuvwxyz";
    expect_error("gated/model.gguf", &o, GGFIT_EIO, "the token (HF_TOKEN or -hft) was refused");
    o.token = NULL;
    /* the same refusal from a server that is not the hub: no word of
     * HF_TOKEN, which is never sent to it */
    char hub[512];
    snprintf(hub, sizeof hub, "%s", getenv("HF_ENDPOINT"));
    setenv("HF_ENDPOINT", "https://hub.example/", 1);
    expect_error("gated/model.gguf", &o, GGFIT_EIO, "access denied by the server (not Hugging "
                                                     "Face: no token is sent to it)");
    setenv("HF_ENDPOINT", hub, 1);
    expect_error("limited/model.gguf", &o, GGFIT_EIO, "HTTP 429: rate limited");
    expect_error("loop", &o, GGFIT_EIO, "too many redirects");
    /* JSON is not a GGUF file */
    expect_error("api/models/ggfit/Qwen3-GGUF/refs", &o, GGFIT_EFORMAT,
                 "not a GGUF file: magic is \"{\"br\"");
    /* a stalled transfer fails after the stall timeout, not later */
    time_t t0 = time(NULL);
    expect_error("slow/qwen3-0.6b-f16.gguf", &o, GGFIT_EIO, "stalled");
    assert_true(time(NULL) - t0 < 10);
    /* nothing listens: a closed port of this machine */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    assert_true(s >= 0);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    close(s);
    char url[128];
    snprintf(url, sizeof url, "/http://127.0.0.1:%d/m.gguf", ntohs(a.sin_port));
    expect_error(url, &o, GGFIT_EIO, "onnect");
    expect_error("/ftp://127.0.0.1/m.gguf", &o, GGFIT_EINVAL, "not an http:// or https:// URL");
    /* a file cut in the middle of its header */
    char local[512], cut[256];
    model_path(local, sizeof local, "qwen3-0.6b-f16.gguf");
    FILE *in = fopen(local, "rb"), *out;
    snprintf(cut, sizeof cut, "%s/www/files/cut.gguf", srv.dir);
    assert_non_null(in);
    assert_non_null(out = fopen(cut, "wb"));
    for (int i = 0; i < 15000; i++)
        fputc(fgetc(in), out);
    fclose(in);
    fclose(out);
    chmod(cut, 0644);
    expect_error("files/cut.gguf", &o, GGFIT_EFORMAT, "left in the file");
}

/* A misbehaving server of the test's own (a child process on 127.0.0.1),
 * for what nginx will not do: a Content-Length it does not keep, a gzip
 * body nobody asked for, a 206 of other bytes than asked, a 206 shorter
 * than it says, no reply at all. */
static void bad_reply(int c, const char *path, const unsigned char *gguf, size_t n)
{
    char h[512];
    int k;
    if (!strcmp(path, "/lie")) {
        k = snprintf(h, sizeof h, "HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n"
                                  "Connection: close\r\n\r\n");
        (void)!write(c, h, (size_t)k);
        (void)!write(c, gguf, n < 5000 ? n : 5000);
    } else if (!strcmp(path, "/gzip")) {
        static const unsigned char gz[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 'x', 'y' };
        k = snprintf(h, sizeof h, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n"
                                  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     sizeof gz);
        (void)!write(c, h, (size_t)k);
        (void)!write(c, gz, sizeof gz);
    } else if (!strcmp(path, "/other-range")) {
        k = snprintf(h, sizeof h, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes "
                                  "100-199/%zu\r\nContent-Length: 100\r\nConnection: close"
                                  "\r\n\r\n", n);
        (void)!write(c, h, (size_t)k);
        (void)!write(c, gguf + 100, 100);
    } else if (!strcmp(path, "/short")) {
        k = snprintf(h, sizeof h, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes "
                                  "0-999/%zu\r\nContent-Length: 1000\r\nConnection: close"
                                  "\r\n\r\n", n);
        (void)!write(c, h, (size_t)k);
        (void)!write(c, gguf, 1000);
    } else {
        sleep(5);   /* /silent: no reply */
    }
}

static pid_t bad_server(int *port_out)
{
    char local[512];
    model_path(local, sizeof local, "qwen3-14b-f16.gguf");
    FILE *f = fopen(local, "rb");
    assert_non_null(f);
    static unsigned char gguf[1 << 16];
    size_t n = fread(gguf, 1, sizeof gguf, f);
    fclose(f);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    assert_true(s >= 0);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s, 8), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    *port_out = ntohs(a.sin_port);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30);   /* bounded even if the parent never stops it */
        for (int i = 0; i < 32; i++) {
            int c = accept(s, NULL, NULL);
            if (c < 0)
                _exit(1);
            char req[4096];
            size_t got = 0;
            ssize_t r;
            while (got + 1 < sizeof req && (r = read(c, req + got, sizeof req - 1 - got)) > 0) {
                got += (size_t)r;
                req[got] = '\0';
                if (strstr(req, "\r\n\r\n"))
                    break;
            }
            req[got] = '\0';
            char path[256] = "";
            sscanf(req, "GET %255s", path);
            bad_reply(c, path, gguf, n);
            close(c);
        }
        _exit(0);
    }
    close(s);
    return pid;
}

static void test_misbehaving(void **state)
{
    (void)state;
    int bport;
    pid_t pid = bad_server(&bport);
    ggfit_remote_options o;
    opts(&o);
    char url[128];
    struct { const char *path; int status; const char *needle; } cases[] = {
        { "/lie", GGFIT_EIO, "transfer closed" },
        { "/gzip", GGFIT_EFORMAT, "not a GGUF file: magic is \"\\x1f\\x8b\\x08\\x00\"" },
        { "/other-range", GGFIT_EIO, "the server sent bytes from 100 when asked for bytes from 0" },
        { "/short", GGFIT_EIO, "the server sent 1000 bytes, the header needs" },
        { "/silent", GGFIT_EIO, "stalled" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(url, sizeof url, "/http://127.0.0.1:%d%s", bport, cases[i].path);
        expect_error(url, &o, cases[i].status, cases[i].needle);
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* The malformed catalogue: over HTTP, the same status and message as from
 * the file (the URL in place of the path). */
static void test_malformed(void **state)
{
    (void)state;
    NEED_SERVER();
    const char *mdir = getenv("GGFIT_MALFORMED");
    char cmd[512];
    if (!mdir || !*mdir)
        mdir = "tests/malformed";
    snprintf(cmd, sizeof cmd, "mkdir -p %s/www/m && cp %s/*.gguf %s/www/m/ && chmod -R a+rX "
             "%s/www/m", srv.dir, mdir, srv.dir, srv.dir);
    assert_int_equal(system(cmd), 0);
    DIR *d = opendir(mdir);
    assert_non_null(d);
    ggfit_remote_options o;
    opts(&o);
    o.first_bytes = 64;   /* every growth step taken */
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".gguf"))
            continue;
        char path[512], url[512], *lerr = NULL, *rerr = NULL, want[2048];
        ggfit_gguf *g;
        snprintf(path, sizeof path, "%s/www/m/%s", srv.dir, e->d_name);
        snprintf(url, sizeof url, "%s/m/%s", srv.base, e->d_name);
        int lrc = ggfit_gguf_open(path, &g, &lerr);
        if (!lrc)
            ggfit_gguf_close(g);
        int rrc = ggfit_gguf_open_url(url, &o, NULL, &g, &rerr);
        if (!rrc)
            ggfit_gguf_close(g);
        /* the local message with the URL for the path */
        want[0] = '\0';
        if (lerr) {
            char pre[512];
            snprintf(pre, sizeof pre, "%s/www/m/", srv.dir);
            size_t k = 0;
            for (const char *p = lerr; *p && k + 200 < sizeof want;) {
                if (!strncmp(p, pre, strlen(pre))) {
                    k += (size_t)snprintf(want + k, sizeof want - k, "%s/m/", srv.base);
                    p += strlen(pre);
                } else {
                    want[k++] = *p++;
                    want[k] = '\0';
                }
            }
        }
        if (lrc != rrc || (lerr && (!rerr || strcmp(want, rerr))))
            fail_msg("%s: local %d '%s', remote %d '%s'", e->d_name, lrc, lerr ? lerr : "",
                     rrc, rerr ? rerr : "");
        ggfit_free(lerr);
        ggfit_free(rerr);
        n++;
    }
    closedir(d);
    assert_true(n > 20);
}

/* A split model: every shard's header, from the names' pattern. */
static void write_shard(const char *folder, const char *name, uint16_t no, uint16_t count,
                        const char *tensor)
{
    gw w = {0};
    char path[512];
    gw_header(&w, 3, 1, no == 0 ? 4 : 2);
    if (no == 0)
        gw_kv_str(&w, "general.architecture", "llama");
    gw_key(&w, "split.no", GGFIT_GGUF_UINT16);
    gw_u16(&w, no);
    gw_key(&w, "split.count", GGFIT_GGUF_UINT16);
    gw_u16(&w, count);
    if (no == 0) {
        gw_key(&w, "split.tensors.count", GGFIT_GGUF_INT32);
        gw_u32(&w, count);
    }
    int64_t ne[2] = { 64, 4 };
    gw_tensor(&w, tensor, 2, ne, GGFIT_TYPE_F32, 0);
    gw_pad(&w, 32);
    snprintf(path, sizeof path, "%s/%s-%05u-of-%05u.gguf", folder, name, no + 1u, count);
    assert_int_equal(gw_write_file(&w, path), 0);
    chmod(path, 0644);
    gw_free(&w);
}

static void test_split(void **state)
{
    (void)state;
    NEED_SERVER();
    char folder[256], url[512], *err = NULL;
    ggfit_gguf *g;
    ggfit_remote_options o;
    opts(&o);
    snprintf(folder, sizeof folder, "%s/www/files", srv.dir);
    write_shard(folder, "split", 0, 2, "a.weight");
    write_shard(folder, "split", 1, 2, "b.weight");
    for (int k = 1; k <= 2; k++) {
        snprintf(url, sizeof url, "%s/files/split-%05d-of-00002.gguf", srv.base, k);
        if (ggfit_gguf_open_url(url, &o, NULL, &g, &err))
            fail_msg("%s", err);
        assert_int_equal(ggfit_gguf_n_shards(g), 2);
        assert_int_equal(ggfit_gguf_n_tensors(g), 2);
        assert_string_equal(ggfit_gguf_tensor(g, 1)->name, "b.weight");
        assert_non_null(strstr(ggfit_gguf_shard_path(g, 1), "/files/split-00002-of-00002.gguf"));
        ggfit_gguf_close(g);
    }
    /* a missing shard names the model */
    write_shard(folder, "lone", 0, 2, "a.weight");
    snprintf(url, sizeof url, "%s/files/lone-00001-of-00002.gguf", srv.base);
    assert_int_equal(ggfit_gguf_open_url(url, &o, NULL, &g, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "shard 2 of 2"));
    assert_non_null(strstr(err, "lone-00002-of-00002.gguf: HTTP 404"));
    ggfit_free(err);
}

/* The cache: the second read of a header costs a 304, or nothing when the
 * URL names a commit or --offline. */
static void open_counted(const char *url, const ggfit_remote_options *o, ggfit_remote_stats *st)
{
    char *err = NULL;
    ggfit_gguf *g;
    memset(st, 0, sizeof *st);
    if (ggfit_gguf_open_url(url, o, st, &g, &err))
        fail_msg("%s", err);
    ggfit_gguf_close(g);
}

/* A real-size tokenizer (12.9 MB of header, tools/mkvocab.py) in front of
 * 60 GB of sparse data: read for its header's size plus at most one
 * request's slack (the first MiB), and again from the cache for nothing. */
static void test_tokenizer_header(void **state)
{
    (void)state;
    NEED_SERVER();
    char cmd[1024], served[128], url[256], *err = NULL;
    snprintf(served, sizeof served, "%s/www/files/vocab.gguf", srv.dir);
    snprintf(cmd, sizeof cmd, "python3 tools/mkvocab.py %s/gpt-oss-120b-mxfp4.gguf %s && "
             "truncate -s 60G %s", models_dir(), served, served);
    assert_int_equal(system(cmd), 0);
    ggfit_remote_options o;
    ggfit_remote_stats st;
    ggfit_gguf *g;
    opts(&o);
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s/cache-vocab", srv.dir);
    snprintf(url, sizeof url, "%s/files/vocab.gguf", srv.base);
    memset(&st, 0, sizeof st);
    if (ggfit_gguf_open_url(url, &o, &st, &g, &err))
        fail_msg("%s", err);
    uint64_t data = ggfit_gguf_data_offset(g, 0);
    ggfit_gguf_close(g);
    assert_true(data > ((uint64_t)12 << 20));
    if (st.bytes > data + ((uint64_t)1 << 20) || st.bytes > data * 11 / 10)
        fail_msg("%llu bytes received for a %llu-byte header", (unsigned long long)st.bytes,
                 (unsigned long long)data);
    open_counted(url, &o, &st);
    assert_int_equal(st.bytes, 0);
}

static void test_cache(void **state)
{
    (void)state;
    NEED_SERVER();
    ggfit_remote_options o;
    ggfit_remote_stats st;
    char url[512], local[512], *err = NULL;
    ggfit_gguf *g;
    opts(&o);
    snprintf(o.cache_dir, sizeof o.cache_dir, "%s/cache-test", srv.dir);
    model_path(local, sizeof local, "qwen3-14b-f16.gguf");
    uint64_t size = file_size(local);
    snprintf(url, sizeof url, "%s/files/qwen3-14b-f16.gguf", srv.base);
    open_counted(url, &o, &st);
    assert_int_equal(st.bytes, size);
    /* the ETag still holds: one request, a 304 without a body */
    open_counted(url, &o, &st);
    assert_int_equal(st.requests, 1);
    assert_int_equal(st.bytes, 0);
    same_as_local("files/qwen3-14b-f16.gguf", "qwen3-14b-f16.gguf", &o, &st);
    assert_int_equal(st.bytes, 0);
    /* offline: no request at all */
    o.offline = true;
    open_counted(url, &o, &st);
    assert_int_equal(st.requests, 0);
    snprintf(url, sizeof url, "%s/files/qwen3-0.6b-f16.gguf", srv.base);
    assert_int_equal(ggfit_gguf_open_url(url, &o, NULL, &g, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "not in the cache"));
    ggfit_free(err);
    o.offline = false;
    /* a changed file has a new ETag: read anew */
    char served[256];
    snprintf(served, sizeof served, "%s/www/files/qwen3-14b-f16.gguf", srv.dir);
    struct stat sb;
    assert_int_equal(stat(served, &sb), 0);
    struct timespec ts[2] = { { .tv_sec = sb.st_mtime - 100 }, { .tv_sec = sb.st_mtime - 100 } };
    assert_int_equal(utimensat(AT_FDCWD, served, ts, 0), 0);
    snprintf(url, sizeof url, "%s/files/qwen3-14b-f16.gguf", srv.base);
    open_counted(url, &o, &st);
    assert_int_equal(st.bytes, size);

    /* Hugging Face: resolve/COMMIT/FILE never changes; the API replies are
     * kept for --offline */
    ggfit_hf_model m;
    assert_int_equal(ggfit_hf_resolve("ggfit/Qwen3-GGUF:Q8_0", NULL, &o, NULL, &m, &err), 0);
    open_counted(m.url, &o, &st);
    assert_true(st.bytes > 0);
    open_counted(m.url, &o, &st);
    assert_int_equal(st.requests, 0);
    ggfit_hf_model_free(&m);
    o.offline = true;
    memset(&st, 0, sizeof st);
    if (ggfit_hf_resolve("ggfit/Qwen3-GGUF:Q8_0", NULL, &o, &st, &m, &err))
        fail_msg("%s", err);
    assert_int_equal(st.requests, 0);
    assert_string_equal(m.file, "Qwen3-0.6B-Q8_0.gguf");
    open_counted(m.url, &o, &st);
    assert_int_equal(st.requests, 0);
    ggfit_hf_model_free(&m);
    assert_int_equal(ggfit_hf_resolve("ggfit/Other-GGUF", NULL, &o, NULL, &m, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "not in the cache"));
    ggfit_free(err);
}

/* ---- Hugging Face ---------------------------------------------------------------- */

static void expect_pick(const char *repo, const char *file, const char *want)
{
    ggfit_hf_model m;
    ggfit_remote_options o;
    char *err = NULL, url[512];
    opts(&o);
    if (ggfit_hf_resolve(repo, file, &o, NULL, &m, &err))
        fail_msg("%s: %s", repo, err);
    assert_string_equal(m.file, want);
    snprintf(url, sizeof url, "%s/ggfit/Qwen3-GGUF/resolve/"
             "0123456789abcdef0123456789abcdef01234567/%s", srv.base, want);
    assert_string_equal(m.url, url);
    assert_string_equal(m.commit, "0123456789abcdef0123456789abcdef01234567");
    assert_int_equal(m.n_files, 12);
    ggfit_hf_model_free(&m);
}

static void expect_hf_error(const char *repo, const char *file, int status, const char *needle)
{
    ggfit_hf_model m;
    ggfit_remote_options o;
    char *err = NULL;
    opts(&o);
    int rc = ggfit_hf_resolve(repo, file, &o, NULL, &m, &err);
    if (rc != status || !err || !strstr(err, needle))
        fail_msg("%s: status %d, '%s'; expected %d with '%s'", repo, rc, err ? err : "(none)",
                 status, needle);
    assert_null(m.url);
    ggfit_free(err);
}

static void test_hf_resolve(void **state)
{
    (void)state;
    NEED_SERVER();
    /* llama.cpp's default: Q4_K_M, the first in the repo's order */
    expect_pick("ggfit/Qwen3-GGUF", NULL, "Qwen3-14B-Q4_K_M.gguf");
    /* a tag, case-insensitive, followed by '.' or '-' */
    expect_pick("ggfit/Qwen3-GGUF:q8_0", NULL, "Qwen3-0.6B-Q8_0.gguf");
    expect_pick("ggfit/Qwen3-GGUF:F16", NULL, "Qwen3-0.6B-F16.gguf");
    /* a split model: its first shard */
    expect_pick("ggfit/Qwen3-GGUF:Q6_K", NULL, "Qwen3-Split-Q6_K-00001-of-00002.gguf");
    /* -hff wins over the tag */
    expect_pick("ggfit/Qwen3-GGUF:Q8_0", "Qwen3-14B-F16.gguf", "Qwen3-14B-F16.gguf");
    expect_hf_error("ggfit/Qwen3-GGUF:Q5_K_S", NULL, GGFIT_EIO,
                    "no GGUF file for the quant 'Q5_K_S'; its GGUF files: Qwen3-0.6B-F16.gguf, ");
    expect_hf_error("ggfit/Qwen3-GGUF", "nope.gguf", GGFIT_EIO, "no file 'nope.gguf'");
    expect_hf_error("ggfit/gated-GGUF", NULL, GGFIT_EIO, "set HF_TOKEN");
    ggfit_remote_options bad;
    ggfit_hf_model hm;
    char *berr = NULL;
    opts(&bad);
    bad.token = "not-a-token";
    assert_int_equal(ggfit_hf_resolve("ggfit/gated-GGUF", NULL, &bad, NULL, &hm, &berr),
                     GGFIT_EIO);
    assert_non_null(strstr(berr, "the token given was not sent"));
    ggfit_free(berr);
    expect_hf_error("ggfit/none-GGUF", NULL, GGFIT_EIO, "ggfit/none-GGUF: no such repository");
    expect_hf_error("ggfit", NULL, GGFIT_EINVAL, "expected <user>/<model>[:quant]");
    expect_hf_error("ggfit/a/b", NULL, GGFIT_EINVAL, "expected <user>/<model>[:quant]");
    expect_hf_error("ggfit/-x", NULL, GGFIT_EINVAL, "invalid Hugging Face repository");

    /* the mmproj llama.cpp would take along */
    ggfit_hf_model m;
    char *err = NULL;
    assert_int_equal(ggfit_hf_resolve("ggfit/Qwen3-GGUF", NULL, NULL, NULL, &m, &err), 0);
    assert_string_equal(m.mmproj, "mmproj-Qwen3-F16.gguf");
    assert_non_null(strstr(m.mmproj_url, "/resolve/0123456789abcdef0123456789abcdef01234567/"
                                         "mmproj-Qwen3-F16.gguf"));
    ggfit_hf_model_free(&m);
}

static void test_hf_endpoint(void **state)
{
    (void)state;
    char *e;
    const char *hf = getenv("HF_ENDPOINT");
    char saved[128];
    snprintf(saved, sizeof saved, "%s", hf ? hf : "");
    setenv("HF_ENDPOINT", "http://hub.example", 1);
    assert_string_equal(e = ggfit_hf_endpoint(), "http://hub.example/");
    ggfit_free(e);
    setenv("MODEL_ENDPOINT", "http://models.example/", 1);   /* llama.cpp's own wins */
    assert_string_equal(e = ggfit_hf_endpoint(), "http://models.example/");
    ggfit_free(e);
    unsetenv("MODEL_ENDPOINT");
    unsetenv("HF_ENDPOINT");
    assert_string_equal(e = ggfit_hf_endpoint(), "https://huggingface.co/");
    ggfit_free(e);
    if (saved[0])
        setenv("HF_ENDPOINT", saved, 1);
    /* tokens llama.cpp sends: hf_ and 34 or more letters and digits */
    assert_true(ggfit__hf_token_valid("hf_0123456789abcdefghijklmnopqrstuvwxyz"));
    assert_false(ggfit__hf_token_valid("hf_short"));
    assert_false(ggfit__hf_token_valid("xx_0123456789abcdefghijklmnopqrstuvwxyz"));
    assert_false(ggfit__hf_token_valid("hf_0123456789abcdefghijklmnopqrstuvwxy-"));
    assert_false(ggfit__hf_token_valid(NULL));
}

/* The request (the CLI's plan) from -m URL and from -hf is the local
 * file's plan. */
static char *plan_args(const char *const *args, int n)
{
    ggfit_request r;
    static ggfit_plan p;
    char *err = NULL;
    ggfit_request_init(&r);
    for (int i = 0; i < n;) {
        bool used;
        if (ggfit_request_parse_arg(&r, n, (char **)(uintptr_t)args, &i, &used, &err))
            fail_msg("%s", err);
        assert_true(used);
    }
    if (ggfit_request_plan(&r, &p, &err))
        fail_msg("%s", err);
    char *a = ggfit_plan_args(&p);
    ggfit_plan_free(&p);
    return a;
}

static void test_request(void **state)
{
    (void)state;
    NEED_SERVER();
    char local[512], url[512];
    model_path(local, sizeof local, "gpt-oss-120b-mxfp4.gguf");
    snprintf(url, sizeof url, "%s/files/gpt-oss-120b-mxfp4.gguf", srv.base);
    const char *a[] = { "-m", local, "--gpu", "cuda:24576MiB/24077MiB", "-c", "32768",
                        "--host-mem", "64GiB" };
    char *want = plan_args(a, 8);
    a[1] = url;
    char *got = plan_args(a, 8);
    assert_string_equal(got, want);
    ggfit_free(got);
    a[0] = "-mu";
    got = plan_args(a, 8);
    assert_string_equal(got, want);
    ggfit_free(got);
    ggfit_free(want);

    /* -hf loads the repo's projector too (llama-server's -hf): counted,
     * so the plan differs from the local file's; with --no-mmproj it is
     * the local file's plan, and the line says --no-mmproj. */
    model_path(local, sizeof local, "qwen3-14b-Q4_K_M.gguf");
    const char *b[] = { "-m", local, "--gpu", "cuda:8GiB", "-c", "8192", "--no-mmproj" };
    want = plan_args(b, 6);
    b[0] = "-hf";
    b[1] = "ggfit/Qwen3-GGUF";
    got = plan_args(b, 6);
    assert_string_not_equal(got, want);
    ggfit_free(got);
    got = plan_args(b, 7);
    char *bare = calloc(1, strlen(want) + 16);
    snprintf(bare, strlen(want) + 16, "%.*s--no-mmproj -fit off",
             (int)(strlen(want) - strlen("-fit off")), want);
    assert_string_equal(got, bare);
    free(bare);
    ggfit_free(got);
    ggfit_free(want);
}

/* Which quant?: every model of the fake hub's repo planned, best first,
 * each the same plan as the local file's; the second listing comes from
 * the cache. */
static void parse_all(ggfit_request *r, const char *const *args, int n)
{
    char *err = NULL;
    ggfit_request_init(r);
    for (int i = 0; i < n;) {
        bool used;
        if (ggfit_request_parse_arg(r, n, (char **)(uintptr_t)args, &i, &used, &err))
            fail_msg("%s", err);
        assert_true(used);
    }
}

static void test_quants(void **state)
{
    (void)state;
    NEED_SERVER();
    ggfit_request r;
    ggfit_quant_list l;
    char *err = NULL;
    const char *a[] = { "-hf", "ggfit/Qwen3-GGUF", "--gpu", "cuda:24GiB", "--host-mem",
                        "64GiB", "--offline" };
    parse_all(&r, a, 6);
    if (ggfit_request_quants(&r, NULL, 0, &l, &err))
        fail_msg("%s", err);
    /* seven models: no mmproj, no imatrix, the split model once */
    assert_int_equal(l.n, 7);
    assert_string_equal(l.repo, "ggfit/Qwen3-GGUF");
    assert_string_equal(l.commit, "0123456789abcdef0123456789abcdef01234567");
    static const char *const order[] = {
        "Qwen3-30B-A3B-Q4_K_M.gguf", "Qwen3-14B-Q4_K_M.gguf",
        "Qwen3-Split-Q6_K-00001-of-00002.gguf", "Qwen3-0.6B-F16.gguf", "Qwen3-0.6B-Q8_0.gguf",
        "Qwen3-Next-80B-A3B-Q4_K_M.gguf", "Qwen3-14B-F16.gguf",
    };
    for (size_t i = 0; i < 7; i++) {
        const ggfit_quant *q = &l.quants[i];
        assert_string_equal(q->name, order[i]);
        assert_int_equal(q->status, GGFIT_OK);
        assert_non_null(q->plan);
        assert_non_null(strstr(q->url, "/resolve/0123456789abcdef0123456789abcdef01234567/"));
        if (i > 0 && q->rank == l.quants[i - 1].rank)
            assert_true(q->size <= l.quants[i - 1].size);
        if (i > 0)
            assert_true(q->rank >= l.quants[i - 1].rank);
    }
    assert_int_equal(l.quants[0].rank, GGFIT_RANK_ALL_ON_DEVICES);
    assert_string_equal(l.quants[0].tag, "Q4_K_M");
    assert_int_equal(l.quants[2].n_shards, 2);
    assert_string_equal(l.quants[2].tag, "Q6_K");
    assert_int_equal(l.quants[5].rank, GGFIT_RANK_PART_IN_RAM);
    assert_true(l.quants[5].expert_blocks_in_ram > 0);
    assert_int_equal(l.quants[6].rank, GGFIT_RANK_PART_IN_RAM);
    assert_true(l.quants[6].n_gpu_layers < 42);
    assert_int_equal(ggfit_quant_list_exit_status(&l), 0);
    /* each row is the local file's plan */
    char local[512];
    model_path(local, sizeof local, "qwen3-14b-Q4_K_M.gguf");
    const char *b[] = { "-m", local, "--gpu", "cuda:24GiB", "--host-mem", "64GiB" };
    char *want = plan_args(b, 6), *got = ggfit_plan_args(l.quants[1].plan);
    assert_string_equal(got, want);
    ggfit_free(got);
    ggfit_free(want);
    char *text = ggfit_quant_list_text(&l), *json = ggfit_quant_list_json(&l);
    assert_non_null(strstr(text, "best: Qwen3-30B-A3B-Q4_K_M.gguf\n  llama-server -hf ggfit/Qwen3-GGUF "
                                 "-hff Qwen3-30B-A3B-Q4_K_M.gguf -c 40960 -ngl all"));
    assert_non_null(strstr(text, "Qwen3-Split-Q6_K-00001-of-00002.gguf (2 files)"));
    assert_non_null(strstr(json, "\"name\": \"Qwen3-30B-A3B-Q4_K_M.gguf\""));
    assert_non_null(strstr(json, "\"status\": \"fits_part_in_ram\""));
    ggfit_free(text);
    ggfit_free(json);
    ggfit_quant_list_free(&l);

    /* --offline: the headers and the API replies all from the cache now */
    parse_all(&r, a, 7);
    if (ggfit_request_quants(&r, NULL, 0, &l, &err))
        fail_msg("%s", err);
    assert_int_equal(l.n, 7);
    for (size_t i = 0; i < 7; i++)
        assert_int_equal(l.quants[i].status, GGFIT_OK);
    ggfit_quant_list_free(&l);

    /* a quant: only its files */
    a[1] = "ggfit/Qwen3-GGUF:q4_k_m";
    parse_all(&r, a, 6);
    if (ggfit_request_quants(&r, NULL, 0, &l, &err))
        fail_msg("%s", err);
    assert_int_equal(l.n, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(l.quants[i].tag, "Q4_K_M");
    ggfit_quant_list_free(&l);
    a[1] = "ggfit/Qwen3-GGUF:IQ1_S";
    parse_all(&r, a, 6);
    assert_int_equal(ggfit_request_quants(&r, NULL, 0, &l, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "no GGUF file for the quant 'IQ1_S'"));
    ggfit_free(err);
    /* -hff names one file: not a list */
    const char *c[] = { "-hf", "ggfit/Qwen3-GGUF", "-hff", "Qwen3-14B-F16.gguf" };
    parse_all(&r, c, 4);
    assert_int_equal(ggfit_request_quants(&r, NULL, 0, &l, &err), GGFIT_EINVAL);
    ggfit_free(err);

    /* URLs and files in one list; an unreadable one is a row, last */
    char url[512], missing[512];
    snprintf(url, sizeof url, "%s/files/qwen3-0.6b-f16.gguf", srv.base);
    snprintf(missing, sizeof missing, "%s/files/none.gguf", srv.base);
    const char *models[] = { missing, url, local };
    parse_all(&r, b + 2, 4);
    if (ggfit_request_quants(&r, models, 3, &l, &err))
        fail_msg("%s", err);
    assert_int_equal(l.n, 3);
    assert_null(l.repo);
    assert_string_equal(l.quants[0].name, local);
    assert_null(l.quants[0].url);
    assert_string_equal(l.quants[1].name, url);
    assert_string_equal(l.quants[2].name, missing);
    assert_int_equal(l.quants[2].rank, GGFIT_RANK_ERROR);
    assert_non_null(strstr(l.quants[2].error, "404"));
    ggfit_quant_list_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_reads),
        cmocka_unit_test(test_redirect),
        cmocka_unit_test(test_range_ignored),
        cmocka_unit_test(test_tokenizer_header),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_misbehaving),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_cache),
        cmocka_unit_test(test_hf_resolve),
        cmocka_unit_test(test_hf_endpoint),
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_quants),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
