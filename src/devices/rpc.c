/*
 * rpc.c - asks llama.cpp rpc-servers for their devices and free memory,
 * over ggml's RPC protocol (ggml/src/ggml-rpc/ggml-rpc.cpp), as llama.cpp's
 * --rpc does when it adds a server.
 *
 * The protocol, version 5.0.0 in b10309 and 5.1.0 from b10496 (af5172627:
 * a graph's tensors carry their use count; RPC_PROTO_*_VERSION in
 * ggml-rpc.h), the version of the llama.cpp planned for. Integers are the sender's native byte order,
 * which is little-endian on every machine llama.cpp runs on; ggfit writes
 * and reads them as little-endian explicitly.
 *  1. request:  command (uint8), payload size (uint64), payload
 *  2. reply:    payload size (uint64), payload; the client knows the size it
 *               expects and treats any other as a broken server
 *  3. HELLO (14) must be the first command. Its payload is the client's
 *     transport capabilities (24 bytes; all zero asks for no transport
 *     upgrade, so the plain socket stays in use); the reply is 28 bytes:
 *     major, minor, patch, a padding byte and the server's 24 capability
 *     bytes. The server closes the connection on a HELLO of another size.
 *     llama.cpp accepts a server when the major versions are equal and the
 *     server's minor is not newer.
 *  4. DEVICE_COUNT (15), empty payload; reply: uint32 number of devices.
 *  5. GET_DEVICE_MEMORY (11), payload uint32 device; reply: uint64 free,
 *     uint64 total, in bytes.
 *  (GET_ALIGNMENT (1) and GET_MAX_SIZE (2) take a uint32 device and answer a
 *  uint64; llama.cpp asks them when it makes the buffer type. ggfit plans
 *  with the alignment of a CPU-backed server and does not ask.)
 * Commands 11 and 15 are what llama.cpp itself sends when --rpc adds a
 * server (ggml_backend_rpc_add_server, then the device's memory).
 *
 * llama.cpp names the devices RPC0, RPC1, ... counting over all servers in
 * the order given; their buffer types are RPC<i>[host:port], with i the
 * device's index on its server.
 *
 * Every connect, send and receive is bounded by the caller's timeout; every
 * reply is checked for its exact size before anything is read into memory,
 * so a hostile or broken server can cause an error, never a hang or an
 * allocation.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/base.h"
#include "versions/version.h"

#define RPC_MAJOR 5

/* The protocol's minor version at build. */
static unsigned rpc_minor(uint32_t build)
{
    return ggfit__llama_has(build, LLAMA_CHANGE_RPC_USE_COUNT) ? 1 : 0;
}

enum {
    CMD_GET_ALIGNMENT = 1,
    CMD_GET_MAX_SIZE = 2,
    CMD_GET_DEVICE_MEMORY = 11,
    CMD_HELLO = 14,
    CMD_DEVICE_COUNT = 15,
};

/* One connection to one server; what is being asked, for messages. */
typedef struct conn {
    int fd;
    const char *endpoint;
    int timeout_ms;
    uint32_t build;           /* the llama.cpp planned for */
    char **err;
} conn;

static const char *cmd_name(int cmd)
{
    switch (cmd) {
    case CMD_GET_ALIGNMENT: return "GET_ALIGNMENT";
    case CMD_GET_MAX_SIZE: return "GET_MAX_SIZE";
    case CMD_GET_DEVICE_MEMORY: return "GET_DEVICE_MEMORY";
    case CMD_HELLO: return "HELLO";
    case CMD_DEVICE_COUNT: return "DEVICE_COUNT";
    default: return "?";
    }
}

/* Waits until fd is ready for events or the deadline passes: 1 ready,
 * 0 timed out, -1 error (errno set). */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - ggfit__now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = { .fd = fd, .events = events };
        int r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

/* ---- connecting ------------------------------------------------------------ */

/* Splits "host:port" (the port after the last colon; "[v6]:port" too). */
static ggfit_status split_endpoint(const char *ep, char *host, size_t host_size, char *port,
                                   size_t port_size, char **err)
{
    const char *colon = strrchr(ep, ':');
    if (!colon || colon == ep || !colon[1])
        return ggfit__fail(err, GGFIT_EINVAL, "--rpc %s: expected host:port", ep);
    const char *h = ep;
    size_t hn = (size_t)(colon - ep);
    if (h[0] == '[' && hn >= 2 && h[hn - 1] == ']') {
        h++;
        hn -= 2;
    }
    char *end;
    errno = 0;
    long v = strtol(colon + 1, &end, 10);
    if (*end || errno || v < 1 || v > 65535 || hn == 0 || hn >= host_size)
        return ggfit__fail(err, GGFIT_EINVAL, "--rpc %s: expected host:port with a port 1-65535",
                           ep);
    memcpy(host, h, hn);
    host[hn] = '\0';
    snprintf(port, port_size, "%ld", v);
    return GGFIT_OK;
}

/* Non-blocking connect to one address, waited for until the deadline:
 * the socket, or -1 with *why an errno value (ETIMEDOUT on timeout). */
static int connect_one(const struct addrinfo *ai, int64_t deadline, int *why)
{
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
        *why = errno;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL, 0);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
        goto fail;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno != EINPROGRESS && errno != EINTR)
        goto fail;
    int r = wait_fd(fd, POLLOUT, deadline);
    if (r == 0) {
        close(fd);
        *why = ETIMEDOUT;
        return -1;
    }
    if (r < 0)
        goto fail;
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
        goto fail;
    if (soerr) {
        close(fd);
        *why = soerr;
        return -1;
    }
    return fd;
fail:
    *why = errno;
    close(fd);
    return -1;
}

static ggfit_status open_conn(conn *c)
{
    char host[256], port[8];
    int rc = split_endpoint(c->endpoint, host, sizeof host, port, sizeof port, c->err);
    if (rc)
        return rc;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    /* A host name goes through NSS, which loads shared libraries: a
     * statically linked program takes addresses only (base/linking.c). */
    unsigned char addr[sizeof(struct in6_addr)];
    if (inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1)
        hints.ai_flags |= AI_NUMERICHOST;
    else if (ggfit__static_program())
        return ggfit__fail(c->err, GGFIT_ESTATIC, "rpc-server %s: resolving '%s' needs the C "
                           "library's resolver, which a statically linked program cannot "
                           "load", c->endpoint, host);
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai)
        return ggfit__fail(c->err, GGFIT_EIO, "rpc-server %s: cannot resolve '%s': %s",
                           c->endpoint, host, gai_strerror(gai));
    int64_t deadline = ggfit__now_ms() + c->timeout_ms;
    int why = 0;
    c->fd = -1;
    for (const struct addrinfo *ai = res; ai && c->fd < 0; ai = ai->ai_next)
        c->fd = connect_one(ai, deadline, &why);
    freeaddrinfo(res);
    if (c->fd >= 0)
        return GGFIT_OK;
    if (why == ETIMEDOUT)
        return ggfit__fail(c->err, GGFIT_EIO,
                           "rpc-server %s: cannot connect: no answer within %d ms", c->endpoint,
                           c->timeout_ms);
    return ggfit__fail(c->err, GGFIT_EIO, "rpc-server %s: cannot connect: %s%s", c->endpoint,
                       strerror(why),
                       why == ECONNREFUSED ? " (is rpc-server running on that port?)" : "");
}

/* ---- one request and its reply ------------------------------------------------ */

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static ggfit_status send_all(conn *c, const unsigned char *p, size_t n, int cmd, int64_t deadline)
{
#ifdef MSG_NOSIGNAL
    const int flags = MSG_NOSIGNAL;   /* a closed peer is an error, not SIGPIPE */
#else
    const int flags = 0;
#endif
    while (n > 0) {
        ssize_t w = send(c->fd, p, n, flags);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int r = wait_fd(c->fd, POLLOUT, deadline);
            if (r > 0)
                continue;
            if (r == 0)
                return ggfit__fail(c->err, GGFIT_EIO,
                                   "rpc-server %s: sending %s timed out after %d ms",
                                   c->endpoint, cmd_name(cmd), c->timeout_ms);
        }
        return ggfit__fail(c->err, GGFIT_EIO, "rpc-server %s: sending %s failed: %s",
                           c->endpoint, cmd_name(cmd), strerror(errno));
    }
    return GGFIT_OK;
}

/* A server of another protocol major version drops the connection when the
 * HELLO payload has a size it does not expect. */
static const char version_hint[] =
    "; an rpc-server of another RPC protocol version closes the connection on this HELLO";

/* Reads exactly n bytes of the reply to cmd; what names the part. */
static ggfit_status recv_all(conn *c, unsigned char *p, size_t n, int cmd, const char *what,
                             int64_t deadline)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(c->fd, p + got, n - got, 0);
        if (r > 0) {
            got += (size_t)r;
            continue;
        }
        if (r == 0)
            return ggfit__fail(c->err, GGFIT_EIO,
                               "rpc-server %s: connection closed during the %s reply "
                               "(%zu of %zu bytes of its %s)%s",
                               c->endpoint, cmd_name(cmd), got, n, what,
                               cmd == CMD_HELLO && got == 0 ? version_hint : "");
        if (errno == EINTR)
            continue;
        if (errno == ECONNRESET)
            return ggfit__fail(c->err, GGFIT_EIO,
                               "rpc-server %s: connection reset during the %s reply "
                               "(%zu of %zu bytes of its %s)%s",
                               c->endpoint, cmd_name(cmd), got, n, what,
                               cmd == CMD_HELLO && got == 0 ? version_hint : "");
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int w = wait_fd(c->fd, POLLIN, deadline);
            if (w > 0)
                continue;
            if (w == 0)
                return ggfit__fail(c->err, GGFIT_EIO,
                                   "rpc-server %s: no reply to %s within %d ms (%zu of %zu "
                                   "bytes of its %s)",
                                   c->endpoint, cmd_name(cmd), c->timeout_ms, got, n, what);
        }
        return ggfit__fail(c->err, GGFIT_EIO, "rpc-server %s: reading the %s reply failed: %s",
                           c->endpoint, cmd_name(cmd), strerror(errno));
    }
    return GGFIT_OK;
}

/* Sends cmd with its payload and reads a reply of exactly out_size bytes.
 * The timeout bounds the whole exchange. */
static ggfit_status call(conn *c, int cmd, const unsigned char *in, size_t in_size,
                         unsigned char *out, size_t out_size)
{
    int64_t deadline = ggfit__now_ms() + c->timeout_ms;
    unsigned char head[9];
    head[0] = (unsigned char)cmd;
    put_u64(head + 1, in_size);
    int rc = send_all(c, head, sizeof head, cmd, deadline);
    if (!rc && in_size)
        rc = send_all(c, in, in_size, cmd, deadline);
    if (!rc)
        rc = recv_all(c, head, 8, cmd, "size", deadline);
    if (rc)
        return rc;
    uint64_t size = get_u64(head);
    if (size != out_size)
        return ggfit__fail(c->err, GGFIT_EFORMAT,
                           "rpc-server %s: malformed %s reply: %llu bytes, expected %zu%s",
                           c->endpoint, cmd_name(cmd), (unsigned long long)size, out_size,
                           cmd == CMD_HELLO ? " (a server of another RPC protocol version?)"
                                            : "");
    return recv_all(c, out, out_size, cmd, "payload", deadline);
}

/* ---- the query ----------------------------------------------------------------- */

#define RPC_CONN_CAPS 24   /* RPC_CONN_CAPS_SIZE in ggml-rpc's transport.h */

static ggfit_status hello(conn *c)
{
    unsigned char caps[RPC_CONN_CAPS] = {0}, v[4 + RPC_CONN_CAPS];
    int rc = call(c, CMD_HELLO, caps, sizeof caps, v, sizeof v);
    if (rc)
        return rc;
    if (v[0] != RPC_MAJOR || v[1] > rpc_minor(c->build))
        return ggfit__fail(c->err, GGFIT_EUNSUPPORTED,
                           "rpc-server %s speaks RPC protocol %u.%u.%u; llama.cpp b%u speaks "
                           "%d.%u.0: use an rpc-server built from the same llama.cpp version, "
                           "or plan for the llama.cpp it came with (--llama-version)",
                           c->endpoint, v[0], v[1], v[2], ggfit__llama_rules(c->build), RPC_MAJOR,
                           rpc_minor(c->build));
    return GGFIT_OK;
}

static void copy_str(char *dst, size_t size, const char *src)
{
    size_t len = strnlen(src, size - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* Queries one server; its devices go to out[*n...], named from *n on. */
static ggfit_status query_one(conn *c, ggfit_device *out, size_t max, size_t *n)
{
    int rc = open_conn(c);
    if (rc)
        return rc;
    if ((rc = hello(c)))
        goto done;
    unsigned char b[16];
    if ((rc = call(c, CMD_DEVICE_COUNT, NULL, 0, b, 4)))
        goto done;
    uint32_t count = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                     (uint32_t)b[3] << 24;
    if (count == 0) {
        rc = ggfit__fail(c->err, GGFIT_EFORMAT, "rpc-server %s reports no devices",
                         c->endpoint);
        goto done;
    }
    if (count > max - *n) {
        rc = ggfit__fail(c->err, GGFIT_ELIMIT,
                         "rpc-server %s reports %u devices; ggfit plans for at most %zu "
                         "devices in all (%zu already)",
                         c->endpoint, count, max, *n);
        goto done;
    }
    for (uint32_t i = 0; i < count; i++) {
        unsigned char req[4] = { (unsigned char)i, (unsigned char)(i >> 8),
                                 (unsigned char)(i >> 16), (unsigned char)(i >> 24) };
        if ((rc = call(c, CMD_GET_DEVICE_MEMORY, req, sizeof req, b, 16)))
            goto done;
        ggfit_device *d = &out[*n];
        memset(d, 0, sizeof *d);
        d->kind = GGFIT_BACKEND_RPC;
        /* llama.cpp's buffer type name, which -ot takes: the device's index
         * on its server and the endpoint ("RPC0[host:port]"). */
        snprintf(d->name, sizeof d->name, "RPC%u[%.63s]", i, c->endpoint);
        copy_str(d->endpoint, sizeof d->endpoint, c->endpoint);
        copy_str(d->description, sizeof d->description, c->endpoint);   /* as llama.cpp */
        d->free = get_u64(b);
        d->total = get_u64(b + 8);
        (*n)++;
    }
done:
    close(c->fd);
    return rc;
}

ggfit_status ggfit_rpc_query(const char *endpoints, int timeout_ms, ggfit_device *out, size_t max,
                             size_t *n, char **err)
{
    return ggfit_rpc_query_for(endpoints, 0, timeout_ms, out, max, n, err);
}

ggfit_status ggfit_rpc_query_for(const char *endpoints, uint32_t build, int timeout_ms,
                                 ggfit_device *out, size_t max, size_t *n, char **err)
{
    *n = 0;
    if (!endpoints || !*endpoints)
        return ggfit__fail(err, GGFIT_EINVAL, "--rpc: expected host:port[,host:port...]");
    if (endpoints[strlen(endpoints) - 1] == ',')
        return ggfit__fail(err, GGFIT_EINVAL, "--rpc: '%s' ends with a comma", endpoints);
    if (timeout_ms <= 0)
        return ggfit__fail(err, GGFIT_EINVAL, "rpc: the timeout must be positive, not %d ms",
                           timeout_ms);
    if (max > GGFIT_MAX_DEVICES)
        max = GGFIT_MAX_DEVICES;
    /* The whole list is checked before any server is asked. */
    char eps[GGFIT_MAX_DEVICES][64];
    size_t n_ep = 0;
    for (const char *p = endpoints; *p;) {
        size_t len = strcspn(p, ",");
        char *ep = eps[n_ep < GGFIT_MAX_DEVICES ? n_ep : 0];
        if (len == 0 || len >= sizeof eps[0])
            return ggfit__fail(err, GGFIT_EINVAL,
                               "--rpc: bad endpoint '%.*s' (host:port, at most %zu characters)",
                               (int)len, p, sizeof eps[0] - 1);
        if (n_ep == max)
            return ggfit__fail(err, GGFIT_ELIMIT, "--rpc: more than %zu servers", max);
        memcpy(ep, p, len);
        ep[len] = '\0';
        p += len + (p[len] == ',');
        char host[64], port[8];
        int rc = split_endpoint(ep, host, sizeof host, port, sizeof port, err);
        if (rc)
            return rc;
        for (size_t i = 0; i < n_ep; i++)
            if (strcmp(eps[i], ep) == 0)
                return ggfit__fail(err, GGFIT_EINVAL, "--rpc: %s is listed twice", ep);
        n_ep++;
    }
    for (size_t i = 0; i < n_ep; i++) {
        conn c = { .fd = -1, .endpoint = eps[i], .timeout_ms = timeout_ms, .build = build,
                    .err = err };
        int rc = query_one(&c, out, max, n);
        if (rc) {
            *n = 0;
            return rc;
        }
    }
    return GGFIT_OK;
}
