/*
 * recorded.c - see recorded.h.
 */
#include <dirent.h>
#include <time.h>

#include <zlib.h>

#include "recorded.h"

/* ------------------------------------------------------------------------
 * ggml_op_desc strings -> ggfit_op (the library keeps no names)
 * ---------------------------------------------------------------------- */

static const char *const op_names[GGFIT_OP_COUNT] = {
    "NONE", "DUP", "ADD", "ADD_ID", "ADD1", "ACC", "SUB", "MUL", "DIV", "SQR",
    "SQRT", "LOG", "SIN", "COS", "SUM", "SUM_ROWS", "CUMSUM", "MEAN", "ARGMAX",
    "COUNT_EQUAL", "REPEAT", "REPEAT_BACK", "CONCAT", "SILU_BACK", "NORM",
    "RMS_NORM", "RMS_NORM_BACK", "GROUP_NORM", "L2_NORM", "MUL_MAT",
    "MUL_MAT_ID", "OUT_PROD", "SCALE", "SET", "CPY", "CONT", "RESHAPE", "VIEW",
    "PERMUTE", "TRANSPOSE", "GET_ROWS", "GET_ROWS_BACK", "SET_ROWS", "DIAG",
    "DIAG_MASK_INF", "DIAG_MASK_ZERO", "SOFT_MAX", "SOFT_MAX_BACK", "ROPE",
    "ROPE_BACK", "CLAMP", "CONV_TRANSPOSE_1D", "IM2COL", "IM2COL_BACK",
    "IM2COL_3D", "COL2IM_1D", "CONV_2D", "CONV_3D", "CONV_2D_DW",
    "CONV_TRANSPOSE_2D", "POOL_1D", "POOL_2D", "POOL_2D_BACK", "UPSCALE", "PAD",
    "PAD_REFLECT_1D", "ROLL", "ARANGE", "TIMESTEP_EMBEDDING", "ARGSORT",
    "TOP_K", "LEAKY_RELU", "TRI", "FILL", "FLASH_ATTN_EXT", "FLASH_ATTN_BACK",
    "SSM_CONV", "SSM_SCAN", "WIN_PART", "WIN_UNPART", "GET_REL_POS",
    "ADD_REL_POS", "RWKV_WKV6", "GATED_LINEAR_ATTN", "RWKV_WKV7", "SOLVE_TRI",
    "GATED_DELTA_NET", "LIGHTNING_INDEXER", "DSV4_HC_COMB", "DSV4_HC_PRE",
    "DSV4_HC_POST", "UNARY", "MAP_CUSTOM1", "MAP_CUSTOM2", "MAP_CUSTOM3",
    "CUSTOM", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK",
    "OPT_STEP_ADAMW", "OPT_STEP_SGD", "GLU",
};
_Static_assert(sizeof op_names / sizeof op_names[0] == GGFIT_OP_COUNT,
               "op_names must cover ggfit_op");

/* ggml_op_desc names a unary or GLU node by its sub-op. */
static const char *const unary_names[] = {
    "ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "SIGMOID", "GELU",
    "GELU_QUICK", "SILU", "HARDSWISH", "HARDSIGMOID", "EXP", "EXPM1",
    "SOFTPLUS", "GELU_ERF", "XIELU", "FLOOR", "CEIL", "ROUND", "TRUNC",
};
static const char *const glu_names[] = {
    "REGLU", "GEGLU", "SWIGLU", "SWIGLU_OAI", "GEGLU_ERF", "GEGLU_QUICK",
};

/* ggfit_op of a ggml_op_desc string (unary and GLU ops by their own name). */
static int op_from_desc(const char *s)
{
    for (int i = 0; i < GGFIT_OP_COUNT; i++)
        if (strcmp(op_names[i], s) == 0)
            return i;
    for (size_t i = 0; i < sizeof unary_names / sizeof unary_names[0]; i++)
        if (strcmp(unary_names[i], s) == 0)
            return GGFIT_OP_UNARY;
    for (size_t i = 0; i < sizeof glu_names / sizeof glu_names[0]; i++)
        if (strcmp(glu_names[i], s) == 0)
            return GGFIT_OP_GLU;
    return -1;
}

/* ------------------------------------------------------------------------
 * Names -> indices
 *
 * The dump names sources by tensor name, and llama.cpp's names repeat: the
 * RMS_NORM and the MUL after it are both "norm-0", a RESHAPE keeps its
 * source's name, every unnamed view is " (view)", and a MoE layer makes eight
 * identical "ffn_moe_weighted-0 (view)". So each source is resolved by the
 * rules below, in this order, which follow from how ggml orders a graph.
 *  1. A scheduler dependency view (op NONE, in the nodes, one source) is
 *     ggml_view_tensor(input): the input has its type and shape, and its
 *     root and offset; the nearest earlier such tensor, else the first later
 *     one (a split input can be a view placed further on).
 *  2. Fresh sources: ggml lists a node's sources before it in depth-first
 *     post-order, so a source first reached through this node ends right
 *     before it, and the one before ends right before that subtree. Walking
 *     back from the node, a tensor with the slot's name (and a plausible
 *     type, rule 4) is that slot's source.
 *  3. Other sources were reached earlier: of the earlier tensors with that
 *     name (and plausible, rule 4), the first one nobody consumed yet (views
 *     made and expanded in a row, consumed in the same order), else the
 *     latest.
 *  4. Plausible: a view's source has its root; index operands (GET_ROWS,
 *     SET_ROWS, ROPE, MUL_MAT_ID, ADD_ID, SSM_SCAN ids) are integers, and
 *     GET_ROWS rows match the result's shape.
 *  5. One source no rule can tell from the names, Mamba-2's x in x * D,
 *     is taken as llama.cpp's code builds it (mamba2_x below).
 * The root of a view (view_src) is the source that is it, or the root of
 * the source that is a view of it.
 * ---------------------------------------------------------------------- */

/* What the resolver reads beside the tensors. */
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

static bool is_int(uint32_t type)
{
    return type == GGFIT_TYPE_I32 || type == GGFIT_TYPE_I64;
}

/* Rule 4. x is the tensor already resolved for slot 1 (SSM_SCAN's x), or
 * NULL. */
static bool plausible(const resolver *r, size_t c, size_t i, size_t k, const ggfit_gt *x)
{
    const ggfit_gt *ct = &r->t[c], *t = &r->t[i];
    const tinfo *ci = &r->ti[c], *ti = &r->ti[i];
    if (ggfit__op_is_view(t->op) && k == 0 && ti->view_src)
        return ci->view_src ? strcmp(ci->view_src, ti->view_src) == 0
                            : strcmp(ci->name, ti->view_src) == 0;
    switch (t->op) {
    case GGFIT_OP_GET_ROWS:
        return k == 1 ? is_int(ct->type) && ct->ne[0] == t->ne[1] : ct->ne[0] == t->ne[0];
    case GGFIT_OP_SET_ROWS:
    case GGFIT_OP_ROPE:
        return k != 1 || is_int(ct->type);
    case GGFIT_OP_MUL_MAT_ID:
    case GGFIT_OP_ADD_ID:
        return k != 2 || is_int(ct->type);
    case GGFIT_OP_SSM_SCAN:
        if (k == 6)
            return is_int(ct->type) && (!x || ct->ne[0] == x->ne[3]);
        return !is_int(ct->type);
    default:
        return true;
    }
}

static bool same_shape(const ggfit_gt *a, const ggfit_gt *b)
{
    return a->type == b->type && memcmp(a->ne, b->ne, sizeof a->ne) == 0;
}

/* The latest non-view named name before i, else the first one. */
static int32_t root_by_name(const resolver *r, const char *name, size_t i)
{
    json_t *c = json_object_get(r->by_name, name);
    int32_t best = -1;
    for (size_t k = 0; k < json_array_size(c); k++) {
        size_t j = (size_t)json_integer_value(json_array_get(c, k));
        if (r->ti[j].view_src)
            continue;
        if (j < i || best < 0)
            best = (int32_t)j;
        if (j >= i)
            break;
    }
    return best;
}

/* Rule 1. */
static void resolve_dependency(resolver *r, size_t i)
{
    ggfit_gt *t = &r->t[i];
    const tinfo *ti = &r->ti[i];
    const char *name = json_string_value(json_array_get(ti->src, 0));
    json_t *c = json_object_get(r->by_name, name);
    bool of_root = strcmp(name, ti->view_src) == 0 && t->view_offs == 0;
    int32_t before = -1, after = -1, any = -1;
    for (size_t k = 0; k < json_array_size(c); k++) {
        size_t j = (size_t)json_integer_value(json_array_get(c, k));
        if (any < 0)
            any = (int32_t)j;
        bool match = same_shape(&r->t[j], t) &&
            (of_root ? !r->ti[j].view_src
                     : r->ti[j].view_src && strcmp(r->ti[j].view_src, ti->view_src) == 0 &&
                       r->t[j].view_offs == t->view_offs);
        if (!match)
            continue;
        if (j < i)
            before = (int32_t)j;
        else if (after < 0)
            after = (int32_t)j;
    }
    int32_t p = before >= 0 ? before : after >= 0 ? after : any;
    assert_true(p >= 0);
    t->src[0] = p;
    if (!r->ti[p].view_src)
        t->view_src = p;
    else if ((size_t)p < i)
        t->view_src = r->t[p].view_src;
    else
        t->view_src = root_by_name(r, ti->view_src, i);
    r->n_uses[p]++;
    r->seg[i] = (int32_t)i;
}

/* The one case the rules cannot decide from names: Mamba-2's skip
 * connection, y + x * D (llama.cpp src/models/mamba-base.cpp,
 * build_mamba2_layer: ggml_add(y, ggml_mul(x, ssm_d))). x and z are both
 * " (view)", same type and shape, both already consumed (x by SSM_SCAN, z by
 * its CONT); x is the view of the conv output after SILU, z a view of the
 * in_proj output. Returns x for the MUL's first source, or -1 when node i is
 * not that MUL. */
static int32_t mamba2_x(const resolver *r, size_t i, json_t *cands)
{
    const ggfit_gt *t = &r->t[i];
    const char *d = json_string_value(json_array_get(r->ti[i].src, 1));
    size_t n = d ? strlen(d) : 0;
    if (t->op != GGFIT_OP_MUL || n < 6 || strcmp(d + n - 6, ".ssm_d") != 0)
        return -1;
    int32_t best = -1;
    for (size_t m = 0; m < json_array_size(cands); m++) {
        size_t j = (size_t)json_integer_value(json_array_get(cands, m));
        if (j >= i)
            break;
        int32_t root = r->t[j].view_src;
        if (root >= 0 && r->t[root].op == GGFIT_OP_UNARY && same_shape(&r->t[j], t))
            best = (int32_t)j;
    }
    return best;
}

/* Resolves tensor i's sources and view source (r->t[i]) from their names. */
static void resolve_tensor(resolver *r, size_t i)
{
    ggfit_gt *t = &r->t[i];
    const tinfo *ti = &r->ti[i];
    size_t n_src = json_array_size(ti->src);
    if (!ti->leaf && t->op == GGFIT_OP_NONE && ti->view_src && n_src == 1) {
        resolve_dependency(r, i);
        return;
    }

    /* Rule 2, walking back from the last slot. */
    if (!ti->leaf) {
        int64_t pos = (int64_t)i - 1;
        for (size_t k = n_src; k-- > 0;) {
            const char *name = json_string_value(json_array_get(ti->src, k));
            if (pos >= 0 && !r->ti[pos].leaf && strcmp(r->ti[pos].name, name) == 0 &&
                plausible(r, (size_t)pos, i, k, NULL)) {
                t->src[k] = (int32_t)pos;
                pos = r->seg[pos] - 1;
            }
        }
        r->seg[i] = (int32_t)(pos + 1);
    }

    /* Rule 3 for the rest, in slot order; a tensor taken by rule 2 is not
     * a candidate for another slot of the node. */
    int32_t fresh[GGFIT_GALLOC_MAX_SRC];
    for (size_t k = 0; k < n_src; k++)
        fresh[k] = t->src[k];
    for (size_t k = 0; k < n_src; k++) {
        if (t->src[k] >= 0)
            continue;
        const char *name = json_string_value(json_array_get(ti->src, k));
        json_t *c = json_object_get(r->by_name, name);
        assert_non_null(c);
        const ggfit_gt *x = k > 1 && t->src[1] >= 0 ? &r->t[t->src[1]] : NULL;
        int32_t first_unused = -1, latest = -1, first_unused_p = -1, latest_p = -1;
        for (size_t m = 0; m < json_array_size(c); m++) {
            size_t j = (size_t)json_integer_value(json_array_get(c, m));
            if (j >= i)
                break;
            bool taken = false;
            for (size_t q = 0; q < n_src; q++)
                taken |= fresh[q] == (int32_t)j;
            if (taken)
                continue;
            bool p = plausible(r, j, i, k, x);
            latest = (int32_t)j;
            if (first_unused < 0 && r->n_uses[j] == 0)
                first_unused = (int32_t)j;
            if (p) {
                latest_p = (int32_t)j;
                if (first_unused_p < 0 && r->n_uses[j] == 0)
                    first_unused_p = (int32_t)j;
            }
        }
        int32_t conv_x = k == 0 ? mamba2_x(r, i, c) : -1;
        if (conv_x >= 0)
            t->src[k] = conv_x;
        else if (latest_p >= 0)
            t->src[k] = first_unused_p >= 0 ? first_unused_p : latest_p;
        else if (latest >= 0)
            t->src[k] = first_unused >= 0 ? first_unused : latest;
        else   /* only later tensors have this name */
            t->src[k] = (int32_t)json_integer_value(json_array_get(c, 0));
    }
    for (size_t k = 0; k < n_src; k++)
        r->n_uses[t->src[k]]++;

    if (ti->view_src) {
        for (size_t k = 0; k < n_src && t->view_src < 0; k++) {
            int32_t p = t->src[k];
            if (!r->ti[p].view_src && strcmp(r->ti[p].name, ti->view_src) == 0)
                t->view_src = p;
            else if (r->ti[p].view_src && strcmp(r->ti[p].view_src, ti->view_src) == 0)
                t->view_src = r->t[p].view_src;
        }
        if (t->view_src < 0)
            t->view_src = root_by_name(r, ti->view_src, i);
        assert_true(t->view_src >= 0);
    }
}

/* ------------------------------------------------------------------------
 * One line -> rec_graph
 * ---------------------------------------------------------------------- */

static void read_backends(json_t *backends, rec_graph *g)
{
    assert_true(json_is_array(backends));
    g->n_backends = (int)json_array_size(backends);
    assert_true(g->n_backends > 0 && g->n_backends <= REC_MAX_BACKENDS);
    for (int b = 0; b < g->n_backends; b++) {
        json_t *jb = json_array_get(backends, (size_t)b);
        rec_backend *be = &g->backend[b];
        be->name = json_string_value(json_object_get(jb, "name"));
        be->buft = json_string_value(json_object_get(jb, "buft"));
        be->alignment = (uint64_t)json_integer_value(json_object_get(jb, "alignment"));
        be->size = (uint64_t)json_integer_value(json_object_get(jb, "size"));
        assert_true(be->name && be->buft);
        be->buft_index = -1;
        for (int a = 0; a < b && be->buft_index < 0; a++)
            if (strcmp(g->backend[a].buft, be->buft) == 0)
                be->buft_index = g->backend[a].buft_index;
        if (be->buft_index < 0)
            be->buft_index = g->n_bufts++;
    }
}

/* "<model> <args...>", cut to the label's size. */
static void read_case(json_t *cs, rec_graph *g)
{
    assert_true(json_is_object(cs));
    json_t *args = json_object_get(cs, "args");
    int pos = snprintf(g->label, sizeof g->label, "%s",
                       json_string_value(json_object_get(cs, "model")));
    for (size_t a = 0; a < json_array_size(args); a++)
        if (pos > 0 && (size_t)pos < sizeof g->label)
            pos += snprintf(g->label + pos, sizeof g->label - (size_t)pos, " %s",
                            json_string_value(json_array_get(args, a)));
}

/* Tensor i as ggml-alloc got it, sources not yet resolved. */
static void read_tensor(json_t *jt, const rec_graph *g, size_t i, ggfit_gt *t, tinfo *ti)
{
    ti->name = json_string_value(json_object_get(jt, "name"));
    ti->leaf = strcmp(json_string_value(json_object_get(jt, "kind")), "leaf") == 0;
    ti->view_src = json_string_value(json_object_get(jt, "view_src"));
    ti->src = json_object_get(jt, "src");
    const char *op = json_string_value(json_object_get(jt, "op"));
    int opv = op ? op_from_desc(op) : -1;
    int type = ggfit_type_from_name(json_string_value(json_object_get(jt, "type")));
    if (!ti->name || opv < 0 || type < 0)
        fail_msg("%s: tensor %zu: no name, or unknown op %s or type", g->where, i,
                 op ? op : "(none)");
    assert_true(json_array_size(ti->src) <= GGFIT_GALLOC_MAX_SRC);
    t->op = (uint8_t)opv;
    t->type = (uint32_t)type;
    json_t *ne = json_object_get(jt, "ne");
    for (size_t d = 0; d < 4; d++)
        t->ne[d] = d < json_array_size(ne) ? json_integer_value(json_array_get(ne, d)) : 1;
    t->size = (uint64_t)json_integer_value(json_object_get(jt, "nbytes"));
    t->backend = (int32_t)json_integer_value(json_object_get(jt, "backend"));
    t->flags = (uint32_t)json_integer_value(json_object_get(jt, "flags"));
    t->allocated = json_integer_value(json_object_get(jt, "allocated")) != 0;
    t->view_src = -1;
    t->view_offs = (uint64_t)json_integer_value(json_object_get(jt, "view_offs"));
    t->n_src = (uint8_t)json_array_size(ti->src);
    for (size_t j = 0; j < GGFIT_GALLOC_MAX_SRC; j++)
        t->src[j] = -1;
}

/* Fills g (where already set) from root, which it takes over. */
static void read_graph(json_t *root, rec_graph *g)
{
    g->root = root;
    read_backends(json_object_get(root, "backends"), g);
    read_case(json_object_get(root, "case"), g);
    json_t *tensors = json_object_get(root, "tensors");
    assert_true(json_is_array(tensors));
    size_t n = json_array_size(tensors), n1 = n ? n : 1;
    g->n = n;
    g->t = calloc(n1, sizeof *g->t);
    g->name = calloc(n1, sizeof *g->name);
    g->by_name = json_object();
    tinfo *ti = calloc(n1, sizeof *ti);
    int32_t *scratch = calloc(2 * n1, sizeof *scratch);
    assert_true(g->t && g->name && g->by_name && ti && scratch);
    for (size_t i = 0; i < n; i++) {
        read_tensor(json_array_get(tensors, i), g, i, &g->t[i], &ti[i]);
        g->name[i] = ti[i].name;
        if (ti[i].leaf) {
            assert_int_equal(g->n_leafs, i);   /* leafs come first */
            g->n_leafs++;
        }
        json_t *list = json_object_get(g->by_name, ti[i].name);
        if (!list) {
            list = json_array();
            json_object_set_new(g->by_name, ti[i].name, list);
        }
        json_array_append_new(list, json_integer((json_int_t)i));
    }
    resolver r = { .ti = ti, .t = g->t, .by_name = g->by_name, .n_uses = scratch,
                   .seg = scratch + n };
    for (size_t i = 0; i < n; i++)
        resolve_tensor(&r, i);
    free(scratch);
    free(ti);
}

int32_t rec_named(const rec_graph *g, const char *name, size_t k)
{
    json_t *j = json_array_get(json_object_get(g->by_name, name), k);
    return j ? (int32_t)json_integer_value(j) : -1;
}

bool rec_has_arg(const rec_graph *g, const char *arg)
{
    json_t *args = json_object_get(json_object_get(g->root, "case"), "args");
    for (size_t a = 0; a < json_array_size(args); a++)
        if (strcmp(json_string_value(json_array_get(args, a)), arg) == 0)
            return true;
    return false;
}

void rec_graph_free(rec_graph *g)
{
    json_decref(g->by_name);
    json_decref(g->root);
    free(g->name);
    free(g->t);
    memset(g, 0, sizeof *g);
}

/* ------------------------------------------------------------------------
 * The files
 * ---------------------------------------------------------------------- */

#define REC_MAX_FILES 64

struct rec_reader {
    const char *dir;
    char *files[REC_MAX_FILES];   /* *.jsonl.gz, sorted */
    size_t n_files, f;            /* f: the file open in gz */
    gzFile gz;
    int ln;                       /* lines read from it */
    char *line;
    size_t cap;
};

/* Reads one line of any length into *buf (grown as needed); false at EOF. */
static bool read_line(gzFile f, char **buf, size_t *cap)
{
    size_t len = 0;
    for (;;) {
        if (*cap - len < 2) {
            *cap = *cap ? *cap * 2 : 1 << 20;
            *buf = realloc(*buf, *cap);
            assert_non_null(*buf);
        }
        if (!gzgets(f, *buf + len, (int)(*cap - len > INT32_MAX ? INT32_MAX : *cap - len)))
            return len > 0;
        len += strlen(*buf + len);
        if (len > 0 && (*buf)[len - 1] == '\n')
            return true;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

rec_reader *rec_open(void)
{
    rec_reader *rd = calloc(1, sizeof *rd);
    assert_non_null(rd);
    const char *d = getenv("GGFIT_GRAPHS");
    rd->dir = d && *d ? d : "data/graphs";
    DIR *dir = opendir(rd->dir);
    if (!dir)
        fail_msg("cannot open %s (set GGFIT_GRAPHS)", rd->dir);
    struct dirent *de;
    while ((de = readdir(dir))) {
        size_t l = strlen(de->d_name);
        if (l > 9 && strcmp(de->d_name + l - 9, ".jsonl.gz") == 0 && rd->n_files < REC_MAX_FILES)
            rd->files[rd->n_files++] = strdup(de->d_name);
    }
    closedir(dir);
    qsort(rd->files, rd->n_files, sizeof rd->files[0], cmp_str);
    assert_true(rd->n_files > 0);
    return rd;
}

bool rec_next(rec_reader *rd, rec_graph *g)
{
    char path[1024];
    for (;;) {
        if (rd->f == rd->n_files)
            return false;
        snprintf(path, sizeof path, "%s/%s", rd->dir, rd->files[rd->f]);
        if (!rd->gz) {
            rd->gz = gzopen(path, "rb");
            if (!rd->gz)
                fail_msg("cannot open %s", path);
            gzbuffer(rd->gz, 1 << 18);
            rd->ln = 0;
        }
        if (read_line(rd->gz, &rd->line, &rd->cap))
            break;
        gzclose(rd->gz);
        rd->gz = NULL;
        rd->f++;
    }
    rd->ln++;
    json_error_t jerr;
    json_t *root = json_loads(rd->line, 0, &jerr);
    if (!root)
        fail_msg("%s:%d: %s", path, rd->ln, jerr.text);
    memset(g, 0, sizeof *g);
    snprintf(g->where, sizeof g->where, "%s:%d", rd->files[rd->f], rd->ln);
    read_graph(root, g);
    return true;
}

void rec_close(rec_reader *rd)
{
    if (!rd)
        return;
    if (rd->gz)
        gzclose(rd->gz);
    for (size_t f = 0; f < rd->n_files; f++)
        free(rd->files[f]);
    free(rd->line);
    free(rd);
}

double rec_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
