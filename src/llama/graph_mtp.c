/*
 * graph_mtp.c - the pieces every MTP head's graph shares (the
 * LLM_GRAPH_TYPE_DECODER_MTP graphs of src/models/<arch>.cpp, run by an
 * MTP context, --spec-type draft-mtp): the token's embedding and the
 * target's hidden state in, joined by the NextN block's eh_proj; the
 * shared head out. At reserve the ubatch has tokens, so the embedding rows
 * are taken, not the embd input.
 */
#include "llama/graph.h"

/* The NextN block's own weight, else the model's (name). */
static int32_t nextn_or(bctx *b, const char *own, int il, const char *name)
{
    int32_t w = gb_weight(b, own, il);
    return w >= 0 ? w : gb_required(b, name, 0);
}

void gb_mtp_embd(bctx *b, int il, int32_t *emb, int32_t *h)
{
    gg_graph *g = b->g;
    int64_t nt = b->p->n_tokens;
    int32_t tokens = gg_input(g, gg_new_1d(g, GGFIT_TYPE_I32, nt), "inp_tokens");
    *emb = gg_get_rows(g, nextn_or(b, "blk.%d.nextn.embed_tokens.weight", il,
                                   "token_embd.weight"), tokens);
    gb_cb(b, *emb, "mtp_tok_embd", il);
    *h = gg_input(g, gg_new_2d(g, GGFIT_TYPE_F32, b->hp->n_embd, nt), "mtp_h_input");
}

int32_t gb_mtp_eh_proj(bctx *b, int il, int32_t emb, int32_t h)
{
    gg_graph *g = b->g;
    int32_t hn = gb_norm(b, h, gb_required(b, "blk.%d.nextn.hnorm.weight", il), il);
    gb_cb(b, hn, "mtp_hnorm", il);
    int32_t en = gb_norm(b, emb, gb_required(b, "blk.%d.nextn.enorm.weight", il), il);
    gb_cb(b, en, "mtp_enorm", il);
    int32_t cur = gg_concat(g, en, hn, 0);
    gb_cb(b, cur, "mtp_concat", il);
    cur = gg_mul_mat(g, gb_required(b, "blk.%d.nextn.eh_proj.weight", il), cur);
    gb_cb(b, cur, "mtp_eh_proj", il);
    return cur;
}

void gb_mtp_head(bctx *b, int32_t cur, int il, int rows, int32_t norm_w)
{
    gg_graph *g = b->g;
    if (rows == GB_MTP_ROWS_FIRST) {   /* h_nextn before the head's norm */
        cur = gg_get_rows(g, cur, b->inp_out_ids);
        gb_cb(b, cur, "h_nextn", -1);
        g->t[cur].flags |= GGFIT_TF_OUTPUT;
    }
    if (norm_w < 0)
        norm_w = nextn_or(b, "blk.%d.nextn.shared_head_norm.weight", il, "output_norm.weight");
    cur = gb_norm(b, cur, norm_w, -1);
    if (rows != GB_MTP_ROWS_FIRST) {
        gb_cb(b, cur, "h_nextn", -1);
        g->t[cur].flags |= GGFIT_TF_OUTPUT;   /* res->t_h_nextn */
    }
    if (rows == GB_MTP_ROWS_NORMED)
        cur = gg_get_rows(g, cur, b->inp_out_ids);
    gb_cb(b, cur, "mtp_shared_head_norm", -1);
    int32_t head = gb_weight(b, "blk.%d.nextn.shared_head_head.weight", il);
    cur = gg_mul_mat(g, head >= 0 ? head : gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;   /* res->t_logits */
    gg_expand(g, cur);
}

void gb_mtp_trunk_output(bctx *b, int32_t inpL)
{
    gg_graph *g = b->g;
    int32_t cur = gb_norm(b, inpL, gb_required(b, "output_norm.weight", 0), -1);
    gb_cb(b, cur, "h_nextn", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;   /* res->t_h_nextn */
    cur = gg_get_rows(g, cur, b->inp_out_ids);
    gb_cb(b, cur, "result_norm", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    cur = gg_mul_mat(g, gb_output_weight(b), cur);
    gb_cb(b, cur, "result_output", -1);
    g->t[cur].flags |= GGFIT_TF_OUTPUT;
    gg_expand(g, cur);
}
