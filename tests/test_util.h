/*
 * test_util.h - shared bits of the cmocka tests.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <dirent.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>

#include <cmocka.h>

#include "ggfit_app.h"

/* Directory of the shipped model layouts (GGFIT_MODELS, default data/models). */
static inline const char *models_dir(void)
{
    const char *d = getenv("GGFIT_MODELS");
    return d && *d ? d : "data/models";
}

static inline void model_path(char *buf, size_t n, const char *file)
{
    snprintf(buf, n, "%s/%s", models_dir(), file);
}

/* A JSON document a test made, kept as GGFIT_JSON_DIR/name where that is
 * set: tests/run.sh validates them against docs/schema/ (the documents only
 * the library prints: ggfit_projection_json, ggfit_fit_json, ggfit_speed_json). */
static inline void keep_json(const char *name, const char *text)
{
    const char *d = getenv("GGFIT_JSON_DIR");
    char path[512];
    if (!d || !*d || !text)
        return;
    snprintf(path, sizeof path, "%s/%s", d, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The shipped layouts (*.gguf in models_dir()), sorted, up to max names of
 * fewer than 128 characters; returns how many. */
typedef char model_name[128];

static int model_name_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static inline size_t model_files(model_name *names, size_t max)
{
    DIR *d = opendir(models_dir());
    size_t n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; n < max && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 5 && len < sizeof names[0] && !strcmp(e->d_name + len - 5, ".gguf"))
            memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], model_name_cmp);
    return n;
}

/* A request parsed from the words of line (split in buf, at most max of
 * them in argv); "-m" names a file of models_dir(). */
static inline void request_of(ggfit_request *r, const char *line, char *buf, size_t n,
                              char **argv, int max, int *argc)
{
    char *err = NULL;
    ggfit_request_init(r);
    snprintf(buf, n, "%s", line);
    *argc = 0;
    for (char *t = strtok(buf, " "); t && *argc < max; t = strtok(NULL, " "))
        argv[(*argc)++] = t;
    static char paths[4][512];
    for (int i = 0, k = 0; i + 1 < *argc && k < 4; i++)
        if (!strcmp(argv[i], "-m")) {
            model_path(paths[k], sizeof paths[k], argv[i + 1]);
            argv[i + 1] = paths[k++];
        }
    for (int i = 0; i < *argc;)
        if (ggfit_request_parse_arg(r, *argc, argv, &i, NULL, &err))
            fail_msg("%s: %s", line, err);
}

/* A fresh temporary directory for files a test writes. */
static inline const char *tmp_dir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/ggfit-test-XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    return dir;
}

/* The plan's notes, as its text gives them (a static copy). */
static inline const char *notes_of(const ggfit_plan *pl)
{
    static char buf[1 << 16];
    char *t = ggfit_plan_text(pl, false);
    assert_non_null(t);
    snprintf(buf, sizeof buf, "%s", strstr(t, "note: ") ? strstr(t, "note: ") : "");
    ggfit_free(t);
    return buf;
}

/* tests/http_server.sh's nginx for one test program, in a new folder
 * /tmp/ggfit-PROG-XXXXXX: what it serves under www/ (models_dir, with
 * models true, as www/m), its port and address. */
typedef struct http_fixture {
    char dir[64];
    int port;
    char base[64];            /* http://127.0.0.1:PORT */
    bool none;                /* nginx is not installed: the tests that
                                 need it skip (NEED_SERVER) */
} http_fixture;

/* 0 started, or nginx missing (h->none, said on stderr); -1 failed. */
static inline int http_fixture_start(http_fixture *h, const char *prog, bool models,
                                     const char *what)
{
    char cmd[256];
    memset(h, 0, sizeof *h);
    snprintf(h->dir, sizeof h->dir, "/tmp/ggfit-%s-XXXXXX", prog);
    if (!mkdtemp(h->dir))
        return -1;
    snprintf(cmd, sizeof cmd, "sh tests/http_server.sh start %s %s >/dev/null", h->dir,
             models ? models_dir() : "");
    int rc = system(cmd);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
        fprintf(stderr, "test_%s: nginx is not installed: %s are skipped (scripts/deps.sh "
                        "test installs it)\n", prog, what);
        h->none = true;
        return 0;
    }
    if (rc != 0)
        return -1;
    char path[128];
    snprintf(path, sizeof path, "%s/port", h->dir);
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%d", &h->port) != 1) {
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    snprintf(h->base, sizeof h->base, "http://127.0.0.1:%d", h->port);
    return 0;
}

static inline int http_fixture_stop(http_fixture *h)
{
    char cmd[256];
    if (!h->dir[0])
        return 0;
    snprintf(cmd, sizeof cmd, "sh tests/http_server.sh stop %s; rm -rf %s", h->dir, h->dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
