/*
 * dots3note.c - src/models/dots3note.cpp: dots3-note (llama.cpp b10569).
 * DeepSeek V3.2's absorbed MLA with DSA sparse attention on the full
 * layers, and on the others a sliding window over an MLA of their own
 * sizes (attention.kv_lora_rank_swa, key_length_mla_swa,
 * value_length_mla_swa; more or fewer heads: head_count is per layer). A
 * head-wise sigmoid gate scales each head's output before attn_output;
 * the rope half of the shared key is RMS-normed first; experts routed by
 * sigmoid with a bias, plus shared ones. Its memory is
 * llama_kv_cache_dsa_iswa: llama_kv_cache_dsa (the latent keys, and the
 * lightning indexer's keys of the layers attention.indexer.types marks
 * full) over the full layers, and a K-only cache of the window's cells
 * over the sliding-window ones (kv_cache.c counts both as an iSWA cache
 * with an indexer cache beside it). The NextN block is kept in the file
 * but never loaded: llama.cpp has no MTP graph for it yet, and
 * llama-server b10587 with --spec-type draft-mtp crashes while it makes
 * the SWA cache for the fit's first measurement; ggfit plans that MTP
 * context on this graph and memory (the row has no .mtp). The DSA
 * layers are llama/graph_dsa.c's, shared with deepseek32.c.
 */
#include <stdio.h>
#include <string.h>

#include "llama/check.h"
#include "llama/graph_dsa.h"
#include "versions/version.h"

typedef struct d3 {
    gb_dsa x;                   /* the DSA cache's latent and indexer inputs */
    int32_t k_idxs_swa, mask_swa;   /* the SWA cache's */
} d3;

static bool layer_swa(const bctx *b, int il)
{
    return (b->p->layer_flags[il] & GB_LAYER_SWA) != 0;
}

/* The indexer cache's row for layer il (filter_lid): the trunk's layers
 * that attention.indexer.types marks full (1), one head of
 * indexer.key_length. */
static uint32_t index_k(const ggfit_model *m, uint32_t il)
{
    const ggfit_hparams *hp = ggfit_model_hparams(m);
    if (il >= hp->n_layer - hp->n_nextn)
        return 0;
    const ggfit_gguf *g = ggfit_model_gguf(m);
    char key[160];
    snprintf(key, sizeof key, "%s.attention.indexer.types", hp->arch);
    int64_t i = ggfit_gguf_find_key(g, key);
    ggfit_value v, e;
    if (i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v) || v.type != GGFIT_GGUF_ARRAY)
        return 0;
    ggfit_value_iter it = { 0 };
    bool full = false;   /* past the array's end: the default, not full */
    for (uint32_t j = 0; ggfit_value_next(&v, &it, &e); j++)
        if (j == il) {
            full = (e.type == GGFIT_GGUF_INT32 ? e.i : (int64_t)e.u) != 0;   /* bool: u */
            break;
        }
    snprintf(key, sizeof key, "%s.attention.indexer.key_length", hp->arch);
    i = ggfit_gguf_find_key(g, key);
    if (!full || i < 0 || !ggfit_gguf_value(g, (uint64_t)i, &v) || v.type == GGFIT_GGUF_ARRAY)
        return 0;
    return (uint32_t)v.u;
}

/* build_attn_inp_k_dsa_iswa after build_inp_pos: the DSA cache's inputs
 * (its Hadamard rotation as wide as the indexer's head, a power of two);
 * then the SWA cache's K indices and mask (no rotation); then the output
 * ids. */
static void inputs(bctx *b, d3 *d)
{
    gg_graph *g = b->g;
    const gb_params *p = b->p;
    int64_t nt = p->n_tokens, ns = p->n_stream;
    uint32_t mask_type = p->flash_attn ? GGFIT_TYPE_F16 : GGFIT_TYPE_F32;
    gb_dsa_inputs(b, &d->x);
    d->k_idxs_swa = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I64, nt), NULL);
    d->mask_swa = gg_input(g, gg_new_4d(g, mask_type, p->n_kv_swa, nt / ns, 1, ns),
                           "attn_inp_kq_mask");
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);
}

/* build_attn on the SWA cache's K-only input: the window's cells, V the
 * latent part of each key; no wo. */
static int32_t swa_attn(bctx *b, const d3 *d, const int32_t qkv[3], int32_t v_mla, int il)
{
    gg_graph *g = b->g;
    gg_expand(g, qkv[0]);
    gg_expand(g, qkv[2]);
    gg_expand(g, qkv[1]);
    int64_t hk = b->hp->n_embd_head_k_swa;
    int32_t ck = gb_dsa_cache_k(b, il, hk, b->p->n_kv_swa);
    gg_expand(g, gb_dsa_cpy_k(b, ck, qkv[1], d->k_idxs_swa));
    int32_t kk = gb_dsa_get_k(b, ck, hk);
    const gg_tensor *t = &g->t[kk];
    int32_t vv = gb_view_4d(b, kk, gb_ne(b, qkv[2], 0), t->ne[1], t->ne[2], t->ne[3], t->nb[1],
                            t->nb[2], t->nb[3], 0);
    int32_t cur = gb_attn_mha_v(b, qkv[0], kk, vv, d->mask_swa, -1, v_mla, il);
    gb_cb(b, cur, "kqv_out", il);
    return cur;
}

static int32_t self_attn(bctx *b, void *ctx, int32_t cur, int il)
{
    const d3 *d = ctx;
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    bool swa = layer_swa(b, il);
    int64_t nt = d->x.n_tokens, n_rope = d->x.n_rope;
    int64_t n_head = ggfit_model_layer(b->p->m, (uint32_t)il)->n_head;
    int64_t lora = swa ? (int64_t)gb_key(b, "attention.kv_lora_rank_swa", 0) : hp->n_lora_kv;
    int64_t hk = swa ? (int64_t)gb_key(b, "attention.key_length_mla_swa", 0)
                     : hp->n_embd_head_k_mla;
    int64_t hv = swa ? (int64_t)gb_key(b, "attention.value_length_mla_swa", 0)
                     : hp->n_embd_head_v_mla;
    int64_t nope = hk - n_rope;
    /* The cache's rows hold the latent and the rope (cpy_k's rows). */
    int64_t row = swa ? hp->n_embd_head_k_swa : hp->n_embd_head_k;
    if (lora < 1 || nope < 1 || hv < 1 || row != lora + n_rope) {
        b->missing = true;
        return -1;
    }
    int32_t attn_inp = cur;
    int32_t qr = gb_dsa_qr(b, cur, il);

    int32_t top = swa ? -1 : gb_dsa_indexer(b, &d->x, cur, qr, il);

    gb_dsa_mla o = { .n_head = n_head, .head_k = hk, .lora = lora, .k_norm = true };
    int32_t qkv[3];
    gb_dsa_mla_qkv(b, &d->x, &o, cur, qr, il, qkv);
    int32_t v_mla = gb_required(b, "blk.%d.attn_v_b.weight", il);
    if (b->missing)
        return -1;
    cur = swa ? swa_attn(b, d, qkv, v_mla, il)
              : gb_dsa_attn(b, &d->x, qkv, top, (int64_t)hp->n_embd_head_k, v_mla, il);
    gb_cb(b, cur, "attn_out", il);

    /* the head-wise output gate, before attn_output */
    int32_t gate = gg_mul_mat(g, gb_required(b, "blk.%d.attn_gate.weight", il), attn_inp);
    gb_cb(b, gate, "attn_gate", il);
    gate = gg_unary_op(g, GGFIT_OP_UNARY, gate);
    gb_cb(b, gate, "attn_gate_sigmoid", il);
    int32_t a3 = gb_reshape_3d(b, cur, hv, n_head, nt);
    int32_t g3 = gb_reshape_3d(b, gate, 1, n_head, nt);
    a3 = gg_binary(g, GGFIT_OP_MUL, a3, g3);
    gb_cb(b, a3, "attn_gated", il);
    cur = gb_reshape_2d(b, a3, hv * n_head, nt);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.attn_output.weight", il), cur);
    gb_cb(b, cur, "attn_output", il);
    return cur;
}

/* llama_model_dots3note::graph */
static void build_dots3note(bctx *b)
{
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)(hp->n_layer - hp->n_nextn);
    d3 d = { .x = {
        .n_tokens = b->p->n_tokens, .n_rope = hp->n_rot,
        .n_ih = (int64_t)gb_key(b, "attention.indexer.head_count", 0),
        .ih = (int64_t)gb_key(b, "attention.indexer.key_length", 0),
        .top_k = (uint32_t)gb_key(b, "attention.indexer.top_k", 0),
    } };
    /* The Hadamard rotation of the indexer cache is as wide as the largest
     * power of two from 64 up dividing its head, and llama.cpp multiplies
     * the heads by it (ggml_mul_mat asserts they are as wide). */
    int64_t nrot = 64;
    while (d.x.ih > 0 && nrot <= d.x.ih && d.x.ih % (2 * nrot) == 0)
        nrot *= 2;
    /* llama.cpp always makes the two caches (create_memory asserts a
     * sliding window); the indexer head holds the rope. */
    if (!b->p->swa || n_layer < 1 || d.x.ih < 1 || d.x.ih < d.x.n_rope || nrot != d.x.ih ||
        d.x.n_ih < 1 || d.x.top_k < 1 || !hp->n_embd_head_k_mla || !hp->n_embd_head_v_mla) {
        b->missing = true;
        return;
    }
    int32_t inpL = gb_inp_embd(b);
    inputs(b, &d);
    gb_dsa_trunk(b, inpL, n_layer, GB_GATING_SIGMOID, self_attn, &d);
}

/* load_arch_hparams reads the indexer types with get_arr: an array (of
 * bools or integers), one value for each trunk layer. */
static const ggfit_arr_key arr_keys[] = {
    { "attention.indexer.types", false, GGFIT_GGUF_UINT32, GGFIT_ARR_MAIN, true },
    { NULL },
};

/* The indexer's keys, converted to integers by the graph. */
static void check(hp_check *c)
{
    static const char *const swa[] = { "attention.kv_lora_rank_swa",
                                       "attention.key_length_mla_swa",
                                       "attention.value_length_mla_swa", NULL };
    gb_dsa_check(c, swa);
}

const ggfit_arch ggfit__model_dots3note = {
    .name = "dots3note",
    .added = LLAMA_CHANGE_DOTS3NOTE,
    .arr_keys = arr_keys,
    .mla_same_kv_types = true,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon",
            "expert_shared_count", "expert_feed_forward_length", "leading_dense_block_count",
            "expert_gating_func", "attention.q_lora_rank", "attention.kv_lora_rank",
            "attention.key_length_mla", "attention.value_length_mla",
            "attention.kv_lora_rank_swa", "attention.key_length_mla_swa",
            "attention.value_length_mla_swa", "attention.sliding_window",
            "rope.freq_base_swa", "attention.indexer.head_count",
            "attention.indexer.key_length", "attention.indexer.top_k", NULL },
    .check = check,
    .mem = GGFIT_MEM_KV,
    /* attention.sliding_window_pattern read with get_arr after
     * nextn_predict_layers: one value a trunk layer */
    .swa_key = GGFIT_SWA_KEY_LAYERS,
    .swa_key_main = true,
    .swa_always = true,   /* swa_type is set whatever sliding_window says */
    .index_k = index_k,
    .build = build_dots3note,
};
