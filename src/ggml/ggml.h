/*
 * ggml.h - llama.cpp's compute graph, rebuilt from shapes alone.
 *
 * llama.cpp sizes compute buffers by building the graph of one prompt
 * ubatch with ggml and handing it to the scheduler and ggml-alloc. To get
 * the same bytes, ggfit builds the same graph: the same tensors, with the
 * same shapes, strides, views and sources, expanded into ggml's node and
 * leaf order (a depth-first visit of sources, left to right, at each
 * ggml_build_forward_expand). This file is that small subset of ggml: no
 * data, only the facts the scheduler and the allocator use.
 */
#ifndef GGFIT_GGML_H
#define GGFIT_GGML_H

#include "ggml/galloc.h"
#include "base/base.h"
#include "ggml/sched.h"

#define GG_NAME 64

/* A tensor is the scheduler's (sched.h), which has room for the builder's
 * strides, cache layer and pins; names live beside the tensors. */
typedef ggfit_st gg_tensor;

typedef struct gg_graph {
    gg_tensor *t;
    uint32_t n, cap;
    int32_t *nodes, *leafs;     /* expansion order */
    uint32_t n_nodes, n_leafs;
    uint32_t cap_nodes, cap_leafs;
    uint32_t *roots;            /* each expansion: root << 1 | compute */
    uint32_t n_roots, cap_roots;
    char (*name_buf)[GG_NAME];  /* with names: each tensor's, beside t */
    uint8_t *visited;
    struct gg_frame *stack;     /* the expansion's depth-first visit, */
    uint32_t cap_stack;         /* frames of room (it grows when full) */
    uint32_t n_marked;          /* tensors whose visited mark is set up */
    uint32_t cap_marks;         /* entries of visited */
    bool names;                 /* keep tensor names (debugging): formatting
                                   them costs more than the rest of a build */
    bool oom;                   /* an allocation failed; results are void */
} gg_graph;

void gg_init(gg_graph *g);
void gg_free(gg_graph *g);
/* Empties g for a new build, keeping its memory (and its names setting). */
void gg_reset(gg_graph *g);
/* Room for n tensors before the first grows the arrays: growing copies
 * them, touching fresh pages twice. Only a hint; false when out of memory. */
bool gg_reserve(gg_graph *g, uint32_t n);
/* Expands the graph again from its recorded roots, after sources were
 * changed: the lists come out as a build with those sources makes them, and
 * tensors no longer reached drop out. False when out of memory. */
bool gg_reexpand(gg_graph *g);
/* After the last tensor: every tensor's size, and its name pointer. */
void gg_finish(gg_graph *g);
/* Tensor t's name; "" without names. */
const char *gg_tname(const gg_graph *g, int32_t t);

/* New tensors. Shapes follow ggml's rules for each op. */
int32_t gg_new(gg_graph *g, uint32_t type, int n_dims, const int64_t *ne);
int32_t gg_new_1d(gg_graph *g, uint32_t type, int64_t ne0);
int32_t gg_new_2d(gg_graph *g, uint32_t type, int64_t ne0, int64_t ne1);
int32_t gg_new_4d(gg_graph *g, uint32_t type, int64_t ne0, int64_t ne1, int64_t ne2,
                  int64_t ne3);
/* An input (ggml_set_input) and a tensor that has memory already. */
int32_t gg_input(gg_graph *g, int32_t t, const char *name);
int32_t gg_memory(gg_graph *g, const ggfit_tensor_info *w, const char *name, uint32_t type,
                  int n_dims, const int64_t *ne, int32_t buft, bool weights);
/* gg_memory of model tensor w as the file has it (its name, type and
 * shape), in a weights buffer of type buft. */
int32_t gg_weight(gg_graph *g, const ggfit_tensor_info *w, int32_t buft);

/* Names tensor t from fmt, as snprintf; gg_name formats only when the
 * graph keeps names (its arguments are not evaluated otherwise). */
void gg_name_fmt(gg_graph *g, int32_t t, const char *fmt, ...) GGFIT_PRINTF(3, 4);
#define gg_name(g, t, ...) ((g)->names ? gg_name_fmt((g), (t), __VA_ARGS__) : (void)0)
/* llama.cpp's cb(): "<name>-<il>", or "<name>" for il < 0. */
void gg_cb(gg_graph *g, int32_t t, const char *name, int il);

int32_t gg_get_rows(gg_graph *g, int32_t a, int32_t rows);
int32_t gg_mul_mat(gg_graph *g, int32_t a, int32_t b);
int32_t gg_mul_mat_id(gg_graph *g, int32_t as, int32_t b, int32_t ids);
int32_t gg_rms_norm(gg_graph *g, int32_t a);
int32_t gg_norm(gg_graph *g, int32_t a);
int32_t gg_unary_op(gg_graph *g, uint8_t op, int32_t a);        /* same shape */
int32_t gg_binary(gg_graph *g, uint8_t op, int32_t a, int32_t b); /* ADD, MUL, DIV */
int32_t gg_scale(gg_graph *g, int32_t a);
int32_t gg_rope(gg_graph *g, int32_t a, int32_t pos, int32_t freqs);
int32_t gg_glu_split(gg_graph *g, int32_t a, int32_t b);
int32_t gg_cont(gg_graph *g, int32_t a);
int32_t gg_cont_shape(gg_graph *g, int32_t a, int n_dims, const int64_t *ne);
int32_t gg_cpy_type(gg_graph *g, int32_t a, uint32_t type);     /* ggml_cast */
int32_t gg_set_rows(gg_graph *g, int32_t dst, int32_t src, int32_t rows);
int32_t gg_soft_max(gg_graph *g, int32_t a, int32_t mask, int32_t sinks);
int32_t gg_flash_attn(gg_graph *g, int32_t q, int32_t k, int32_t v, int32_t mask,
                      int32_t sinks);
int32_t gg_argsort_top_k(gg_graph *g, int32_t a, int64_t k);
int32_t gg_sum_rows(gg_graph *g, int32_t a);
/* ggml_repeat: a tiled to b's shape. */
int32_t gg_repeat(gg_graph *g, int32_t a, int32_t b);
int32_t gg_repeat_4d(gg_graph *g, int32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* ggml_add_id: a plus the rows of b that ids picks (per-expert biases). */
int32_t gg_add_id(gg_graph *g, int32_t a, int32_t b, int32_t ids);
int32_t gg_op_shape(gg_graph *g, uint8_t op, uint32_t type, int n_dims, const int64_t *ne,
                    int n_src, const int32_t *src);

/* Views. */
int32_t gg_reshape(gg_graph *g, int32_t a, int n_dims, const int64_t *ne);
int32_t gg_view(gg_graph *g, int32_t a, int n_dims, const int64_t *ne, const uint64_t *nb,
                uint64_t offs);
int32_t gg_permute(gg_graph *g, int32_t a, int ax0, int ax1, int ax2, int ax3);
int32_t gg_transpose(gg_graph *g, int32_t a);

/* ggml_build_forward_expand: appends t and its unvisited sources. */
void gg_expand(gg_graph *g, int32_t t);
/* Expands t as a non-selected input of ggml_build_forward_select. */
void gg_expand_no_compute(gg_graph *g, int32_t t);

bool gg_is_contiguous(const gg_graph *g, int32_t t);
uint64_t gg_nbytes(const gg_graph *g, int32_t t);

/* Ops of recurrent and hybrid models. gg_scale_inplace and gg_cpy return
 * views (of a, and of the destination b), as ggml's in-place ops do. */
int32_t gg_scale_inplace(gg_graph *g, int32_t a);
int32_t gg_clamp(gg_graph *g, int32_t a);     /* in place, as ggml_clamp */
int32_t gg_add_inplace(gg_graph *g, int32_t a, int32_t b); /* ggml_add_inplace */
int32_t gg_cpy(gg_graph *g, int32_t a, int32_t b);
int32_t gg_concat(gg_graph *g, int32_t a, int32_t b, int dim);
int32_t gg_ssm_conv(gg_graph *g, int32_t sx, int32_t c);
int32_t gg_ssm_scan(gg_graph *g, int32_t s, int32_t x, int32_t dt, int32_t A, int32_t B,
                    int32_t C, int32_t ids);
int32_t gg_ssm_scan_k(gg_graph *g, int32_t s, int32_t x, int32_t dt, int32_t A, int32_t B,
                      int32_t C, int32_t ids, int64_t K);
int32_t gg_gated_delta_net(gg_graph *g, int32_t q, int32_t k, int32_t v, int32_t gate,
                           int32_t beta, int32_t state, int64_t K);

#endif
