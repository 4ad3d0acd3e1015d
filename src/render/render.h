/*
 * render.h - pieces of the plan's renderers (plan.c) that other renderers
 * show the same way: ggfit bench's verdict is the plan's, in the plan's
 * words (speed/bench_render.c). Not installed.
 */
#ifndef GGFIT_RENDER_H
#define GGFIT_RENDER_H

#include <jansson.h>

#include "base/base.h"

/* The whole machine's table, the notes under it and the verdict line. */
void ggfit__verdict_text(ggfit_sb *sb, const ggfit_verdict *v, const ggfit_plan *pl);

/* "nearest changes that fit ...", or why none is given, where the plan
 * does not fit (nothing where it does). */
void ggfit__changes_text(ggfit_sb *sb, const ggfit_plan *pl);

/* The verdict on the flags the plan prints: its alternative's where
 * llama.cpp's fit left the host short and a smaller context fits. */
const ggfit_verdict *ggfit__plan_verdict(const ggfit_plan *pl);

/* Whose speed the plan carries: "plan", "flags_as_given" or
 * "llama_cpp_fit" (plan.c says when each). */
const char *ggfit__speed_whose(const ggfit_plan *pl);

/* Bytes in MiB, as the renderers print them. */
static inline double ggfit__mib(uint64_t b)
{
    return (double)b / GGFIT_MiB;
}

/* The verdict as JSON ({"status", "summary", "short", "pools": [...], ...});
 * NULL when out of memory. */
json_t *ggfit__verdict_json(const ggfit_verdict *v);
/* What ggfit_projection_json, ggfit_fit_json and ggfit_plan_json print,
 * as trees (NULL when out of memory) for the renderers that put them in
 * their own; ggfit__json_text prints one as they do, and frees it. */
json_t *ggfit__projection_tree(const ggfit_projection *pr, const ggfit_device *devs);
json_t *ggfit__fit_tree(const ggfit_fit_result *r, const ggfit_device *devs, size_t n);
json_t *ggfit__plan_tree(const ggfit_plan *pl);

/* A document as a public *_json function prints it (docs/json.md): the
 * tree's fields after "json_version" (GGFIT_JSON_VERSION) and "kind", any
 * of its own by those names left out (the router's "kind" is its own:
 * pass it as kind), printed with flags; the tree freed, NULL when it is
 * NULL or out of memory. Only a whole document gets the two fields: a tree
 * another document holds (a plan in a router's child, a batch line's)
 * stays bare. */
char *ggfit__json_doc(json_t *root, const char *kind, size_t flags);
/* The flags every indented document is printed with. */
#define GGFIT__JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)
/* A document's text (a public *_json function's) as a tree to hold in
 * another: parsed, without its "json_version" and "kind"; the text freed
 * with ggfit_free(). NULL when it is NULL or out of memory. */
json_t *ggfit__json_body(char *text);

/* The llama.cpp a plan answers for ({"build", "commit", "date", "semver",
 * "rules", "match", "exact", "text"}); NULL when out of memory. */
json_t *ggfit__llama_json(const ggfit_llama_version *v);

/* Text as a JSON array of its lines (the notes); NULL when out of memory. */
json_t *ggfit__json_lines(const char *text);

/* ggfit_plan_command with the model's words given, a NULL-ended list
 * ("-m", FILE or "-hf", REPO, "-hff", FILE): the quant table's best. */
char *ggfit__plan_command_model(const ggfit_plan *pl, const char *const *model);

/* The columns text fits now: GGFIT_TEXT_COLS, or 0 with no limit (--wide:
 * ggfit_text_set_columns(0)); a table leaves out the columns that do not fit
 * in it and says so, or keeps them all at 0. */
unsigned ggfit__text_cols(void);

/* The builder's text with every line longer than ggfit__text_cols() broken at
 * spaces, the rest indented two past the line's own indent; the builder is
 * empty again. The caller frees the text with ggfit_free(); NULL when out of
 * memory (or the builder is). Every text renderer returns its text so. */
char *ggfit__text_take(ggfit_sb *sb);

#endif
