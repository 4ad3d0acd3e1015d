/*
 * test_mtmd.c - multimodal projectors (src/mtmd/): small projector files
 * with the keys and tensors llama.cpp's clip.cpp load_hparams and
 * load_tensors need (clip.* keys, v.* / mm.* tensors), measured on the CPU
 * and one RPC device, with flash attention on and off: the warmup graph
 * must build (not the estimate). GGFIT_MTMD_DUMP=DIR keeps each file as
 * DIR/mmproj-<type>-<n>.gguf, which is how data/tiny/mmproj-*.gguf are
 * made; data/oracle/b10309/mtmd.jsonl holds llama.cpp's bytes for them
 * (tools/mtmdcmp.py --record), which test_oracle_mtmd holds ggfit to.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gguf_writer.h"
#include "test_util.h"

enum { T_F32 = 0, T_F16 = 1 };

typedef struct mspec {
    gw kv;                  /* the key/value section */
    uint64_t n_kv;
    gw_tensor_spec t[512];
    char names[512][64];
    size_t n_t;
} mspec;

static void m_init(mspec *s)
{
    memset(s, 0, sizeof *s);
    gw_kv_str(&s->kv, "general.architecture", "clip");
    gw_kv_u32(&s->kv, "general.alignment", 32);
    s->n_kv = 2;
}

static void m_u32(mspec *s, const char *key, uint32_t v)
{
    gw_kv_u32(&s->kv, key, v);
    s->n_kv++;
}

static void m_i32(mspec *s, const char *key, int32_t v)
{
    gw_key(&s->kv, key, 5);   /* GGUF_TYPE_INT32 */
    gw_u32(&s->kv, (uint32_t)v);
    s->n_kv++;
}

static void m_str(mspec *s, const char *key, const char *v)
{
    gw_kv_str(&s->kv, key, v);
    s->n_kv++;
}

static void m_f32(mspec *s, const char *key, float v)
{
    gw_kv_f32(&s->kv, key, v);
    s->n_kv++;
}

static void m_bool(mspec *s, const char *key)
{
    gw_key(&s->kv, key, 7);
    gw_u8(&s->kv, 1);
    s->n_kv++;
}

static void m_f32x3(mspec *s, const char *key, float v)
{
    gw_key(&s->kv, key, 9);
    gw_u32(&s->kv, 6);
    gw_u64(&s->kv, 3);
    for (int i = 0; i < 3; i++)
        gw_f32(&s->kv, v);
    s->n_kv++;
}

static void m_t(mspec *s, const char *fmt, int il, uint32_t type, int64_t ne0, int64_t ne1,
                int64_t ne2, int64_t ne3)
{
    snprintf(s->names[s->n_t], sizeof s->names[0], fmt, il);
    gw_tensor_spec *t = &s->t[s->n_t];
    t->name = s->names[s->n_t++];
    t->type = ne1 == 1 && ne2 == 1 && ne3 == 1 ? T_F32 : type;
    int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    t->n_dims = ne3 > 1 ? 4 : ne2 > 1 ? 3 : ne1 > 1 ? 2 : 1;
    memcpy(t->ne, ne, sizeof ne);
}

/* The vision hparams every encoder has (load_hparams). */
static void m_vision(mspec *s, const char *proj, uint32_t E, uint32_t NH, uint32_t FF,
                     uint32_t L, uint32_t PD, uint32_t img, uint32_t patch)
{
    m_bool(s, "clip.has_vision_encoder");
    if (proj)
        m_str(s, "clip.projector_type", proj);
    m_u32(s, "clip.vision.embedding_length", E);
    m_u32(s, "clip.vision.attention.head_count", NH);
    m_u32(s, "clip.vision.feed_forward_length", FF);
    m_u32(s, "clip.vision.block_count", L);
    m_u32(s, "clip.vision.projection_dim", PD);
    m_f32(s, "clip.vision.attention.layer_norm_epsilon", 1e-6f);
    m_u32(s, "clip.vision.image_size", img);
    m_u32(s, "clip.vision.patch_size", patch);
    m_f32x3(s, "clip.vision.image_mean", 0.5f);
    m_f32x3(s, "clip.vision.image_std", 0.5f);
}

/* A ViT block: separate Q/K/V with biases, two norms, an FFN. */
static void m_block(mspec *s, int il, int64_t E, int64_t FF, bool norm_bias, bool gate)
{
    static const char *const qkvo[] = { "q", "k", "v", "out" };
    for (int k = 0; k < 4; k++) {
        char w[64], b[64];
        snprintf(w, sizeof w, "v.blk.%%d.attn_%s.weight", qkvo[k]);
        snprintf(b, sizeof b, "v.blk.%%d.attn_%s.bias", qkvo[k]);
        m_t(s, w, il, T_F16, E, E, 1, 1);
        m_t(s, b, il, T_F32, E, 1, 1, 1);
    }
    m_t(s, "v.blk.%d.ln1.weight", il, T_F32, E, 1, 1, 1);
    m_t(s, "v.blk.%d.ln2.weight", il, T_F32, E, 1, 1, 1);
    if (norm_bias) {
        m_t(s, "v.blk.%d.ln1.bias", il, T_F32, E, 1, 1, 1);
        m_t(s, "v.blk.%d.ln2.bias", il, T_F32, E, 1, 1, 1);
    }
    m_t(s, "v.blk.%d.ffn_up.weight", il, T_F16, E, FF, 1, 1);
    m_t(s, "v.blk.%d.ffn_up.bias", il, T_F32, FF, 1, 1, 1);
    if (gate) {
        m_t(s, "v.blk.%d.ffn_gate.weight", il, T_F16, E, FF, 1, 1);
        m_t(s, "v.blk.%d.ffn_gate.bias", il, T_F32, FF, 1, 1, 1);
    }
    m_t(s, "v.blk.%d.ffn_down.weight", il, T_F16, FF, E, 1, 1);
    m_t(s, "v.blk.%d.ffn_down.bias", il, T_F32, E, 1, 1, 1);
}

static void m_write(const mspec *s, gw *w)
{
    memset(w, 0, sizeof *w);
    gw_header(w, 3, s->n_t, s->n_kv);
    gw_bytes(w, s->kv.data, s->kv.len);
    uint64_t off = 0;
    for (size_t i = 0; i < s->n_t; i++) {
        const gw_tensor_spec *t = &s->t[i];
        gw_tensor(w, t->name, t->n_dims, t->ne, t->type, off);
        uint64_t n = (uint64_t)(t->type == T_F32 ? 4 : 2);
        for (uint32_t d = 0; d < 4; d++)
            n *= (uint64_t)t->ne[d];
        off += (n + 31) / 32 * 32;
    }
    gw_pad(w, 32);
}

/* Writes the spec (and its dump), measures it every way; returns the
 * device bytes of one RPC device with flash attention on. */
static uint64_t measure_all(mspec *s, const char *type)
{
    gw w;
    m_write(s, &w);
    gw_free(&s->kv);
    char path[512];
    static int n_dumped;
    const char *dump = getenv("GGFIT_MTMD_DUMP");
    if (dump && *dump) {
        char file[128], where[160];
        snprintf(file, sizeof file, "mmproj-%s-%d.gguf", type, n_dumped);
        snprintf(where, sizeof where, "tests/test_mtmd.c, projector %d (%s)", n_dumped++, type);
        assert_int_equal(gw_dump(&w, "GGFIT_MTMD_DUMP", file, where), 0);
        snprintf(path, sizeof path, "%s/%s", dump, file);
    } else {
        snprintf(path, sizeof path, "/tmp/ggfit-test-mtmd-%d.gguf", (int)getpid());
        assert_int_equal(gw_write_file(&w, path), 0);
    }
    gw_free(&w);
    ggfit_mmproj *mm = NULL;
    char *err = NULL;
    if (ggfit_mmproj_open(path, &mm, &err) != GGFIT_OK)
        fail_msg("%s: %s", type, err);
    if (!dump || !*dump)
        unlink(path);
    ggfit_device devs[GGFIT_MAX_DEVICES];
    size_t n_dev = 0;
    assert_int_equal(ggfit_devices_parse("rpc:8GiB", devs, GGFIT_MAX_DEVICES, &n_dev, &err),
                     GGFIT_OK);
    static const int fas[] = { GGFIT_FA_AUTO, GGFIT_FA_ON, GGFIT_FA_OFF };
    uint64_t on_device = 0;
    for (size_t f = 0; f < 3; f++)
        for (int gpu = 0; gpu <= 1; gpu++) {
            ggfit_mmproj_params p;
            ggfit_mmproj_params_init(&p);
            p.flash_attn = fas[f];
            p.use_gpu = gpu;
            ggfit_mmproj_usage u;
            if (ggfit_mmproj_measure(mm, &p, devs, n_dev, &u, &err) != GGFIT_OK)
                fail_msg("%s: %s", type, err);
            assert_true(u.n_encoders >= 1);
            for (size_t k = 0; k < u.n_encoders; k++) {
                if (u.enc[k].compute_estimated)
                    fail_msg("%s (fa %d): compute estimated", type, fas[f]);
                assert_true(u.enc[k].weights > 0 && u.enc[k].compute > 0);
            }
            if (gpu) {
                assert_true(u.device[0] > 0);
                if (fas[f] == GGFIT_FA_ON)
                    on_device = u.device[0];
            } else {
                assert_true(u.device[0] == 0 && u.cpu > 0);
            }
        }
    ggfit_mmproj_free(mm);
    return on_device;
}

enum { ME = 128, MH = 2, MF = 256, ML = 4 };

static void qwen2vl_spec(mspec *s, bool v25)
{
    m_init(s);
    m_vision(s, v25 ? "qwen2.5vl_merger" : "qwen2vl_merger", ME, MH, MF, ML, 256, 112, 14);
    if (v25) {
        m_bool(s, "clip.use_silu");
        m_u32(s, "clip.vision.n_wa_pattern", 2);
    }
    m_t(s, "mm.0.weight", 0, T_F16, ME * 4, ME * 4, 1, 1);
    m_t(s, "mm.0.bias", 0, T_F32, ME * 4, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, ME * 4, 256, 1, 1);
    m_t(s, "mm.2.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.weight.1", 0, T_F16, 14, 14, 3, ME);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, !v25, v25);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    if (!v25)
        m_t(s, "v.post_ln.bias", 0, T_F32, ME, 1, 1, 1);
}

static void test_qwen2vl(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    qwen2vl_spec(s, true);
    uint64_t wa = measure_all(s, "qwen25vl");
    qwen2vl_spec(s, false);
    assert_true(measure_all(s, "qwen2vl") > 0 && wa > 0);
    free(s);
}

static void siglip_spec(mspec *s, const char *proj, uint32_t img, uint32_t merge)
{
    bool gemma3 = !strcmp(proj, "gemma3");
    int64_t side = img / 14;
    m_init(s);
    m_vision(s, proj, ME, MH, MF, ML, 256, img, 14);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.projector.scale_factor", merge);
    if (gemma3) {
        m_t(s, "mm.input_projection.weight", 0, T_F16, 256, ME, 1, 1);
        m_t(s, "mm.soft_emb_norm.weight", 0, T_F32, ME, 1, 1, 1);
    } else {
        m_t(s, "mm.model.fc.weight", 0, T_F16, ME * merge * merge, 256, 1, 1);
    }
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F16, ME, side * side, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.post_ln.bias", 0, T_F32, ME, 1, 1, 1);
}

static void test_siglip(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    siglip_spec(s, "gemma3", 224, 4);
    assert_true(measure_all(s, "gemma3") > 0);
    siglip_spec(s, "idefics3", 224, 2);
    assert_true(measure_all(s, "idefics3") > 0);
    free(s);
}

/* Qwen3-VL: fused QKV, a learned position grid resized to the warmup
 * image, a deepstack layer (with and without). */
static void qwen3vl_spec(mspec *s, bool deepstack)
{
    m_init(s);
    m_vision(s, "qwen3vl_merger", ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_gelu");
    m_t(s, "mm.0.weight", 0, T_F16, ME * 4, ME * 4, 1, 1);
    m_t(s, "mm.0.bias", 0, T_F32, ME * 4, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, ME * 4, 256, 1, 1);
    m_t(s, "mm.2.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.weight.1", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 64, 1, 1);
    for (int il = 0; il < ML; il++) {
        m_t(s, "v.blk.%d.attn_qkv.weight", il, T_F16, ME, 3 * ME, 1, 1);
        m_t(s, "v.blk.%d.attn_qkv.bias", il, T_F32, 3 * ME, 1, 1, 1);
        m_t(s, "v.blk.%d.attn_out.weight", il, T_F16, ME, ME, 1, 1);
        m_t(s, "v.blk.%d.attn_out.bias", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ln1.weight", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ln1.bias", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ln2.weight", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ln2.bias", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ffn_up.weight", il, T_F16, ME, MF, 1, 1);
        m_t(s, "v.blk.%d.ffn_up.bias", il, T_F32, MF, 1, 1, 1);
        m_t(s, "v.blk.%d.ffn_down.weight", il, T_F16, MF, ME, 1, 1);
        m_t(s, "v.blk.%d.ffn_down.bias", il, T_F32, ME, 1, 1, 1);
        if (deepstack && (il == 1 || il == 2)) {
            m_t(s, "v.deepstack.%d.norm.weight", il, T_F32, ME * 4, 1, 1, 1);
            m_t(s, "v.deepstack.%d.norm.bias", il, T_F32, ME * 4, 1, 1, 1);
            m_t(s, "v.deepstack.%d.fc1.weight", il, T_F16, ME * 4, ME * 4, 1, 1);
            m_t(s, "v.deepstack.%d.fc1.bias", il, T_F32, ME * 4, 1, 1, 1);
            m_t(s, "v.deepstack.%d.fc2.weight", il, T_F16, ME * 4, 256, 1, 1);
            m_t(s, "v.deepstack.%d.fc2.bias", il, T_F32, 256, 1, 1, 1);
        }
    }
}

static void test_qwen3vl(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    qwen3vl_spec(s, true);
    assert_true(measure_all(s, "qwen3vl") > 0);
    qwen3vl_spec(s, false);
    assert_true(measure_all(s, "qwen3vl") > 0);
    free(s);
}

/* Pixtral (no merge) and Mistral Small 3.1 (a 2x2 patch merger). */
static void pixtral_spec(mspec *s, bool merger, bool lightonocr)
{
    m_init(s);
    m_vision(s, lightonocr ? "lightonocr" : "pixtral", ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_silu");
    if (merger) {
        m_u32(s, "clip.vision.spatial_merge_size", 2);
        m_t(s, "mm.input_norm.weight", 0, T_F32, ME, 1, 1, 1);
        m_t(s, "mm.patch_merger.weight", 0, T_F16, ME * 4, ME, 1, 1);
    }
    m_t(s, "mm.1.weight", 0, T_F16, ME, 256, 1, 1);
    m_t(s, "mm.1.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.2.bias", 0, T_F32, 256, 1, 1, 1);
    if (!lightonocr)
        m_t(s, "v.token_embd.img_break", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.pre_ln.weight", 0, T_F32, ME, 1, 1, 1);
    for (int il = 0; il < ML; il++) {
        static const char *const qkvo[] = { "v.blk.%d.attn_q.weight", "v.blk.%d.attn_k.weight",
                                            "v.blk.%d.attn_v.weight", "v.blk.%d.attn_out.weight" };
        for (int k = 0; k < 4; k++)
            m_t(s, qkvo[k], il, T_F16, ME, ME, 1, 1);
        m_t(s, "v.blk.%d.ln1.weight", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ln2.weight", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ffn_up.weight", il, T_F16, ME, MF, 1, 1);
        m_t(s, "v.blk.%d.ffn_gate.weight", il, T_F16, ME, MF, 1, 1);
        m_t(s, "v.blk.%d.ffn_down.weight", il, T_F16, MF, ME, 1, 1);
    }
}

static void test_pixtral(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    pixtral_spec(s, false, false);
    assert_true(measure_all(s, "pixtral") > 0);
    pixtral_spec(s, true, false);
    assert_true(measure_all(s, "pixtral") > 0);
    free(s);
}

/* InternVL: [CLS], layer scales, a pixel shuffle and a normed MLP. */
static void test_internvl(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "internvl", ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.projector.scale_factor", 2);
    m_t(s, "mm.model.mlp.0.weight", 0, T_F32, ME * 4, 1, 1, 1);
    m_t(s, "mm.model.mlp.0.bias", 0, T_F32, ME * 4, 1, 1, 1);
    m_t(s, "mm.model.mlp.1.weight", 0, T_F16, ME * 4, 256, 1, 1);
    m_t(s, "mm.model.mlp.1.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.model.mlp.3.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.model.mlp.3.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.class_embd", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F16, ME, 65, 1, 1);
    for (int il = 0; il < ML; il++) {
        m_block(s, il, ME, MF, true, false);
        m_t(s, "v.blk.%d.ls1.weight", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ls2.weight", il, T_F32, ME, 1, 1, 1);
    }
    assert_true(measure_all(s, "internvl") > 0);
    free(s);
}

/* Kimi-VL: learned positions resized, 2D RoPE, a normed shuffle. */
static void test_kimivl(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "kimivl", ME, MH, MF, ML, 112, 112, 14);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.projector.scale_factor", 2);
    m_t(s, "mm.input_norm.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "mm.input_norm.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "mm.1.weight", 0, T_F16, ME * 4, ME * 4, 1, 1);
    m_t(s, "mm.1.bias", 0, T_F32, ME * 4, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, ME * 4, 112, 1, 1);
    m_t(s, "mm.2.bias", 0, T_F32, 112, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 64, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    assert_true(measure_all(s, "kimivl") > 0);
    free(s);
}

/* Llama 4: an unfold convolution, [CLS], 2D RoPE, a pixel shuffle. */
static void test_llama4(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "llama4", ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.projector.scale_factor", 2);
    m_t(s, "mm.model.fc.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.model.mlp.1.weight", 0, T_F16, ME * 4, 256, 1, 1);
    m_t(s, "mm.model.mlp.2.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "v.class_embd", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14 * 14 * 3, ME, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 65, 1, 1);
    m_t(s, "v.pre_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.pre_ln.bias", 0, T_F32, ME, 1, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.post_ln.bias", 0, T_F32, ME, 1, 1, 1);
    assert_true(measure_all(s, "llama4") > 0);
    free(s);
}

/* GLM-4V: the Qwen-style merge, M-RoPE, a merging convolution, a SwiGLU
 * projector. */
static void test_glm4v(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "glm4v", ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_silu");
    m_t(s, "mm.model.fc.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.up.weight", 0, T_F16, 256, 512, 1, 1);
    m_t(s, "mm.gate.weight", 0, T_F16, 256, 512, 1, 1);
    m_t(s, "mm.down.weight", 0, T_F16, 512, 256, 1, 1);
    m_t(s, "mm.post_norm.weight", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.post_norm.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.patch_merger.weight", 0, T_F16, 2, 2, ME, 256);
    m_t(s, "mm.patch_merger.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.weight.1", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.norm_embd.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 64, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, false, true);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    assert_true(measure_all(s, "glm4v") > 0);
    free(s);
}

/* Gemma 4 vision: x/y position tables, per-head Q/K norms, post norms,
 * a clamp bound (a scalar llama.cpp reads, not a weight), the pooler;
 * the unified encoder: the patches normed and embedded, no blocks. */
static void gemma4v_spec(mspec *s, bool unified, bool both)
{
    int64_t P = 8, D = ME / MH;
    m_init(s);
    const char *type = unified ? "gemma4uv" : "gemma4v";
    m_vision(s, both ? NULL : type, ME, MH, MF, unified ? 0 : ML, 256, 224, P);
    if (both)
        m_str(s, "clip.vision.projector_type", type);
    m_bool(s, "clip.use_gelu");
    m_t(s, "mm.input_projection.weight", 0, T_F16, ME, 256, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F16, ME, 64, 2, 1);
    if (unified) {
        int64_t K = P * 3 * P * 3 * 3;
        m_t(s, "v.patch_embd.weight", 0, T_F16, K, ME, 1, 1);
        m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
        m_t(s, "v.patch_norm.1.weight", 0, T_F32, K, 1, 1, 1);
        m_t(s, "v.patch_norm.1.bias", 0, T_F32, K, 1, 1, 1);
        for (int i = 2; i <= 3; i++) {
            m_t(s, "v.patch_norm.%d.weight", i, T_F32, ME, 1, 1, 1);
            m_t(s, "v.patch_norm.%d.bias", i, T_F32, ME, 1, 1, 1);
        }
        return;
    }
    m_t(s, "v.patch_embd.weight", 0, T_F16, P, P, 3, ME);
    m_t(s, "v.std_bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.std_scale", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.blk.%d.attn_q.input_max", 0, T_F32, 1, 1, 1, 1);
    for (int il = 0; il < ML; il++) {
        static const char *const qkvo[] = { "v.blk.%d.attn_q.weight", "v.blk.%d.attn_k.weight",
                                            "v.blk.%d.attn_v.weight", "v.blk.%d.attn_out.weight" };
        for (int k = 0; k < 4; k++)
            m_t(s, qkvo[k], il, T_F16, ME, ME, 1, 1);
        m_t(s, "v.blk.%d.attn_q_norm.weight", il, T_F32, D, 1, 1, 1);
        m_t(s, "v.blk.%d.attn_k_norm.weight", il, T_F32, D, 1, 1, 1);
        m_t(s, "v.blk.%d.ln1.weight", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ln2.weight", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.attn_post_norm.weight", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ffn_post_norm.weight", il, T_F32, ME, 1, 1, 1);
        m_t(s, "v.blk.%d.ffn_up.weight", il, T_F16, ME, MF, 1, 1);
        m_t(s, "v.blk.%d.ffn_gate.weight", il, T_F16, ME, MF, 1, 1);
        m_t(s, "v.blk.%d.ffn_down.weight", il, T_F16, MF, ME, 1, 1);
    }
}

static void test_gemma4v(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    gemma4v_spec(s, false, false);
    assert_true(measure_all(s, "gemma4v") > 0);
    gemma4v_spec(s, true, false);
    assert_true(measure_all(s, "gemma4uv") > 0);
    free(s);
}

/* A Whisper-style audio encoder: two convolutions, a ViT of AE wide. */
enum { AE = 128, AL = 2, AM = 32 };

static void audio_blocks(mspec *s);

static void audio_spec(mspec *s, const char *proj, uint32_t pd)
{
    m_bool(s, "clip.has_audio_encoder");
    if (proj)
        m_str(s, "clip.projector_type", proj);
    m_u32(s, "clip.audio.embedding_length", AE);
    m_u32(s, "clip.audio.attention.head_count", 2);
    m_u32(s, "clip.audio.feed_forward_length", 256);
    m_u32(s, "clip.audio.block_count", AL);
    m_u32(s, "clip.audio.projection_dim", pd);
    m_f32(s, "clip.audio.attention.layer_norm_epsilon", 1e-5f);
    m_u32(s, "clip.audio.num_mel_bins", AM);
    m_t(s, "a.conv1d.1.weight", 0, T_F16, 3, AM, AE, 1);
    m_t(s, "a.conv1d.1.bias", 0, T_F32, 1, AE, 1, 1);
    m_t(s, "a.conv1d.2.weight", 0, T_F16, 3, AE, AE, 1);
    m_t(s, "a.conv1d.2.bias", 0, T_F32, 1, AE, 1, 1);
    m_t(s, "a.position_embd.weight", 0, T_F32, AE, 1500, 1, 1);
    audio_blocks(s);
}

/* The audio ViT's blocks and its post norm. */
static void audio_blocks(mspec *s)
{
    for (int il = 0; il < AL; il++) {
        m_t(s, "a.blk.%d.attn_q.weight", il, T_F16, AE, AE, 1, 1);
        m_t(s, "a.blk.%d.attn_q.bias", il, T_F32, AE, 1, 1, 1);
        m_t(s, "a.blk.%d.attn_k.weight", il, T_F16, AE, AE, 1, 1);
        m_t(s, "a.blk.%d.attn_v.weight", il, T_F16, AE, AE, 1, 1);
        m_t(s, "a.blk.%d.attn_v.bias", il, T_F32, AE, 1, 1, 1);
        m_t(s, "a.blk.%d.attn_out.weight", il, T_F16, AE, AE, 1, 1);
        m_t(s, "a.blk.%d.attn_out.bias", il, T_F32, AE, 1, 1, 1);
        m_t(s, "a.blk.%d.ln1.weight", il, T_F32, AE, 1, 1, 1);
        m_t(s, "a.blk.%d.ln1.bias", il, T_F32, AE, 1, 1, 1);
        m_t(s, "a.blk.%d.ln2.weight", il, T_F32, AE, 1, 1, 1);
        m_t(s, "a.blk.%d.ln2.bias", il, T_F32, AE, 1, 1, 1);
        m_t(s, "a.blk.%d.ffn_up.weight", il, T_F16, AE, 256, 1, 1);
        m_t(s, "a.blk.%d.ffn_up.bias", il, T_F32, 256, 1, 1, 1);
        m_t(s, "a.blk.%d.ffn_down.weight", il, T_F16, 256, AE, 1, 1);
        m_t(s, "a.blk.%d.ffn_down.bias", il, T_F32, AE, 1, 1, 1);
    }
    m_t(s, "a.post_ln.weight", 0, T_F32, AE, 1, 1, 1);
    m_t(s, "a.post_ln.bias", 0, T_F32, AE, 1, 1, 1);
}

static void test_whisper(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    /* Ultravox: frames stacked by 8, RMS norms around a SwiGLU */
    m_init(s);
    audio_spec(s, "ultravox", 256);
    m_u32(s, "clip.audio.projector.stack_factor", 8);
    m_t(s, "mm.a.norm_pre.weight", 0, T_F32, AE * 8, 1, 1, 1);
    m_t(s, "mm.a.mlp.1.weight", 0, T_F16, AE * 8, 512, 1, 1);
    m_t(s, "mm.a.norm_mid.weight", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.a.mlp.2.weight", 0, T_F16, 256, 256, 1, 1);
    assert_true(measure_all(s, "ultravox") > 0);
    /* Voxtral: pooled, stacked by 4, an MLP */
    m_init(s);
    audio_spec(s, "voxtral", 256);
    m_u32(s, "clip.audio.projector.stack_factor", 4);
    m_t(s, "mm.a.mlp.1.weight", 0, T_F16, AE * 4, 256, 1, 1);
    m_t(s, "mm.a.mlp.2.weight", 0, T_F16, 256, 256, 1, 1);
    assert_true(measure_all(s, "voxtral") > 0);
    /* Qwen2.5-Omni: a vision and an audio encoder in one file */
    m_init(s);
    m_vision(s, NULL, ME, MH, MF, 2, 256, 112, 14);
    m_str(s, "clip.vision.projector_type", "qwen2.5vl_merger");
    m_str(s, "clip.audio.projector_type", "qwen2a");
    m_bool(s, "clip.use_silu");
    m_u32(s, "clip.vision.n_wa_pattern", 2);
    m_t(s, "mm.0.weight", 0, T_F16, ME * 4, ME * 4, 1, 1);
    m_t(s, "mm.0.bias", 0, T_F32, ME * 4, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, ME * 4, 256, 1, 1);
    m_t(s, "mm.2.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.weight.1", 0, T_F16, 14, 14, 3, ME);
    for (int il = 0; il < 2; il++)
        m_block(s, il, ME, MF, false, true);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    audio_spec(s, NULL, 256);
    m_t(s, "mm.a.fc.weight", 0, T_F16, AE, 256, 1, 1);
    m_t(s, "mm.a.fc.bias", 0, T_F32, 256, 1, 1, 1);
    assert_true(measure_all(s, "qwen25omni") > 0);
    free(s);
}

/* Gemma 4 audio: the Conformer (subsampling convolutions with their
 * norms, half-step FFNs, chunked attention with relative positions, the
 * depthwise convolution); the unified one: the raw frames projected. */
static void gemma4a_spec(mspec *s, bool unified, bool both)
{
    if (!both)
        m_init(s);
    m_bool(s, "clip.has_audio_encoder");
    m_str(s, both ? "clip.audio.projector_type" : "clip.projector_type",
          unified ? "gemma4ua" : "gemma4a");
    m_u32(s, "clip.audio.embedding_length", AE);
    m_u32(s, "clip.audio.attention.head_count", 2);
    m_u32(s, "clip.audio.feed_forward_length", 256);
    m_u32(s, "clip.audio.block_count", unified ? 0 : AL);
    m_u32(s, "clip.audio.projection_dim", 256);
    m_f32(s, "clip.audio.attention.layer_norm_epsilon", 1e-6f);
    m_u32(s, "clip.audio.num_mel_bins", unified ? 640 : AM);
    if (unified) {
        m_t(s, "mm.a.input_projection.weight", 0, T_F16, 640, 256, 1, 1);
        return;
    }
    m_t(s, "a.conv1d.0.weight", 0, T_F16, 3, 3, 1, 32);
    m_t(s, "a.conv1d.0.norm.weight", 0, T_F32, 32, 1, 1, 1);
    m_t(s, "a.conv1d.1.weight", 0, T_F16, 3, 3, 32, 16);
    m_t(s, "a.conv1d.1.norm.weight", 0, T_F32, 16, 1, 1, 1);
    m_t(s, "a.input_projection.weight", 0, T_F16, 16 * AM / 4, AE, 1, 1);
    m_t(s, "a.pre_encode.out.weight", 0, T_F16, AE, AE, 1, 1);
    m_t(s, "a.pre_encode.out.bias", 0, T_F32, AE, 1, 1, 1);
    m_t(s, "mm.a.soft_emb_norm.weight", 0, T_F32, AE, 1, 1, 1);
    m_t(s, "mm.a.input_projection.weight", 0, T_F16, AE, 256, 1, 1);
    m_t(s, "a.blk.%d.attn_q.input_max", 0, T_F32, 1, 1, 1, 1);
    for (int il = 0; il < AL; il++) {
        static const char *const sq[] = { "a.blk.%d.attn_q.weight", "a.blk.%d.attn_k.weight",
                                          "a.blk.%d.attn_v.weight", "a.blk.%d.attn_out.weight",
                                          "a.blk.%d.attn_k_rel.weight" };
        for (int k = 0; k < 5; k++)
            m_t(s, sq[k], il, T_F16, AE, AE, 1, 1);
        static const char *const vec[] = {
            "a.blk.%d.ffn_norm.weight", "a.blk.%d.ffn_post_norm.weight",
            "a.blk.%d.attn_pre_norm.weight", "a.blk.%d.attn_post_norm.weight",
            "a.blk.%d.conv_norm.weight", "a.blk.%d.norm_conv.weight",
            "a.blk.%d.ffn_norm_1.weight", "a.blk.%d.ffn_post_norm_1.weight",
            "a.blk.%d.ln2.weight" };
        for (int k = 0; k < 9; k++)
            m_t(s, vec[k], il, T_F32, AE, 1, 1, 1);
        m_t(s, "a.blk.%d.per_dim_scale.weight", il, T_F32, AE / 2, 1, 1, 1);
        m_t(s, "a.blk.%d.per_dim_k_scale.weight", il, T_F32, AE / 2, 1, 1, 1);
        m_t(s, "a.blk.%d.ffn_up.weight", il, T_F16, AE, 256, 1, 1);
        m_t(s, "a.blk.%d.ffn_down.weight", il, T_F16, 256, AE, 1, 1);
        m_t(s, "a.blk.%d.ffn_up_1.weight", il, T_F16, AE, 256, 1, 1);
        m_t(s, "a.blk.%d.ffn_down_1.weight", il, T_F16, 256, AE, 1, 1);
        m_t(s, "a.blk.%d.conv_pw1.weight", il, T_F16, AE, 2 * AE, 1, 1);
        m_t(s, "a.blk.%d.conv_dw.weight", il, T_F32, 5, AE, 1, 1);
        m_t(s, "a.blk.%d.conv_pw2.weight", il, T_F16, AE, AE, 1, 1);
    }
}

static void test_gemma4a(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    gemma4a_spec(s, false, false);
    assert_true(measure_all(s, "gemma4a") > 0);
    gemma4a_spec(s, true, false);
    assert_true(measure_all(s, "gemma4ua") > 0);
    free(s);
}

/* SigLIP with an MLP: LFM2-VL (positions resized, a 2x2 shuffle, a
 * normed MLP), Phi-4 (positions resized) and Janus Pro. */
static void siglip_mlp_spec(mspec *s, const char *proj)
{
    bool lfm2 = !strcmp(proj, "lfm2"), phi4 = !strcmp(proj, "phi4");
    int64_t in = lfm2 ? ME * 4 : ME;
    m_init(s);
    m_vision(s, proj, ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_gelu");
    if (lfm2) {
        m_u32(s, "clip.vision.projector.scale_factor", 2);
        m_t(s, "mm.input_norm.weight", 0, T_F32, in, 1, 1, 1);
        m_t(s, "mm.input_norm.bias", 0, T_F32, in, 1, 1, 1);
    }
    if (phi4) {
        m_u32(s, "clip.vision.image_min_pixels", 112 * 112);
        m_u32(s, "clip.vision.image_max_pixels", 448 * 448);
    }
    const char *first = lfm2 ? "mm.1.%s" : "mm.0.%s";
    const char *second = phi4 || lfm2 ? "mm.2.%s" : "mm.1.%s";
    char name[32];
    snprintf(name, sizeof name, first, "weight");
    m_t(s, name, 0, T_F16, in, 256, 1, 1);
    snprintf(name, sizeof name, first, "bias");
    m_t(s, name, 0, T_F32, 256, 1, 1, 1);
    snprintf(name, sizeof name, second, "weight");
    m_t(s, name, 0, T_F16, 256, 256, 1, 1);
    snprintf(name, sizeof name, second, "bias");
    m_t(s, name, 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 64, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.post_ln.bias", 0, T_F32, ME, 1, 1, 1);
}

static void test_siglip_mlp(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    siglip_mlp_spec(s, "lfm2");
    assert_true(measure_all(s, "lfm2") > 0);
    siglip_mlp_spec(s, "phi4");
    assert_true(measure_all(s, "phi4") > 0);
    siglip_mlp_spec(s, "janus_pro");
    assert_true(measure_all(s, "janus_pro") > 0);
    free(s);
}

/* Qwen3-Omni's audio: three 2D convolutions per chunk of 100 frames. */
static void test_qwen3a(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_bool(s, "clip.has_audio_encoder");
    m_str(s, "clip.projector_type", "qwen3a");
    m_u32(s, "clip.audio.embedding_length", AE);
    m_u32(s, "clip.audio.attention.head_count", 2);
    m_u32(s, "clip.audio.feed_forward_length", 256);
    m_u32(s, "clip.audio.block_count", AL);
    m_u32(s, "clip.audio.projection_dim", 256);
    m_f32(s, "clip.audio.attention.layer_norm_epsilon", 1e-5f);
    m_u32(s, "clip.audio.num_mel_bins", AM);
    for (int i = 1; i <= 3; i++) {
        m_t(s, "a.conv2d.%d.weight", i, T_F16, 3, 3, i == 1 ? 1 : 16, 16);
        m_t(s, "a.conv2d.%d.bias", i, T_F32, 16, 1, 1, 1);
    }
    m_t(s, "a.conv_out.weight", 0, T_F16, 16 * AM / 8, AE, 1, 1);
    m_t(s, "a.position_embd.weight", 0, T_F32, AE, 20, 1, 1);
    audio_blocks(s);
    m_t(s, "mm.a.mlp.1.weight", 0, T_F16, AE, 256, 1, 1);
    m_t(s, "mm.a.mlp.1.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.a.mlp.2.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.a.mlp.2.bias", 0, T_F32, 256, 1, 1, 1);
    assert_true(measure_all(s, "qwen3a") > 0);
    free(s);
}

/* MiniCPM-V's resampler: learned queries over the ViT's patches (2.5:
 * 96 queries by default; 4.5: version 6, 64). */
static void resampler_spec(mspec *s, int version)
{
    static const char *const attn[] = { "q", "k", "v", "out" };
    static const char *const ln[] = { "q", "kv", "post" };
    int64_t P = 256;
    m_init(s);
    m_vision(s, "resampler", ME, MH, MF, ML, P, 112, 14);
    m_bool(s, "clip.use_gelu");
    m_i32(s, "clip.minicpmv_version", version);
    m_t(s, "resampler.pos_embed_k", 0, T_F32, P, 64, 1, 1);
    m_t(s, "resampler.query", 0, T_F32, P, version == 2 ? 96 : 64, 1, 1);
    m_t(s, "resampler.proj.weight", 0, T_F16, P, P, 1, 1);
    m_t(s, "resampler.kv.weight", 0, T_F16, ME, P, 1, 1);
    for (int k = 0; k < 4; k++) {
        char name[48];
        snprintf(name, sizeof name, "resampler.attn.%s.weight", attn[k]);
        m_t(s, name, 0, T_F16, P, P, 1, 1);
        snprintf(name, sizeof name, "resampler.attn.%s.bias", attn[k]);
        m_t(s, name, 0, T_F32, P, 1, 1, 1);
    }
    for (int k = 0; k < 3; k++) {
        char name[48];
        snprintf(name, sizeof name, "resampler.ln_%s.weight", ln[k]);
        m_t(s, name, 0, T_F32, P, 1, 1, 1);
        snprintf(name, sizeof name, "resampler.ln_%s.bias", ln[k]);
        m_t(s, name, 0, T_F32, P, 1, 1, 1);
    }
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 100, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.post_ln.bias", 0, T_F32, ME, 1, 1, 1);
}

static void test_resampler(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    resampler_spec(s, 2);
    assert_true(measure_all(s, "resampler") > 0);
    resampler_spec(s, 6);
    assert_true(measure_all(s, "resampler") > 0);
    free(s);
}

/* MiniCPM-V 4.6: with the window-attention merger after layer 1 (a merge
 * of 4) and without (2). */
static void minicpmv4_6_spec(mspec *s, uint32_t merge)
{
    m_init(s);
    m_vision(s, "minicpmv4_6", ME, MH, MF, ML, 256, 224, 14);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.projector.scale_factor", merge);
    if (merge == 4) {
        gw_key(&s->kv, "clip.vision.wa_layer_indexes", 9);
        gw_u32(&s->kv, 5);   /* an INT32 array */
        gw_u64(&s->kv, 1);
        gw_u32(&s->kv, 1);
        s->n_kv++;
        m_t(s, "v.vit_merger.ln1.weight", 0, T_F32, ME, 1, 1, 1);
        m_t(s, "v.vit_merger.ln1.bias", 0, T_F32, ME, 1, 1, 1);
        static const char *const qkvo[] = { "v.vit_merger.attn_q.%s", "v.vit_merger.attn_k.%s",
                                            "v.vit_merger.attn_v.%s", "v.vit_merger.attn_out.%s" };
        for (int k = 0; k < 4; k++) {
            char w[48], b[48];
            snprintf(w, sizeof w, qkvo[k], "weight");
            snprintf(b, sizeof b, qkvo[k], "bias");
            m_t(s, w, 0, T_F16, ME, ME, 1, 1);
            m_t(s, b, 0, T_F32, ME, 1, 1, 1);
        }
        m_t(s, "v.vit_merger.ds_ln.weight", 0, T_F32, ME * 4, 1, 1, 1);
        m_t(s, "v.vit_merger.ds_ln.bias", 0, T_F32, ME * 4, 1, 1, 1);
        m_t(s, "v.vit_merger.ds_ffn_up.weight", 0, T_F16, ME * 4, MF, 1, 1);
        m_t(s, "v.vit_merger.ds_ffn_up.bias", 0, T_F32, MF, 1, 1, 1);
        m_t(s, "v.vit_merger.ds_ffn_down.weight", 0, T_F16, MF, ME, 1, 1);
        m_t(s, "v.vit_merger.ds_ffn_down.bias", 0, T_F32, ME, 1, 1, 1);
    }
    m_t(s, "mm.input_norm.weight", 0, T_F32, ME * 4, 1, 1, 1);
    m_t(s, "mm.input_norm.bias", 0, T_F32, ME * 4, 1, 1, 1);
    m_t(s, "mm.up.weight", 0, T_F16, ME * 4, 512, 1, 1);
    m_t(s, "mm.up.bias", 0, T_F32, 512, 1, 1, 1);
    m_t(s, "mm.down.weight", 0, T_F16, 512, 256, 1, 1);
    m_t(s, "mm.down.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 256, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.post_ln.bias", 0, T_F32, ME, 1, 1, 1);
}

static void test_minicpmv4_6(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    minicpmv4_6_spec(s, 4);
    assert_true(measure_all(s, "minicpmv4_6") > 0);
    minicpmv4_6_spec(s, 2);
    assert_true(measure_all(s, "minicpmv4_6") > 0);
    free(s);
}

/* LLaVA: 1.5 ([CLS], an MLP), Yi-type (normed MLP, mm.0-4) and Granite
 * Vision-style feature layers (0, 2, 3 stacked, no [CLS]). */
static void llava_spec(mspec *s, int kind)
{
    int64_t in = kind == 2 ? ME * 3 : ME;
    m_init(s);
    m_vision(s, "mlp", ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_gelu");
    if (kind == 2) {
        gw_key(&s->kv, "clip.vision.feature_layer", 9);
        gw_u32(&s->kv, 5);   /* an INT32 array */
        gw_u64(&s->kv, 3);
        gw_u32(&s->kv, 0);
        gw_u32(&s->kv, 2);
        gw_u32(&s->kv, 3);
        s->n_kv++;
    } else {
        m_t(s, "v.class_embd", 0, T_F32, ME, 1, 1, 1);
    }
    m_t(s, "mm.0.weight", 0, T_F16, in, 256, 1, 1);
    m_t(s, "mm.0.bias", 0, T_F32, 256, 1, 1, 1);
    if (kind == 1) {
        m_t(s, "mm.1.weight", 0, T_F32, 256, 1, 1, 1);
        m_t(s, "mm.1.bias", 0, T_F32, 256, 1, 1, 1);
        m_t(s, "mm.3.weight", 0, T_F16, 256, 256, 1, 1);
        m_t(s, "mm.3.bias", 0, T_F32, 256, 1, 1, 1);
        m_t(s, "mm.4.weight", 0, T_F32, 256, 1, 1, 1);
        m_t(s, "mm.4.bias", 0, T_F32, 256, 1, 1, 1);
    } else {
        m_t(s, "mm.2.weight", 0, T_F16, 256, 256, 1, 1);
        m_t(s, "mm.2.bias", 0, T_F32, 256, 1, 1, 1);
    }
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, kind == 2 ? 64 : 65, 1, 1);
    m_t(s, "v.pre_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.pre_ln.bias", 0, T_F32, ME, 1, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
}

static void test_llava(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    for (int kind = 0; kind < 3; kind++) {
        llava_spec(s, kind);
        assert_true(measure_all(s, "llava") > 0);
    }
    free(s);
}

/* Kimi-K2.5: a [E, W, H] position grid resized, 2D RoPE, the Kimi
 * projector; the warmup at the file's largest pixel count. */
static void test_kimik25(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "kimik25", ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.projector.scale_factor", 2);
    m_u32(s, "clip.vision.image_min_pixels", 56 * 56);
    m_u32(s, "clip.vision.image_max_pixels", 224 * 224);
    m_t(s, "mm.input_norm.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "mm.input_norm.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "mm.1.weight", 0, T_F16, ME * 4, ME * 4, 1, 1);
    m_t(s, "mm.1.bias", 0, T_F32, ME * 4, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, ME * 4, 256, 1, 1);
    m_t(s, "mm.2.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 8, 8, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    assert_true(measure_all(s, "kimik25") > 0);
    free(s);
}

/* PaddleOCR-VL (positions resized, M-RoPE, a shuffled MLP) and
 * Hunyuan-VL (positions as an input, a convolutional projector). */
static void test_paddleocr(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "paddleocr", ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.image_min_pixels", 112 * 112);
    m_u32(s, "clip.vision.image_max_pixels", 448 * 448);
    m_t(s, "mm.input_norm.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "mm.input_norm.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "mm.1.weight", 0, T_F16, ME * 4, 256, 1, 1);
    m_t(s, "mm.1.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.2.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 64, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.post_ln.bias", 0, T_F32, ME, 1, 1, 1);
    assert_true(measure_all(s, "paddleocr") > 0);
    m_init(s);
    m_vision(s, "hunyuanvl", ME, MH, MF, ML, 256, 112, 14);
    m_t(s, "mm.pre_norm.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "mm.0.weight", 0, T_F16, 2, 2, ME, 256);
    m_t(s, "mm.0.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, 1, 1, 256, 512);
    m_t(s, "mm.2.bias", 0, T_F32, 512, 1, 1, 1);
    m_t(s, "mm.model.fc.weight", 0, T_F16, 512, 256, 1, 1);
    m_t(s, "mm.model.fc.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.post_norm.weight", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.image_begin", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.image_end", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.image_newline", 0, T_F32, 512, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    assert_true(measure_all(s, "hunyuanvl") > 0);
    free(s);
}

/* MiniMax-M3: two patch convolutions, a t/h/w RoPE, two MLPs. */
static void test_minimax_m3(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "minimax_m3", ME, MH, MF, ML, 256, 112, 14);
    m_t(s, "mm.1.weight", 0, T_F16, ME, 256, 1, 1);
    m_t(s, "mm.1.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, 256, 64, 1, 1);
    m_t(s, "mm.2.bias", 0, T_F32, 64, 1, 1, 1);
    m_t(s, "mm.merger.fc1.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.merger.fc1.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.merger.fc2.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.merger.fc2.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.weight.1", 0, T_F16, 14, 14, 3, ME);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.post_ln.bias", 0, T_F32, ME, 1, 1, 1);
    assert_true(measure_all(s, "minimax_m3") > 0);
    free(s);
}

/* Youtu-VL: the patches as a matmul, M-RoPE, window attention but in
 * layers 1 and 3, an RMS norm and a merge MLP. */
static void test_youtuvl(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "youtuvl", ME, MH, MF, ML, 256, 112, 14);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.window_size", 112);
    gw_key(&s->kv, "clip.vision.wa_layer_indexes", 9);
    gw_u32(&s->kv, 5);   /* an INT32 array */
    gw_u64(&s->kv, 2);
    gw_u32(&s->kv, 1);
    gw_u32(&s->kv, 3);
    s->n_kv++;
    m_t(s, "mm.input_norm.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "mm.0.weight", 0, T_F16, ME * 4, 256, 1, 1);
    m_t(s, "mm.0.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.2.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.2.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 3 * 14 * 14, ME, 1, 1);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    m_t(s, "v.post_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.post_ln.bias", 0, T_F32, ME, 1, 1, 1);
    assert_true(measure_all(s, "youtuvl") > 0);
    free(s);
}

/* MobileVLM: the LDP (two depthwise blocks) and LDPv2 (a pool and a
 * positional convolution) projectors on 24 x 24 patches. */
static void ldp_spec(mspec *s, bool v2)
{
    int64_t D = 64;
    m_init(s);
    m_vision(s, v2 ? "ldpv2" : "ldp", ME, MH, MF, 2, 256, 336, 14);
    m_bool(s, "clip.use_gelu");
    if (v2) {
        m_t(s, "mm.model.mlp.0.weight", 0, T_F16, ME, D, 1, 1);
        m_t(s, "mm.model.mlp.0.bias", 0, T_F32, D, 1, 1, 1);
        m_t(s, "mm.model.mlp.2.weight", 0, T_F16, D, D, 1, 1);
        m_t(s, "mm.model.mlp.2.bias", 0, T_F32, D, 1, 1, 1);
        m_t(s, "mm.model.peg.0.weight", 0, T_F16, 3, 3, 1, D);
        m_t(s, "mm.model.peg.0.bias", 0, T_F32, D, 1, 1, 1);
    } else {
        m_t(s, "mm.model.mlp.1.weight", 0, T_F16, ME, D, 1, 1);
        m_t(s, "mm.model.mlp.1.bias", 0, T_F32, D, 1, 1, 1);
        m_t(s, "mm.model.mlp.3.weight", 0, T_F16, D, D, 1, 1);
        m_t(s, "mm.model.mlp.3.bias", 0, T_F32, D, 1, 1, 1);
        for (int b = 1; b <= 2; b++) {
            char name[64];
            static const char *const vec[] = { "0.1.weight", "0.1.bias", "1.fc2.bias",
                                               "2.1.weight", "2.1.bias" };
            snprintf(name, sizeof name, "mm.model.mb_block.%d.block.0.0.weight", b);
            m_t(s, name, 0, T_F16, 3, 3, 1, D);
            for (int k = 0; k < 5; k++) {
                snprintf(name, sizeof name, "mm.model.mb_block.%d.block.%s", b, vec[k]);
                m_t(s, name, 0, T_F32, D, 1, 1, 1);
            }
            snprintf(name, sizeof name, "mm.model.mb_block.%d.block.1.fc1.weight", b);
            m_t(s, name, 0, T_F16, D, 16, 1, 1);
            snprintf(name, sizeof name, "mm.model.mb_block.%d.block.1.fc1.bias", b);
            m_t(s, name, 0, T_F32, 16, 1, 1, 1);
            snprintf(name, sizeof name, "mm.model.mb_block.%d.block.1.fc2.weight", b);
            m_t(s, name, 0, T_F16, 16, D, 1, 1);
            snprintf(name, sizeof name, "mm.model.mb_block.%d.block.2.0.weight", b);
            m_t(s, name, 0, T_F16, D, D, 1, 1);
        }
    }
    m_t(s, "v.class_embd", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 577, 1, 1);
    m_t(s, "v.pre_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.pre_ln.bias", 0, T_F32, ME, 1, 1, 1);
    for (int il = 0; il < 2; il++)
        m_block(s, il, ME, MF, true, false);
}

static void test_ldp(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    ldp_spec(s, false);
    assert_true(measure_all(s, "ldp") > 0);
    ldp_spec(s, true);
    assert_true(measure_all(s, "ldpv2") > 0);
    free(s);
}

/* Granite Vision 4.1: WindowQFormer blocks on layers 1 (pooled) and 3
 * (gathered at an offset). */
static void test_granite4_vision(void **state)
{
    (void)state;
    static const char *const vec[] = { "norm", "post_norm", "self_attn_norm", "cross_attn_norm",
                                       "ffn_norm" };
    static const char *const sq[] = { "self_attn_q", "self_attn_k", "self_attn_v",
                                      "self_attn_out", "cross_attn_q", "cross_attn_k",
                                      "cross_attn_v", "cross_attn_out" };
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "granite4_vision", ME, MH, MF, ML, 256, 224, 14);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.projector.query_side", 4);
    m_u32(s, "clip.vision.projector.window_side", 8);
    int32_t layers[2] = { 1, 3 }, offsets[2] = { -1, 0 };
    const char *keys[2] = { "clip.vision.feature_layer", "clip.vision.projector.spatial_offsets" };
    const int32_t *vals[2] = { layers, offsets };
    for (int k = 0; k < 2; k++) {
        gw_key(&s->kv, keys[k], 9);
        gw_u32(&s->kv, 5);   /* an INT32 array */
        gw_u64(&s->kv, 2);
        gw_u32(&s->kv, (uint32_t)vals[k][0]);
        gw_u32(&s->kv, (uint32_t)vals[k][1]);
        s->n_kv++;
    }
    m_t(s, "v.image_newline", 0, T_F32, 256, 1, 1, 1);
    for (int b = 0; b < 2; b++) {
        char name[64];
        snprintf(name, sizeof name, "v.proj_blk.%d.img_pos", b);
        m_t(s, name, 0, T_F32, ME, 64, 1, 1);
        snprintf(name, sizeof name, "v.proj_blk.%d.query", b);
        m_t(s, name, 0, T_F32, ME, 16, 1, 1);
        snprintf(name, sizeof name, "v.proj_blk.%d.linear.weight", b);
        m_t(s, name, 0, T_F16, ME, 128, 1, 1);
        snprintf(name, sizeof name, "v.proj_blk.%d.linear.bias", b);
        m_t(s, name, 0, T_F32, 128, 1, 1, 1);
        for (int k = 0; k < 5; k++) {
            snprintf(name, sizeof name, "v.proj_blk.%d.%s.weight", b, vec[k]);
            m_t(s, name, 0, T_F32, ME, 1, 1, 1);
            snprintf(name, sizeof name, "v.proj_blk.%d.%s.bias", b, vec[k]);
            m_t(s, name, 0, T_F32, ME, 1, 1, 1);
        }
        for (int k = 0; k < 8; k++) {
            snprintf(name, sizeof name, "v.proj_blk.%d.%s.weight", b, sq[k]);
            m_t(s, name, 0, T_F16, ME, ME, 1, 1);
            snprintf(name, sizeof name, "v.proj_blk.%d.%s.bias", b, sq[k]);
            m_t(s, name, 0, T_F32, ME, 1, 1, 1);
        }
        snprintf(name, sizeof name, "v.proj_blk.%d.ffn_up.weight", b);
        m_t(s, name, 0, T_F16, ME, MF, 1, 1);
        snprintf(name, sizeof name, "v.proj_blk.%d.ffn_up.bias", b);
        m_t(s, name, 0, T_F32, MF, 1, 1, 1);
        snprintf(name, sizeof name, "v.proj_blk.%d.ffn_down.weight", b);
        m_t(s, name, 0, T_F16, MF, ME, 1, 1);
        snprintf(name, sizeof name, "v.proj_blk.%d.ffn_down.bias", b);
        m_t(s, name, 0, T_F32, ME, 1, 1, 1);
    }
    m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
    m_t(s, "v.patch_embd.bias", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 256, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
    assert_true(measure_all(s, "granite4_vision") > 0);
    free(s);
}

/* Gemma 3n's MobileNetV5: a stem, edge residual, inverted residual and
 * attention blocks in four stages, the fusion of the last two. */
static void mnv5_t(mspec *s, const char *part, int st, int b, int64_t k, int64_t ic, int64_t oc)
{
    char name[64];
    snprintf(name, sizeof name, "v.blk.%d.%d.%s", st, b, part);
    m_t(s, name, 0, T_F16, k, k, ic, oc);
}

static void mnv5_norm(mspec *s, const char *part, int st, int b, int64_t n)
{
    char name[64];
    snprintf(name, sizeof name, "v.blk.%d.%d.%s", st, b, part);
    m_t(s, name, 0, T_F32, n, 1, 1, 1);
}

/* a universal inverted residual block: dw_start, expand, dw_mid, project */
static void mnv5_uir(mspec *s, int st, int b, int64_t ic, int64_t oc, bool start)
{
    if (start) {
        mnv5_t(s, "dw_start.conv.weight", st, b, 3, 1, ic);
        mnv5_norm(s, "dw_start.bn.weight", st, b, ic);
    }
    mnv5_t(s, "pw_exp.conv.weight", st, b, 1, ic, 2 * ic);
    mnv5_norm(s, "pw_exp.bn.weight", st, b, 2 * ic);
    mnv5_t(s, "dw_mid.conv.weight", st, b, 3, 1, 2 * ic);
    mnv5_norm(s, "dw_mid.bn.weight", st, b, 2 * ic);
    mnv5_t(s, "pw_proj.conv.weight", st, b, 1, 2 * ic, oc);
    mnv5_norm(s, "pw_proj.bn.weight", st, b, oc);
}

static void test_mobilenetv5(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    m_vision(s, "gemma3nv", 64, 2, 128, 0, 256, 128, 16);
    m_t(s, "v.conv_stem.conv.weight", 0, T_F16, 3, 3, 3, 16);
    m_t(s, "v.conv_stem.bn.weight", 0, T_F32, 16, 1, 1, 1);
    for (int b = 0; b < 2; b++) {   /* stage 0: edge residual */
        mnv5_t(s, "conv_exp.weight", 0, b, 3, 16, 32);
        mnv5_norm(s, "bn1.weight", 0, b, 32);
        mnv5_t(s, "conv_pwl.weight", 0, b, 1, 32, 16);
        mnv5_norm(s, "bn2.weight", 0, b, 16);
    }
    mnv5_uir(s, 1, 0, 16, 24, true);
    mnv5_uir(s, 2, 0, 24, 32, false);
    mnv5_norm(s, "norm.weight", 2, 1, 32);   /* stage 2's attention block */
    mnv5_t(s, "attn.query.proj.weight", 2, 1, 1, 32, 32);
    mnv5_t(s, "attn.key.down_conv.weight", 2, 1, 3, 1, 32);
    mnv5_norm(s, "attn.key.norm.weight", 2, 1, 32);
    mnv5_t(s, "attn.key.proj.weight", 2, 1, 1, 32, 16);
    mnv5_t(s, "attn.value.down_conv.weight", 2, 1, 3, 1, 32);
    mnv5_norm(s, "attn.value.norm.weight", 2, 1, 32);
    mnv5_t(s, "attn.value.proj.weight", 2, 1, 1, 32, 16);
    mnv5_t(s, "attn.output.proj.weight", 2, 1, 1, 32, 32);
    m_t(s, "v.blk.2.1.layer_scale.gamma", 0, T_F32, 1, 1, 32, 1);
    mnv5_uir(s, 3, 0, 32, 64, true);
    m_t(s, "v.msfa.ffn.pw_exp.conv.weight", 0, T_F16, 1, 1, 96, 128);
    m_t(s, "v.msfa.ffn.pw_exp.bn.weight", 0, T_F32, 128, 1, 1, 1);
    m_t(s, "v.msfa.ffn.pw_proj.conv.weight", 0, T_F16, 1, 1, 128, 64);
    m_t(s, "v.msfa.ffn.pw_proj.bn.weight", 0, T_F32, 64, 1, 1, 1);
    m_t(s, "v.msfa.norm.weight", 0, T_F32, 64, 1, 1, 1);
    m_t(s, "mm.soft_emb_norm.weight", 0, T_F32, 64, 1, 1, 1);
    m_t(s, "mm.input_projection.weight", 0, T_F16, 64, 256, 1, 1);
    assert_true(measure_all(s, "gemma3nv") > 0);
    free(s);
}

/* Gemma 4 E2B / E4B's file: the vision and the audio encoder together. */
static void test_gemma4_both(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    gemma4v_spec(s, false, true);
    gemma4a_spec(s, false, true);
    assert_true(measure_all(s, "gemma4") > 0);
    free(s);
}

/* DeepSeek-OCR: a SAM ViT (windowed but layers 2, 5, 8, 11) with its
 * neck, a CLIP ViT over its output, the projection and the newlines. */
static void sam_t(mspec *s, const char *part, int il, int64_t ne0, int64_t ne1)
{
    char name[64];
    snprintf(name, sizeof name, "v.sam.blk.%d.%s", il, part);
    m_t(s, name, 0, ne1 > 1 ? T_F16 : T_F32, ne0, ne1, 1, 1);
}

/* conv: the type of the SAM's convolution kernels (the patch embedding,
 * the neck and net_2, net_3) */
static void deepseekocr_spec(mspec *s, uint32_t conv)
{
    int64_t S = 64;
    m_init(s);
    m_vision(s, "deepseekocr", ME, MH, MF, ML, 256, 1024, 16);
    m_bool(s, "clip.use_gelu");
    m_u32(s, "clip.vision.sam.block_count", 12);
    m_u32(s, "clip.vision.sam.head_count", 2);
    m_u32(s, "clip.vision.sam.embedding_length", (uint32_t)S);
    m_u32(s, "clip.vision.window_size", 14);
    m_t(s, "v.sam.patch_embd.weight", 0, conv, 16, 16, 3, S);
    m_t(s, "v.sam.patch_embd.bias", 0, T_F32, S, 1, 1, 1);
    m_t(s, "v.sam.pos_embd.weight", 0, T_F32, S, 64, 64, 1);
    for (int il = 0; il < 12; il++) {   /* load_tensors takes 12 */
        sam_t(s, "attn.qkv.weight", il, S, 3 * S);
        sam_t(s, "attn.qkv.bias", il, 3 * S, 1);
        sam_t(s, "attn.out.weight", il, S, S);
        sam_t(s, "attn.out.bias", il, S, 1);
        sam_t(s, "pre_ln.weight", il, S, 1);
        sam_t(s, "pre_ln.bias", il, S, 1);
        sam_t(s, "post_ln.weight", il, S, 1);
        sam_t(s, "post_ln.bias", il, S, 1);
        m_t(s, "v.sam.blk.%d.attn.pos_h.weight", il, T_F32, S / 2, il % 3 == 2 ? 127 : 27, 1, 1);
        m_t(s, "v.sam.blk.%d.attn.pos_w.weight", il, T_F32, S / 2, il % 3 == 2 ? 127 : 27, 1, 1);
        sam_t(s, "mlp.lin1.weight", il, S, 4 * S);
        sam_t(s, "mlp.lin1.bias", il, 4 * S, 1);
        sam_t(s, "mlp.lin2.weight", il, 4 * S, S);
        sam_t(s, "mlp.lin2.bias", il, S, 1);
    }
    m_t(s, "v.sam.neck.0.weight", 0, conv, 1, 1, S, S);
    m_t(s, "v.sam.neck.1.weight", 0, T_F32, S, 1, 1, 1);
    m_t(s, "v.sam.neck.1.bias", 0, T_F32, S, 1, 1, 1);
    m_t(s, "v.sam.neck.2.weight", 0, conv, 3, 3, S, S);
    m_t(s, "v.sam.neck.3.weight", 0, T_F32, S, 1, 1, 1);
    m_t(s, "v.sam.neck.3.bias", 0, T_F32, S, 1, 1, 1);
    m_t(s, "v.sam.net_2.weight", 0, conv, 3, 3, S, 96);
    m_t(s, "v.sam.net_3.weight", 0, conv, 3, 3, 96, ME);
    m_t(s, "v.image_newline", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.view_seperator", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.model.fc.weight", 0, T_F16, 2 * ME, 256, 1, 1);
    m_t(s, "mm.model.fc.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.class_embd", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.position_embd.weight", 0, T_F32, ME, 257, 1, 1);
    m_t(s, "v.pre_ln.weight", 0, T_F32, ME, 1, 1, 1);
    m_t(s, "v.pre_ln.bias", 0, T_F32, ME, 1, 1, 1);
    for (int il = 0; il < ML; il++)
        m_block(s, il, ME, MF, true, false);
}

static void test_deepseekocr(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    deepseekocr_spec(s, T_F16);
    assert_true(measure_all(s, "deepseekocr") > 0);
    free(s);
}

/* DeepSeek-OCR with F32 convolution kernels (convert_hf_to_gguf.py
 * --outtype f32): from MTMD_SAM_IM2COL_F32 the SAM's im2col is F32, before
 * it F16 (ggml_conv_2d) */
static void test_deepseekocr_f32(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    deepseekocr_spec(s, T_F32);
    assert_true(measure_all(s, "deepseekocr") > 0);
    free(s);
}

/* LightOnOCR: Pixtral's graph with a 2x2 merger and no [IMG_BREAK]. */
static void test_lightonocr(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    pixtral_spec(s, true, true);
    assert_true(measure_all(s, "lightonocr") > 0);
    free(s);
}

/* MTMD_LONGEST_EDGE_LIMITS: from b10319 idefics3 and lightonocr take
 * --image-min-tokens as image_min_pixels, and llama.cpp b10587 refuses a
 * minimum without a maximum (image_max_pixels stays below it: "mtmd_get_
 * memory_usage failed" in tools/mtmdcmp.py), or above the maximum given;
 * b10309 ignored both and measured the projector. */
static void test_longest_edge_limits(void **state)
{
    (void)state;
    static const char *const files[] = { "data/tiny/mmproj-idefics3-3.gguf",
                                         "data/tiny/mmproj-lightonocr-41.gguf" };
    static const int32_t lims[][2] = { { 64, 0 }, { 256, 64 }, { 64, 256 }, { 0, 256 } };
    for (size_t f = 0; f < 2; f++) {
        ggfit_mmproj *mm = NULL;
        char *err = NULL;
        if (ggfit_mmproj_open(files[f], &mm, &err) != GGFIT_OK)
            fail_msg("%s: %s", files[f], err);
        for (size_t i = 0; i < 4; i++)
            for (int newer = 0; newer <= 1; newer++) {
                ggfit_mmproj_params p;
                ggfit_mmproj_params_init(&p);
                p.llama_build = newer ? 10587 : 10309;
                p.image_min_tokens = lims[i][0];
                p.image_max_tokens = lims[i][1];
                ggfit_mmproj_usage u;
                ggfit_status rc = ggfit_mmproj_measure(mm, &p, NULL, 0, &u, &err);
                bool refused = newer && lims[i][0] > lims[i][1];
                if (refused) {
                    assert_int_equal(rc, GGFIT_EFORMAT);
                    assert_non_null(strstr(err, "image_max_pixels"));
                    ggfit_free(err);
                    err = NULL;
                } else {
                    if (rc != GGFIT_OK)
                        fail_msg("%s: %s", files[f], err);
                    assert_true(u.cpu > 0);
                }
            }
        ggfit_mmproj_free(mm);
    }
}

/* More Whisper-style encoders: Music Flamingo (pooled, an MLP), MERaLiON
 * (stacked, a GLU adaptor), GLM-A (normed, stacked, an MLP, BOI/EOI). */
static void test_whisper_more(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    m_init(s);
    audio_spec(s, "musicflamingo", 256);
    m_t(s, "mm.a.mlp.1.weight", 0, T_F16, AE, 256, 1, 1);
    m_t(s, "mm.a.mlp.1.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.a.mlp.2.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.a.mlp.2.bias", 0, T_F32, 256, 1, 1, 1);
    assert_true(measure_all(s, "musicflamingo") > 0);
    m_init(s);
    audio_spec(s, "meralion", 256);
    m_u32(s, "clip.audio.projector.stack_factor", 4);
    m_t(s, "mm.a.norm_pre.weight", 0, T_F32, AE * 4, 1, 1, 1);
    m_t(s, "mm.a.norm_pre.bias", 0, T_F32, AE * 4, 1, 1, 1);
    for (int i = 0; i < 4; i++) {
        m_t(s, "mm.a.mlp.%d.weight", i, T_F16, i ? 256 : AE * 4, 256, 1, 1);
        m_t(s, "mm.a.mlp.%d.bias", i, T_F32, 256, 1, 1, 1);
    }
    assert_true(measure_all(s, "meralion") > 0);
    m_init(s);
    audio_spec(s, "glma", 256);
    m_u32(s, "clip.audio.projector.stack_factor", 4);
    m_t(s, "mm.a.norm_pre.weight", 0, T_F32, AE, 1, 1, 1);
    m_t(s, "mm.a.norm_pre.bias", 0, T_F32, AE, 1, 1, 1);
    m_t(s, "mm.a.mlp.1.weight", 0, T_F16, AE * 4, 256, 1, 1);
    m_t(s, "mm.a.mlp.1.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "mm.a.mlp.2.weight", 0, T_F16, 256, 256, 1, 1);
    m_t(s, "mm.a.mlp.2.bias", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.boi", 0, T_F32, 256, 1, 1, 1);
    m_t(s, "v.eoi", 0, T_F32, 256, 1, 1, 1);
    assert_true(measure_all(s, "glma") > 0);
    free(s);
}

/* A type llama.cpp knows and ggfit has no graph for: exact weights, an
 * estimated compute buffer. An unknown type is refused, as clip.cpp does. */
static void test_estimated(void **state)
{
    (void)state;
    mspec *s = calloc(1, sizeof *s);
    for (int unknown = 0; unknown <= 1; unknown++) {
        m_init(s);
        m_vision(s, unknown ? "no-such-projector" : "cogvlm", ME, MH, MF, 1, 256, 112, 14);
        m_t(s, "v.patch_embd.weight", 0, T_F16, 14, 14, 3, ME);
        m_block(s, 0, ME, MF, true, false);
        gw w;
        m_write(s, &w);
        gw_free(&s->kv);
        char path[128];
        snprintf(path, sizeof path, "/tmp/ggfit-test-mtmd-est-%d.gguf", (int)getpid());
        assert_int_equal(gw_write_file(&w, path), 0);
        gw_free(&w);
        ggfit_mmproj *mm = NULL;
        char *err = NULL;
        assert_int_equal(ggfit_mmproj_open(path, &mm, &err), GGFIT_OK);
        unlink(path);
        ggfit_mmproj_params p;
        ggfit_mmproj_params_init(&p);
        ggfit_mmproj_usage u;
        ggfit_status rc = ggfit_mmproj_measure(mm, &p, NULL, 0, &u, &err);
        if (unknown) {
            assert_int_equal(rc, GGFIT_EUNSUPPORTED);
            ggfit_free(err);
        } else {
            assert_int_equal(rc, GGFIT_OK);
            assert_true(u.enc[0].compute_estimated);
            assert_int_equal(u.enc[0].weights, 2 * (14 * 14 * 3 * ME) + 4 * (ME * ME * 2 + ME * 4) +
                                                   4 * ME * 4 + 2 * (ME * MF * 2) + MF * 4 +
                                                   ME * 4);
        }
        ggfit_mmproj_free(mm);
    }
    free(s);
}

/* data/oracle/b<build>/mtmd.jsonl: that llama.cpp's bytes per device
 * (mtmdcmp.py --record), for the projectors in data/tiny/ and data/real/,
 * each case measured with that version's rules. */
static void oracle_mtmd_version(uint32_t build)
{
    json_error_t je;
    char oracle[64];
    snprintf(oracle, sizeof oracle, "data/oracle/b%u/mtmd.jsonl", build);
    FILE *f = fopen(oracle, "r");
    if (!f)   /* a checkout without the figures proves nothing: a failure */
        fail_msg("cannot open %s: llama.cpp's figures for the projectors", oracle);
    char line[4096];
    int n_cases = 0, n_same = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *j = json_loads(line, 0, &je);
        assert_non_null(j);
        const char *file = json_string_value(json_object_get(j, "mmproj"));
        const char *args = json_string_value(json_object_get(j, "args"));
        int n_dev = (int)json_integer_value(json_object_get(j, "devices"));
        char path[512];
        snprintf(path, sizeof path, "data/tiny/%s", file);
        if (access(path, R_OK))
            snprintf(path, sizeof path, "data/real/%s", file);
        ggfit_mmproj *mm = NULL;
        char *err = NULL;
        if (ggfit_mmproj_open(path, &mm, &err) != GGFIT_OK)
            fail_msg("%s: %s", path, err);
        ggfit_mmproj_params p;
        ggfit_mmproj_params_init(&p);
        p.llama_build = build;
        if (strstr(args, "-fa off"))
            p.flash_attn = GGFIT_FA_OFF;
        if (strstr(args, "-fa on"))
            p.flash_attn = GGFIT_FA_ON;
        if (strstr(args, "--no-mmproj-offload"))
            p.use_gpu = false;
        if (strstr(args, "--no-warmup"))
            p.warmup = false;
        const char *mt = strstr(args, "--image-max-tokens ");
        if (mt)
            p.image_max_tokens = atoi(mt + strlen("--image-max-tokens "));
        mt = strstr(args, "--image-min-tokens ");
        if (mt)
            p.image_min_tokens = atoi(mt + strlen("--image-min-tokens "));
        ggfit_device devs[GGFIT_MAX_DEVICES];
        size_t nd = 0;
        if (n_dev)
            assert_int_equal(ggfit_devices_parse(n_dev == 1 ? "rpc:80GiB" : "rpc:80GiB,rpc:80GiB",
                                                 devs, GGFIT_MAX_DEVICES, &nd, &err), GGFIT_OK);
        ggfit_mmproj_usage u;
        if (ggfit_mmproj_measure(mm, &p, devs, nd, &u, &err) != GGFIT_OK)
            fail_msg("%s: %s", path, err);
        json_t *rows = json_object_get(j, "rows");
        bool same = true;
        for (size_t r = 0; r < json_array_size(rows); r++) {
            json_t *row = json_array_get(rows, r);
            const char *name = json_string_value(json_array_get(row, 0));
            uint64_t want = (uint64_t)json_integer_value(json_array_get(row, 1));
            uint64_t got = u.cpu;
            for (size_t d = 0; d < nd; d++)
                if (!strcmp(name, devs[d].name))
                    got = u.device[d];
            if (got != want) {
                printf("mtmd b%u: %s, %d devices, '%s': %s llama.cpp %llu, ggfit %llu\n", build,
                       file, n_dev, args, name, (unsigned long long)want,
                       (unsigned long long)got);
                same = false;
            }
        }
        ggfit_mmproj_free(mm);
        json_decref(j);
        n_cases++;
        n_same += same;
    }
    fclose(f);
    printf("mtmd b%u: %d/%d cases equal to llama.cpp's bytes\n", build, n_same, n_cases);
    assert_true(n_cases > 0);
    assert_int_equal(n_same, n_cases);
}

static void test_oracle_mtmd(void **state)
{
    (void)state;
    for (size_t v = 0; ggfit_llama_version_supported(v); v++)
        oracle_mtmd_version(ggfit_llama_version_supported(v));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qwen2vl),
        cmocka_unit_test(test_siglip),
        cmocka_unit_test(test_qwen3vl),
        cmocka_unit_test(test_pixtral),
        cmocka_unit_test(test_internvl),
        cmocka_unit_test(test_kimivl),
        cmocka_unit_test(test_whisper),
        cmocka_unit_test(test_llama4),
        cmocka_unit_test(test_glm4v),
        cmocka_unit_test(test_gemma4v),
        cmocka_unit_test(test_gemma4a),
        cmocka_unit_test(test_siglip_mlp),
        cmocka_unit_test(test_qwen3a),
        cmocka_unit_test(test_resampler),
        cmocka_unit_test(test_minicpmv4_6),
        cmocka_unit_test(test_llava),
        cmocka_unit_test(test_kimik25),
        cmocka_unit_test(test_paddleocr),
        cmocka_unit_test(test_minimax_m3),
        cmocka_unit_test(test_youtuvl),
        cmocka_unit_test(test_ldp),
        cmocka_unit_test(test_granite4_vision),
        cmocka_unit_test(test_mobilenetv5),
        cmocka_unit_test(test_gemma4_both),
        cmocka_unit_test(test_deepseekocr),
        cmocka_unit_test(test_lightonocr),
        cmocka_unit_test(test_longest_edge_limits),
        cmocka_unit_test(test_whisper_more),
        cmocka_unit_test(test_deepseekocr_f32),   /* dumped last: its number follows */
        cmocka_unit_test(test_estimated),
        cmocka_unit_test(test_oracle_mtmd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
