/*
 * remote.h - reading models that are not on this machine: HTTP(S) with
 * libcurl (http.c) and Hugging Face's repositories (hf.c). Not installed.
 */
#ifndef GGFIT_REMOTE_H
#define GGFIT_REMOTE_H

#include "ggfit_app.h"

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

/* The model files of a resolved repo (m->files), split models once (their
 * first shard), in the repo's order, only those whose path holds tag when
 * tag is not "": at most max pointers into m->files in out, each one's
 * shard count in shards and its quant (upper case, from the name; "" when
 * none) in tags[i] (64 bytes each). Returns how many. */
size_t ggfit__hf_model_files(const ggfit_hf_model *m, const char *tag, const char **out,
                             uint32_t *shards, char (*tags)[64], size_t max);

/* The quant a file's name holds ("Q4_K_M" from a/b-Q4_K_M-00001-of-00002.gguf;
 * "" when none), upper case, into tag (64 bytes). */
void ggfit__quant_tag(const char *path, char tag[64]);

/* Whether llama.cpp loads the mmproj -hf found (mmproj, "" when none) as
 * well: llama-server and llama-cli do (not llama-fit-params nor
 * llama-bench), unless --no-mmproj or --mmproj says otherwise. */
bool ggfit__mmproj_auto(const ggfit_request *r, const char *mmproj);

/* Whether -hf found an mmproj that --no-mmproj (--no-mmproj-auto) leaves
 * out of a llama-server plan: the printed line must say so, or
 * llama-server loads it. */
bool ggfit__mmproj_declined(const ggfit_request *r, const char *mmproj);

/* --for server: the header of the mmproj -hf found, over HTTP (the repo
 * resolved again for its address). */
ggfit_status ggfit__request_mmproj(const ggfit_request *r, ggfit_gguf **out, char **err);

#endif
