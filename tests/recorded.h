/*
 * recorded.h - the graphs llama.cpp recorded (data/graphs), read once for
 * the allocator and scheduler tests.
 *
 * Each line of data/graphs/<model>.jsonl.gz is one JSON object: the case
 * (model and llama.cpp arguments), the backends with the bytes ggml-alloc
 * reserved on each, and the tensors, leafs first, each naming its sources.
 * The reader turns a line into a rec_graph: ggml-alloc's tensors with their
 * sources and view sources resolved to indices (llama.cpp's names repeat:
 * "norm-0", " (view)"; the rules are in recorded.c), the names beside them.
 */
#ifndef GGFIT_TEST_RECORDED_H
#define GGFIT_TEST_RECORDED_H

#include <jansson.h>

#include "ggml/galloc.h"
#include "test_util.h"

#define REC_MAX_BACKENDS 8

typedef struct rec_backend {
    const char *name;     /* "CUDA0", "CPU", "RPC0[host:port]" */
    const char *buft;     /* its buffer type's name */
    int buft_index;       /* buffer types numbered in order of first use */
    uint64_t alignment;   /* bytes */
    uint64_t size;        /* bytes ggml-alloc reserved: the figure to match */
} rec_backend;

/* One recorded graph. The strings point into root; rec_graph_free frees all. */
typedef struct rec_graph {
    json_t *root;         /* the parsed line */
    ggfit_gt *t;          /* n tensors, n_leafs leafs first, as ggml-alloc got
                             them: backend, flags, sources, view_src set */
    const char **name;    /* per tensor; names repeat */
    size_t n, n_leafs;
    rec_backend backend[REC_MAX_BACKENDS];
    int n_backends, n_bufts;
    char where[300];      /* "<file>:<line>" */
    char label[160];      /* the case: "<model> <args...>" */
    json_t *by_name;      /* name -> ascending indices; see rec_named */
} rec_graph;

/* Index of the k-th tensor (from 0, ascending) named name, or -1 past the last. */
int32_t rec_named(const rec_graph *g, const char *name, size_t k);
/* Whether llama.cpp ran the case with argument arg (as "-ngl"). */
bool rec_has_arg(const rec_graph *g, const char *arg);
void rec_graph_free(rec_graph *g);

/* The graphs of every *.jsonl.gz in GGFIT_GRAPHS (default data/graphs), in
 * file name order. rec_open fails the test when there are none. */
typedef struct rec_reader rec_reader;
rec_reader *rec_open(void);
/* Parses the next graph into *g (the caller frees it with rec_graph_free);
 * false after the last. */
bool rec_next(rec_reader *rd, rec_graph *g);
void rec_close(rec_reader *rd);

/* A monotonic clock in microseconds, to time the replays. */
double rec_now_us(void);

#endif
