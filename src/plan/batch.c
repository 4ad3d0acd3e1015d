/*
 * batch.c - many plans, a JSON line each (ggfit batch): a scheduler's
 * questions, {"id": ..., "argv": [...]} with the CLI's own arguments, each
 * answered as `ggfit ARGS --json` answers it. The headers of local files are
 * kept open across lines (a stat says whether the file is still the one
 * read), and one batch answers from several threads at once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "base/base.h"
#include "plan/plan.h"
#include "render/render.h"

#define BATCH_MODELS 64          /* headers kept open at most */
#define BATCH_MAX_ARGS 1024      /* words of one line's argv */

typedef struct kept_model {
    char *path;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    ggfit_model *model;
} kept_model;

struct ggfit_batch {
    pthread_mutex_t lock;
    kept_model kept[BATCH_MODELS];
    uint32_t n_kept;
};

ggfit_batch *ggfit_batch_new(void)
{
    ggfit_batch *b = ggfit__calloc(1, sizeof *b);
    if (b && pthread_mutex_init(&b->lock, NULL)) {
        ggfit_free(b);
        b = NULL;
    }
    return b;
}

void ggfit_batch_free(ggfit_batch *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < b->n_kept; i++) {
        ggfit_free(b->kept[i].path);
        ggfit_model_free(b->kept[i].model);
    }
    pthread_mutex_destroy(&b->lock);
    ggfit_free(b);
}

static bool same_file(const kept_model *k, const char *path, const struct stat *st)
{
    return !strcmp(k->path, path) && k->dev == st->st_dev && k->ino == st->st_ino &&
           k->size == st->st_size && k->mtime.tv_sec == st->st_mtim.tv_sec &&
           k->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* The model of a local path, from those kept or opened and kept; *owned
 * when it could not be kept (the caller frees it). */
static ggfit_status model_of(ggfit_batch *b, const char *path, const ggfit_model **out,
                             ggfit_model **owned, char **err)
{
    struct stat st;
    *owned = NULL;
    if (stat(path, &st) == 0) {
        pthread_mutex_lock(&b->lock);
        for (uint32_t i = 0; i < b->n_kept; i++)
            if (same_file(&b->kept[i], path, &st)) {
                *out = b->kept[i].model;
                pthread_mutex_unlock(&b->lock);
                return GGFIT_OK;
            }
        pthread_mutex_unlock(&b->lock);
    }
    /* opened outside the lock: another thread may open it too, and the
     * second one kept is freed */
    ggfit_model *m = NULL;
    ggfit_status rc = ggfit_model_open(path, &m, err);
    if (rc)
        return rc;
    char *copy = ggfit__strndup(path, strlen(path));
    pthread_mutex_lock(&b->lock);
    for (uint32_t i = 0; i < b->n_kept; i++)
        if (same_file(&b->kept[i], path, &st)) {
            *out = b->kept[i].model;
            pthread_mutex_unlock(&b->lock);
            ggfit_free(copy);
            ggfit_model_free(m);
            return GGFIT_OK;
        }
    if (copy && b->n_kept < BATCH_MODELS && stat(path, &st) == 0) {
        b->kept[b->n_kept++] = (kept_model){ copy, st.st_dev, st.st_ino, st.st_size,
                                             st.st_mtim, m };
        copy = NULL;
        *out = m;
    } else {
        *owned = m;
        *out = m;
    }
    pthread_mutex_unlock(&b->lock);
    ggfit_free(copy);
    return GGFIT_OK;
}

/* A JSON string of text, whatever its bytes (a message may quote a file's
 * own): bytes that are not UTF-8 become '?'. */
static json_t *text_json(const char *text)
{
    json_t *s = json_string(text);
    if (s)
        return s;
    char *copy = ggfit__strndup(text, strlen(text));
    if (!copy)
        return NULL;
    for (unsigned char *p = (unsigned char *)copy; *p; p++)
        if (*p >= 0x80)
            *p = '?';
    s = json_string(copy);
    ggfit_free(copy);
    return s;
}

/* The line's argv into r, as the CLI's plan command reads its own: the
 * library's flags, --json (implied), and a pasted llama.cpp line after --
 * whose flags ggfit does not know are kept with a warning each. */
ggfit_status ggfit__plan_argv(ggfit_request *r, int argc, char **argv, json_t *warnings,
                              char **err)
{
    bool pasted = false;
    int i = 0;
    size_t n0 = argc > 0 ? strlen(argv[0]) : 0;
    if (argc > 0 && (!strcmp(argv[0], "ggfit") ||
                     (n0 > 6 && !strcmp(argv[0] + n0 - 6, "/ggfit"))))
        i++;   /* the program's name, as a shell line has it */
    if (i < argc && argv[i][0] != '-')
        return ggfit__fail(err, GGFIT_EINVAL, "'%.40s': a batch line is the plan's flags "
                                              "(ggfit -m FILE ...), not another command",
                           argv[i]);
    while (i < argc) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) {
            i++;
            continue;
        }
        if (!strcmp(a, "--")) {
            if (++i >= argc || !ggfit_program_named(argv[i], &r->program))
                return ggfit__fail(err, GGFIT_EINVAL, "--: expected llama-server, llama-cli or "
                                                      "llama-fit-params and its flags");
            if (r->program == GGFIT_FOR_BENCH)
                return ggfit__fail(err, GGFIT_EINVAL, "--: a llama-bench line is ggfit "
                                                      "bench's, not a batch line's");
            pasted = true;
            i++;
            continue;
        }
        bool used = false;
        ggfit_status rc = ggfit_request_parse_arg(r, argc, argv, &i, &used, err);
        if (rc)
            return rc;
        if (used)
            continue;
        if (!pasted || a[0] != '-')
            return ggfit__fail(err, GGFIT_EINVAL, "%.60s: not a flag a batch line takes (the "
                                                  "plan's: -m, --gpu, --host-mem, llama.cpp's; "
                                                  "a pasted line after --)", a);
        /* a newer llama.cpp's flag: planned without it, as the CLI does */
        const char *v = i + 1 < argc && (argv[i + 1][0] != '-' ||
                                         (argv[i + 1][1] >= '0' && argv[i + 1][1] <= '9'))
                            ? argv[i + 1]
                            : NULL;
        char w[256];
        snprintf(w, sizeof w, "%.60s: unknown to ggfit%s%.60s; if it changes memory, the plan "
                              "may be off", a, v ? " (taken with its value " : "",
                 v ? v : "");
        if (v)
            strcat(w, ")");
        if (warnings)
            json_array_append_new(warnings, text_json(w));
        if (r->n_unknown < GGFIT_MAX_IGNORED) {
            r->unknown[r->n_unknown][0] = a;
            r->unknown[r->n_unknown++][1] = v;
        }
        i += 1 + (v != NULL);
    }
    return GGFIT_OK;
}

/* The plan of one line's argv, as `ggfit ARGV --json` prints it. */
static ggfit_status plan_argv(ggfit_batch *b, int argc, char **argv, json_t *answer,
                              char **err)
{
    ggfit_request *r = ggfit_request_new();
    ggfit_plan *pl = ggfit__calloc(1, sizeof *pl);
    ggfit_model *owned = NULL;
    json_t *warnings = json_array();
    ggfit_status rc = GGFIT_OK;
    if (!r || !pl || !warnings) {
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = ggfit_request_env(r, err)) || (rc = ggfit__plan_argv(r, argc, argv, warnings, err)))
        goto done;
    if (r->model && !r->hf_repo && !r->model_url && !ggfit_is_url(r->model) &&
        (rc = model_of(b, r->model, &r->model_open, &owned, err)))
        goto done;
    if ((rc = ggfit_request_plan(r, pl, err)))
        goto done;
    json_t *plan = ggfit__plan_tree(pl);
    if (!plan || json_object_set_new(answer, "plan", plan) ||
        json_object_set_new(answer, "exit_status", json_integer(ggfit_plan_exit_status(pl))) ||
        (json_array_size(warnings) && json_object_set(answer, "warnings", warnings)))
        rc = ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_plan_free(pl);
done:
    json_decref(warnings);
    ggfit_model_free(owned);
    ggfit_free(pl);
    ggfit_request_free(r);
    return rc;
}

char *ggfit_batch_answer(ggfit_batch *b, const char *line, size_t len)
{
    json_error_t je;
    json_t *in = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    json_t *id = in && json_is_object(in) ? json_object_get(in, "id") : NULL;
    json_t *answer = json_pack("{s:O}", "id", id ? id : json_null());
    json_t *args = in ? json_object_get(in, "argv") : NULL;
    char *err = NULL, *out = NULL;
    char *argv[BATCH_MAX_ARGS];
    size_t argc = json_array_size(args);
    if (!answer)
        goto done;
    if (!b)
        ggfit__fail(&err, GGFIT_EINVAL, "ggfit_batch_answer: no batch");
    else if (!in)
        ggfit__fail(&err, GGFIT_EINVAL, "not JSON (%.80s at column %d): a line is "
                                        "{\"id\": ..., \"argv\": [\"-m\", \"FILE\", ...]}",
                    je.text, je.column);
    else if (!json_is_object(in) || !json_is_array(args))
        ggfit__fail(&err, GGFIT_EINVAL, "no \"argv\" array: a line is {\"id\": ..., \"argv\": "
                                        "[\"-m\", \"FILE\", ...]}");
    else if (argc > BATCH_MAX_ARGS)
        ggfit__fail(&err, GGFIT_EINVAL, "\"argv\" has %zu words, more than %d", argc,
                    BATCH_MAX_ARGS);
    if (!err) {
        for (size_t i = 0; i < argc && !err; i++) {
            json_t *w = json_array_get(args, i);
            if (!json_is_string(w) || strlen(json_string_value(w)) != json_string_length(w))
                ggfit__fail(&err, GGFIT_EINVAL, "\"argv\"[%zu] is not a string (without NUL)",
                            i);
            else {
                /* the parser takes main's char **argv, and never writes it */
                union { const char *c; char *m; } u = { json_string_value(w) };
                argv[i] = u.m;
            }
        }
    }
    if (!err)
        plan_argv(b, (int)argc, argv, answer, &err);
    if (err && json_object_set_new(answer, "error", text_json(err)))
        goto done;
    out = ggfit__json_doc(answer, "batch", JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    answer = NULL;
done:
    ggfit_free(err);
    json_decref(answer);
    json_decref(in);
    return out;
}
