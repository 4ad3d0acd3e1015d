/*
 * test_malformed.c - malformed input fails cleanly: the catalogue in
 * $GGFIT_MALFORMED (written by mkmalformed, one file per failure class, each
 * with its expected status and message, refused by the reader, the model
 * description or the projection; a few files kept as fuzz runs found
 * them), a valid header cut at every byte, and bytes appended after a
 * valid header.
 */
#include <dirent.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "test_util.h"

#define MIN_CATALOGUE 35   /* the failure classes the catalogue must cover */
#define MAX_ENTRIES 256

static const char *malformed_dir(void)
{
    const char *d = getenv("GGFIT_MALFORMED");
    return d && *d ? d : "tests/malformed";
}

/* One line of expected.tsv. */
typedef struct entry {
    char file[128];
    char status[32];
    char substring[512];
    char function[8];     /* "gguf", "model" or "project" */
} entry;

/* Splits "a\tb\tc\td\n" into the entry; false if the line is malformed. */
static bool parse_line(char *line, entry *e)
{
    char *field[4];
    line[strcspn(line, "\r\n")] = '\0';
    for (int i = 0; i < 4; i++) {
        field[i] = line;
        line += strcspn(line, "\t");
        if (i < 3) {
            if (*line != '\t')
                return false;
            *line++ = '\0';
        }
    }
    if (*line || !*field[0] || !*field[2])
        return false;
    return snprintf(e->file, sizeof e->file, "%s", field[0]) < (int)sizeof e->file &&
           snprintf(e->status, sizeof e->status, "%s", field[1]) < (int)sizeof e->status &&
           snprintf(e->substring, sizeof e->substring, "%s", field[2]) <
               (int)sizeof e->substring &&
           snprintf(e->function, sizeof e->function, "%s", field[3]) <
               (int)sizeof e->function;
}

/* Reads expected.tsv into entries; returns how many. */
static size_t read_catalogue(entry *entries, size_t max)
{
    char path[512], line[1024];
    snprintf(path, sizeof path, "%s/expected.tsv", malformed_dir());
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s; run `make malformed`", path);
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        if (n == max)
            fail_msg("%s: more than %zu entries", path, max);
        if (!parse_line(line, &entries[n]))
            fail_msg("%s:%zu: not FILE<TAB>STATUS<TAB>SUBSTRING<TAB>gguf|model|project", path,
                     n + 1);
        n++;
    }
    fclose(f);
    return n;
}

/* The failed call's contract: the status, *out NULL, a message that starts
 * with the path and says what is wrong. */
static void check_failure(const entry *e, const char *path, int rc, const void *out,
                          char *err)
{
    if (rc == GGFIT_OK)
        fail_msg("%s: opened, expected %s", e->file, e->status);
    if (strcmp(ggfit_status_str(rc), e->status) != 0)
        fail_msg("%s: status '%s', expected '%s' (%s)", e->file, ggfit_status_str(rc),
                 e->status, err ? err : "no message");
    if (out)
        fail_msg("%s: *out is not NULL after a failure", e->file);
    if (!err)
        fail_msg("%s: no message", e->file);
    if (strncmp(err, path, strlen(path)) != 0 || err[strlen(path)] != ':')
        fail_msg("%s: message does not start with the path: %s", e->file, err);
    if (!strstr(err, e->substring))
        fail_msg("%s: message lacks \"%s\": %s", e->file, e->substring, err);
    ggfit_free(err);
}

/* What *out holds before a call, so that a failure must clear it. */
static max_align_t sentinel;

/* The model is described; its projection and fit (-fitp on, as the CLI
 * runs them) refuse its hyperparameters, before anything is built. */
static void check_projection(const entry *e, const char *path)
{
    ggfit_model *m = NULL;
    char *err = NULL;
    if (ggfit_model_open(path, &m, &err) != GGFIT_OK)
        fail_msg("%s: expected a model, got: %s", e->file, err);
    ggfit_device dev;
    size_t n = 0;
    assert_int_equal(ggfit_devices_parse("rpc:24GiB", &dev, 1, &n, NULL), GGFIT_OK);
    ggfit_params p;
    ggfit_params_init(&p);
    ggfit_projection pr;
    int rc = ggfit_project(m, &p, &dev, n, &pr, NULL, &err);
    check_failure(e, path, rc, NULL, err);
    ggfit_fit_result r;
    err = NULL;
    rc = ggfit_fit(m, &p, &dev, n, NULL, &r, &err);
    check_failure(e, path, rc, NULL, err);
    ggfit_model_free(m);
}

static void check_entry(const entry *e)
{
    char path[512];
    char *err = NULL;
    snprintf(path, sizeof path, "%s/%s", malformed_dir(), e->file);
    if (strcmp(e->function, "gguf") == 0) {
        ggfit_gguf *g = (void *)&sentinel;
        int rc = ggfit_gguf_open(path, &g, &err);
        check_failure(e, path, rc, g, err);
    } else if (strcmp(e->function, "model") == 0) {
        /* The file layer accepts it: the error really is the model's. */
        ggfit_gguf *g = NULL;
        if (ggfit_gguf_open(path, &g, &err) != GGFIT_OK)
            fail_msg("%s: expected valid GGUF, got: %s", e->file, err);
        ggfit_gguf_close(g);
        ggfit_model *m = (void *)&sentinel;
        int rc = ggfit_model_open(path, &m, &err);
        check_failure(e, path, rc, m, err);
    } else if (strcmp(e->function, "project") == 0) {
        check_projection(e, path);
    } else {
        fail_msg("%s: function '%s' is neither gguf, model nor project", e->file, e->function);
    }
}

static bool listed(const entry *entries, size_t n, const char *file)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(entries[i].file, file) == 0)
            return true;
    return false;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

static void test_catalogue(void **state)
{
    (void)state;
    static entry entries[MAX_ENTRIES];
    size_t n = read_catalogue(entries, MAX_ENTRIES);
    if (n < MIN_CATALOGUE)
        fail_msg("the catalogue has %zu entries, expected at least %d", n, MIN_CATALOGUE);
    for (size_t i = 0; i < n; i++) {
        if (listed(entries, i, entries[i].file))
            fail_msg("%s is listed twice", entries[i].file);
        check_entry(&entries[i]);
    }
}

/* A file in the directory but not in expected.tsv would never be checked. */
static void test_every_file_listed(void **state)
{
    (void)state;
    static entry entries[MAX_ENTRIES];
    size_t n = read_catalogue(entries, MAX_ENTRIES), seen = 0;
    DIR *d = opendir(malformed_dir());
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d));) {
        if (!ends_with(de->d_name, ".gguf"))
            continue;
        if (!listed(entries, n, de->d_name))
            fail_msg("%s/%s is not in expected.tsv", malformed_dir(), de->d_name);
        seen++;
    }
    closedir(d);
    assert_int_equal(seen, n);   /* and every listed file is there */
}

/* The i/o errors, which need no crafted file. */
static void test_io_errors(void **state)
{
    (void)state;
    char path[512], *err = NULL;
    ggfit_gguf *g = NULL;
    snprintf(path, sizeof path, "%s/no-such-file.gguf", malformed_dir());
    assert_int_equal(ggfit_gguf_open(path, &g, &err), GGFIT_EIO);
    assert_null(g);
    assert_non_null(err);
    assert_true(strncmp(err, path, strlen(path)) == 0);
    assert_non_null(strstr(err, "cannot open"));
    ggfit_free(err);

    /* A directory opens with fopen() on Linux; it must not be read. */
    assert_int_equal(ggfit_gguf_open(malformed_dir(), &g, &err), GGFIT_EIO);
    assert_null(g);
    assert_non_null(err);
    assert_true(strncmp(err, malformed_dir(), strlen(malformed_dir())) == 0);
    assert_non_null(strstr(err, "not a regular file"));
    ggfit_free(err);
}

/* ---- cut and extended headers ------------------------------------------- */

/* A header-only llama with 2 blocks: 21 tensors, each of the types the
 * reader handles differently (F32 norms, quantized matrices). */
static void tiny(gw *w)
{
    gw_tiny_model(w, "llama", 2, 256, 512, 1024, GGFIT_TYPE_Q4_K);
}

/* End of the tensor infos: after the last one, "output.weight" (2 dims).
 * The bytes after it are only padding, so a file may end there. */
static size_t infos_end(const gw *w)
{
    static const char last[] = "\x0d\0\0\0\0\0\0\0output.weight";
    size_t n = sizeof last - 1;
    for (size_t at = w->len - n; at > 0; at--)
        if (memcmp(w->data + at, last, n) == 0)
            return at + n + 4 + 2 * 8 + 4 + 8;   /* n_dims, ne, type, offset */
    fail_msg("output.weight not found in the tiny model");
    return 0;
}

static void check_cut(const char *name, int rc, const ggfit_gguf *g, char *err, size_t len)
{
    if (rc != GGFIT_EFORMAT)
        fail_msg("cut at %zu: status %s, expected format error (%s)", len,
                 ggfit_status_str(rc), err ? err : "no message");
    if (g)
        fail_msg("cut at %zu: *out is not NULL", len);
    if (!err || strncmp(err, name, strlen(name)) != 0)
        fail_msg("cut at %zu: message does not start with %s: %s", len, name,
                 err ? err : "(null)");
    ggfit_free(err);
}

/* Every proper prefix of the header up to the last tensor info is refused
 * with a message, from memory and from a file (whose reader is separate). */
static void test_truncated_everywhere(void **state)
{
    (void)state;
    gw w = {0};
    char path[256];
    tiny(&w);
    size_t end = infos_end(&w);
    snprintf(path, sizeof path, "%s/cut.gguf", tmp_dir());
    for (size_t len = 0; len < end; len++) {
        ggfit_gguf *g = NULL;
        char *err = NULL;
        int rc = ggfit_gguf_open_memory(w.data, len, "cut.gguf", &g, &err);
        check_cut("cut.gguf", rc, g, err, len);
        gw cut = { w.data, len, len };
        assert_int_equal(gw_write_file(&cut, path), 0);
        rc = ggfit_gguf_open(path, &g, &err);
        check_cut(path, rc, g, err, len);
    }
    /* From the end of the infos on, the file is a valid header. */
    for (size_t len = end; len <= w.len; len++) {
        ggfit_gguf *g = NULL;
        char *err = NULL;
        if (ggfit_gguf_open_memory(w.data, len, "cut.gguf", &g, &err) != GGFIT_OK)
            fail_msg("cut at %zu of %zu: %s", len, w.len, err);
        assert_int_equal(ggfit_gguf_n_tensors(g), 3 + 2 * 9);
        ggfit_gguf_close(g);
    }
    unlink(path);
    gw_free(&w);
}

static void same_header(const ggfit_gguf *a, const ggfit_gguf *b)
{
    assert_int_equal(ggfit_gguf_n_kv(a), ggfit_gguf_n_kv(b));
    assert_int_equal(ggfit_gguf_n_tensors(a), ggfit_gguf_n_tensors(b));
    assert_int_equal(ggfit_gguf_data_offset(a, 0), ggfit_gguf_data_offset(b, 0));
    assert_int_equal(ggfit_gguf_tensor_bytes(a), ggfit_gguf_tensor_bytes(b));
    for (uint64_t i = 0; i < ggfit_gguf_n_tensors(a); i++)
        assert_string_equal(ggfit_gguf_tensor(a, i)->name, ggfit_gguf_tensor(b, i)->name);
}

/* Tensor data follows the header and is never parsed: whatever bytes come
 * after it (here a fixed-seed noise) change nothing. The file version gets
 * more than the reader's first 1 MiB chunk, so the header is read as a
 * prefix of a larger file. */
static void test_trailing_bytes(void **state)
{
    (void)state;
    gw w = {0}, big = {0};
    ggfit_gguf *ref = NULL, *g = NULL;
    char path[256], *err = NULL;
    tiny(&w);
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "ref.gguf", &ref, &err), GGFIT_OK);
    gw_bytes(&big, w.data, w.len);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < ((size_t)3 << 20); i++) {
        x ^= x << 13;   /* xorshift64 */
        x ^= x >> 7;
        x ^= x << 17;
        gw_u8(&big, (uint8_t)x);
    }
    for (size_t extra = 1; extra <= 4096; extra = extra * 3 + 1) {
        if (ggfit_gguf_open_memory(big.data, w.len + extra, "big.gguf", &g, &err) != GGFIT_OK)
            fail_msg("%zu bytes appended: %s", extra, err);
        same_header(ref, g);
        ggfit_gguf_close(g);
    }
    snprintf(path, sizeof path, "%s/trailing.gguf", tmp_dir());
    assert_int_equal(gw_write_file(&big, path), 0);
    if (ggfit_gguf_open(path, &g, &err) != GGFIT_OK)
        fail_msg("%s", err);
    same_header(ref, g);
    ggfit_gguf_close(g);
    unlink(path);
    ggfit_gguf_close(ref);
    gw_free(&big);
    gw_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue),
        cmocka_unit_test(test_every_file_listed),
        cmocka_unit_test(test_io_errors),
        cmocka_unit_test(test_truncated_everywhere),
        cmocka_unit_test(test_trailing_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
