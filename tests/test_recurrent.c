/*
 * test_recurrent.c - the graphs of the recurrent and hybrid families
 * without recorded references (mamba, mamba2, jamba, granitehybrid,
 * lfm2moe, falcon-h1): small
 * header-only GGUFs with the tensors llama.cpp's load_tensors creates are
 * projected on one RPC device and on the CPU; the compute graph must be
 * built (no estimate) and the context must be llama.cpp's KV cache plus
 * recurrent state (LLAMA_MEMORY.md section 4).
 */
#include <stdlib.h>

#include "gguf_writer.h"
#include "test_util.h"

enum { N_EMBD = 64, N_VOCAB = 256, D_CONV = 4, D_INNER = 128, D_STATE = 16, N_CTX = 1024 };

/* A model under construction: keys and tensor infos, counted. */
typedef struct mw {
    gw kv, ti;
    uint64_t n_kv, n_ti, off;
    char arch[32];
    /* what the context holds, for the expected bytes */
    uint64_t r, s;              /* state floats per row */
    uint32_t n_layer;
    uint32_t kv_heads[16], head_dim;
    bool state_everywhere;      /* falcon-h1: attention layers hold state too */
} mw;

static void key_u32(mw *m, const char *suffix, uint32_t v)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    gw_kv_u32(&m->kv, key, v);
    m->n_kv++;
}

static void key_f32(mw *m, const char *suffix, float v)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    gw_kv_f32(&m->kv, key, v);
    m->n_kv++;
}

static void tensor(mw *m, uint32_t type, int64_t ne0, int64_t ne1, int64_t ne2,
                   const char *fmt, int il)
{
    char name[96];
    snprintf(name, sizeof name, fmt, il);
    int64_t ne[3] = { ne0, ne1, ne2 };
    uint32_t n_dims = ne2 > 1 ? 3 : ne1 > 1 ? 2 : 1;
    gw_tensor(&m->ti, name, n_dims, ne, type, m->off);
    m->off += (ggfit_row_bytes(type, (uint64_t)ne0) * (uint64_t)(ne1 * ne2) + 31) / 32 * 32;
    m->n_ti++;
}

static void w2(mw *m, int64_t a, int64_t b, const char *fmt, int il)
{
    tensor(m, GGFIT_TYPE_F16, a, b, 1, fmt, il);
}

static void f32(mw *m, int64_t a, int64_t b, const char *fmt, int il)
{
    tensor(m, GGFIT_TYPE_F32, a, b, 1, fmt, il);
}

static void begin(mw *m, const char *arch, uint32_t n_layer, uint32_t n_head,
                  const uint32_t *kv_heads, uint32_t n_ff)
{
    memset(m, 0, sizeof *m);
    snprintf(m->arch, sizeof m->arch, "%s", arch);
    m->n_layer = n_layer;
    gw_kv_str(&m->kv, "general.architecture", arch);
    gw_kv_u32(&m->kv, "general.alignment", 32);
    /* No tokenizer, as in the shipped layouts: llama.cpp then takes the
     * vocabulary size from <arch>.vocab_size. */
    gw_kv_str(&m->kv, "tokenizer.ggml.model", "none");
    m->n_kv = 3;
    key_u32(m, "vocab_size", N_VOCAB);
    key_u32(m, "block_count", n_layer);
    key_u32(m, "context_length", 4096);
    key_u32(m, "embedding_length", N_EMBD);
    key_u32(m, "feed_forward_length", n_ff);
    key_u32(m, "attention.head_count", n_head);
    key_f32(m, "attention.layer_norm_rms_epsilon", 1e-5f);
    if (kv_heads) {
        char key[128];
        snprintf(key, sizeof key, "%s.attention.head_count_kv", arch);
        gw_kv_arr_u32(&m->kv, key, kv_heads, n_layer);
        m->n_kv++;
        memcpy(m->kv_heads, kv_heads, n_layer * sizeof *kv_heads);
        m->head_dim = N_EMBD / n_head;
    } else {
        key_u32(m, "attention.head_count_kv", 0);
    }
    key_u32(m, "ssm.conv_kernel", D_CONV);
    key_u32(m, "ssm.inner_size", D_INNER);
    key_u32(m, "ssm.state_size", D_STATE);
    w2(m, N_EMBD, N_VOCAB, "token_embd.weight", 0);
}

/* The output norm (named norm), the output, then the header. */
static void end_norm(mw *m, gw *out, const char *norm)
{
    f32(m, N_EMBD, 1, norm, 0);
    w2(m, N_EMBD, N_VOCAB, "output.weight", 0);
    memset(out, 0, sizeof *out);
    gw_header(out, 3, m->n_ti, m->n_kv);
    gw_bytes(out, m->kv.data, m->kv.len);
    gw_bytes(out, m->ti.data, m->ti.len);
    gw_pad(out, 32);
    gw_free(&m->kv);
    gw_free(&m->ti);
}

static void end(mw *m, gw *out)
{
    end_norm(m, out, "output_norm.weight");
}

/* llama_model_mamba::load_arch_tensors, one layer */
static void mamba1_layer(mw *m, int il, uint32_t dt_rank, bool jamba_norms)
{
    w2(m, N_EMBD, 2 * D_INNER, "blk.%d.ssm_in.weight", il);
    f32(m, D_CONV, D_INNER, "blk.%d.ssm_conv1d.weight", il);
    f32(m, D_INNER, 1, "blk.%d.ssm_conv1d.bias", il);
    w2(m, D_INNER, dt_rank + 2 * D_STATE, "blk.%d.ssm_x.weight", il);
    if (jamba_norms)
        f32(m, dt_rank, 1, "blk.%d.ssm_dt_norm.weight", il);
    w2(m, dt_rank, D_INNER, "blk.%d.ssm_dt.weight", il);
    f32(m, D_INNER, 1, "blk.%d.ssm_dt.bias", il);
    if (jamba_norms) {
        f32(m, D_STATE, 1, "blk.%d.ssm_b_norm.weight", il);
        f32(m, D_STATE, 1, "blk.%d.ssm_c_norm.weight", il);
    }
    f32(m, D_STATE, D_INNER, "blk.%d.ssm_a", il);
    f32(m, D_INNER, 1, "blk.%d.ssm_d", il);
    w2(m, D_INNER, N_EMBD, "blk.%d.ssm_out.weight", il);
    m->r = (D_CONV - 1) * D_INNER;
    m->s = D_STATE * D_INNER;
}

/* llama_model_mamba2 / granite_hybrid load_arch_tensors, one SSM layer */
static void mamba2_layer(mw *m, int il, uint32_t n_head, uint32_t n_group)
{
    int64_t conv_dim = D_INNER + 2 * n_group * D_STATE;
    w2(m, N_EMBD, D_INNER + conv_dim + n_head, "blk.%d.ssm_in.weight", il);
    f32(m, D_CONV, conv_dim, "blk.%d.ssm_conv1d.weight", il);
    f32(m, conv_dim, 1, "blk.%d.ssm_conv1d.bias", il);
    f32(m, n_head, 1, "blk.%d.ssm_dt.bias", il);
    f32(m, 1, n_head, "blk.%d.ssm_a", il);
    f32(m, 1, n_head, "blk.%d.ssm_d", il);
    f32(m, D_INNER / n_group, n_group, "blk.%d.ssm_norm.weight", il);
    w2(m, D_INNER, N_EMBD, "blk.%d.ssm_out.weight", il);
    m->r = (D_CONV - 1) * (uint64_t)conv_dim;
    m->s = D_STATE * D_INNER;
}

static void attn_layer(mw *m, int il, uint32_t n_head_kv)
{
    int64_t gqa = (int64_t)m->head_dim * n_head_kv;
    w2(m, N_EMBD, N_EMBD, "blk.%d.attn_q.weight", il);
    w2(m, N_EMBD, gqa, "blk.%d.attn_k.weight", il);
    w2(m, N_EMBD, gqa, "blk.%d.attn_v.weight", il);
    w2(m, N_EMBD, N_EMBD, "blk.%d.attn_output.weight", il);
}

static void dense_ffn(mw *m, int il, uint32_t n_ff)
{
    f32(m, N_EMBD, 1, "blk.%d.ffn_norm.weight", il);
    w2(m, N_EMBD, n_ff, "blk.%d.ffn_gate.weight", il);
    w2(m, n_ff, N_EMBD, "blk.%d.ffn_down.weight", il);
    w2(m, N_EMBD, n_ff, "blk.%d.ffn_up.weight", il);
}

static void moe_ffn(mw *m, int il, uint32_t n_ff, uint32_t n_expert)
{
    f32(m, N_EMBD, 1, "blk.%d.ffn_norm.weight", il);
    f32(m, N_EMBD, n_expert, "blk.%d.ffn_gate_inp.weight", il);
    tensor(m, GGFIT_TYPE_F16, N_EMBD, n_ff, n_expert, "blk.%d.ffn_gate_exps.weight", il);
    tensor(m, GGFIT_TYPE_F16, n_ff, N_EMBD, n_expert, "blk.%d.ffn_down_exps.weight", il);
    tensor(m, GGFIT_TYPE_F16, N_EMBD, n_ff, n_expert, "blk.%d.ffn_up_exps.weight", il);
}

#define PAD32(x) (((x) + 31) / 32 * 32)

/* llama.cpp's context bytes: f16 K and V (flash attention on: V not
 * transposed) of kv_size cells per stream for the attention layers, F32
 * r and s states of max(1, n_seq) rows for the others. */
static uint64_t expected_context(const mw *m, uint32_t n_seq)
{
    uint64_t total = 0, rows = n_seq ? n_seq : 1;
    uint64_t cells = n_seq > 1 ? (N_CTX / n_seq + 255) / 256 * 256 : N_CTX;
    for (uint32_t il = 0; il < m->n_layer; il++) {
        if (m->kv_heads[il]) {
            uint64_t row = 2ull * m->head_dim * m->kv_heads[il];
            total += 2 * PAD32(row * cells * rows);   /* n_stream = n_seq */
        }
        if (!m->kv_heads[il] || m->state_everywhere) {
            total += PAD32(4 * m->r * rows) + PAD32(4 * m->s * rows);
        }
    }
    return total;
}

static void check(const mw *m, const gw *w, const char *gpus, uint32_t n_seq)
{
    ggfit_gguf *g = NULL;
    ggfit_model *model = NULL;
    char *err = NULL;
    if (ggfit_gguf_open_memory(w->data, w->len, m->arch, &g, &err) != GGFIT_OK)
        fail_msg("%s", err);
    if (ggfit_model_from_gguf(g, &model, &err) != GGFIT_OK)
        fail_msg("%s", err);
    ggfit_device devs[4];
    size_t n = 0;
    if (gpus && ggfit_devices_parse(gpus, devs, 4, &n, &err) != GGFIT_OK)
        fail_msg("%s", err);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = N_CTX;
    p.set_n_ctx = true;
    p.n_seq = n_seq;
    ggfit_projection *pr = calloc(1, sizeof *pr);
    assert_non_null(pr);
    if (ggfit_project(model, &p, devs, n, pr, NULL, &err) != GGFIT_OK)
        fail_msg("%s %s: %s", m->arch, gpus ? gpus : "cpu", err);
    if (pr->compute_estimated)
        fail_msg("%s %s: compute estimated: %s", m->arch, gpus ? gpus : "cpu", pr->warning);
    uint64_t compute = 0, context = 0;
    for (uint32_t b = 0; b < pr->n_bufts; b++) {
        compute += pr->bufts[b].mem.compute;
        context += pr->bufts[b].mem.context;
    }
    assert_true(compute > 0);
    if (context != expected_context(m, n_seq))
        fail_msg("%s %s np=%u: context %llu, expected %llu", m->arch, gpus ? gpus : "cpu",
                 n_seq, (unsigned long long)context,
                 (unsigned long long)expected_context(m, n_seq));
    if (gpus) {   /* every layer offloaded: nothing of the context on the CPU */
        assert_int_equal(pr->n_gpu_layers, (int32_t)m->n_layer + 1);
        assert_int_equal(pr->host.context, 0);
    }
    free(pr);
    ggfit_model_free(model);
}

static void check_all(mw *m, gw *w)
{
    /* GGFIT_ARCHS_DUMP=DIR keeps the files as <arch>-<n>.gguf, n
     * counting the models written: data/tiny/ holds them. */
    static int n_written;
    char file[64], where[96];
    snprintf(file, sizeof file, "%s-%d.gguf", m->arch, n_written);
    snprintf(where, sizeof where, "tests/test_recurrent.c, model %d (%s)", n_written++, m->arch);
    assert_int_equal(gw_dump(w, "GGFIT_ARCHS_DUMP", file, where), 0);
    for (uint32_t n_seq = 1; n_seq <= 2; n_seq++) {
        check(m, w, "rpc:8GiB", n_seq);
        check(m, w, NULL, n_seq);
    }
    gw_free(w);
}

static void test_mamba(void **state)
{
    (void)state;
    mw m;
    gw w;
    begin(&m, "mamba", 3, 0, NULL, 0);
    key_u32(&m, "ssm.time_step_rank", 4);
    for (int il = 0; il < 3; il++) {
        f32(&m, N_EMBD, 1, "blk.%d.attn_norm.weight", il);
        mamba1_layer(&m, il, 4, false);
    }
    end(&m, &w);
    check_all(&m, &w);
}

static void test_mamba2(void **state)
{
    (void)state;
    mw m;
    gw w;
    begin(&m, "mamba2", 3, 0, NULL, 0);
    key_u32(&m, "ssm.time_step_rank", 8);
    key_u32(&m, "ssm.group_count", 2);
    for (int il = 0; il < 3; il++) {
        f32(&m, N_EMBD, 1, "blk.%d.attn_norm.weight", il);
        mamba2_layer(&m, il, 8, 2);
    }
    end(&m, &w);
    check_all(&m, &w);
}

/* Mamba and attention layers, dense and MoE feed-forwards. */
static void test_jamba(void **state)
{
    (void)state;
    const uint32_t kv[4] = { 0, 0, 2, 0 };
    mw m;
    gw w;
    begin(&m, "jamba", 4, 4, kv, 96);
    key_u32(&m, "ssm.time_step_rank", 4);
    key_u32(&m, "expert_count", 4);
    key_u32(&m, "expert_used_count", 2);
    for (int il = 0; il < 4; il++) {
        f32(&m, N_EMBD, 1, "blk.%d.attn_norm.weight", il);
        if (kv[il])
            attn_layer(&m, il, kv[il]);
        else
            mamba1_layer(&m, il, 4, true);
        if (il % 2)
            moe_ffn(&m, il, 96, 4);
        else
            dense_ffn(&m, il, 96);
    }
    end(&m, &w);

    /* Heads of 16 values: a q8_0 cache's blocks of 32 do not divide them,
     * which llama.cpp refuses unless flash attention is off. */
    ggfit_gguf *g = NULL;
    ggfit_model *model = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w.data, w.len, "jamba.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &model, &err), GGFIT_OK);
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = N_CTX;
    p.type_k = GGFIT_TYPE_Q8_0;
    ggfit_projection pr;
    assert_int_equal(ggfit_project(model, &p, NULL, 0, &pr, NULL, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "does not divide n_embd_head_k=16"));
    ggfit_free(err);
    p.flash_attn = GGFIT_FA_OFF;
    assert_int_equal(ggfit_project(model, &p, NULL, 0, &pr, NULL, &err), GGFIT_OK);
    /* A quantized V of such heads: refused with -fa auto or on (the block
     * check, auto counting as on) and off (no flash attention), as
     * llama.cpp refuses it (the same with heads of 80 and q4_0, checked
     * against llama-fit-params). */
    p.type_k = GGFIT_TYPE_F16;
    p.type_v = GGFIT_TYPE_Q8_0;
    static const int fas[] = { GGFIT_FA_AUTO, GGFIT_FA_ON, GGFIT_FA_OFF };
    for (size_t f = 0; f < 3; f++) {
        p.flash_attn = fas[f];
        assert_int_equal(ggfit_project(model, &p, NULL, 0, &pr, NULL, &err), GGFIT_EINVAL);
        assert_non_null(strstr(err, fas[f] == GGFIT_FA_OFF ? "needs flash attention"
                                                           : "with any -fa"));
        ggfit_free(err);
    }
    ggfit_model_free(model);

    check_all(&m, &w);
}

static void granite_begin(mw *m, const uint32_t *kv)
{
    begin(m, "granitehybrid", 4, 4, kv, 96);
    key_u32(m, "ssm.time_step_rank", 8);
    key_u32(m, "ssm.group_count", 1);
    key_f32(m, "residual_scale", 0.22f);
    key_f32(m, "logit_scale", 8.0f);
    key_f32(m, "embedding_scale", 12.0f);
    key_f32(m, "attention.scale", 0.015625f);
}

/* Granite 4.0-H dense: Mamba2 and RoPE attention layers. */
static void test_granitehybrid_dense(void **state)
{
    (void)state;
    const uint32_t kv[4] = { 0, 2, 0, 0 };
    mw m;
    gw w;
    granite_begin(&m, kv);
    for (int il = 0; il < 4; il++) {
        f32(&m, N_EMBD, 1, "blk.%d.attn_norm.weight", il);
        if (kv[il])
            attn_layer(&m, il, kv[il]);
        else
            mamba2_layer(&m, il, 8, 1);
        dense_ffn(&m, il, 96);
    }
    end(&m, &w);
    check_all(&m, &w);
}

/* Granite 4.0-H MoE with a shared expert. */
static void test_granitehybrid_moe(void **state)
{
    (void)state;
    const uint32_t kv[4] = { 0, 0, 0, 2 };
    mw m;
    gw w;
    granite_begin(&m, kv);
    key_u32(&m, "expert_count", 8);
    key_u32(&m, "expert_used_count", 2);
    key_u32(&m, "expert_shared_feed_forward_length", 128);
    for (int il = 0; il < 4; il++) {
        f32(&m, N_EMBD, 1, "blk.%d.attn_norm.weight", il);
        if (kv[il])
            attn_layer(&m, il, kv[il]);
        else
            mamba2_layer(&m, il, 8, 1);
        moe_ffn(&m, il, 96, 8);   /* llama.cpp sizes the experts by n_ff */
        w2(&m, N_EMBD, 128, "blk.%d.ffn_gate_shexp.weight", il);
        w2(&m, N_EMBD, 128, "blk.%d.ffn_up_shexp.weight", il);
        w2(&m, 128, N_EMBD, "blk.%d.ffn_down_shexp.weight", il);
    }
    end(&m, &w);
    check_all(&m, &w);
}

/* LFM2-MoE: short-conv and attention (Q/K norms) layers; a dense FFN in
 * the first n_dense layers (no key: none), experts with a selection bias
 * after them, under the given gating. */
static void lfm2moe(const uint32_t *kv, int n_dense, uint32_t gating)
{
    const uint32_t l_cache = 3;
    mw m;
    gw w;
    begin(&m, "lfm2moe", 4, 2, kv, 96);
    key_u32(&m, "shortconv.l_cache", l_cache);
    if (n_dense >= 0)
        key_u32(&m, "leading_dense_block_count", (uint32_t)n_dense);
    key_u32(&m, "expert_count", 8);
    key_u32(&m, "expert_used_count", 2);
    key_u32(&m, "expert_feed_forward_length", 64);
    key_u32(&m, "expert_gating_func", gating);
    for (int il = 0; il < 4; il++) {
        if (il < n_dense) {
            dense_ffn(&m, il, 96);
        } else {
            moe_ffn(&m, il, 64, 8);
            f32(&m, 8, 1, "blk.%d.exp_probs_b.bias", il);
        }
        f32(&m, N_EMBD, 1, "blk.%d.attn_norm.weight", il);
        if (kv[il]) {
            f32(&m, m.head_dim, 1, "blk.%d.attn_q_norm.weight", il);
            f32(&m, m.head_dim, 1, "blk.%d.attn_k_norm.weight", il);
            attn_layer(&m, il, kv[il]);
        } else {
            f32(&m, l_cache, N_EMBD, "blk.%d.shortconv.conv.weight", il);
            w2(&m, N_EMBD, 3 * N_EMBD, "blk.%d.shortconv.in_proj.weight", il);
            w2(&m, N_EMBD, N_EMBD, "blk.%d.shortconv.out_proj.weight", il);
        }
    }
    m.r = (l_cache - 1) * N_EMBD;
    m.s = 0;
    end_norm(&m, &w, "token_embd_norm.weight");
    check_all(&m, &w);
}

static void test_lfm2moe(void **state)
{
    (void)state;
    const uint32_t kv1[4] = { 0, 0, 1, 0 }, kv2[4] = { 0, 2, 0, 2 };
    lfm2moe(kv1, 1, 2);    /* LFM2-8B-A1B: sigmoid gating */
    lfm2moe(kv2, -1, 1);   /* every layer MoE, softmax gating */
}

/* Falcon-H1: attention and a Mamba2 mixer in every layer, biases on the
 * feed-forward of one layer. */
static void test_falcon_h1(void **state)
{
    (void)state;
    const uint32_t kv[3] = { 1, 1, 1 };   /* llama.cpp loads layer 0's count for all */
    mw m;
    gw w;
    begin(&m, "falcon-h1", 3, 2, kv, 96);
    m.state_everywhere = true;
    key_u32(&m, "ssm.time_step_rank", 8);
    key_u32(&m, "ssm.group_count", 2);
    for (int il = 0; il < 3; il++) {
        mamba2_layer(&m, il, 8, 2);
        attn_layer(&m, il, kv[il]);
        f32(&m, N_EMBD, 1, "blk.%d.attn_norm.weight", il);
        f32(&m, N_EMBD, 1, "blk.%d.ffn_norm", il);   /* no .weight */
        w2(&m, N_EMBD, 96, "blk.%d.ffn_gate.weight", il);
        w2(&m, 96, N_EMBD, "blk.%d.ffn_down.weight", il);
        w2(&m, N_EMBD, 96, "blk.%d.ffn_up.weight", il);
        if (il == 1) {
            f32(&m, 96, 1, "blk.%d.ffn_gate.bias", il);
            f32(&m, N_EMBD, 1, "blk.%d.ffn_down.bias", il);
            f32(&m, 96, 1, "blk.%d.ffn_up.bias", il);
        }
    }
    end(&m, &w);
    check_all(&m, &w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mamba),
        cmocka_unit_test(test_mamba2),
        cmocka_unit_test(test_jamba),
        cmocka_unit_test(test_granitehybrid_dense),
        cmocka_unit_test(test_granitehybrid_moe),
        cmocka_unit_test(test_lfm2moe),
        cmocka_unit_test(test_falcon_h1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
