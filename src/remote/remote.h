/*
 * remote.h - reading models that are not on this machine: HTTP(S) with
 * libcurl (http.c) and Hugging Face's repositories (hf.c). Not installed.
 */
#ifndef GGFIT_REMOTE_H
#define GGFIT_REMOTE_H

#include "ggfit.h"

/* The body of a GET of url (a Hugging Face API reply), at most max bytes,
 * NUL-terminated; the caller frees *body; *code the HTTP status (0 when
 * no reply came). The HTTP errors are ggfit's
 * messages (401: gated, set HF_TOKEN; 404; 429). */
ggfit_status ggfit__http_get(const char *url, const ggfit_remote_options *o, size_t max,
                             char **body, size_t *len, long *code, ggfit_remote_stats *stats,
                             char **err);

/* The cache (o->cache_dir): an entry for url, its ETag ("" when none) and
 * the file's size; *bytes (n of them) the caller frees. false when there
 * is none (or no cache). */
bool ggfit__cache_load(const ggfit_remote_options *o, const char *url, char *etag,
                       size_t etag_n, uint64_t *size, unsigned char **bytes, size_t *n);
/* Stores an entry, replacing url's; a failure only loses the entry. */
void ggfit__cache_store(const ggfit_remote_options *o, const char *url, const char *etag,
                        uint64_t size, const void *bytes, size_t n);

/* Whether a token is one Hugging Face issues (hf_ and 34 or more letters
 * and digits): llama.cpp sends no other. */
bool ggfit__hf_token_valid(const char *token);

/* request.c's model: -hf, -mu or an -m URL read over HTTP, else the file;
 * for -hf, mmproj (n bytes) the repo's mmproj that llama.cpp would load
 * too ("" when none). */
ggfit_status ggfit__request_model(const ggfit_request *r, ggfit_model **out, char *mmproj,
                                  size_t n, char **err);

/* Appends to notes (a plan's) that llama-server and llama-cli load the
 * mmproj -hf found as well (not llama-fit-params nor llama-bench), unless
 * --no-mmproj or --mmproj says otherwise. */
void ggfit__mmproj_note(const ggfit_request *r, const char *mmproj, char *notes, size_t n);

#endif
