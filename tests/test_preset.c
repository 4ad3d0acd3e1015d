/*
 * test_preset.c - llama-server's router presets read as llama.cpp b10587
 * reads them (src/common/preset.c): the grammar, sections and their names,
 * the keys' spellings and precedence, bool values, and the flags each child
 * gets.
 */
#include "test_util.h"

#include <sys/stat.h>

#include "common/preset.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The words model name's child gets, space-joined; *startup its
 * load-on-startup. */
static void args_of(const ggfit__preset *p, const char *name, char *out, size_t n,
                    bool *startup)
{
    const char *words[256];
    char names[8192];
    size_t nw = 0;
    char *err = NULL;
    for (uint32_t k = 0; k < p->n_models; k++)
        if (!strcmp(p->models[k].name, name)) {
            assert_int_equal(ggfit__preset_args(p, k, words, 256, &nw, names, sizeof names,
                                                &err), GGFIT_OK);
            *startup = ggfit__preset_starts(p, k);
            out[0] = '\0';
            for (size_t i = 0; i < nw; i++)
                snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? " " : "", words[i]);
            return;
        }
    fail_msg("no model %s", name);
}

static void test_read(void **state)
{
    (void)state;
    char path[512], args[1024];
    snprintf(path, sizeof path, "%s/preset-a.ini", tmp_dir());
    write_text(path,
               "version = 1\r\n"
               "ngl = 10 ; keys before a header: a model named default\n"
               "  ; an indented comment\n"
               "[*]\n"
               "parallel = 2\n"
               "mlock = off\n"
               "[org/repo:ud-q4_k_xl]\n"
               "c = 1000\n"
               "LLAMA_ARG_CTX_SIZE = 3000\n"
               "ctx-size = 2000\n"
               "no-mmap = off\n"
               "load-on-startup = true\n"
               "stop-timeout = 30\n"
               "[b]\n"
               "c = 5\n"
               "[b]\n"
               "LLAMA_ARG_NO_MMAP = 1\n"
               "jinja = yes\n"
               "[  c  ]\n"
               "alias = x;y\n");
    ggfit__preset p;
    char *err = NULL;
    assert_int_equal(ggfit__preset_read(path, &p, &err), GGFIT_OK);
    /* sorted by name; the tag upper-cased after its '-'; trailing blanks kept */
    assert_int_equal(p.n_models, 4);
    assert_string_equal(p.models[0].name, "b");
    assert_string_equal(p.models[1].name, "c  ");
    assert_string_equal(p.models[2].name, "default");
    assert_string_equal(p.models[3].name, "org/repo:Q4_K_XL");
    bool startup = false;
    /* [*] first; of c, LLAMA_ARG_CTX_SIZE and ctx-size the one sorting last;
     * mlock off dropped (no --no-mlock); no-mmap = off inverted: mmap on */
    args_of(&p, "org/repo:Q4_K_XL", args, sizeof args, &startup);
    assert_string_equal(args, "-np 2 -c 3000 -c 1000 -c 2000 --mmap");
    assert_true(startup);
    /* a repeated header starts its section again; LLAMA_ARG_NO_MMAP = 1 is
     * llama.cpp's --mmap (not inverted); yes is on */
    args_of(&p, "b", args, sizeof args, &startup);
    assert_string_equal(args, "-np 2 --mmap --jinja");
    assert_false(startup);
    args_of(&p, "default", args, sizeof args, &startup);
    assert_string_equal(args, "-np 2 -ngl 10");
    /* a value runs to the first ';' */
    args_of(&p, "c  ", args, sizeof args, &startup);
    assert_string_equal(args, "-np 2 -a x");
    ggfit__preset_free(&p);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct { const char *text, *error; } bad[] = {
        { "[a]\n  c = 5\n", "line 2" },
        { "[a]\n--ctx-size = 5\n", "line 2" },
        { "[a]\nc\n", "line 2" },
        { "  [a]\n", "line 1" },
        { "[]\n", "line 1" },
        { "[a] x\n", "line 1" },
    };
    char path[512];
    snprintf(path, sizeof path, "%s/preset-b.ini", tmp_dir());
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        write_text(path, bad[k].text);
        ggfit__preset p;
        char *err = NULL;
        assert_int_equal(ggfit__preset_read(path, &p, &err), GGFIT_EINVAL);
        if (!err || !strstr(err, "failed to parse server config file") ||
            !strstr(err, bad[k].error))
            fail_msg("%s: '%s'", bad[k].text, err ? err : "(none)");
        ggfit_free(err);
        ggfit__preset_free(&p);
    }
    /* a key llama-server does not have, or ggfit's own */
    static const char *const unknown[] = { "ctx_size", "gpu", "models-max-x" };
    for (size_t k = 0; k < 3; k++) {
        char text[128];
        snprintf(text, sizeof text, "[m]\n%s = 1\n", unknown[k]);
        write_text(path, text);
        ggfit__preset p;
        char *err = NULL;
        assert_int_equal(ggfit__preset_read(path, &p, &err), GGFIT_OK);
        const char *words[16];
        char names[1024];
        size_t n;
        assert_int_equal(ggfit__preset_args(&p, 0, words, 16, &n, names, sizeof names, &err),
                         GGFIT_EINVAL);
        assert_non_null(strstr(err, "not recognized in preset 'm'"));
        ggfit_free(err);
        ggfit__preset_free(&p);
    }
    ggfit__preset p;
    char *err = NULL;
    assert_int_equal(ggfit__preset_read("/nonexistent/p.ini", &p, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "preset file does not exist"));
    ggfit_free(err);
    ggfit__preset_free(&p);
}

/* --models-dir as load_from_models_dir lists it (names sorted here), and
 * a preset merged over it. */
static void test_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/ggfit-preset-dir-XXXXXX", path[512], args[1024], warn[512];
    assert_non_null(mkdtemp(dir));
    static const char *const files[] = {
        "a.gguf", "x.gguf.gguf", "Top-00001-of-00002.gguf", "Top-00002-of-00002.gguf",
        "mmproj-top.gguf", "mtp-top.gguf", "notes.txt", "sub/model-Q4.gguf", "sub/other.gguf",
        "sub/mmproj-F16.gguf", "sub/mtp-d.gguf", "sub/dflash-d.gguf", "sub/deeper/z.gguf",
        "split/K-00001-of-00003.gguf", "split/K-00002-of-00003.gguf", NULL,
    };
    static const char *const dirs[] = { "sub", "sub/deeper", "split", "empty", NULL };
    for (int i = 0; dirs[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, dirs[i]);
        assert_int_equal(mkdir(path, 0700), 0);
    }
    for (int i = 0; files[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        write_text(path, "");
    }
    snprintf(path, sizeof path, "%s/p.ini", dir);
    write_text(path, "[*]\nc = 1234\n[sub]\nngl = 2\nmodel-draft = /elsewhere.gguf\n");
    ggfit__preset p;
    char *err = NULL;
    bool startup;
    assert_int_equal(ggfit__preset_read(path, &p, &err), GGFIT_OK);
    assert_int_equal(ggfit__preset_dir(&p, dir, warn, sizeof warn, &err), GGFIT_OK);
    static const char *const names[] = { "Top-00001-of-00002", "Top-00002-of-00002", "a",
                                         "split", "sub", "x" };
    assert_int_equal(p.n_models, 6);
    for (int i = 0; i < 6; i++)
        assert_string_equal(p.models[i].name, names[i]);
    /* the directory's files under [*] and the section: the preset's draft wins */
    args_of(&p, "sub", args, sizeof args, &startup);
    char want[1024];
    snprintf(want, sizeof want, "-m %s/sub/other.gguf -mm %s/sub/mmproj-F16.gguf "
                                "--spec-draft-model %s/sub/dflash-d.gguf -c 1234 "
                                "--spec-draft-model /elsewhere.gguf -ngl 2", dir, dir, dir);
    assert_string_equal(args, want);
    args_of(&p, "split", args, sizeof args, &startup);
    snprintf(want, sizeof want, "-m %s/split/K-00001-of-00003.gguf -c 1234", dir);
    assert_string_equal(args, want);
    /* two models in sub: which one is llama.cpp's chance, said */
    assert_non_null(strstr(warn, "sub holds 2 models"));
    assert_non_null(strstr(warn, "sub holds 2 drafts"));
    ggfit__preset_free(&p);
    memset(&p, 0, sizeof p);
    snprintf(path, sizeof path, "%s/none", dir);
    assert_int_equal(ggfit__preset_dir(&p, path, warn, sizeof warn, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "does not exist or is not a directory"));
    ggfit_free(err);
    ggfit__preset_free(&p);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
