/*
 * test_util.h - shared bits of the cmocka tests.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ggfit.h"

/* Directory of the shipped model layouts (GGFIT_MODELS, default data/models). */
static inline const char *models_dir(void)
{
    const char *d = getenv("GGFIT_MODELS");
    return d && *d ? d : "data/models";
}

static inline void model_path(char *buf, size_t n, const char *file)
{
    snprintf(buf, n, "%s/%s", models_dir(), file);
}

/* A fresh temporary directory for files a test writes. */
static inline const char *tmp_dir(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/ggfit-test-XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    return dir;
}

#endif
