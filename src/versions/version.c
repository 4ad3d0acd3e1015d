/*
 * version.c - the llama.cpp a plan answers for: versions as people and
 * programs write them, the upstream commits ggfit knows (commits.inc,
 * tools/llama_commits.py) and the changes between the supported versions
 * (changes.def). llama.cpp's build number is `git rev-list --count` of
 * its commit (cmake/build-info.cmake): upstream's numbers order the
 * versions, and a known commit decides the build where a fork or a
 * prebuilt mix prints a number of its own.
 */
#include "versions/version.h"

#include "base/base.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const ggfit__change_row ggfit__llama_changes[LLAMA_CHANGE_COUNT] = {
    { "NONE", 0, "", "" },
#define LLAMA_CHANGE(name, build, commit, what) { #name, build, commit, what },
#include "versions/changes.def"
#undef LLAMA_CHANGE
};

/* The supported builds; their commits and dates are commits.inc's. */
static const uint32_t versions[] = {
#define LLAMA_VERSION(build) build,
#include "versions/versions.def"
#undef LLAMA_VERSION
};
#define N_VERSIONS (sizeof versions / sizeof versions[0])

typedef struct commit_row {
    const char *hash;
    uint32_t build;
    const char *date;
} commit_row;

static const commit_row commits[] = {
#include "versions/commits.inc"
};
#define N_COMMITS (sizeof commits / sizeof commits[0])

typedef struct fork_row {
    const char *hash, *fork;
    uint32_t build;
    const char *what;
} fork_row;

static const fork_row forks[] = {
#define LLAMA_FORK(commit, fork, build, what) { commit, fork, build, what },
#include "versions/forks.def"
#undef LLAMA_FORK
};
#define N_FORKS (sizeof forks / sizeof forks[0])

uint32_t ggfit__llama_oldest(void) { return versions[0]; }
uint32_t ggfit__llama_newest(void) { return versions[N_VERSIONS - 1]; }

uint32_t ggfit__llama_rules(uint32_t build)
{
    return build ? build : ggfit__llama_newest();
}

bool ggfit_llama_change(size_t i, uint32_t *build, const char **commit, const char **what)
{
    if (i + 1 >= LLAMA_CHANGE_COUNT)   /* row 0 is NONE */
        return false;
    const ggfit__change_row *c = &ggfit__llama_changes[i + 1];
    if (build)
        *build = c->build;
    if (commit)
        *commit = c->commit;
    if (what)
        *what = c->what;
    return true;
}

uint32_t ggfit_llama_version_supported(size_t i)
{
    return i < N_VERSIONS ? versions[i] : 0;
}

/* Fills in rules and match from v->build. */
static void settle(ggfit_llama_version *v)
{
    uint32_t lo = ggfit__llama_oldest(), hi = ggfit__llama_newest();
    if (v->build > hi) {
        v->rules = hi;
        v->match = GGFIT_LLAMA_NEWER;
    } else if (v->build < lo) {
        v->rules = lo;
        v->match = GGFIT_LLAMA_OLDER;
    } else {
        v->rules = v->build;
        v->match = GGFIT_LLAMA_BETWEEN;
        for (size_t i = 0; i < N_VERSIONS; i++)
            if (versions[i] == v->build)
                v->match = GGFIT_LLAMA_EXACT;
    }
}

static void from_build(ggfit_llama_version *v, uint32_t build)
{
    v->build = build;
    for (size_t i = 0; i < N_COMMITS && !v->commit[0]; i++)
        if (commits[i].build == build) {
            snprintf(v->commit, sizeof v->commit, "%s", commits[i].hash);
            snprintf(v->date, sizeof v->date, "%s", commits[i].date);
            v->commit_known = true;
        }
    settle(v);
}

void ggfit_llama_version_latest(ggfit_llama_version *v)
{
    memset(v, 0, sizeof *v);
    from_build(v, ggfit__llama_newest());
}

/* The known commit hex (7 to 40 digits) starts, or NULL; two commits
 * sharing the prefix make it ambiguous (*ambiguous). */
static const commit_row *find_commit(const char *hex, size_t n, bool *ambiguous)
{
    const commit_row *hit = NULL;
    *ambiguous = false;
    for (size_t i = 0; i < N_COMMITS; i++)
        if (!strncmp(commits[i].hash, hex, n)) {
            if (hit)
                *ambiguous = true;
            hit = &commits[i];
        }
    return hit;
}

static bool all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* A commit of n hex digits (7..40) into v, with the build a program
 * printed beside it (0: none). */
static ggfit_status with_commit(ggfit_llama_version *v, const char *hex, size_t n,
                                uint32_t printed, char **err)
{
    char lower[41];
    for (size_t i = 0; i < n; i++)
        lower[i] = (char)tolower((unsigned char)hex[i]);
    lower[n] = 0;
    for (size_t i = 0; i < N_FORKS; i++)
        if (!strncmp(forks[i].hash, lower, n)) {   /* a fork's: its upstream build */
            snprintf(v->commit, sizeof v->commit, "%s", forks[i].hash);
            snprintf(v->fork, sizeof v->fork, "%s", forks[i].fork);
            v->build = forks[i].build;
            settle(v);
            return GGFIT_OK;
        }
    bool ambiguous;
    const commit_row *c = find_commit(lower, n, &ambiguous);
    if (ambiguous)
        return ggfit__fail(err, GGFIT_EINVAL,
                           "llama.cpp commit %s is ambiguous: give more of its digits", lower);
    if (c) {
        snprintf(v->commit, sizeof v->commit, "%s", c->hash);
        snprintf(v->date, sizeof v->date, "%s", c->date);
        v->commit_known = true;
        v->build = c->build;
        settle(v);
        return GGFIT_OK;
    }
    snprintf(v->commit, sizeof v->commit, "%s", lower);
    if (!printed)
        return ggfit__fail(err, GGFIT_EINVAL,
                           "llama.cpp commit %s is not one ggfit knows (upstream b%u to b%u): "
                           "give its build number, e.g. --llama-version b%u",
                           lower, ggfit__llama_oldest(), ggfit__llama_newest(),
                           ggfit__llama_newest());
    v->build = printed;
    v->build_printed = true;
    settle(v);
    return GGFIT_OK;
}

static bool read_uint(const char **s, uint32_t *out)
{
    const char *p = *s;
    if (!isdigit((unsigned char)*p))
        return false;
    unsigned long long n = 0;
    while (isdigit((unsigned char)*p)) {
        n = n * 10 + (unsigned)(*p++ - '0');
        if (n > UINT32_MAX)
            return false;
    }
    *out = (uint32_t)n;
    *s = p;
    return true;
}

static size_t hex_run(const char *s)
{
    size_t n = 0;
    while (isxdigit((unsigned char)s[n]))
        n++;
    return n;
}

static ggfit_status unknown_build(char **err)
{
    return ggfit__fail(err, GGFIT_EINVAL,
                       "this llama.cpp was built without its git history (build 0, commit "
                       "unknown): name its version, e.g. --llama-version b%u",
                       ggfit__llama_newest());
}

/* One line of `--version`: "version: N (hash)" or
 * "version: X.Y.Z[-dev] (build N, commit hash)". */
static ggfit_status from_version_line(ggfit_llama_version *v, const char *p, char **err)
{
    uint32_t build = 0;
    const char *q = p;
    if (read_uint(&q, &build) && *q == ' ' && q[1] == '(') {   /* the old form */
        q += 2;
        size_t n = hex_run(q);
        if (q[n] != ')')
            n = 0;
        if (n >= 7 && n <= 40)
            return with_commit(v, q, n, build, err);
        if (!build)
            goto unknown;
        v->build_printed = true;
        from_build(v, build);
        return GGFIT_OK;
    }
    /* the semantic form */
    size_t n = strcspn(p, " \n");
    if (n == 0 || n >= sizeof v->semver || !isdigit((unsigned char)*p))
        goto bad;
    memcpy(v->semver, p, n);
    v->semver[n] = 0;
    q = p + n;
    if (strncmp(q, " (build ", 8))
        goto bad;
    q += 8;
    if (!read_uint(&q, &build) || strncmp(q, ", commit ", 9))
        goto bad;
    q += 9;
    n = hex_run(q);
    if (n >= 7 && n <= 40)
        return with_commit(v, q, n, build, err);
    if (!build)
        goto unknown;
    v->build_printed = true;
    from_build(v, build);
    return GGFIT_OK;
unknown:
    return unknown_build(err);
bad:
    n = strcspn(p, "\r\n");
    return ggfit__fail(err, GGFIT_EINVAL, "cannot read llama.cpp's version from \"%.*s\"",
                       (int)(n > 60 ? 60 : n), p);
}

ggfit_status ggfit_llama_version_parse(const char *text, ggfit_llama_version *v, char **err)
{
    memset(v, 0, sizeof *v);
    if (!text)
        return ggfit__fail(err, GGFIT_EINVAL, "no llama.cpp version given");
    while (isspace((unsigned char)*text))
        text++;
    /* what --version prints: find its "version: " line */
    for (const char *line = text; line && *line;) {
        if (!strncmp(line, "version: ", 9))
            return from_version_line(v, line + 9, err);
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    size_t len = strcspn(text, " \t\r\n");
    if (text[len] && text[len + strspn(text + len, " \t\r\n")])
        return ggfit__fail(err, GGFIT_EINVAL,
                           "cannot read a llama.cpp version from \"%.60s\": give b<build>, a "
                           "commit or latest", text);
    if (len == 6 && !strncmp(text, "latest", 6)) {
        ggfit_llama_version_latest(v);
        return GGFIT_OK;
    }
    const char *p = text;
    uint32_t build;
    bool b = *p == 'b' || *p == 'B';
    if (b)
        p++;
    const char *q = p;
    if (read_uint(&q, &build) && build) {
        if (q == text + len) {   /* "b10587" or "10587", unless hex */
            if (b || len < 7 || !all_hex(text, len) || build < 100000) {
                from_build(v, build);
                return GGFIT_OK;
            }
        } else if (b && *q == '-') {   /* build_info: b10587-3f545becc */
            q++;
            size_t n = hex_run(q);
            if (q + n == text + len && n >= 7 && n <= 40)
                return with_commit(v, q, n, build, err);
        }
    }
    q = p;
    if (b && read_uint(&q, &build) && !build && !strncmp(q, "-unknown", 8) &&
        q + 8 == text + len)   /* a server's build_info without git: b0-unknown */
        return unknown_build(err);
    if (len >= 7 && len <= 40 && all_hex(text, len))
        return with_commit(v, text, len, 0, err);
    return ggfit__fail(err, GGFIT_EINVAL,
                       "cannot read a llama.cpp version from \"%.*s\": give b<build> (b%u), "
                       "a commit (7 to 40 hex digits) or latest",
                       (int)(len > 60 ? 60 : len), text, ggfit__llama_newest());
}

const char *ggfit_llama_version_str(const ggfit_llama_version *v, char *buf, size_t n)
{
    char what[160] = "";
    switch (v->match) {
    case GGFIT_LLAMA_EXACT:
        break;
    case GGFIT_LLAMA_BETWEEN:
        snprintf(what, sizeof what, ": between the versions ggfit is exact for; the changes it "
                 "tracks up to b%u applied", v->build);
        break;
    case GGFIT_LLAMA_NEWER:
        snprintf(what, sizeof what, ": newer than b%u, the newest ggfit knows; answered with its "
                 "rules", v->rules);
        break;
    case GGFIT_LLAMA_OLDER:
        snprintf(what, sizeof what, ": older than b%u, the oldest ggfit knows; answered with its "
                 "rules", v->rules);
        break;
    }
    if (v->fork[0])
        snprintf(buf, n, "b%u (%s %.9s, upstream b%u's rules)%s", v->build, v->fork, v->commit,
                 v->build, what);
    else if (v->commit[0] && v->date[0])
        snprintf(buf, n, "b%u (%.9s, %s)%s", v->build, v->commit, v->date, what);
    else if (v->commit[0])
        snprintf(buf, n, "b%u (%.9s)%s", v->build, v->commit, what);
    else
        snprintf(buf, n, "b%u%s", v->build, what);
    return buf;
}

/* ------------------------------------------------------------------------
 * Asking a llama.cpp program
 * ---------------------------------------------------------------------- */

/* program, a folder's llama-server, or llama-server on PATH, into path. */
static ggfit_status find_program(const char *program, char *path, size_t n, char **err)
{
    struct stat st;
    if (program && *program) {
        if (stat(program, &st) != 0)
            return ggfit__fail(err, GGFIT_EIO, "%s: %s: give llama.cpp's folder or its "
                               "llama-server", program, strerror(errno));
        if (S_ISDIR(st.st_mode)) {
            static const char *const in[] = { "llama-server", "bin/llama-server" };
            for (size_t i = 0; i < 2; i++) {
                snprintf(path, n, "%s/%s", program, in[i]);
                if (access(path, X_OK) == 0)
                    return GGFIT_OK;
            }
            return ggfit__fail(err, GGFIT_EIO, "%s holds no llama-server (nor bin/llama-server): "
                               "give the folder llama.cpp's programs are in", program);
        }
        snprintf(path, n, "%s", program);
        if (access(path, X_OK) != 0)
            return ggfit__fail(err, GGFIT_EIO, "%s cannot be run: give llama.cpp's llama-server",
                               program);
        return GGFIT_OK;
    }
    const char *env = getenv("PATH");
    for (const char *dir = env ? env : ""; *dir;) {
        size_t len = strcspn(dir, ":");
        if (len) {
            snprintf(path, n, "%.*s/llama-server", (int)len, dir);
            if (access(path, X_OK) == 0)
                return GGFIT_OK;
        }
        dir += len + (dir[len] == ':');
    }
    return ggfit__fail(err, GGFIT_EIO, "no llama-server on PATH: give its folder with "
                       "--llama-bin DIR, or its version with --llama-version");
}

ggfit_status ggfit_llama_version_detect(const char *program, ggfit_llama_version *v, char **err)
{
    memset(v, 0, sizeof *v);
    char path[4096];
    ggfit_status rc = find_program(program, path, sizeof path, err);
    if (rc != GGFIT_OK)
        return rc;
    enum { CAP = 64 * 1024 };
    char *out = ggfit__malloc(CAP + 1);
    if (!out)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    int fd[2];
    if (pipe(fd) != 0) {
        free(out);
        return ggfit__fail(err, GGFIT_EIO, "pipe: %s", strerror(errno));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    char flag[] = "--version";
    char *argv[] = { path, flag, NULL };
    pid_t pid;
    int e = posix_spawn(&pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (e != 0) {
        close(fd[0]);
        free(out);
        return ggfit__fail(err, GGFIT_EIO, "%s: %s", path, strerror(e));
    }
    size_t len = 0;
    bool timed_out = false;
    double end = ggfit__now_s() + 10.0;
    for (;;) {
        double left = end - ggfit__now_s();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pfd = { fd[0], POLLIN, 0 };
        int r = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        char tmp[4096];
        ssize_t got = read(fd[0], tmp, sizeof tmp);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t take = (size_t)got < CAP - len ? (size_t)got : CAP - len;
        memcpy(out + len, tmp, take);
        len += take;
    }
    close(fd[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    out[len] = 0;
    if (timed_out)
        rc = ggfit__fail(err, GGFIT_EIO, "%s --version printed no version in 10 s: give its "
                         "version with --llama-version", path);
    else if (!strstr(out, "version: "))
        rc = ggfit__fail(err, GGFIT_EINVAL, "%s --version printed no \"version:\" line (is it "
                         "llama.cpp's llama-server?): give its version with --llama-version",
                         path);
    else
        rc = ggfit_llama_version_parse(out, v, err);
    free(out);
    return rc;
}
