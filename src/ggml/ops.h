/*
 * ops.h - ggml's tensor flags and ops, as the graph builders, the scheduler
 * and the allocator name them (ggml/include/ggml.h: enum ggml_op,
 * enum ggml_tensor_flag), and the two facts of an op the allocator asks.
 */
#ifndef GGFIT_OPS_H
#define GGFIT_OPS_H

#include <stdbool.h>

/* ggml tensor flags, with ggml's values. */
enum {
    GGFIT_TF_INPUT = 1,
    GGFIT_TF_OUTPUT = 2,
    GGFIT_TF_PARAM = 4,
    GGFIT_TF_LOSS = 8,
    GGFIT_TF_COMPUTE = 16,
};

/* ggml's ops, by ggml_op_name. The values are ggfit's own, not ggml's.
 * Unary ops (SILU, SIGMOID, ...) are all GGFIT_OP_UNARY and gated linear
 * units (SWIGLU, GEGLU, ...) all GGFIT_OP_GLU, as in ggml: the allocator
 * treats the two families differently (unary runs in place, GLU does not). */
typedef enum ggfit_op {
    GGFIT_OP_NONE,
    GGFIT_OP_DUP, GGFIT_OP_ADD, GGFIT_OP_ADD_ID, GGFIT_OP_ADD1, GGFIT_OP_ACC,
    GGFIT_OP_SUB, GGFIT_OP_MUL, GGFIT_OP_DIV, GGFIT_OP_SQR, GGFIT_OP_SQRT,
    GGFIT_OP_LOG, GGFIT_OP_SIN, GGFIT_OP_COS, GGFIT_OP_SUM, GGFIT_OP_SUM_ROWS,
    GGFIT_OP_CUMSUM, GGFIT_OP_MEAN, GGFIT_OP_ARGMAX, GGFIT_OP_COUNT_EQUAL,
    GGFIT_OP_REPEAT, GGFIT_OP_REPEAT_BACK, GGFIT_OP_CONCAT, GGFIT_OP_SILU_BACK,
    GGFIT_OP_NORM, GGFIT_OP_RMS_NORM, GGFIT_OP_RMS_NORM_BACK,
    GGFIT_OP_GROUP_NORM, GGFIT_OP_L2_NORM,
    GGFIT_OP_MUL_MAT, GGFIT_OP_MUL_MAT_ID, GGFIT_OP_OUT_PROD,
    GGFIT_OP_SCALE, GGFIT_OP_SET, GGFIT_OP_CPY, GGFIT_OP_CONT,
    GGFIT_OP_RESHAPE, GGFIT_OP_VIEW, GGFIT_OP_PERMUTE, GGFIT_OP_TRANSPOSE,
    GGFIT_OP_GET_ROWS, GGFIT_OP_GET_ROWS_BACK, GGFIT_OP_SET_ROWS,
    GGFIT_OP_DIAG, GGFIT_OP_DIAG_MASK_INF, GGFIT_OP_DIAG_MASK_ZERO,
    GGFIT_OP_SOFT_MAX, GGFIT_OP_SOFT_MAX_BACK, GGFIT_OP_ROPE,
    GGFIT_OP_ROPE_BACK, GGFIT_OP_CLAMP, GGFIT_OP_CONV_TRANSPOSE_1D,
    GGFIT_OP_IM2COL, GGFIT_OP_IM2COL_BACK, GGFIT_OP_IM2COL_3D,
    GGFIT_OP_COL2IM_1D, GGFIT_OP_CONV_2D, GGFIT_OP_CONV_3D,
    GGFIT_OP_CONV_2D_DW, GGFIT_OP_CONV_TRANSPOSE_2D, GGFIT_OP_POOL_1D,
    GGFIT_OP_POOL_2D, GGFIT_OP_POOL_2D_BACK, GGFIT_OP_UPSCALE, GGFIT_OP_PAD,
    GGFIT_OP_PAD_REFLECT_1D, GGFIT_OP_ROLL, GGFIT_OP_ARANGE,
    GGFIT_OP_TIMESTEP_EMBEDDING, GGFIT_OP_ARGSORT, GGFIT_OP_TOP_K,
    GGFIT_OP_LEAKY_RELU, GGFIT_OP_TRI, GGFIT_OP_FILL,
    GGFIT_OP_FLASH_ATTN_EXT, GGFIT_OP_FLASH_ATTN_BACK, GGFIT_OP_SSM_CONV,
    GGFIT_OP_SSM_SCAN, GGFIT_OP_WIN_PART, GGFIT_OP_WIN_UNPART,
    GGFIT_OP_GET_REL_POS, GGFIT_OP_ADD_REL_POS, GGFIT_OP_RWKV_WKV6,
    GGFIT_OP_GATED_LINEAR_ATTN, GGFIT_OP_RWKV_WKV7, GGFIT_OP_SOLVE_TRI,
    GGFIT_OP_GATED_DELTA_NET, GGFIT_OP_LIGHTNING_INDEXER,
    GGFIT_OP_DSV4_HC_COMB, GGFIT_OP_DSV4_HC_PRE, GGFIT_OP_DSV4_HC_POST,
    GGFIT_OP_UNARY,
    GGFIT_OP_MAP_CUSTOM1, GGFIT_OP_MAP_CUSTOM2, GGFIT_OP_MAP_CUSTOM3,
    GGFIT_OP_CUSTOM,
    GGFIT_OP_CROSS_ENTROPY_LOSS, GGFIT_OP_CROSS_ENTROPY_LOSS_BACK,
    GGFIT_OP_OPT_STEP_ADAMW, GGFIT_OP_OPT_STEP_SGD,
    GGFIT_OP_GLU,
    GGFIT_OP_COUNT
} ggfit_op;

/* True when ggml-alloc lets a node of this op take over a source's memory
 * (ggml_op_can_inplace); false for out-of-range values. */
bool ggfit__op_can_inplace(int op);

/* True for the ops whose result is always a view of src[0]'s memory
 * (RESHAPE, VIEW, PERMUTE, TRANSPOSE): a graph builder sets view_src for
 * them. Other ops may return views too (SET_ROWS, the in-place variants);
 * the allocator only looks at view_src. */
bool ggfit__op_is_view(int op);

#endif
