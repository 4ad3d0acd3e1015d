/*
 * override.h - the rules of -ot, -cmoe and -ncmoe (override.c;
 * tensor_buft_overrides), into pr->rules for weights.c; ggfit__proj_free
 * releases them.
 */
#ifndef GGFIT_PROJECT_OVERRIDE_H
#define GGFIT_PROJECT_OVERRIDE_H

#include "project/proj.h"

ggfit_status ggfit__setup_overrides(proj *pr);

#endif
