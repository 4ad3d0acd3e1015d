/*
 * split.h - the layers' devices (split.c; llama_model::load_tensors): -sm,
 * -mg, -ts and -ngl into pr's devices, the offloaded layers and the device
 * of each (pr->dev_of), and the first device's pinned host buffer type.
 */
#ifndef GGFIT_PROJECT_SPLIT_H
#define GGFIT_PROJECT_SPLIT_H

#include "project/proj.h"

ggfit_status ggfit__setup_devices(proj *pr, const ggfit_device *devs, size_t n);

#endif
