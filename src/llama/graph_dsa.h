/*
 * graph_dsa.h - DSA sparse attention (graph_dsa.c) as DeepSeek V3.2,
 * GLM-5 (src/models/deepseek32.cpp, glm-dsa.cpp) and dots3-note
 * (dots3note.cpp) build it: DeepSeek's absorbed MLA over a K-only latent
 * cache whose mask each layer opens only at the top_k cells its
 * "lightning indexer" chose (the indexer's own keys, one head of
 * indexer.key_length, Hadamard-rotated, in a second K-only cache:
 * llama_kv_cache_dsa).
 */
#ifndef GGFIT_GRAPH_DSA_H
#define GGFIT_GRAPH_DSA_H

#include "llama/check.h"
#include "llama/graph.h"

/* The sizes the DSA layers share and build_attn_inp_k_dsa's inputs. */
typedef struct gb_dsa {
    int64_t n_tokens, n_rope;
    int64_t n_ih, ih;           /* indexer heads and their size */
    uint32_t top_k;
    int32_t k_idxs_mla, mask_mla, k_idxs_lid, mask_lid, k_rot_lid;
} gb_dsa;

/* One layer's MLA sizes (an SWA layer has its own). */
typedef struct gb_dsa_mla {
    int64_t n_head;
    int64_t head_k;             /* a Q head after decompression (key_length_mla) */
    int64_t lora;               /* kv_lora_rank */
    bool k_norm;                /* the rope part of the key RMS-normed (attn_k_norm) */
} gb_dsa_mla;

/* build_attn_inp_k_dsa after build_inp_pos: the MLA cache's K indices and
 * mask, then the indexer cache's, whose mask is F16 (the fused
 * indexer's), and its Hadamard rotation, as wide as the largest power of
 * two from 64 up dividing the indexer's head (always made). Sets b's
 * inp_pos, k_idxs and kq_mask (the MLA cache's); not inp_out_ids. */
void gb_dsa_inputs(bctx *b, gb_dsa *d);
/* Layer il's cache_k_l<il> of n_embd values a cell, n_kv cells a stream
 * (llama_kv_cache); cpy_k stores k's rows at k_idxs; get_k views all
 * cells, heads of hk. */
int32_t gb_dsa_cache_k(bctx *b, int il, int64_t n_embd, uint32_t n_kv);
int32_t gb_dsa_cpy_k(bctx *b, int32_t ck, int32_t k, int32_t k_idxs);
int32_t gb_dsa_get_k(bctx *b, int32_t ck, int64_t hk);
/* The Q LoRA of layer il: attn_q_a, then its RMS norm (qr). */
int32_t gb_dsa_qr(bctx *b, int32_t cur, int il);
/* The lightning indexer of layer il (cur the layer's input, qr the normed
 * Q LoRA): the top_k cells for each token. */
int32_t gb_dsa_indexer(bctx *b, const gb_dsa *d, int32_t cur, int32_t qr, int il);
/* The absorbed MLA's Q and K from cur and qr (o: the layer's sizes):
 * qkv[0] Qcur, qkv[1] Kcur, qkv[2] Vcur (the latent). */
void gb_dsa_mla_qkv(bctx *b, const gb_dsa *d, const gb_dsa_mla *o, int32_t cur, int32_t qr,
                    int il, int32_t qkv[3]);
/* build_attn on the DSA input: the MLA cache's (heads of hk) mask opened
 * only at the top_k cells, then MQA over the latent, decompressed by
 * v_mla (-1: attn_v_b, looked up at that point); returns kqv_out, no wo. */
int32_t gb_dsa_attn(bctx *b, const gb_dsa *d, const int32_t qkv[3], int32_t top, int64_t hk,
                    int32_t v_mla, int il);
/* The trunk's n_layer blocks on inpL: attn(b, ctx, x, il) on the
 * attention norm's output (b->missing: stop), the FFN (gated for the
 * leading dense blocks, else gb_moe_shared_layer), then gb_output. */
typedef int32_t (*gb_dsa_attn_fn)(bctx *b, void *ctx, int32_t cur, int il);
void gb_dsa_trunk(bctx *b, int32_t inpL, int n_layer, int gating, gb_dsa_attn_fn attn,
                  void *ctx);
/* The checks of the DSA keys: kv_lora_rank (the latent cache's head is it
 * plus the rope), the indexer's counts, then those named in more (NULL-
 * terminated, or NULL), all read as unsigned 32-bit counts. */
void gb_dsa_check(hp_check *c, const char *const *more);

#endif
