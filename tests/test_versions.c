/*
 * test_versions.c - the llama.cpp a plan answers for (src/versions/): the
 * versions as people and programs write them, `llama-server --version`
 * asked of a program (fake ones printing what the real builds print,
 * tests/llama_version/version-*.txt), and a running llama-server's /props
 * (tests/llama_version/props-*.json) served by nginx (tests/http_server.sh;
 * skipped with a message where nginx is not installed).
 *
 * The fixtures are what llama-server b10309 (82bb48500) and b10587
 * (3f545becc) printed, built without git (build 0, commit unknown) and
 * with their build info (tests/llama_version/README).
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "test_util.h"
#include "common/args.h"
#include "versions/version.h"

#define FIXTURES "tests/llama_version"

static const char *b10309 = "82bb48500a9a6b3374da2cf5811695369278e4d3";
static const char *b10587 = "3f545beccee69d9975f466ec7e45fd9aacd8ba90";

/* ---- reading versions ------------------------------------------------------ */

typedef struct parse_case {
    const char *text;
    ggfit_status rc;
    uint32_t build, rules;
    ggfit_llama_match match;
    bool commit_known, build_printed;
    const char *commit;       /* the commit kept, NULL: none */
    const char *semver;
    const char *err;          /* a phrase of the error */
} parse_case;

static const parse_case cases[] = {
    /* what people write */
    { "latest", GGFIT_OK, 10587, 10587, GGFIT_LLAMA_EXACT, true, false, "3f545becc", "", NULL },
    { "b10587", GGFIT_OK, 10587, 10587, GGFIT_LLAMA_EXACT, true, false, "3f545becc", "", NULL },
    { "B10309", GGFIT_OK, 10309, 10309, GGFIT_LLAMA_EXACT, true, false, "82bb48500", "", NULL },
    { "10309", GGFIT_OK, 10309, 10309, GGFIT_LLAMA_EXACT, true, false, "82bb48500", "", NULL },
    { "  b10309\n", GGFIT_OK, 10309, 10309, GGFIT_LLAMA_EXACT, true, false, "82bb48500", "",
      NULL },
    /* between, newer, older */
    { "b10400", GGFIT_OK, 10400, 10400, GGFIT_LLAMA_BETWEEN, true, false, NULL, "", NULL },
    { "b10700", GGFIT_OK, 10700, 10587, GGFIT_LLAMA_NEWER, false, false, "", "", NULL },
    { "b9000", GGFIT_OK, 9000, 10309, GGFIT_LLAMA_OLDER, false, false, "", "", NULL },
    { "b1", GGFIT_OK, 1, 10309, GGFIT_LLAMA_OLDER, false, false, "", "", NULL },
    /* commits: short, full, upper case */
    { "82bb485", GGFIT_OK, 10309, 10309, GGFIT_LLAMA_EXACT, true, false, "82bb48500", "", NULL },
    { "3F545BECC", GGFIT_OK, 10587, 10587, GGFIT_LLAMA_EXACT, true, false, "3f545becc", "",
      NULL },
    { "3f545beccee69d9975f466ec7e45fd9aacd8ba90", GGFIT_OK, 10587, 10587, GGFIT_LLAMA_EXACT,
      true, false, "3f545becc", "", NULL },
    { "8e7f22b67", GGFIT_OK, 10398, 10398, GGFIT_LLAMA_BETWEEN, true, false, "8e7f22b67", "",
      NULL },
    /* a server's build_info */
    { "b10587-3f545becc", GGFIT_OK, 10587, 10587, GGFIT_LLAMA_EXACT, true, false, "3f545becc",
      "", NULL },
    /* a fork's number beside an upstream commit: the commit wins */
    { "b4242-3f545becc", GGFIT_OK, 10587, 10587, GGFIT_LLAMA_EXACT, true, false, "3f545becc",
      "", NULL },
    /* a commit ggfit does not know, with the number printed beside it */
    { "b10450-deadbeef1", GGFIT_OK, 10450, 10450, GGFIT_LLAMA_BETWEEN, false, true,
      "deadbeef1", "", NULL },
    { "b20000-deadbeef1", GGFIT_OK, 20000, 10587, GGFIT_LLAMA_NEWER, false, true, "deadbeef1",
      "", NULL },
    /* --version's two forms, and what is printed before them */
    { "version: 10309 (82bb48500)\nbuilt with GNU 12.2.0 for Linux x86_64\n", GGFIT_OK, 10309,
      10309, GGFIT_LLAMA_EXACT, true, false, "82bb48500", "", NULL },
    { "version: 0.2.0-dev (build 10587, commit 3f545becc)\r\nbuilt with x\r\n", GGFIT_OK,
      10587, 10587, GGFIT_LLAMA_EXACT, true, false, "3f545becc", "0.2.0-dev", NULL },
    { "0.00.005.172 I using config file: /etc/llama.cpp/config.ini\n"
      "version: 0.2.0 (build 10587, commit 3f545becc)\n", GGFIT_OK, 10587, 10587,
      GGFIT_LLAMA_EXACT, true, false, "3f545becc", "0.2.0", NULL },
    { "version: 4242 (82bb48500)\n", GGFIT_OK, 10309, 10309, GGFIT_LLAMA_EXACT, true, false,
      "82bb48500", "", NULL },
    { "version: 1.0.0 (build 77, commit 3f545becc)\n", GGFIT_OK, 10587, 10587,
      GGFIT_LLAMA_EXACT, true, false, "3f545becc", "1.0.0", NULL },
    { "version: 10500 (abcdef123)\n", GGFIT_OK, 10500, 10500, GGFIT_LLAMA_BETWEEN, false, true,
      "abcdef123", "", NULL },
    { "version: 0.3.0 (build 10900, commit abcdef123)\n", GGFIT_OK, 10900, 10587,
      GGFIT_LLAMA_NEWER, false, true, "abcdef123", "0.3.0", NULL },
    { "version: 10700 (unknown)\n", GGFIT_OK, 10700, 10587, GGFIT_LLAMA_NEWER, false, true, "",
      "", NULL },
    /* built without git: the version must be given */
    { "version: 0 (unknown)\nbuilt with GNU\n", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL,
      "without its git history" },
    { "version: 0.2.0-dev (build 0, commit unknown)\n", GGFIT_EINVAL, 0, 0, 0, false, false,
      NULL, NULL, "without its git history" },
    { "b0-unknown", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL,
      "without its git history" },
    /* commits it cannot place */
    { "deadbeef1", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "not one ggfit knows" },
    { "82bb48", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "7 to 40 hex digits" },
    { "1234567", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "not one ggfit knows" },
    { "3f545beccee69d9975f466ec7e45fd9aacd8ba901", GGFIT_EINVAL, 0, 0, 0, false, false, NULL,
      NULL, "cannot read" },
    /* garbage */
    { "", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "   ", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "b", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "b0", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "b-1", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "b99999999999", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "not one ggfit knows" },
    { "b4294967296", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "not one ggfit knows" },
    { "b99999999999x", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "b10587-xyz", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "b10587 now", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "newest", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "version: banana\n", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL, "cannot read" },
    { "version: 0.2.0 (build x, commit 3f545becc)\n", GGFIT_EINVAL, 0, 0, 0, false, false, NULL,
      NULL, "cannot read" },
    { "version: 0.2.0 build 10587\n", GGFIT_EINVAL, 0, 0, 0, false, false, NULL, NULL,
      "cannot read" },
};

static void check_case(const parse_case *c, ggfit_status rc, const ggfit_llama_version *v,
                       const char *err)
{
    if (rc != c->rc)
        fail_msg("'%s': status %d, expected %d (%s)", c->text, rc, c->rc, err ? err : "");
    if (rc) {
        assert_non_null(err);
        if (!strstr(err, c->err))
            fail_msg("'%s': \"%s\" does not say \"%s\"", c->text, err, c->err);
        assert_null(strchr(err, '\n'));
        return;
    }
    if (v->build != c->build || v->rules != c->rules || v->match != c->match)
        fail_msg("'%s': b%u rules b%u match %d, expected b%u b%u %d", c->text, v->build,
                 v->rules, v->match, c->build, c->rules, c->match);
    if (v->commit_known != c->commit_known || v->build_printed != c->build_printed)
        fail_msg("'%s': commit_known %d build_printed %d", c->text, v->commit_known,
                 v->build_printed);
    if (c->commit && strncmp(v->commit, c->commit, strlen(c->commit)))
        fail_msg("'%s': commit %s, expected %s", c->text, v->commit, c->commit);
    if (c->commit && !c->commit[0] && v->commit[0])
        fail_msg("'%s': commit %s, expected none", c->text, v->commit);
    if (v->commit_known)
        assert_int_equal(strlen(v->commit), 40);   /* the full hash, and its date */
    if (v->commit_known)
        assert_int_equal(strlen(v->date), 10);
    assert_string_equal(v->semver, c->semver);
    /* the rules are a supported build's, or between two of them */
    assert_true(v->rules >= ggfit__llama_oldest() && v->rules <= ggfit__llama_newest());
}

static void test_parse(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ggfit_llama_version v;
        char *err = NULL;
        ggfit_status rc = ggfit_llama_version_parse(cases[i].text, &v, &err);
        check_case(&cases[i], rc, &v, err);
        ggfit_free(err);
        /* without a message wanted */
        assert_int_equal(ggfit_llama_version_parse(cases[i].text, &v, NULL), cases[i].rc);
    }
    ggfit_llama_version v;
    char *err = NULL;
    assert_int_equal(ggfit_llama_version_parse(NULL, &v, &err), GGFIT_EINVAL);
    ggfit_free(err);
    /* a long line is cut in the message */
    char big[4096];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_int_equal(ggfit_llama_version_parse(big, &v, &err), GGFIT_EINVAL);
    assert_true(strlen(err) < 300);
    ggfit_free(err);
}

/* Every prefix of 7 digits or more of every known commit decides its
 * build: none is ambiguous, and one digit less than 7 is refused. */
static void test_commit_prefixes(void **state)
{
    (void)state;
    const char *full[] = { b10309, b10587 };
    for (size_t k = 0; k < 2; k++)
        for (size_t n = 6; n <= 40; n++) {
            char hex[41];
            memcpy(hex, full[k], n);
            hex[n] = 0;
            ggfit_llama_version v;
            ggfit_status rc = ggfit_llama_version_parse(hex, &v, NULL);
            if (n < 7) {
                assert_int_equal(rc, GGFIT_EINVAL);
                continue;
            }
            assert_int_equal(rc, GGFIT_OK);
            assert_int_equal(v.build, k ? 10587 : 10309);
            assert_string_equal(v.commit, full[k]);
        }
}

/* What the real programs printed (tests/llama_version/version-*.txt). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: cannot open", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_fixtures(void **state)
{
    (void)state;
    static const struct { const char *file; uint32_t build; const char *semver; } ok[] = {
        { "version-b10309.txt", 10309, "" },
        { "version-b10587.txt", 10587, "0.2.0-dev" },
        { "version-b10587-config.txt", 10587, "0.2.0-dev" },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char path[256];
        ggfit_llama_version v;
        char *err = NULL;
        snprintf(path, sizeof path, FIXTURES "/%s", ok[i].file);
        if (ggfit_llama_version_parse(slurp(path), &v, &err))
            fail_msg("%s: %s", path, err);
        assert_int_equal(v.build, ok[i].build);
        assert_int_equal(v.match, GGFIT_LLAMA_EXACT);
        assert_true(v.commit_known);
        assert_false(v.build_printed);
        assert_string_equal(v.semver, ok[i].semver);
    }
    static const char *const nogit[] = { "version-b10309-nogit.txt", "version-b10587-nogit.txt" };
    for (size_t i = 0; i < 2; i++) {
        char path[256];
        ggfit_llama_version v;
        char *err = NULL;
        snprintf(path, sizeof path, FIXTURES "/%s", nogit[i]);
        assert_int_equal(ggfit_llama_version_parse(slurp(path), &v, &err), GGFIT_EINVAL);
        assert_non_null(strstr(err, "--llama-version b10587"));
        ggfit_free(err);
    }
}

static void test_str(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } s[] = {
        { "b10587", "b10587 (3f545becc, 2026-08-22)" },
        { "b10309", "b10309 (82bb48500, 2026-08-07)" },
        { "b10700", "b10700: newer than b10587, the newest ggfit knows; answered with its "
                    "rules" },
        { "b9000", "b9000: older than b10309, the oldest ggfit knows; answered with its rules" },
        { "b10450-deadbeef1", "b10450 (deadbeef1): between the versions ggfit is exact for; "
                              "the changes it tracks up to b10450 applied" },
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        ggfit_llama_version v;
        char buf[256];
        assert_int_equal(ggfit_llama_version_parse(s[i].in, &v, NULL), GGFIT_OK);
        assert_string_equal(ggfit_llama_version_str(&v, buf, sizeof buf), s[i].out);
    }
    /* the supported list, oldest first, ending in 0 */
    assert_int_equal(ggfit_llama_version_supported(0), 10309);
    assert_int_equal(ggfit_llama_version_supported(1), 10587);
    assert_int_equal(ggfit_llama_version_supported(2), 0);
}

/* ---- asking a program --------------------------------------------------------- */

/* dir/name: a shell script of body, executable (mode). */
static void script(const char *dir, const char *name, const char *body, mode_t mode)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

/* A folder holding a llama-server that prints fixture (on stderr, as
 * llama.cpp does) and exits with status. */
static const char *fake_server(const char *tag, const char *fixture, int status)
{
    static char dir[256];
    char cwd[256], body[1024];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(dir, sizeof dir, "%s/%s", tmp_dir(), tag);
    mkdir(dir, 0755);
    /* the shell's builtins alone: the tests change PATH */
    snprintf(body, sizeof body, "while IFS= read -r l; do printf '%%s\\n' \"$l\"; done "
             "<'%s/" FIXTURES "/%s' >&2\nexit %d", cwd, fixture, status);
    script(dir, "llama-server", body, 0755);
    return dir;
}

static void test_detect(void **state)
{
    (void)state;
    static const struct { const char *fixture; uint32_t build; } ok[] = {
        { "version-b10309.txt", 10309 },
        { "version-b10587.txt", 10587 },
        { "version-b10587-config.txt", 10587 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "ok%zu", i);
        const char *dir = fake_server(tag, ok[i].fixture, 0);
        ggfit_llama_version v;
        char *err = NULL;
        if (ggfit_llama_version_detect(dir, &v, &err))   /* the folder */
            fail_msg("%s: %s", ok[i].fixture, err);
        assert_int_equal(v.build, ok[i].build);
        assert_int_equal(v.match, GGFIT_LLAMA_EXACT);
        char prog[512];
        snprintf(prog, sizeof prog, "%s/llama-server", dir);
        assert_int_equal(ggfit_llama_version_detect(prog, &v, NULL), GGFIT_OK);   /* the program */
        assert_int_equal(v.build, ok[i].build);
    }
    /* a build folder: DIR/bin/llama-server */
    const char *dir = fake_server("build", "version-b10309.txt", 0);
    char top[256], bin[300], from[512];
    snprintf(top, sizeof top, "%s/top", tmp_dir());
    snprintf(bin, sizeof bin, "%s/bin", top);
    mkdir(top, 0755);
    snprintf(from, sizeof from, "%s/llama-server", dir);
    assert_int_equal(mkdir(bin, 0755), 0);
    char to[600];
    snprintf(to, sizeof to, "%s/llama-server", bin);
    assert_int_equal(symlink(from, to), 0);
    ggfit_llama_version v;
    assert_int_equal(ggfit_llama_version_detect(top, &v, NULL), GGFIT_OK);
    assert_int_equal(v.build, 10309);
    /* llama-server on PATH */
    const char *path = getenv("PATH");
    char *saved = path ? strdup(path) : NULL;
    char newpath[1024];
    snprintf(newpath, sizeof newpath, "/nonexistent::%s", fake_server("path", "version-b10587.txt",
                                                                      0));
    setenv("PATH", newpath, 1);
    ggfit_status rc1 = ggfit_llama_version_detect(NULL, &v, NULL);
    uint32_t build = v.build;
    char *err = NULL;
    setenv("PATH", "/nonexistent", 1);
    ggfit_status rc2 = ggfit_llama_version_detect(NULL, &v, &err);
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
    assert_int_equal(rc1, GGFIT_OK);
    assert_int_equal(build, 10587);
    assert_int_equal(rc2, GGFIT_EIO);
    assert_non_null(strstr(err, "no llama-server on PATH"));
    ggfit_free(err);
}

static void test_detect_errors(void **state)
{
    (void)state;
    static const struct { const char *tag, *body; ggfit_status rc; const char *says; } bad[] = {
        { "nogit", NULL, GGFIT_EINVAL, "without its git history" },
        { "garbage", "echo hello", GGFIT_EINVAL, "printed no \"version:\" line" },
        { "silent", "exit 1", GGFIT_EINVAL, "printed no \"version:\" line" },
        { "badline", "echo 'version: what'", GGFIT_EINVAL, "cannot read" },
        { "crash", "kill -SEGV $$", GGFIT_EINVAL, "printed no \"version:\" line" },
        { "flood", "yes 'x' | head -c 200000; echo 'version: 10309 (82bb48500)'", GGFIT_EINVAL,
          "printed no \"version:\" line" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *dir;
        if (bad[i].body) {
            static char d[256];
            snprintf(d, sizeof d, "%s/%s", tmp_dir(), bad[i].tag);
            mkdir(d, 0755);
            script(d, "llama-server", bad[i].body, 0755);
            dir = d;
        } else {
            dir = fake_server(bad[i].tag, "version-b10587-nogit.txt", 0);
        }
        ggfit_llama_version v;
        char *err = NULL;
        ggfit_status rc = ggfit_llama_version_detect(dir, &v, &err);
        if (rc != bad[i].rc || !err || !strstr(err, bad[i].says))
            fail_msg("%s: status %d, \"%s\"", bad[i].tag, rc, err ? err : "");
        ggfit_free(err);
    }
    /* no such path, a folder without the program, a file that cannot run */
    char d[256], *err = NULL;
    ggfit_llama_version v;
    assert_int_equal(ggfit_llama_version_detect("/nonexistent/llama", &v, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "No such file"));
    ggfit_free(err);
    snprintf(d, sizeof d, "%s/empty", tmp_dir());
    mkdir(d, 0755);
    assert_int_equal(ggfit_llama_version_detect(d, &v, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "holds no llama-server"));
    ggfit_free(err);
    script(d, "llama-server", "echo 'version: 10309 (82bb48500)'", 0644);
    char prog[512];
    snprintf(prog, sizeof prog, "%s/llama-server", d);
    if (geteuid() != 0) {   /* root runs what it likes */
        assert_int_equal(ggfit_llama_version_detect(prog, &v, &err), GGFIT_EIO);
        assert_non_null(strstr(err, "cannot be run"));
        ggfit_free(err);
    }
}

/* The request: --llama-version, --llama-bin, --detect settle the rules
 * every params copy carries. */
static void test_request(void **state)
{
    (void)state;
    ggfit_request r;
    char buf[512], *argv[16], *err = NULL;
    int argc;
    request_of(&r, "--llama-version b10309", buf, sizeof buf, argv, 16, &argc);
    assert_int_equal(ggfit_request_version(&r, &err), GGFIT_OK);
    assert_int_equal(r.params.llama_build, 10309);
    assert_int_equal(r.draft.llama_build, 10309);
    request_of(&r, "-c 4096", buf, sizeof buf, argv, 16, &argc);
    assert_int_equal(ggfit_request_version(&r, &err), GGFIT_OK);
    assert_int_equal(r.params.llama_build, 10587);
    char line[512];
    snprintf(line, sizeof line, "--llama-bin %s",
             fake_server("req", "version-b10309.txt", 0));
    request_of(&r, line, buf, sizeof buf, argv, 16, &argc);
    assert_int_equal(ggfit_request_version(&r, &err), GGFIT_OK);
    assert_int_equal(r.params.llama_build, 10309);
    assert_int_equal(r.draft.llama_build, 10309);
    assert_int_equal(r.llama.build, 10309);
    snprintf(line, sizeof line, "--llama-bin %s",
             fake_server("reqbad", "version-b10309-nogit.txt", 0));
    request_of(&r, line, buf, sizeof buf, argv, 16, &argc);
    assert_int_equal(ggfit_request_version(&r, &err), GGFIT_EINVAL);
    ggfit_free(err);
    /* a bad --llama-version is the parser's error */
    ggfit_request_init(&r);
    char a0[] = "--llama-version", a1[] = "b10587-zz";
    char *av[] = { a0, a1 };
    int i = 0;
    assert_int_equal(ggfit_request_parse_arg(&r, 2, av, &i, NULL, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "b10587-zz"));
    ggfit_free(err);
}

/* ---- flags that differ between versions ------------------------------------------ */

/* line parsed (at most 16 words), the version settled: its status and
 * message (a static copy; "" for none). */
static ggfit_status settle(const char *line, ggfit_request *r, const char **msg)
{
    static char buf[512], said[512];
    char *argv[16], *err = NULL;
    int argc;
    request_of(r, line, buf, sizeof buf, argv, 16, &argc);
    r->llama_config = "";
    ggfit_status rc = ggfit_request_version(r, &err);
    snprintf(said, sizeof said, "%s", err ? err : "");
    ggfit_free(err);
    *msg = said;
    return rc;
}

static void test_versioned_flags(void **state)
{
    (void)state;
    static const struct { const char *line, *says; } flags[] = {
        /* added after b10309 */
        { "--llama-version b10309 --mmproj-device none",
          "llama.cpp b10309 has no --mmproj-device (added in b10541): llama-server stops with "
          "\"error: invalid argument: --mmproj-device\"" },
        { "-mmdev none --llama-version b10540", "llama.cpp b10540 has no -mmdev (added in b10541)" },
        { "-mmdev none --llama-version b10541", NULL },
        { "-mmdev none", NULL },
        { "--llama-version b10309 --tools-runtime docker", "b10309 has no --tools-runtime "
          "(added in b10328)" },
        { "--llama-version b10433 --reasoning-effort high", "b10433 has no --reasoning-effort" },
        { "--llama-version b10434 --reasoning-effort high", NULL },
        /* a value added after b10309 */
        { "--llama-version b10309 -lm auto", "llama.cpp b10309's -lm takes no 'auto' (from "
          "b10364): llama-server stops with \"error while handling argument \"-lm\": invalid "
          "value\"" },
        { "--llama-version b10309 --load-mode mmap", NULL },
        { "--load-mode auto", NULL },
        { "--llama-version b10364 --load-mode auto", NULL },
        /* a flag llama-cli lost */
        { "--for cli -cnv", "llama.cpp b10587's llama-cli has no -cnv (removed from it from "
          "b10583)" },
        { "--for cli --llama-version b10582 -no-cnv", NULL },
        { "--for cli --llama-version b10309 --conversation", NULL },
        { "--for server -cnv", NULL },   /* never llama-server's: not the version's doing */
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        ggfit_request r;
        const char *msg;
        ggfit_status rc = settle(flags[i].line, &r, &msg);
        if (!flags[i].says ? rc != GGFIT_OK : rc != GGFIT_EINVAL || !strstr(msg, flags[i].says))
            fail_msg("'%s': status %d, \"%s\"", flags[i].line, rc, msg);
    }
    /* the variable: its value checked as the flag's */
    setenv("LLAMA_ARG_LOAD_MODE", "auto", 1);
    for (int k = 0; k < 2; k++) {
        ggfit_request rv;
        char *e = NULL;
        ggfit_request_init(&rv);
        rv.llama_config = "";
        ggfit_status rc = ggfit_request_env(&rv, &e);
        if (!rc && k == 0)
            rc = ggfit_llama_version_parse("b10309", &rv.llama, &e);
        if (!rc)
            rc = ggfit_request_version(&rv, &e);
        if (k == 0 && (rc != GGFIT_EINVAL || !strstr(e, "error while handling environment "
                                                         "variable \"LLAMA_ARG_LOAD_MODE\"")))
            fail_msg("b10309: status %d, %s", rc, e ? e : "");
        if (k == 1 && rc)
            fail_msg("latest: %s", e);
        ggfit_free(e);
    }
    unsetenv("LLAMA_ARG_LOAD_MODE");
    /* a pasted llama-cli line, as llama-cli b10587 and b10309 take it */
    char line[] = "llama-cli -m x.gguf -no-cnv";
    char *words[16], *err = NULL;
    ggfit_request r;
    ggfit_request_init(&r);
    r.llama_config = "";
    assert_int_equal(ggfit__request_parse_line(&r, line, words, 16, &err), GGFIT_OK);
    assert_int_equal(ggfit_request_version(&r, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "llama-cli has no -no-cnv"));
    ggfit_free(err);
    char line2[] = "llama-cli -m x.gguf -no-cnv";
    ggfit_request_init(&r);
    r.llama_config = "";
    assert_int_equal(ggfit_llama_version_parse("b10309", &r.llama, NULL), GGFIT_OK);
    assert_int_equal(ggfit__request_parse_line(&r, line2, words, 16, &err), GGFIT_OK);
    assert_int_equal(ggfit_request_version(&r, &err), GGFIT_OK);
    /* the table: every row llama.cpp b10587 added is b10587's, and known */
    static const struct { const char *name; uint32_t since; } added[] = {
        { "--mmproj-device", 10541 }, { "--tools-runtime", 10328 },
        { "--reasoning-effort", 10434 },
    };
    for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) {
        bool negated;
        ggfit__flag f;
        int row = ggfit__flag_find(added[i].name, &negated);
        assert_true(row >= 0);
        assert_true(ggfit__flag_row((size_t)row, &f));
        assert_true(f.llama);
        assert_int_equal(f.since, added[i].since);
        assert_int_equal(f.until, 0);
    }
    /* ggfit's own flags are no version's */
    bool negated;
    ggfit__flag f;
    assert_true(ggfit__flag_row((size_t)ggfit__flag_find("--gpu", &negated), &f));
    assert_false(f.llama);
    assert_false(ggfit__flag_versioned(&f));
}

/* ---- llama.cpp's config files ----------------------------------------------------- */

static const char *write_file(const char *name, const char *text)
{
    static char path[4][256];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 256, "%s/%s", tmp_dir(), name);
    char *slash = strrchr(p, '/');
    *slash = 0;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    if (system(cmd)) {}
    *slash = '/';
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* A request of line with config files files, settled. */
static ggfit_status with_config(const char *line, const char *files, ggfit_request *r,
                                char **err)
{
    static char buf[512];
    char *argv[16];
    int argc;
    request_of(r, line, buf, sizeof buf, argv, 16, &argc);
    r->llama_config = files;
    return ggfit_request_version(r, err);
}

static void test_config(void **state)
{
    (void)state;
    const char *sys = write_file("etc/config.ini",
        "# the system's\n"
        "ctx-size = 4096\n"
        "n-gpu-layers = 7   ; a comment\n"
        "ubatch-size=128\n");
    const char *user = write_file("user/config.ini",
        "ctx-size = 2048\r\n"
        "foo-bar = 1\r\n"
        "version = 3\r\n"
        "no-mmap = true\r\n"
        "cpu-moe = false\r\n"          /* no --no- form: on, whatever the value */
        "conversation = true\r\n"      /* llama-cli's, not llama-server's */
        "\r\n"
        "[ * ]\r\n"                     /* not [*]: a model's preset */
        "ctx-size = 5\r\n"
        "[*]\r\n"
        "ctx-size = 1024\r\n"           /* [*] first, the default section wins */
        "LLAMA_ARG_UBATCH = 64\r\n"
        "[some/model:Q4_K_M]\r\n"
        "ctx-size = 99\r\n");
    char files[600];
    snprintf(files, sizeof files, "%s:%s/missing.ini:%s", sys, tmp_dir(), user);
    ggfit_request r;
    char *err = NULL;
    if (with_config("-m qwen3-0.6b-f16.gguf", files, &r, &err))
        fail_msg("%s", err);
    assert_int_equal(r.params.n_ctx, 2048);
    assert_int_equal(r.params.n_gpu_layers, 7);
    assert_int_equal(r.params.n_ubatch, 64);
    assert_false(r.params.use_mmap);
    assert_true(r.params.cpu_moe);
    if (!strstr(r.llama_config_note, "etc/config.ini: ctx-size = 4096, n-gpu-layers = 7, "
                                     "ubatch-size = 128; ") ||
        !strstr(r.llama_config_note, "foo-bar ignored (not a flag of this llama.cpp program)") ||
        !strstr(r.llama_config_note, "conversation ignored") ||
        strstr(r.llama_config_note, "version") || strstr(r.llama_config_note, "99"))
        fail_msg("%s", r.llama_config_note);
    /* flags and variables win */
    setenv("LLAMA_ARG_N_GPU_LAYERS", "3", 1);
    char buf[512], *argv[16];
    int argc;
    request_of(&r, "-c 512 --mmap", buf, sizeof buf, argv, 16, &argc);
    assert_int_equal(ggfit_request_env(&r, &err), GGFIT_OK);
    unsetenv("LLAMA_ARG_N_GPU_LAYERS");
    r.llama_config = files;
    assert_int_equal(ggfit_request_version(&r, &err), GGFIT_OK);
    assert_int_equal(r.params.n_ctx, 512);
    assert_int_equal(r.params.n_gpu_layers, 3);
    assert_true(r.params.use_mmap);
    assert_int_equal(r.params.n_ubatch, 64);
    assert_non_null(strstr(r.llama_config_note, "ctx-size (a flag or variable given wins)"));
    /* once: a second settling changes nothing */
    assert_int_equal(ggfit_request_version(&r, &err), GGFIT_OK);
    assert_int_equal(r.params.n_ctx, 512);
    /* b10309 reads no config file; b10398 does */
    assert_int_equal(with_config("--llama-version b10309", files, &r, &err), GGFIT_OK);
    assert_int_equal(r.params.n_ctx, 0);
    assert_string_equal(r.llama_config_note, "");
    assert_int_equal(with_config("--llama-version b10397", files, &r, &err), GGFIT_OK);
    assert_int_equal(r.params.n_ctx, 0);
    assert_int_equal(with_config("--llama-version b10398", files, &r, &err), GGFIT_OK);
    assert_int_equal(r.params.n_ctx, 2048);
    /* llama-bench reads none */
    assert_int_equal(with_config("--for bench", files, &r, &err), GGFIT_OK);
    assert_int_equal(r.params.n_ctx, 0);
    assert_string_equal(r.llama_config_note, "");
    /* a key of a flag the version lacks is ignored, as an unknown one */
    const char *mm = write_file("mm/config.ini", "mmproj-device = none\n");
    assert_int_equal(with_config("--llama-version b10500", mm, &r, &err), GGFIT_OK);
    assert_non_null(strstr(r.llama_config_note, "mmproj-device ignored"));
    assert_int_equal(with_config("", mm, &r, &err), GGFIT_OK);
    assert_non_null(strstr(r.llama_config_note, "mmproj-device = none"));
    /* none */
    assert_int_equal(with_config("", "", &r, &err), GGFIT_OK);
    assert_int_equal(r.params.n_ctx, 0);
    /* GGFIT_LLAMA_CONFIG where the request names none */
    setenv("GGFIT_LLAMA_CONFIG", user, 1);
    assert_int_equal(with_config("", NULL, &r, &err), GGFIT_OK);
    assert_int_equal(r.params.n_ctx, 2048);
    /* llama.cpp's own places: $XDG_CONFIG_HOME/llama.cpp/config.ini */
    unsetenv("GGFIT_LLAMA_CONFIG");
    char xdg[300];
    write_file("xdg/llama.cpp/config.ini", "[*]\nctx-size = 3072\n");
    snprintf(xdg, sizeof xdg, "%s/xdg", tmp_dir());
    char *old_xdg = getenv("XDG_CONFIG_HOME") ? strdup(getenv("XDG_CONFIG_HOME")) : NULL;
    setenv("XDG_CONFIG_HOME", xdg, 1);
    ggfit_status rc = with_config("", NULL, &r, &err);
    if (old_xdg)
        setenv("XDG_CONFIG_HOME", old_xdg, 1);
    else
        unsetenv("XDG_CONFIG_HOME");
    free(old_xdg);
    setenv("GGFIT_LLAMA_CONFIG", "", 1);
    assert_int_equal(rc, GGFIT_OK);
    if (access("/etc/llama.cpp/config.ini", F_OK) != 0)   /* this machine's own: none */
        assert_int_equal(r.params.n_ctx, 3072);
    /* files llama.cpp refuses */
    static const struct { const char *text, *says; } bad[] = {
        { "ctx-size 4096\n", "bad.ini:1: not a line llama.cpp's config reads" },
        { "\n\n[*\nctx-size = 1\n", "bad.ini:3: not a line" },
        { "[]\n", "bad.ini:1: not a line" },
        { "-c = 4096\n", "bad.ini:1: not a line" },
        /* common/preset.cpp's header-line and kv-line start the line: indented,
         * neither is read (a comment or a blank line may be) */
        { "  ; fine\n  ctx-size = 4096\n", "bad.ini:2: not a line" },
        { "\t[*]\n", "bad.ini:1: not a line" },
        { "ctx-size = abc\n", "bad.ini:1: " },
        { "[*]\nn-gpu-layers = lots\n", "bad.ini:2: " },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = write_file("bad.ini", bad[i].text);
        rc = with_config("", path, &r, &err);
        if (rc != GGFIT_EINVAL || !err || !strstr(err, bad[i].says))
            fail_msg("'%s': status %d, \"%s\"", bad[i].text, rc, err ? err : "");
        ggfit_free(err);
        err = NULL;
    }
    /* a file of NULs, and one too long */
    const char *path = write_file("nul.ini", "");
    FILE *f = fopen(path, "wb");
    fwrite("a = 1\n\0\0", 1, 8, f);
    fclose(f);
    assert_int_equal(with_config("", path, &r, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "not text"));
    ggfit_free(err);
    assert_int_equal(truncate(path, (2 << 20)), 0);
    assert_int_equal(with_config("", path, &r, &err), GGFIT_ELIMIT);
    ggfit_free(err);
    /* more keys than a file may hold */
    char *many = malloc(300 * 24 + 1);
    many[0] = 0;
    for (int i = 0; i < 300; i++)
        sprintf(many + strlen(many), "ctx-size = %d\n", 1000 + i);
    path = write_file("many.ini", many);
    free(many);
    assert_int_equal(with_config("", path, &r, &err), GGFIT_EINVAL);
    ggfit_free(err);
}

/* ---- Unsloth's quant types ----------------------------------------------------- */

static ggfit_plan unsloth_plan;

/* A llama of IQ1_XS, IQ1_XXS or IQ1_XXXS weights: read, each weight sized
 * by its type's block (IQ1_S's 256 elements in 46, 42 or 38 bytes), and the
 * plan and inspect say that only Unsloth's llama.cpp loads it. */
static void test_unsloth_types(void **state)
{
    (void)state;
    static const struct { uint32_t type; const char *name; uint32_t bytes; } t[] = {
        { GGFIT_TYPE_IQ1_XS, "IQ1_XS", 46 }, { GGFIT_TYPE_IQ1_XXS, "IQ1_XXS", 42 },
        { GGFIT_TYPE_IQ1_XXXS, "IQ1_XXXS", 38 },
    };
    for (size_t k = 0; k < 3; k++) {
        char path[256], *err = NULL;
        snprintf(path, sizeof path, "%s/%s.gguf", tmp_dir(), t[k].name);
        gw w = { 0 };
        gw_tiny_model(&w, "llama", 2, 256, 512, 1024, t[k].type);
        assert_int_equal(gw_write_file(&w, path), 0);
        gw_free(&w);
        ggfit_model *m;
        if (ggfit_model_open(path, &m, &err))
            fail_msg("%s: %s", t[k].name, err);
        /* token_embd and output 256 x 1024; per block q, k, v, o 256 x 256,
         * gate and up 256 x 512, down 512 x 256; norms F32 */
        uint64_t row = 256 / 256 * t[k].bytes;
        uint64_t quant = 2 * 1024 * row + 2 * (4 * 256 * row + 2 * 512 * row + 256 * 2 * row);
        uint64_t norms = (2 * 2 + 1) * 256 * 4;
        uint64_t sum = 0;
        for (uint64_t i = 0; i < ggfit_model_n_tensors(m); i++) {
            const ggfit_tensor_info *ti = ggfit_model_tensor(m, i)->info;
            sum += ti->n_bytes;
            if (ti->n_dims == 2)
                assert_int_equal(ti->type, t[k].type);
        }
        assert_int_equal(sum, quant + norms);
        char *text = ggfit_inspect_text(m);
        assert_non_null(strstr(text, "Unsloth's prebuilt llama.cpp only"));
        assert_non_null(strstr(text, t[k].name));
        ggfit_free(text);
        ggfit_model_free(m);
        /* the plan's note */
        ggfit_request r;
        ggfit_request_init(&r);
        char gpu[] = "--gpu", size[] = "8GiB", mflag[] = "-m", ver[] = "--llama-version",
             b[] = "b10309";
        char *argv[] = { mflag, path, gpu, size, ver, b };
        for (int i = 0; i < 6;)
            if (ggfit_request_parse_arg(&r, 6, argv, &i, NULL, &err))
                fail_msg("%s", err);
        if (ggfit_request_plan(&r, &unsloth_plan, &err))
            fail_msg("%s: %s", t[k].name, err);
        assert_int_equal(unsloth_plan.unsloth_type, t[k].type);
        /* the text as one line: its wrapping undone */
        char notes[4096];
        size_t n = 0;
        for (const char *c = notes_of(&unsloth_plan); *c && n + 1 < sizeof notes; c++) {
            if (*c == '\n' && c[1] == ' ' && c[2] == ' ') {
                notes[n++] = ' ';
                c += 2;
            } else {
                notes[n++] = *c;
            }
        }
        notes[n] = 0;
        if (!strstr(notes, "only Unsloth's prebuilt llama.cpp (from 2026-08-11) loads this "
                           "file; upstream llama.cpp (b10309 here) refuses it"))
            fail_msg("%s", notes);
        ggfit_plan_free(&unsloth_plan);
    }
    /* an upstream model says nothing of it */
    ggfit_request r;
    char buf[256], *argv[8], *err = NULL;
    int argc;
    request_of(&r, "-m qwen3-0.6b-f16.gguf --gpu 8GiB", buf, sizeof buf, argv, 8, &argc);
    r.llama_config = "";
    if (ggfit_request_plan(&r, &unsloth_plan, &err))
        fail_msg("%s", err);
    assert_int_equal(unsloth_plan.unsloth_type, 0);
    assert_null(strstr(notes_of(&unsloth_plan), "Unsloth"));
    ggfit_plan_free(&unsloth_plan);
}

/* ---- asking a running llama-server ----------------------------------------------- */

static http_fixture srv;

/* The fixtures under srv.dir/www/files/NAME/props. */
static void serve(const char *name, const char *text, size_t len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/www/files/%s", srv.dir, name);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/www/files/%s/props", srv.dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    chmod(path, 0644);
}

static int start_server(void **state)
{
    (void)state;
    if (http_fixture_start(&srv, "versions", false, "the --server tests") || srv.none)
        return srv.none ? 0 : -1;
    char path[128];
    snprintf(path, sizeof path, "%s/www/files", srv.dir);
    mkdir(path, 0755);
    chmod(srv.dir, 0755);
    setenv("GGFIT_HTTP_CONNECT_TIMEOUT_MS", "2000", 1);
    setenv("GGFIT_HTTP_STALL_TIMEOUT_MS", "1000", 1);
    return 0;
}

static int stop_server(void **state)
{
    (void)state;
    return http_fixture_stop(&srv);
}

#define NEED_SERVER() do { if (srv.none) skip(); } while (0)

static void test_server(void **state)
{
    (void)state;
    NEED_SERVER();
    const char *fx[] = { "props-b10309.json", "props-b10587.json" };
    for (size_t i = 0; i < 2; i++) {
        char path[256], url[256];
        snprintf(path, sizeof path, FIXTURES "/%s", fx[i]);
        const char *text = slurp(path);
        serve(i ? "b10587" : "b10309", text, strlen(text));
        /* every way of writing the address */
        const char *forms[] = { "%s/files/%s", "%s/files/%s/", "%s/files/%s/props" };
        for (size_t k = 0; k < 3; k++) {
            snprintf(url, sizeof url, forms[k], srv.base, i ? "b10587" : "b10309");
            ggfit_llama_version v;
            char *err = NULL;
            if (ggfit_llama_version_from_server(url, &v, &err))
                fail_msg("%s: %s", url, err);
            assert_int_equal(v.build, i ? 10587 : 10309);
            assert_int_equal(v.match, GGFIT_LLAMA_EXACT);
            assert_true(v.commit_known);
        }
        /* host:port alone is http:// */
        snprintf(url, sizeof url, "%s/files/%s", srv.base + 7, i ? "b10587" : "b10309");
        ggfit_llama_version v;
        assert_int_equal(ggfit_llama_version_from_server(url, &v, NULL), GGFIT_OK);
        assert_int_equal(v.build, i ? 10587 : 10309);
    }
    /* a fork's server: its number, an upstream commit */
    static const char fork[] = "{\"build_info\":\"b4242-82bb48500\"}";
    serve("fork", fork, strlen(fork));
    char url[256];
    ggfit_llama_version v;
    snprintf(url, sizeof url, "%s/files/fork", srv.base);
    assert_int_equal(ggfit_llama_version_from_server(url, &v, NULL), GGFIT_OK);
    assert_int_equal(v.build, 10309);
    /* the request: --server */
    ggfit_request r;
    char buf[512], *argv[16], *err = NULL, line[300];
    int argc;
    snprintf(line, sizeof line, "--llama-version b10587 --server %s/files/b10309", srv.base);
    request_of(&r, line, buf, sizeof buf, argv, 16, &argc);
    assert_int_equal(ggfit_request_version(&r, &err), GGFIT_OK);
    assert_int_equal(r.params.llama_build, 10309);
    assert_int_equal(r.draft.llama_build, 10309);
}

static void test_server_errors(void **state)
{
    (void)state;
    NEED_SERVER();
    static const char html[] = "<html><body>hello</body></html>\n";
    static const char noinfo[] = "{\"role\":\"router\",\"model_path\":\"none\"}";
    static const char number[] = "{\"build_info\":10587}";
    static const char nogit[] = "{\"build_info\":\"b0-unknown\"}";
    static const char bogus[] = "{\"build_info\":\"b10587-zzz\"}";
    static const char array[] = "[1,2,3]";
    serve("html", html, strlen(html));
    serve("noinfo", noinfo, strlen(noinfo));
    serve("number", number, strlen(number));
    serve("nogit", nogit, strlen(nogit));
    serve("bogus", bogus, strlen(bogus));
    serve("array", array, strlen(array));
    /* a reply past 4 MiB: JSON that would parse, were it read */
    size_t huge_n = (5u << 20);
    char *huge = malloc(huge_n);
    assert_non_null(huge);
    memset(huge, ' ', huge_n);
    memcpy(huge, "{\"build_info\":\"b10587-3f545becc\"", 32);
    huge[huge_n - 1] = '}';
    serve("huge", huge, huge_n);
    free(huge);
    /* slow: under 1 KiB/s (nginx's /slow/ location) for longer than the
     * stall timeout */
    char *slow = malloc(8192);
    assert_non_null(slow);
    memset(slow, ' ', 8192);
    memcpy(slow, "{\"build_info\":\"b10587-3f545becc\"", 32);
    slow[8191] = '}';
    serve("slow", slow, 8192);
    free(slow);
    static const struct { const char *path; ggfit_status rc; const char *says; } bad[] = {
        { "/files/html", GGFIT_EINVAL, "not JSON" },
        { "/files/array", GGFIT_EINVAL, "not JSON (not an object)" },
        { "/files/noinfo", GGFIT_EINVAL, "no \"build_info\"" },
        { "/files/number", GGFIT_EINVAL, "no \"build_info\"" },
        { "/files/nogit", GGFIT_EINVAL, "without its git history" },
        { "/files/bogus", GGFIT_EINVAL, "build_info \"b10587-zzz\"" },
        { "/files/huge", GGFIT_EINVAL, "longer than 4 MiB" },
        { "/files/missing", GGFIT_EIO, "HTTP 404" },
        { "/slow/slow", GGFIT_EIO, "stalled" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char url[256], *err = NULL;
        ggfit_llama_version v;
        snprintf(url, sizeof url, "%s%s", srv.base, bad[i].path);
        ggfit_status rc = ggfit_llama_version_from_server(url, &v, &err);
        if (rc != bad[i].rc || !err || !strstr(err, bad[i].says))
            fail_msg("%s: status %d, \"%s\"", bad[i].path, rc, err ? err : "");
        assert_null(strchr(err, '\n'));
        ggfit_free(err);
    }
    /* llama-server --api-key: LLAMA_API_KEY sent */
    char url[256], *err = NULL;
    ggfit_llama_version v;
    snprintf(url, sizeof url, "%s/apikey/b10587", srv.base);
    unsetenv("LLAMA_API_KEY");
    assert_int_equal(ggfit_llama_version_from_server(url, &v, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "HTTP 401: llama-server wants its --api-key: set LLAMA_API_KEY"));
    ggfit_free(err);
    setenv("LLAMA_API_KEY", "sk-wrong", 1);
    assert_int_equal(ggfit_llama_version_from_server(url, &v, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "refused the key in LLAMA_API_KEY"));
    ggfit_free(err);
    setenv("LLAMA_API_KEY", "sk-ggfit-test", 1);
    ggfit_status rc = ggfit_llama_version_from_server(url, &v, &err);
    unsetenv("LLAMA_API_KEY");
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(v.build, 10587);
    /* nothing listening; addresses that are not */
    static const struct { const char *url; ggfit_status rc; const char *says; } addr[] = {
        { "http://127.0.0.1:1", GGFIT_EIO, "127.0.0.1:1/props" },
        { "", GGFIT_EINVAL, "expected llama-server's address" },
        { "/", GGFIT_EINVAL, "expected llama-server's address" },
        { "ftp://127.0.0.1/", GGFIT_EINVAL, "http:// or https://" },
        { "http://a b", GGFIT_EINVAL, "not an address" },
    };
    for (size_t i = 0; i < sizeof addr / sizeof addr[0]; i++) {
        err = NULL;
        rc = ggfit_llama_version_from_server(addr[i].url, &v, &err);
        if (rc != addr[i].rc || !err || !strstr(err, addr[i].says))
            fail_msg("'%s': status %d, \"%s\"", addr[i].url, rc, err ? err : "");
        ggfit_free(err);
    }
}

int main(void)
{
    setenv("GGFIT_LLAMA_CONFIG", "", 1);   /* this machine's are not the tests' */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_commit_prefixes),
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_str),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_detect_errors),
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_versioned_flags),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_unsloth_types),
        cmocka_unit_test(test_server),
        cmocka_unit_test(test_server_errors),
    };
    int rc = cmocka_run_group_tests(tests, start_server, stop_server);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_dir());
    if (system(cmd)) {}
    return rc;
}
