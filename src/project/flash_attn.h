/*
 * flash_attn.h - -fa auto (flash_attn.c; llama_context::resolve_fused_ops):
 * flash attention kept, or turned off in pr->out where a probe graph puts
 * an attention node off its layer's device.
 */
#ifndef GGFIT_PROJECT_FLASH_ATTN_H
#define GGFIT_PROJECT_FLASH_ATTN_H

#include "project/proj.h"

ggfit_status ggfit__resolve_flash_attn(proj *pr, const int32_t *placement);

#endif
