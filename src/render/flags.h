/*
 * flags.h - llama.cpp's command-line flags rendered from a plan.
 */
#ifndef GGFIT_FLAGS_H
#define GGFIT_FLAGS_H

#include "base/base.h"

/* Appends "--rpc host:port,... " for the RPC devices that came from
 * ggfit_rpc_query (an endpoint set), each server once, in device order;
 * nothing when there are none (rpc.c). */
void ggfit__rpc_args(ggfit_sb *sb, const ggfit_device *devs, size_t n);

#endif
