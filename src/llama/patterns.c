/*
 * patterns.c - the FFN patterns' table, and which of them a tensor name
 * matches, worked out without a regex engine.
 */
#include <string.h>

#include "llama/patterns.h"

const char *const ggfit__ffn_tail[GGFIT_FFN_KIND_COUNT] = {
    [GGFIT_FFN_ALL] = "ffn_(gate|up|gate_up|down).*",
    [GGFIT_FFN_NOT_UP] = "ffn_(gate|gate_up|down).*",
    [GGFIT_FFN_DOWN] = "ffn_down.*",
    [GGFIT_FFN_EXPERTS] = "ffn_(up|down|gate_up|gate)_(ch|)exps",
};

/* The FFN kinds (bit k: kind k) that rest, a block tensor's name after
 * "blk.N.", is one of, in one pass: "ffn_gate", "ffn_up" or "ffn_down"
 * prefixes for the first three, "ffn_(up|down|gate_up|gate)_" then "exps"
 * or "chexps" for the experts. */
unsigned ggfit__ffn_kinds(const char *rest)
{
    if (strncmp(rest, "ffn_", 4) != 0)
        return 0;
    const char *p = rest + 4, *tail[2] = { NULL, NULL };
    unsigned k = 0;
    if (!strncmp(p, "gate", 4)) {
        k = 1u << GGFIT_FFN_ALL | 1u << GGFIT_FFN_NOT_UP;
        if (p[4] == '_') {
            tail[0] = p + 5;                   /* "ffn_gate_" */
            if (!strncmp(p + 5, "up_", 3))
                tail[1] = p + 8;               /* "ffn_gate_up_" */
        }
    } else if (!strncmp(p, "up", 2)) {
        k = 1u << GGFIT_FFN_ALL;
        if (p[2] == '_')
            tail[0] = p + 3;                   /* "ffn_up_" */
    } else if (!strncmp(p, "down", 4)) {
        k = 1u << GGFIT_FFN_ALL | 1u << GGFIT_FFN_NOT_UP | 1u << GGFIT_FFN_DOWN;
        if (p[4] == '_')
            tail[0] = p + 5;                   /* "ffn_down_" */
    }
    for (int i = 0; i < 2; i++)
        if (tail[i] && (!strncmp(tail[i], "exps", 4) || !strncmp(tail[i], "chexps", 6)))
            k |= 1u << GGFIT_FFN_EXPERTS;
    return k;
}

