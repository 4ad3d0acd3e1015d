/*
 * memory_recurrent.c - the recurrent state (llama_memory_recurrent): which
 * layers hold one, and its rows, one per sequence (-np), in f32: r, the
 * convolution's last d_conv - 1 inputs, and s, the scan's state
 * (llama_hparams::n_embd_r and n_embd_s).
 */
#include "base/base.h"
#include "project/project.h"

bool ggfit__layer_has_state(const proj *pr, uint32_t il)
{
    const ggfit_layer_info *li = ggfit_model_layer(pr->m, il);
    if (li->nextn || (pr->p->ctx_mtp && pr->arch->mtp_kv_nextn))
        return false;   /* an MTP context of a hybrid has attention only */
    switch (pr->arch->rec) {
    case GGFIT_REC_NONE: return false;
    case GGFIT_REC_ALL: case GGFIT_REC_BOTH: return true;
    case GGFIT_REC_NO_KV_HEADS: return li->n_head_kv == 0;
    case GGFIT_REC_NEMOTRON_H: return li->n_head_kv == 0 && li->n_ff == 0;
    case GGFIT_REC_INTERVAL: {
        /* attention.recurrent_layers, when given, decides */
        int r = ggfit__model_recurrent(pr->m, il);
        if (r >= 0)
            return r == 1;
        uint32_t n = pr->hp->full_attn_interval ? pr->hp->full_attn_interval
                                                : pr->arch->rec_interval_default;
        return !n || (il + 1) % n != 0;
    }
    }
    return false;
}

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
    if (pr->arch->rs_rollback)
        n_rows *= 1 + (uint64_t)p->n_rs_seq;   /* the rollback snapshots */
    (pr->arch->state_size ? pr->arch->state_size : mamba_state_size)(hp, &r, &s);
    for (uint32_t il = 0; il < hp->n_layer; il++) {
        if (!ggfit__layer_has_state(pr, il))
            continue;
        int b = ggfit__context_buft(pr, il);
        ggfit__add_context(pr, b, r * 4 * n_rows);
        ggfit__add_context(pr, b, s * 4 * n_rows);
    }
}
