/*
 * mkmalformed.c - writes the catalogue of malformed GGUF files: one small
 * file per way a header can be wrong, and expected.tsv, one line per file:
 *
 *   FILE <TAB> STATUS <TAB> SUBSTRING <TAB> FUNCTION
 *
 * STATUS is ggfit_status_str() of the status the reader must return,
 * SUBSTRING a distinctive part of its message, and FUNCTION says which call
 * reports it: "gguf" (ggfit_gguf_open, the file layer), "model"
 * (ggfit_model_open; these files are valid GGUF and only the model
 * description refuses them) or "project" (ggfit_project and ggfit_fit; the
 * model is described, its hyperparameters refused before anything is
 * sized). tests/test_malformed.c replays the catalogue. A few files are
 * kept as a fuzz run found them (FOUND): listed, not written.
 *
 * Usage: mkmalformed DIR   (run by `make malformed`; the output is committed)
 *
 * The files are crafted byte by byte with the test writer, so each one is
 * wrong in exactly one place and well-formed up to there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggfit.h"
#include "gguf_writer.h"

/* The writer's gw_tiny_model() needs this libggfit function, and this
 * program is deliberately built without the library (`make malformed` does
 * not link it) so that the catalogue does not depend on the code it tests.
 * Nothing here calls gw_tiny_model(), so the stub is never reached. */
uint64_t ggfit_row_bytes(uint32_t type, uint64_t n)
{
    (void)type;
    (void)n;
    abort();
}

/* ggfit_status_str() names, kept here because the library is not linked;
 * test_malformed compares each with the real ggfit_status_str(). */
static const char *status_name(int status)
{
    switch (status) {
    case GGFIT_EIO: return "i/o error";
    case GGFIT_EFORMAT: return "format error";
    case GGFIT_EUNSUPPORTED: return "unsupported";
    case GGFIT_ELIMIT: return "limit exceeded";
    default: abort();   /* no catalogue entry expects anything else */
    }
}

/* ---- pieces shared by several files -------------------------------------- */

#define ARCH "llama"

/* A GGUF v3 header whose first key is general.architecture; the caller
 * writes n_kv - 1 more keys. */
static void start(gw *w, uint64_t n_tensors, uint64_t n_kv)
{
    gw_header(w, 3, n_tensors, n_kv);
    gw_kv_str(w, "general.architecture", ARCH);
}

/* A 1- or 2-dimensional tensor info. */
static void tensor2(gw *w, const char *name, int64_t ne0, int64_t ne1, uint32_t type,
                    uint64_t offset)
{
    int64_t ne[2] = { ne0, ne1 };
    gw_tensor(w, name, ne1 ? 2 : 1, ne, type, offset);
}

/* The one valid tensor of files that go wrong in their keys: with a tensor
 * to lay out, the alignment and split keys are used, not just parsed. */
static void one_tensor(gw *w)
{
    tensor2(w, "output_norm.weight", 64, 0, GGFIT_TYPE_F32, 0);
    gw_pad(w, 32);
}

/* Valid GGUF for the model-level files: architecture, block_count, the
 * context and embedding lengths llama.cpp requires (after block_count, so
 * that files wrong in it fail there) and n_extra more keys the caller
 * writes, then n_tensors tensor infos. */
static void start_model(gw *w, uint64_t n_tensors, uint64_t n_extra, uint32_t n_layer)
{
    start(w, n_tensors, 5 + n_extra);
    gw_kv_u32(w, ARCH ".block_count", n_layer);
    gw_kv_u32(w, ARCH ".context_length", 4096);
    gw_kv_u32(w, ARCH ".embedding_length", 64);
    gw_kv_f32(w, ARCH ".attention.layer_norm_rms_epsilon", 1e-6f);
}

/* A file whose only tensor info is the one under test, nothing else wrong. */
static void lone_tensor(gw *w, const char *name, int64_t ne0, int64_t ne1, uint32_t type,
                        uint64_t offset)
{
    start(w, 1, 1);
    tensor2(w, name, ne0, ne1, type, offset);
    gw_pad(w, 32);
}

/* An array's element type and count; the caller writes the elements. */
static void array_head(gw *w, uint32_t type, uint64_t n)
{
    gw_u32(w, type);
    gw_u64(w, n);
}

static void array_key(gw *w, const char *key, uint32_t type, uint64_t n)
{
    gw_key(w, key, GGFIT_GGUF_ARRAY);
    array_head(w, type, n);
}

/* A string (key, value or tensor name) that declares 1000 bytes and has
 * only its own: the file ends before the declared length. */
static void long_string(gw *w, const char *s)
{
    gw_u64(w, 1000);
    gw_bytes(w, s, strlen(s));
}

/* Bytes that are not part of anything, so that a count checked against the
 * bytes left passes and the reader gets to the place being tested. */
static void filler(gw *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gw_u8(w, 0);
}

/* ---- the file layer: magic, version, counts ---------------------------- */

static void mk_empty(gw *w)
{
    (void)w;
}

static void mk_short_magic(gw *w)
{
    gw_bytes(w, "GGU", 3);
}

static void mk_bad_magic(gw *w)
{
    gw_bytes(w, "\x7f" "ELF", 4);   /* an executable, say; shown escaped */
    filler(w, 28);
}

static void mk_version_1(gw *w)
{
    gw_bytes(w, "GGUF", 4);
    gw_u32(w, 1);
    gw_u32(w, 0);   /* v1 had 32-bit counts */
    gw_u32(w, 0);
}

static void mk_version_7(gw *w)
{
    gw_header(w, 7, 0, 0);
}

/* A big-endian writer stores version 3 as 00 00 00 03. */
static void mk_big_endian(gw *w)
{
    gw_bytes(w, "GGUF", 4);
    gw_bytes(w, "\0\0\0\3", 4);
    gw_bytes(w, "\0\0\0\0\0\0\0\0", 8);
    gw_bytes(w, "\0\0\0\0\0\0\0\1", 8);
}

static void mk_truncated_counts(gw *w)
{
    gw_bytes(w, "GGUF", 4);
    gw_u32(w, 3);
    gw_u64(w, 0);
    gw_u32(w, 1);   /* half of n_kv */
}

static void mk_truncated_kv(gw *w)
{
    start(w, 0, 2);
    gw_key(w, ARCH ".context_length", GGFIT_GGUF_UINT64);
    gw_bytes(w, "\0\x10\0", 3);   /* 3 of the value's 8 bytes */
}

static void mk_truncated_tensor_info(gw *w)
{
    start(w, 1, 1);
    gw_str(w, "token_embd.weight");
    gw_u32(w, 2);
    gw_u64(w, 64);
    gw_u32(w, 0);   /* half of ne[1] */
}

static void mk_too_many_kv(gw *w)
{
    start(w, 0, 1000000);
}

static void mk_too_many_tensors(gw *w)
{
    start(w, 1000000, 1);
    one_tensor(w);
}

/* ---- keys and values ------------------------------------------------------- */

static void mk_key_past_eof(gw *w)
{
    start(w, 0, 2);
    long_string(w, "general.name");
    filler(w, 8);
}

static void mk_string_past_eof(gw *w)
{
    start(w, 0, 2);
    gw_key(w, "general.name", GGFIT_GGUF_STRING);
    long_string(w, "tiny");
}

/* A tokenizer-sized string array (read with pread through a buffer, not in
 * the mapping: gguf.c stream_strings) whose 17,001st string declares 1 MiB,
 * more than the buffer holds, and the file ends 100 bytes after its length. */
static void mk_tokens_past_eof(gw *w)
{
    start(w, 0, 2);
    array_key(w, "tokenizer.ggml.tokens", GGFIT_GGUF_STRING, 17002);
    for (int i = 0; i < 17000; i++) {
        char tok[2] = { (char)('a' + i % 26), 0 };
        gw_str(w, tok);
    }
    gw_u64(w, 1 << 20);
    filler(w, 100);
}

static void mk_empty_key(gw *w)
{
    start(w, 0, 2);
    gw_key(w, "", GGFIT_GGUF_UINT32);
    gw_u32(w, 1);
}

static void mk_key_with_nul(gw *w)
{
    gw_header(w, 3, 0, 1);
    gw_u64(w, 20);
    gw_bytes(w, "general.architecture", 7);
    gw_u8(w, 0);
    gw_bytes(w, "architecture", 12);
    gw_u32(w, GGFIT_GGUF_STRING);
    gw_str(w, ARCH);
}

/* 2^62 uint32 elements: 2^64 bytes, which would wrap a size_t to 0. */
static void mk_array_count_overflow(gw *w)
{
    start(w, 0, 2);
    array_key(w, "tokenizer.ggml.token_type", GGFIT_GGUF_UINT32, (uint64_t)1 << 62);
    filler(w, 16);
}

static void mk_array_past_eof(gw *w)
{
    start(w, 0, 2);
    array_key(w, "tokenizer.ggml.token_type", GGFIT_GGUF_UINT8, 1000);
    filler(w, 10);
}

/* Nine arrays, each the only element of the one before: one level more than
 * the reader's limit of 8, which keeps its recursion bounded. */
static void mk_array_too_deep(gw *w)
{
    start(w, 0, 2);
    gw_key(w, "test.nested", GGFIT_GGUF_ARRAY);
    for (int depth = 0; depth < 8; depth++)
        array_head(w, GGFIT_GGUF_ARRAY, 1);
    array_head(w, GGFIT_GGUF_UINT8, 0);
}

static void mk_unknown_value_type(gw *w)
{
    start(w, 0, 2);
    gw_key(w, "general.name", GGFIT_GGUF_TYPE_COUNT);   /* 13 */
    gw_u32(w, 0);
}

static void mk_unknown_array_type(gw *w)
{
    start(w, 0, 2);
    array_key(w, "tokenizer.ggml.tokens", 99, 1);
    gw_u32(w, 0);
}

static void mk_duplicate_key(gw *w)
{
    start(w, 0, 3);
    gw_kv_str(w, "general.name", "first");
    gw_kv_str(w, "general.name", "second");
}

/* ---- general.alignment and split keys ---------------------------------------- */

static void mk_alignment_not_pow2(gw *w)
{
    start(w, 1, 2);
    gw_kv_u32(w, "general.alignment", 48);
    one_tensor(w);
}

static void mk_alignment_zero(gw *w)
{
    start(w, 1, 2);
    gw_kv_u32(w, "general.alignment", 0);
    one_tensor(w);
}

/* llama.cpp reads general.alignment as a uint32 only. */
static void mk_alignment_wrong_type(gw *w)
{
    start(w, 1, 2);
    gw_key(w, "general.alignment", GGFIT_GGUF_UINT64);
    gw_u64(w, 32);
    one_tensor(w);
}

/* split.no and split.count as llama.cpp's gguf-split writes them: uint16. */
static void split_keys(gw *w, uint16_t no, uint16_t count)
{
    start(w, 1, 3);
    gw_key(w, "split.no", GGFIT_GGUF_UINT16);
    gw_u16(w, no);
    gw_key(w, "split.count", GGFIT_GGUF_UINT16);
    gw_u16(w, count);
    one_tensor(w);
}

/* The first of 3 shards, named so that its siblings cannot be found. */
static void mk_split_bad_name(gw *w)
{
    split_keys(w, 0, 3);
}

static void mk_split_no_too_big(gw *w)
{
    split_keys(w, 3, 3);
}

static void mk_split_count_string(gw *w)
{
    start(w, 1, 2);
    gw_kv_str(w, "split.count", "3");
    one_tensor(w);
}

/* ---- tensor infos -------------------------------------------------------- */

static void mk_tensor_name_past_eof(gw *w)
{
    start(w, 1, 1);
    long_string(w, "token_embd.weight");
    filler(w, 8);
}

static void mk_tensor_name_64(gw *w)
{
    char name[65];
    memset(name, 'x', 64);   /* ggml's names hold 63 bytes and a NUL */
    name[64] = '\0';
    start(w, 2, 1);
    tensor2(w, "token_embd.weight", 64, 10, GGFIT_TYPE_F32, 0);
    tensor2(w, name, 64, 0, GGFIT_TYPE_F32, 2560);
    gw_pad(w, 32);
}

static void mk_tensor_name_empty(gw *w)
{
    lone_tensor(w, "", 64, 0, GGFIT_TYPE_F32, 0);
}

static void mk_duplicate_tensor(gw *w)
{
    start(w, 2, 1);
    tensor2(w, "output.weight", 64, 10, GGFIT_TYPE_F32, 0);
    tensor2(w, "output.weight", 64, 10, GGFIT_TYPE_F32, 2560);
    gw_pad(w, 32);
}

static void mk_tensor_5_dims(gw *w)
{
    int64_t ne[5] = { 64, 2, 2, 2, 2 };
    start(w, 1, 1);
    gw_str(w, "blk.0.ffn_up_exps.weight");
    gw_u32(w, 5);
    for (int d = 0; d < 5; d++)
        gw_u64(w, (uint64_t)ne[d]);
    gw_u32(w, GGFIT_TYPE_F32);
    gw_u64(w, 0);
    gw_pad(w, 32);
}

static void mk_tensor_negative_dim(gw *w)
{
    lone_tensor(w, "token_embd.weight", 64, -1, GGFIT_TYPE_F32, 0);
}

/* 2^32 x 2^32 elements: 2^64, past the 63 bits ggml's int64_t ne holds. */
static void mk_tensor_elements_overflow(gw *w)
{
    lone_tensor(w, "token_embd.weight", (int64_t)1 << 32, (int64_t)1 << 32,
                GGFIT_TYPE_F32, 0);
}

/* 2^62 F64 elements fit in 63 bits, but their 2^65 bytes do not fit in 64. */
static void mk_tensor_bytes_overflow(gw *w)
{
    lone_tensor(w, "token_embd.weight", (int64_t)1 << 31, (int64_t)1 << 31,
                GGFIT_TYPE_F64, 0);
}

/* An aligned offset so close to 2^64 that the data's end wraps around. */
static void mk_tensor_end_overflow(gw *w)
{
    lone_tensor(w, "output_norm.weight", 64, 0, GGFIT_TYPE_F32, UINT64_MAX - 31);
}

static void mk_unknown_tensor_type(gw *w)
{
    lone_tensor(w, "output_norm.weight", 64, 0, 99, 0);
}

/* Q4_0_4_4 (31) was an online-repacked layout that ggml dropped; files
 * quantized with it still exist. */
static void mk_removed_tensor_type(gw *w)
{
    lone_tensor(w, "blk.0.attn_q.weight", 256, 256, 31, 0);
}

/* 43..63 are left for upstream ggml's next types: unknown, not removed
 * (Unsloth's own start at 64). */
static void mk_reserved_tensor_type(gw *w)
{
    lone_tensor(w, "blk.0.attn_q.weight", 256, 256, 50, 0);
}

/* Unsloth's IQ1_XS keeps IQ1_S's 256-element block. */
static void mk_iq1_xs_row_not_block_multiple(gw *w)
{
    lone_tensor(w, "blk.0.attn_q.weight", 128, 256, GGFIT_TYPE_IQ1_XS, 0);
}

static void mk_row_not_block_multiple(gw *w)
{
    lone_tensor(w, "blk.0.attn_q.weight", 100, 256, GGFIT_TYPE_Q4_K, 0);
}

static void mk_misaligned_offset(gw *w)
{
    start(w, 2, 1);
    tensor2(w, "output_norm.weight", 4, 0, GGFIT_TYPE_F32, 0);
    tensor2(w, "token_embd.weight", 64, 10, GGFIT_TYPE_F32, 16);
    gw_pad(w, 32);
}

static void mk_overlapping_tensors(gw *w)
{
    start(w, 2, 1);
    tensor2(w, "token_embd.weight", 64, 10, GGFIT_TYPE_F32, 0);      /* 0..2560 */
    tensor2(w, "output_norm.weight", 64, 0, GGFIT_TYPE_F32, 2048);
    gw_pad(w, 32);
}

/* ---- valid GGUF that the model description refuses --------------------------- */

static void mk_no_architecture(gw *w)
{
    gw_header(w, 3, 0, 2);
    gw_kv_str(w, "general.name", "tiny");
    gw_kv_u32(w, ARCH ".block_count", 2);
    gw_pad(w, 32);
}

static void mk_architecture_not_string(gw *w)
{
    gw_header(w, 3, 0, 2);
    gw_kv_u32(w, "general.architecture", 1);
    gw_kv_u32(w, ARCH ".block_count", 2);
    gw_pad(w, 32);
}

static void mk_architecture_empty(gw *w)
{
    gw_header(w, 3, 0, 1);
    gw_kv_str(w, "general.architecture", "");
    gw_pad(w, 32);
}

static void mk_no_block_count(gw *w)
{
    start(w, 0, 2);
    gw_kv_u32(w, ARCH ".context_length", 4096);
    gw_pad(w, 32);
}

static void mk_no_context_length(gw *w)
{
    start(w, 0, 2);
    gw_kv_u32(w, ARCH ".block_count", 2);
    gw_pad(w, 32);
}

static void mk_block_count_negative(gw *w)
{
    start(w, 0, 2);
    gw_key(w, ARCH ".block_count", GGFIT_GGUF_INT32);
    gw_u32(w, UINT32_MAX);   /* -1 */
    gw_pad(w, 32);
}

static void mk_block_count_over_limit(gw *w)
{
    start_model(w, 0, 0, 100000);
    gw_pad(w, 32);
}

static void mk_head_count_kv_length(gw *w)
{
    static const uint32_t kv[3] = { 8, 8, 8 };
    start_model(w, 0, 2, 4);
    gw_kv_u32(w, ARCH ".attention.head_count", 32);
    gw_kv_arr_u32(w, ARCH ".attention.head_count_kv", kv, 3);
    gw_pad(w, 32);
}

static void mk_block_count_zero(gw *w)
{
    start_model(w, 0, 0, 0);
    gw_pad(w, 32);
}

static void mk_head_count_float_array(gw *w)
{
    start_model(w, 0, 1, 2);
    array_key(w, ARCH ".attention.head_count", GGFIT_GGUF_FLOAT32, 2);
    gw_f32(w, 32.0f);
    gw_f32(w, 32.0f);
    gw_pad(w, 32);
}

static void mk_tensor_block_out_of_range(gw *w)
{
    start_model(w, 2, 0, 2);
    tensor2(w, "blk.1.attn_q.weight", 64, 64, GGFIT_TYPE_F32, 0);
    tensor2(w, "blk.2.attn_q.weight", 64, 64, GGFIT_TYPE_F32, 16384);
    gw_pad(w, 32);
}

static void mk_nextn_over_block_count(gw *w)
{
    start_model(w, 0, 1, 2);
    gw_kv_u32(w, ARCH ".nextn_predict_layers", 3);
    gw_pad(w, 32);
}

/* ---- hyperparameters a projection refuses -------------------------------- */

/* Models the description takes (ggfit_model_open) whose numbers llama.cpp's
 * loader refuses or ggfit's arithmetic cannot take: the projection refuses
 * them before sizing anything, naming the key and its value
 * (src/llama/check.c and the architectures' .check). No tensors: the
 * checks come first. */

/* A header of architecture arch with its block_count; n_extra keys follow. */
/* A file of another architecture, with the keys llama.cpp requires of it
 * before the one under test (llama's norm epsilon, RWKV's ranks: each 1;
 * the files set wkv.head_size themselves) and n_extra more. */
static void start_arch(gw *w, const char *arch, uint64_t n_extra, uint32_t n_layer)
{
    static const struct { const char *arch, *keys[4]; } required[] = {
        { "rwkv6", { "time_mix_extra_dim", "time_decay_extra_dim" } },
        { "rwkv7", { "attention.decay_lora_rank", "attention.iclr_lora_rank",
                     "attention.value_residual_mix_lora_rank" } },
    };
    const char *const *req = NULL;
    uint64_t n_req = !strcmp(arch, ARCH);
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!strcmp(arch, required[i].arch))
            for (req = required[i].keys; req[n_req]; n_req++)
                ;
    char key[96];
    gw_header(w, 3, 0, 3 + n_req + n_extra);
    gw_kv_str(w, "general.architecture", arch);
    snprintf(key, sizeof key, "%s.block_count", arch);
    gw_kv_u32(w, key, n_layer);
    snprintf(key, sizeof key, "%s.context_length", arch);   /* load_hparams requires it */
    gw_kv_u32(w, key, 4096);
    if (!strcmp(arch, ARCH))
        gw_kv_f32(w, ARCH ".attention.layer_norm_rms_epsilon", 1e-6f);
    for (uint64_t k = 0; req && k < n_req; k++) {
        snprintf(key, sizeof key, "%s.%s", arch, req[k]);
        gw_kv_u32(w, key, 1);
    }
}

static void mk_heads_not_grouped(gw *w)
{
    start_arch(w, ARCH, 3, 2);
    gw_kv_u32(w, ARCH ".embedding_length", 384);
    gw_kv_u32(w, ARCH ".attention.head_count", 6);
    gw_kv_u32(w, ARCH ".attention.head_count_kv", 4);
    gw_pad(w, 32);
}

static void mk_experts_used_over_count(gw *w)
{
    start_model(w, 0, 2, 2);
    gw_kv_u32(w, ARCH ".expert_count", 8);
    gw_kv_u32(w, ARCH ".expert_used_count", 9);
    gw_pad(w, 32);
}

static void mk_expert_groups_uneven(gw *w)
{
    start_model(w, 0, 4, 2);
    gw_kv_u32(w, ARCH ".expert_count", 8);
    gw_kv_u32(w, ARCH ".expert_used_count", 2);
    gw_kv_u32(w, ARCH ".expert_group_count", 3);
    gw_kv_u32(w, ARCH ".expert_group_used_count", 1);
    gw_pad(w, 32);
}

static void mk_wkv_head_size_zero(gw *w)
{
    start_arch(w, "rwkv7", 2, 2);
    gw_kv_u32(w, "rwkv7.embedding_length", 256);
    gw_kv_u32(w, "rwkv7.wkv.head_size", 0);
    gw_pad(w, 32);
}

static void mk_embd_not_heads(gw *w)
{
    start_arch(w, "rwkv6", 2, 2);
    gw_kv_u32(w, "rwkv6.embedding_length", 100);
    gw_kv_u32(w, "rwkv6.wkv.head_size", 64);
    gw_pad(w, 32);
}

static void mk_count_not_whole(gw *w)
{
    start_arch(w, "ernie4_5-moe", 2, 2);
    gw_kv_u32(w, "ernie4_5-moe.embedding_length", 64);
    gw_kv_f32(w, "ernie4_5-moe.interleave_moe_layer_step", 1.5f);
    gw_pad(w, 32);
}

static void mk_size_over_limit(gw *w)
{
    start_arch(w, ARCH, 1, 2);
    gw_kv_u32(w, ARCH ".embedding_length", 1u << 21);
    gw_pad(w, 32);
}

/* ---- the catalogue ---------------------------------------------------------- */

typedef struct entry {
    const char *file;
    int status;
    const char *substring;
    const char *function;      /* "gguf", "model" or "project" */
    void (*make)(gw *w);       /* NULL: a file kept as a fuzz run found it */
} entry;

#define GGUF(f, st, sub, fn) { f, st, sub, "gguf", fn }
#define MODEL(f, st, sub, fn) { f, st, sub, "model", fn }
#define PROJECT(f, st, sub, fn) { f, st, sub, "project", fn }
/* A file a fuzz run found (../shared/reliability/), committed as it was:
 * listed here, never written. */
#define FOUND(f, st, sub, stage) { f, st, sub, stage, NULL }

static const entry catalogue[] = {
    GGUF("empty.gguf", GGFIT_EFORMAT, "not a GGUF file: 0 bytes, too short for the magic",
         mk_empty),
    GGUF("short-magic.gguf", GGFIT_EFORMAT, "not a GGUF file: 3 bytes, too short for the magic",
         mk_short_magic),
    GGUF("bad-magic.gguf", GGFIT_EFORMAT, "magic is \"\\x7fELF\", not \"GGUF\"", mk_bad_magic),
    GGUF("version-1.gguf", GGFIT_EUNSUPPORTED, "GGUF version 1 (32-bit counts) is not supported",
         mk_version_1),
    GGUF("version-7.gguf", GGFIT_EUNSUPPORTED, "unknown GGUF version 7", mk_version_7),
    GGUF("big-endian.gguf", GGFIT_EUNSUPPORTED, "big-endian GGUF files are not supported",
         mk_big_endian),
    GGUF("truncated-counts.gguf", GGFIT_EFORMAT,
         "key/value count needs 8 bytes but the file ends 4 bytes later", mk_truncated_counts),
    GGUF("truncated-kv.gguf", GGFIT_EFORMAT,
         "value needs 8 bytes but the file ends 3 bytes later", mk_truncated_kv),
    GGUF("truncated-tensor-info.gguf", GGFIT_EFORMAT,
         "tensor dimension needs 8 bytes but the file ends 4 bytes later",
         mk_truncated_tensor_info),
    GGUF("too-many-kv.gguf", GGFIT_EFORMAT, "1000000 key/value pairs cannot fit in the",
         mk_too_many_kv),
    GGUF("too-many-tensors.gguf", GGFIT_EFORMAT, "1000000 tensors cannot fit in the",
         mk_too_many_tensors),
    GGUF("key-past-eof.gguf", GGFIT_EFORMAT, "key of 1000 bytes is longer than the",
         mk_key_past_eof),
    GGUF("string-past-eof.gguf", GGFIT_EFORMAT, "string value of 1000 bytes is longer than the",
         mk_string_past_eof),
    GGUF("tokens-past-eof.gguf", GGFIT_EFORMAT,
         "string value of 1048576 bytes is longer than the 100 bytes left in the file (at "
         "offset 153114)", mk_tokens_past_eof),
    GGUF("empty-key.gguf", GGFIT_EFORMAT,
         "key 1 is empty, longer than 65535 bytes or holds a NUL byte", mk_empty_key),
    GGUF("key-with-nul.gguf", GGFIT_EFORMAT,
         "key 0 is empty, longer than 65535 bytes or holds a NUL byte", mk_key_with_nul),
    GGUF("array-count-overflow.gguf", GGFIT_EFORMAT,
         "key 'tokenizer.ggml.token_type' declares an array of 4611686018427387904 uint32 "
         "elements", mk_array_count_overflow),
    GGUF("array-past-eof.gguf", GGFIT_EFORMAT,
         "key 'tokenizer.ggml.token_type' declares an array of 1000 uint8 elements",
         mk_array_past_eof),
    GGUF("array-too-deep.gguf", GGFIT_ELIMIT,
         "key 'test.nested' nests arrays deeper than 8 levels", mk_array_too_deep),
    GGUF("unknown-value-type.gguf", GGFIT_EFORMAT,
         "key 'general.name' has unknown value type 13", mk_unknown_value_type),
    GGUF("unknown-array-type.gguf", GGFIT_EFORMAT,
         "key 'tokenizer.ggml.tokens' has unknown array element type 99", mk_unknown_array_type),
    GGUF("duplicate-key.gguf", GGFIT_EFORMAT, "duplicate key 'general.name'", mk_duplicate_key),
    GGUF("alignment-not-pow2.gguf", GGFIT_EFORMAT, "general.alignment 48 is not a power of two",
         mk_alignment_not_pow2),
    GGUF("alignment-zero.gguf", GGFIT_EFORMAT, "general.alignment 0 is not a power of two",
         mk_alignment_zero),
    GGUF("alignment-wrong-type.gguf", GGFIT_EFORMAT,
         "general.alignment must be a uint32, it is a uint64", mk_alignment_wrong_type),
    GGUF("split-bad-name.gguf", GGFIT_EFORMAT,
         "split.no 0 of split.count 3, but the name does not end in -00001-of-00003.gguf",
         mk_split_bad_name),
    GGUF("split-no-too-big.gguf", GGFIT_EFORMAT, "split.no 3 is not below split.count 3",
         mk_split_no_too_big),
    GGUF("split-count-string.gguf", GGFIT_EFORMAT,
         "key 'split.count' must be a non-negative integer, it is a string",
         mk_split_count_string),
    GGUF("tensor-name-past-eof.gguf", GGFIT_EFORMAT,
         "tensor name of 1000 bytes is longer than the", mk_tensor_name_past_eof),
    GGUF("tensor-name-64.gguf", GGFIT_EFORMAT,
         "tensor 1 has a name of 64 bytes; names must be 1 to 63 bytes", mk_tensor_name_64),
    GGUF("tensor-name-empty.gguf", GGFIT_EFORMAT, "tensor 0 has a name of 0 bytes",
         mk_tensor_name_empty),
    GGUF("duplicate-tensor.gguf", GGFIT_EFORMAT, "duplicate tensor name 'output.weight'",
         mk_duplicate_tensor),
    GGUF("tensor-5-dims.gguf", GGFIT_EFORMAT,
         "tensor 'blk.0.ffn_up_exps.weight' has 5 dimensions, ggml allows 4", mk_tensor_5_dims),
    GGUF("tensor-negative-dim.gguf", GGFIT_EFORMAT,
         "tensor 'token_embd.weight' has a negative dimension 1", mk_tensor_negative_dim),
    GGUF("tensor-elements-overflow.gguf", GGFIT_EFORMAT,
         "tensor 'token_embd.weight' has more elements than fit in 63 bits",
         mk_tensor_elements_overflow),
    GGUF("tensor-bytes-overflow.gguf", GGFIT_EFORMAT, "tensor 'token_embd.weight' is too large",
         mk_tensor_bytes_overflow),
    GGUF("tensor-end-overflow.gguf", GGFIT_EFORMAT,
         "tensor 'output_norm.weight' ends past 2^64 bytes", mk_tensor_end_overflow),
    GGUF("unknown-tensor-type.gguf", GGFIT_EUNSUPPORTED,
         "tensor 'output_norm.weight' has unknown ggml type 99", mk_unknown_tensor_type),
    GGUF("removed-tensor-type.gguf", GGFIT_EUNSUPPORTED,
         "tensor 'blk.0.attn_q.weight' has type 31 (Q4_0_4_4), which ggml removed",
         mk_removed_tensor_type),
    GGUF("reserved-tensor-type.gguf", GGFIT_EUNSUPPORTED,
         "tensor 'blk.0.attn_q.weight' has unknown ggml type 50", mk_reserved_tensor_type),
    GGUF("iq1-xs-row-not-block-multiple.gguf", GGFIT_EFORMAT,
         "tensor 'blk.0.attn_q.weight' has rows of 128 elements, not a multiple of IQ1_XS's "
         "block of 256", mk_iq1_xs_row_not_block_multiple),
    GGUF("row-not-block-multiple.gguf", GGFIT_EFORMAT,
         "tensor 'blk.0.attn_q.weight' has rows of 100 elements, not a multiple of Q4_K's "
         "block of 256", mk_row_not_block_multiple),
    GGUF("misaligned-offset.gguf", GGFIT_EFORMAT,
         "tensor 'token_embd.weight' has data offset 16, not a multiple of the alignment 32",
         mk_misaligned_offset),
    GGUF("overlapping-tensors.gguf", GGFIT_EFORMAT,
         "tensor 'token_embd.weight' (data 0..2560) overlaps tensor 'output_norm.weight' "
         "(data from 2048)", mk_overlapping_tensors),
    MODEL("no-architecture.gguf", GGFIT_EFORMAT, "key 'general.architecture' is missing",
          mk_no_architecture),
    MODEL("architecture-not-string.gguf", GGFIT_EFORMAT,
          "key 'general.architecture' must be a string, it is a uint32",
          mk_architecture_not_string),
    MODEL("architecture-empty.gguf", GGFIT_EFORMAT,
          "key 'general.architecture' must be 1 to 63 bytes without NUL", mk_architecture_empty),
    MODEL("no-block-count.gguf", GGFIT_EFORMAT, "key 'llama.block_count' is missing",
          mk_no_block_count),
    MODEL("block-count-negative.gguf", GGFIT_EFORMAT,
          "key 'llama.block_count' has type int32; llama.cpp reads it as a uint32",
          mk_block_count_negative),
    MODEL("block-count-over-limit.gguf", GGFIT_ELIMIT,
          "llama.block_count is 100000; llama.cpp loads 1 to 512 blocks (LLAMA_MAX_LAYERS)",
          mk_block_count_over_limit),
    MODEL("head-count-kv-length.gguf", GGFIT_EFORMAT,
          "key 'llama.attention.head_count_kv' is an array of 3 uint32, expected 4 integers",
          mk_head_count_kv_length),
    MODEL("block-count-zero.gguf", GGFIT_ELIMIT,
          "llama.block_count is 0; llama.cpp loads 1 to 512 blocks", mk_block_count_zero),
    MODEL("no-context-length.gguf", GGFIT_EFORMAT,
          "key 'llama.context_length' is missing; llama.cpp refuses the file",
          mk_no_context_length),
    MODEL("head-count-float-array.gguf", GGFIT_EFORMAT,
          "key 'llama.attention.head_count' is an array of 2 float32, expected 2 integers",
          mk_head_count_float_array),
    MODEL("tensor-block-out-of-range.gguf", GGFIT_EFORMAT,
          "tensor 'blk.2.attn_q.weight' belongs to block 2 but llama.block_count is 2",
          mk_tensor_block_out_of_range),
    MODEL("nextn-over-block-count.gguf", GGFIT_EFORMAT,
          "llama.nextn_predict_layers is 3, more than the 2 blocks", mk_nextn_over_block_count),
    PROJECT("heads-not-grouped.gguf", GGFIT_EFORMAT,
            "llama.attention.head_count is 6 in layer 0, not a multiple of "
            "llama.attention.head_count_kv (4)", mk_heads_not_grouped),
    PROJECT("experts-used-over-count.gguf", GGFIT_EFORMAT,
            "llama.expert_used_count is 9, more than the 8 experts", mk_experts_used_over_count),
    PROJECT("expert-groups-uneven.gguf", GGFIT_EFORMAT,
            "llama.expert_count is 8, not a multiple of llama.expert_group_count (3)",
            mk_expert_groups_uneven),
    PROJECT("wkv-head-size-zero.gguf", GGFIT_EFORMAT, "rwkv7.wkv.head_size is 0: the time mix",
            mk_wkv_head_size_zero),
    PROJECT("embd-not-heads.gguf", GGFIT_EFORMAT,
            "rwkv6.embedding_length is 100, not a multiple of rwkv6.wkv.head_size (64)",
            mk_embd_not_heads),
    PROJECT("count-not-whole.gguf", GGFIT_EFORMAT,
            "ernie4_5-moe.interleave_moe_layer_step is 1.5, not a whole number from 1 to",
            mk_count_not_whole),
    PROJECT("size-over-limit.gguf", GGFIT_ELIMIT,
            "llama.embedding_length is 2097152, more than ggfit's limit of 1048576",
            mk_size_over_limit),
    FOUND("crash-minimax-m3.gguf", GGFIT_EFORMAT,
          "minimax-m3.attention.head_count is 0 in layer 0, which has 2 KV heads", "project"),
    FOUND("crash-rwkv6.gguf", GGFIT_EFORMAT,
          "key 'rwkv6.embedding_length' is missing; llama.cpp refuses the file", "model"),
    FOUND("crash-rwkv7.gguf", GGFIT_EFORMAT,
          "key 'rwkv7.embedding_length' is missing; llama.cpp refuses the file", "model"),
    /* an hour-long fuzz run: kv_lora_rank and the rope width renamed
     * away, which made the MLA cache's K head 0 wide; llama.cpp's loader
     * requires the rank */
    FOUND("crash-glm-dsa.gguf", GGFIT_EFORMAT,
          "key not found in model: glm-dsa.attention.kv_lora_rank (llama.cpp refuses the file)",
          "project"),
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkmalformed DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/expected.tsv", argv[1]);
    FILE *tsv = fopen(path, "w");
    if (!tsv) {
        perror(path);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; i < sizeof catalogue / sizeof catalogue[0]; i++) {
        const entry *e = &catalogue[i];
        gw w = {0};
        snprintf(path, sizeof path, "%s/%s", argv[1], e->file);
        if (e->make) {
            e->make(&w);
            if (gw_write_file(&w, path) != 0) {
                perror(path);
                rc = 1;
            }
        }
        gw_free(&w);
        fprintf(tsv, "%s\t%s\t%s\t%s\n", e->file, status_name(e->status), e->substring,
                e->function);
    }
    if (fclose(tsv) != 0) {
        perror("expected.tsv");
        rc = 1;
    }
    return rc;
}
