/*
 * bert.c - src/models/bert.cpp: BERT and the encoders that share its graph
 * (nomic-bert.cpp, nomic-bert-moe.cpp, jina-bert-v2.cpp, jina-bert-v3.cpp).
 * They have no memory module (llama_model::create_memory gives them
 * nullptr): attention runs over the ubatch's own tokens, with a mask of
 * n_tokens x n_tokens (build_attn_inp_no_cache), and the graph ends at the
 * token embeddings (no logits; pooling only with --embeddings, which
 * llama-fit-params does not set).
 */
#include <string.h>

#include "llama/check.h"
#include "llama/graph.h"

/* build_ffn with GELU, no gate (LLM_FFN_SEQ) and the optional biases of up
 * and down. */
static int32_t ffn_gelu(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t w;
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_up.weight", il), cur);
    gb_cb(b, cur, "ffn_up", il);
    if ((w = gb_weight(b, "blk.%d.ffn_up.bias", il)) >= 0) {
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
        gb_cb(b, cur, "ffn_up_b", il);
    }
    cur = gg_unary_op(g, GGFIT_OP_UNARY, cur);
    gb_cb(b, cur, "ffn_gelu", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
    if ((w = gb_weight(b, "blk.%d.ffn_down.bias", il)) >= 0) {
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
    }
    return cur;
}

enum { BERT, NOMIC, NOMIC_MOE, JINA2, JINA3 };

/* jina-bert-v2's build_ffn (LLM_FFN_PAR): GEGLU over a gate when there is
 * one, else over the halves of an up of 2 n_ff rows, else GELU; the
 * optional biases of up and down. */
static int32_t ffn_jina2(bctx *b, int32_t cur, int il)
{
    gg_graph *g = b->g;
    int32_t w, up = gb_required(b, "blk.%d.ffn_up.weight", il);
    int32_t gate = gb_weight(b, "blk.%d.ffn_gate.weight", il);
    bool up_has_gate = gate < 0 && gb_ne(b, up, 1) != (int64_t)ggfit_model_layer(
                                                          b->p->m, (uint32_t)il)->n_ff;
    int32_t tmp = gg_mul_mat(g, up, cur);
    gb_cb(b, tmp, "ffn_up", il);
    if ((w = gb_weight(b, "blk.%d.ffn_up.bias", il)) >= 0) {
        tmp = gg_binary(g, GGFIT_OP_ADD, tmp, w);
        gb_cb(b, tmp, "ffn_up_b", il);
    }
    if (gate >= 0) {
        cur = gg_mul_mat(g, gate, cur);
        gb_cb(b, cur, "ffn_gate", il);
        cur = gg_glu_split(g, cur, tmp);
        gb_cb(b, cur, "ffn_geglu", il);
    } else if (up_has_gate) {
        const gg_tensor *t = &g->t[tmp];
        int64_t ne[4] = { t->ne[0] / 2, t->ne[1], t->ne[2], t->ne[3] };
        cur = gg_op_shape(g, GGFIT_OP_GLU, t->type, 4, ne, 1, &tmp);
        gb_cb(b, cur, "ffn_geglu", il);
    } else {
        cur = gg_unary_op(g, GGFIT_OP_UNARY, tmp);
        gb_cb(b, cur, "ffn_gelu", il);
    }
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.ffn_down.weight", il), cur);
    if ((w = gb_weight(b, "blk.%d.ffn_down.bias", il)) >= 0) {
        gb_cb(b, cur, "ffn_down", il);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, w);
    }
    return cur;
}

/* The Q or K norm of a layer (jina-bert-v2): LayerNorm over the heads. */
static int32_t qk_norm(bctx *b, int32_t x, const char *wname, const char *bname, int64_t hd,
                       int64_t n_head, int il)
{
    int32_t w = gb_weight(b, wname, il);
    if (w < 0)
        return x;
    int64_t nt = b->p->n_tokens;
    x = gb_reshape_2d(b, x, hd * n_head, nt);
    x = gb_layer_norm(b, x, w, gb_weight(b, bname, il), il);
    return gb_reshape_3d(b, x, hd, n_head, nt);
}

/* llama_model_bert::graph, which all five architectures build. */
static void build(bctx *b, int kind)
{
    gg_graph *g = b->g;
    const ggfit_hparams *hp = b->hp;
    const gb_params *p = b->p;
    int n_layer = (int)hp->n_layer;
    int64_t n_embd = hp->n_embd, hd = hp->n_embd_head_v, nt = p->n_tokens;
    if (hd != hp->n_embd_head_k) {
        b->missing = true;   /* llama.cpp asserts it */
        return;
    }
    /* only the nomic ones read moe_every_n_layers */
    uint32_t moe_every = kind == NOMIC || kind == NOMIC_MOE
                             ? (uint32_t)gb_key(b, "moe_every_n_layers", 0) : 0;
    bool rope = kind == NOMIC || kind == NOMIC_MOE || kind == JINA3;

    b->inp_pos = -1;
    if (kind != JINA2)
        b->inp_pos = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, nt), NULL);
    int32_t inpL = gb_inp_embd(b);
    /* token types are hardcoded to zero: the first row of token_types */
    int32_t type_embd = gb_weight(b, "token_types.weight", 0);
    if (type_embd >= 0) {
        int64_t ne[1] = { n_embd };
        int32_t row0 = gg_view(g, type_embd, 1, ne, NULL, 0);
        inpL = gg_binary(g, GGFIT_OP_ADD, inpL, row0);
    }
    if (kind == BERT) {
        int32_t pos = gg_get_rows(g, gb_required(b, "position_embd.weight", 0), b->inp_pos);
        inpL = gg_binary(g, GGFIT_OP_ADD, pos, inpL);
    }
    gb_cb(b, inpL, "inp_embd", -1);
    inpL = gb_layer_norm(b, inpL, gb_required(b, "token_embd_norm.weight", 0),
                         gb_required(b, "token_embd_norm.bias", 0), 0);
    gb_cb(b, inpL, "inp_norm", 0);

    gb_inputs_no_cache(b);
    b->inp_out_ids = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, p->n_outputs), NULL);

    for (int il = 0; il < n_layer; il++) {
        const ggfit_layer_info *li = ggfit_model_layer(p->m, (uint32_t)il);
        int32_t cur = inpL, q, k, v;
        int32_t wqkv = gb_weight(b, "blk.%d.attn_qkv.weight", il);
        if (wqkv >= 0)
            gb_qkv_fused(b, cur, wqkv, il, li->n_head, li->n_head_kv, &q, &k, &v);
        else
            gb_qkv(b, cur, il, li->n_head, li->n_head_kv, &q, &k, &v);
        q = qk_norm(b, q, "blk.%d.attn_q_norm.weight", "blk.%d.attn_q_norm.bias", hd,
                    li->n_head, il);
        k = qk_norm(b, k, "blk.%d.attn_k_norm.weight", "blk.%d.attn_k_norm.bias", hd,
                    li->n_head_kv, il);
        if (rope) {
            q = gg_rope(g, q, b->inp_pos, -1);
            k = gg_rope(g, k, b->inp_pos, -1);
        }
        gb_cb(b, q, "Qcur", il);
        gb_cb(b, k, "Kcur", il);
        gb_cb(b, v, "Vcur", il);
        cur = gb_attn_no_cache(b, gb_required(b, "blk.%d.attn_output.weight", il),
                               gb_weight(b, "blk.%d.attn_output.bias", il), q, k, v, il);
        gb_cb(b, cur, "kqv_out", il);
        if (il == n_layer - 1)
            gb_out_rows(b, &cur, &inpL);
        cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
        cur = gb_layer_norm(b, cur, gb_required(b, "blk.%d.attn_output_norm.weight", il),
                            gb_required(b, "blk.%d.attn_output_norm.bias", il), il);
        int32_t norm2 = gb_weight(b, "blk.%d.attn_norm_2.weight", il);
        if (norm2 >= 0) {
            cur = gg_binary(g, GGFIT_OP_ADD, cur, inpL);
            cur = gb_layer_norm(b, cur, norm2, gb_weight(b, "blk.%d.attn_norm_2.bias", il), il);
        }
        int32_t ffn_inp = cur;
        gb_cb(b, ffn_inp, "ffn_inp", il);
        if (moe_every > 0 && (uint32_t)il % moe_every == 1) {
            gb_moe o = {
                .gate_inp = gb_required(b, "blk.%d.ffn_gate_inp.weight", il),
                .up_exps = gb_required(b, "blk.%d.ffn_up_exps.weight", il),
                .gate_exps = -1,
                .down_exps = gb_required(b, "blk.%d.ffn_down_exps.weight", il),
                .gate_up_exps = -1, .exp_probs_b = -1, .gate_inp_b = -1,
                .up_exps_b = -1, .gate_exps_b = -1, .down_exps_b = -1,
                .act = GB_MOE_SILU,   /* GELU: the same unary op */
                .gating = GB_GATING_SOFTMAX,
                .w_scale = 0,   /* expert_weights_scale is never read: 0 */
                .n_expert = hp->n_expert, .n_expert_used = hp->n_expert_used,
            };
            cur = gb_moe_ffn_ex(b, cur, &o, il);
            gb_cb(b, cur, "ffn_moe_out", il);
        } else if (kind == BERT || kind == NOMIC_MOE || kind == JINA3) {
            cur = ffn_gelu(b, cur, il);
            gb_cb(b, cur, "ffn_out", il);
        } else if (kind == JINA2) {
            cur = ffn_jina2(b, cur, il);
            gb_cb(b, cur, "ffn_out", il);
        } else {
            cur = gb_ffn_w(b, cur, gb_required(b, "blk.%d.ffn_up.weight", il),
                           gb_required(b, "blk.%d.ffn_gate.weight", il),
                           gb_required(b, "blk.%d.ffn_down.weight", il), il);
            gb_cb(b, cur, "ffn_out", il);
        }
        cur = gg_binary(g, GGFIT_OP_ADD, cur, ffn_inp);
        cur = gb_layer_norm(b, cur, gb_required(b, "blk.%d.layer_output_norm.weight", il),
                            gb_required(b, "blk.%d.layer_output_norm.bias", il), il);
        inpL = cur;
    }
    gb_cb(b, inpL, "result_embd", -1);
    g->t[inpL].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, inpL);
}

static void build_bert(bctx *b)
{
    build(b, BERT);
}

static void build_nomic_bert(bctx *b)
{
    build(b, NOMIC);
}

static void build_nomic_bert_moe(bctx *b)
{
    build(b, NOMIC_MOE);
}

static void build_jina_bert_v2(bctx *b)
{
    build(b, JINA2);
}

static void build_jina_bert_v3(bctx *b)
{
    build(b, JINA3);
}

/* load_tensors: the embeddings' norm is done on the first layer
 * (LLM_TENSOR_TOKEN_EMBD_NORM is a repeating-layer tensor of block 0). */
static int64_t tensor_layer(const ggfit_model *m, const ggfit_tensor *t)
{
    (void)m;
    if (!strncmp(t->info->name, "token_embd_norm.", 16))
        return 0;
    return -2;
}

const ggfit_arch ggfit__model_bert = {
    .name = "bert",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .no_output = true,
    .build = build_bert,
    .tensor_layer = tensor_layer,
};

/* The nomic builders convert moe_every_n_layers to an integer. */
static void check_nomic(hp_check *c)
{
    hc_key_int(c, "moe_every_n_layers", 0, UINT32_MAX, 0, NULL,
               "llama.cpp reads it as an unsigned 32-bit count");
}

const ggfit_arch ggfit__model_nomic_bert = {
    .name = "nomic-bert",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .check = check_nomic,
    .mem = GGFIT_MEM_NONE,
    .no_output = true,
    .build = build_nomic_bert,
    .tensor_layer = tensor_layer,
};

const ggfit_arch ggfit__model_nomic_bert_moe = {
    .name = "nomic-bert-moe",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .check = check_nomic,
    .mem = GGFIT_MEM_NONE,
    .no_output = true,
    .build = build_nomic_bert_moe,
    .tensor_layer = tensor_layer,
};

const ggfit_arch ggfit__model_jina_bert_v2 = {
    .name = "jina-bert-v2",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .no_output = true,
    .build = build_jina_bert_v2,
    .tensor_layer = tensor_layer,
};

const ggfit_arch ggfit__model_jina_bert_v3 = {
    .name = "jina-bert-v3",
    .required_keys = (const char *const[]){ "attention.layer_norm_epsilon", NULL },
    .mem = GGFIT_MEM_NONE,
    .no_output = true,
    .build = build_jina_bert_v3,
    .tensor_layer = tensor_layer,
};
