/*
 * arch_keys.h - stage 1 of a projection (arch_keys.c): what llama.cpp's
 * load_arch_hparams refuses, before anything else is read: the keys it
 * requires, the fixed arrays of the row's arr_keys, the sliding-window
 * pattern in the form the architecture reads it.
 */
#ifndef GGFIT_PROJECT_ARCH_KEYS_H
#define GGFIT_PROJECT_ARCH_KEYS_H

#include "project/proj.h"

ggfit_status ggfit__check_arch_keys(const proj *pr);

#endif
