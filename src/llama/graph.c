/*
 * graph.c - the building blocks of the graphs llama.cpp builds for a prompt
 * ubatch (src/llama-graph.cpp), which the per-architecture builders in
 * src/models/ put together, and ggfit__build_graph, which runs the
 * builder of the model's registry row. Each function follows the llama.cpp
 * function named in its comment, op for op and in the same order, because
 * the allocator's result depends on the order tensors are created and
 * expanded. The Mamba mixers are in graph_mamba.c.
 */
#include <stdio.h>
#include <string.h>

#include "llama/graph.h"
#include "versions/version.h"



/* ---- weights, caches, names ---------------------------------------------- */

/* Whether fmt starts "blk.%d.", a byte at a time (strncmp's call costs
 * more, and fmt may be shorter). */
static bool block_fmt(const char *fmt)
{
    return fmt[0] == 'b' && fmt[1] == 'l' && fmt[2] == 'k' && fmt[3] == '.' && fmt[4] == '%' &&
           fmt[5] == 'd' && fmt[6] == '.';
}

/* The tensor of layer il's block weight "blk.%d.<rest>", fmt, or -1. A
 * builder asks for the same formats in every layer, mostly string literals:
 * the memo keeps the rest's number by the format's address (open
 * addressing, a few probes at most), and a hit is taken only when the text
 * there is still that rest's (an address can be a buffer that a caller
 * fills anew), so the answer is the lookup's. A rest no block has is not
 * kept and is looked up each time. */
static int64_t block_weight(bctx *b, const char *fmt, uint32_t il)
{
    const ggfit_model *m = b->p->m;
    const char *rest = fmt + 7;
    uint64_t h = (uint64_t)(uintptr_t)fmt * 0x9e3779b97f4a7c15ull >> 57;
    _Static_assert(GB_REST_MEMO == 128, "the memo's index takes the product's top 7 bits");
    gb_rest_memo *e = NULL;
    for (int probe = 0; probe < 8; probe++, h = (h + 1) % GB_REST_MEMO) {
        gb_rest_memo *x = &b->rest_memo[h];
        if (x->fmt == fmt) {
            if (!strcmp(x->rest, rest))
                return ggfit__model_block_tensor_of(m, il, x->id);
            e = x;   /* the buffer holds another rest now */
            break;
        }
        if (!x->fmt) {
            e = x;
            break;
        }
    }
    uint32_t id = ggfit__model_rest_id(m, rest);
    if (id == UINT32_MAX)
        return -1;
    if (e)
        *e = (gb_rest_memo){ .fmt = fmt, .rest = ggfit__model_rest_name(m, id), .id = id };
    return ggfit__model_block_tensor_of(m, il, id);
}

/* The graph tensor of model weight `name`, or -1 when the model has none. */
int32_t gb_weight(bctx *b, const char *fmt, int il)
{
    char name[GG_NAME];
    int64_t i;
    /* Block weights are found by layer and suffix, and names without a
     * layer as they are: no formatting. */
    if (block_fmt(fmt) && il >= 0)
        i = block_weight(b, fmt, (uint32_t)il);
    else if (!strchr(fmt, '%') && strlen(fmt) < sizeof name)
        i = ggfit_gguf_find_tensor(b->gguf, fmt);
    else
        i = ggfit_gguf_find_tensor(b->gguf, (snprintf(name, sizeof name, fmt, il), name));
    if (i < 0)
        return -1;
    if (b->leaf_of[i] >= 0)
        return b->leaf_of[i];
    const ggfit_tensor_info *ti = ggfit_gguf_tensor(b->gguf, (uint64_t)i);
    int32_t t = gg_weight(b->g, ti, b->p->placement[i]);
    b->leaf_of[i] = t;
    return t;
}

int32_t gb_required(bctx *b, const char *fmt, int il)
{
    int32_t t = gb_weight(b, fmt, il);
    if (t < 0)
        b->missing = true;
    return t < 0 ? 0 : t;
}

/* The output matrix: output.weight, or the tied copy of token_embd. */
int32_t gb_output_weight(bctx *b)
{
    int32_t t = gb_weight(b, "output.weight", 0);
    if (t >= 0)
        return t;
    int64_t i = ggfit_gguf_find_tensor(b->gguf, "token_embd.weight");
    if (i < 0) {
        b->missing = true;
        return 0;
    }
    const ggfit_tensor_info *ti = ggfit_gguf_tensor(b->gguf, (uint64_t)i);
    if (b->p->tied_output_buft == b->p->placement[i])
        return gb_weight(b, "token_embd.weight", 0);
    t = gg_memory(b->g, ti, "token_embd.weight", ti->type, (int)ti->n_dims, ti->ne,
                  b->p->tied_output_buft, true);
    b->g->t[t].tied = true;
    return t;
}

void gb_output(bctx *b, int32_t inpL)
{
    gg_graph *g = b->g;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* Layer il's copy of the per-layer weight called name (rope factors), one
 * per buffer type in leaf[GGFIT_MAX_BUFTS] (start at -1); -1 when the model
 * has no such tensor. */
int32_t gb_layer_copy(bctx *b, const char *name, int il, int32_t *leaf)
{
    int64_t i = ggfit_gguf_find_tensor(b->gguf, name);
    if (i < 0)
        return -1;
    /* The copy for layer il lives in that layer's buffer type. */
    int32_t buft = gb_copy_buft(b->p->layer_buft, b->p->placement, i, il);
    if (buft < 0 || buft >= GGFIT_MAX_BUFTS) {
        b->missing = true;
        return -1;
    }
    if (leaf[buft] >= 0)
        return leaf[buft];
    const ggfit_tensor_info *ti = ggfit_gguf_tensor(b->gguf, (uint64_t)i);
    leaf[buft] = gg_memory(b->g, ti, name, ti->type, 1, ti->ne, buft, true);
    b->g->t[leaf[buft]].dup = true;
    return leaf[buft];
}

/* Layer il's rope frequency factors. */
int32_t gb_rope_factors(bctx *b, int il)
{
    return gb_layer_copy(b, "rope_freqs.weight", il, b->rope_leaf);
}

/* llama_model::get_rope_factors without rope_freqs: LongRoPE's long or
 * short factors, copied per buffer type into leaf. */
int32_t gb_rope_factors_ls(bctx *b, int il, int32_t *leaf)
{
    /* n_ctx_seq > n_ctx_orig_yarn picks the long factors; a stream's
     * cells stand for n_ctx_seq. Both have the same shape. */
    double orig = gb_key(b, "rope.scaling.original_context_length",
                         gb_key(b, "context_length", 0));
    const char *name = (double)b->p->n_kv > orig ? "rope_factors_long.weight"
                                                  : "rope_factors_short.weight";
    return gb_layer_copy(b, name, il, leaf);
}

/* ggml_rope_ext of layer il with frequency factors rf (or none, -1). A
 * node that reads a per-buffer-type copy of the factors records its layer,
 * so a kept graph can point it at its layer's copy (project.c). */
int32_t gb_rope(bctx *b, int32_t x, int32_t rf, int il)
{
    int32_t t = gg_rope(b->g, x, b->inp_pos, rf);
    if (rf >= 0 && b->g->t[rf].dup)
        b->g->t[t].il = il;
    return t;
}

/* cb() with llama.cpp's pinning of "norm" to the layer's device (gb_cb
 * calls it when there is something to do). */
void gb_cb_named(bctx *b, int32_t t, const char *name, int il)
{
    if (b->g->names)
        gg_cb(b->g, t, name, il);
    /* The builders name the hidden states llama.cpp keeps as res->t_embd
     * so, right before they set it. */
    if (il < 0 && (!strcmp(name, "result_norm") || !strcmp(name, "result_embd") ||
                   !strcmp(name, "final_norm_out")))
        b->t_embd = t;
    if (b->p->pin_norms && il >= 0 && !strcmp(name, "norm")) {
        b->g->t[t].backend = b->p->layer_backend[il];
        b->g->t[t].pin_il = il;
    }
}

int64_t gb_ne(bctx *b, int32_t t, int d)
{
    return b->g->t[t].ne[d];
}

int32_t gb_reshape_2d(bctx *b, int32_t t, int64_t a, int64_t c)
{
    int64_t ne[2] = { a, c };
    return gg_reshape(b->g, t, 2, ne);
}

int32_t gb_reshape_3d(bctx *b, int32_t t, int64_t a, int64_t c, int64_t d)
{
    int64_t ne[3] = { a, c, d };
    return gg_reshape(b->g, t, 3, ne);
}

int32_t gb_reshape_4d(bctx *b, int32_t t, int64_t a, int64_t c, int64_t d, int64_t e)
{
    int64_t ne[4] = { a, c, d, e };
    return gg_reshape(b->g, t, 4, ne);
}

int32_t gb_view_2d(bctx *b, int32_t t, int64_t a, int64_t c, uint64_t nb1, uint64_t offs)
{
    int64_t ne[2] = { a, c };
    uint64_t nb[1] = { nb1 };
    return gg_view(b->g, t, 2, ne, nb, offs);
}

int32_t gb_view_3d(bctx *b, int32_t t, int64_t a, int64_t c, int64_t d, uint64_t nb1,
                       uint64_t nb2, uint64_t offs)
{
    int64_t ne[3] = { a, c, d };
    uint64_t nb[2] = { nb1, nb2 };
    return gg_view(b->g, t, 3, ne, nb, offs);
}

int32_t gb_view_4d(bctx *b, int32_t t, int64_t a, int64_t c, int64_t d, int64_t e,
                       uint64_t nb1, uint64_t nb2, uint64_t nb3, uint64_t offs)
{
    int64_t ne[4] = { a, c, d, e };
    uint64_t nb[3] = { nb1, nb2, nb3 };
    return gg_view(b->g, t, 4, ne, nb, offs);
}

/* ---- inputs (llm_graph_context::build_inp_*) ------------------------------- */

int32_t gb_inp_embd(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_tokens = b->p->n_tokens, n_embd = b->hp->n_embd;
    int64_t n_embd_inp = n_embd * (1 + b->n_deepstack);
    int32_t tokens = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, n_tokens), "inp_tokens");
    int32_t embd = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, n_embd_inp, n_tokens), "inp_embd");
    int32_t cur = gg_get_rows(g, gb_required(b, "token_embd.weight", 0), tokens);
    if (n_embd_inp != n_embd) {
        /* Token rows padded to the input width: the deepstack slices of a
         * text-only batch are zeros. */
        const gg_tensor *t = &g->t[cur];
        int64_t ne[4] = { n_embd_inp, t->ne[1], t->ne[2], t->ne[3] };
        cur = gg_op_shape(g, GGFIT_OP_PAD, t->type, 4, ne, 1, &cur);
    }
    /* ggml_build_forward_select: both inputs join the graph, the token path
     * computed. */
    gg_expand(g, cur);
    gg_expand_no_compute(g, embd);
    if (n_embd_inp != n_embd)
        cur = gb_view_2d(b, cur, n_embd, n_tokens, g->t[cur].nb[1], 0);
    b->t_inp_embd = cur;
    gb_cb(b, cur, "embd", -1);
    gg_expand(g, cur);
    return cur;
}

/* An unnamed 1-d input of n elements. */
static int32_t input_1d(bctx *b, uint32_t type, int64_t n)
{
    return gg_input(b->g, gg_new_1d(b->g, type, n), NULL);
}

/* build_inp_attn_scale, when the builder asked for it (b->attn_temp): one
 * temperature per token, broadcast over the heads. */
static void inp_attn_scale(bctx *b)
{
    gg_graph *g = b->g;
    b->inp_attn_scale = -1;
    if (b->attn_temp)
        b->inp_attn_scale = gg_input(g, gg_new_4d(g, GGFIT_TYPE_F32, 1, 1, b->p->n_tokens, 1),
                                     "attn_scale");
}

/* ---- KV caches (llama_kv_cache): what the plain, iSWA and K-only share --- */

/* Whether layer il is in the sliding-window cache of an iSWA model. */
static bool layer_swa(const bctx *b, int il)
{
    return (b->p->layer_flags[il] & GB_LAYER_SWA) != 0;
}

/* Key and value head sizes of the iSWA cache holding layer il. */
static int64_t head_k(const bctx *b, int il)
{
    return layer_swa(b, il) ? b->hp->n_embd_head_k_swa : b->hp->n_embd_head_k;
}

static int64_t head_v(const bctx *b, int il)
{
    return layer_swa(b, il) ? b->hp->n_embd_head_v_swa : b->hp->n_embd_head_v;
}

/* hparams.n_embd_v_gqa_max(): the widest V row of any layer, which every
 * row of a transposed V cache is padded to, whichever cache holds the layer
 * (iswa: the sliding-window layers have their own head size). */
static int64_t n_embd_v_gqa_max(const bctx *b, bool iswa)
{
    int64_t nv = 0;
    for (uint32_t il = 0; il < b->hp->n_layer; il++) {
        int64_t hv = iswa ? head_v(b, (int)il) : b->hp->n_embd_head_v;
        int64_t x = hv * ggfit_model_layer(b->p->m, il)->n_head_kv;
        nv = x > nv ? x : nv;
    }
    return nv;
}

/* The inputs of a cache of n_kv cells, in llama.cpp's order
 * (build_input_k_idxs, build_input_v_idxs, build_attn_inp_kq_mask): the
 * cells the ubatch's keys and values go to, and the mask. A transposed V
 * cache takes an index per value, nv_max a token; a K-only cache (v_idxs
 * NULL) takes no V indices. */
static void cache_inputs(bctx *b, uint32_t n_kv, int64_t nv_max, int32_t *k_idxs,
                         int32_t *v_idxs, int32_t *mask)
{
    gg_graph *g = b->g;
    const gb_params *p = b->p;
    int64_t n_tokens = p->n_tokens;
    *k_idxs = input_1d(b, GGFIT_TYPE_I64, n_tokens);
    if (v_idxs)
        *v_idxs = input_1d(b, GGFIT_TYPE_I64, p->v_trans ? n_tokens * nv_max : n_tokens);
    *mask = gg_input(g, gg_new_4d(g, p->flash_attn ? GGFIT_TYPE_F16 : GGFIT_TYPE_F32, n_kv,
                                  n_tokens / p->n_stream, 1, p->n_stream),
                     "attn_inp_kq_mask");
}

/* The Hadamard rotations of a quantized cache (llama_kv_cache ctor), -1
 * where there is none: the keys' when rot_k, as wide as the largest power
 * of two from 64 up that divides the key head hk (a head of 0 has none);
 * the values' when rot_v, 64 wide. */
static void rot_inputs(bctx *b, int64_t hk, bool rot_k, bool rot_v, int32_t *k_rot,
                       int32_t *v_rot)
{
    gg_graph *g = b->g;
    *k_rot = *v_rot = -1;
    if (rot_k && hk > 0 && ggfit_type_is_quantized(b->p->type_k)) {
        int64_t nrot = 64;
        do
            nrot *= 2;
        while (hk % nrot == 0);
        nrot /= 2;
        *k_rot = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, nrot, nrot), "attn_inp_k_rot");
    }
    if (rot_v && ggfit_type_is_quantized(b->p->type_v))
        *v_rot = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, 64, 64), "attn_inp_v_rot");
}

/* Layer il's cache_k_l<il> (which 'k') or cache_v_l<il> ('v'): rows of
 * n_embd values, n_kv cells a stream. */
/* "cache_<which>_l<il>", llama.cpp's name of a layer's cache tensor, as
 * snprintf(name, n, "cache_%c_l%d", which, il) writes it, without printf
 * (two per layer in every graph built). */
static void cache_name(char *name, size_t n, char which, int il)
{
    char w[2] = { which, '\0' };
    size_t at = ggfit__str_put(name, n, 0, "cache_");
    at = ggfit__str_put(name, n, at, w);
    at = ggfit__str_put(name, n, at, il < 0 ? "_l-" : "_l");
    ggfit__str_put_u(name, n, at, il < 0 ? 0u - (uint64_t)(int64_t)il : (uint64_t)il);
}

static int32_t cache_tensor(bctx *b, int il, char which, int64_t n_embd, uint32_t n_kv)
{
    const gb_params *p = b->p;
    char name[GG_NAME] = "";
    int64_t ne[3] = { n_embd, n_kv, p->n_stream };
    if (b->g->names)   /* gg_memory copies it only then */
        cache_name(name, sizeof name, which, il);
    int32_t t = gg_memory(b->g, NULL, name, which == 'k' ? p->type_k : p->type_v, 3, ne,
                          p->kv_buft[il], false);
    b->g->t[t].il = il;
    return t;
}

/* llama_kv_cache::cpy_k: the new keys k into cache ck, rows indexed by
 * k_idxs. */
static int32_t cpy_k(bctx *b, int32_t ck, int32_t k, int32_t k_idxs)
{
    const gg_tensor *t = &b->g->t[k];
    int32_t kc = gb_view_2d(b, k, t->ne[0] * t->ne[1], t->ne[2], t->nb[2], 0);
    const gg_tensor *c = &b->g->t[ck];   /* after the view: g->t may move */
    int32_t dst = ck;
    if (c->ne[2] > 1)   /* streams merged: the indices are global */
        dst = gb_reshape_2d(b, ck, c->ne[0], c->ne[1] * c->ne[2]);
    return gg_set_rows(b->g, dst, kc, k_idxs);
}

/* llama_kv_cache::cpy_v: rows as cpy_k when V is not transposed (flash
 * attention), else one row per element. */
static int32_t cpy_v(bctx *b, int32_t cv, int32_t v, int32_t v_idxs)
{
    gg_graph *g = b->g;
    const gg_tensor *t = &g->t[v];
    int64_t n_embd_gqa = t->ne[0] * t->ne[1], n_tok = t->ne[2];
    int64_t nv = g->t[cv].ne[0], kv = g->t[cv].ne[1], ns = g->t[cv].ne[2];
    if (!b->p->v_trans) {
        int32_t vc = gb_view_2d(b, v, n_embd_gqa, n_tok, t->nb[2], 0);
        int32_t dst = ns > 1 ? gb_reshape_2d(b, cv, nv, kv * ns) : cv;
        return gg_set_rows(g, dst, vc, v_idxs);
    }
    int32_t vc;
    if (ggfit_row_bytes(t->type, (uint64_t)n_embd_gqa) == t->nb[2]) {
        vc = gb_reshape_2d(b, v, n_embd_gqa, n_tok);
    } else {
        int64_t ne[2] = { n_embd_gqa, n_tok };
        vc = gg_cont_shape(g, v, 2, ne);
    }
    if (n_embd_gqa < nv) {
        int64_t pne[4] = { nv, n_tok, 1, 1 };
        vc = gg_op_shape(g, GGFIT_OP_PAD, g->t[vc].type, 4, pne, 1, &vc);
    }
    int32_t vview = gb_reshape_2d(b, cv, 1, nv * kv * ns);
    const gg_tensor *tvc = &g->t[vc];
    vc = gb_reshape_2d(b, vc, 1, tvc->ne[0] * tvc->ne[1] * tvc->ne[2] * tvc->ne[3]);
    return gg_set_rows(g, vview, vc, v_idxs);
}

/* llama_kv_cache::get_k: all cells of cache ck, as n_head_kv heads of hk
 * values. */
static int32_t get_k(bctx *b, int32_t ck, int64_t hk, int64_t n_head_kv)
{
    const gg_tensor *t = &b->g->t[ck];
    int64_t nk = t->ne[0], kv = t->ne[1], ns = t->ne[2];
    uint32_t type = t->type;
    return gb_view_4d(b, ck, hk, n_head_kv, kv, ns, ggfit_row_bytes(type, (uint64_t)hk),
                      ggfit_row_bytes(type, (uint64_t)nk),
                      ggfit_row_bytes(type, (uint64_t)(nk * kv)), 0);
}

/* llama_kv_cache::get_v: the same for values, heads of hv; a transposed
 * cache holds each value's cells in one row. */
static int32_t get_v(bctx *b, int32_t cv, int64_t hv, int64_t n_head_kv)
{
    const gg_tensor *t = &b->g->t[cv];
    int64_t nv = t->ne[0], kv = t->ne[1], ns = t->ne[2];
    uint32_t type = t->type;
    if (!b->p->v_trans)
        return gb_view_4d(b, cv, hv, n_head_kv, kv, ns, ggfit_row_bytes(type, (uint64_t)hv),
                          ggfit_row_bytes(type, (uint64_t)nv),
                          ggfit_row_bytes(type, (uint64_t)(nv * kv)), 0);
    return gb_view_4d(b, cv, kv, n_head_kv, hv, ns, ggfit_row_bytes(type, (uint64_t)(kv * hv)),
                      ggfit_row_bytes(type, (uint64_t)kv),
                      ggfit_row_bytes(type, (uint64_t)(kv * nv)), 0);
}

/* The inputs of a plain KV cache: positions, the cache's inputs, its
 * rotations, output ids (build_inp_pos, build_attn_inp_kv,
 * build_inp_out_ids). */
void gb_inputs_kv(bctx *b)
{
    const gb_params *p = b->p;
    int64_t hk = b->hp->n_embd_head_k, hv = b->hp->n_embd_head_v;
    b->inp_pos = input_1d(b, GGFIT_TYPE_I32,
                          p->n_tokens * (b->n_pos_per_embd ? b->n_pos_per_embd : 1));
    inp_attn_scale(b);
    cache_inputs(b, p->n_kv, n_embd_v_gqa_max(b, false), &b->k_idxs, &b->v_idxs, &b->kq_mask);
    rot_inputs(b, hk, hk % 64 == 0, hv % 64 == 0, &b->k_rot, &b->v_rot);
    b->inp_out_ids = input_1d(b, GGFIT_TYPE_I32, p->n_outputs);
}

/* ---- building blocks (llama-graph.cpp) ------------------------------------ */

int32_t gb_norm(bctx *b, int32_t cur, int32_t w, int il)
{
    cur = gg_rms_norm(b->g, cur);
    if (w >= 0) {
        gb_cb(b, cur, "norm", il);
        cur = gg_binary(b->g, GGFIT_OP_MUL, cur, w);
    }
    return cur;
}

int32_t gb_hadamard(bctx *b, int32_t cur, int32_t rot)
{
    int64_t n = gb_ne(b, rot, 0);
    const gg_tensor *t = &b->g->t[cur];
    int64_t nel = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    int64_t ne0 = t->ne[0], ne1 = t->ne[1], ne2 = t->ne[2], ne3 = t->ne[3];
    int32_t res;
    if (!gg_is_contiguous(b->g, cur)) {
        int64_t ne[2] = { n, nel / n };
        res = gg_cont_shape(b->g, cur, 2, ne);
    } else {
        res = gb_reshape_2d(b, cur, n, nel / n);
    }
    res = gg_mul_mat(b->g, rot, res);
    return gb_reshape_4d(b, res, ne0, ne1, ne2, ne3);
}

/* llm_graph_context::build_qkv, separate Q/K/V path. */
void gb_qkv(bctx *b, int32_t cur, int il, int64_t n_head, int64_t n_head_kv,
                      int32_t *q, int32_t *k, int32_t *v)
{
    gg_graph *g = b->g;
    int64_t hd = b->hp->n_embd_head_k, nt = b->p->n_tokens;
    int32_t bias;
    *q = gg_mul_mat(g, gb_required(b, "blk.%d.attn_q.weight", il), cur);
    gb_cb(b, *q, "Qcur", il);
    if ((bias = gb_weight(b, "blk.%d.attn_q.bias", il)) >= 0) {
        *q = gg_binary(g, GGFIT_OP_ADD, *q, bias);
        gb_cb(b, *q, "Qcur", il);
    }
    *k = gg_mul_mat(g, gb_required(b, "blk.%d.attn_k.weight", il), cur);
    gb_cb(b, *k, "Kcur", il);
    if ((bias = gb_weight(b, "blk.%d.attn_k.bias", il)) >= 0) {
        *k = gg_binary(g, GGFIT_OP_ADD, *k, bias);
        gb_cb(b, *k, "Kcur", il);
    }
    *v = gg_mul_mat(g, gb_required(b, "blk.%d.attn_v.weight", il), cur);
    gb_cb(b, *v, "Vcur", il);
    if ((bias = gb_weight(b, "blk.%d.attn_v.bias", il)) >= 0) {
        *v = gg_binary(g, GGFIT_OP_ADD, *v, bias);
        gb_cb(b, *v, "Vcur", il);
    }
    *q = gb_reshape_3d(b, *q, hd, n_head, nt);
    *k = gb_reshape_3d(b, *k, hd, n_head_kv, nt);
    *v = gb_reshape_3d(b, *v, b->hp->n_embd_head_v, n_head_kv, nt);
    gb_cb(b, *q, "Qcur", il);
    gb_cb(b, *k, "Kcur", il);
    gb_cb(b, *v, "Vcur", il);
}

/* build_qkv's fused path: Q, K and V are views of one product. */
void gb_qkv_fused(bctx *b, int32_t cur, int32_t wqkv, int il, int64_t n_head,
                  int64_t n_head_kv, int32_t *q, int32_t *k, int32_t *v)
{
    gg_graph *g = b->g;
    int64_t hd = b->hp->n_embd_head_v, nt = b->p->n_tokens;
    int32_t qkv = gg_mul_mat(g, wqkv, cur);
    gb_cb(b, qkv, "wqkv", il);
    int32_t bias = gb_weight(b, "blk.%d.attn_qkv.bias", il);
    if (bias >= 0) {
        qkv = gg_binary(g, GGFIT_OP_ADD, qkv, bias);
        gb_cb(b, qkv, "wqkv_b", il);
    }
    uint32_t type = g->t[qkv].type;
    uint64_t head = ggfit_row_bytes(type, (uint64_t)hd), nb1 = g->t[qkv].nb[1];
    *q = gb_view_3d(b, qkv, hd, n_head, nt, head, nb1, 0);
    *k = gb_view_3d(b, qkv, hd, n_head_kv, nt, head, nb1,
                    ggfit_row_bytes(type, (uint64_t)(hd * n_head)));
    *v = gb_view_3d(b, qkv, hd, n_head_kv, nt, head, nb1,
                    ggfit_row_bytes(type, (uint64_t)(hd * (n_head + n_head_kv))));
    gb_cb(b, *q, "Qcur", il);
    gb_cb(b, *k, "Kcur", il);
    gb_cb(b, *v, "Vcur", il);
}

/* Layer il's K and V caches (llama_kv_cache ctor). */
static void kv_cache(bctx *b, int il, int32_t *k, int32_t *v)
{
    const gb_params *p = b->p;
    int64_t n_head_kv = ggfit_model_layer(p->m, (uint32_t)il)->n_head_kv;
    /* A transposed V cache pads every row to the widest layer's. */
    int64_t nv = p->v_trans ? n_embd_v_gqa_max(b, false)
                            : (int64_t)b->hp->n_embd_head_v * n_head_kv;
    *k = cache_tensor(b, il, 'k', (int64_t)b->hp->n_embd_head_k * n_head_kv, p->n_kv);
    *v = cache_tensor(b, il, 'v', nv, p->n_kv);
}

/* llm_graph_context::build_attn_mha */
int32_t gb_attn_mha(bctx *b, int32_t q, int32_t k, int32_t v, int32_t mask,
                              int32_t sinks, int il)
{
    return gb_attn_mha_v(b, q, k, v, mask, sinks, -1, il);
}

/* build_attn's rotations for a quantized cache: q and k by k_rot, v by
 * v_rot (-1: none). */
static void rotate_qkv(bctx *b, int32_t k_rot, int32_t v_rot, int32_t *q, int32_t *k,
                       int32_t *v)
{
    if (k_rot >= 0) {
        *q = gb_hadamard(b, *q, k_rot);
        *k = gb_hadamard(b, *k, k_rot);
    }
    if (v_rot >= 0)
        *v = gb_hadamard(b, *v, v_rot);
}

/* The end of build_attn: the heads' output cur, rotated back when V was
 * (v_rot), times wo, plus wo_b (each -1: none). */
static int32_t attn_out(bctx *b, int32_t cur, int32_t v_rot, int32_t wo, int32_t wo_b, int il)
{
    gb_cb(b, cur, "kqv_out", il);
    if (v_rot >= 0)
        cur = gb_hadamard(b, cur, v_rot);
    if (wo >= 0)
        cur = gg_mul_mat(b->g, wo, cur);
    if (wo_b >= 0)
        cur = gg_binary(b->g, GGFIT_OP_ADD, cur, wo_b);
    return cur;
}

/* llm_graph_context::build_attn with a KV cache. It expands q, v, k in
 * that order. */
int32_t gb_attn(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                          int32_t sinks, int il)
{
    gg_graph *g = b->g;
    rotate_qkv(b, b->k_rot, b->v_rot, &q, &k, &v);
    gg_expand(g, q);
    gg_expand(g, v);
    gg_expand(g, k);

    int32_t ck, cv;
    kv_cache(b, il, &ck, &cv);
    gg_expand(g, cpy_k(b, ck, k, b->k_idxs));
    gg_expand(g, cpy_v(b, cv, v, b->v_idxs));

    int64_t hk = b->hp->n_embd_head_k, n_head_kv = hk ? gb_ne(b, ck, 0) / hk : 0;
    int32_t kk = get_k(b, ck, hk, n_head_kv);
    int32_t vv = get_v(b, cv, b->hp->n_embd_head_v, n_head_kv);
    int32_t cur = gb_attn_mha(b, q, kk, vv, b->kq_mask, sinks, il);
    return attn_out(b, cur, b->v_rot, wo, wo_b, il);
}

/* build_attn_mha with a KQ bias (kq_b): never flash attention, whatever
 * -fa says; kq_b is added to KQ before the soft max. */
static int32_t attn_mha_kq_b(bctx *b, int32_t q, int32_t k, int32_t v, int32_t kq_b,
                             int32_t mask, int il)
{
    gg_graph *g = b->g;
    const gg_tensor *tq = &g->t[q], *tv = &g->t[v];
    bool v_trans = tv->nb[1] > tv->nb[2];
    int64_t n_stream = gb_ne(b, k, 3);
    q = gb_view_4d(b, q, tq->ne[0], tq->ne[1], tq->ne[2] / n_stream, n_stream, tq->nb[1],
                   tq->nb[2], tq->nb[3] / (uint64_t)n_stream, 0);
    q = gg_permute(g, q, 0, 2, 1, 3);
    k = gg_permute(g, k, 0, 2, 1, 3);
    v = gg_permute(g, v, 0, 2, 1, 3);
    int32_t kq = gg_mul_mat(g, k, q);
    gb_cb(b, kq, "kq", il);
    /* ggml_add repeats kq_b onto KQ: it must divide KQ's shape (several
     * streams split the tokens, the bias does not: llama.cpp aborts). */
    for (int d = 0; d < 4; d++)
        if (gb_ne(b, kq_b, d) == 0 || gb_ne(b, kq, d) % gb_ne(b, kq_b, d) != 0)
            b->missing = true;
    kq = gg_binary(g, GGFIT_OP_ADD, kq, kq_b);
    gb_cb(b, kq, "kq_plus_kq_b", il);
    kq = gg_soft_max(g, kq, mask, -1);
    gb_cb(b, kq, "kq_soft_max", il);
    if (!v_trans) {
        v = gg_cont(g, gg_transpose(g, v));
        gb_cb(b, v, "v_cont", il);
    }
    int32_t kqv = gg_mul_mat(g, v, kq);
    gb_cb(b, kqv, "kqv", il);
    int32_t cur = gg_permute(g, kqv, 0, 2, 1, 3);
    int64_t ne[2] = { gb_ne(b, cur, 0) * gb_ne(b, cur, 1), gb_ne(b, cur, 2) * gb_ne(b, cur, 3) };
    cur = gg_cont_shape(g, cur, 2, ne);
    if (b->p->no_kv_offload)
        g->t[cur].backend = b->p->cpu_backend;
    gg_expand(g, cur);
    return cur;
}

/* gb_attn with a KQ bias kq_b (T5's decoder: relative positions). */
int32_t gb_attn_kq_b(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                     int32_t kq_b, int il)
{
    gg_graph *g = b->g;
    rotate_qkv(b, b->k_rot, b->v_rot, &q, &k, &v);
    gg_expand(g, q);
    gg_expand(g, v);
    gg_expand(g, k);

    int32_t ck, cv;
    kv_cache(b, il, &ck, &cv);
    gg_expand(g, cpy_k(b, ck, k, b->k_idxs));
    gg_expand(g, cpy_v(b, cv, v, b->v_idxs));

    int64_t hk = b->hp->n_embd_head_k, n_head_kv = hk ? gb_ne(b, ck, 0) / hk : 0;
    int32_t kk = get_k(b, ck, hk, n_head_kv);
    int32_t vv = get_v(b, cv, b->hp->n_embd_head_v, n_head_kv);
    int32_t cur = attn_mha_kq_b(b, q, kk, vv, kq_b, b->kq_mask, il);
    return attn_out(b, cur, b->v_rot, wo, wo_b, il);
}

/* llm_graph_context::build_ffn with SiLU and a parallel gate. */
int32_t gb_ffn(bctx *b, int32_t cur, int il)
{
    int32_t up = gb_required(b, "blk.%d.ffn_up.weight", il);
    int32_t gate = gb_weight(b, "blk.%d.ffn_gate.weight", il);
    int32_t down = gb_required(b, "blk.%d.ffn_down.weight", il);
    return gb_ffn_w(b, cur, up, gate, down, il);
}

int32_t gb_ffn_gated(bctx *b, int32_t cur, int il)
{
    int32_t up = gb_required(b, "blk.%d.ffn_up.weight", il);
    int32_t gate = gb_required(b, "blk.%d.ffn_gate.weight", il);
    int32_t down = gb_required(b, "blk.%d.ffn_down.weight", il);
    return gb_ffn_w(b, cur, up, gate, down, il);
}

void gb_out_rows(bctx *b, int32_t *cur, int32_t *res)
{
    *cur = gg_get_rows(b->g, *cur, b->inp_out_ids);
    *res = gg_get_rows(b->g, *res, b->inp_out_ids);
}

/* The sum of the chosen experts' outputs (experts: n_embd values, an
 * expert, a token): the n_parts views first, then the adds that sum them. */
static int32_t moe_sum(bctx *b, int32_t experts, int64_t n_embd, int64_t n_tokens,
                       int64_t n_parts, int il)
{
    gg_graph *g = b->g;
    int32_t parts[256];
    if (n_parts < 1 || n_parts > 256) {
        b->missing = true;   /* an MoE without experts in use, or too many */
        return experts;
    }
    uint64_t nb1 = g->t[experts].nb[1], nb2 = g->t[experts].nb[2];
    for (int64_t i = 0; i < n_parts; i++) {
        parts[i] = gb_view_2d(b, experts, n_embd, n_tokens, nb2, (uint64_t)i * nb1);
        gg_expand(g, parts[i]);
    }
    int32_t out = parts[0];
    for (int64_t i = 1; i < n_parts; i++) {
        out = gg_binary(g, GGFIT_OP_ADD, out, parts[i]);
        gg_expand(g, out);
    }
    if (n_parts == 1)
        out = gg_cont(g, out);   /* not a strided view */
    gb_cb(b, out, "ffn_moe_out", il);
    return out;
}

/* llm_graph_context::build_moe_ffn: softmax gating, SiLU, optional
 * normalised weights. */
int32_t gb_moe_ffn(bctx *b, int32_t cur, int il, bool norm_w)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t n_embd = gb_ne(b, cur, 0), n_tokens = gb_ne(b, cur, 1);
    int64_t n_expert = hp->n_expert, n_used = hp->n_expert_used;
    int32_t logits = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate_inp.weight", il), cur);
    gb_cb(b, logits, "ffn_moe_logits", il);
    int32_t probs = gg_soft_max(g, logits, -1, -1);
    gb_cb(b, probs, "ffn_moe_probs", il);
    int32_t selected = gg_argsort_top_k(g, probs, n_used);
    gb_cb(b, g->t[selected].src[0], "ffn_moe_argsort", il);
    gb_cb(b, selected, "ffn_moe_topk", il);
    probs = gb_reshape_3d(b, probs, 1, n_expert, n_tokens);
    int32_t weights = gg_get_rows(g, probs, selected);
    gb_cb(b, weights, "ffn_moe_weights", il);
    if (norm_w) {
        weights = gb_reshape_2d(b, weights, n_used, n_tokens);
        int32_t sum = gg_sum_rows(g, weights);
        gb_cb(b, sum, "ffn_moe_weights_sum", il);
        sum = gg_clamp(g, sum);   /* in place: a view of the sum */
        gb_cb(b, sum, "ffn_moe_weights_sum_clamped", il);
        weights = gg_binary(g, GGFIT_OP_DIV, weights, sum);
        gb_cb(b, weights, "ffn_moe_weights_norm", il);
        weights = gb_reshape_3d(b, weights, 1, n_used, n_tokens);
    }
    gg_expand(g, weights);
    cur = gb_reshape_3d(b, cur, n_embd, 1, n_tokens);
    int32_t up = gg_mul_mat_id(g, gb_required(b, "blk.%d.ffn_up_exps.weight", il), cur, selected);
    gb_cb(b, up, "ffn_moe_up", il);
    int32_t gate_exps = gb_weight(b, "blk.%d.ffn_gate_exps.weight", il);
    int32_t x = gate_exps >= 0 ? gg_mul_mat_id(g, gate_exps, cur, selected) : up;
    if (gate_exps >= 0)
        gb_cb(b, x, "ffn_moe_gate", il);
    if (gate_exps >= 0) {
        x = gg_glu_split(g, x, up);
        gb_cb(b, x, "ffn_moe_swiglu", il);
    } else {
        x = gg_unary_op(g, GGFIT_OP_UNARY, x);
        gb_cb(b, x, "ffn_moe_silu", il);
    }
    int32_t experts = gg_mul_mat_id(g, gb_required(b, "blk.%d.ffn_down_exps.weight", il), x,
                                    selected);
    gb_cb(b, experts, "ffn_moe_down", il);
    experts = gg_binary(g, GGFIT_OP_MUL, experts, weights);
    gb_cb(b, experts, "ffn_moe_weighted", il);
    gg_expand(g, experts);
    /* More than 256 experts in use: the first 256 are summed. */
    return moe_sum(b, experts, n_embd, n_tokens, n_used < 256 ? n_used : 256, il);
}

/* ---- iSWA: a base and a sliding-window cache (llama_kv_cache_iswa) -------- */

/* The Hadamard rotations of the base or the SWA cache (llama_kv_cache
 * ctor), from the key head its attention layers share; none for a cache
 * without such layers. The multiple-of-64 tests read layer 0's heads,
 * whichever cache has it. */
static void iswa_rot_inputs(bctx *b, bool swa, int32_t *k_rot, int32_t *v_rot)
{
    int64_t hk = 0;
    for (uint32_t il = 0; il < b->hp->n_layer; il++)
        if ((b->p->layer_flags[il] & GB_LAYER_ATTN) && layer_swa(b, (int)il) == swa)
            hk = head_k(b, (int)il);
    rot_inputs(b, hk, hk > 0 && head_k(b, 0) % 64 == 0, hk > 0 && head_v(b, 0) % 64 == 0,
               k_rot, v_rot);
}

void gb_inputs_kv_iswa(bctx *b)
{
    const gb_params *p = b->p;
    int64_t nv_max = n_embd_v_gqa_max(b, true);
    b->inp_pos = input_1d(b, GGFIT_TYPE_I32, p->n_tokens);
    inp_attn_scale(b);
    cache_inputs(b, p->n_kv, nv_max, &b->k_idxs, &b->v_idxs, &b->kq_mask);
    cache_inputs(b, p->n_kv_swa, nv_max, &b->k_idxs_swa, &b->v_idxs_swa, &b->kq_mask_swa);
    iswa_rot_inputs(b, false, &b->k_rot, &b->v_rot);
    iswa_rot_inputs(b, true, &b->k_rot_swa, &b->v_rot_swa);
    b->inp_out_ids = input_1d(b, GGFIT_TYPE_I32, p->n_outputs);
}

/* Layer il's K and V tensors in a cache of n_kv cells per stream. */
static void iswa_cache(bctx *b, int il, uint32_t n_kv, int32_t *k, int32_t *v)
{
    int64_t n_head_kv = ggfit_model_layer(b->p->m, (uint32_t)il)->n_head_kv;
    /* A transposed V cache pads every row to the widest layer's. */
    int64_t nv = b->p->v_trans ? n_embd_v_gqa_max(b, true) : head_v(b, il) * n_head_kv;
    *k = cache_tensor(b, il, 'k', head_k(b, il) * n_head_kv, n_kv);
    *v = cache_tensor(b, il, 'v', nv, n_kv);
    b->cache_k[il] = *k;
    b->cache_v[il] = *v;
}

/* llm_graph_context::build_attn with llm_graph_input_attn_kv_iswa. Unlike
 * the single cache it expands q, k, v in that order. Without new keys and
 * values (k < 0) the layer reads layer il_kv's cache as it stands. */
static int32_t attn_iswa(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                         int32_t sinks, int il, int il_kv)
{
    gg_graph *g = b->g;
    bool swa = layer_swa(b, il);
    int32_t k_rot = swa ? b->k_rot_swa : b->k_rot, v_rot = swa ? b->v_rot_swa : b->v_rot;
    if (k >= 0) {
        rotate_qkv(b, k_rot, v_rot, &q, &k, &v);
    } else if (k_rot >= 0) {
        q = gb_hadamard(b, q, k_rot);
    }
    gg_expand(g, q);
    int32_t ck, cv;
    if (k >= 0) {
        gg_expand(g, k);
        gg_expand(g, v);
        iswa_cache(b, il, swa ? b->p->n_kv_swa : b->p->n_kv, &ck, &cv);
        gg_expand(g, cpy_k(b, ck, k, swa ? b->k_idxs_swa : b->k_idxs));
        gg_expand(g, cpy_v(b, cv, v, swa ? b->v_idxs_swa : b->v_idxs));
    } else if (il_kv < 0 || il_kv >= il || b->cache_k[il_kv] < 0) {
        b->missing = true;   /* no such cache to share */
        return q;
    } else {
        ck = b->cache_k[il_kv];
        cv = b->cache_v[il_kv];
    }

    int64_t n_head_kv = ggfit_model_layer(b->p->m, (uint32_t)il)->n_head_kv;
    int32_t kk = get_k(b, ck, head_k(b, il), n_head_kv);
    int32_t vv = get_v(b, cv, head_v(b, il), n_head_kv);
    int32_t cur = gb_attn_mha(b, q, kk, vv, swa ? b->kq_mask_swa : b->kq_mask, sinks, il);
    return attn_out(b, cur, v_rot, wo, wo_b, il);
}

int32_t gb_attn_iswa(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                     int32_t sinks, int il)
{
    return attn_iswa(b, wo, wo_b, q, k, v, sinks, il, il);
}

int32_t gb_attn_iswa_shared(bctx *b, int32_t wo, int32_t q, int il, int il_kv)
{
    return attn_iswa(b, wo, -1, q, -1, -1, -1, il, il_kv);
}

/* ---- recurrent state (llama-memory-recurrent.cpp, build_rs) --------------- */

/* Rows of each layer's state: max(1, n_seq_max) cells; the reserved graph
 * reads all of them (init_full: head 0, the zeroed row 0). */
static int64_t rs_rows(const bctx *b)
{
    return b->p->n_seqs ? b->p->n_seqs : 1;
}

/* llama_hparams::n_embd_r and n_embd_s. */
static int64_t n_embd_r(const ggfit_hparams *hp)
{
    if (hp->shortconv_l_cache)
        return (int64_t)hp->n_embd * (hp->shortconv_l_cache - 1);
    return (int64_t)(hp->ssm_d_conv ? hp->ssm_d_conv - 1 : 0) *
           (hp->ssm_d_inner + 2 * (int64_t)hp->ssm_n_group * hp->ssm_d_state);
}

static int64_t n_embd_s(const ggfit_hparams *hp)
{
    return (int64_t)hp->ssm_d_state * hp->ssm_d_inner;
}

void gb_inputs_rs(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_rs = rs_rows(b), n_seqs = b->p->n_seqs, n_extra = n_rs - n_seqs;
    int32_t s_copy = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, n_rs), NULL);
    b->s_copy_main = gg_view(g, s_copy, 1, &n_seqs, NULL, 0);
    b->s_copy_extra = gg_view(g, s_copy, 1, &n_extra, NULL, (uint64_t)n_seqs * 4);
}

int32_t gb_state(bctx *b, int il, char which)
{
    char name[GG_NAME] = "";
    /* one row a sequence, and n_rs_seq snapshots of it after */
    int64_t ne[2] = { which == 'r' ? n_embd_r(b->hp) : n_embd_s(b->hp),
                      rs_rows(b) * (1 + (int64_t)b->p->n_rs_seq) };
    /* The row's own sizes (RWKV's token shift and wkv state), as the
     * recurrent memory sizes the cache (memory_recurrent.c). */
    if (b->p->arch->state_size) {
        uint64_t r, s;
        b->p->arch->state_size(b->hp, &r, &s);
        ne[0] = (int64_t)(which == 'r' ? r : s);
    }
    if (b->g->names)
        cache_name(name, sizeof name, which, il);
    int32_t t = gg_memory(b->g, NULL, name, GGFIT_TYPE_F32, 2, ne, b->p->kv_buft[il], false);
    b->g->t[t].il = il;
    return t;
}

int32_t gb_rs(bctx *b, int32_t s, int64_t state_size, gb_rows_fn rows, void *arg)
{
    gg_graph *g = b->g;
    int64_t n_rs = rs_rows(b), n_seqs = b->p->n_seqs;
    int32_t states = gb_reshape_2d(b, s, state_size, gb_ne(b, s, 1));
    /* Row 0 is cleared in place, to be copied to the other cleared rows. */
    int32_t zero = gg_view(g, states, 1, &state_size, NULL, 0);
    gg_expand(g, gg_scale_inplace(g, zero));
    int32_t out = rows ? rows(b, states, b->s_copy_main, arg)
                       : gg_get_rows(g, states, b->s_copy_main);
    gg_expand(g, out);
    /* The rows past the ubatch's sequences are copied as they are. */
    int32_t extra = gg_get_rows(g, states, b->s_copy_extra);
    uint64_t nb1 = g->t[s].nb[1];
    int32_t dst = gb_view_2d(b, s, state_size, n_rs - n_seqs, nb1, (uint64_t)n_seqs * nb1);
    gg_expand(g, gg_cpy(g, extra, dst));
    return out;
}

/* build_rwkv_token_shift_load: layer il's token shifts from its r state
 * r_all (gb_state), n_embd x token_shift_count x n_seqs. */
int32_t gb_rwkv_shift_load(bctx *b, int32_t r_all)
{
    const ggfit_hparams *hp = b->hp;
    int64_t n_embd_r = (int64_t)hp->token_shift_count * hp->n_embd;
    int32_t ts = gb_rs(b, r_all, n_embd_r, NULL, NULL);
    return gb_reshape_3d(b, ts, hp->n_embd, hp->token_shift_count, b->p->n_seqs);
}

/* build_rwkv_token_shift_store: the new token shifts ts into r_all, from
 * the head (0 in the reserved graph), expanded. */
void gb_rwkv_shift_store(bctx *b, int32_t ts, int32_t r_all)
{
    const ggfit_hparams *hp = b->hp;
    int64_t n_seqs = b->p->n_seqs, n_embd_r = (int64_t)hp->token_shift_count * hp->n_embd;
    int64_t n_src = hp->n_embd * n_seqs * hp->token_shift_count, n_dst = n_embd_r * n_seqs;
    int32_t src = gg_view(b->g, ts, 1, &n_src, NULL, 0);
    gg_expand(b->g, gg_cpy(b->g, src, gg_view(b->g, r_all, 1, &n_dst, NULL, 0)));
}

int32_t gb_cont(bctx *b, int32_t t)
{
    int32_t c = gg_cont(b->g, t);
    gg_name(b->g, c, "%s (cont)", gg_tname(b->g, t));
    return c;
}

int32_t gb_cont_4d(bctx *b, int32_t t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    int32_t c = gg_cont_shape(b->g, t, 4, ne);
    gg_name(b->g, c, "%s (cont)", gg_tname(b->g, t));
    return c;
}

/* ---- model keys ------------------------------------------------------------ */

/* The number under "<arch>.<suffix>" (an integer, float or bool), or def
 * when the file has none: hparams that only some builders read. */
double gb_key(bctx *b, const char *suffix, double def)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", b->hp->arch, suffix);
    int64_t i = ggfit_gguf_find_key(b->gguf, key);
    ggfit_value v;
    if (i < 0 || !ggfit_gguf_value(b->gguf, (uint64_t)i, &v))
        return def;
    switch (v.type) {
    case GGFIT_GGUF_UINT8: case GGFIT_GGUF_UINT16: case GGFIT_GGUF_UINT32:
    case GGFIT_GGUF_UINT64: case GGFIT_GGUF_BOOL:
        return (double)v.u;
    case GGFIT_GGUF_INT8: case GGFIT_GGUF_INT16: case GGFIT_GGUF_INT32: case GGFIT_GGUF_INT64:
        return (double)v.i;
    case GGFIT_GGUF_FLOAT32: case GGFIT_GGUF_FLOAT64:
        return v.f;
    default:
        return def;
    }
}

double gb_key_layer(bctx *b, const char *suffix, int il)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", b->hp->arch, suffix);
    int64_t i = ggfit_gguf_find_key(b->gguf, key);
    ggfit_value v, e;
    if (i < 0 || !ggfit_gguf_value(b->gguf, (uint64_t)i, &v))
        return 0;
    if (v.type != GGFIT_GGUF_ARRAY)
        return gb_key(b, suffix, 0);
    ggfit_value_iter it = {0};
    for (int j = 0; ggfit_value_next(&v, &it, &e); j++)
        if (j == il)
            return e.type == GGFIT_GGUF_FLOAT32 || e.type == GGFIT_GGUF_FLOAT64 ? e.f : 0;
    return 0;
}

/* ---- a K-only cache: MLA (llm_graph_input_attn_k) ----------------------------- */

/* The inputs of a K-only cache: positions, the cache's K indices and mask,
 * output ids (build_inp_pos, build_attn_inp_k, build_inp_out_ids). */
void gb_inputs_k(bctx *b)
{
    const gb_params *p = b->p;
    b->inp_pos = input_1d(b, GGFIT_TYPE_I32, p->n_tokens);
    cache_inputs(b, p->n_kv, 0, &b->k_idxs, NULL, &b->kq_mask);
    /* No V indices and no rotations: this input builds neither. */
    b->v_idxs = b->k_rot = b->v_rot = -1;
    b->inp_out_ids = input_1d(b, GGFIT_TYPE_I32, p->n_outputs);
}

/* Layer il's cache when it holds keys only (llama_kv_cache ctor, is_mla). */
static int32_t k_only_cache(bctx *b, int il)
{
    int64_t n_head_kv = ggfit_model_layer(b->p->m, (uint32_t)il)->n_head_kv;
    return cache_tensor(b, il, 'k', (int64_t)b->hp->n_embd_head_k * n_head_kv, b->p->n_kv);
}

/* The flash-attention result (heads, then tokens) of MLA, decompressed from
 * the latent to each head's value with v_mla, as one matrix product over
 * tokens: the permutations only reinterpret the data. */
static int32_t fattn_mla(bctx *b, int32_t cur, int32_t v_mla, int il)
{
    gg_graph *g = b->g;
    cur = gg_permute(g, cur, 0, 2, 1, 3);
    cur = gg_mul_mat(g, v_mla, cur);
    gb_cb(b, cur, "fattn_mla", il);
    cur = gg_permute(g, cur, 0, 2, 1, 3);
    int32_t c = gg_cont(g, cur);   /* the reshape below needs it contiguous */
    gg_name(g, c, "%s (cont)", gg_tname(g, cur));
    return c;
}

int32_t gb_attn_mha_v(bctx *b, int32_t q, int32_t k, int32_t v, int32_t mask, int32_t sinks,
                      int32_t v_mla, int il)
{
    gg_graph *g = b->g;
    const gg_tensor *tq = &g->t[q], *tv = &g->t[v];
    bool v_trans = tv->nb[1] > tv->nb[2];
    int64_t n_stream = gb_ne(b, k, 3);
    q = gb_view_4d(b, q, tq->ne[0], tq->ne[1], tq->ne[2] / n_stream, n_stream, tq->nb[1],
                   tq->nb[2], tq->nb[3] / (uint64_t)n_stream, 0);
    q = gg_permute(g, q, 0, 2, 1, 3);
    k = gg_permute(g, k, 0, 2, 1, 3);
    v = gg_permute(g, v, 0, 2, 1, 3);
    int32_t cur;
    if (b->p->flash_attn) {
        if (v_trans)
            v = gg_transpose(g, v);
        if (g->t[k].type == GGFIT_TYPE_F32)
            k = gg_cpy_type(g, k, GGFIT_TYPE_F16);
        if (g->t[v].type == GGFIT_TYPE_F32)
            v = gg_cpy_type(g, v, GGFIT_TYPE_F16);
        cur = gg_flash_attn(g, q, k, v, mask, sinks);
        g->t[cur].il = il;   /* the FA probe checks it runs on layer il's device */
        if (v_mla >= 0)
            cur = fattn_mla(b, cur, v_mla, il);
        cur = gb_reshape_2d(b, cur, gb_ne(b, cur, 0) * gb_ne(b, cur, 1),
                            gb_ne(b, cur, 2) * gb_ne(b, cur, 3));
    } else {
        int32_t kq = gg_mul_mat(g, k, q);
        gb_cb(b, kq, "kq", il);
        if (b->attn_soft_cap) {   /* Gemma 2: cap * tanh(kq / cap) */
            kq = gg_scale(g, kq);
            gb_cb(b, kq, "kq_scaled_1", il);
            kq = gg_unary_op(g, GGFIT_OP_UNARY, kq);
            gb_cb(b, kq, "kq_tanh", il);
            kq = gg_scale(g, kq);
            gb_cb(b, kq, "kq_scaled_2", il);
        }
        kq = gg_soft_max(g, kq, mask, sinks);
        gb_cb(b, kq, "kq_soft_max", il);
        if (!v_trans) {
            v = gg_cont(g, gg_transpose(g, v));
            gb_cb(b, v, "v_cont", il);
        }
        int32_t kqv = gg_mul_mat(g, v, kq);
        gb_cb(b, kqv, "kqv", il);
        if (v_mla >= 0) {   /* MQA over the latent, back to MHA */
            kqv = gg_mul_mat(g, v_mla, kqv);
            gb_cb(b, kqv, "kqv_mla", il);
        }
        cur = gg_permute(g, kqv, 0, 2, 1, 3);
        int64_t ne[2] = { gb_ne(b, cur, 0) * gb_ne(b, cur, 1),
                          gb_ne(b, cur, 2) * gb_ne(b, cur, 3) };
        cur = gg_cont_shape(g, cur, 2, ne);
        /* -nkvo: everything between the KV store and here runs on the CPU */
        if (b->p->no_kv_offload)
            g->t[cur].backend = b->p->cpu_backend;
    }
    gg_expand(g, cur);
    return cur;
}

int32_t gb_attn_k(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                  int32_t v_mla, int il)
{
    gg_graph *g = b->g;
    gg_expand(g, q);
    gg_expand(g, v);
    gg_expand(g, k);

    int32_t ck = k_only_cache(b, il);
    gg_expand(g, cpy_k(b, ck, k, b->k_idxs));

    int64_t hk = b->hp->n_embd_head_k, n_head_kv = hk ? gb_ne(b, ck, 0) / hk : 0;
    int32_t kk = get_k(b, ck, hk, n_head_kv);
    /* V is the leading part of each key row (the latent). */
    const gg_tensor *t = &g->t[kk];
    int32_t vv = gb_view_4d(b, kk, gb_ne(b, v, 0), t->ne[1], t->ne[2], t->ne[3], t->nb[1],
                            t->nb[2], t->nb[3], 0);
    int32_t cur = gb_attn_mha_v(b, q, kk, vv, b->kq_mask, -1, v_mla, il);
    return attn_out(b, cur, -1, wo, wo_b, il);
}

/* ---- FFN and MoE with explicit weights --------------------------------------- */

int32_t gb_ffn_w(bctx *b, int32_t cur, int32_t up, int32_t gate, int32_t down, int il)
{
    gg_graph *g = b->g;
    int32_t tmp = gg_mul_mat(g, up, cur);
    gb_cb(b, tmp, "ffn_up", il);
    if (gate >= 0) {
        cur = gg_mul_mat(g, gate, cur);
        gb_cb(b, cur, "ffn_gate", il);
        cur = gg_glu_split(g, cur, tmp);
        gb_cb(b, cur, "ffn_swiglu", il);
    } else {
        cur = gg_unary_op(g, GGFIT_OP_UNARY, tmp);
        gb_cb(b, cur, "ffn_silu", il);
    }
    return gg_mul_mat(g, down, cur);
}

/* build_ffn: SiLU with a parallel gate and optional biases. */
int32_t gb_ffn_bias(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t w;
    int32_t tmp = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, tmp, "ffn_up", il);
    if ((w = gb_weight(b, "blk.%d.ffn_up.bias", il)) >= 0) {
        tmp = gg_binary(g, GGFIT_OP_ADD, tmp, w);
        gb_cb(b, tmp, "ffn_up_b", il);
    }
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_gate.weight", il), cur);
    gb_cb(b, cur, "ffn_gate", il);
    if ((w = gb_weight(b, "blk.%d.ffn_gate.bias", il)) >= 0) {
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
        gb_cb(b, cur, "ffn_gate_b", il);
    }
    cur = gg_glu_split(g, cur, tmp);
    gb_cb(b, cur, "ffn_swiglu", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
    if ((w = gb_weight(b, "blk.%d.ffn_down.bias", il)) >= 0) {
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
    }
    return cur;
}

/* build_ffn with LLM_FFN_SWIGLU, LLM_FFN_SEQ and no gate: SwiGLU over the
 * two halves of the up product. */
int32_t gb_ffn_gate_up(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t up = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, up, "ffn_up", il);
    const gg_tensor *t = &g->t[up];
    int64_t ne[4] = { t->ne[0] / 2, t->ne[1], t->ne[2], t->ne[3] };
    cur = gg_op_shape(g, GGFIT_OP_GLU, t->type, 4, ne, 1, &up);
    gb_cb(b, cur, "ffn_swiglu", il);
    return gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
}

/* llm_graph_context::build_ffn in general: any weight or bias may be -1
 * (no up: the input itself; no gate: the activation of up), an activation
 * of GB_FFN_*, the gate in parallel (par) or after up. */
int32_t gb_build_ffn(bctx *b, int32_t cur, int32_t up, int32_t up_b, int32_t gate,
                     int32_t gate_b, int32_t down, int32_t down_b, int act, bool par, int il)
{
    gg_graph *g = b->g;
    int32_t tmp = up >= 0 ? gg_mul_mat(g, up, cur) : cur;
    gb_cb(b, tmp, "ffn_up", il);
    if (up_b >= 0) {
        tmp = gg_binary(g, GGFIT_OP_ADD, tmp, up_b);
        gb_cb(b, tmp, "ffn_up_b", il);
    }
    if (gate >= 0) {
        cur = gg_mul_mat(g, gate, par ? cur : tmp);
        gb_cb(b, cur, "ffn_gate", il);
        if (gate_b >= 0) {
            cur = gg_binary(g, GGFIT_OP_ADD, cur, gate_b);
            gb_cb(b, cur, "ffn_gate_b", il);
        }
    } else {
        cur = tmp;
    }
    bool gate_par = gate >= 0 && par;
    static const char *const glu[] = { "ffn_swiglu", "ffn_geglu", "ffn_reglu" };
    static const char *const unary[] = { "ffn_silu", "ffn_gelu", "ffn_relu" };
    if (act == GB_FFN_RELU_SQR) {
        cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);
        gb_cb(b, cur, "ffn_relu", il);
        cur = gg_unary_op(g, GGFIT_OP_SQR, cur);
        gb_cb(b, cur, "ffn_sqr(relu)", il);
    } else if (act == GB_FFN_SWIGLU) {   /* over the halves of one product */
        const gg_tensor *t = &g->t[cur];
        int64_t ne[4] = { t->ne[0] / 2, t->ne[1], t->ne[2], t->ne[3] };
        cur = gg_op_shape(g, GGFIT_OP_GLU, t->type, 4, ne, 1, &cur);
        gb_cb(b, cur, "ffn_swiglu", il);
    } else if (gate_par) {
        cur = gg_glu_split(g, cur, tmp);
        gb_cb(b, cur, glu[act], il);
        gate_par = false;
    } else {
        cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);
        gb_cb(b, cur, unary[act], il);
    }
    if (gate_par) {
        cur = gg_binary(g, GGFIT_OP_MUL, cur, tmp);
        gb_cb(b, cur, "ffn_gate_par", il);
    }
    if (down >= 0)
        cur = gg_mul_mat(g, down, cur);
    if (down_b >= 0) {
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, down_b);
    }
    return cur;
}

/* The attention of MiniCPM3 and PLM on a plain KV cache: Q's heads hold a
 * part without RoPE then one with it; attn_kv_a_mqa gives a latent (normed
 * by attn_kv_a_norm, then attn_kv_b: each head's key part and value) and
 * one roped key part shared by the heads (repeated); keys and queries are
 * the concatenations. v_flat: the values go to the cache as 2-D rows
 * (PLM). */
int32_t gb_attn_kv_lora(bctx *b, int32_t cur, int32_t q, int32_t rf, bool v_flat, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t nh = li->n_head, nt = b->p->n_tokens;
    int64_t hk = b->hp->n_embd_head_k, hv = b->hp->n_embd_head_v;
    int64_t rope = b->hp->n_rot, nope = hk - rope;
    int64_t kv_lora = (int64_t)gb_key(b, "attention.kv_lora_rank", 0);
    if (rope <= 0 || nope < 0 || kv_lora <= 0) {
        b->missing = true;
        return cur;
    }
    /* ROPE_SET_OFFSET: Q's heads are roped whole past an offset of nope
     * values; before, its nope and rope parts were views, the rope part
     * roped alone and the two concatenated again. */
    bool offs = ggfit__llama_has(b->p->llama_build, LLAMA_CHANGE_ROPE_SET_OFFSET);
    uint32_t tq = g->t[q].type;
    int32_t q_nope = -1, q_pe = -1;
    if (offs) {
        q = gb_reshape_3d(b, q, hk, nh, nt);
        gb_cb(b, q, "q", il);
    } else {
        q_nope = gb_view_3d(b, q, nope, nh, nt, ggfit_row_bytes(tq, (uint64_t)hk),
                            ggfit_row_bytes(tq, (uint64_t)(hk * nh)), 0);
        gb_cb(b, q_nope, "q_nope", il);
        q_pe = gb_view_3d(b, q, rope, nh, nt, ggfit_row_bytes(tq, (uint64_t)hk),
                          ggfit_row_bytes(tq, (uint64_t)(hk * nh)),
                          ggfit_row_bytes(tq, (uint64_t)nope));
        gb_cb(b, q_pe, "q_pe", il);
    }
    int32_t kvpe = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_a_mqa.weight", il), cur);
    gb_cb(b, kvpe, "kv_pe_compresseed", il);
    uint64_t nb1 = g->t[kvpe].nb[1];
    int32_t kv_c = gb_view_2d(b, kvpe, kv_lora, nt, nb1, 0);
    gb_cb(b, kv_c, "kv_compressed", il);
    int32_t k_pe = gb_view_3d(b, kvpe, rope, 1, nt, nb1, nb1,
                              ggfit_row_bytes(g->t[kvpe].type, (uint64_t)kv_lora));
    gb_cb(b, k_pe, "k_pe", il);
    kv_c = gb_norm(b, kv_c, gb_required(b, "blk.%d.attn_kv_a_norm.weight", il), il);
    gb_cb(b, kv_c, "kv_compressed", il);
    int32_t kv = gg_mul_mat(g, gb_required(b, "blk.%d.attn_kv_b.weight", il), kv_c);
    gb_cb(b, kv, "kv", il);
    uint32_t tkv = g->t[kv].type;
    int32_t k_nope = gb_view_3d(b, kv, nope, nh, nt, ggfit_row_bytes(tkv, (uint64_t)(nope + hv)),
                                ggfit_row_bytes(tkv, (uint64_t)(nh * (nope + hv))), 0);
    gb_cb(b, k_nope, "k_nope", il);
    int32_t v = gb_view_3d(b, kv, hv, nh, nt, ggfit_row_bytes(tkv, (uint64_t)(nope + hv)),
                           ggfit_row_bytes(tkv, (uint64_t)((nope + hv) * nh)),
                           ggfit_row_bytes(tkv, (uint64_t)nope));
    gb_cb(b, v, "v_states", il);
    v = gg_cont(g, v);
    gb_cb(b, v, "v_states", il);
    if (v_flat) {
        v = gb_view_2d(b, v, hv * nh, nt, ggfit_row_bytes(tkv, (uint64_t)(hv * nh)), 0);
        gb_cb(b, v, "v_states", il);
    }
    int32_t q_states, k_states;
    if (offs) {
        q = gb_rope(b, q, rf, il);
        gb_cb(b, q, "q_rope", il);
        k_pe = gb_rope(b, k_pe, rf, il);
        gb_cb(b, k_pe, "k_pe", il);
        q_states = q;
        gb_cb(b, q_states, "q_states", il);
        k_states = gg_concat(g, k_nope, gg_repeat_4d(g, k_pe, rope, nh, nt, 1), 0);
    } else {
        q_pe = gb_rope(b, q_pe, rf, il);
        gb_cb(b, q_pe, "q_pe", il);
        k_pe = gb_rope(b, k_pe, rf, il);
        gb_cb(b, k_pe, "k_pe", il);
        q_states = gg_concat(g, q_nope, q_pe, 0);
        gb_cb(b, q_states, "q_states", il);
        k_states = gg_concat(g, k_nope, gg_repeat(g, k_pe, q_pe), 0);
    }
    gb_cb(b, k_states, "k_states", il);
    return gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il), -1, q_states, k_states, v,
                   -1, il);
}

/* DeepSeek-V3's group-limited routing: the experts of all but the
 * n_group_used groups with the best top-2 sums get -inf. */
static int32_t moe_mask_groups(bctx *b, int32_t sel, const gb_moe *o, int il)
{
    gg_graph *g = b->g;
    int64_t n_groups = o->n_groups, n_tokens = gb_ne(b, sel, 1);
    int32_t groups = gb_reshape_3d(b, sel, o->n_expert / n_groups, n_groups, n_tokens);
    int32_t scores = gg_argsort_top_k(g, groups, 2);
    const gg_tensor *tg = &g->t[groups];
    scores = gg_get_rows(g, gb_reshape_4d(b, groups, 1, tg->ne[0], tg->ne[1], tg->ne[2]),
                         scores);
    const gg_tensor *ts = &g->t[scores];
    scores = gg_sum_rows(g, gb_reshape_3d(b, scores, ts->ne[1], ts->ne[2], ts->ne[3]));
    scores = gb_reshape_2d(b, scores, gb_ne(b, scores, 1), gb_ne(b, scores, 2));
    int32_t top = gg_argsort_top_k(g, scores, o->n_group_used);
    gb_cb(b, top, "ffn_moe_group_topk", il);
    sel = gg_get_rows(g, groups, top);
    sel = gg_set_rows(g, gg_unary_op(g, GGFIT_OP_FILL, groups), sel, top);
    sel = gb_reshape_2d(b, sel, o->n_expert, n_tokens);
    gb_cb(b, sel, "ffn_moe_probs_masked", il);
    return sel;
}

/* The routing weights of the experts each token picks: probs (or, with a
 * selection bias, biased probs) chooses them; the unbiased probs weigh
 * them. Sets *selected. */
static int32_t moe_weights(bctx *b, int32_t cur, const gb_moe *o, int il, int32_t *selected)
{
    gg_graph *g = b->g;
    int64_t n_tokens = gb_ne(b, cur, 1), n_used = o->n_expert_used;
    int32_t logits;
    if (o->has_logits_in) {
        logits = o->logits_in;
    } else {
        logits = gg_mul_mat(g, o->gate_inp, cur);
        gb_cb(b, logits, "ffn_moe_logits", il);
    }
    if (o->gate_inp_b >= 0) {
        logits = gg_binary(g, GGFIT_OP_ADD, logits, o->gate_inp_b);
        gb_cb(b, logits, "ffn_moe_logits_biased", il);
    }
    int32_t probs = logits;
    if (o->gating == GB_GATING_SOFTMAX)
        probs = gg_soft_max(g, logits, -1, -1);
    else if (o->gating == GB_GATING_SIGMOID)
        probs = gg_unary_op(g, GGFIT_OP_UNARY, logits);
    else if (o->gating == GB_GATING_SQRT_SOFTPLUS)
        probs = gg_unary_op(g, GGFIT_OP_SQRT, gg_unary_op(g, GGFIT_OP_UNARY, logits));
    gb_cb(b, probs, "ffn_moe_probs", il);
    int32_t sel = probs;
    if (o->exp_probs_b >= 0) {
        sel = gg_binary(g, GGFIT_OP_ADD, probs, o->exp_probs_b);
        gb_cb(b, sel, "ffn_moe_probs_biased", il);
    }
    if (o->select_logits)
        sel = logits;
    if (o->sel_sigmoid) {   /* build_moe_ffn's GroveMoE branch */
        sel = gg_unary_op(g, GGFIT_OP_UNARY, logits);
        gb_cb(b, sel, "ffn_moe_probs_biased", il);
    }
    if (o->n_groups > 1 && n_tokens > 0)
        sel = moe_mask_groups(b, sel, o, il);
    if (o->has_selected_in) {
        *selected = o->selected_in;
    } else {
        *selected = gg_argsort_top_k(g, sel, n_used);
        gb_cb(b, g->t[*selected].src[0], "ffn_moe_argsort", il);
    }
    gb_cb(b, *selected, "ffn_moe_topk", il);
    if (o->sel_div > 1 && o->n_expert != o->sel_n_expert) {
        int32_t f = gg_cpy_type(g, *selected, GGFIT_TYPE_F32);
        *selected = gg_cpy_type(g, gg_scale(g, f), GGFIT_TYPE_I32);
        probs = gb_reshape_3d(b, probs, 1, o->sel_n_expert, n_tokens);
    } else {
        probs = gb_reshape_3d(b, probs, 1, o->n_expert, n_tokens);
    }
    int32_t w = gg_get_rows(g, probs, *selected);
    gb_cb(b, w, "ffn_moe_weights", il);
    if (o->gating == GB_GATING_SOFTMAX_WEIGHT) {
        w = gg_soft_max(g, gb_reshape_2d(b, w, n_used, n_tokens), -1, -1);
        w = gb_reshape_3d(b, w, 1, n_used, n_tokens);
        gb_cb(b, w, "ffn_moe_weights_softmax", il);
    }
    if (o->norm_w) {
        w = gb_reshape_2d(b, w, n_used, n_tokens);
        int32_t sum = gg_sum_rows(g, w);
        gb_cb(b, sum, "ffn_moe_weights_sum", il);
        sum = gg_clamp(g, sum);   /* no division by zero */
        gb_cb(b, sum, "ffn_moe_weights_sum_clamped", il);
        w = gg_binary(g, GGFIT_OP_DIV, w, sum);
        gb_cb(b, w, "ffn_moe_weights_norm", il);
        w = gb_reshape_3d(b, w, 1, n_used, n_tokens);
    }
    if (o->w_scale != 0.0f && o->w_scale != 1.0f) {
        w = gg_scale(g, w);
        gb_cb(b, w, "ffn_moe_weights_scaled", il);
    }
    return w;
}

/* cur plus each chosen expert's bias (ggml_add_id), when there is one. */
static int32_t add_bias_id(bctx *b, int32_t cur, int32_t bias, int32_t selected,
                           const char *name, int il)
{
    if (bias < 0)
        return cur;
    cur = gg_add_id(b->g, cur, bias, selected);
    gb_cb(b, cur, name, il);
    return cur;
}

/* The experts' activation (o->act) of gate and up, each plus its bias, or
 * of the halves of one gate_up product; without gate experts, SiLU of up. */
static int32_t moe_act(bctx *b, int32_t cur, const gb_moe *o, int32_t selected, int il)
{
    gg_graph *g = b->g;
    int32_t up, gate = -1;
    if (o->gate_up_exps >= 0) {
        int32_t gu = gg_mul_mat_id(g, o->gate_up_exps, cur, selected);
        gb_cb(b, gu, "ffn_moe_gate_up", il);
        const gg_tensor *t = &g->t[gu];
        int64_t n_ff = t->ne[0] / 2;
        uint64_t nb1 = t->nb[1], nb2 = t->nb[2], nb0 = t->nb[0];
        gate = gb_view_3d(b, gu, n_ff, t->ne[1], t->ne[2], nb1, nb2, 0);
        gb_cb(b, gate, "ffn_moe_gate", il);
        up = gb_view_3d(b, gu, n_ff, gb_ne(b, gu, 1), gb_ne(b, gu, 2), nb1, nb2,
                        (uint64_t)n_ff * nb0);
        gb_cb(b, up, "ffn_moe_up", il);
    } else {
        up = gg_mul_mat_id(g, o->up_exps, cur, selected);
        gb_cb(b, up, "ffn_moe_up", il);
        up = add_bias_id(b, up, o->up_exps_b, selected, "ffn_moe_up_biased", il);
        if (o->gate_exps >= 0) {
            gate = gg_mul_mat_id(g, o->gate_exps, cur, selected);
            gb_cb(b, gate, "ffn_moe_gate", il);
            gate = add_bias_id(b, gate, o->gate_exps_b, selected, "ffn_moe_gate_biased", il);
        }
    }
    if (o->act == GB_MOE_SITU && gate >= 0) {   /* build_moe_ffn's LLM_FFN_SITU */
        int32_t act = gg_scale(g, gg_unary_op(g, GGFIT_OP_UNARY, gg_scale(g, gate)));
        act = gg_binary(g, GGFIT_OP_MUL, act, gg_unary_op(g, GGFIT_OP_UNARY, gate));
        if (o->situ_linear)
            up = gg_scale(g, gg_unary_op(g, GGFIT_OP_UNARY, gg_scale(g, up)));
        cur = gg_binary(g, GGFIT_OP_MUL, act, up);
        gb_cb(b, cur, "ffn_geglu", il);
        return cur;
    }
    if (o->act == GB_MOE_GELU) {   /* build_moe_ffn's LLM_FFN_GELU */
        cur = gate < 0 ? gg_unary_op(g, GGFIT_OP_UNARY, up) : gg_glu_split(g, gate, up);
        gb_cb(b, cur, gate < 0 ? "ffn_moe_gelu" : "ffn_moe_geglu", il);
        return cur;
    }
    if (gate < 0 && o->act == GB_MOE_RELU_SQR) {
        cur = gg_unary_op(g, GGFIT_OP_UNARY, up);
        cur = gg_unary_op(g, GGFIT_OP_SQR, cur);
        gb_cb(b, cur, "ffn_moe_relu_sqr", il);
        return cur;
    }
    if (gate < 0) {
        cur = gg_unary_op(g, GGFIT_OP_UNARY, up);
        gb_cb(b, cur, "ffn_moe_silu", il);
        return cur;
    }
    if (o->swiglu_limit > 1e-6f && o->act == GB_MOE_SILU && o->gate_up_exps < 0 && il >= 0 &&
        o->clamp_gate) {
        up = gg_clamp(g, up);
        gb_cb(b, up, "ffn_moe_up_clamped", il);
        gate = gg_clamp(g, gate);
        gb_cb(b, gate, "ffn_moe_gate_clamped", il);
        cur = gg_glu_split(g, gate, up);
        gb_cb(b, cur, "ffn_moe_swiglu_limited", il);
        return cur;
    }
    if (o->swiglu_limit > 1e-6f && o->act == GB_MOE_SILU && o->gate_up_exps < 0 && il >= 0) {
        up = gg_clamp(g, up);
        gb_cb(b, up, "ffn_moe_up_clamped", il);
        int32_t act = gg_unary_op(g, GGFIT_OP_UNARY, gate);
        gb_cb(b, act, "ffn_moe_silu", il);
        act = gg_clamp(g, act);
        gb_cb(b, act, "ffn_moe_silu_clamped", il);
        cur = gg_binary(g, GGFIT_OP_MUL, act, up);
        gb_cb(b, cur, "ffn_moe_swiglu_limited", il);
        return cur;
    }
    cur = gg_glu_split(g, gate, up);
    gb_cb(b, cur, o->act == GB_MOE_SWIGLU_OAI ? "ffn_moe_swiglu_oai" : "ffn_moe_swiglu", il);
    return cur;
}

int32_t gb_moe_ffn_ex(bctx *b, int32_t cur, const gb_moe *o, int il)
{
    gg_graph *g = b->g;
    int64_t n_embd = gb_ne(b, cur, 0), n_tokens = gb_ne(b, cur, 1);
    /* GroveMoE's chunk experts use fewer than hparams.n_expert_used */
    int64_t n_parts = o->sel_div > 1 ? o->n_expert_used : b->hp->n_expert_used;
    if (n_parts < 1 || n_parts > 256) {
        b->missing = true;   /* llama.cpp asserts 0 < n_expert_used <= 256 */
        return cur;
    }
    int32_t selected;
    int32_t weights = moe_weights(b, cur, o, il, &selected);
    gg_expand(g, weights);   /* early, as llama.cpp does for its fused top-k */
    cur = gb_reshape_3d(b, cur, n_embd, 1, n_tokens);
    if (o->weight_before_ffn) {
        /* ggml_repeat_4d of the input to one row per chosen expert */
        int64_t ne[4] = { n_embd, o->n_expert_used, n_tokens, 1 };
        cur = gg_op_shape(g, GGFIT_OP_REPEAT, g->t[cur].type, 4, ne, 1, &cur);
        cur = gg_binary(g, GGFIT_OP_MUL, cur, weights);
        gb_cb(b, cur, "ffn_moe_weighted", il);
    }
    cur = moe_act(b, cur, o, selected, il);
    int32_t experts = gg_mul_mat_id(g, o->down_exps, cur, selected);
    if (o->has_down_exps_s) {
        int64_t n_exp = gb_ne(b, o->down_exps_s, 0);
        int32_t sc = gb_reshape_3d(b, o->down_exps_s, 1, n_exp, 1);
        int64_t ne[4] = { 1, n_exp, n_tokens, 1 };
        sc = gg_op_shape(g, GGFIT_OP_REPEAT, g->t[sc].type, 4, ne, 1, &sc);
        sc = gg_get_rows(g, sc, selected);
        experts = gg_binary(g, GGFIT_OP_MUL, experts, sc);
    }
    gb_cb(b, experts, "ffn_moe_down", il);
    experts = add_bias_id(b, experts, o->down_exps_b, selected, "ffn_moe_down_biased", il);
    if (!o->weight_before_ffn) {
        experts = gg_binary(g, GGFIT_OP_MUL, experts, weights);
        gb_cb(b, experts, "ffn_moe_weighted", il);
    }
    gg_expand(g, experts);
    return moe_sum(b, experts, n_embd, n_tokens, n_parts, il);
}

int32_t gb_moe_shared(bctx *b, int32_t cur, const gb_moe *o, int il)
{
    int32_t moe_out = gb_moe_ffn_ex(b, cur, o, il);
    gb_cb(b, moe_out, "ffn_moe_out", il);
    int32_t shexp = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_gate_shexp.weight", il),
                             gb_required(b, "blk.%d.ffn_down_shexp.weight", il), il);
    gb_cb(b, shexp, "ffn_shexp", il);
    cur = gg_binary(b->g, GGFIT_OP_ADD, moe_out, shexp);
    gb_cb(b, cur, "ffn_out", il);
    return cur;
}

int32_t gb_moe_shared_layer(bctx *b, int gating, int32_t cur, int il)
{
    gb_moe o;
    gb_moe_layer(b, il, gating, &o);
    return gb_moe_shared(b, cur, &o, il);
}

void gb_moe_layer(bctx *b, int il, int gating, gb_moe *o)
{
    int g = (int)gb_key(b, "expert_gating_func", 0);
    *o = (gb_moe){
        .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
        .gate_up_exps = gb_weight(b, "blk.%d.ffn_gate_up_exps.weight", il),
        .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
        .exp_probs_b = gb_weight(b, "blk.%d.exp_probs_b.bias", il),
        .gate_inp_b = -1, .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
        .gating = g ? g : gating,
        .norm_w = gb_key(b, "expert_weights_norm", 0) != 0,
        .w_scale = (float)gb_key(b, "expert_weights_scale", 0),
        .n_expert = b->hp->n_expert,
        .n_expert_used = b->hp->n_expert_used,
        .n_groups = (uint32_t)gb_key(b, "expert_group_count", 0),
        .n_group_used = (uint32_t)gb_key(b, "expert_group_used_count", 0),
    };
    o->up_exps = o->gate_exps = -1;
    if (o->gate_up_exps < 0) {
        o->up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il);
        o->gate_exps = gb_required(b, "blk.%d.ffn_gate_exps.weight", il);
    }
    /* SQRT_SOFTPLUS and unknown gatings are not modelled. */
    if (o->gating < GB_GATING_SOFTMAX || o->gating > GB_GATING_SOFTMAX_WEIGHT)
        b->missing = true;
}

/* ---- the llama-like block stack ------------------------------------------ */

/* llama_model_llama::graph, which llama.cpp repeats with small changes for
 * Qwen3 (dense and MoE), Mistral 3 and Qwen3-VL: pre-norm attention with
 * RoPE, then a dense or MoE SwiGLU FFN. The graphs differ in Q/K norms
 * (Qwen3), and in Mistral 3's temperature scale on Q (temp: the model has
 * one) and its LongRoPE factors (long_short: read rope_factors_long/short
 * without rope_freqs). */
void gb_build_llama_like(bctx *b, unsigned flags)
{
    bool qk_norm = (flags & GB_LLAMA_QK_NORM) != 0;
    bool long_short = (flags & GB_LLAMA_LONG_SHORT) != 0;
    bool temp = (flags & GB_LLAMA_TEMP) != 0;
    bool any_qkv = (flags & GB_LLAMA_ANY_QKV) != 0;
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int64_t n_layer = hp->n_layer;
    int32_t rf_leaf[GGFIT_MAX_BUFTS];
    for (int i = 0; i < GGFIT_MAX_BUFTS; i++)
        rf_leaf[i] = -1;
    int32_t inpL = gb_inp_embd(b);
    b->attn_temp = temp;
    gb_inputs_kv(b);
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t rf = qk_norm ? -1 : gb_rope_factors(b, il);
        if (long_short && rf < 0)   /* LongRoPE's long or short factors */
            rf = gb_rope_factors_ls(b, il, rf_leaf);
        int32_t q, k, v;
        if (any_qkv)
            gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, false, &q, &k, &v);
        else
            gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        if (qk_norm) {
            q = gb_norm(b, q, gb_required(b, "blk.%d.attn_q_norm.weight", il), il);
            gb_cb(b, q, "Qcur_normed", il);
            q = gg_rope(g, q, b->inp_pos, -1);
            k = gb_norm(b, k, gb_required(b, "blk.%d.attn_k_norm.weight", il), il);
            gb_cb(b, k, "Kcur_normed", il);
            k = gg_rope(g, k, b->inp_pos, -1);
        } else {
            q = gb_rope(b, q, rf, il);
            k = gb_rope(b, k, rf, il);
        }
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        if (b->inp_attn_scale >= 0) {
            q = gg_binary(g, GGFIT_OP_MUL, q, b->inp_attn_scale);
            gb_cb(b, q, "Qcur_attn_temp_scaled", il);
        }
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                         gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
        if (!qk_norm)
            gb_cb(b, cur, "attn_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpSA);
        int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
        gb_cb(b, ffn_inp, "ffn_inp", il);
        cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
        gb_cb(b, cur, "ffn_norm", il);
        if (gb_weight(b, "blk.%d.ffn_gate_inp.weight", il) < 0) {
            cur = gb_ffn(b, cur, il);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            /* Mistral 3's gate experts are optional, as llama's are. */
            cur = gb_moe_ffn(b, cur, il, !qk_norm || hp->n_expert_used > 0);
            gb_cb(b, cur, "ffn_moe_out", il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        if (!qk_norm)
            gb_cb(b, cur, "ffn_out", il);
        gb_cb(b, cur, "l_out", il);
        if (il < b->n_deepstack) {
            /* Deepstack: the embedding slice il + 1 of each input row is
             * added after layer il, image or not (for text it is the
             * padding's zeros). */
            const gg_tensor *e = &g->t[b->t_inp_embd];
            int32_t ds = gb_view_2d(b, b->t_inp_embd, hp->n_embd, b->p->n_tokens, e->nb[1],
                                    (uint64_t)(il + 1) * hp->n_embd * sizeof(float));
            /* After the last layer only the output rows are left: ggml_add
             * aborts unless the slice repeats onto them (llama.cpp has no
             * graph for a deepstack that reaches the last layer then). */
            if (gb_ne(b, cur, 1) % b->p->n_tokens != 0)
                b->missing = true;
            cur = gg_binary(g, GGFIT_OP_ADD, cur, ds);
            gb_cb(b, cur, "deepstack_out", il);
        }
        inpL = cur;
    }
    if (b->output)
        b->output(b, inpL);
    else
        gb_output(b, inpL);
}

/* ---- the graph of an architecture ---------------------------------------- */

/* ---- embeddings ------------------------------------------------------------ */

/* llm_graph_context::build_pooling over res->t_embd, then build_dense_out:
 * the sentence-transformers projections dense_2 (and its bias) and dense_3
 * when the model has them (only the architectures that load them can have
 * them: llama.cpp refuses a file with tensors it does not create). The
 * classification head's tensors (cls, cls.output, cls.norm) are the
 * model's, when it has them. */
static void gb_pooling(bctx *b)
{
    gg_graph *g = b->g;
    const gb_params *p = b->p;
    int32_t inp = b->t_embd, cur = inp;
    if (inp < 0) {
        b->missing = true;   /* llama.cpp asserts: no t_embd */
        return;
    }
    int pooling = p->pooling;
    bool mean = pooling == GGFIT_POOLING_MEAN ||
                (pooling == GGFIT_POOLING_RANK && p->arch->rank_mean);
    if (pooling != GGFIT_POOLING_NONE && mean) {
        /* build_inp_mean: n_tokens x n_seqs_unq; the means as one matmul */
        int32_t inp_mean = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, p->n_tokens, p->n_seqs),
                                    "inp_mean");
        int32_t t = gg_cont(g, gg_transpose(g, inp));
        if (g->t[t].ne[0] != (int64_t)p->n_tokens) {
            b->missing = true;   /* ggml_mul_mat asserts: fewer outputs than tokens */
            return;
        }
        cur = gg_mul_mat(g, t, inp_mean);
    } else if (pooling != GGFIT_POOLING_NONE) {
        /* build_inp_cls: one row per sequence (CLS, LAST and RANK) */
        int32_t inp_cls = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_seqs), "inp_cls");
        cur = gg_get_rows(g, inp, inp_cls);
    }
    if (pooling == GGFIT_POOLING_RANK) {
        int32_t w = gb_weight(b, "cls.weight", 0), w_b;
        if (w >= 0) {
            cur = gg_mul_mat(g, w, cur);
            if ((w_b = gb_weight(b, "cls.bias", 0)) >= 0)
                cur = gg_binary(g, GGFIT_OP_ADD, cur, w_b);
            cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);   /* GELU or tanh */
            int32_t norm = gb_weight(b, "cls.norm.weight", 0);
            if (norm >= 0)
                cur = gb_layer_norm(b, cur, norm, -1, -1);
        }
        if ((w = gb_weight(b, "cls.output.weight", 0)) >= 0) {
            cur = gg_mul_mat(g, w, cur);
            if ((w_b = gb_weight(b, "cls.output.bias", 0)) >= 0)
                cur = gg_binary(g, GGFIT_OP_ADD, cur, w_b);
        }
        if (p->arch->rank_softmax)
            cur = gg_soft_max(g, cur, -1, -1);
    }
    gb_cb(b, cur, "result_embd_pooled", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;   /* llm_graph_result::set_outputs */
    gg_expand(g, cur);

    int32_t d2 = gb_weight(b, "dense_2.weight", 0), d2_b = gb_weight(b, "dense_2.bias", 0);
    int32_t d3 = gb_weight(b, "dense_3.weight", 0);
    if (d2 < 0 && d2_b < 0 && d3 < 0)
        return;
    if (d2 >= 0)
        cur = gg_mul_mat(g, d2, cur);
    if (d2_b >= 0)
        cur = gg_binary(g, GGFIT_OP_ADD, cur, d2_b);
    if (d3 >= 0)
        cur = gg_mul_mat(g, d3, cur);
    gb_cb(b, cur, "result_embd_pooled", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

ggfit_status ggfit__build_graph(gg_graph *g, const gb_params *p)
{
    bctx b = { .g = g, .p = p, .hp = ggfit_model_hparams(p->m),
               .gguf = ggfit_model_gguf(p->m), .t_embd = -1 };
    /* The registry row's builder; the generic row of an architecture
     * llama.cpp has no rules for has none. */
    void (*build)(bctx *) = p->arch->build;
    /* an MTP context on an architecture with an MTP head runs its head's
     * graph (llm_graph_type DECODER_MTP); the others' their own graph */
    if (p->mtp && p->arch->mtp)
        build = p->arch->build_mtp;
    if (!build)
        return GGFIT_EUNSUPPORTED;
    /* llama.cpp cannot load a model without its embeddings or with empty
     * blocks; there is no graph to build (and a hostile header could make
     * thousands of empty ones). */
    if (ggfit_gguf_find_tensor(b.gguf, "token_embd.weight") < 0)
        return GGFIT_EUNSUPPORTED;
    for (uint32_t il = 0; il < b.hp->n_layer && !p->arch->blocks_unnamed; il++)
        if (ggfit_model_layer(p->m, il)->n_bytes == 0 && ggfit__model_block_of(p->m, il) == il)
            return GGFIT_EUNSUPPORTED;
    uint64_t n = ggfit_model_n_tensors(p->m), n_all = n + 2 * (uint64_t)b.hp->n_layer;
    b.leaf_of = ggfit__malloc((size_t)(n_all ? n_all : 1) * sizeof *b.leaf_of);
    if (!b.leaf_of)
        return GGFIT_ENOMEM;
    for (uint64_t i = 0; i < n_all; i++)
        b.leaf_of[i] = -1;
    b.cache_k = b.leaf_of + n;   /* the same block: freed with it */
    b.cache_v = b.cache_k + b.hp->n_layer;
    for (int i = 0; i < GGFIT_MAX_BUFTS; i++)
        b.rope_leaf[i] = -1;
    /* Slot 0: scratch for failed allocations, so it must exist. */
    if (!gg_reserve(g, 1)) {
        ggfit_free(b.leaf_of);
        return GGFIT_ENOMEM;
    }
    gg_new_1d(g, GGFIT_TYPE_F32, 1);
    build(&b);
    /* llama_model::build_graph: with --embedding the pooling layer and the
     * dense projections come after the architecture's graph. */
    if (p->pooling >= 0 && !b.missing && !g->oom)
        gb_pooling(&b);
    ggfit_free(b.leaf_of);
    if (g->oom)
        return GGFIT_ENOMEM;
    if (b.missing)
        return GGFIT_EUNSUPPORTED;
    gg_finish(g);
    return GGFIT_OK;
}

/* ---- no memory module (encoders: BERT and its kin) ------------------------ */

int32_t gb_layer_norm(bctx *b, int32_t cur, int32_t w, int32_t bias, int il)
{
    gg_graph *g = b->g;
    cur = gg_norm(g, cur);
    if (w >= 0 || bias >= 0)
        gb_cb(b, cur, "norm", il);
    if (w >= 0) {
        cur = gg_binary(g, GGFIT_OP_MUL, cur, w);
        if (bias >= 0)
            gb_cb(b, cur, "norm_w", il);
    }
    if (bias >= 0)
        cur = gg_binary(g, GGFIT_OP_ADD, cur, bias);
    return cur;
}

void gb_inputs_no_cache(bctx *b)
{
    gg_graph *g = b->g;
    int64_t nt = b->p->n_tokens;
    uint32_t type = b->p->flash_attn ? GGFIT_TYPE_F16 : GGFIT_TYPE_F32;
    b->kq_mask = gg_input(g, gg_new_4d(g, type, nt, nt, 1, 1), NULL);
    b->kq_mask_swa = -1;
    if (b->p->swa)
        b->kq_mask_swa = gg_input(g, gg_new_4d(g, type, nt, nt, 1, 1), NULL);
}

int32_t gb_attn_no_cache(bctx *b, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                         int il)
{
    gg_graph *g = b->g;
    gg_expand(g, q);
    gg_expand(g, k);
    gg_expand(g, v);
    bool swa = layer_swa(b, il) && b->kq_mask_swa >= 0;
    int32_t cur = gb_attn_mha(b, q, k, v, swa ? b->kq_mask_swa : b->kq_mask, -1, il);
    gb_cb(b, cur, "kqv_out", il);
    if (wo >= 0)
        cur = gg_mul_mat(g, wo, cur);
    if (wo_b >= 0)
        cur = gg_binary(g, GGFIT_OP_ADD, cur, wo_b);
    return cur;
}

/* ---- the older transformers (GPT-2, Falcon, BLOOM, MPT, ...) ------------- */

/* llm_graph_context::build_qkv with hparams.f_clamp_kqv (clamp: the
 * architecture reads attention.clamp_kqv): the fused path (attn_qkv, its
 * bias), else separate Q/K/V with optional biases, each product clamped
 * when the file's clamp_kqv is above 0. Without a clamp: gb_qkv_fused
 * when the layer has attn_qkv, else gb_qkv. */
void gb_build_qkv_clamp(bctx *b, int32_t cur, int il, int64_t n_head, int64_t n_head_kv,
                        bool clamp, int32_t *q, int32_t *k, int32_t *v)
{
    gg_graph *g = b->g;
    int64_t hd = b->hp->n_embd_head_v, nt = b->p->n_tokens;
    clamp = clamp && gb_key(b, "attention.clamp_kqv", 0) > 0;
    if (!clamp) {
        int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
        if (wqkv >= 0)
            gb_qkv_fused(b, cur, wqkv, il, n_head, n_head_kv, q, k, v);
        else
            gb_qkv(b, cur, il, n_head, n_head_kv, q, k, v);
        return;
    }
    int32_t w = gb_weight(b, "blk.%d.attn_qkv.weight", il), bias;
    if (w >= 0) {
        int32_t qkv = gg_mul_mat(g, w, cur);
        gb_cb(b, qkv, "wqkv", il);
        if ((bias = gb_weight(b, "blk.%d.attn_qkv.bias", il)) >= 0) {
            qkv = gg_binary(g, GGFIT_OP_ADD, qkv, bias);
            gb_cb(b, qkv, "wqkv_b", il);
        }
        if (clamp) {
            qkv = gg_clamp(g, qkv);
            gb_cb(b, qkv, "wqkv_clamped", il);
        }
        uint32_t type = g->t[qkv].type;
        uint64_t head = ggfit_row_bytes(type, (uint64_t)hd), nb1 = g->t[qkv].nb[1];
        *q = gb_view_3d(b, qkv, hd, n_head, nt, head, nb1, 0);
        *k = gb_view_3d(b, qkv, hd, n_head_kv, nt, head, nb1,
                        ggfit_row_bytes(type, (uint64_t)(hd * n_head)));
        *v = gb_view_3d(b, qkv, hd, n_head_kv, nt, head, nb1,
                        ggfit_row_bytes(type, (uint64_t)(hd * (n_head + n_head_kv))));
    } else {
        static const char *const wn[3] = { "blk.%d.attn_q.weight", "blk.%d.attn_k.weight",
                                           "blk.%d.attn_v.weight" };
        static const char *const bn[3] = { "blk.%d.attn_q.bias", "blk.%d.attn_k.bias",
                                           "blk.%d.attn_v.bias" };
        static const char *const cn[3] = { "Qcur", "Kcur", "Vcur" };
        static const char *const kn[3] = { "Qcur_clamped", "Kcur_clamped", "Vcur_clamped" };
        int32_t *out[3] = { q, k, v };
        for (int i = 0; i < 3; i++) {
            int32_t t = gg_mul_mat(g, gb_required(b, wn[i], il), cur);
            gb_cb(b, t, cn[i], il);
            if ((bias = gb_weight(b, bn[i], il)) >= 0) {
                t = gg_binary(g, GGFIT_OP_ADD, t, bias);
                gb_cb(b, t, cn[i], il);
            }
            if (clamp) {
                t = gg_clamp(g, t);
                gb_cb(b, t, kn[i], il);
            }
            *out[i] = t;
        }
        *q = gb_reshape_3d(b, *q, hd, n_head, nt);
        *k = gb_reshape_3d(b, *k, hd, n_head_kv, nt);
        *v = gb_reshape_3d(b, *v, hd, n_head_kv, nt);
    }
    gb_cb(b, *q, "Qcur", il);
    gb_cb(b, *k, "Kcur", il);
    gb_cb(b, *v, "Vcur", il);
}

/* llm_graph_context::build_ffn on layer il's ffn_up, ffn_gate (a parallel
 * gate when present) and ffn_down, each with its optional bias, and the
 * optional activation scales (ffn.act, divided after GELU). */
int32_t gb_ffn_act(bctx *b, int32_t cur, int il, int act)
{
    gg_graph *g = b->g;
    int32_t w;
    int32_t tmp = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, tmp, "ffn_up", il);
    if ((w = gb_weight(b, "blk.%d.ffn_up.bias", il)) >= 0) {
        tmp = gg_binary(g, GGFIT_OP_ADD, tmp, w);
        gb_cb(b, tmp, "ffn_up_b", il);
    }
    int32_t gate = gb_weight(b, "blk.%d.ffn_gate.weight", il);
    if (gate >= 0) {
        cur = gg_mul_mat(g, gate, cur);
        gb_cb(b, cur, "ffn_gate", il);
        if ((w = gb_weight(b, "blk.%d.ffn_gate.bias", il)) >= 0) {
            cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
            gb_cb(b, cur, "ffn_gate_b", il);
        }
        cur = gg_glu_split(g, cur, tmp);
        gb_cb(b, cur, act == GB_FFN_GELU ? "ffn_geglu" : "ffn_swiglu", il);
    } else {
        cur = gg_unary_op(g, GGFIT_OP_UNARY, tmp);
        gb_cb(b, cur, act == GB_FFN_GELU ? "ffn_gelu" : "ffn_silu", il);
        if (act == GB_FFN_GELU && (w = gb_weight(b, "blk.%d.ffn.act", il)) >= 0) {
            cur = gg_binary(g, GGFIT_OP_DIV, cur, w);
            gb_cb(b, cur, "ffn_act", il);
        }
    }
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
    if ((w = gb_weight(b, "blk.%d.ffn_down.bias", il)) >= 0) {
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
    }
    return cur;
}

/* The end of a graph with LayerNorm: output_norm (its bias optional), the
 * output matrix and its optional bias, both outputs, expanded. */
void gb_output_ln(bctx *b, int32_t inpL)
{
    gg_graph *g = b->g;
    int32_t cur = gb_layer_norm(b, inpL, gb_required(b, "output_norm.weight", 0),
                                gb_weight(b, "output_norm.bias", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    int32_t out_b = gb_weight(b, "output.bias", 0);
    if (out_b >= 0)
        cur = gg_binary(g, GGFIT_OP_ADD, cur, out_b);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* build_inp_embd plus the learned positions (position_embd rows of the
 * positions, added), as GPT-2, StarCoder and MPT begin; the positions and
 * the KV cache's inputs are made first (gb_inputs_kv). */
/* build_inp_embd with hparams.f_embedding_scale != 0 (Grok; Granite keeps
 * its own copy): the selected token path, contiguous, is scaled before it
 * is named "embd". */
int32_t gb_inp_embd_scaled(bctx *b)
{
    gg_graph *g = b->g;
    int64_t n_tokens = b->p->n_tokens;
    int32_t tokens = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, n_tokens), "inp_tokens");
    int32_t embd = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, b->hp->n_embd, n_tokens),
                            "inp_embd");
    int32_t cur = gg_get_rows(g, gb_required(b, "token_embd.weight", 0), tokens);
    gg_expand(g, cur);               /* ggml_build_forward_select */
    gg_expand_no_compute(g, embd);
    b->t_inp_embd = cur;
    cur = gg_scale(g, cur);          /* get_rows is contiguous: no cont */
    gb_cb(b, cur, "embd", -1);
    gg_expand(g, cur);
    return cur;
}

int32_t gb_inp_embd_pos(bctx *b, int32_t inpL)
{
    gg_graph *g = b->g;
    int32_t pos = gg_get_rows(g, gb_required(b, "position_embd.weight", 0), b->inp_pos);
    gb_cb(b, pos, "pos_embd", -1);
    inpL = gg_binary(g, GGFIT_OP_ADD, inpL, pos);
    gb_cb(b, inpL, "inpL", -1);
    return inpL;
}

/* The GPT-2-like block stack that llama.cpp repeats for GPT-2, StarCoder,
 * StarCoder 2, CodeShell, GPT-NeoX, BLOOM and MPT: LayerNorm with biases,
 * build_qkv, attention with its output bias, a GELU FFN with biases. flags
 * (GB_GPT_*) say how they differ. */
void gb_build_gpt_like(bctx *b, unsigned flags)
{
    gg_graph *g = b->g;
    int n_layer = (int)b->hp->n_layer;
    int32_t inpL = gb_inp_embd(b);
    gb_inputs_kv(b);
    if ((flags & GB_GPT_POS) || gb_weight(b, "position_embd.weight", 0) >= 0)
        inpL = gb_inp_embd_pos(b, inpL);
    if (flags & GB_GPT_TOK_NORM) {   /* BLOOM: the embeddings' norm, on layer 0 */
        inpL = gb_layer_norm(b, inpL, gb_required(b, "token_embd_norm.weight", 0),
                             gb_required(b, "token_embd_norm.bias", 0), 0);
        gb_cb(b, inpL, "inp_norm", -1);
    }
    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
        int64_t hd = b->hp->n_embd_head_v, nt = b->p->n_tokens;
        int32_t cur = gb_layer_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il),
                                    gb_weight(b, "blk.%d.attn_norm.bias", il), il);
        gb_cb(b, cur, "attn_norm", il);
        int32_t q, k, v;
        gb_build_qkv_clamp(b, cur, il, li->n_head, li->n_head_kv, (flags & GB_GPT_CLAMP) != 0,
                           &q, &k, &v);
        int32_t qn = gb_weight(b, "blk.%d.attn_q_norm.weight", il);
        if (qn >= 0) {   /* MPT: LayerNorms over all of Q and of K */
            /* ggml_reshape_2d asserts on the views of a fused QKV. */
            if (!gg_is_contiguous(g, q) || !gg_is_contiguous(g, k))
                b->missing = true;
            q = gb_reshape_2d(b, q, hd * li->n_head, nt);
            k = gb_reshape_2d(b, k, hd * li->n_head_kv, nt);
            q = gb_layer_norm(b, q, qn, gb_weight(b, "blk.%d.attn_q_norm.bias", il), il);
            gb_cb(b, q, "Qcur", il);
            k = gb_layer_norm(b, k, gb_weight(b, "blk.%d.attn_k_norm.weight", il),
                              gb_weight(b, "blk.%d.attn_k_norm.bias", il), il);
            gb_cb(b, k, "Kcur", il);
            q = gb_reshape_3d(b, q, hd, li->n_head, nt);
            k = gb_reshape_3d(b, k, hd, li->n_head_kv, nt);
        }
        if (flags & GB_GPT_ROPE) {
            q = gg_rope(g, q, b->inp_pos, -1);
            k = gg_rope(g, k, b->inp_pos, -1);
            gb_cb(b, q, "Qcur", il);
            gb_cb(b, k, "Kcur", il);
            gb_cb(b, v, "Vcur", il);
        }
        cur = gb_attn(b, gb_required(b, "blk.%d.attn_output.weight", il),
                      gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, -1, il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpL);
        if (flags & GB_GPT_PAR) {   /* GPT-NeoX's parallel residual */
            int32_t attn_out = cur;
            cur = gb_layer_norm(b, inpL, gb_required(b, "blk.%d.ffn_norm.weight", il),
                                gb_weight(b, "blk.%d.ffn_norm.bias", il), il);
            gb_cb(b, cur, "ffn_norm", il);
            cur = gb_ffn_act(b, cur, il, GB_FFN_GELU);
            gb_cb(b, cur, "ffn_out", il);
            cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
            gb_cb(b, cur, "ffn_out", il);
            cur = gg_binary(g, GGFIT_OP_ADD, cur, attn_out);
        } else {
            int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
            gb_cb(b, ffn_inp, "ffn_inp", il);
            cur = gb_layer_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il),
                                gb_weight(b, "blk.%d.ffn_norm.bias", il), il);
            gb_cb(b, cur, "ffn_norm", il);
            cur = gb_ffn_act(b, cur, il, GB_FFN_GELU);
            gb_cb(b, cur, "ffn_out", il);
            cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        }
        gb_cb(b, cur, "l_out", il);
        inpL = cur;
    }
    gb_output_ln(b, inpL);
}
