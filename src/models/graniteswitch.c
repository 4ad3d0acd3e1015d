/*
 * graniteswitch.c - src/models/granite-switch.cpp: Granite Switch, a dense
 * Granite (fused QKV, SwiGLU FFN, Granite's scales) with N LoRA adapters
 * embedded per projection (blk.N.<proj>.lora_a / .lora_b, stacked over
 * N + 1 slots, slot 0 the zero adapter), chosen per token. The choice is
 * made in the graph: a one-head causal "router" attention over the
 * adapter tokens, whose K/V live in the KV cache as one more layer past
 * the blocks (load_arch_hparams: n_layer_all = blocks + 1, the extra
 * layer counted as the NextN block; model.c's expand_router), gives each
 * token its slot; every projection then adds B_slot (A_slot x) by
 * ggml_mul_mat_id.
 */
#include <stdio.h>

#include "llama/check.h"
#include "llama/graph.h"
#include "versions/version.h"

/* build_switched_lora_delta: B (A x) with the token's adapter; cur
 * {n_in, n_tokens}, ids {n_tokens} -> {n_out, n_tokens}. */
static int32_t lora_delta(bctx *b, const char *proj, int32_t cur, int32_t ids, int il)
{
    gg_graph *g = b->g;
    char fmt[64];
    snprintf(fmt, sizeof fmt, "blk.%%d.%s.lora_a", proj);
    int32_t la = gb_required(b, fmt, il);
    snprintf(fmt, sizeof fmt, "blk.%%d.%s.lora_b", proj);
    int32_t lb = gb_required(b, fmt, il);
    if (b->missing)
        return cur;
    int64_t n_in = gb_ne(b, cur, 0), n_tokens = gb_ne(b, cur, 1);
    int32_t x = gb_reshape_3d(b, cur, n_in, 1, n_tokens);
    int32_t ids2 = gb_reshape_2d(b, ids, 1, n_tokens);
    int32_t a = gg_mul_mat_id(g, la, x, ids2);     /* {rank, 1, n_tokens} */
    int32_t d = gg_mul_mat_id(g, lb, a, ids2);     /* {n_out, 1, n_tokens} */
    return gb_reshape_2d(b, d, gb_ne(b, d, 0), n_tokens);
}

/* build_switched_lora_mm: w x plus the adapter's delta. */
static int32_t lora_mm(bctx *b, const char *proj, int32_t cur, int32_t ids, int il)
{
    char fmt[64];
    snprintf(fmt, sizeof fmt, "blk.%%d.%s.weight", proj);
    int32_t base = gg_mul_mat(b->g, gb_required(b, fmt, il), cur);
    int32_t delta = lora_delta(b, proj, cur, ids, il);
    return gg_binary(b->g, GGFIT_OP_ADD, base, delta);
}

/* build_attention_layer: the fused QKV sliced into contiguous Q, K, V,
 * each plus its adapter delta; RoPE when rope.scaling.finetuned (no rope
 * factors: load_tensors creates none); attention without wo, then wo
 * with its delta. */
static int32_t attention(bctx *b, int32_t cur, int32_t ids, bool rope, int il)
{
    gg_graph *g = b->g;
    const ggfit_layer_info *li = ggfit_model_layer(b->p->m, (uint32_t)il);
    int64_t hd = b->hp->n_embd_head_v, nt = b->p->n_tokens;
    int64_t n_q = hd * li->n_head, n_kv = hd * li->n_head_kv;
    int32_t qkv = gg_mul_mat(g, gb_required(b, "blk.%d.attn_qkv.weight", il), cur);
    gb_cb(b, qkv, "wqkv", il);
    uint64_t nb1 = g->t[qkv].nb[1], es = 4;   /* F32 */
    int32_t q = gg_cont(g, gb_view_2d(b, qkv, n_q, gb_ne(b, qkv, 1), nb1, 0));
    int32_t k = gg_cont(g, gb_view_2d(b, qkv, n_kv, gb_ne(b, qkv, 1), nb1, (uint64_t)n_q * es));
    int32_t v = gg_cont(g, gb_view_2d(b, qkv, n_kv, gb_ne(b, qkv, 1), nb1,
                                      (uint64_t)(n_q + n_kv) * es));
    q = gg_binary(g, GGFIT_OP_ADD, q, lora_delta(b, "attn_q", cur, ids, il));
    k = gg_binary(g, GGFIT_OP_ADD, k, lora_delta(b, "attn_k", cur, ids, il));
    v = gg_binary(g, GGFIT_OP_ADD, v, lora_delta(b, "attn_v", cur, ids, il));
    q = gb_reshape_3d(b, q, hd, li->n_head, nt);
    k = gb_reshape_3d(b, k, hd, li->n_head_kv, nt);
    v = gb_reshape_3d(b, v, hd, li->n_head_kv, nt);
    if (rope) {
        q = gb_rope(b, q, -1, il);
        k = gb_rope(b, k, -1, il);
    }
    gb_cb(b, q, "Qcur", il);
    gb_cb(b, k, "Kcur", il);
    gb_cb(b, v, "Vcur", il);
    cur = gb_attn(b, -1, -1, q, k, v, -1, il);
    gb_cb(b, cur, "attn_pre_o", il);
    cur = lora_mm(b, "attn_output", cur, ids, il);
    gb_cb(b, cur, "attn_out", il);
    return cur;
}

/* build_layer_ffn: Granite's residual scale, a SwiGLU FFN whose three
 * products carry their adapter deltas. */
static int32_t ffn(bctx *b, int32_t cur, int32_t inpSA, int32_t ids, bool res_scale, int il)
{
    gg_graph *g = b->g;
    if (res_scale)
        cur = gg_scale(g, cur);
    int32_t ffn_inp = gg_binary(g, GGFIT_OP_ADD, cur, inpSA);
    gb_cb(b, ffn_inp, "ffn_inp", il);
    cur = gb_norm(b, ffn_inp, gb_required(b, "blk.%d.ffn_norm.weight", il), il);
    gb_cb(b, cur, "ffn_norm", il);
    int32_t gate = lora_mm(b, "ffn_gate", cur, ids, il);
    int32_t up = lora_mm(b, "ffn_up", cur, ids, il);
    gate = gg_unary_op(g, GGFIT_OP_UNARY, gate);   /* silu */
    int32_t gu = gg_binary(g, GGFIT_OP_MUL, gate, up);
    cur = lora_mm(b, "ffn_down", gu, ids, il);
    gb_cb(b, cur, "ffn_out", il);
    if (res_scale)
        cur = gg_scale(g, cur);
    cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
    gb_cb(b, cur, "l_out", il);
    return cur;
}

/* One router lane: {n_tokens} -> {1, 1, n_tokens} padded to a head. */
static int32_t router_lane(bctx *b, int32_t sig)
{
    int64_t nt = b->p->n_tokens;
    int32_t t = gb_reshape_3d(b, sig, 1, 1, nt);
    int64_t ne[4] = { b->hp->n_embd_head_k, 1, nt, 1 };
    return gg_op_shape(b->g, GGFIT_OP_PAD, GGFIT_TYPE_F32, 4, ne, 1, &t);
}

/* llama_model_granite_switch::graph */
static void build_graniteswitch(bctx *b)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    int n_layer = (int)(hp->n_layer - hp->n_nextn), router = n_layer;
    int64_t nt = b->p->n_tokens;
    if (hp->n_nextn != 1 || hp->n_embd_head_k != hp->n_embd_head_v) {
        b->missing = true;
        return;
    }
    bool rope = gb_key(b, "rope.scaling.finetuned", 1) != 0;
    bool res_scale = gb_key(b, "residual_scale", 0) != 0;
    /* llm_graph_input_switch: the substituted tokens and the router's
     * K signal, V value and Q, one each a token */
    int32_t sub = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, nt), "sub_tokens");
    int32_t ksig = gg_input(g, gg_new_1d(g, GGFIT_TYPE_F32, nt), "router_ksig");
    int32_t vval = gg_input(g, gg_new_1d(g, GGFIT_TYPE_F32, nt), "router_vval");
    int32_t rq = gg_input(g, gg_new_1d(g, GGFIT_TYPE_F32, nt), "router_q");
    /* the substituted ids' rows, no build_inp_embd (and no expand) */
    int32_t inpL = gg_get_rows(g, gb_required(b, "token_embd.weight", 0), sub);
    if (gb_key(b, "embedding_scale", 0) != 0)
        inpL = gg_scale(g, inpL);
    gb_cb(b, inpL, "inp_embd", -1);
    /* Without RoPE llama.cpp builds no positions; the unused input never
     * joins the graph. */
    gb_inputs_kv(b);
    /* the router: one causal head at layer n_layer over the lanes */
    int32_t qr = router_lane(b, rq), kr = router_lane(b, ksig), vr = router_lane(b, vval);
    int32_t rout = gb_attn(b, -1, -1, qr, kr, vr, -1, router);
    gb_cb(b, rout, "router_out", router);
    int32_t slot = gg_cont(g, gb_view_2d(b, rout, 1, nt, g->t[rout].nb[1], 0));
    slot = gb_reshape_2d(b, slot, nt, 1);   /* ggml_reshape_1d */
    slot = gg_clamp(g, slot);
    slot = gg_unary_op(g, GGFIT_OP_UNARY, slot);   /* round */
    int32_t ids = gg_cpy_type(g, slot, GGFIT_TYPE_I32);
    gb_cb(b, ids, "adapter_ids", -1);
    for (int il = 0; il < n_layer && !b->missing; il++) {
        int32_t inpSA = inpL;
        int32_t cur = gb_norm(b, inpL, gb_required(b, "blk.%d.attn_norm.weight", il), il);
        gb_cb(b, cur, "attn_norm", il);
        cur = attention(b, cur, ids, rope, il);
        if (il == n_layer - 1) {
            gb_out_rows(b, &cur, &inpSA);
            /* the adapter ids of the kept rows */
            int64_t n_out = gb_ne(b, b->inp_out_ids, 0);
            ids = gg_get_rows(g, gb_reshape_2d(b, ids, 1, gb_ne(b, ids, 0)), b->inp_out_ids);
            ids = gb_reshape_2d(b, ids, n_out, 1);
        }
        inpL = ffn(b, cur, inpSA, ids, res_scale, il);
    }
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    cur = gg_scale(g, cur);   /* 1 / f_logit_scale */
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}

/* load_tensors' embedded adapters ("<proj>.lora_a" and ".lora_b") are
 * probed as GGML_OP_MUL_MAT_ID, whatever their name says. */
static weight_op weight_probe(const ggfit_model *m, const ggfit_tensor *t, weight_op op,
                              ggfit_tensor_info *created)
{
    (void)m;
    (void)created;
    const char *n = t->info->name;
    size_t len = strlen(n);
    if (t->layer >= 0 && len > 7 &&
        (!strcmp(n + len - 7, ".lora_a") || !strcmp(n + len - 7, ".lora_b")))
        return OP_MUL_MAT_ID;
    return op;
}

/* The token id array under key: as many ids as adapters, each (for the
 * substitutes, which index token_embd's rows) from 0 to n_vocab - 1. */
static void check_ids(hp_check *c, const char *suffix, int64_t n_adapters, bool rows)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", c->hp->arch, suffix);
    int64_t i = ggfit_gguf_find_key(c->g, key);
    ggfit_value v, e;
    if (i < 0 || !ggfit_gguf_value(c->g, (uint64_t)i, &v) || v.type != GGFIT_GGUF_ARRAY)
        return;   /* arch_keys.c refused it */
    if ((int64_t)v.n != n_adapters) {
        hc_fail(c, "%s holds %llu ids for %lld adapters; llama.cpp refuses the file", key,
                (unsigned long long)v.n, (long long)n_adapters);
        return;
    }
    ggfit_value_iter it = { 0 };
    while (rows && ggfit_value_next(&v, &it, &e)) {
        int64_t id = e.type == GGFIT_GGUF_INT32 ? e.i : (int64_t)e.u;
        if (id < 0 || id >= (int64_t)c->hp->n_vocab) {
            hc_fail(c, "%s holds token id %lld, outside the %u tokens; llama.cpp refuses the "
                    "file", key, (long long)id, c->hp->n_vocab);
            return;
        }
    }
}

/* load_arch_hparams' and load_arch_tensors' throws: at most 4096 adapters
 * and a rank of at most 4096, an activating and a substitute token per
 * adapter, the substitutes within the vocabulary. */
static void check(hp_check *c)
{
    int64_t n = 0;
    hc_key_int(c, "adapters.count", 0, 4096, 0, &n, "llama.cpp takes at most 4096 adapters");
    hc_key_int(c, "adapters.lora_rank", 0, 4096, 0, NULL,
               "llama.cpp takes a LoRA rank of at most 4096");
    if (c->rc)
        return;
    check_ids(c, "adapters.token_ids_activate", n, false);
    check_ids(c, "adapters.token_ids_substitute", n, true);
}

/* load_arch_hparams: Granite's keys, the adapters' count and rank (each at
 * most 4096) and their token id arrays (get_arr, int32 or uint32, as many
 * as adapters). */
static const ggfit_arr_key arr_keys_graniteswitch[] = {
    { "adapters.token_ids_activate", false, GGFIT_GGUF_INT32, GGFIT_ARR_ANY, true },
    { "adapters.token_ids_substitute", false, GGFIT_GGUF_INT32, GGFIT_ARR_ANY, true },
    { NULL },
};

/* Plain KV with the router layer's cells (1 KV head) after the blocks'. */
const ggfit_arch ggfit__model_graniteswitch = {
    .name = "graniteswitch",
    .added = LLAMA_CHANGE_GRANITESWITCH,
    .required_keys = (const char *const[]){ "attention.layer_norm_rms_epsilon", "logit_scale",
            "adapters.count", "adapters.lora_rank", NULL },
    .arr_keys = arr_keys_graniteswitch,
    .mem = GGFIT_MEM_KV,
    .router_layer = true,
    .nextn_kv = true,
    .weight_probe = weight_probe,
    .check = check,
    .build = build_graniteswitch,
};
