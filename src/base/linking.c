/*
 * linking.c - whether this program can load shared libraries.
 *
 * The ggfit CLI is linked statically where the toolchain can (Makefile):
 * the dynamic loader and the shared C library cost every run about half a
 * millisecond of its five. In such a program glibc's dlopen works only in
 * part: a library it loads brings a second C library of its own beside the
 * one linked in, and a thread started from that one crashes (libcurl's
 * resolver starts one), as do its exit handlers at dlclose (GnuTLS's). So
 * the places that would load a shared library (libcurl for a URL, NVML for
 * NVIDIA GPUs, the C library's resolver, through NSS, for an rpc-server's
 * host name) ask here first and refuse with GGFIT_ESTATIC, a message rather
 * than a crash; the CLI then runs its dynamically linked build,
 * ggfit-dynamic, in its place.
 */
#define _GNU_SOURCE   /* dl_iterate_phdr */
#include <stdbool.h>
#include <string.h>

#if defined(__GLIBC__)
#include <link.h>
#endif

#include "base/base.h"

#if defined(__GLIBC__)
/* dl_iterate_phdr lists the objects loaded: a dynamically linked program
 * has the shared C library among them (started directly by the loader,
 * too, where AT_BASE would say static); a static one only itself and the
 * kernel's vDSO. */
static int is_libc(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    return info->dlpi_name && strstr(info->dlpi_name, "/libc.so") != NULL;
}
#endif

bool ggfit__static_program(void)
{
#if defined(__GLIBC__)
    return dl_iterate_phdr(is_libc, NULL) == 0;
#else
    return false;   /* elsewhere dlopen fails cleanly when it cannot load */
#endif
}
