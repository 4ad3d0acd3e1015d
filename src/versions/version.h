/*
 * version.h - which llama.cpp the rules follow: the supported versions,
 * the upstream commits ggfit knows, and the changes between versions
 * (changes.def), each asked by name.
 */
#ifndef GGFIT_VERSION_H
#define GGFIT_VERSION_H

#include "ggfit.h"

typedef enum ggfit__llama_change {
    LLAMA_CHANGE_NONE,       /* in every supported version */
#define LLAMA_CHANGE(name, build, commit, what) LLAMA_CHANGE_##name,
#include "versions/changes.def"
#undef LLAMA_CHANGE
    LLAMA_CHANGE_COUNT
} ggfit__llama_change;

typedef struct ggfit__change_row {
    const char *name;
    uint32_t build;          /* the first upstream build that has it */
    const char *commit;      /* upstream's short hash */
    const char *what;
} ggfit__change_row;

extern const ggfit__change_row ggfit__llama_changes[LLAMA_CHANGE_COUNT];


/* The build whose rules answer: `build`, or the newest supported for 0. */
uint32_t ggfit__llama_rules(uint32_t build);

/* Whether llama.cpp at build (0: the newest supported) has change c. */
static inline bool ggfit__llama_has(uint32_t build, ggfit__llama_change c)
{
    return ggfit__llama_rules(build) >= ggfit__llama_changes[c].build;
}

/* The oldest and newest supported builds. */
uint32_t ggfit__llama_oldest(void);
uint32_t ggfit__llama_newest(void);

#endif
