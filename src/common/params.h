/*
 * params.h - helpers on llama.cpp's flags (ggfit_params), internal; their
 * defaults and copies are llama/params_default.h's.
 */
#ifndef GGFIT_COMMON_PARAMS_H
#define GGFIT_COMMON_PARAMS_H

#include "ggfit_app.h"
#include "llama/params_default.h"

/* Whether the program runs llama-server's code, and so its fit and what it
 * loads beside the model: llama-server, and llama-cli, which in b10309
 * starts llama_server in its own process with its own flags (tools/cli/
 * cli-server.h; -np 1 by default, not auto). */
static inline bool ggfit__serves(ggfit_program p)
{
    return p == GGFIT_FOR_SERVER || p == GGFIT_FOR_CLI || p == GGFIT_FOR_DEFAULT;
}

#endif
