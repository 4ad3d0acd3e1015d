/*
 * graph_delta.c - build_recurrent_attn of llama.cpp's delta-net base
 * (src/models/delta-net-base.cpp) with the fused gated delta net, as
 * Qwen3.5 and BailingMoE3 (through graph_kda.c) call it: the state stored
 * back, or with rollback (n_rs_seq) one snapshot of it after each of the
 * last tokens.
 */
#include "llama/graph.h"

int32_t gb_recurrent_attn(bctx *b, int32_t s_all, int32_t q, int32_t k, int32_t v, int32_t gate,
                          int32_t beta, int32_t s, int il)
{
    gg_graph *g = b->g;
    const gg_tensor *tv = &g->t[v];
    int64_t sv = tv->ne[0], hv = tv->ne[1], nt = tv->ne[2], ns = tv->ne[3];
    int64_t K = (int64_t)b->p->n_rs_seq + 1;
    int32_t r = gg_gated_delta_net(g, q, k, v, gate, beta, s, K);
    uint64_t es = g->t[r].nb[0];
    int32_t out = gb_view_4d(b, r, sv, hv, nt, ns, (uint64_t)sv * es, (uint64_t)(sv * hv) * es,
                             (uint64_t)(sv * hv * nt) * es, 0);
    uint64_t nb1 = g->t[s_all].nb[1];
    if (K > 1) {
        gb_cb(b, out, "attn_output", il);
        int64_t dd = sv * sv * hv, n_written = nt < K ? nt : K;
        int32_t src = gb_view_3d(b, r, dd, ns, n_written, (uint64_t)dd * es,
                                 (uint64_t)(dd * ns) * es, (uint64_t)(sv * hv * nt * ns) * es);
        int32_t dst = gb_view_3d(b, s_all, dd, ns, n_written, nb1, (uint64_t)ns * nb1, 0);
        gg_expand(g, gg_cpy(g, src, dst));
        return out;
    }
    int32_t state = gb_view_4d(b, r, sv, sv, hv, ns, (uint64_t)sv * es,
                               (uint64_t)(sv * sv) * es, (uint64_t)(sv * sv * hv) * es,
                               (uint64_t)(sv * hv * nt * ns) * es);
    gb_cb(b, out, "attn_output", il);
    gb_cb(b, state, "new_state", il);
    int32_t dst = gb_view_2d(b, s_all, gb_ne(b, s_all, 0), ns, nb1, 0);
    gg_expand(g, gg_cpy(g, state, dst));
    return out;
}
