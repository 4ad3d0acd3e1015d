/*
 * test_rpc.c - the RPC client against a small rpc-server inside the test:
 * a thread on 127.0.0.1 (port 0, read back) that speaks ggml's RPC protocol
 * 5.0.0 (HELLO, DEVICE_COUNT, GET_DEVICE_MEMORY), well or badly. Every wait
 * of the server is bounded, so it stops by itself even when the client
 * misbehaves; each test joins it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "base/base.h"

#define SRV_WAIT_MS 5000   /* longest any server wait lasts */

typedef enum scenario {
    S_OK,            /* version 5.0.0, the devices given */
    S_OLD_VERSION,   /* HELLO answers 3.0.0 */
    S_NEW_MINOR,     /* HELLO answers 5.1.0: newer than the client */
    S_CLOSE,         /* accepts and closes at once */
    S_DROP_HELLO,    /* reads HELLO, closes without a reply (another major) */
    S_HELLO_SIZE,    /* HELLO reply claims 1 TiB */
    S_TRUNCATED,     /* DEVICE_COUNT reply: 2 of its 4 bytes, then closes */
    S_SILENT,        /* reads HELLO, never replies */
    S_HUGE_COUNT,    /* 4294967295 devices */
    S_NO_DEVICES,    /* 0 devices */
} scenario;

typedef struct server {
    scenario sc;
    uint32_t n_dev;
    uint64_t free[4], total[4];
    int lfd;
    char endpoint[32];
    pthread_t thread;
    char log[256];       /* the requests, "CMD:size[:device]" */
    bool bad_request;    /* a request the client should not have sent */
} server;

static int64_t ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads n bytes within SRV_WAIT_MS; false on EOF, error or timeout. */
static bool srv_read(int fd, unsigned char *p, size_t n)
{
    int64_t deadline = ms_now() + SRV_WAIT_MS;
    while (n > 0) {
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        int64_t left = deadline - ms_now();
        if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
            return false;
        ssize_t r = recv(fd, p, n, 0);
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

static void srv_write(int fd, const void *p, size_t n)
{
    if (send(fd, p, n, MSG_NOSIGNAL) != (ssize_t)n)
        fprintf(stderr, "test server: short send\n");
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A reply: uint64 size, then the payload. */
static void reply(int fd, const void *payload, size_t n)
{
    unsigned char head[8];
    put64(head, n);
    srv_write(fd, head, 8);
    srv_write(fd, payload, n);
}

static void logf_req(server *s, const char *fmt, ...) GGFIT_PRINTF(2, 3);

static void logf_req(server *s, const char *fmt, ...)
{
    size_t len = strlen(s->log);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->log + len, sizeof s->log - len, fmt, ap);
    va_end(ap);
}

static void serve(server *s, int fd)
{
    for (int k = 0; k < 32; k++) {   /* bounded: the client asks a few things */
        unsigned char head[9], in[32];
        if (!srv_read(fd, head, 9))
            return;
        uint64_t size = 0;
        for (int i = 7; i >= 0; i--)
            size = size << 8 | head[1 + i];
        if (size > sizeof in || !srv_read(fd, in, (size_t)size)) {
            s->bad_request = true;
            return;
        }
        int cmd = head[0];
        if (cmd == 14) {
            logf_req(s, "HELLO:%u ", (unsigned)size);
            if (size != 24)   /* the client's transport capabilities */
                s->bad_request = true;
            unsigned char v[28] = { 5, 0, 0 };   /* version, padding, capabilities */
            if (s->sc == S_OLD_VERSION)
                v[0] = 3;
            if (s->sc == S_NEW_MINOR)
                v[1] = 1;
            if (s->sc == S_DROP_HELLO)
                return;
            if (s->sc == S_SILENT) {
                unsigned char c;
                srv_read(fd, &c, 1);   /* until the client gives up */
                return;
            }
            if (s->sc == S_HELLO_SIZE) {
                put64(in, (uint64_t)1 << 40);
                srv_write(fd, in, 8);
                return;
            }
            reply(fd, v, sizeof v);
        } else if (cmd == 15) {
            logf_req(s, "DEVICE_COUNT:%u ", (unsigned)size);
            uint32_t n = s->sc == S_HUGE_COUNT ? 0xffffffffu
                         : s->sc == S_NO_DEVICES ? 0 : s->n_dev;
            unsigned char c[4] = { (unsigned char)n, (unsigned char)(n >> 8),
                                   (unsigned char)(n >> 16), (unsigned char)(n >> 24) };
            if (s->sc == S_TRUNCATED) {
                put64(in, 4);
                srv_write(fd, in, 8);
                srv_write(fd, c, 2);
                return;
            }
            reply(fd, c, 4);
        } else if (cmd == 11 && size == 4) {
            uint32_t d = (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 |
                         (uint32_t)in[3] << 24;
            logf_req(s, "GET_DEVICE_MEMORY:4:%u ", d);
            if (d >= s->n_dev) {
                s->bad_request = true;
                return;
            }
            unsigned char m[16];
            put64(m, s->free[d]);
            put64(m + 8, s->total[d]);
            reply(fd, m, 16);
        } else {
            logf_req(s, "?%d:%u ", cmd, (unsigned)size);
            s->bad_request = true;
            return;
        }
    }
}

static void *server_main(void *arg)
{
    server *s = arg;
    struct pollfd pf = { .fd = s->lfd, .events = POLLIN };
    if (poll(&pf, 1, SRV_WAIT_MS) == 1) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd >= 0) {
            if (s->sc != S_CLOSE)
                serve(s, fd);
            close(fd);
        }
    }
    close(s->lfd);
    return NULL;
}

/* A listening socket on 127.0.0.1, port chosen by the kernel. */
static int listen_loopback(char *endpoint, size_t n)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    snprintf(endpoint, n, "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
    return fd;
}

static void server_start(server *s, scenario sc, uint32_t n_dev)
{
    memset(s, 0, sizeof *s);
    s->sc = sc;
    s->n_dev = n_dev;
    for (uint32_t d = 0; d < 4; d++) {
        s->total[d] = (uint64_t)(24 + 8 * d) << 30;
        s->free[d] = s->total[d] - ((uint64_t)(d + 1) << 29);
    }
    s->lfd = listen_loopback(s->endpoint, sizeof s->endpoint);
    assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
}

static void server_stop(server *s)
{
    assert_int_equal(pthread_join(s->thread, NULL), 0);
}

/* Runs one query against a misbehaving server; returns its message. */
/* The llama.cpp build query_fails asks as (0: the newest supported). */
static uint32_t query_build;

static char *query_fails(scenario sc, int timeout_ms, int want_status, server *s)
{
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n = 99;
    char *err = NULL;
    server_start(s, sc, 1);
    int rc = ggfit_rpc_query_for(s->endpoint, query_build, timeout_ms, d, GGFIT_MAX_DEVICES, &n,
                                 &err);
    server_stop(s);
    assert_int_equal(rc, want_status);
    assert_int_equal(n, 0);
    assert_non_null(err);
    assert_non_null(strstr(err, s->endpoint));   /* the message names the server */
    assert_false(s->bad_request);
    return err;
}

static void assert_has(const char *msg, const char *part)
{
    if (!strstr(msg, part))
        fail_msg("'%s' not in '%s'", part, msg);
}

/* ---- servers that answer ------------------------------------------------- */

static void test_one_device(void **state)
{
    (void)state;
    server s;
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n = 0;
    char *err = NULL;
    server_start(&s, S_OK, 1);
    int rc = ggfit_rpc_query(s.endpoint, 2000, d, GGFIT_MAX_DEVICES, &n, &err);
    server_stop(&s);
    if (rc)
        fail_msg("%s", err);
    assert_false(s.bad_request);
    /* what llama.cpp sends when --rpc adds a server */
    assert_string_equal(s.log, "HELLO:24 DEVICE_COUNT:0 GET_DEVICE_MEMORY:4:0 ");
    assert_int_equal(n, 1);
    char want[96];
    snprintf(want, sizeof want, "RPC0[%s]", s.endpoint);
    assert_string_equal(d[0].name, want);
    assert_int_equal(d[0].kind, GGFIT_BACKEND_RPC);
    assert_string_equal(d[0].endpoint, s.endpoint);
    assert_string_equal(d[0].description, s.endpoint);
    assert_int_equal(d[0].total, 24ull << 30);
    assert_int_equal(d[0].free, (24ull << 30) - (1ull << 29));
}

static void test_two_servers(void **state)
{
    (void)state;
    server a, b;
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n = 0;
    char *err = NULL, list[80];
    server_start(&a, S_OK, 2);
    server_start(&b, S_OK, 1);
    snprintf(list, sizeof list, "%s,%s", a.endpoint, b.endpoint);
    int rc = ggfit_rpc_query(list, 2000, d, GGFIT_MAX_DEVICES, &n, &err);
    server_stop(&a);
    server_stop(&b);
    if (rc)
        fail_msg("%s", err);
    assert_string_equal(a.log,
                        "HELLO:24 DEVICE_COUNT:0 GET_DEVICE_MEMORY:4:0 GET_DEVICE_MEMORY:4:1 ");
    assert_string_equal(b.log, "HELLO:24 DEVICE_COUNT:0 GET_DEVICE_MEMORY:4:0 ");
    assert_int_equal(n, 3);
    /* Named by their buffer types, as -ot takes them: the index on each
     * server and its endpoint; the order is the servers' as given. */
    char names[3][96];
    snprintf(names[0], sizeof names[0], "RPC0[%s]", a.endpoint);
    snprintf(names[1], sizeof names[1], "RPC1[%s]", a.endpoint);
    snprintf(names[2], sizeof names[2], "RPC0[%s]", b.endpoint);
    assert_string_equal(d[0].name, names[0]);
    assert_string_equal(d[1].name, names[1]);
    assert_string_equal(d[2].name, names[2]);
    assert_string_equal(d[0].endpoint, a.endpoint);
    assert_string_equal(d[1].endpoint, a.endpoint);
    assert_string_equal(d[2].endpoint, b.endpoint);
    assert_int_equal(d[1].total, 32ull << 30);
    assert_int_equal(d[1].free, (32ull << 30) - (2ull << 29));
    assert_int_equal(d[2].total, 24ull << 30);

    /* the fitted flags name the servers once each, before the rest */
    ggfit_fit_result r;
    memset(&r, 0, sizeof r);
    r.params.n_ctx = 4096;
    r.params.n_gpu_layers = 29;
    r.params.tensor_split[0] = 10;
    r.params.tensor_split[1] = 10;
    r.params.tensor_split[2] = 9;
    char *args = ggfit_fit_args(&r, d, n), want[160];
    snprintf(want, sizeof want, "--rpc %s,%s -c 4096 -ngl 29 -ts 10,10,9", a.endpoint,
             b.endpoint);
    assert_string_equal(args, want);
    ggfit_free(args);
    /* described devices (--gpu rpc:...) have no server to name */
    ggfit_device g[2];
    assert_int_equal(ggfit_devices_parse("rpc:8GiB,rpc:8GiB", g, 2, &n, &err), GGFIT_OK);
    args = ggfit_fit_args(&r, g, n);
    assert_string_equal(args, "-c 4096 -ngl 29 -ts 10,10");
    ggfit_free(args);
}

static void test_too_many_devices(void **state)
{
    (void)state;
    server s;
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n = 0;
    char *err = NULL;
    server_start(&s, S_OK, 2);
    assert_int_equal(ggfit_rpc_query(s.endpoint, 2000, d, 1, &n, &err), GGFIT_ELIMIT);
    server_stop(&s);
    assert_has(err, "reports 2 devices; ggfit plans for at most 1");
    ggfit_free(err);
}

/* ---- servers that misbehave ------------------------------------------------ */

static void test_version(void **state)
{
    (void)state;
    server s;
    char *err = query_fails(S_OLD_VERSION, 2000, GGFIT_EUNSUPPORTED, &s);
    assert_has(err, "speaks RPC protocol 3.0.0");
    assert_has(err, "llama.cpp b10587 speaks 5.1.0");
    ggfit_free(err);
    /* 5.1 from b10496 (af5172627): b10309's llama.cpp refuses such a
     * server, b10587's takes it */
    query_build = 10309;
    err = query_fails(S_NEW_MINOR, 2000, GGFIT_EUNSUPPORTED, &s);
    query_build = 0;
    assert_has(err, "speaks RPC protocol 5.1.0; llama.cpp b10309 speaks 5.0.0");
    ggfit_free(err);
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n = 0;
    server_start(&s, S_NEW_MINOR, 1);
    assert_int_equal(ggfit_rpc_query(s.endpoint, 2000, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_OK);
    server_stop(&s);
    assert_int_equal(n, 1);
    err = query_fails(S_DROP_HELLO, 2000, GGFIT_EIO, &s);
    assert_has(err, "during the HELLO reply (0 of 8 bytes of its size)");
    assert_has(err, "another RPC protocol version");
    ggfit_free(err);
}

static void test_closes_at_once(void **state)
{
    (void)state;
    server s;
    char *err = query_fails(S_CLOSE, 2000, GGFIT_EIO, &s);
    /* HELLO's 24 bytes may still be on their way when the server closes
     * (a broken pipe), or the reply is then missing: both are this failure. */
    if (!strstr(err, "during the HELLO reply"))
        assert_has(err, "sending HELLO failed");
    ggfit_free(err);
}

static void test_truncated(void **state)
{
    (void)state;
    server s;
    char *err = query_fails(S_TRUNCATED, 2000, GGFIT_EIO, &s);
    assert_has(err, "connection closed during the DEVICE_COUNT reply (2 of 4 bytes of its "
                    "payload)");
    ggfit_free(err);
}

static void test_timeout(void **state)
{
    (void)state;
    server s;
    int64_t t0 = ms_now();
    char *err = query_fails(S_SILENT, 300, GGFIT_EIO, &s);
    int64_t took = ms_now() - t0;
    assert_has(err, "no reply to HELLO within 300 ms");
    assert_true(took >= 250 && took < 3000);
    ggfit_free(err);
}

static void test_malformed(void **state)
{
    (void)state;
    server s;
    char *err = query_fails(S_HUGE_COUNT, 2000, GGFIT_ELIMIT, &s);
    assert_has(err, "reports 4294967295 devices");
    ggfit_free(err);
    err = query_fails(S_NO_DEVICES, 2000, GGFIT_EFORMAT, &s);
    assert_has(err, "reports no devices");
    ggfit_free(err);
    err = query_fails(S_HELLO_SIZE, 2000, GGFIT_EFORMAT, &s);
    assert_has(err, "malformed HELLO reply: 1099511627776 bytes, expected 28");
    ggfit_free(err);
}

/* ---- no server, bad endpoints ------------------------------------------------ */

static void test_refused(void **state)
{
    (void)state;
    char ep[32];
    close(listen_loopback(ep, sizeof ep));   /* a port nobody listens on now */
    ggfit_device d[GGFIT_MAX_DEVICES];
    size_t n = 99;
    char *err = NULL;
    assert_int_equal(ggfit_rpc_query(ep, 2000, d, GGFIT_MAX_DEVICES, &n, &err), GGFIT_EIO);
    assert_int_equal(n, 0);
    assert_has(err, ep);
    assert_has(err, "cannot connect: Connection refused");
    ggfit_free(err);
}

static void test_bad_endpoints(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "localhost", "127.0.0.1:", ":50052", "127.0.0.1:0", "127.0.0.1:65536",
        "127.0.0.1:5x", "127.0.0.1:1,,127.0.0.1:2", "127.0.0.1:1,127.0.0.1:1",
        "a-very-long-host-name-that-does-not-fit-in-an-endpoint-field.example:1",
    };
    ggfit_device d[GGFIT_MAX_DEVICES];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        size_t n = 99;
        char *err = NULL;
        /* checked before any server is asked: port 1 is never tried */
        int rc = ggfit_rpc_query(bad[k], 200, d, GGFIT_MAX_DEVICES, &n, &err);
        if (rc != GGFIT_EINVAL)
            fail_msg("'%s': status %d (%s)", bad[k], rc, err ? err : "");
        assert_int_equal(n, 0);
        assert_has(err, "--rpc");
        ggfit_free(err);
    }
    size_t n;
    char *err = NULL;
    assert_int_equal(ggfit_rpc_query("127.0.0.1:1", 0, d, GGFIT_MAX_DEVICES, &n, &err),
                     GGFIT_EINVAL);
    ggfit_free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_device),
        cmocka_unit_test(test_two_servers),
        cmocka_unit_test(test_too_many_devices),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_closes_at_once),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_bad_endpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
