/*
 * recorded.h - reading the graphs llama.cpp recorded (data/graphs), shared
 * by the allocator and scheduler tests: ggml_op_desc names to ggfit_op,
 * lines of any length from a gzip file, and a resolver that turns the
 * recorded source names (which repeat: "norm-0", " (view)") back into
 * tensor indices by the rules of ggml's graph order.
 */
#ifndef GGFIT_TEST_RECORDED_H
#define GGFIT_TEST_RECORDED_H

#include <jansson.h>
#include <zlib.h>

#include "galloc.h"
#include "test_util.h"

/* Directory of the recorded graphs (GGFIT_GRAPHS, default data/graphs). */
const char *rec_graphs_dir(void);
/* ggfit_op of a ggml_op_desc string (unary and GLU ops by their own name). */
int rec_op_from_desc(const char *s);
/* Reads one line of any length into *buf (grown as needed); false at EOF. */
bool rec_read_line(gzFile f, char **buf, size_t *cap);

typedef struct tinfo {
    const char *name;
    const char *view_src;   /* NULL when not a view */
    json_t *src;            /* array of names */
    bool leaf;
} tinfo;

typedef struct resolver {
    const tinfo *ti;
    ggfit_gt *t;
    json_t *by_name;        /* name -> array of indices, ascending */
    int32_t *n_uses;        /* consumers resolved so far */
    int32_t *seg;           /* first index of the node's depth-first segment */
} resolver;

/* Resolves tensor i's sources and view source (r->t[i]) from their names. */
void rec_resolve_tensor(resolver *r, size_t i);

#endif
