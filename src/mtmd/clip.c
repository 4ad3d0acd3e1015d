/*
 * clip.c - a projector file as llama.cpp's mtmd measures it
 * (tools/mtmd/mtmd.cpp mtmd_get_memory_usage -> clip.cpp clip_init with
 * no_alloc): each encoder (vision, then audio) gets a clip_ctx whose
 * weights all go to one backend, the first GPU when offloaded, else the
 * CPU (clip_ctx's constructor); load_tensors counts each tensor it takes
 * at its ggml_nbytes (mem_usage: no alignment, no padding); the warmup
 * reserves the graph of a dummy image of warmup_image_size pixels a side
 * (audio: warmup_audio_size frames) on a scheduler of [that backend, CPU]
 * with op offload, and each backend's compute buffer is added
 * (reserve_compute_meta). -fa auto first tries flash attention and keeps
 * it when the backend supports the op.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ggml/backend.h"
#include "mtmd/clip.h"

struct ggfit_mmproj {
    ggfit_gguf *g;
    size_t n;
    clip_model enc[GGFIT_MMPROJ_MAX_ENCODERS];
};

/* ---- the projector types (clip-impl.h PROJECTOR_TYPE_NAMES) -------------- */

extern const clip_type ggfit__clip_qwen2vl, ggfit__clip_qwen25vl, ggfit__clip_qwen3vl,
    ggfit__clip_gemma3, ggfit__clip_idefics3, ggfit__clip_pixtral, ggfit__clip_internvl,
    ggfit__clip_kimivl, ggfit__clip_ultravox, ggfit__clip_voxtral, ggfit__clip_qwen2a,
    ggfit__clip_llama4, ggfit__clip_glm4v, ggfit__clip_gemma4v, ggfit__clip_gemma4uv,
    ggfit__clip_gemma4a, ggfit__clip_gemma4ua, ggfit__clip_lfm2, ggfit__clip_phi4,
    ggfit__clip_janus_pro, ggfit__clip_qwen3a, ggfit__clip_resampler,
    ggfit__clip_minicpmv4_6, ggfit__clip_mlp, ggfit__clip_kimik25, ggfit__clip_paddleocr,
    ggfit__clip_hunyuanvl, ggfit__clip_minimax_m3, ggfit__clip_youtuvl, ggfit__clip_ldp,
    ggfit__clip_ldpv2, ggfit__clip_granite4_vision, ggfit__clip_gemma3nv,
    ggfit__clip_deepseekocr, ggfit__clip_lightonocr, ggfit__clip_musicflamingo,
    ggfit__clip_meralion, ggfit__clip_glma;

/* The other names clip_projector_type_from_string knows: exact weights, the
 * warmup at image_size, the compute buffer estimated. */
static const clip_type plain[] = {
    { .name = "adapter" }, { .name = "step3vl" }, { .name = "gemma3na" }, { .name = "cogvlm" },
    { .name = "dots_ocr" }, { .name = "deepseekocr2" }, { .name = "lfm2a" }, { .name = "yasa2" },
    { .name = "nemotron_v2_vl" }, { .name = "exaone4_5" }, { .name = "granite_speech" },
    { .name = "mimovl" }, { .name = "mimo_audio" }, { .name = "parakeet" },
    { .name = "qwen3tts_spkenc" }, { .name = "qwen3tts_gen" },
};

const clip_type *ggfit__clip_type(const char *name)
{
    static const clip_type *const built[] = {
        &ggfit__clip_qwen2vl, &ggfit__clip_qwen25vl, &ggfit__clip_qwen3vl, &ggfit__clip_gemma3,
        &ggfit__clip_idefics3, &ggfit__clip_pixtral, &ggfit__clip_internvl, &ggfit__clip_kimivl,
        &ggfit__clip_ultravox, &ggfit__clip_voxtral, &ggfit__clip_qwen2a, &ggfit__clip_llama4,
        &ggfit__clip_glm4v, &ggfit__clip_gemma4v, &ggfit__clip_gemma4uv,
        &ggfit__clip_gemma4a, &ggfit__clip_gemma4ua, &ggfit__clip_lfm2, &ggfit__clip_phi4,
        &ggfit__clip_janus_pro, &ggfit__clip_qwen3a, &ggfit__clip_resampler,
        &ggfit__clip_minicpmv4_6, &ggfit__clip_mlp, &ggfit__clip_kimik25, &ggfit__clip_paddleocr,
        &ggfit__clip_hunyuanvl, &ggfit__clip_minimax_m3, &ggfit__clip_youtuvl,
        &ggfit__clip_ldp, &ggfit__clip_ldpv2, &ggfit__clip_granite4_vision,
        &ggfit__clip_gemma3nv, &ggfit__clip_deepseekocr, &ggfit__clip_lightonocr,
        &ggfit__clip_musicflamingo, &ggfit__clip_meralion, &ggfit__clip_glma,
    };
    for (size_t i = 0; i < sizeof built / sizeof built[0]; i++)
        if (!strcmp(name, built[i]->name))
            return built[i];
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (!strcmp(name, plain[i].name))
            return &plain[i];
    return NULL;
}

/* ---- hparams (clip_model_loader::load_hparams) --------------------------- */

static bool key_bool(const clip_model *m, const char *key)
{
    ggfit_value v;
    return ggfit__clip_key_value(m, key, &v) && v.u;
}

static ggfit_status need_u32(const clip_model *m, const char *fmt, const char *prefix,
                             int32_t *out, char **err)
{
    char key[96];
    snprintf(key, sizeof key, fmt, prefix);
    ggfit_value v;
    if (!ggfit__clip_key_value(m, key, &v))
        return ggfit__fail(err, GGFIT_EFORMAT, "clip: key not found: %s", key);
    ggfit__clip_u32(m, key, out);
    return GGFIT_OK;
}

/* The projector type's name: clip.projector_type, else the modality's. */
static bool proj_name(clip_model *m)
{
    ggfit_value v;
    if (!ggfit__clip_key_value(m, "clip.projector_type", &v) &&
        !ggfit__clip_key_value(m, m->audio ? "clip.audio.projector_type"
                                           : "clip.vision.projector_type", &v))
        return false;
    if (v.type != GGFIT_GGUF_STRING || v.n >= sizeof m->proj_name)
        return false;
    memcpy(m->proj_name, v.str, v.n);
    m->proj_name[v.n] = '\0';
    /* legacy Qwen2.5-Omni files name one type for both encoders */
    if (!strcmp(m->proj_name, "qwen2.5o"))
        snprintf(m->proj_name, sizeof m->proj_name, "%s", m->audio ? "qwen2a" : "qwen2.5vl_merger");
    return true;
}

/* clip_model_loader::get_u32 refuses a value past INT32_MAX, which the
 * int fields it fills could not hold; every integer key of the encoder's
 * (and the file's shared clip.*) is read that way. */
static void int32_keys(hp_check *c)
{
    for (uint64_t i = 0; i < ggfit_gguf_n_kv(c->g) && !c->rc; i++) {
        const char *key = ggfit_gguf_key(c->g, i);
        ggfit_value v;
        if (strncmp(key, "clip.", 5) != 0 || !ggfit_gguf_value(c->g, i, &v))
            continue;
        bool is_unsigned = v.type == GGFIT_GGUF_UINT32 || v.type == GGFIT_GGUF_UINT64;
        bool is_signed = v.type == GGFIT_GGUF_INT32 || v.type == GGFIT_GGUF_INT64;
        if ((is_unsigned && v.u > INT32_MAX) || (is_signed && (v.i > INT32_MAX || v.i < INT32_MIN)))
            hc_fail(c, "%s is %s%llu, past INT32_MAX: llama.cpp's clip loader refuses it", key,
                    is_signed && v.i < 0 ? "-" : "",
                    (unsigned long long)(is_signed && v.i < 0 ? 0 - (uint64_t)v.i : v.u));
    }
}

/* clip.cpp's sanity checks (load_hparams: image and patch size, n_embd,
 * the pixel bounds, n_merge, the mel bins), get_u32's bound, and the
 * sizes the graph is built for (a few thousand blocks, heads that have a
 * width, a warmup image of one patch at least); then the type's own. */
static ggfit_status check_hparams(const clip_model *m, char **err)
{
    const clip_hparams *hp = &m->hp;
    const char *prefix = m->audio ? "clip.audio" : "clip.vision";
    hp_check c = ggfit__check_init(m->g, ggfit_gguf_shard_path(m->g, 0), prefix, err);
    const char *refused = "llama.cpp's clip loader refuses it";
    const char *graph = "ggfit's graph of the encoder needs it";
    int32_keys(&c);
    if (!m->audio) {
        hc_range(&c, "image_size", hp->image_size, 0, 65536, refused);
        hc_range(&c, "patch_size", hp->patch_size, 1, 65535, refused);
    } else {
        hc_range(&c, "num_mel_bins", hp->n_mel_bins, 1, INT32_MAX, refused);
    }
    hc_range(&c, "embedding_length", hp->n_embd, 1, INT32_MAX, refused);
    hc_range(&c, "attention.head_count", hp->n_head, 1, hp->n_embd,
             "each head has a width (n_embd / n_head): ggfit's graph of the encoder needs it");
    hc_range(&c, "attention.head_count_kv", hp->n_head_kv, 1, INT32_MAX, graph);
    hc_range(&c, "block_count", hp->n_layer, 0, 4096, graph);
    hc_range(&c, "attention.head_dim", hp->n_embd_head, 0, INT32_MAX, graph);
    if (hp->n_merge < 0 || hp->n_merge >= 65536)
        hc_fail(&c, "%s's merge factor (clip_hparams::n_merge) is %d, outside 0..65535: %s",
                m->proj_name, hp->n_merge, refused);
    if (hp->image_max_pixels < hp->image_min_pixels)
        hc_fail(&c, "%s's image_max_pixels (%d) is less than its image_min_pixels (%d): %s",
                m->proj_name, hp->image_max_pixels, hp->image_min_pixels, refused);
    if (!m->audio && (hp->warmup_image_size < hp->patch_size || hp->warmup_image_size < 0))
        hc_fail(&c, "%s's warmup image (%d pixels a side) is smaller than one patch "
                "(clip.vision.patch_size %d): ggfit's graph of the encoder needs one",
                m->proj_name, hp->warmup_image_size, hp->patch_size);
    if (!c.rc && m->type->check)
        m->type->check(&c, m);
    return c.rc;
}

static ggfit_status load_hparams(clip_model *m, const ggfit_mmproj_params *p, char **err)
{
    clip_hparams *hp = &m->hp;
    memset(hp, 0, sizeof *hp);
    hp->warmup_audio_size = 3000;
    m->llama_build = p->llama_build;
    if (p->image_min_tokens > 0)
        hp->custom_image_min_tokens = p->image_min_tokens;
    if (p->image_max_tokens > 0)
        hp->custom_image_max_tokens = p->image_max_tokens;
    if (!proj_name(m))
        return ggfit__fail(err, GGFIT_EFORMAT, "clip: no projector type");
    m->type = ggfit__clip_type(m->proj_name);
    if (!m->type)
        return ggfit__fail(err, GGFIT_EUNSUPPORTED, "clip: unknown projector type: %s",
                           m->proj_name);
    const char *pre = m->audio ? "audio" : "vision";
    ggfit_status rc;
    if ((rc = need_u32(m, "clip.%s.embedding_length", pre, &hp->n_embd, err)) ||
        (rc = need_u32(m, "clip.%s.attention.head_count", pre, &hp->n_head, err)) ||
        (rc = need_u32(m, "clip.%s.feed_forward_length", pre, &hp->n_ff, err)) ||
        (rc = need_u32(m, "clip.%s.block_count", pre, &hp->n_layer, err)) ||
        (rc = need_u32(m, "clip.%s.projection_dim", pre, &hp->projection_dim, err)))
        return rc;
    char key[96];
    snprintf(key, sizeof key, "clip.%s.attention.head_dim", pre);
    ggfit__clip_u32(m, key, &hp->n_embd_head);
    hp->n_head_kv = hp->n_head;
    snprintf(key, sizeof key, "clip.%s.attention.head_count_kv", pre);
    ggfit__clip_u32(m, key, &hp->n_head_kv);
    if (m->audio) {
        if ((rc = need_u32(m, "clip.%s.num_mel_bins", pre, &hp->n_mel_bins, err)))
            return rc;
        hp->patch_size = 1;
    } else if ((rc = need_u32(m, "clip.%s.image_size", pre, &hp->image_size, err)) ||
               (rc = need_u32(m, "clip.%s.patch_size", pre, &hp->patch_size, err))) {
        return rc;
    }
    hp->warmup_image_size = hp->image_size;
    bool gelu = key_bool(m, "clip.use_gelu"), silu = key_bool(m, "clip.use_silu");
    if (gelu && silu)
        return ggfit__fail(err, GGFIT_EFORMAT, "clip: both use_gelu and use_silu are set");
    hp->ffn_op = gelu ? CLIP_FFN_GELU : silu ? CLIP_FFN_SILU : CLIP_FFN_GELU_QUICK;
    if (m->type->hparams)
        m->type->hparams(m);
    return check_hparams(m, err);
}

/* ---- weights (load_tensors' get_tensor) ---------------------------------- */

/* The tensors an encoder takes (load_tensors' get_tensor): the vision
 * encoder every tensor but the audio ones; the audio encoder "a.*" and
 * "mm.a.*", and also the few vision names load_tensors asks for without
 * the modality's prefix (the class embedding, the patch embeddings and
 * their norm, and the deepstack layers below its own block count), which
 * a file with both encoders then counts twice, as llama.cpp does. */
static bool takes(const clip_model *m, const char *name)
{
    /* Gemma 4's clamp bounds: read as scalars (get_scalar), not loaded */
    static const char *const bounds[] = { ".input_max", ".input_min", ".output_max",
                                          ".output_min" };
    size_t len = strlen(name);
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        size_t n = strlen(bounds[i]);
        if (len > n && !strcmp(name + len - n, bounds[i]))
            return false;
    }
    static const char *const shared[] = { "v.class_embd", "v.patch_embd.weight",
                                          "v.patch_embd.weight.1", "v.patch_embd.bias",
                                          "v.norm_embd.weight", "v.norm_embd.bias" };
    bool audio = !strncmp(name, "a.", 2) || !strncmp(name, "mm.a.", 5);
    if (!m->audio || audio)
        return m->audio == audio;
    /* GLM-A's audio projector ends with the begin / end of image tokens */
    if (!strcmp(m->proj_name, "glma") && (!strcmp(name, "v.boi") || !strcmp(name, "v.eoi")))
        return true;
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
        if (!strcmp(name, shared[i]))
            return true;
    int il;
    char part[16];
    return sscanf(name, "v.deepstack.%d.%15[a-z0-9]", &il, part) == 2 && il >= 0 &&
           il < m->hp.n_layer;
}

static uint64_t weights_of(const clip_model *m)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < ggfit_gguf_n_tensors(m->g); i++) {
        const ggfit_tensor_info *t = ggfit_gguf_tensor(m->g, i);
        if (takes(m, t->name))
            n += t->n_bytes;
    }
    return n;
}

/* ---- the warmup graph, scheduled and allocated --------------------------- */

/* Whether dev runs a FLASH_ATTN_EXT of this head size (supports_op).
 * CUDA and ROCm (ggml-cuda/fattn.cu ggml_cuda_get_best_fattn_kernel: K and
 * V of one size, the sizes with a kernel); the CPU and RPC (whose
 * supports_op says yes to every op) run any; Vulkan and Metal taken to. */
static bool runs_fa(const ggfit_device *dev, int64_t d_head)
{
    static const int64_t cuda[] = { 40, 64, 72, 80, 96, 112, 128, 256 };
    if (!dev || (dev->kind != GGFIT_BACKEND_CUDA && dev->kind != GGFIT_BACKEND_ROCM))
        return true;
    for (size_t i = 0; i < sizeof cuda / sizeof cuda[0]; i++)
        if (d_head == cuda[i])
            return true;
    return false;
}

static int64_t d_head_of(const clip_hparams *hp)
{
    return hp->n_embd_head > 0 ? hp->n_embd_head : hp->n_embd / hp->n_head;
}

/* The compute buffers of the graph, per backend (0: the encoder's, 1: the
 * CPU's when the encoder runs on a device). */
static ggfit_status reserve(const clip_model *m, const ggfit_device *dev, bool fa,
                            uint32_t build, uint64_t sizes[2], char **err)
{
    const clip_hparams *hp = &m->hp;
    gg_graph g;
    gg_init(&g);
    g.names = getenv("GGFIT_DEBUG_GRAPH") != NULL;
    uint64_t nt = ggfit_gguf_n_tensors(m->g);
    int32_t *wmap = ggfit__malloc((size_t)(nt ? nt : 1) * sizeof *wmap);
    if (!wmap)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    for (uint64_t i = 0; i < nt; i++)
        wmap[i] = -1;
    int64_t side = m->audio ? hp->warmup_audio_size : hp->warmup_image_size;
    clip_graph c = {
        .g = &g, .m = m, .hp = hp, .wbuft = 0, .flash_attn = fa,
        .nx = side, .ny = m->audio ? hp->n_mel_bins : side, .patch_size = hp->patch_size,
        .n_embd = hp->n_embd, .n_head = hp->n_head, .n_head_kv = hp->n_head_kv,
        .n_layer = hp->n_layer, .wmap = wmap, .pfx = m->audio ? "a" : "v", .stand_in = -1,
        .llama_build = build,
    };
    c.n_patches_x = c.nx / c.patch_size;
    c.n_patches_y = c.ny / c.patch_size;
    c.n_patches = c.n_patches_x * c.n_patches_y;
    c.d_head = d_head_of(hp);
    m->type->build(&c);
    /* -fa on where the device has no kernel: those nodes go to the CPU */
    for (uint32_t i = 0; dev && !runs_fa(dev, c.d_head) && i < g.n; i++)
        if (g.t[i].op == GGFIT_OP_FLASH_ATTN_EXT)
            g.t[i].unsupported |= 1u;
    ggfit_status rc = g.oom ? GGFIT_ENOMEM : c.missing ? GGFIT_EUNSUPPORTED : GGFIT_OK;
    ggfit_free(wmap);
    if (!rc) {
        gg_finish(&g);
        /* clip_ctx: backends [device, CPU] (or the CPU alone), each with its
         * default buffer type; the weights in the first */
        ggfit_sched_buft bufts[2];
        ggfit_sched_backend be[2];
        int nb = 0;
        if (dev) {
            bufts[nb] = (ggfit_sched_buft){ .name = dev->name, .alignment =
                                                ggfit__backend(dev->kind)->alignment,
                                            .max_size = UINT64_MAX };
            be[nb] = (ggfit_sched_backend){ .name = dev->name, .buft = nb, .bufts = 1u << nb,
                                            .offload = ggfit__backend(dev->kind)->offload,
                                            .offload_min_batch = 32 };
            nb++;
        }
        bufts[nb] = (ggfit_sched_buft){ .name = "CPU", .is_host = true, .alignment = 32,
                                        .max_size = UINT64_MAX };
        be[nb] = (ggfit_sched_backend){ .name = "CPU", .buft = nb, .bufts = 1u << nb,
                                        .is_cpu = true, .offload = GGFIT_OFFLOAD_NEVER };
        nb++;
        ggfit_sched_in in = { .t = g.t, .n_tensors = g.n, .leafs = g.leafs, .nodes = g.nodes,
                              .n_leafs = g.n_leafs, .n_nodes = g.n_nodes, .backends = be,
                              .n_backends = nb, .bufts = bufts, .n_bufts = nb, .n_copies = 1,
                              .op_offload = true, .for_galloc = true };
        ggfit_sched_out so;
        char *serr = NULL;
        rc = ggfit__sched_split(&in, &so, &serr);
        if (!rc) {
            uint64_t sz[2] = { 0, 0 };
            rc = ggfit__galloc_reserve_trusted(so.t, so.n_leafs, so.n_nodes, so.n_backends,
                                               so.galloc, sz, NULL, &serr);
            ggfit__sched_free(&so);
            sizes[0] = sz[0];
            sizes[1] = nb == 2 ? sz[1] : 0;
        }
        if (rc && rc != GGFIT_ENOMEM)
            rc = ggfit__fail(err, GGFIT_EUNSUPPORTED, "clip: %s", serr ? serr : "scheduler");
        ggfit_free(serr);
    }
    gg_free(&g);
    if (rc == GGFIT_ENOMEM)
        return ggfit__fail(err, rc, "out of memory");
    return rc;
}

/* No graph: the activations a ViT of these dimensions keeps live at once
 * (the residual, the normed input, Q/K/V, the FFN's hidden rows, in F32)
 * and, without flash attention, one layer's scores over all heads, with
 * the input image. A guess within tens of percent, said so in the plan. */
static uint64_t estimate(const clip_model *m, bool fa)
{
    const clip_hparams *hp = &m->hp;
    uint64_t side = (uint64_t)(m->audio ? hp->warmup_audio_size : hp->warmup_image_size);
    uint64_t n_pos = m->audio ? side / 2 : (side / (uint64_t)hp->patch_size) *
                                               (side / (uint64_t)hp->patch_size);
    uint64_t rows = n_pos * (6 * (uint64_t)hp->n_embd + 2 * (uint64_t)hp->n_ff) * 4;
    uint64_t kq = fa ? 0 : n_pos * n_pos * (uint64_t)hp->n_head * 4;
    uint64_t inp = side * (m->audio ? (uint64_t)hp->n_mel_bins : side * 3) * 4;
    return rows + kq + inp;
}

static ggfit_status measure_one(const clip_model *m, const ggfit_mmproj_params *p,
                                const ggfit_device *dev, int32_t dev_index,
                                ggfit_mmproj_encoder *e, char **err)
{
    memset(e, 0, sizeof *e);
    snprintf(e->projector, sizeof e->projector, "%s", m->proj_name);
    e->audio = m->audio;
    e->warmup = (uint32_t)(m->audio ? m->hp.warmup_audio_size : m->hp.warmup_image_size);
    e->device = dev ? dev_index : -1;
    e->weights = weights_of(m);
    /* clip_model_loader::warmup: -fa auto tries flash attention and keeps
     * it when the encoder's backend runs the FLASH_ATTN_EXT nodes */
    e->flash_attn = p->flash_attn == GGFIT_FA_ON ||
                    (p->flash_attn == GGFIT_FA_AUTO && runs_fa(dev, d_head_of(&m->hp)));
    uint64_t sizes[2] = { 0, 0 };
    if (!p->warmup)   /* clip_init: no warmup, no compute buffer reserved */
        return GGFIT_OK;
    ggfit_status rc = m->type->build ? reserve(m, dev, e->flash_attn, p->llama_build, sizes, err)
                                     : GGFIT_EUNSUPPORTED;
    if (rc == GGFIT_EUNSUPPORTED) {
        ggfit_free(err ? *err : NULL);
        if (err)
            *err = NULL;
        e->compute_estimated = true;
        sizes[0] = estimate(m, e->flash_attn);
        sizes[1] = 0;
        rc = GGFIT_OK;
    }
    e->compute = sizes[0];
    e->cpu_compute = sizes[1];
    return rc;
}

/* ---- public API ---------------------------------------------------------- */

void ggfit_mmproj_params_init(ggfit_mmproj_params *p)
{
    memset(p, 0, sizeof *p);
    p->use_gpu = true;
    p->flash_attn = GGFIT_FA_AUTO;
    p->warmup = true;
}

ggfit_status ggfit_mmproj_open(const char *path, ggfit_mmproj **out, char **err)
{
    if (err)
        *err = NULL;
    if (!path || !out)
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_mmproj_open: NULL argument");
    *out = NULL;
    ggfit_gguf *g = NULL;
    ggfit_status rc = ggfit_gguf_open(path, &g, err);
    return rc ? rc : ggfit__mmproj_from_gguf(g, path, out, err);
}

ggfit_status ggfit__mmproj_from_gguf(ggfit_gguf *g, const char *path, ggfit_mmproj **out,
                                     char **err)
{
    *out = NULL;
    ggfit_mmproj *mm = ggfit__calloc(1, sizeof *mm);
    if (!mm) {
        ggfit_gguf_close(g);
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    }
    mm->g = g;
    clip_model probe = { .g = mm->g };
    bool vision = key_bool(&probe, "clip.has_vision_encoder");
    bool audio = key_bool(&probe, "clip.has_audio_encoder");
    /* Gemma 3n's file has audio tensors that llama.cpp skips (clip_init) */
    if (vision && audio) {
        clip_model v = { .g = mm->g };
        if (proj_name(&v) && !strcmp(v.proj_name, "gemma3nv"))
            audio = false;
    }
    if (!vision && !audio) {
        ggfit_mmproj_free(mm);
        return ggfit__fail(err, GGFIT_EFORMAT, "%s: not a multimodal projector (no "
                           "clip.has_vision_encoder or clip.has_audio_encoder)", path);
    }
    if (vision)
        mm->enc[mm->n++] = (clip_model){ .g = mm->g, .audio = false };
    if (audio)
        mm->enc[mm->n++] = (clip_model){ .g = mm->g, .audio = true };
    *out = mm;
    return GGFIT_OK;
}

void ggfit_mmproj_free(ggfit_mmproj *mm)
{
    if (mm) {
        ggfit_gguf_close(mm->g);
        free(mm);
    }
}

ggfit_status ggfit_mmproj_measure(const ggfit_mmproj *mm, const ggfit_mmproj_params *p,
                                  const ggfit_device *devs, size_t n_devs,
                                  ggfit_mmproj_usage *out, char **err)
{
    if (err)
        *err = NULL;
    if (!mm || !p || !out || (n_devs && !devs))
        return ggfit__fail(err, GGFIT_EINVAL, "ggfit_mmproj_measure: NULL argument");
    memset(out, 0, sizeof *out);
    /* ggml_backend_init_by_type(GPU): the first device there is */
    int32_t d = -1;
    for (size_t i = 0; p->use_gpu && d < 0 && i < n_devs && i < GGFIT_MAX_DEVICES; i++)
        if (devs[i].total || devs[i].free)
            d = (int32_t)i;
    for (size_t k = 0; k < mm->n; k++) {
        clip_model m = mm->enc[k];
        ggfit_mmproj_encoder *e = &out->enc[k];
        ggfit_status rc = load_hparams(&m, p, err);
        if (!rc)
            rc = measure_one(&m, p, d >= 0 ? &devs[d] : NULL, d, e, err);
        if (rc)
            return rc;
        out->n_encoders++;
        if (d >= 0) {
            out->device[d] += e->weights + e->compute;
            out->cpu += e->cpu_compute;
        } else {
            out->cpu += e->weights + e->compute;
        }
    }
    return GGFIT_OK;
}
