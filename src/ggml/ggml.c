/*
 * ggml.c - see ggml.h. Shapes, strides and view rules are ggml's
 * (ggml/src/ggml.c), restated for the ops llama.cpp's graphs use.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml/ggml.h"
#include "gguf/gguf.h"

void gg_init(gg_graph *g)
{
    memset(g, 0, sizeof *g);
}

void gg_reset(gg_graph *g)
{
    g->n = g->n_nodes = g->n_leafs = g->n_marked = g->n_roots = 0;
    g->oom = false;
}

static inline uint64_t nbytes(const gg_tensor *t);

void gg_finish(gg_graph *g)
{
    for (uint32_t i = 0; i < g->n; i++)
        g->t[i].size = nbytes(&g->t[i]);
    /* Without names each tensor's is NULL already (slot). */
    for (uint32_t i = 0; g->names && i < g->n; i++)
        g->t[i].name = g->name_buf[i];
}

const char *gg_tname(const gg_graph *g, int32_t t)
{
    return g->names ? g->name_buf[t] : "";
}

void gg_free(gg_graph *g)
{
    free(g->t);
    free(g->nodes);
    free(g->leafs);
    free(g->visited);
    free(g->stack);
    free(g->name_buf);
    free(g->roots);
    memset(g, 0, sizeof *g);
}

/* ggfit_type_block_bytes, ggfit_type_block_size and ggfit_row_bytes, read
 * straight from the table: the graph code asks for every tensor. */
static inline uint64_t type_size(uint32_t type)
{
    return type < GGFIT_TYPE_COUNT ? ggfit__types[type].bytes : 0;
}

static inline uint32_t block_size(uint32_t type)
{
    return type < GGFIT_TYPE_COUNT ? ggfit__types[type].blck : 0;
}

static inline uint64_t row_bytes(uint32_t type, uint64_t n)
{
    uint32_t blck = block_size(type);
    if (blck == 1)
        return n * ggfit__types[type].bytes;
    if (blck == 0 || n % blck != 0)
        return 0;
    return n / blck * ggfit__types[type].bytes;
}

/* ggml_nbytes: the first element's bytes (a block's when quantized) plus
 * every dimension's stride past it; 0 for an empty tensor. */
static inline uint64_t nbytes(const gg_tensor *t)
{
    if (t->ne[0] <= 0 || t->ne[1] <= 0 || t->ne[2] <= 0 || t->ne[3] <= 0)
        return 0;
    uint32_t blck = block_size(t->type);
    uint64_t n = (uint64_t)(t->ne[1] - 1) * t->nb[1] + (uint64_t)(t->ne[2] - 1) * t->nb[2] +
                 (uint64_t)(t->ne[3] - 1) * t->nb[3];
    if (blck == 1)
        return n + type_size(t->type) + (uint64_t)(t->ne[0] - 1) * t->nb[0];
    return n + (uint64_t)t->ne[0] * t->nb[0] / blck;
}

uint64_t gg_nbytes(const gg_graph *g, int32_t i)
{
    return nbytes(&g->t[i]);
}

bool gg_is_contiguous(const gg_graph *g, int32_t i)
{
    const gg_tensor *t = &g->t[i];
    uint64_t next = type_size(t->type);
    if (t->nb[0] != next)
        return false;
    next = row_bytes(t->type, (uint64_t)t->ne[0]);
    for (int d = 1; d < 4; d++) {
        if (t->ne[d] != 1 && t->nb[d] != next)
            return false;
        next *= (uint64_t)t->ne[d];
    }
    return true;
}

static bool grow(gg_graph *g, uint32_t cap)
{
    gg_tensor *t = ggfit__realloc(g->t, (size_t)cap * sizeof *t);
    if (!t)
        return false;
    g->t = t;
    if (g->names) {
        char (*nb)[GG_NAME] = ggfit__realloc(g->name_buf, (size_t)cap * sizeof *nb);
        if (!nb)
            return false;
        g->name_buf = nb;
    }
    g->cap = cap;
    return true;
}

bool gg_reserve(gg_graph *g, uint32_t n)
{
    return n <= g->cap || grow(g, n);
}

/* Room for one more tensor, which has no view, buffer, op or sources; its
 * shape and strides are its creator's to set (gg_new, view_of's callers),
 * the rest is set here field by field, cheaper than the whole struct. On
 * failure the graph is marked and tensor 0 (a scratch slot) is returned so
 * that builders need not check each call. */
_Static_assert((sizeof(void *) != 8 || sizeof(gg_tensor) == 168) && GGFIT_GALLOC_MAX_SRC == 10,
               "slot() sets every field of a tensor but ne and nb: a new one needs a line");
static bool slot_room(gg_graph *g)
{
    if (g->n == g->cap && !grow(g, g->cap ? g->cap * 2 : 1024))
        return false;
    /* names turned on after a build */
    return !g->names || g->name_buf ||
           (g->name_buf = ggfit__calloc(g->cap, sizeof *g->name_buf)) != NULL;
}

/* Inline in its few callers; the rare work (growing, names) is slot_room's. */
static inline int32_t slot(gg_graph *g)
{
    if ((g->n == g->cap || g->names) && !slot_room(g)) {
        g->oom = true;
        return 0;
    }
    if (g->names)
        g->name_buf[g->n][0] = '\0';
    gg_tensor *t = &g->t[g->n];
    t->name = NULL;
    t->size = 0;
    t->view_offs = 0;
    t->weight = NULL;
    for (int s = 0; s < GGFIT_GALLOC_MAX_SRC; s++)
        t->src[s] = -1;
    t->view_src = -1;
    t->il = -1;
    t->pin_il = -1;
    t->type = 0;
    t->flags = 0;
    t->unsupported = 0;
    t->buft = -1;
    t->backend = -1;
    t->n_src = 0;
    t->op = GGFIT_OP_NONE;
    t->weights = false;
    t->tied = false;
    t->dup = false;
    return (int32_t)g->n++;
}

static void set_contiguous(gg_tensor *t)
{
    t->nb[0] = type_size(t->type);
    t->nb[1] = row_bytes(t->type, (uint64_t)t->ne[0]);
    for (int d = 2; d < 4; d++)
        t->nb[d] = t->nb[d - 1] * (uint64_t)t->ne[d - 1];
}

/* gg_new, inline in the ops' constructors. */
static inline int32_t new_tensor(gg_graph *g, uint32_t type, int n_dims, const int64_t *ne)
{
    int32_t i = slot(g);
    gg_tensor *t = &g->t[i];
    t->type = type;
    for (int d = 0; d < 4; d++)
        t->ne[d] = d < n_dims ? ne[d] : 1;
    set_contiguous(t);
    return i;
}

int32_t gg_new(gg_graph *g, uint32_t type, int n_dims, const int64_t *ne)
{
    return new_tensor(g, type, n_dims, ne);
}

int32_t gg_new_1d(gg_graph *g, uint32_t type, int64_t ne0)
{
    return gg_new(g, type, 1, &ne0);
}

int32_t gg_new_2d(gg_graph *g, uint32_t type, int64_t ne0, int64_t ne1)
{
    int64_t ne[2] = { ne0, ne1 };
    return gg_new(g, type, 2, ne);
}

int32_t gg_new_4d(gg_graph *g, uint32_t type, int64_t ne0, int64_t ne1, int64_t ne2,
                  int64_t ne3)
{
    int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return gg_new(g, type, 4, ne);
}

void gg_name_fmt(gg_graph *g, int32_t t, const char *fmt, ...)
{
    if (!g->names)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->name_buf[t], GG_NAME, fmt, ap);
    va_end(ap);
}

void gg_cb(gg_graph *g, int32_t t, const char *name, int il)
{
    if (!g->names)
        return;
    if (il >= 0)
        gg_name(g, t, "%s-%d", name, il);
    else
        gg_name(g, t, "%s", name);
}

int32_t gg_input(gg_graph *g, int32_t t, const char *name)
{
    g->t[t].flags |= GGFIT_TF_INPUT;
    if (name)
        gg_name(g, t, "%s", name);
    return t;
}

int32_t gg_memory(gg_graph *g, const ggfit_tensor_info *w, const char *name, uint32_t type,
                  int n_dims, const int64_t *ne, int32_t buft, bool weights)
{
    int32_t i = gg_new(g, type, n_dims, ne);
    gg_tensor *t = &g->t[i];
    if (g->names)
        snprintf(g->name_buf[i], GG_NAME, "%s", name);
    t->buft = buft;
    t->weights = weights;
    t->weight = w;
    return i;
}

int32_t gg_weight(gg_graph *g, const ggfit_tensor_info *w, int32_t buft)
{
    int32_t i = slot(g);
    gg_tensor *t = &g->t[i];
    t->type = w->type;
    memcpy(t->ne, w->ne, sizeof t->ne);   /* the reader sets unused ones to 1 */
    set_contiguous(t);
    if (g->names)
        snprintf(g->name_buf[i], GG_NAME, "%s", w->name);
    t->buft = (int16_t)buft;
    t->weights = true;
    t->weight = w;
    return i;
}

/* A result tensor of op with its sources. */
static int32_t result(gg_graph *g, uint8_t op, uint32_t type, int n_dims, const int64_t *ne,
                      int n_src, const int32_t *src)
{
    int32_t i = new_tensor(g, type, n_dims, ne);
    gg_tensor *t = &g->t[i];
    t->op = op;
    t->n_src = (uint8_t)n_src;
    for (int s = 0; s < n_src; s++)
        t->src[s] = src[s];
    return i;
}

int32_t gg_op_shape(gg_graph *g, uint8_t op, uint32_t type, int n_dims, const int64_t *ne,
                    int n_src, const int32_t *src)
{
    return result(g, op, type, n_dims, ne, n_src, src);
}

/* A tensor sharing a's memory (ggml_new_tensor_impl with a view_src). */
static int32_t view_of(gg_graph *g, int32_t a, uint8_t op, uint64_t offs)
{
    int32_t i = slot(g);
    gg_tensor *t = &g->t[i], *s = &g->t[a];
    t->type = s->type;
    t->op = op;
    t->view_src = s->view_src >= 0 ? s->view_src : a;
    t->view_offs = (s->view_src >= 0 ? s->view_offs : 0) + offs;
    t->src[0] = a;
    t->n_src = 1;
    return i;
}

int32_t gg_get_rows(gg_graph *g, int32_t a, int32_t rows)
{
    const gg_tensor *ta = &g->t[a], *tr = &g->t[rows];
    int64_t ne[4] = { ta->ne[0], tr->ne[0], tr->ne[1], tr->ne[2] };
    int32_t src[2] = { a, rows };
    uint32_t type = ta->type == GGFIT_TYPE_I32 ? GGFIT_TYPE_I32 : GGFIT_TYPE_F32;
    return result(g, GGFIT_OP_GET_ROWS, type, 4, ne, 2, src);
}

int32_t gg_mul_mat(gg_graph *g, int32_t a, int32_t b)
{
    const gg_tensor *ta = &g->t[a], *tb = &g->t[b];
    int64_t ne[4] = { ta->ne[1], tb->ne[1], tb->ne[2], tb->ne[3] };
    int32_t src[2] = { a, b };
    return result(g, GGFIT_OP_MUL_MAT, GGFIT_TYPE_F32, 4, ne, 2, src);
}

int32_t gg_mul_mat_id(gg_graph *g, int32_t as, int32_t b, int32_t ids)
{
    const gg_tensor *ta = &g->t[as], *tb = &g->t[b], *ti = &g->t[ids];
    int64_t ne[4] = { ta->ne[1], ti->ne[0], tb->ne[2], 1 };
    int32_t src[3] = { as, b, ids };
    return result(g, GGFIT_OP_MUL_MAT_ID, GGFIT_TYPE_F32, 4, ne, 3, src);
}

static int32_t same_shape(gg_graph *g, uint8_t op, int32_t a, int n_src, const int32_t *src)
{
    const gg_tensor *ta = &g->t[a];
    int64_t ne[4] = { ta->ne[0], ta->ne[1], ta->ne[2], ta->ne[3] };
    return result(g, op, ta->type, 4, ne, n_src, src);
}

int32_t gg_rms_norm(gg_graph *g, int32_t a)
{
    return same_shape(g, GGFIT_OP_RMS_NORM, a, 1, &a);
}

int32_t gg_norm(gg_graph *g, int32_t a)
{
    return same_shape(g, GGFIT_OP_NORM, a, 1, &a);
}

int32_t gg_unary_op(gg_graph *g, uint8_t op, int32_t a)
{
    return same_shape(g, op, a, 1, &a);
}

int32_t gg_binary(gg_graph *g, uint8_t op, int32_t a, int32_t b)
{
    int32_t src[2] = { a, b };
    return same_shape(g, op, a, 2, src);
}

int32_t gg_scale(gg_graph *g, int32_t a)
{
    return same_shape(g, GGFIT_OP_SCALE, a, 1, &a);
}

int32_t gg_rope(gg_graph *g, int32_t a, int32_t pos, int32_t freqs)
{
    int32_t src[3] = { a, pos, freqs };
    return same_shape(g, GGFIT_OP_ROPE, a, freqs >= 0 ? 3 : 2, src);
}

int32_t gg_glu_split(gg_graph *g, int32_t a, int32_t b)
{
    int32_t src[2] = { a, b };
    return same_shape(g, GGFIT_OP_GLU, a, 2, src);
}

int32_t gg_cont(gg_graph *g, int32_t a)
{
    return same_shape(g, GGFIT_OP_CONT, a, 1, &a);
}

int32_t gg_cont_shape(gg_graph *g, int32_t a, int n_dims, const int64_t *ne)
{
    return result(g, GGFIT_OP_CONT, g->t[a].type, n_dims, ne, 1, &a);
}

int32_t gg_cpy_type(gg_graph *g, int32_t a, uint32_t type)
{
    const gg_tensor *ta = &g->t[a];
    int64_t ne[4] = { ta->ne[0], ta->ne[1], ta->ne[2], ta->ne[3] };
    return result(g, GGFIT_OP_CPY, type, 4, ne, 1, &a);
}

int32_t gg_set_rows(gg_graph *g, int32_t dst, int32_t src, int32_t rows)
{
    int32_t i = view_of(g, dst, GGFIT_OP_SET_ROWS, 0);
    gg_tensor *t = &g->t[i], *d = &g->t[dst];
    memcpy(t->ne, d->ne, sizeof t->ne);
    memcpy(t->nb, d->nb, sizeof t->nb);
    t->src[0] = src;
    t->src[1] = rows;
    t->src[2] = dst;   /* ggml keeps the destination last */
    t->n_src = 3;
    gg_name(g, i, "%s (view)", gg_tname(g, dst));
    return i;
}

int32_t gg_soft_max(gg_graph *g, int32_t a, int32_t mask, int32_t sinks)
{
    int32_t src[3] = { a, mask, sinks };
    return same_shape(g, GGFIT_OP_SOFT_MAX, a, sinks >= 0 ? 3 : mask >= 0 ? 2 : 1, src);
}

int32_t gg_flash_attn(gg_graph *g, int32_t q, int32_t k, int32_t v, int32_t mask,
                      int32_t sinks)
{
    const gg_tensor *tq = &g->t[q], *tv = &g->t[v];
    int64_t ne[4] = { tv->ne[0], tq->ne[2], tq->ne[1], tq->ne[3] };
    int32_t src[5] = { q, k, v, mask, sinks };
    return result(g, GGFIT_OP_FLASH_ATTN_EXT, GGFIT_TYPE_F32, 4, ne, sinks >= 0 ? 5 : 4, src);
}

/* ggml_argsort_top_k: a full descending argsort, viewed down to k. */
int32_t gg_argsort_top_k(gg_graph *g, int32_t a, int64_t k)
{
    const gg_tensor *ta = &g->t[a];
    int64_t ne[4] = { ta->ne[0], ta->ne[1], ta->ne[2], ta->ne[3] };
    int32_t sorted = result(g, GGFIT_OP_ARGSORT, GGFIT_TYPE_I32, 4, ne, 1, &a);
    const gg_tensor *ts = &g->t[sorted];
    int64_t vne[4] = { k, ts->ne[1], ts->ne[2], ts->ne[3] };
    uint64_t nb[3] = { ts->nb[1], ts->nb[2], ts->nb[3] };
    return gg_view(g, sorted, 4, vne, nb, 0);
}

int32_t gg_sum_rows(gg_graph *g, int32_t a)
{
    const gg_tensor *ta = &g->t[a];
    int64_t ne[4] = { 1, ta->ne[1], ta->ne[2], ta->ne[3] };
    return result(g, GGFIT_OP_SUM_ROWS, ta->type, 4, ne, 1, &a);
}

/* ggml_repeat: a tiled to b's shape. */
int32_t gg_repeat(gg_graph *g, int32_t a, int32_t b)
{
    const gg_tensor *tb = &g->t[b];
    int64_t ne[4] = { tb->ne[0], tb->ne[1], tb->ne[2], tb->ne[3] };
    return result(g, GGFIT_OP_REPEAT, g->t[a].type, 4, ne, 1, &a);
}

/* ggml_repeat_4d: a tiled to the shape given. */
int32_t gg_repeat_4d(gg_graph *g, int32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return result(g, GGFIT_OP_REPEAT, g->t[a].type, 4, ne, 1, &a);
}

int32_t gg_add_id(gg_graph *g, int32_t a, int32_t b, int32_t ids)
{
    int32_t src[3] = { a, b, ids };
    return same_shape(g, GGFIT_OP_ADD_ID, a, 3, src);
}

/* ---- views ---------------------------------------------------------------- */

int32_t gg_reshape(gg_graph *g, int32_t a, int n_dims, const int64_t *ne)
{
    int32_t i = view_of(g, a, GGFIT_OP_RESHAPE, 0);
    gg_tensor *t = &g->t[i];
    for (int d = 0; d < 4; d++)
        t->ne[d] = d < n_dims ? ne[d] : 1;
    set_contiguous(t);
    gg_name(g, i, "%s (reshaped)", gg_tname(g, a));
    return i;
}

int32_t gg_view(gg_graph *g, int32_t a, int n_dims, const int64_t *ne, const uint64_t *nb,
                uint64_t offs)
{
    int32_t i = view_of(g, a, GGFIT_OP_VIEW, offs);
    gg_tensor *t = &g->t[i];
    for (int d = 0; d < 4; d++)
        t->ne[d] = d < n_dims ? ne[d] : 1;
    t->nb[0] = type_size(t->type);
    t->nb[1] = n_dims > 1 ? nb[0] : row_bytes(t->type, (uint64_t)t->ne[0]);
    for (int d = 2; d < 4; d++)
        t->nb[d] = d < n_dims ? nb[d - 1] : t->nb[d - 1] * (uint64_t)t->ne[d - 1];
    gg_name(g, i, "%s (view)", gg_tname(g, a));
    return i;
}

int32_t gg_permute(gg_graph *g, int32_t a, int ax0, int ax1, int ax2, int ax3)
{
    int32_t i = view_of(g, a, GGFIT_OP_PERMUTE, 0);
    gg_tensor *t = &g->t[i];
    const gg_tensor *s = &g->t[a];
    int axis[4] = { ax0, ax1, ax2, ax3 };
    /* Axes that are no permutation (ggml asserts) leave zeros. */
    memset(t->ne, 0, sizeof t->ne);
    memset(t->nb, 0, sizeof t->nb);
    for (int d = 0; d < 4; d++) {
        t->ne[axis[d]] = s->ne[d];
        t->nb[axis[d]] = s->nb[d];
    }
    gg_name(g, i, "%s (permuted)", gg_tname(g, a));
    return i;
}

int32_t gg_transpose(gg_graph *g, int32_t a)
{
    int32_t i = gg_permute(g, a, 1, 0, 2, 3);
    g->t[i].op = GGFIT_OP_TRANSPOSE;
    gg_name(g, i, "%s (transposed)", gg_tname(g, a));
    return i;
}

/* ---- expansion ------------------------------------------------------------ */

/* Appends t to a list, which holds at most one entry per tensor. */
static void push(gg_graph *g, int32_t **list, uint32_t *n, uint32_t *cap, int32_t t)
{
    if (*n == *cap) {
        uint32_t c = *cap < g->cap ? g->cap : *cap + 1024;
        int32_t *l = ggfit__realloc(*list, (size_t)c * sizeof *l);
        if (!l) {
            g->oom = true;
            return;
        }
        *list = l;
        *cap = c;
    }
    (*list)[(*n)++] = t;
}

/* A tensor whose sources the visit is going through: the next one to
 * look at, whether it was reached from a computed tensor, and whether it
 * had been visited before (then only sources not yet computed are). */
typedef struct gg_frame {
    int32_t t;
    uint8_t next;
    bool compute, again;
} gg_frame;

/* After t's sources: t (x) joins the leafs (no op) or the nodes. */
static inline void listed(gg_graph *g, int32_t t, const gg_tensor *x)
{
    if (x->op == GGFIT_OP_NONE) {
        if (g->names && !g->name_buf[t][0])
            gg_name(g, t, "leaf_%u", g->n_leafs);
        if (g->n_leafs < g->cap_leafs)
            g->leafs[g->n_leafs++] = t;
        else
            push(g, &g->leafs, &g->n_leafs, &g->cap_leafs, t);
    } else {
        if (g->names && !g->name_buf[t][0])
            gg_name(g, t, "node_%u", g->n_nodes);
        if (g->n_nodes < g->cap_nodes)
            g->nodes[g->n_nodes++] = t;
        else
            push(g, &g->nodes, &g->n_nodes, &g->cap_nodes, t);
    }
}

/* ggml's visit_parents from root, without recursion (the chain of sources
 * is as deep as the graph). A tensor reached, from a computed one when
 * compute, is marked computed if it has an op. Seen for the first time, it
 * has its sources visited left to right and is then listed; seen before,
 * those of its sources not yet computed are visited again when compute.
 * A visit with compute leaves every tensor with an op that it reaches
 * marked computed, and sources never change between expansions (gg_reexpand
 * clears the marks), so a tensor marked computed and not on the stack has
 * nothing left to mark: compute skips it whole, as ggml's walk of it would
 * change nothing. The stack holds the tensors whose sources are being gone
 * through, each at most once (no tensor is its own source); it grows as
 * needed (a dozen deep in the usual graphs). False when out of memory. */
static bool visit(gg_graph *g, int32_t root, bool compute)
{
    gg_tensor *ts = g->t;
    uint8_t *visited = g->visited;
    gg_frame *stack = g->stack;
    uint32_t depth = 0;
    int32_t t = root;
    gg_tensor *x = &ts[t];
    if (compute && (x->flags & GGFIT_TF_COMPUTE))
        return true;
    if (compute && x->op != GGFIT_OP_NONE)
        x->flags |= GGFIT_TF_COMPUTE;
    bool again = visited[t];
    if (again && (!compute || x->n_src == 0))
        return true;
    visited[t] = 1;
    unsigned next = 0;
    for (;;) {
        if (next < x->n_src) {
            int32_t s = x->src[next++];
            if (s < 0)
                continue;
            gg_tensor *y = &ts[s];
            if (compute && (y->flags & GGFIT_TF_COMPUTE))
                continue;
            if (compute && y->op != GGFIT_OP_NONE)
                y->flags |= GGFIT_TF_COMPUTE;
            bool seen = visited[s];
            if (seen && (!compute || y->n_src == 0))
                continue;
            visited[s] = 1;
            /* A leaf (most are weights) is listed at once; the rest go down
             * into their sources, which are reached as t's were. */
            if (y->n_src == 0 && y->op == GGFIT_OP_NONE && !g->names &&
                g->n_leafs < g->cap_leafs) {
                g->leafs[g->n_leafs++] = s;
                continue;
            }
            if (depth == g->cap_stack) {
                uint32_t cap = g->cap_stack ? 2 * g->cap_stack : 64;
                gg_frame *st = ggfit__realloc(stack, (size_t)cap * sizeof *st);
                if (!st)
                    return false;
                g->stack = stack = st;
                g->cap_stack = cap;
            }
            stack[depth++] = (gg_frame){ .t = t, .next = (uint8_t)next, .compute = compute,
                                         .again = again };
            t = s;
            x = y;
            next = 0;
            again = seen;
            continue;
        }
        if (!again)
            listed(g, t, x);
        if (!depth)
            return true;
        gg_frame f = stack[--depth];
        t = f.t;
        x = &ts[t];
        next = f.next;
        compute = f.compute;
        again = f.again;
    }
}

static void expand(gg_graph *g, int32_t t, bool compute)
{
    if (g->oom)
        return;
    /* Visited marks cover every tensor; those created since the last
     * expansion start unmarked. */
    if (g->cap_marks < g->cap) {
        uint8_t *v = ggfit__realloc(g->visited, g->cap);
        if (!v) {
            g->oom = true;
            return;
        }
        g->visited = v;
        g->cap_marks = g->cap;
    }
    if (g->n_marked < g->n) {
        memset(g->visited + g->n_marked, 0, g->n - g->n_marked);
        g->n_marked = g->n;
    }
    if (g->n_roots == g->cap_roots) {
        uint32_t cap = g->cap_roots ? 2 * g->cap_roots : 256;
        uint32_t *r = ggfit__realloc(g->roots, (size_t)cap * sizeof *r);
        if (!r) {
            g->oom = true;
            return;
        }
        g->roots = r;
        g->cap_roots = cap;
    }
    g->roots[g->n_roots++] = (uint32_t)t << 1 | compute;
    if (!visit(g, t, compute))
        g->oom = true;
}

bool gg_reexpand(gg_graph *g)
{
    uint32_t n_roots = g->n_roots;
    g->n_nodes = g->n_leafs = g->n_roots = g->n_marked = 0;
    for (uint32_t i = 0; i < g->n; i++)
        g->t[i].flags &= ~(uint32_t)GGFIT_TF_COMPUTE;   /* visit sets them again */
    for (uint32_t k = 0; k < n_roots && !g->oom; k++)
        expand(g, (int32_t)(g->roots[k] >> 1), g->roots[k] & 1);
    return !g->oom;
}

void gg_expand(gg_graph *g, int32_t t)
{
    expand(g, t, true);
}

void gg_expand_no_compute(gg_graph *g, int32_t t)
{
    expand(g, t, false);
}

/* ---- ops of recurrent and hybrid models ------------------------------------ */

/* ggml_view_tensor with an op: in-place ops and ggml_cpy return a view of
 * all of a tensor's memory, with its shape and strides. */
static int32_t view_whole(gg_graph *g, int32_t a, uint8_t op)
{
    int32_t i = view_of(g, a, op, 0);
    gg_tensor *t = &g->t[i];
    const gg_tensor *s = &g->t[a];
    memcpy(t->ne, s->ne, sizeof t->ne);
    memcpy(t->nb, s->nb, sizeof t->nb);
    gg_name(g, i, "%s (view)", gg_tname(g, a));
    return i;
}

int32_t gg_scale_inplace(gg_graph *g, int32_t a)
{
    return view_whole(g, a, GGFIT_OP_SCALE);
}

/* ggml_clamp works in place: its result is a view of a. */
int32_t gg_clamp(gg_graph *g, int32_t a)
{
    return view_whole(g, a, GGFIT_OP_CLAMP);
}

/* ggml_add_inplace: a + b written over a, its result a view of a. */
int32_t gg_add_inplace(gg_graph *g, int32_t a, int32_t b)
{
    int32_t i = view_whole(g, a, GGFIT_OP_ADD);
    gg_tensor *t = &g->t[i];
    t->src[0] = a;
    t->src[1] = b;
    t->n_src = 2;
    return i;
}

int32_t gg_cpy(gg_graph *g, int32_t a, int32_t b)
{
    int32_t i = view_whole(g, b, GGFIT_OP_CPY);
    gg_tensor *t = &g->t[i];
    /* Names are taken now: an unnamed source is named only when visited. */
    if (gg_tname(g, b)[0])
        gg_name(g, i, "%s (copy of %s)", gg_tname(g, b), gg_tname(g, a));
    else
        gg_name(g, i, "%s (copy)", gg_tname(g, a));
    t->src[0] = a;
    t->src[1] = b;
    t->n_src = 2;
    return i;
}

int32_t gg_concat(gg_graph *g, int32_t a, int32_t b, int dim)
{
    const gg_tensor *ta = &g->t[a], *tb = &g->t[b];
    int64_t ne[4];
    for (int d = 0; d < 4; d++)
        ne[d] = ta->ne[d] + (d == dim ? tb->ne[d] : 0);
    int32_t src[2] = { a, b };
    return result(g, GGFIT_OP_CONCAT, ta->type, 4, ne, 2, src);
}

int32_t gg_ssm_conv(gg_graph *g, int32_t sx, int32_t c)
{
    const gg_tensor *ts = &g->t[sx], *tc = &g->t[c];
    int64_t ne[3] = { tc->ne[1], ts->ne[0] - tc->ne[0] + 1, ts->ne[2] };
    int32_t src[2] = { sx, c };
    return result(g, GGFIT_OP_SSM_CONV, GGFIT_TYPE_F32, 3, ne, 2, src);
}

/* The outputs y and the final states, concatenated into one row. */
int32_t gg_ssm_scan(gg_graph *g, int32_t s, int32_t x, int32_t dt, int32_t A, int32_t B,
                    int32_t C, int32_t ids)
{
    return gg_ssm_scan_k(g, s, x, dt, A, B, C, ids, 1);
}

/* The outputs, then K states a sequence (the last K tokens' states). */
int32_t gg_ssm_scan_k(gg_graph *g, int32_t s, int32_t x, int32_t dt, int32_t A, int32_t B,
                      int32_t C, int32_t ids, int64_t K)
{
    const gg_tensor *ts = &g->t[s], *tx = &g->t[x];
    int64_t n = tx->ne[0] * tx->ne[1] * tx->ne[2] * tx->ne[3] +
                K * ts->ne[0] * ts->ne[1] * ts->ne[2] * g->t[ids].ne[0];
    int32_t src[7] = { s, x, dt, A, B, C, ids };
    return result(g, GGFIT_OP_SSM_SCAN, GGFIT_TYPE_F32, 1, &n, 7, src);
}

/* Rows: the outputs of every token, then K snapshots of the states. */
int32_t gg_gated_delta_net(gg_graph *g, int32_t q, int32_t k, int32_t v, int32_t gate,
                           int32_t beta, int32_t state, int64_t K)
{
    const gg_tensor *tv = &g->t[v];
    int64_t s_v = tv->ne[0], n_seqs = tv->ne[3];
    int64_t ne[2] = { s_v * tv->ne[1], tv->ne[2] * n_seqs + K * s_v * n_seqs };
    int32_t src[6] = { q, k, v, gate, beta, state };
    return result(g, GGFIT_OP_GATED_DELTA_NET, GGFIT_TYPE_F32, 2, ne, 6, src);
}
