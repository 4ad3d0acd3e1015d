/*
 * clip.h - llama.cpp's multimodal encoders (tools/mtmd/clip.cpp), as far
 * as their memory goes: the hparams load_hparams reads, the tensors
 * load_tensors takes, and the warmup graph (clip_graph and
 * tools/mtmd/models/<type>.cpp) built with ggml/ggml.h for the scheduler
 * and the allocator, as the language models' graphs are. Internal.
 */
#ifndef GGFIT_MTMD_CLIP_H
#define GGFIT_MTMD_CLIP_H

#include "ggml/ggml.h"
#include "llama/check.h"

/* clip-impl.h ffn_op_type */
enum { CLIP_FFN_GELU, CLIP_FFN_GELU_ERF, CLIP_FFN_SILU, CLIP_FFN_GELU_QUICK };

/* clip-model.h clip_hparams, the fields the graphs and the warmup read. */
typedef struct clip_hparams {
    int32_t image_size, patch_size, n_embd, n_ff, projection_dim, n_head, n_head_kv,
        n_embd_head, n_layer, n_merge, n_wa_pattern, n_mel_bins, proj_stack_factor;
    float eps;
    int ffn_op;
    int32_t image_min_pixels, image_max_pixels;
    int32_t warmup_image_size, warmup_audio_size;
    int32_t custom_image_min_tokens, custom_image_max_tokens;
    int32_t minicpmv_query_num, insert_layer_id;   /* MiniCPM-V's resampler, 4.6's merger */
} clip_hparams;

struct clip_type;

/* One encoder (clip_ctx's model): vision or audio. */
typedef struct clip_model {
    const ggfit_gguf *g;
    bool audio;
    char proj_name[32];        /* the projector_type value as written */
    const struct clip_type *type;
    clip_hparams hp;
    uint32_t llama_build;      /* whose rules load it (0: the newest) */
} clip_model;

/* clip_graph: what a projector's build() reads. */
typedef struct clip_graph {
    gg_graph *g;
    const clip_model *m;
    const clip_hparams *hp;
    int32_t wbuft;             /* the buffer type of every weight */
    bool flash_attn;           /* CLIP_FLASH_ATTN_TYPE_ENABLED */
    int64_t nx, ny;            /* the warmup image (audio: frames x mel bins) */
    int64_t patch_size, n_patches_x, n_patches_y, n_patches;
    int64_t n_embd, n_head, n_head_kv, d_head, n_layer;
    bool missing;              /* a tensor build() needs is not in the file */
    int32_t stand_in;          /* what such a tensor reads as until build()
                                  sees missing: -1 until made */
    int32_t *wmap;             /* per file tensor: its leaf, or -1 */
    /* build_vit's add_pos (Q and K of each layer), with its inputs */
    int32_t (*add_pos)(struct clip_graph *c, int32_t cur);
    int32_t pos_a, pos_b;
    const char *pfx;           /* tensor prefix: "v", or "a" for audio */
    bool avgpool;              /* audio_has_avgpool: build_vit pools by 2 */
    /* a type's build_mm (Gemma 4's clamped matmuls); NULL: ggml_mul_mat */
    int32_t (*mm)(struct clip_graph *c, int32_t w, int32_t x);
    bool v_norm;               /* build_vit's RMS norm of V (Gemma 4 vision) */
    uint32_t llama_build;      /* whose rules build the graph (0: the newest) */
} clip_graph;

/* A projector type (clip-impl.h PROJECTOR_TYPE_NAMES), its part of
 * load_hparams and its graph (models/<type>.cpp); build NULL: no graph
 * yet, the compute buffer is estimated. check: what the type's part of
 * load_hparams asserts and what its graph divides by or indexes with,
 * after the rules every encoder shares (clip.c), as the language models'
 * .check (llama/check.h); NULL: none. */
typedef struct clip_type {
    const char *name;
    void (*hparams)(clip_model *m);
    void (*build)(clip_graph *c);
    void (*check)(hp_check *c, const clip_model *m);
} clip_type;

/* The type called name (clip_projector_type_from_string), or NULL. */
const clip_type *ggfit__clip_type(const char *name);

/* clip_hparams::set_limit_image_tokens, set_warmup_n_tokens */
void ggfit__clip_limit_image_tokens(clip_hparams *hp, int n_min, int n_max);
void ggfit__clip_warmup_n_tokens(clip_hparams *hp, int n_tokens);
/* clip_hparams::set_limit_image_tokens() of the longest_edge types: from
 * MTMD_LONGEST_EDGE_LIMITS the custom token limits given set
 * image_min/max_pixels (the warmup stays), before it nothing */
void ggfit__clip_custom_image_tokens(clip_model *m);
/* An optional u32 key ("clip.vision.spatial_merge_size"), kept when absent. */
void ggfit__clip_u32(const clip_model *m, const char *key, int32_t *v);
/* The value of key, false when the file has none. */
bool ggfit__clip_key_value(const clip_model *m, const char *key, ggfit_value *v);
/* (int)std::sqrt(n) of a non-negative int: the integer square root */
int32_t ggfit__clip_isqrt(int64_t n);
/* llama.cpp's int products, kept in range whatever a header says */
int32_t ggfit__clip_clamp32(int64_t v);

/* ggfit_mmproj_open on a header already read (a remote one): takes g,
 * closed on failure too; name for messages. */
ggfit_status ggfit__mmproj_from_gguf(ggfit_gguf *g, const char *name, ggfit_mmproj **out,
                                     char **err);

/* ---- clip_graph's shared blocks (clip.cpp), mm_graph.c ------------------- */

/* The weight named by fmt (load_tensors' get_tensor), or -1 when the file
 * has none; each is its own leaf, in the encoder's buffer type. */
int32_t cg_w(clip_graph *c, const char *fmt, ...) GGFIT_PRINTF(2, 3);
/* A weight build() cannot go without: marks the graph missing when absent
 * (or empty), and gives a stand-in tensor then, never -1. */
int32_t cg_wreq(clip_graph *c, const char *fmt, ...) GGFIT_PRINTF(2, 3);
/* build_mm: the weight w times x, through the type's mm when it has one */
int32_t cg_mm(clip_graph *c, int32_t w, int32_t x);
int32_t cg_add(clip_graph *c, int32_t a, int32_t b);
int32_t cg_mul(clip_graph *c, int32_t a, int32_t b);
int32_t cg_reshape(clip_graph *c, int32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
int32_t cg_cont(clip_graph *c, int32_t a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
int32_t cg_input(clip_graph *c, uint32_t type, int64_t ne0, int64_t ne1, int64_t ne2,
                 int64_t ne3, const char *name);
/* ggml_conv_2d: im2col (F16) then a matmul, [OW, OH, OC, N] */
int32_t cg_conv_2d(clip_graph *c, int32_t kernel, int32_t inp, int s0, int s1);
/* the same with p0, p1 of zero padding on each side */
int32_t cg_conv_2d_pad(clip_graph *c, int32_t kernel, int32_t inp, int s0, int s1, int p0,
                       int p1);
/* ggml_conv_2d_dw: each channel by its own kernel, stride s, padding p */
int32_t cg_conv_2d_dw(clip_graph *c, int32_t kernel, int32_t inp, int s, int p);
int32_t cg_inp_raw(clip_graph *c, int channels);
int32_t cg_inp(clip_graph *c);
enum { CG_NORM_LAYER, CG_NORM_RMS };
int32_t cg_norm(clip_graph *c, int32_t cur, int32_t w, int32_t b, int type);
int32_t cg_ffn(clip_graph *c, int32_t cur, int32_t up, int32_t up_b, int32_t gate,
               int32_t gate_b, int32_t down, int32_t down_b, int op);
int32_t cg_attn(clip_graph *c, int32_t wo, int32_t wo_b, int32_t q, int32_t k, int32_t v,
                int32_t mask);
/* build_rope_2d: the first half of each head rotated by pos_a, the
 * second by pos_b: two views roped and concatenated, or from
 * MTMD_ROPE_SET_OFFSET two ropes of the whole head (the second past an
 * offset) */
int32_t cg_rope_2d(clip_graph *c, int32_t cur, int32_t pos_a, int32_t pos_b);
/* cg_conv_2d_pad with the im2col of the given type */
int32_t cg_conv_2d_typed(clip_graph *c, int32_t kernel, int32_t inp, int s0, int s1, int p0,
                         int p1, uint32_t type);
/* build_patch_merge_permute (pixel shuffle); -1 (missing) when the patches
 * do not divide by the factor (the padded shuffle is not built) */
int32_t cg_patch_merge_permute(clip_graph *c, int32_t cur, int s);
/* resize_position_embeddings: the learned grid interpolated to the image */
int32_t cg_resize_pos(clip_graph *c, int32_t pos);
/* build_vit with its default options: inp [n_embd, n_pos, B] */
int32_t cg_vit(clip_graph *c, int32_t inp, int64_t n_pos, int norm, int ffn,
               int32_t learned_pos);

#endif
