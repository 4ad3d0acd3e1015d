/*
 * test_arch_t5.c - the graph builders of T5 (encoder-decoder: llama.cpp
 * reserves the decoder's graph, whose cross-attention reads n_ctx_train
 * encoder rows), Talkie (a Llama-like stack without norm weights, a skip
 * from the normed embeddings) and Qwen3-TTS (Qwen3-VL's graph with a
 * short codec head padded to the vocabulary): small header-only models with
 * the tensors llama.cpp's load_tensors creates.
 */
#include "arch_spec.h"

/* ---- t5 ------------------------------------------------------------------ */

enum { N_BKTS = 32 };

/* llama_model_t5::load_arch_tensors: "enc." and "dec." blocks, one KV head
 * per head (Q is n_embd_k_gqa wide), relative position biases on the first
 * blocks (all: rel_all), a GEGLU gate (flan-T5) or ReLU. n_dec decoder
 * blocks (decoder_block_count when not NL). */
static void t5_spec(model_spec *s, bool output, bool gated, bool rel_all, int n_dec)
{
    spec_init(s, "t5");
    s->kvs[6].u = NH;   /* head_count_kv */
    key_u32(s, "attention.relative_buckets_count", N_BKTS);
    key_u32(s, "decoder_start_token_id", 0);
    if (n_dec != NL)
        key_u32(s, "decoder_block_count", (uint32_t)n_dec);
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "enc.output_norm.weight", 0, E, 1, 1);
    tensor(s, "dec.output_norm.weight", 0, E, 1, 1);
    if (output)
        tensor(s, "output.weight", 0, E, V, 1);
    for (int il = 0; il < NL; il++) {
        tensor(s, "enc.blk.%d.attn_norm.weight", il, E, 1, 1);
        if (il == 0 || rel_all) {
            tensor(s, "enc.blk.%d.attn_rel_b.weight", il, NH, N_BKTS, 1);
            s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
        }
        tensor(s, "enc.blk.%d.attn_q.weight", il, E, NH * HD, 1);
        tensor(s, "enc.blk.%d.attn_k.weight", il, E, NH * HD, 1);
        tensor(s, "enc.blk.%d.attn_v.weight", il, E, NH * HD, 1);
        tensor(s, "enc.blk.%d.attn_o.weight", il, NH * HD, E, 1);
        tensor(s, "enc.blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (gated)
            tensor(s, "enc.blk.%d.ffn_gate.weight", il, E, F, 1);
        tensor(s, "enc.blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "enc.blk.%d.ffn_up.weight", il, E, F, 1);
    }
    for (int il = 0; il < n_dec; il++) {
        tensor(s, "dec.blk.%d.attn_norm.weight", il, E, 1, 1);
        if (il == 0 || rel_all) {
            tensor(s, "dec.blk.%d.attn_rel_b.weight", il, NH, N_BKTS, 1);
            s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
        }
        tensor(s, "dec.blk.%d.attn_q.weight", il, E, NH * HD, 1);
        tensor(s, "dec.blk.%d.attn_k.weight", il, E, NH * HD, 1);
        tensor(s, "dec.blk.%d.attn_v.weight", il, E, NH * HD, 1);
        tensor(s, "dec.blk.%d.attn_o.weight", il, NH * HD, E, 1);
        tensor(s, "dec.blk.%d.cross_attn_norm.weight", il, E, 1, 1);
        tensor(s, "dec.blk.%d.cross_attn_q.weight", il, E, NH * HD, 1);
        tensor(s, "dec.blk.%d.cross_attn_k.weight", il, E, NH * HD, 1);
        tensor(s, "dec.blk.%d.cross_attn_v.weight", il, E, NH * HD, 1);
        tensor(s, "dec.blk.%d.cross_attn_o.weight", il, NH * HD, E, 1);
        tensor(s, "dec.blk.%d.ffn_norm.weight", il, E, 1, 1);
        if (gated)
            tensor(s, "dec.blk.%d.ffn_gate.weight", il, E, F, 1);
        tensor(s, "dec.blk.%d.ffn_down.weight", il, F, E, 1);
        tensor(s, "dec.blk.%d.ffn_up.weight", il, E, F, 1);
    }
}

static void test_t5(void **state)
{
    (void)state;
    model_spec s;
    t5_spec(&s, false, true, false, NL);   /* flan-T5: tied output, GEGLU */
    project_all(&s, 0);
    t5_spec(&s, true, false, true, NL);    /* T5: ReLU, a bias per block */
    project_all(&s, 0);
    t5_spec(&s, true, true, false, NL - 1); /* fewer decoder blocks: the cache keeps NL */
    project_all(&s, 0);
}

/* ---- talkie -------------------------------------------------------------- */

/* llama_model_talkie::load_arch_tensors: no norm weights but Q's gain (one
 * per head), a scalar scale of the embedding skip per block. */
static void talkie_spec(model_spec *s)
{
    spec_init(s, "talkie");
    key_f32(s, "logit_scale", 0.5f);
    tensor(s, "token_embd.weight", 0, E, V, 1);
    tensor(s, "output.weight", 0, E, V, 1);
    for (int il = 0; il < NL; il++) {
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_q_norm.weight", il, 1, NH, 1);
        s->t[s->n_t - 1].type = GGFIT_TYPE_F32;
        ffn_swiglu(s, il);
        tensor(s, "blk.%d.layer_output_scale.weight", il, 1, 1, 1);
    }
}

static void test_talkie(void **state)
{
    (void)state;
    model_spec s;
    talkie_spec(&s);
    project_all(&s, 0);
}

/* ---- qwen3tts ------------------------------------------------------------ */

/* llama_model_qwen3vl::load_arch_tensors for LLM_ARCH_QWEN3TTS: Qwen3-VL's
 * tensors, the output (the codec head) 3072 rows whatever the vocabulary;
 * without it the tied embeddings. VT: a vocabulary above the head's rows. */
enum { VT = 4096, N_CODEC = 3072 };

static void qwen3tts_spec(model_spec *s, bool output)
{
    static const uint32_t sections[4] = { 12, 10, 10, 0 };  /* HD / 2 */
    spec_init(s, "qwen3tts");
    s->kvs[1].u = VT;   /* vocab_size */
    key_arr4(s, "rope.dimension_sections", sections);
    tensor(s, "token_embd.weight", 0, E, VT, 1);
    tensor(s, "output_norm.weight", 0, E, 1, 1);
    if (output)
        tensor(s, "output.weight", 0, E, N_CODEC, 1);
    for (int il = 0; il < NL; il++) {
        tensor(s, "blk.%d.attn_norm.weight", il, E, 1, 1);
        attn_qkv(s, il, false);
        tensor(s, "blk.%d.attn_k_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.attn_q_norm.weight", il, HD, 1, 1);
        tensor(s, "blk.%d.ffn_norm.weight", il, E, 1, 1);
        ffn_swiglu(s, il);
    }
}

static void test_qwen3tts(void **state)
{
    (void)state;
    model_spec s;
    qwen3tts_spec(&s, true);    /* the codec head: padded with -inf */
    project_all(&s, 0);
    qwen3tts_spec(&s, false);   /* tied: Qwen3-VL's head */
    project_all(&s, 0);
}

/* ---- wavtokenizer-dec ---------------------------------------------------- */

enum { WF = 128, WE = 256, WP = 64, WFF = 192 };

/* llama_model_wavtokenizer_dec::load_arch_tensors: a conv1d stem, the six
 * posnet blocks (resnet, resnet, attention, resnet, resnet, norm), n_conv
 * convnext blocks (as many blocks: at least the posnet's six) and a linear
 * head. */
static void wavtokenizer_spec(model_spec *s, int n_conv)
{
    memset(s, 0, sizeof *s);
    s->arch = "wavtokenizer-dec";
    key_u32(s, "block_count", (uint32_t)n_conv);
    key_u32(s, "vocab_size", V);
    key_u32(s, "context_length", 4096);
    key_u32(s, "features_length", WF);
    key_u32(s, "embedding_length", WE);
    key_u32(s, "feed_forward_length", WFF);
    key_u32(s, "attention.head_count", 1);
    key_f32(s, "attention.layer_norm_epsilon", 1e-6f);
    key_f32(s, "attention.group_norm_epsilon", 1e-6f);
    key_u32(s, "attention.group_norm_groups", 32);
    key_u32(s, "posnet.embedding_length", WP);
    key_u32(s, "posnet.block_count", 6);
    key_u32(s, "convnext.embedding_length", WP);
    key_u32(s, "convnext.block_count", (uint32_t)n_conv);
    tensor(s, "token_embd.weight", 0, WF, V, 1);
    tensor(s, "conv1d.weight", 0, 7, WF, WP);
    tensor(s, "conv1d.bias", 0, 1, WP, 1);
    for (int il = 0; il < 6; il++) {
        if (il == 2) {
            tensor(s, "posnet.%d.attn_norm.weight", il, 1, WP, 1);
            tensor(s, "posnet.%d.attn_norm.bias", il, 1, WP, 1);
            static const char *const qkvo[] = { "attn_q", "attn_k", "attn_v", "attn_output" };
            for (int j = 0; j < 4; j++) {
                char w[64], bias[64];
                snprintf(w, sizeof w, "posnet.%%d.%s.weight", qkvo[j]);
                snprintf(bias, sizeof bias, "posnet.%%d.%s.bias", qkvo[j]);
                tensor(s, w, il, 1, WP, WP);
                tensor(s, bias, il, 1, WP, 1);
            }
        } else if (il == 5) {
            tensor(s, "posnet.%d.attn_norm.weight", il, 1, WP, 1);
            tensor(s, "posnet.%d.attn_norm.bias", il, 1, WP, 1);
        } else {
            tensor(s, "posnet.%d.norm1.weight", il, 1, WP, 1);
            tensor(s, "posnet.%d.norm1.bias", il, 1, WP, 1);
            tensor(s, "posnet.%d.conv1.weight", il, 3, WP, WP);
            tensor(s, "posnet.%d.conv1.bias", il, 1, WP, 1);
            tensor(s, "posnet.%d.norm2.weight", il, 1, WP, 1);
            tensor(s, "posnet.%d.norm2.bias", il, 1, WP, 1);
            tensor(s, "posnet.%d.conv2.weight", il, 3, WP, WP);
            tensor(s, "posnet.%d.conv2.bias", il, 1, WP, 1);
        }
    }
    tensor(s, "token_embd_norm.weight", 0, WP, 1, 1);
    tensor(s, "token_embd_norm.bias", 0, WP, 1, 1);
    for (int il = 0; il < n_conv; il++) {
        tensor(s, "convnext.%d.dw.weight", il, 7, 1, WP);
        tensor(s, "convnext.%d.dw.bias", il, 1, WP, 1);
        tensor(s, "convnext.%d.norm.weight", il, WP, 1, 1);
        tensor(s, "convnext.%d.norm.bias", il, WP, 1, 1);
        tensor(s, "convnext.%d.pw1.weight", il, WP, WFF, 1);
        tensor(s, "convnext.%d.pw1.bias", il, WFF, 1, 1);
        tensor(s, "convnext.%d.pw2.weight", il, WFF, WP, 1);
        tensor(s, "convnext.%d.pw2.bias", il, WP, 1, 1);
        tensor(s, "convnext.%d.gamma.weight", il, WP, 1, 1);
    }
    tensor(s, "output_norm.weight", 0, WP, 1, 1);
    tensor(s, "output_norm.bias", 0, WP, 1, 1);
    tensor(s, "output.weight", 0, WP, WE, 1);
    tensor(s, "output.bias", 0, WE, 1, 1);
    for (size_t i = 0; i < s->n_t; i++)   /* biases and norms: F32 */
        if (strstr(s->names[i], ".bias") || strstr(s->names[i], "norm") ||
            strstr(s->names[i], "gamma"))
            s->t[i].type = GGFIT_TYPE_F32;
}

static void test_wavtokenizer(void **state)
{
    (void)state;
    model_spec s;
    wavtokenizer_spec(&s, 6);
    project_all(&s, 0);
    wavtokenizer_spec(&s, 8);   /* the last blocks convnext only */
    project_all(&s, 2048);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t5),
        cmocka_unit_test(test_talkie),
        cmocka_unit_test(test_qwen3tts),
        cmocka_unit_test(test_wavtokenizer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
