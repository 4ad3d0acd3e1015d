/*
 * spec.h - sizes as the command line gives them (devices/spec.c).
 */
#ifndef GGFIT_DEVICES_SPEC_H
#define GGFIT_DEVICES_SPEC_H

#include "base/base.h"

/* Whether every size of value v (TOTAL[/FREE], each part a size) of ggfit's
 * flag flag (--host-mem) has a unit; GGFIT_EINVAL with the fix in *err
 * when one is a bare number ("--host-mem 32: give a unit: 32GiB"). */
ggfit_status ggfit__sizes_have_units(const char *flag, const char *v, char **err);

#endif
