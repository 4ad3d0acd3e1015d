/*
 * status.c - status names, caller-owned error messages, ggfit_free() and the
 * library's version.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static const char *const status_names[] = {
    "ok",
    "i/o error",
    "format error",
    "unsupported",
    "out of memory",
    "invalid argument",
    "limit exceeded",
    "needs a dynamically linked program",
};
_Static_assert(sizeof status_names / sizeof status_names[0] == GGFIT_STATUS_COUNT,
               "status_names must match ggfit_status");

const char *ggfit_status_str(int status)
{
    if (status < 0 || status >= GGFIT_STATUS_COUNT)
        return "unknown status";
    return status_names[status];
}

const char *ggfit_version(void)
{
    return GGFIT_VERSION;
}

int ggfit_version_number(void)
{
    return GGFIT_VERSION_NUMBER;
}

int ggfit_abi_version(void)
{
    return GGFIT_ABI_VERSION;
}

void ggfit_free(void *p)
{
    free(p);
}

ggfit_status ggfit__fail(char **err, ggfit_status status, const char *fmt, ...)
{
    if (err) {
        /* Messages are built with plain malloc: reporting an injected
         * allocation failure must not itself fail. */
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        *err = malloc(strlen(buf) + 1);
        if (*err)
            strcpy(*err, buf);
    }
    return status;
}
