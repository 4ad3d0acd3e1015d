/*
 * test_tiny.c - data/tiny/ is what the specs write now, byte for byte.
 *
 * The small headers of data/tiny/ are written by the tests' specs
 * (tests/arch_spec.c's project_all, test_recurrent, test_mtmd) when
 * GGFIT_ARCHS_DUMP or GGFIT_MTMD_DUMP names a folder, and llama.cpp's
 * figures for them (data/oracle/) name them. A spec changed without
 * writing data/tiny/ again would leave the figures checking a header no
 * test makes: this test runs every test program that writes headers (the
 * tests/test_*.c that call project_all or gw_dump) with those variables
 * set to a fresh folder under $TMPDIR, then fails on each file that is
 * missing from data/tiny/, differs from it, or is written by two programs,
 * and on each file of data/tiny/ that no spec writes, naming the file and
 * the spec (its place in the source, from the folder's SPECS list).
 * tools/write_tiny.py writes data/tiny/ again the same way.
 */
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* The folder the headers are written to; removed by the teardown. */
static char work[512];

/* data/tiny/, or the folder GGFIT_TINY names. */
static const char *tiny_dir(void)
{
    const char *d = getenv("GGFIT_TINY");
    return d && *d ? d : "data/tiny";
}

/* The folder of this program: the other test programs are beside it. */
static void self_dir(char *buf, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    assert_true(len > 0);
    buf[len] = '\0';
    char *slash = strrchr(buf, '/');
    assert_non_null(slash);
    *slash = '\0';
}

/* The whole file, NUL-terminated (the caller frees it); NULL if it cannot
 * be read. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    unsigned char *b = malloc(cap);
    assert_non_null(b);
    for (size_t got; (got = fread(b + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n - 1 == 0) {
            b = realloc(b, cap *= 2);
            assert_non_null(b);
        }
    }
    fclose(f);
    b[n] = '\0';
    *len = n;
    return b;
}

/* Whether tests/<name>.c calls project_all or gw_dump: it writes headers. */
static bool writes_headers(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "tests/%s.c", name);
    size_t len;
    char *src = (char *)slurp(path, &len);
    if (!src)
        fail_msg("cannot read %s (run from the repository's root)", path);
    bool yes = strstr(src, "project_all(") || strstr(src, "gw_dump(");
    free(src);
    return yes && strcmp(name, "test_tiny");
}

/* Runs bin/prog with the dump variables set to out; its output goes to
 * out.log. Fails the test if it does not pass: the files after a failure
 * would be numbered wrongly. */
static void run_writer(const char *bin, const char *prog, const char *out)
{
    char exe[1024], log[1100];
    snprintf(exe, sizeof exe, "%s/%s", bin, prog);
    snprintf(log, sizeof log, "%s.log", out);
    assert_int_equal(mkdir(out, 0700), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = freopen(log, "w", stdout);
        if (!f || dup2(fileno(stdout), 2) < 0)
            _exit(127);
        setenv("GGFIT_ARCHS_DUMP", out, 1);
        setenv("GGFIT_MTMD_DUMP", out, 1);
        /* The programs hold their headers to data/tiny/ too: not here,
         * where this test says how they differ. */
        setenv("GGFIT_TINY", "/nonexistent", 1);
        execl(exe, exe, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        assert_int_equal(errno, EINTR);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        size_t len;
        char *text = (char *)slurp(log, &len);
        printf("%s\n", text ? text + (len > 3000 ? len - 3000 : 0) : "");
        free(text);
        fail_msg("%s fails (its output above), so the headers it writes cannot be compared",
                 exe);
    }
}

/* One written file: its name, the program and the spec that wrote it. */
typedef struct written {
    char file[128];
    char prog[64];
    char where[160];
} written;

/* Adds the files out/SPECS lists to w[*n]; returns how many it listed. */
static size_t read_specs(const char *out, const char *prog, written *w, size_t max, size_t *n)
{
    char path[1100], line[512];
    snprintf(path, sizeof path, "%s/SPECS", out);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t listed = 0;
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        *tab = '\0';
        tab[strcspn(tab + 1, "\n") + 1] = '\0';
        assert_true(*n < max);
        written *x = &w[(*n)++];
        snprintf(x->file, sizeof x->file, "%.*s", (int)sizeof x->file - 1, line);
        snprintf(x->prog, sizeof x->prog, "%.*s", (int)sizeof x->prog - 1, prog);
        snprintf(x->where, sizeof x->where, "%.*s", (int)sizeof x->where - 1, tab + 1);
        listed++;
    }
    fclose(f);
    return listed;
}

/* The first byte two buffers differ at (the shorter one's length if one
 * is the other's start). */
static size_t first_difference(const unsigned char *a, size_t na, const unsigned char *b,
                               size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    return i;
}

enum { MAX_WRITTEN = 2048, MAX_PROGS = 64 };

static void test_tiny_is_what_the_specs_write(void **state)
{
    (void)state;
    char bin[512];
    self_dir(bin, sizeof bin);
    const char *tmp = getenv("TMPDIR");
    snprintf(work, sizeof work, "%s/ggfit-tiny-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(work));

    /* Every test program whose source writes headers. */
    static written w[MAX_WRITTEN];
    size_t n = 0, n_progs = 0;
    DIR *d = opendir("tests");
    assert_non_null(d);
    static char progs[MAX_PROGS][64];
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "test_", 5) || len < 3 || strcmp(e->d_name + len - 2, ".c") ||
            len - 2 >= sizeof progs[0])
            continue;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len - 2), e->d_name);
        if (writes_headers(name)) {
            assert_true(n_progs < MAX_PROGS);
            snprintf(progs[n_progs++], sizeof progs[0], "%s", name);
        }
    }
    closedir(d);
    qsort(progs, n_progs, sizeof progs[0], model_name_cmp);
    assert_true(n_progs >= 10);   /* test_archs, the families, test_mtmd, ... */
    for (size_t p = 0; p < n_progs; p++) {
        char out[1024];
        snprintf(out, sizeof out, "%s/%s", work, progs[p]);
        run_writer(bin, progs[p], out);
        read_specs(out, progs[p], w, MAX_WRITTEN, &n);
    }

    /* Each written file against data/tiny/, and no name written twice. */
    int n_bad = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++)
            if (!strcmp(w[i].file, w[j].file)) {
                printf("tiny: %s is written by two specs: %s (%s) and %s (%s)\n", w[i].file,
                       w[j].where, w[j].prog, w[i].where, w[i].prog);
                n_bad++;
            }
        char ours[1024], theirs[1024];
        snprintf(ours, sizeof ours, "%s/%s/%s", work, w[i].prog, w[i].file);
        snprintf(theirs, sizeof theirs, "%s/%s", tiny_dir(), w[i].file);
        size_t na, nb;
        unsigned char *a = slurp(ours, &na), *b = slurp(theirs, &nb);
        assert_non_null(a);
        if (!b) {
            printf("tiny: %s is missing: the spec at %s (%s) writes it "
                   "(tools/write_tiny.py copies it; then record llama.cpp's figures for it)\n",
                   theirs, w[i].where, w[i].prog);
            n_bad++;
        } else if (na != nb || memcmp(a, b, na)) {
            printf("tiny: %s differs from what the spec at %s (%s) writes now (from byte %zu; "
                   "%zu bytes, %zu written): tools/write_tiny.py writes it again; then record "
                   "llama.cpp's figures for it\n",
                   theirs, w[i].where, w[i].prog, first_difference(a, na, b, nb), nb, na);
            n_bad++;
        }
        free(a);
        free(b);
    }

    /* Each file of data/tiny/ written by some spec. */
    size_t n_tiny = 0;
    d = opendir(tiny_dir());
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        n_tiny++;
        bool found = false;
        for (size_t i = 0; i < n && !found; i++)
            found = !strcmp(w[i].file, e->d_name);
        if (!found) {
            printf("tiny: %s/%s: no spec writes it (a spec removed or renumbered: its "
                   "recorded figures check nothing a test makes; tools/write_tiny.py)\n",
                   tiny_dir(), e->d_name);
            n_bad++;
        }
    }
    closedir(d);
    printf("tiny: %zu files written by the specs of %zu programs, %zu in %s, %d differences\n",
           n, n_progs, n_tiny, tiny_dir(), n_bad);
    if (n_bad)
        fail_msg("%s is not what the specs write: %d differences, listed above", tiny_dir(),
                 n_bad);
    assert_true(n > 0);
}

/* Removes path: a file, or a folder and what it holds. */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[1024];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_tree(sub);
        }
        closedir(d);
    }
    remove(path);
}

static int remove_work(void **state)
{
    (void)state;
    if (work[0])
        remove_tree(work);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_tiny_is_what_the_specs_write, remove_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
