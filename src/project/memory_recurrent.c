/*
 * memory_recurrent.c - the recurrent state (llama_memory_recurrent) of the
 * layers that hold one (layers.c says which): its rows, one per sequence
 * (-np), in f32: r, the convolution's last d_conv - 1 inputs, and s, the
 * scan's state (llama_hparams::n_embd_r and n_embd_s).
 */
#include "base/base.h"
#include "llama/build.h"
#include "project/memory_recurrent.h"
#include "versions/version.h"

/* Mamba's state sizes: the convolution over d_inner plus the groups' B and
 * C, and d_state per inner channel. */
static void mamba_state_size(const ggfit_hparams *hp, uint64_t *r, uint64_t *s)
{
    *r = (uint64_t)(hp->ssm_d_conv ? hp->ssm_d_conv - 1 : 0) *
         (hp->ssm_d_inner + 2ull * hp->ssm_n_group * hp->ssm_d_state);
    *s = (uint64_t)hp->ssm_d_state * hp->ssm_d_inner;
}

void ggfit__project_state(proj *pr)
{
    const ggfit_hparams *hp = pr->hp;
    const ggfit_params *p = pr->p;
    if (pr->arch->rec == GGFIT_REC_NONE)
        return;
    uint64_t n_rows = p->n_seq ? p->n_seq : 1, r, s;
    if (ggfit__rs_rollback(pr->arch, p->llama_build))
        n_rows *= 1 + (uint64_t)p->n_rs_seq;   /* the rollback snapshots */
    (pr->arch->state_size ? pr->arch->state_size : mamba_state_size)(hp, &r, &s);
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        if (!(pr->layer_flags[il] & GB_LAYER_STATE))
            continue;
        int b = pr->kv_buft[il];
        ggfit__add_context(pr, b, r * 4 * n_rows);
        ggfit__add_context(pr, b, s * 4 * n_rows);
    }
}
