/*
 * debug.c - graph dumps on stderr, for comparison with llama.cpp's.
 */
#include <stdio.h>

#include "project/debug.h"

/* The graph as built, one tensor a line (tools/graphdiff.py). */
void ggfit__dump_graph(const gg_graph *g)
{
    for (uint32_t i = 0; i < g->n_leafs; i++) {
        const gg_tensor *t = &g->t[g->leafs[i]];
        fprintf(stderr, "leaf %s %s [%lld,%lld,%lld,%lld] buft %d\n", gg_tname(g, g->leafs[i]),
                ggfit_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1],
                (long long)t->ne[2], (long long)t->ne[3], t->buft);
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const gg_tensor *t = &g->t[g->nodes[i]];
        fprintf(stderr, "node %s op%d %s [%lld,%lld,%lld,%lld] pin %d src", gg_tname(g, g->nodes[i]), t->op,
                ggfit_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1],
                (long long)t->ne[2], (long long)t->ne[3], t->backend);
        for (int s = 0; s < t->n_src; s++)
            fprintf(stderr, "%s%s", s ? "|" : " ", t->src[s] >= 0 ? gg_tname(g, t->src[s]) : "-");
        fprintf(stderr, "\n");
    }
}

/* The graph the scheduler hands to ggml-alloc, one tensor a line, for
 * comparison with llama.cpp's recorded graphs (tools/scheddiff.py). */
void ggfit__dump_scheduled(const ggfit_sched_in *in, const ggfit_sched_out *so)
{
    char name[GGFIT_SCHED_NAME], src_name[GGFIT_SCHED_NAME];
    for (size_t i = 0; i < so->n_leafs + so->n_nodes; i++) {
        const ggfit_gt *t = &so->t[i];
        ggfit__sched_name(in, so, i, name);
        fprintf(stderr,
                "sched %s\t%s\t%d\t%s\t%lld,%lld,%lld,%lld\t%llu\t%d\t%u\t%d\t%d\t%llu\t",
                i < so->n_leafs ? "leaf" : "node", name, t->op, ggfit_type_name(t->type),
                (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
                (long long)t->ne[3], (unsigned long long)t->size, t->backend, t->flags,
                t->allocated, t->view_src, (unsigned long long)t->view_offs);
        for (int s = 0; s < t->n_src; s++) {
            if (t->src[s] < 0)
                snprintf(src_name, sizeof src_name, "-");
            else
                ggfit__sched_name(in, so, (size_t)t->src[s], src_name);
            fprintf(stderr, "%s%s", s ? "|" : "", src_name);
        }
        fprintf(stderr, "\n");
    }
}

