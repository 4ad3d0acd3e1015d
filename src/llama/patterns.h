/*
 * patterns.h - the tensor-name patterns llama.cpp writes for FFN tensors:
 * the fit's overrides (common/fit.cpp, set_ngl_tensor_split_tbo) and
 * -cmoe / -ncmoe (common/common.h: LLM_FFN_EXPS_REGEX,
 * llm_ffn_exps_block_regex). One table, so that what the fit writes and
 * what the projection recognises cannot drift apart. It lives below the
 * fit because the projection matches these patterns without a regex engine
 * (project/override.c), and the model's tensor facts record which of them
 * each block tensor is (llama/model.c).
 */
#ifndef GGFIT_PATTERNS_H
#define GGFIT_PATTERNS_H

/* Which FFN tensors of a block a pattern selects, in the order of
 * common_layer_fraction_t: everything but attention, all but up, down only,
 * the experts. */
typedef enum ggfit_ffn_kind {
    GGFIT_FFN_ALL,
    GGFIT_FFN_NOT_UP,
    GGFIT_FFN_DOWN,
    GGFIT_FFN_EXPERTS,
    GGFIT_FFN_KIND_COUNT
} ggfit_ffn_kind;

/* The fit's pattern for kind k after the block prefix "blk\.N\.". */
extern const char *const ggfit__ffn_tail[GGFIT_FFN_KIND_COUNT];

/* -cmoe's pattern, every block's experts; -ncmoe N writes it after
 * "blk\.<il>" for each block below N. */
#define GGFIT_FFN_EXPS_REGEX "\\.ffn_(up|down|gate|gate_up)_(ch|)exps"

/* The FFN kinds (bit k: kind k) whose fit pattern selects a block tensor
 * whose name after "blk.N." is rest. */
unsigned ggfit__ffn_kinds(const char *rest);

#endif
