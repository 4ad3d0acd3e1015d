/*
 * open.c - a model opened as llama_model_load opens it: the description
 * (llama/model.c) with the facts its architecture's row gives at load
 * time (models/registry.c), which the description, below the rows, cannot
 * look up itself.
 */
#include "base/base.h"
#include "llama/arch.h"
#include "llama/model.h"

ggfit_status ggfit_model_from_gguf(ggfit_gguf *g, ggfit_model **out, char **err)
{
    return ggfit__model_load(g, ggfit__arch, out, err);
}

ggfit_status ggfit_model_open(const char *path, ggfit_model **out, char **err)
{
    ggfit_gguf *g;
    if (out)
        *out = NULL;
    ggfit_status rc = ggfit_gguf_open(path, &g, err);
    if (rc)
        return rc;
    return ggfit_model_from_gguf(g, out, err);
}
