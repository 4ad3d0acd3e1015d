/*
 * test_arch_hybrid_b10587.c - the hybrid architectures llama.cpp gained
 * between b10309 and b10587: minimax-01 (lightning attention and full
 * attention), kimi-k3 (KDA and MLA, latent experts) and bailingmoe3 (KDA
 * and MLA with an MTP block). Small header-only models with the keys the
 * converter writes and the tensors load_tensors creates, projected on one
 * RPC device and on the CPU alone, with flash attention on and off; the
 * compute buffers must come from the graph and every figure must be
 * llama.cpp b10587's (data/oracle/b10587/). llama.cpp b10309 refuses each,
 * naming the build that added it.
 */
#include "arch_spec.h"

enum { FX = 128 };

/* The model of spec s, written into w (both freed by the caller). */
static ggfit_model *open_model(const model_spec *s, gw *w)
{
    write_spec(s, w);
    ggfit_gguf *g = NULL;
    ggfit_model *m = NULL;
    char *err = NULL;
    assert_int_equal(ggfit_gguf_open_memory(w->data, w->len, "tiny.gguf", &g, &err), GGFIT_OK);
    assert_int_equal(ggfit_model_from_gguf(g, &m, &err), GGFIT_OK);
    return m;
}

/* llama.cpp b10309 refuses the model with rc and a message holding what. */
static void refused_at_b10309_with(const model_spec *s, ggfit_status want, const char *what)
{
    gw w;
    ggfit_model *m = open_model(s, &w);
    char *err = NULL;
    ggfit_params p;
    ggfit_params_init(&p);
    p.llama_build = 10309;
    ggfit_projection pr;
    ggfit_status rc = ggfit_project(m, &p, NULL, 0, &pr, NULL, &err);
    if (rc != want || !err || !strstr(err, what))
        fail_msg("%s: expected b10309 to refuse it (%s), got %s: %s", s->arch, what,
                 ggfit_status_str(rc), err ? err : "");
    ggfit_free(err);
    ggfit_model_free(m);
    gw_free(&w);
}

/* llama.cpp b10309 refuses the model: the architecture came later. */
static void refused_at_b10309(const model_spec *s, const char *added)
{
    refused_at_b10309_with(s, GGFIT_EUNSUPPORTED, added);
}

/* ---- minimax-01 ---------------------------------------------------------- */

/* n blocks; the converter writes no recurrent_layers and no interval, so
 * every 8th block attends, unless recr (n values) says which blocks are
 * recurrent. Partial rotary (rotary_dim), head_dim given. */
static void minimax_01_spec(model_spec *s, uint32_t n, bool gate_exps, const uint32_t *recr)
{
    spec_init(s, "minimax-01");
    s->kvs[0].u = n;        /* block_count */
    s->kvs[4].u = FX;       /* feed_forward_length: the experts' */
    s->kvs[7].u = HD / 2;   /* rope.dimension_count: rotary_dim */
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "attention.key_length", HD);
    key_u32(s, "attention.value_length", HD);
    key_f32(s, "residual_scale", 2.0f);
    if (recr)
        key_arr(s, "attention.recurrent_layers", GGFIT_GGUF_UINT32, recr, n);
    head(s, true, false);
    for (int il = 0; il < (int)n; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (recr ? !recr[il] : (il + 1) % 8 == 0) {
            tensor(s, "blk.%d.attn_q.weight", il, E, NH * HD, 1);
            tensor(s, "blk.%d.attn_k.weight", il, E, NKV * HD, 1);
            tensor(s, "blk.%d.attn_v.weight", il, E, NKV * HD, 1);
        } else {
            tensor(s, "blk.%d.attn_norm_2.weight", il, NH * HD, 1, 1);
            tensor(s, "blk.%d.attn_qkv.weight", il, E, 3 * NH * HD, 1);
            tensor(s, "blk.%d.attn_gate.weight", il, E, NH * HD, 1);
        }
        tensor(s, "blk.%d.attn_output.weight", il, NH * HD, E, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        if (gate_exps)
            tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
    }
}

static void test_minimax_01(void **state)
{
    (void)state;
    model_spec s;
    /* Seven lightning blocks, then one full-attention block. */
    minimax_01_spec(&s, 8, true, NULL);
    project_all(&s, 0);
    refused_at_b10309(&s, "added in b10437");
}

/* ---- bailingmoe3 --------------------------------------------------------- */

enum { D_CONV = 4, KV_RANK = 128, ROPE = 32, HK_MLA = 96, HV_MLA = 64 };

/* The MLA attention of block il: Q from attn_q, else the LoRA pair. */
static void bailing3_mla(model_spec *s, int il, bool q_lora)
{
    if (q_lora) {
        tensor(s, "blk.%d.attn_q_a.weight", il, E, 64, 1);
        tensor(s, "blk.%d.attn_q_a_norm.weight", il, 64, 1, 1);
        tensor(s, "blk.%d.attn_q_b.weight", il, 64, NH * HK_MLA, 1);
    } else {
        tensor(s, "blk.%d.attn_q.weight", il, E, NH * HK_MLA, 1);
    }
    tensor(s, "blk.%d.attn_kv_a_mqa.weight", il, E, KV_RANK + ROPE, 1);
    tensor(s, "blk.%d.attn_kv_a_norm.weight", il, KV_RANK, 1, 1);
    tensor(s, "blk.%d.attn_k_b.weight", il, HK_MLA - ROPE, KV_RANK, NH);
    tensor(s, "blk.%d.attn_v_b.weight", il, KV_RANK, HV_MLA, NH);
    tensor(s, "blk.%d.attn_gate.weight", il, E, NH, 1);
    tensor(s, "blk.%d.attn_output.weight", il, NH * HV_MLA, E, 1);
}

static void bailing3_moe(model_spec *s, int il)
{
    tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
    tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
    tensor(s, "blk.%d.ffn_gate_exps.weight", il, E, FX, NX);
    tensor(s, "blk.%d.ffn_up_exps.weight", il, E, FX, NX);
    tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, E, NX);
    tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FX, 1);
    tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FX, 1);
    tensor(s, "blk.%d.ffn_down_shexp.weight", il, FX, E, 1);
}

/* Four trunk blocks, kinds[il] 'k' (KDA) or 'm' (MLA), n_dense of them
 * dense; mtp: a fifth, NextN block; q_lora: Q through the LoRA pair. */
static uint32_t bailing3_kvh[5];

static void bailingmoe3_spec(model_spec *s, const char kinds[4], uint32_t n_dense, bool mtp,
                             bool q_lora)
{
    uint32_t n = mtp ? 5 : 4;
    spec_init(s, "bailingmoe3");
    s->kvs[0].u = n;          /* block_count */
    s->kvs[7].u = ROPE;       /* rope.dimension_count: qk_rope_head_dim */
    for (uint32_t il = 0; il < n; il++)
        bailing3_kvh[il] = il >= 4 || kinds[il] == 'm' ? 1 : 0;
    key_drop(s, "attention.head_count_kv");
    key_arr(s, "attention.head_count_kv", GGFIT_GGUF_UINT32, bailing3_kvh, n);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "expert_gating_func", 2);
    key_u32(s, "attention.key_length", KV_RANK + ROPE);
    key_u32(s, "attention.value_length", HD);   /* head_dim: the KDA heads' */
    key_u32(s, "ssm.conv_kernel", D_CONV);
    key_u32(s, "kda.head_dim", HD);
    key_bool(s, "kda.safe_gate", true);
    key_f32(s, "kda.gate_lower_bound", -5.0f);
    if (q_lora)
        key_u32(s, "attention.q_lora_rank", 64);
    key_u32(s, "attention.kv_lora_rank", KV_RANK);
    key_u32(s, "attention.key_length_mla", HK_MLA);
    key_u32(s, "attention.value_length_mla", HV_MLA);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    key_u32(s, "leading_dense_block_count", n_dense);
    key_f32(s, "expert_weights_scale", 2.5f);
    key_bool(s, "expert_weights_norm", true);
    if (mtp)
        key_u32(s, "nextn_predict_layers", 1);
    head(s, true, false);
    for (int il = 0; il < 4; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        if (kinds[il] == 'k') {
            tensor(s, "blk.%d.ssm_conv1d_q.weight", il, D_CONV, 1, HD * NH);
            tensor(s, "blk.%d.ssm_conv1d_k.weight", il, D_CONV, 1, HD * NH);
            tensor(s, "blk.%d.ssm_conv1d_v.weight", il, D_CONV, 1, HD * NH);
            tensor(s, "blk.%d.attn_q.weight", il, E, HD * NH, 1);
            tensor(s, "blk.%d.attn_k.weight", il, E, HD * NH, 1);
            tensor(s, "blk.%d.attn_v.weight", il, E, HD * NH, 1);
            tensor(s, "blk.%d.ssm_f_a.weight", il, E, HD * NH, 1);
            tensor(s, "blk.%d.ssm_beta.weight", il, E, NH, 1);
            tensor(s, "blk.%d.ssm_a", il, 1, NH, 1);
            s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
            tensor(s, "blk.%d.ssm_dt.bias", il, HD * NH, 1, 1);
            tensor(s, "blk.%d.ssm_g_a.weight", il, E, HD * NH, 1);
            tensor(s, "blk.%d.ssm_norm.weight", il, HD, 1, 1);
            tensor(s, "blk.%d.attn_output.weight", il, HD * NH, E, 1);
        } else {
            bailing3_mla(s, il, q_lora);
        }
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if ((uint32_t)il < n_dense)
            ffn_swiglu(s, il);
        else
            bailing3_moe(s, il);
    }
    if (mtp) {
        tensor(s, "blk.%d.attn_norm.weight", 4, E, 1, 1);
        bailing3_mla(s, 4, q_lora);
        tensor(s, "blk.%d.ffn_norm.weight", 4, E, 1, 1);
        bailing3_moe(s, 4);
        tensor(s, "blk.%d.nextn.eh_proj.weight", 4, 2 * E, E, 1);
        tensor(s, "blk.%d.nextn.enorm.weight", 4, E, 1, 1);
        tensor(s, "blk.%d.nextn.hnorm.weight", 4, E, 1, 1);
        tensor(s, "blk.%d.layer_output_norm.weight", 4, E, 1, 1);
    }
}

static void test_bailingmoe3(void **state)
{
    (void)state;
    model_spec s;
    /* Three KDA blocks then MLA, a dense lead, an MTP block. */
    bailingmoe3_spec(&s, "kkkm", 1, true, false);
    project_all(&s, 0);
    refused_at_b10309(&s, "added in b10460");
    /* Alternating, Q through the LoRA pair, no MTP block. */
    bailingmoe3_spec(&s, "kmkm", 0, false, true);
    project_all(&s, 0);
    /* load_arch_hparams' asserts */
    key_f32(&s, "kda.gate_lower_bound", 0.0f);
    refused_with(&s, "kda.gate_lower_bound is 0");
    bailingmoe3_spec(&s, "kmkm", 0, false, true);
    key_bool(&s, "kda.safe_gate", false);
    refused_with(&s, "kda.safe_gate is false");
}

/* The trunk's context on the CPU with -c 4096 -np 1 and n_rs_seq
 * snapshots a sequence. */
static uint64_t bailingmoe3_context(const model_spec *s, uint32_t n_rs_seq)
{
    gw w;
    ggfit_model *m = open_model(s, &w);
    char *err = NULL;
    ggfit_params p;
    ggfit_params_init(&p);
    p.n_ctx = 4096;
    p.n_seq = 1;
    p.n_rs_seq = n_rs_seq;
    ggfit_projection pr;
    if (ggfit_project(m, &p, NULL, 0, &pr, NULL, &err) != GGFIT_OK)
        fail_msg("bailingmoe3: %s", err ? err : "");
    ggfit_model_free(m);
    gw_free(&w);
    return pr.host.context;
}

/* From b10581 the KDA state keeps n_rs_seq rollback snapshots: llama-server
 * b10587 -c 4096 -np 1 --spec-type draft-mtp (n_rs_seq 3) printed 3518464
 * bytes of context for the target: the K caches of the MLA block and the
 * NextN block (1310720 each) and four rows of the three KDA blocks' state
 * (224256 bytes a row); 2845696 with one row. */
static void test_bailingmoe3_rollback(void **state)
{
    (void)state;
    model_spec s;
    bailingmoe3_spec(&s, "kkkm", 1, true, false);
    assert_int_equal(bailingmoe3_context(&s, 3), 3518464);
    assert_int_equal(bailingmoe3_context(&s, 0), 2845696);
}

/* ---- kimi-k3 ------------------------------------------------------------- */

enum { LAT = 128 };

/* Four blocks: kinds[il] 'k' (KDA) or 'm' (MLA), n_dense leading dense
 * blocks; res_bs: the residual attention's block size (0: none); latent:
 * the routed experts on a down-projected input; lower_bound: the KDA gate
 * bounded; linear_beta: situ's up through its tanh. */
static uint32_t k3_kvh[4];

static void kimi_k3_spec(model_spec *s, const char kinds[4], uint32_t n_dense, uint32_t res_bs,
                         bool latent, bool lower_bound, float linear_beta)
{
    spec_init(s, "kimi-k3");
    s->kvs[0].u = 4;       /* block_count */
    s->kvs[7].u = ROPE;    /* rope.dimension_count */
    for (int il = 0; il < 4; il++)
        k3_kvh[il] = kinds[il] == 'm' ? 1 : 0;
    key_drop(s, "attention.head_count_kv");
    key_arr(s, "attention.head_count_kv", GGFIT_GGUF_UINT32, k3_kvh, 4);
    key_u32(s, "expert_count", NX);
    key_u32(s, "expert_used_count", 2);
    key_u32(s, "ssm.conv_kernel", D_CONV);
    key_u32(s, "kda.head_dim", HD);
    if (lower_bound)
        key_f32(s, "kda.gate_lower_bound", -5.0f);
    key_u32(s, "attention.kv_lora_rank", KV_RANK);
    key_u32(s, "attention.key_length", KV_RANK + ROPE);
    key_u32(s, "attention.value_length", KV_RANK);
    key_u32(s, "attention.key_length_mla", HK_MLA);
    key_u32(s, "attention.value_length_mla", HV_MLA);
    key_u32(s, "expert_feed_forward_length", FX);
    key_u32(s, "expert_shared_count", 1);
    key_u32(s, "leading_dense_block_count", n_dense);
    key_f32(s, "expert_weights_scale", 2.5f);
    key_bool(s, "expert_weights_norm", true);
    key_u32(s, "expert_gating_func", 2);
    if (latent)
        key_u32(s, "expert_latent_length", LAT);
    key_f32(s, "activation.situ_beta", 8.0f);
    key_f32(s, "activation.situ_linear_beta", linear_beta);
    key_u32(s, "attn_res.block_size", res_bs);
    head(s, true, false);
    if (res_bs)
        tensor(s, "output_res_score.weight", 0, E, 1, 1);
    int64_t lat = latent ? LAT : E;
    for (int il = 0; il < 4; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (res_bs) {
            tensor(s, "blk.%d.attn_res_score.weight", il, E, 1, 1);
            tensor(s, "blk.%d.ffn_res_score.weight", il, E, 1, 1);
        }
        if (kinds[il] == 'k') {
            tensor(s, "blk.%d.ssm_conv1d_q.weight", il, D_CONV, 1, HD * NH);
            tensor(s, "blk.%d.ssm_conv1d_k.weight", il, D_CONV, 1, HD * NH);
            tensor(s, "blk.%d.ssm_conv1d_v.weight", il, D_CONV, 1, HD * NH);
            tensor(s, "blk.%d.attn_q.weight", il, E, HD * NH, 1);
            tensor(s, "blk.%d.attn_k.weight", il, E, HD * NH, 1);
            tensor(s, "blk.%d.attn_v.weight", il, E, HD * NH, 1);
            tensor(s, "blk.%d.ssm_f_a.weight", il, E, HD, 1);
            tensor(s, "blk.%d.ssm_f_b.weight", il, HD, HD * NH, 1);
            tensor(s, "blk.%d.ssm_beta.weight", il, E, NH, 1);
            tensor(s, "blk.%d.ssm_a", il, NH, 1, 1);
            tensor(s, "blk.%d.ssm_dt.bias", il, HD * NH, 1, 1);
            tensor(s, "blk.%d.ssm_g.weight", il, E, HD * NH, 1);
            tensor(s, "blk.%d.ssm_norm.weight", il, HD, 1, 1);
            tensor(s, "blk.%d.attn_output.weight", il, HD * NH, E, 1);
        } else {
            tensor(s, "blk.%d.attn_kv_a_norm.weight", il, KV_RANK, 1, 1);
            tensor(s, "blk.%d.attn_q.weight", il, E, NH * HK_MLA, 1);
            tensor(s, "blk.%d.attn_kv_a_mqa.weight", il, E, KV_RANK + ROPE, 1);
            tensor(s, "blk.%d.attn_k_b.weight", il, HK_MLA - ROPE, KV_RANK, NH);
            tensor(s, "blk.%d.attn_v_b.weight", il, KV_RANK, HV_MLA, NH);
            tensor(s, "blk.%d.attn_gate.weight", il, E, NH * HV_MLA, 1);
            tensor(s, "blk.%d.attn_output.weight", il, NH * HV_MLA, E, 1);
        }
        if ((uint32_t)il < n_dense) {
            ffn_swiglu(s, il);
            continue;
        }
        tensor(s, "blk.%d.ffn_gate_inp.weight", il, E, NX, 1);
        tensor(s, "blk.%d.exp_probs_b.bias", il, NX, 1, 1);
        tensor(s, "blk.%d.ffn_gate_exps.weight", il, lat, FX, NX);
        tensor(s, "blk.%d.ffn_down_exps.weight", il, FX, lat, NX);
        tensor(s, "blk.%d.ffn_up_exps.weight", il, lat, FX, NX);
        if (latent) {
            tensor(s, "blk.%d.ffn_routed_down.weight", il, E, LAT, 1);
            tensor(s, "blk.%d.ffn_routed_up.weight", il, LAT, E, 1);
            tensor(s, "blk.%d.ffn_routed_norm.weight", il, LAT, 1, 1);
        }
        tensor(s, "blk.%d.ffn_gate_shexp.weight", il, E, FX, 1);
        tensor(s, "blk.%d.ffn_down_shexp.weight", il, FX, E, 1);
        tensor(s, "blk.%d.ffn_up_shexp.weight", il, E, FX, 1);
    }
}

static void test_kimi_k3(void **state)
{
    (void)state;
    model_spec s;
    /* Three KDA blocks then MLA, a dense lead, residual attention over
     * blocks of 2, latent experts, the bounded gate. */
    kimi_k3_spec(&s, "kkkm", 1, 2, true, true, 16.0f);
    project_all(&s, 0);
    refused_at_b10309(&s, "added in b10448");
    /* Alternating, all experts at full width, no residual attention, the
     * softplus gate, situ's up left linear. */
    kimi_k3_spec(&s, "mkmk", 0, 0, false, false, 0.0f);
    project_all(&s, 0);
}

/* ---- LLAMA_MAX_EXPERTS ---------------------------------------------------- */

/* Kimi-K3's commit raised llama.cpp's expert limit from 512 to 1024: a
 * model of 600 experts loads at b10587, b10309 asserts. */
static void test_max_experts(void **state)
{
    (void)state;
    enum { N_EXP = 600 };
    model_spec s;
    spec_init(&s, "llama");
    key_u32(&s, "expert_count", N_EXP);
    key_u32(&s, "expert_used_count", 2);
    head(&s, true, false);
    for (int il = 0; il < NL; il++) {
        tensor(&s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(&s, il, false);
        tensor(&s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        tensor(&s, "blk.%d.ffn_gate_inp.weight", il, E, N_EXP, 1);
        tensor(&s, "blk.%d.ffn_gate_exps.weight", il, E, FX, N_EXP);
        tensor(&s, "blk.%d.ffn_down_exps.weight", il, FX, E, N_EXP);
        tensor(&s, "blk.%d.ffn_up_exps.weight", il, E, FX, N_EXP);
    }
    ggfit_projection pr;
    project_one(&s, 4096, &pr);
    refused_at_b10309_with(&s, GGFIT_EFORMAT, "LLAMA_MAX_EXPERTS");
}

/* ---- more of each, numbered after the others ------------------------------ */

/* Removes the tensors whose names hold part. */
static void drop_tensors(model_spec *s, const char *part)
{
    size_t j = 0;
    for (size_t i = 0; i < s->n_t; i++) {
        if (strstr(s->names[i], part))
            continue;
        if (j != i) {
            memcpy(s->names[j], s->names[i], sizeof s->names[j]);
            s->t[j] = s->t[i];
        }
        s->t[j].name = s->names[j];
        j++;
    }
    s->n_t = j;
}

static void test_more(void **state)
{
    (void)state;
    model_spec s;
    /* minimax-01: the file says which blocks are recurrent (block 1
     * attends), no gate experts. */
    static const uint32_t recr[4] = { 1, 0, 1, 1 };
    minimax_01_spec(&s, 4, false, recr);
    project_all(&s, 0);
    /* bailingmoe3: SwiGLU clamps per block (the dense block's and the
     * shared experts' from swiglu_clamp_shexp, the NextN block's too). */
    static const float clamp_exp[5] = { 0, 7, 7, 0, 7 }, clamp_shexp[5] = { 7, 7, 0, 7, 7 };
    bailingmoe3_spec(&s, "kkmk", 1, true, false);
    key_arr(&s, "swiglu_clamp_exp", GGFIT_GGUF_FLOAT32, clamp_exp, 5);
    key_arr(&s, "swiglu_clamp_shexp", GGFIT_GGUF_FLOAT32, clamp_shexp, 5);
    project_all(&s, 0);
    /* kimi-k3: every block banked, Q through the LoRA pair, no MLA gate,
     * latent experts without routed_norm. */
    kimi_k3_spec(&s, "kmkm", 1, 1, true, true, 16.0f);
    drop_tensors(&s, "attn_gate");
    drop_tensors(&s, "ffn_routed_norm");
    drop_tensors(&s, "blk.1.attn_q.weight");
    drop_tensors(&s, "blk.3.attn_q.weight");
    key_u32(&s, "attention.q_lora_rank", 64);
    for (int il = 1; il < 4; il += 2) {
        tensor(&s, "blk.%d.attn_q_a.weight", il, E, 64, 1);
        tensor(&s, "blk.%d.attn_q_a_norm.weight", il, 64, 1, 1);
        tensor(&s, "blk.%d.attn_q_b.weight", il, 64, NH * HK_MLA, 1);
    }
    project_all(&s, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimax_01),
        cmocka_unit_test(test_bailingmoe3),
        cmocka_unit_test(test_bailingmoe3_rollback),
        cmocka_unit_test(test_kimi_k3),
        cmocka_unit_test(test_max_experts),
        cmocka_unit_test(test_more),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
