/*
 * swap.c - llama-swap's configuration file (swap.h), read as llama-swap
 * v250-5-g0bdb3720 reads it (internal/config/load.go LoadConfigFromReader,
 * macros.go, commands.go, config.go; gopkg.in/yaml.v3 v3.0.1 for the YAML
 * rules libyaml leaves out: merge keys, duplicate keys, plain scalars'
 * types; golib shlex's POSIX dialect for the words of a command).
 *
 * The document is kept as a graph: an alias points at the node it names
 * (llama-swap copies it; nothing here changes a node in place, so sharing is
 * a copy), and what a macro changes is a new node. Every node carries its
 * weight as the aliases would expand it, so that each walk over the graph
 * costs at most WEIGHT_MAX, whatever the aliases multiply.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "common/swap.h"

#define FILE_MAX ((size_t)8 << 20)        /* bytes of a config file */
#define DEPTH_MAX 1000                    /* collections nested (yaml.v3: 10000) */
#define NODE_WEIGHT 64                    /* a node's weight; a scalar adds its bytes */
#define WEIGHT_MAX ((uint64_t)64 << 20)   /* the document as aliases expand it */
#define EXPAND_MAX ((uint64_t)32 << 20)   /* bytes made by macro substitution, in all */
#define VALUE_MAX ((size_t)1 << 20)       /* bytes of one value after substitution */
#define MACROS_MAX 1000                   /* macros of one scope */
#define SCOPES_MAX (1 << 20)              /* macros over all models' scopes */
#define NAMES_MAX 4096                    /* aliases in all; group members in all */
#define ARENA_MAX ((size_t)256 << 20)     /* everything the reader allocates */
#define BLOCK_MIN ((size_t)64 << 10)

/* ---- arena ---------------------------------------------------------------- */

typedef struct block {
    struct block *next;
    size_t used, cap;
} block;

typedef struct arena {
    block *head;
    size_t total;
} arena;

#define BLOCK_HEAD GGFIT_PAD(sizeof(block), 16)

static void arena_free(arena *a)
{
    if (!a)
        return;
    for (block *b = a->head, *next; b; b = next) {
        next = b->next;
        ggfit_free(b);
    }
    ggfit_free(a);
}

/* ---- the reader's state and its one error ----------------------------------- */

typedef struct rd {
    arena *a;
    ggfit_status status;     /* the first failure; later ones are dropped */
    char *err;
    uint64_t expanded;       /* bytes made by macros so far */
} rd;

static bool failv(rd *r, ggfit_status st, const char *fmt, va_list ap) GGFIT_PRINTF(3, 0);
static bool failv(rd *r, ggfit_status st, const char *fmt, va_list ap)
{
    if (r->status != GGFIT_OK)
        return false;
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    r->status = st;
    ggfit__fail(&r->err, st, "%s", buf);
    return false;
}

/* Records the error (when it is the first) and returns false. */
static bool fail(rd *r, ggfit_status st, const char *fmt, ...) GGFIT_PRINTF(3, 4);
static bool fail(rd *r, ggfit_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    failv(r, st, fmt, ap);
    va_end(ap);
    return false;
}

static void *alloc(rd *r, size_t n)
{
    arena *a = r->a;
    n = GGFIT_PAD(n ? n : 1, 16);
    block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > BLOCK_MIN ? n : BLOCK_MIN;
        if (a->total + cap > ARENA_MAX) {
            fail(r, GGFIT_ELIMIT, "the configuration needs more than %zu MiB to read (ggfit's "
                 "limit): aliases or macros expand too far", ARENA_MAX >> 20);
            return NULL;
        }
        b = ggfit__malloc(BLOCK_HEAD + cap);
        if (!b) {
            fail(r, GGFIT_ENOMEM, "out of memory");
            return NULL;
        }
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
        a->total += cap;
    }
    void *p = (char *)b + BLOCK_HEAD + b->used;
    b->used += n;
    return p;
}

static char *dup_n(rd *r, const char *s, size_t n)
{
    char *d = alloc(r, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static char *dup_s(rd *r, const char *s)
{
    return dup_n(r, s, strlen(s));
}

/* memmem, which C11 and POSIX lack */
static const char *find(const char *s, size_t len, const char *what, size_t n)
{
    for (const char *p = s, *end = s + len; n <= (size_t)(end - p) &&
                                            (p = memchr(p, what[0], (size_t)(end - p) - n + 1));
         p++)
        if (!memcmp(p, what, n))
            return p;
    return NULL;
}

/* ---- the document's nodes ---------------------------------------------------- */

enum { N_SCALAR, N_MAP, N_SEQ };
/* a scalar's type as yaml.v3 resolves it: plain scalars by their text,
 * quoted and block ones always strings */
enum { T_NULL, T_BOOL, T_INT, T_UINT, T_FLOAT, T_STR, T_TIME };

typedef struct node {
    uint8_t kind, type;
    uint32_t line;           /* 1-based, where it starts in the file */
    uint32_t n;              /* children; a mapping's are key, value, key, value... */
    uint64_t weight;         /* as aliases expand it, saturating past WEIGHT_MAX */
    char *s;                 /* a scalar's text, NUL-terminated (a value made by a macro: its
                              * text as yaml.v3 would write it) */
    size_t len;
    int64_t i;               /* T_INT, T_BOOL (0/1) */
    uint64_t u;              /* T_UINT: past INT64_MAX */
    double f;                /* T_FLOAT */
    struct node **kid;
} node;

static uint64_t weight_add(uint64_t a, uint64_t b)
{
    return a + b > WEIGHT_MAX ? WEIGHT_MAX + 1 : a + b;
}

static node *node_new(rd *r, int kind, uint32_t line)
{
    node *nd = alloc(r, sizeof *nd);
    if (nd) {
        memset(nd, 0, sizeof *nd);
        nd->kind = (uint8_t)kind;
        nd->line = line;
        nd->weight = NODE_WEIGHT;
    }
    return nd;
}

static node *str_node(rd *r, const char *s, size_t len, uint32_t line)
{
    node *nd = node_new(r, N_SCALAR, line);
    if (nd && !(nd->s = dup_n(r, s, len)))
        return NULL;
    if (nd) {
        nd->type = T_STR;
        nd->len = len;
        nd->weight = weight_add(NODE_WEIGHT, len);
    }
    return nd;
}

static node *int_node(rd *r, int64_t v, uint32_t line)
{
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%lld", (long long)v);
    node *nd = str_node(r, buf, (size_t)len, line);
    if (nd) {
        nd->type = T_INT;
        nd->i = v;
    }
    return nd;
}

static bool key_is(const node *k, const char *name)
{
    return k->kind == N_SCALAR && k->len == strlen(name) && !memcmp(k->s, name, k->len);
}

/* The value of key name in mapping m (NULL when m is not a mapping or has no such key). */
static node *get(const node *m, const char *name)
{
    if (!m || m->kind != N_MAP)
        return NULL;
    for (uint32_t i = 0; i + 1 < m->n; i += 2)
        if (key_is(m->kid[i], name))
            return m->kid[i + 1];
    return NULL;
}

static bool is_null(const node *v)
{
    return !v || (v->kind == N_SCALAR && v->type == T_NULL);
}

static bool is_str(const node *v)
{
    return v && v->kind == N_SCALAR && v->type == T_STR;
}

/* ---- Go's formatting of values ---------------------------------------------- */

/* A float as Go's %v (strconv 'g', shortest) writes it; yaml: as yaml.v3's
 * encoder does (.inf, -.inf, .nan). */
static void go_float(double f, bool yaml, char *out, size_t n)
{
    if (isnan(f)) {
        snprintf(out, n, "%s", yaml ? ".nan" : "NaN");
        return;
    }
    if (isinf(f)) {
        snprintf(out, n, "%s", f > 0 ? (yaml ? ".inf" : "+Inf") : (yaml ? "-.inf" : "-Inf"));
        return;
    }
    if (f == 0) {
        snprintf(out, n, "%s", signbit(f) ? "-0" : "0");
        return;
    }
    char e[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, f);
        if (strtod(e, NULL) == f)
            break;
    }
    char digits[24];
    int nd = 0, exp = 0;
    const char *p = e;
    bool neg = *p == '-';
    if (neg)
        p++;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && nd < 20)
            digits[nd++] = *p;
    if (*p == 'e')
        exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    size_t at = 0;
    char buf[64];
    if (neg)
        buf[at++] = '-';
    if (exp < -4 || exp >= 6) {
        buf[at++] = digits[0];
        if (nd > 1) {
            buf[at++] = '.';
            memcpy(buf + at, digits + 1, (size_t)nd - 1);
            at += (size_t)nd - 1;
        }
        snprintf(buf + at, sizeof buf - at, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
    } else {
        int dp = exp + 1;              /* digits before the point */
        if (dp <= 0) {
            buf[at++] = '0';
            buf[at++] = '.';
            for (int i = 0; i < -dp; i++)
                buf[at++] = '0';
            memcpy(buf + at, digits, (size_t)nd);
            at += (size_t)nd;
        } else {
            for (int i = 0; i < dp || i < nd; i++) {
                if (i == dp)
                    buf[at++] = '.';
                buf[at++] = i < nd ? digits[i] : '0';
            }
        }
        buf[at] = '\0';
    }
    snprintf(out, n, "%s", buf);
}

/* A scalar's text as Go's %v prints the value yaml.v3 decoded. */
static const char *fmt_value(const node *v, char *buf, size_t n)
{
    switch (v->type) {
    case T_NULL:
        return "<nil>";
    case T_BOOL:
        return v->i ? "true" : "false";
    case T_INT:
        snprintf(buf, n, "%lld", (long long)v->i);
        return buf;
    case T_UINT:
        snprintf(buf, n, "%llu", (unsigned long long)v->u);
        return buf;
    case T_FLOAT:
        go_float(v->f, false, buf, n);
        return buf;
    default:
        return v->s;
    }
}

/* Go's %q of s, cut to its first 60 bytes. */
static const char *go_quote(const char *s, size_t len, char *buf, size_t n)
{
    size_t at = 0;
    buf[at++] = '"';
    for (size_t i = 0; i < len && i < 60 && at + 8 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            at += (size_t)snprintf(buf + at, n - at, "\\%c", c);
        else if (c == '\n')
            at += (size_t)snprintf(buf + at, n - at, "\\n");
        else if (c == '\t')
            at += (size_t)snprintf(buf + at, n - at, "\\t");
        else if (c < 0x20 || c == 0x7f)
            at += (size_t)snprintf(buf + at, n - at, "\\x%02x", c);
        else
            buf[at++] = (char)c;
    }
    snprintf(buf + at, n - at, "%s\"", len > 60 ? "..." : "");
    return buf;
}

/* ---- plain scalars' types (yaml.v3 resolve.go) -------------------------------- */

static bool text_in(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return true;
    return false;
}

/* Go's strconv.ParseInt(s, 0, 64) then ParseUint(s, 0, 64): a sign (int
 * only), then 0x, 0o, 0b or a leading 0 (octal), else decimal. */
static bool go_parse_int(const char *s, node *nd)
{
    bool neg = false, sign = false;
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        sign = true;
        s++;
    }
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        base = 8, s += 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, s += 2;
    else if (s[0] == '0' && s[1])
        base = 8, s += 1;
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        unsigned d = *s >= '0' && *s <= '9' ? (unsigned)(*s - '0')
                   : *s >= 'a' && *s <= 'f' ? (unsigned)(*s - 'a' + 10)
                   : *s >= 'A' && *s <= 'F' ? (unsigned)(*s - 'A' + 10) : 99;
        if (d >= base || v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX) {
        if (sign)
            return false;
        nd->type = T_UINT;
        nd->u = v;
        return true;
    }
    nd->type = T_INT;
    nd->i = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s)
{
    size_t i = 0, d = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    if (s[i] == '.') {
        for (i++; s[i] >= '0' && s[i] <= '9'; i++)
            d++;
        if (!d)
            return false;
    } else {
        for (; s[i] >= '0' && s[i] <= '9'; i++)
            d++;
        if (!d)
            return false;
        if (s[i] == '.')
            for (i++; s[i] >= '0' && s[i] <= '9'; i++) {}
    }
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        if (s[i] == '+' || s[i] == '-')
            i++;
        for (d = 0; s[i] >= '0' && s[i] <= '9'; i++)
            d++;
        if (!d)
            return false;
    }
    return !s[i];
}

/* YYYY-M-D alone, or followed by [Tt ] and a time: the forms yaml.v3 takes
 * as a timestamp (the time's own syntax not checked). */
static bool timestamp_like(const char *s)
{
    size_t i = 0;
    while (s[i] >= '0' && s[i] <= '9')
        i++;
    if (i != 4 || s[i] != '-')
        return false;
    for (int part = 0; part < 2; part++) {
        size_t d = 0;
        for (i++; s[i] >= '0' && s[i] <= '9'; i++)
            d++;
        if (d < 1 || d > 2 || (part == 0 && s[i] != '-'))
            return false;
    }
    return !s[i] || ((s[i] == 'T' || s[i] == 't' || s[i] == ' ') && strchr(s + i, ':'));
}

static void resolve_plain(node *nd)
{
    static const char *const nulls[] = { "", "~", "null", "Null", "NULL", NULL };
    static const char *const trues[] = { "true", "True", "TRUE", NULL };
    static const char *const falses[] = { "false", "False", "FALSE", NULL };
    static const char *const nans[] = { ".nan", ".NaN", ".NAN", NULL };
    static const char *const infs[] = { ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL };
    static const char *const ninfs[] = { "-.inf", "-.Inf", "-.INF", NULL };
    const char *s = nd->s;
    nd->type = T_STR;
    if (strlen(s) != nd->len)
        return;
    if (text_in(s, nulls))
        nd->type = T_NULL;
    else if (text_in(s, trues) || text_in(s, falses))
        nd->type = T_BOOL, nd->i = text_in(s, trues);
    else if (text_in(s, nans))
        nd->type = T_FLOAT, nd->f = NAN;
    else if (text_in(s, infs) || text_in(s, ninfs))
        nd->type = T_FLOAT, nd->f = text_in(s, infs) ? INFINITY : -INFINITY;
    else if (s[0] == '.') {
        if (yaml_style_float(s))
            nd->type = T_FLOAT, nd->f = strtod(s, NULL);
    } else if ((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '-') {
        if (timestamp_like(s)) {
            nd->type = T_TIME;
            return;
        }
        char plain[512];
        size_t n = 0;
        for (const char *c = s; *c && n + 1 < sizeof plain; c++)
            if (*c != '_')
                plain[n++] = *c;
        plain[n] = '\0';
        if (nd->len >= sizeof plain)
            return;
        if (go_parse_int(plain, nd))
            return;
        if (yaml_style_float(plain))
            nd->type = T_FLOAT, nd->f = strtod(plain, NULL);
    }
}

/* ---- the document: libyaml's events into nodes --------------------------------- */

typedef struct anchor {
    char *name;              /* NULL: a free slot */
    node *nd;                /* NULL while its collection is being read */
} anchor;

typedef struct frame {
    node *nd;
    node **kid;              /* children so far (ggfit__realloc'd, freed at its end) */
    uint32_t n, cap;
    char *anchor;            /* its anchor, registered at its end */
} frame;

typedef struct builder {
    rd *r;
    anchor *anchors;         /* open addressing, by name; a name defined again is replaced */
    size_t n_anchors, cap_anchors;
    frame *stack;
    uint32_t depth;
    node *root;
    bool done;
} builder;

static anchor *anchor_slot(builder *b, const char *name)
{
    size_t mask = b->cap_anchors - 1;
    for (size_t i = ggfit__hash(name, strlen(name)) & mask;; i = (i + 1) & mask)
        if (!b->anchors[i].name || !strcmp(b->anchors[i].name, name))
            return &b->anchors[i];
}

static bool anchor_set(builder *b, const char *name, node *nd)
{
    if ((b->n_anchors + 1) * 2 > b->cap_anchors) {
        size_t cap = b->cap_anchors ? b->cap_anchors * 2 : 64;
        anchor *old = b->anchors;
        size_t old_cap = b->cap_anchors;
        b->anchors = ggfit__calloc(cap, sizeof *b->anchors);
        if (!b->anchors) {
            b->anchors = old;
            return fail(b->r, GGFIT_ENOMEM, "out of memory");
        }
        b->cap_anchors = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].name)
                *anchor_slot(b, old[i].name) = old[i];
        ggfit_free(old);
    }
    anchor *a = anchor_slot(b, name);
    if (!a->name) {
        if (!(a->name = dup_n(b->r, name, strlen(name))))
            return false;
        b->n_anchors++;
    }
    a->nd = nd;
    return true;
}

static bool yaml_fail(rd *r, const yaml_parser_t *p)
{
    size_t line = p->context_mark.line ? p->context_mark.line : p->problem_mark.line;
    if (line && p->error == YAML_SCANNER_ERROR)
        line++;
    const char *msg = p->problem ? p->problem : "unknown problem parsing YAML content";
    if (p->error == YAML_MEMORY_ERROR)
        return fail(r, GGFIT_ENOMEM, "out of memory");
    if (line)
        return fail(r, GGFIT_EINVAL, "yaml: line %zu: %s", line, msg);
    return fail(r, GGFIT_EINVAL, "yaml: %s", msg);
}

static bool too_heavy(rd *r, const node *nd)
{
    if (nd->weight <= WEIGHT_MAX)
        return false;
    fail(r, GGFIT_ELIMIT, "yaml: document contains excessive aliasing, or is too large "
         "(line %u: past ggfit's limit of %llu Mi, a node counting 64 and a byte 1 as the "
         "aliases expand it)", nd->line, (unsigned long long)(WEIGHT_MAX >> 20));
    return true;
}

/* Adds nd to the collection being read, or makes it the document. */
static bool add_child(builder *b, node *nd)
{
    if (!b->depth) {
        b->root = nd;
        return true;
    }
    frame *f = &b->stack[b->depth - 1];
    if (f->n == f->cap) {
        uint32_t cap = f->cap ? f->cap * 2 : 8;
        node **kid = ggfit__realloc(f->kid, cap * sizeof *kid);
        if (!kid)
            return fail(b->r, GGFIT_ENOMEM, "out of memory");
        f->kid = kid;
        f->cap = cap;
    }
    f->kid[f->n++] = nd;
    f->nd->weight = weight_add(f->nd->weight, nd->weight);
    return !too_heavy(b->r, f->nd);
}

static int key_cmp(const node *a, const node *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->s, b->s, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* pairs of a mapping by key, then by position: equal keys side by side */
typedef struct pair {
    node *k, *v;
    uint32_t at;
} pair;

static int pair_cmp(const void *x, const void *y)
{
    const pair *a = x, *b = y;
    int c = key_cmp(a->k, b->k);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

static int pair_at_cmp(const void *x, const void *y)
{
    const pair *a = x, *b = y;
    return (a->at > b->at) - (a->at < b->at);
}

/* yaml.v3's check of a mapping's own keys: the first key given again is
 * "mapping key "k" already defined at line M". */
static bool check_unique(rd *r, pair *p, uint32_t n)
{
    qsort(p, n, sizeof *p, pair_cmp);
    const pair *first = NULL, *again = NULL;
    for (uint32_t i = 0; i + 1 < n; i++)
        if (!key_cmp(p[i].k, p[i + 1].k) && (!first || p[i].at < first->at)) {
            first = &p[i];
            again = &p[i + 1];
            while (i + 1 < n && !key_cmp(p[i].k, p[i + 1].k))
                i++;
        }
    if (!first)
        return true;
    char q[128];
    return fail(r, GGFIT_EINVAL, "yaml: unmarshal errors:\n  line %u: mapping key %s already "
                "defined at line %u", again->k->line, go_quote(first->k->s, first->k->len, q,
                                                               sizeof q), first->k->line);
}

/* A finished mapping: its keys unique, its "<<" merged (yaml.v3's rule: its
 * own keys win, then the sources in order, each taken shallow). */
static bool end_mapping(builder *b, frame *f)
{
    rd *r = b->r;
    node *m = f->nd;
    uint32_t own = f->n / 2, n_all = own, merge = UINT32_MAX;
    for (uint32_t i = 0; i < own; i++) {
        if (f->kid[2 * i]->kind != N_SCALAR)
            return fail(r, GGFIT_EINVAL, "yaml: line %u: a mapping key that is not a scalar "
                        "(not read by ggfit)", f->kid[2 * i]->line);
        if (key_is(f->kid[2 * i], "<<"))
            merge = i;
    }
    const node *src = merge != UINT32_MAX ? f->kid[2 * merge + 1] : NULL;
    if (src) {
        const node *const *list = (const node *const *)&src;
        uint32_t n_list = 1;
        if (src->kind == N_SEQ)
            list = (const node *const *)src->kid, n_list = src->n;
        for (uint32_t s = 0; s < n_list; s++) {
            if (list[s]->kind != N_MAP)
                return fail(r, GGFIT_EINVAL, "yaml: map merge requires map or sequence of maps "
                            "as the value");
            n_all += list[s]->n / 2;
        }
    }
    pair *p = ggfit__malloc((n_all ? n_all : 1) * sizeof *p);
    if (!p)
        return fail(r, GGFIT_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < own; i++)
        p[i] = (pair){ f->kid[2 * i], f->kid[2 * i + 1], i };
    bool ok = check_unique(r, p, own);
    uint32_t n = own;
    if (ok && src) {
        const node *const *list = src->kind == N_SEQ ? (const node *const *)src->kid
                                                     : (const node *const *)&src;
        uint32_t n_list = src->kind == N_SEQ ? src->n : 1;
        for (uint32_t s = 0; s < n_list; s++)
            for (uint32_t i = 0; i + 1 < list[s]->n; i += 2, n++)
                p[n] = (pair){ list[s]->kid[i], list[s]->kid[i + 1], n };
        /* the first of each key stays: own keys, then earlier sources */
        qsort(p, n, sizeof *p, pair_cmp);
        uint32_t kept = 0;
        for (uint32_t i = 0; i < n; i++)
            if (!kept || key_cmp(p[kept - 1].k, p[i].k))
                p[kept++] = p[i];
        n = kept;
    }
    if (ok) {
        qsort(p, n, sizeof *p, pair_at_cmp);
        m->kid = alloc(r, (size_t)(2 * n) * sizeof *m->kid);
        ok = m->kid != NULL;
    }
    uint64_t w = NODE_WEIGHT;
    uint32_t k = 0;
    for (uint32_t i = 0; ok && i < n; i++) {
        if (src && key_is(p[i].k, "<<"))
            continue;
        m->kid[k++] = p[i].k;
        m->kid[k++] = p[i].v;
        w = weight_add(w, weight_add(p[i].k->weight, p[i].v->weight));
    }
    ggfit_free(p);
    m->n = k;
    m->weight = w;
    return ok && !too_heavy(r, m);
}

static bool on_event(builder *b, const yaml_event_t *ev)
{
    rd *r = b->r;
    uint32_t line = (uint32_t)ev->start_mark.line + 1;
    const char *anchor_name = NULL;
    node *nd = NULL;
    switch (ev->type) {
    case YAML_DOCUMENT_END_EVENT:
    case YAML_STREAM_END_EVENT:
        b->done = true;   /* the first document only, as yaml.Unmarshal reads it */
        return true;
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        anchor *a = b->cap_anchors ? anchor_slot(b, name) : NULL;
        if (!a || !a->name)
            return fail(r, GGFIT_EINVAL, "yaml: unknown anchor '%s' referenced", name);
        if (!a->nd)
            return fail(r, GGFIT_EINVAL, "yaml: anchor '%s' value contains itself", name);
        return add_child(b, a->nd);
    }
    case YAML_SCALAR_EVENT: {
        const char *tag = (const char *)ev->data.scalar.tag;
        nd = str_node(r, (const char *)ev->data.scalar.value, ev->data.scalar.length, line);
        if (!nd)
            return false;
        bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        if (tag && strcmp(tag, YAML_STR_TAG) && strcmp(tag, "!"))
            resolve_plain(nd);   /* !!int "5" and the like: by the text */
        else if (plain && !tag)
            resolve_plain(nd);
        anchor_name = (const char *)ev->data.scalar.anchor;
        if (anchor_name && !anchor_set(b, anchor_name, nd))
            return false;
        return add_child(b, nd);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool map = ev->type == YAML_MAPPING_START_EVENT;
        if (b->depth == DEPTH_MAX)
            return fail(r, GGFIT_ELIMIT, "yaml: line %u: nested more than %d deep (ggfit's "
                        "limit)", line, DEPTH_MAX);
        if (!(nd = node_new(r, map ? N_MAP : N_SEQ, line)))
            return false;
        anchor_name = (const char *)(map ? ev->data.mapping_start.anchor
                                         : ev->data.sequence_start.anchor);
        frame *f = &b->stack[b->depth++];
        memset(f, 0, sizeof *f);
        f->nd = nd;
        if (anchor_name) {
            if (!(f->anchor = dup_n(r, anchor_name, strlen(anchor_name))))
                return false;
            return anchor_set(b, anchor_name, NULL);
        }
        return true;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        frame *f = &b->stack[b->depth - 1];
        nd = f->nd;
        bool ok = true;
        if (ev->type == YAML_MAPPING_END_EVENT) {
            ok = end_mapping(b, f);
        } else if (f->n) {
            ok = (nd->kid = alloc(r, f->n * sizeof *nd->kid)) != NULL;
            if (ok)
                memcpy(nd->kid, f->kid, f->n * sizeof *nd->kid);
            nd->n = f->n;
        }
        ggfit_free(f->kid);
        f->kid = NULL;
        b->depth--;
        if (ok && f->anchor)
            ok = anchor_set(b, f->anchor, nd);
        return ok && add_child(b, nd);
    }
    default:
        return true;
    }
}

/* The first document of text[0..len) as nodes into *root (NULL when empty). */
static bool build(rd *r, const char *text, size_t len, node **root)
{
    builder b = { .r = r };
    yaml_parser_t p;
    *root = NULL;
    b.stack = ggfit__calloc(DEPTH_MAX, sizeof *b.stack);
    if (!b.stack || !yaml_parser_initialize(&p)) {
        ggfit_free(b.stack);
        return fail(r, GGFIT_ENOMEM, "out of memory");
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    bool ok = true;
    while (ok && !b.done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            ok = yaml_fail(r, &p);
            break;
        }
        ok = on_event(&b, &ev);
        yaml_event_delete(&ev);
    }
    for (uint32_t i = 0; i < b.depth; i++)
        ggfit_free(b.stack[i].kid);
    ggfit_free(b.stack);
    ggfit_free(b.anchors);
    yaml_parser_delete(&p);
    *root = b.root;
    return ok;
}

/* ---- walking the graph ----------------------------------------------------------- */

/* Go's unicode.IsSpace at p: the length of the white-space character there
 * (TrimSpace's set), 0 when none. */
static size_t uspace(const unsigned char *p, const unsigned char *end)
{
    size_t n = (size_t)(end - p);
    if (n >= 1 && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
        return 1;
    if (n >= 2 && p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0))
        return 2;
    if (n >= 3 && ((p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80) ||
                   (p[0] == 0xe2 && p[1] == 0x80 && (p[2] <= 0x8a || p[2] == 0xa8 ||
                                                     p[2] == 0xa9 || p[2] == 0xaf)) ||
                   (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) ||
                   (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80)))
        return (p[0] == 0xe2 && p[1] == 0x80 && p[2] < 0x80) ? 0 : 3;
    return 0;
}

/* the white space ending at end (after start), as uspace */
static size_t uspace_back(const unsigned char *start, const unsigned char *end)
{
    for (size_t k = 1; k <= 3 && (size_t)(end - start) >= k; k++)
        if (uspace(end - k, end) == k)
            return k;
    return 0;
}

/* line[0..*len) with Go's strings.TrimSpace: *len and the start updated */
static const char *trim(const char *line, size_t *len)
{
    const unsigned char *p = (const unsigned char *)line, *end = p + *len;
    for (size_t k; p < end && (k = uspace(p, end));)
        p += k;
    for (size_t k; end > p && (k = uspace_back(p, end));)
        end -= k;
    *len = (size_t)(end - p);
    return (const char *)p;
}

/* A token ${name} at s[0..len) (name [a-zA-Z0-9_-]+): its name's length, 0 when none. */
static size_t macro_token(const char *s, size_t len)
{
    if (len < 4 || s[0] != '$' || s[1] != '{')
        return 0;
    size_t i = 2;
    while (i < len && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                       (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
        i++;
    return i > 2 && i < len && s[i] == '}' ? i - 2 : 0;
}

/* A growing string (ggfit__realloc'd), capped at VALUE_MAX. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static bool sput(rd *r, sbuf *b, const char *s, size_t n, uint32_t line)
{
    if (b->len + n > VALUE_MAX)
        return fail(r, GGFIT_ELIMIT, "the value at line %u grows past %zu MiB as its macros "
                    "expand (ggfit's limit)", line, VALUE_MAX >> 20);
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = ggfit__realloc(b->p, cap);
        if (!p)
            return fail(r, GGFIT_ENOMEM, "out of memory");
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return true;
}

/* ---- macros ----------------------------------------------------------------------- */

typedef struct macro {
    const char *name;
    node *val;
} macro;

/* The macros substituted together, in order: MODEL_ID, the global ones, the
 * model's (llama-swap's mergeModelMacros). llama-swap replaces the last one
 * everywhere, then the one before...: a macro's value sees only the macros
 * declared before it, which is what exp[] memoizes (each value expanded once,
 * so that macros referring to each other cost their length, not their count
 * of paths). */
typedef struct scope {
    macro *m;
    uint32_t n;
    struct named *by_name;   /* names sorted, with their index */
    node **exp;              /* m[k]'s value with macros [0, k) substituted; NULL: not yet */
} scope;

typedef struct named {
    const char *name;
    uint32_t at;
} named;

static int named_cmp(const void *a, const void *b)
{
    return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

static bool scope_init(rd *r, scope *sc, macro *m, uint32_t n)
{
    sc->m = m;
    sc->n = n;
    sc->by_name = alloc(r, (n + 1) * sizeof *sc->by_name);
    sc->exp = alloc(r, (n + 1) * sizeof *sc->exp);
    if (!sc->by_name || !sc->exp)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        sc->by_name[i] = (named){ m[i].name, i };
        sc->exp[i] = NULL;
    }
    qsort(sc->by_name, n, sizeof *sc->by_name, named_cmp);
    return true;
}

static int64_t scope_find(const scope *sc, const char *name, size_t len)
{
    size_t lo = 0, hi = sc->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *m = sc->by_name[mid].name;
        int c = strncmp(m, name, len);
        if (!c)
            c = m[len] ? 1 : 0;
        if (!c)
            return sc->by_name[mid].at;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static node *subst_str(rd *r, scope *sc, node *in, uint32_t limit, bool typed);

static node *macro_value(rd *r, scope *sc, uint32_t k)
{
    if (!sc->exp[k]) {
        node *v = sc->m[k].val;
        sc->exp[k] = is_str(v) ? subst_str(r, sc, v, k, true) : v;
    }
    return sc->exp[k];
}

/* in (a string) with every ${name} of macros [0, limit) replaced by the
 * value as Go's %v prints it; a string that is exactly one such ${name}
 * becomes the macro's value with its type (typed) or its text. NULL after
 * a failure. */
static node *subst_str(rd *r, scope *sc, node *in, uint32_t limit, bool typed)
{
    const char *s = in->s;
    size_t len = in->len, nl = macro_token(s, len);
    if (typed && nl && nl + 3 == len) {
        int64_t k = scope_find(sc, s + 2, nl);
        node *v = k >= 0 && (uint32_t)k < limit ? macro_value(r, sc, (uint32_t)k) : NULL;
        node *at = v ? node_new(r, N_SCALAR, in->line) : NULL;
        if (at) {   /* the value, at the line where it is used */
            uint32_t line = in->line;
            *at = *v;
            at->line = line;
        }
        if (k >= 0 && (uint32_t)k < limit)
            return at;
    }
    sbuf b = { 0 };
    bool changed = false;
    size_t i = 0;            /* s[0..i) is in b */
    for (const char *d = memchr(s, '$', len); d; d = memchr(d, '$', len - (size_t)(d - s))) {
        size_t at = (size_t)(d - s);
        nl = macro_token(d, len - at);
        int64_t k = nl ? scope_find(sc, d + 2, nl) : -1;
        if (k < 0 || (uint32_t)k >= limit) {
            d++;
            continue;
        }
        node *v = macro_value(r, sc, (uint32_t)k);
        char num[64];
        const char *text = v ? fmt_value(v, num, sizeof num) : NULL;
        size_t text_len = v && v->type == T_STR ? v->len : text ? strlen(text) : 0;
        if (!v || !sput(r, &b, s + i, at - i, in->line) || !sput(r, &b, text, text_len, in->line))
            goto fail;
        i = at + nl + 3;
        d = s + i;
        changed = true;
    }
    if (!changed) {
        ggfit_free(b.p);
        return in;
    }
    if (!sput(r, &b, s + i, len - i, in->line))
        goto fail;
    r->expanded += b.len;
    if (r->expanded > EXPAND_MAX) {
        fail(r, GGFIT_ELIMIT, "macros expand to more than %llu MiB in all (ggfit's limit)",
             (unsigned long long)(EXPAND_MAX >> 20));
        goto fail;
    }
    node *out = str_node(r, b.p, b.len, in->line);
    ggfit_free(b.p);
    return out;
fail:
    ggfit_free(b.p);
    return NULL;
}

/* in with the scope substituted in every string value (keys untouched); the
 * nodes that change are new, the others shared. NULL after a failure. */
static node *subst_tree(rd *r, scope *sc, node *in)
{
    if (in->kind == N_SCALAR)
        return is_str(in) ? subst_str(r, sc, in, sc->n, true) : in;
    node **kid = NULL;
    for (uint32_t i = in->kind == N_MAP ? 1 : 0; i < in->n; i += in->kind == N_MAP ? 2 : 1) {
        node *v = subst_tree(r, sc, in->kid[i]);
        if (!v)
            return NULL;
        if (v != in->kid[i] && !kid) {
            if (!(kid = alloc(r, in->n * sizeof *kid)))
                return NULL;
            memcpy(kid, in->kid, in->n * sizeof *kid);
        }
        if (kid)
            kid[i] = v;
    }
    if (!kid)
        return in;
    node *out = node_new(r, in->kind, in->line);
    if (out) {
        *out = *in;
        out->kid = kid;
    }
    return out;
}

static bool macro_name_ok(const char *s)
{
    size_t n = strlen(s);
    return n && strspn(s, "abcdefghijklmnopqrstuvwxyz"
                                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                        "0123456789_-") == n;
}

/* Go's %T of a macro's value that is no scalar */
static const char *go_type(const node *v)
{
    if (v->kind == N_SEQ)
        return "[]interface {}";
    if (v->kind == N_MAP)
        return "map[string]interface {}";
    return v->type == T_NULL ? "<nil>" : "time.Time";
}

/* A macros: block (m: a mapping, or nothing) into *list, checked as
 * llama-swap's validateMacro checks it; model: the model's id for the
 * messages, NULL for the global block. */
static bool read_macros(rd *r, const node *m, const char *model, macro **list, uint32_t *n)
{
    *list = NULL;
    *n = 0;
    if (is_null(m))
        return true;
    if (m->kind != N_MAP)
        return fail(r, GGFIT_EINVAL, "macros must be a mapping");
    if (m->n / 2 > MACROS_MAX)
        return fail(r, GGFIT_ELIMIT, "%s%s%smore than %d macros (ggfit's limit)",
                    model ? "model " : "", model ? model : "", model ? ": " : "", MACROS_MAX);
    if (!(*list = alloc(r, (m->n / 2 + 1) * sizeof **list)))
        return false;
    char pre[320] = "";
    if (model)
        snprintf(pre, sizeof pre, "model %s: ", model);
    for (uint32_t i = 0; i + 1 < m->n; i += 2) {
        const char *name = m->kid[i]->s;
        node *v = m->kid[i + 1];
        if (strlen(name) >= 64)
            return fail(r, GGFIT_EINVAL, "%smacro name '%s' exceeds maximum length of 63 "
                        "characters", pre, name);
        if (!macro_name_ok(name))
            return fail(r, GGFIT_EINVAL, "%smacro name '%s' contains invalid characters, must "
                        "match pattern ^[a-zA-Z0-9_-]+$", pre, name);
        if (v->kind != N_SCALAR || v->type == T_NULL || v->type == T_TIME)
            return fail(r, GGFIT_EINVAL, "%smacro '%s' has invalid type %s, must be a scalar "
                        "type (string, int, float, or bool)", pre, name, go_type(v));
        if (v->type == T_STR) {
            char slug[80];
            snprintf(slug, sizeof slug, "${%s}", name);
            for (const char *p = v->s; (p = memchr(p, '$', v->len - (size_t)(p - v->s))); p++)
                if (!strncmp(p, slug, strlen(slug)))
                    return fail(r, GGFIT_EINVAL, "%smacro '%s' contains self-reference", pre,
                                name);
        }
        if (!strcmp(name, "PID") || !strcmp(name, "PORT") || !strcmp(name, "MODEL_ID"))
            return fail(r, GGFIT_EINVAL, "%smacro name '%s' is reserved", pre, name);
        (*list)[(*n)++] = (macro){ name, v };
    }
    return true;
}

/* [MODEL_ID] + global (the scope gs), the model's own replacing in place or appended */
static bool merge_macros(rd *r, const char *id, const scope *gs, const macro *own, uint32_t no,
                         scope *sc)
{
    macro *m = alloc(r, (1 + gs->n + no) * sizeof *m);
    node *idv = str_node(r, id, strlen(id), 0);
    if (!m || !idv)
        return false;
    uint32_t n = 0;
    m[n++] = (macro){ "MODEL_ID", idv };
    if (gs->n)
        memcpy(m + n, gs->m, gs->n * sizeof *m);
    n += gs->n;
    for (uint32_t i = 0; i < no; i++) {
        int64_t at = scope_find(gs, own[i].name, strlen(own[i].name));
        m[at >= 0 ? 1 + (uint32_t)at : n++] = own[i];
    }
    return scope_init(r, sc, m, n);
}

/* ---- ${env.NAME}: the text before YAML (macros.go substituteEnvMacros) ----------- */

typedef struct names {
    char **v;
    uint32_t n, cap;
} names;

/* the names of ${env.NAME} in s[0..len) added to *out, each once; need_set:
 * the first one not set is llama-swap's error (so that the names kept are
 * at most the environment's) */
static bool env_names(rd *r, const char *s, size_t len, names *out, bool need_set)
{
    for (const char *p = s, *end = s + len; (p = memchr(p, '$', (size_t)(end - p))); p++) {
        if ((size_t)(end - p) < 8 || memcmp(p, "${env.", 6))
            continue;
        const char *q = p + 6;
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_'))
            continue;
        while (q < end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                           (*q >= '0' && *q <= '9') || *q == '_'))
            q++;
        if (q == end || *q != '}')
            continue;
        size_t n = (size_t)(q - p - 6);
        bool seen = false;
        for (uint32_t i = 0; i < out->n && !seen; i++)
            seen = strlen(out->v[i]) == n && !memcmp(out->v[i], p + 6, n);
        if (seen)
            continue;
        if (out->n == out->cap) {
            uint32_t cap = out->cap ? out->cap * 2 : 8;
            char **v = ggfit__realloc(out->v, cap * sizeof *v);
            if (!v)
                return fail(r, GGFIT_ENOMEM, "out of memory");
            out->v = v;
            out->cap = cap;
        }
        if (!(out->v[out->n] = ggfit__strndup(p + 6, n)))
            return fail(r, GGFIT_ENOMEM, "out of memory");
        out->n++;
        if (need_set && !getenv(out->v[out->n - 1]))
            return fail(r, GGFIT_EINVAL, "environment variable '%s' is not set",
                        out->v[out->n - 1]);
        if (!need_set)
            return true;   /* the first is enough */
    }
    return true;
}

/* every scalar, key or value, of the document as aliases and merges make it */
static bool env_walk(rd *r, const node *nd, names *out)
{
    if (nd->kind == N_SCALAR)
        return nd->type == T_NULL || env_names(r, nd->s, nd->len, out, true);
    for (uint32_t i = 0; i < nd->n; i++)
        if (!env_walk(r, nd->kid[i], out))
            return false;
    return true;
}

/* The text with each ${env.NAME} replaced: the names from the comment-free
 * document (when it parses; else from the text), every occurrence replaced
 * (comments too), '\' and '"' escaped. *out NULL when there is none. */
static bool env_pass(rd *r, const char *text, size_t len, char **out, size_t *out_len)
{
    names nm = { 0 };
    *out = NULL;
    bool ok;
    if (!find(text, len, "${env.", 6))
        return true;
    {
        arena *a = ggfit__calloc(1, sizeof *a);
        rd pre = { .a = a };
        node *root = NULL;
        if (!a)
            return fail(r, GGFIT_ENOMEM, "out of memory");
        if (build(&pre, text, len, &root))
            ok = !root || env_walk(r, root, &nm);
        else if (pre.status == GGFIT_ENOMEM)
            ok = fail(r, GGFIT_ENOMEM, "out of memory");
        else
            ok = env_names(r, text, len, &nm, true);
        ggfit_free(pre.err);
        arena_free(a);
    }
    char *cur = NULL;
    size_t cur_len = len;
    for (uint32_t i = 0; ok && i < nm.n; i++) {
        const char *v = getenv(nm.v[i]);
        if (!v) {
            ok = fail(r, GGFIT_EINVAL, "environment variable '%s' is not set", nm.v[i]);
            break;
        }
        if (strpbrk(v, "\n\r")) {
            ok = fail(r, GGFIT_EINVAL, "environment variable '%s' contains newlines or null "
                      "bytes which are not allowed in YAML substitution", nm.v[i]);
            break;
        }
        sbuf esc = { 0 }, res = { 0 };
        char slug[256];
        int sl = snprintf(slug, sizeof slug, "${env.%s}", nm.v[i]);
        for (const char *c = v; ok && *c; c++)
            ok = (*c == '\\' || *c == '"' ? sput(r, &esc, "\\", 1, 0) : true) &&
                 sput(r, &esc, c, 1, 0);
        const char *src = cur ? cur : text;
        for (size_t at = 0; ok && at <= cur_len;) {
            const char *hit = sl > 0 && (size_t)sl < sizeof slug
                            ? find(src + at, cur_len - at, slug, (size_t)sl) : NULL;
            size_t upto = hit ? (size_t)(hit - src) : cur_len;
            ok = res.len + (upto - at) <= FILE_MAX * 4 ||
                 fail(r, GGFIT_ELIMIT, "environment variables make the file larger than "
                      "%zu MiB (ggfit's limit)", FILE_MAX * 4 >> 20);
            /* sput caps a value at VALUE_MAX: the file is grown by hand */
            if (ok && res.len + (upto - at) + esc.len + 1 > res.cap) {
                size_t cap = (res.len + (upto - at) + esc.len + 1) * 2;
                char *p = ggfit__realloc(res.p, cap);
                ok = p || fail(r, GGFIT_ENOMEM, "out of memory");
                if (p)
                    res.p = p, res.cap = cap;
            }
            if (!ok)
                break;
            memcpy(res.p + res.len, src + at, upto - at);
            res.len += upto - at;
            if (!hit)
                break;
            memcpy(res.p + res.len, esc.p ? esc.p : "", esc.len);
            res.len += esc.len;
            at = upto + (size_t)sl;
        }
        ggfit_free(esc.p);
        ggfit_free(cur);
        cur = res.p;
        cur_len = res.len;
        if (!ok)
            break;
    }
    for (uint32_t i = 0; i < nm.n; i++)
        ggfit_free(nm.v[i]);
    ggfit_free(nm.v);
    if (!ok) {
        ggfit_free(cur);
        return false;
    }
    *out = cur;
    *out_len = cur_len;
    return true;
}

/* ---- commands (commands.go) ------------------------------------------------------- */

/* s with the lines whose trimmed text starts with '#' dropped (StripComments);
 * bs: also a line whose trimmed text ends in '\' as that text less the '\'
 * and a space (SanitizeCommand). Into b. */
static bool strip_lines(rd *r, const char *s, size_t len, bool bs, sbuf *b, uint32_t line)
{
    bool first = true;
    if (len > VALUE_MAX)
        return fail(r, GGFIT_ELIMIT, "the command at line %u is longer than %zu MiB (ggfit's "
                    "limit)", line, VALUE_MAX >> 20);
    for (size_t at = 0; at <= len;) {
        const char *nl = memchr(s + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) - at : len - at, tn = n;
        const char *t = trim(s + at, &tn);
        if (!(tn && *t == '#')) {
            if (!first && !sput(r, b, "\n", 1, line))
                return false;
            first = false;
            bool cont = bs && tn && t[tn - 1] == '\\';
            if (!(cont ? sput(r, b, t, tn - 1, line) && sput(r, b, " ", 1, line)
                       : sput(r, b, s + at, n, line)))
                return false;
        }
        if (!nl)
            break;
        at += n + 1;
    }
    return sput(r, b, "", 0, line);
}

static size_t rune_len(const char *s, size_t left)
{
    unsigned char c = (unsigned char)*s;
    size_t n = c < 0xc0 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf8 ? 4 : 1;
    return n > left ? left : n;
}

/* the word in tok (NULL: only room for the final NULL) added to v */
static bool push_word(rd *r, sbuf *tok, char ***v, int *n, int *cap)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        char **nv = alloc(r, (size_t)*cap * sizeof *nv);
        if (!nv)
            return false;
        if (*n)
            memcpy(nv, *v, (size_t)*n * sizeof *nv);
        *v = nv;
    }
    if (!tok)
        return true;
    if (!((*v)[*n] = dup_n(r, tok->p ? tok->p : "", tok->len)))
        return false;
    (*n)++;
    tok->len = 0;
    return true;
}

/* golib shlex.Posix.Split: shell words, no expansion of any kind; an
 * unterminated quote runs to the end; "" and '' give empty words. The words
 * into the arena, *argc of them. */
static bool split_words(rd *r, const char *s, size_t len, char ***argv, int *argc)
{
    enum { SPACE = ' ', WORD = 'A' };
    char state[3] = { SPACE };
    int depth = 1;
    sbuf tok = { 0 };
    bool have = false;       /* the token is not nil (Go's []rune) */
    char **v = NULL;
    int n = 0, cap = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < len;) {
        char c = s[i], top = state[depth - 1];
        size_t rl = rune_len(s + i, len - i), j = i + rl;
        const char *e = NULL;            /* the escaped rune */
        size_t el = 0;
        bool skip = false;
        if (c == '\\' && top != '\'') {
            bool gone = j == len || s[j] == '\n';
            if (top != '"' || gone || strchr("$`\"\\", s[j])) {
                if (gone)
                    skip = true;
                else
                    e = s + j, el = rune_len(s + j, len - j);
            }
        }
        if (e || skip)
            j += j < len ? rune_len(s + j, len - j) : 0;
        if (skip) {
            i = j;
            continue;
        }
        bool emit = false;
        if (top == SPACE) {
            if (e) {
                state[depth++] = WORD;
                ok = sput(r, &tok, e, el, 0);
                have = true;
            } else if (c == '"' || c == '\'') {
                state[depth++] = WORD;
                state[depth++] = c;
                tok.len = 0;
                have = true;
            } else if (!(c == ' ' || c == '\t' || c == '\n')) {
                state[depth++] = WORD;
                ok = sput(r, &tok, s + i, rl, 0);
                have = true;
            }
        } else if (top == WORD) {
            if (e)
                ok = sput(r, &tok, e, el, 0);
            else if (c == '"' || c == '\'')
                state[depth++] = c;
            else if (c == ' ' || c == '\t' || c == '\n')
                depth--, emit = true;
            else
                ok = sput(r, &tok, s + i, rl, 0);
        } else {
            if (e)
                ok = sput(r, &tok, e, el, 0);
            else if (c == top)
                depth--;
            else
                ok = sput(r, &tok, s + i, rl, 0);
        }
        if (ok && emit)
            ok = push_word(r, &tok, &v, &n, &cap);
        have = have && !emit;
        i = j;
    }
    if (ok && have)
        ok = push_word(r, &tok, &v, &n, &cap);
    if (ok && n == cap)
        ok = push_word(r, NULL, &v, &n, &cap);
    ggfit_free(tok.p);
    if (ok)
        v[n] = NULL;
    *argv = v;
    *argc = n;
    return ok;
}

/* ---- typed values (yaml.v3's decode into llama-swap's structs) ------------------- */

static const char *short_tag(const node *v)
{
    static const char *const tags[] = { "!!null", "!!bool", "!!int", "!!int", "!!float",
                                        "!!str", "!!timestamp" };
    return v->kind == N_MAP ? "!!map" : v->kind == N_SEQ ? "!!seq" : tags[v->type];
}

/* A scalar's text as yaml.v3 writes the value again (llama-swap decodes the
 * document it re-encoded): the text a string field gets. */
static const char *text_of(const node *v, char *buf, size_t n)
{
    if (v->type == T_FLOAT) {
        go_float(v->f, true, buf, n);
        return buf;
    }
    return v->type == T_STR || v->type == T_TIME ? v->s : fmt_value(v, buf, n);
}

/* yaml.v3's "cannot unmarshal" (the line is the file's: llama-swap's counts
 * the lines of the document it re-encoded) */
static bool terror(rd *r, const node *v, const char *into)
{
    char val[40] = "", num[64];
    if (v->kind == N_SCALAR) {
        const char *t = text_of(v, num, sizeof num);
        if (strlen(t) > 10)
            snprintf(val, sizeof val, " `%.7s...`", t);
        else
            snprintf(val, sizeof val, " `%s`", t);
    }
    return fail(r, GGFIT_EINVAL, "yaml: unmarshal errors:\n  line %u: cannot unmarshal %s%s "
                "into %s", v->line, short_tag(v), val, into);
}

static bool dec_int(rd *r, const node *v, int64_t *out)
{
    if (is_null(v))
        return true;
    if (v->kind == N_SCALAR && v->type == T_INT) {
        *out = v->i;
        return true;
    }
    if (v->kind == N_SCALAR && v->type == T_FLOAT && v->f > -9.2e18 && v->f < 9.2e18) {
        *out = (int64_t)v->f;   /* yaml.v3 truncates a float into an int */
        return true;
    }
    return terror(r, v, "int");
}

static bool dec_bool(rd *r, const node *v, bool *out)
{
    static const char *const yes[] = { "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", NULL };
    static const char *const no[] = { "n", "N", "no", "No", "NO", "off", "Off", "OFF", NULL };
    if (is_null(v))
        return true;
    if (v->kind == N_SCALAR && v->type == T_BOOL) {
        *out = v->i != 0;
        return true;
    }
    /* YAML 1.1's words, which yaml.v3 takes for a bool field, quoted or not */
    if (is_str(v) && (text_in(v->s, yes) || text_in(v->s, no))) {
        *out = text_in(v->s, yes);
        return true;
    }
    return terror(r, v, "bool");
}

static bool dec_str(rd *r, const node *v, char **out)
{
    char num[64];
    if (is_null(v))
        return true;
    if (v->kind != N_SCALAR)
        return terror(r, v, "string");
    const char *t = text_of(v, num, sizeof num);
    return (*out = dup_n(r, t, v->type == T_STR ? v->len : strlen(t))) != NULL;
}

static bool dec_strs(rd *r, const node *v, char ***out, uint32_t *n)
{
    if (is_null(v))
        return true;
    if (v->kind != N_SEQ)
        return terror(r, v, "[]string");
    if (!(*out = alloc(r, (v->n + 1) * sizeof **out)))
        return false;
    for (uint32_t i = 0; i < v->n; i++) {
        if (!((*out)[i] = dup_s(r, "")) || !dec_str(r, v->kid[i], &(*out)[i]))
            return false;
    }
    (*out)[v->n] = NULL;
    *n = v->n;
    return true;
}

/* ---- leftover macros (macros.go validateMacroUses) ------------------------------ */

typedef struct uses {
    char path[2048];         /* "hooks.on_startup.preload[0]" */
    char field[2048];        /* a model's field path: "filters.stripParams" */
    const char *model;       /* NULL at the top level */
    bool allow_pid;          /* in cmdStop */
} uses;

static size_t append(char *buf, size_t n, const char *fmt, ...) GGFIT_PRINTF(3, 4);
static size_t append(char *buf, size_t n, const char *fmt, ...)
{
    size_t at = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (at < n - 1)
        vsnprintf(buf + at, n - at, fmt, ap);
    va_end(ap);
    return at;
}

static bool leftover(rd *r, const node *v, uses *u)
{
    if (v->kind == N_SCALAR) {
        if (!is_str(v))
            return true;
        for (const char *p = v->s, *end = v->s + v->len; (p = memchr(p, '$', (size_t)(end - p)));
             p++) {
            size_t nl = macro_token(p, (size_t)(end - p));
            if (!nl || (u->allow_pid && nl == 3 && !memcmp(p + 2, "PID", 3)))
                continue;
            int n = (int)nl;
            const char *name = p + 2, *f = u->field;
            if (!u->model)
                return fail(r, GGFIT_EINVAL, "%s: unknown macro '${%.*s}'", u->path, n, name);
            if (!strcmp(f, "cmd") || !strcmp(f, "cmdStop") || !strcmp(f, "proxy") ||
                !strcmp(f, "checkEndpoint") || !strcmp(f, "filters.stripParams") ||
                !strcmp(f, "name") || !strcmp(f, "description")) {
                if ((nl == 4 && !memcmp(name, "PORT", 4)) || (nl == 8 && !memcmp(name,
                                                                              "MODEL_ID", 8)))
                    return fail(r, GGFIT_EINVAL, "macro '${%.*s}' should have been substituted "
                                "in %s.%s", n, name, u->model, f);
                return fail(r, GGFIT_EINVAL, "unknown macro '${%.*s}' found in %s.%s", n, name,
                            u->model, f);
            }
            const char *ctx = !strncmp(f, "capabilities.", 13) ? "capabilities"
                            : !strncmp(f, "metadata.", 9) ? "metadata" : f;
            return fail(r, GGFIT_EINVAL, "model %s %s: unknown macro '${%.*s}'", u->model, ctx,
                        n, name);
        }
        names nm = { 0 };
        bool ok = env_names(r, v->s, v->len, &nm, false);
        if (ok && nm.n)
            ok = fail(r, GGFIT_EINVAL, "%s: environment variable '%s' not set", u->path, nm.v[0]);
        for (uint32_t i = 0; i < nm.n; i++)
            ggfit_free(nm.v[i]);
        ggfit_free(nm.v);
        return ok;
    }
    for (uint32_t i = v->kind == N_MAP ? 1 : 0; i < v->n; i += v->kind == N_MAP ? 2 : 1) {
        size_t at = strlen(u->path), fat = strlen(u->field);
        if (v->kind == N_MAP) {
            append(u->path, sizeof u->path, ".%s", v->kid[i - 1]->s);
            if (u->model)
                append(u->field, sizeof u->field, ".%s", v->kid[i - 1]->s);
        } else {
            append(u->path, sizeof u->path, "[%u]", i);
        }
        bool ok = leftover(r, v->kid[i], u);
        u->path[at] = '\0';
        u->field[fat] = '\0';
        if (!ok)
            return false;
    }
    return true;
}

/* ---- the models, one by one ------------------------------------------------------- */

typedef struct work {
    node *id;                /* the key under models: */
    node *v;                 /* its value, as it changes */
    macro *own;              /* its macros: */
    uint32_t n_own;
    int port;
} work;

static int work_cmp(const void *a, const void *b)
{
    return key_cmp(((const work *)a)->id, ((const work *)b)->id);
}

/* a mapping like m with key k's value v (replaced, or added at the end; v
 * NULL: k dropped) */
static node *with(rd *r, const node *m, const char *k, node *v)
{
    node *out = node_new(r, N_MAP, m->line);
    if (!out || !(out->kid = alloc(r, (m->n + 2) * sizeof *out->kid)))
        return NULL;
    out->weight = m->weight;
    bool set = false;
    for (uint32_t i = 0; i + 1 < m->n; i += 2) {
        if (key_is(m->kid[i], k)) {
            if (v) {
                out->kid[out->n++] = m->kid[i];
                out->kid[out->n++] = v;
            }
            set = true;
            continue;
        }
        out->kid[out->n++] = m->kid[i];
        out->kid[out->n++] = m->kid[i + 1];
    }
    if (!set && v) {
        if (!(out->kid[out->n++] = str_node(r, k, strlen(k), v->line)))
            return NULL;
        out->kid[out->n++] = v;
    }
    return out;
}

/* Before any macro (resolveConfigMacros): macros: dropped, comment lines out
 * of cmd and cmdStop, proxy defaulted. */
static node *prepare(rd *r, node *m)
{
    if (!(m = with(r, m, "macros", NULL)))
        return NULL;
    static const char *const cmds[] = { "cmd", "cmdStop" };
    for (int i = 0; i < 2; i++) {
        node *c = get(m, cmds[i]), *s;
        if (!is_str(c))
            continue;
        sbuf b = { 0 };
        bool ok = strip_lines(r, c->s, c->len, false, &b, c->line);
        s = ok ? str_node(r, b.p, b.len, c->line) : NULL;
        ggfit_free(b.p);
        if (!s || !(m = with(r, m, cmds[i], s)))
            return NULL;
    }
    if (is_null(get(m, "proxy"))) {
        static const char proxy[] = "http://localhost:${PORT}";
        node *p = str_node(r, proxy, sizeof proxy - 1, m->line);
        if (!p || !(m = with(r, m, "proxy", p)))
            return NULL;
    }
    return m;
}

/* filters.setParamsByID's keys with the scope substituted in them (as text),
 * two keys becoming one an error; then, last, none may keep a ${name}. */
static node *param_keys(rd *r, scope *sc, node *m, const char *id, bool last)
{
    node *f = get(m, "filters"), *p = get(f, "setParamsByID");
    if (!p || p->kind != N_MAP || f->kind != N_MAP)
        return m;
    node *np = node_new(r, N_MAP, p->line);
    if (!np || !(np->kid = alloc(r, p->n * sizeof *np->kid)))
        return NULL;
    for (uint32_t i = 0; i + 1 < p->n; i += 2) {
        node *k = subst_str(r, sc, p->kid[i], sc->n, false);
        if (!k)
            return NULL;
        for (uint32_t j = 0; j < np->n; j += 2)
            if (!key_cmp(np->kid[j], k)) {
                char q1[128], q2[128];
                fail(r, GGFIT_EINVAL, "model %s filters.setParamsByID: keys %s and %s resolve "
                     "to the same value", id, go_quote(p->kid[i]->s, p->kid[i]->len, q1,
                                                        sizeof q1), go_quote(k->s, k->len, q2,
                                                                             sizeof q2));
                return NULL;
            }
        size_t nl;
        for (const char *c = k->s; last && (c = strchr(c, '$')); c++)
            if ((nl = macro_token(c, strlen(c)))) {
                fail(r, GGFIT_EINVAL, "unknown macro '${%.*s}' found in model %s "
                     "filters.setParamsByID key", (int)nl, c + 2, id);
                return NULL;
            }
        np->kid[np->n++] = k;
        np->kid[np->n++] = p->kid[i + 1];
    }
    node *nf = with(r, f, "setParamsByID", np);
    return nf ? with(r, m, "filters", nf) : NULL;
}

static bool contains(const node *v, const char *s)
{
    return is_str(v) && find(v->s, v->len, s, strlen(s)) != NULL;
}

/* The model's macros and then its ${PORT}, in place in w. */
static bool expand_model(rd *r, work *w, const scope *gs, int64_t *next_port)
{
    const char *id = w->id->s;
    scope sc;
    if (!merge_macros(r, id, gs, w->own, w->n_own, &sc))
        return false;
    node *m = subst_tree(r, &sc, w->v);
    if (!m || !(m = param_keys(r, &sc, m, id, false)))
        return false;
    bool cmd_port = contains(get(m, "cmd"), "${PORT}");
    if (contains(get(m, "proxy"), "${PORT}") && !cmd_port)
        return fail(r, GGFIT_EINVAL, "model %s: proxy uses ${PORT} but cmd does not - ${PORT} "
                    "is only available when used in cmd", id);
    if (cmd_port) {
        macro port = { "PORT", int_node(r, *next_port, 0) };
        scope ps;
        if (!port.val || *next_port > INT32_MAX || !scope_init(r, &ps, &port, 1) ||
            !(m = subst_tree(r, &ps, m)) || !(m = param_keys(r, &ps, m, id, false)))
            return r->status != GGFIT_OK ? false
                 : fail(r, GGFIT_EINVAL, "model %s: port %lld is past the last port", id,
                        (long long)*next_port);
        w->port = (int)(*next_port)++;
    }
    scope none = { 0 };
    if (!(m = param_keys(r, &none, m, id, true)))
        return false;
    w->v = m;
    return true;
}

/* ---- the configuration ------------------------------------------------------------ */

/* Config's fields (config.go): the top-level keys whose leftover macros are errors */
static const char *const known_top[] = {
    "healthCheckTimeout", "logRequests", "logLevel", "logTimeFormat", "logToStdout",
    "metricsMaxInMemory", "captureBuffer", "store", "ui", "performance", "globalTTL",
    "unloadTimeout", "profiles", "selectors", "routing", "groups", "matrix", "startPort",
    "hooks", "sendLoadingState", "includeAliasesInList", "apiKeys", "peers", "upstream", NULL
};

static bool copy_name(rd *r, char *dst, const node *k, const char *what)
{
    if (k->len >= 256 || strlen(k->s) != k->len)
        return fail(r, GGFIT_ELIMIT, "%s '%.40s...': an id of 256 bytes or more, or with a NUL "
                    "byte (ggfit's limit)", what, k->s);
    memcpy(dst, k->s, k->len + 1);
    return true;
}

/* One model's typed fields (ModelConfig with its defaults; a null model is
 * Go's zero ModelConfig, no default applied). */
static bool decode_model(rd *r, const work *w, ggfit__swap_model *m)
{
    const node *v = w->v;
    if (!copy_name(r, m->name, w->id, "model"))
        return false;
    if (!(m->cmd = m->cmd_stop = m->proxy = m->check_endpoint = m->use_model_name = dup_s(r, "")))
        return false;
    m->port = w->port;
    m->group = GGFIT__SWAP_NO_GROUP;
    if (is_null(v))
        return true;
    if (v->kind != N_MAP)
        return terror(r, v, "config.ModelConfig");
    if (!(m->check_endpoint = dup_s(r, "/health")))
        return false;
    m->ttl = -1;
    char **env = NULL, **aliases = NULL;
    uint32_t n_env = 0;
    if (!dec_str(r, get(v, "cmd"), &m->cmd) || !dec_str(r, get(v, "cmdStop"), &m->cmd_stop) ||
        !dec_str(r, get(v, "proxy"), &m->proxy) ||
        !dec_str(r, get(v, "checkEndpoint"), &m->check_endpoint) ||
        !dec_str(r, get(v, "useModelName"), &m->use_model_name) ||
        !dec_strs(r, get(v, "aliases"), &aliases, &m->n_aliases) ||
        !dec_strs(r, get(v, "env"), &env, &n_env) || !dec_int(r, get(v, "ttl"), &m->ttl) ||
        !dec_int(r, get(v, "unloadTimeout"), &m->unload_timeout) ||
        !dec_int(r, get(v, "concurrencyLimit"), &m->concurrency_limit) ||
        !dec_bool(r, get(v, "unlisted"), &m->unlisted))
        return false;
    m->env = env;
    m->n_env = (int)n_env;
    m->aliases = aliases;
    return true;
}

static bool decode_group(rd *r, const node *k, const node *v, ggfit__swap_group *g,
                         char ***members, uint32_t *n)
{
    if (!copy_name(r, g->name, k, "group"))
        return false;
    *members = NULL;
    *n = 0;
    if (is_null(v))
        return true;   /* Go's zero GroupConfig: no swap, not exclusive */
    if (v->kind != N_MAP)
        return terror(r, v, "config.GroupConfig");
    g->swap = g->exclusive = true;
    return dec_bool(r, get(v, "swap"), &g->swap) &&
           dec_bool(r, get(v, "exclusive"), &g->exclusive) &&
           dec_bool(r, get(v, "persistent"), &g->persistent) &&
           dec_strs(r, get(v, "members"), members, n);
}

uint32_t ggfit__swap_find(const ggfit__swap *s, const char *name)
{
    uint32_t lo = 0, hi = s->n_models;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->models[mid].name, name);
        if (!c)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (s->by_alias) {
        lo = 0, hi = s->n_by_alias;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            int c = strcmp(s->by_alias[mid].name, name);
            if (!c)
                return s->by_alias[mid].model;
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        return UINT32_MAX;
    }
    for (uint32_t k = 0; k < s->n_models; k++)   /* while the aliases are being read */
        for (uint32_t a = 0; a < s->models[k].n_aliases; a++)
            if (!strcmp(s->models[k].aliases[a], name))
                return k;
    return UINT32_MAX;
}

static int alias_cmp(const void *a, const void *b)
{
    return strcmp(((const ggfit__swap_alias *)a)->name, ((const ggfit__swap_alias *)b)->name);
}

/* the index of ggfit__swap_find, once every alias is known */
static bool index_aliases(rd *r, ggfit__swap *s)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < s->n_models; k++)
        n += s->models[k].n_aliases;
    if (!(s->by_alias = alloc(r, (n + 1) * sizeof *s->by_alias)))
        return false;
    for (uint32_t k = 0; k < s->n_models; k++)
        for (uint32_t a = 0; a < s->models[k].n_aliases; a++)
            s->by_alias[s->n_by_alias++] = (ggfit__swap_alias){ s->models[k].aliases[a], k };
    qsort(s->by_alias, n, sizeof *s->by_alias, alias_cmp);
    return true;
}

/* The aliases (with filters.setParamsByID's keys added), each once
 * (LoadConfigFromReader's order: all aliases, then per model its keys). */
static bool check_aliases(rd *r, ggfit__swap *s, work *w)
{
    uint32_t total = 0;
    for (uint32_t k = 0; k < s->n_models; k++) {
        const node *p = get(get(w[k].v, "filters"), "setParamsByID");
        total += s->models[k].n_aliases + (p && p->kind == N_MAP ? p->n / 2 : 0);
        if (total > NAMES_MAX)
            return fail(r, GGFIT_ELIMIT, "more than %d aliases in all (ggfit's limit)",
                        NAMES_MAX);
    }
    for (uint32_t k = 0; k < s->n_models; k++)
        for (uint32_t a = 0; a < s->models[k].n_aliases; a++)
            for (uint32_t j = 0; j <= k; j++)
                for (uint32_t b = 0; b < (j == k ? a : s->models[j].n_aliases); b++)
                    if (!strcmp(s->models[j].aliases[b], s->models[k].aliases[a]))
                        return fail(r, GGFIT_EINVAL, "duplicate alias %s found in model: %s",
                                    s->models[k].aliases[a], s->models[k].name);
    for (uint32_t k = 0; k < s->n_models; k++) {
        ggfit__swap_model *m = &s->models[k];
        const node *p = get(get(w[k].v, "filters"), "setParamsByID");
        if (!p || p->kind != N_MAP)
            continue;
        char **al = alloc(r, (m->n_aliases + p->n / 2 + 1) * sizeof *al);
        if (!al)
            return false;
        if (m->n_aliases)
            memcpy(al, m->aliases, m->n_aliases * sizeof *al);
        m->aliases = al;
        for (uint32_t i = 0; i + 1 < p->n; i += 2) {
            const char *key = p->kid[i]->s;
            if (!strcmp(key, m->name))
                continue;
            uint32_t at = ggfit__swap_find(s, key);
            if (at != UINT32_MAX && !strcmp(s->models[at].name, key))
                return fail(r, GGFIT_EINVAL, "model %s filters.setParamsByID: key '%s' conflicts "
                            "with an existing model ID", m->name, key);
            if (at != UINT32_MAX && at != k)
                return fail(r, GGFIT_EINVAL, "duplicate alias '%s' in model %s "
                            "filters.setParamsByID, already used by model %s", key, m->name,
                            s->models[at].name);
            if (at == k)
                continue;
            m->aliases[m->n_aliases++] = (char *)(uintptr_t)key;
        }
    }
    return true;
}

/* The groups (the legacy top-level groups: or routing.router's), the
 * "(default)" group, the checks of members. */
static bool read_groups(rd *r, const node *root, ggfit__swap *s)
{
    const node *groups = get(root, "groups"), *matrix = get(root, "matrix");
    const node *router = get(get(root, "routing"), "router");
    const node *settings = get(router, "settings");
    char *use = dup_s(r, "");
    if (!use)
        return false;
    if ((groups && !is_null(groups) && groups->kind != N_MAP) ||
        (get(settings, "groups") && !is_null(get(settings, "groups")) &&
         get(settings, "groups")->kind != N_MAP))
        return terror(r, groups && groups->kind != N_MAP ? groups : get(settings, "groups"),
                      "map[string]config.GroupConfig");
    if (!dec_str(r, get(router, "use"), &use))
        return false;
    bool top = !is_null(matrix) || (groups && groups->kind == N_MAP && groups->n);
    const node *sg = get(settings, "groups");
    bool routing = *use || !is_null(get(settings, "matrix")) || (sg && sg->kind == N_MAP && sg->n);
    if (top && routing)
        return fail(r, GGFIT_EINVAL, "config uses both the legacy top-level 'matrix'/'groups' "
                    "keys and the new 'routing.router' block; please migrate the top-level keys "
                    "into 'routing.router' and remove them");
    if (!top) {
        if (!strcmp(use, "matrix")) {
            if (is_null(get(settings, "matrix")))
                return fail(r, GGFIT_EINVAL, "routing.router.use is 'matrix' but "
                            "routing.router.settings.matrix is not set");
            matrix = get(settings, "matrix");
        } else if (!*use || !strcmp(use, "group")) {
            groups = sg;
        } else {
            return fail(r, GGFIT_EINVAL, "routing.router.use: unknown router \"%s\" (valid: "
                        "group, matrix)", use);
        }
    }
    uint32_t n_user = groups && groups->kind == N_MAP ? groups->n / 2 : 0;
    if (!is_null(matrix) && n_user)
        return fail(r, GGFIT_EINVAL, "config cannot use both 'groups' and 'matrix'");
    if (!is_null(matrix))
        return fail(r, GGFIT_EUNSUPPORTED, "the matrix router (matrix: line %u) is not read by "
                    "ggfit: use groups", matrix->line);
    char ***members = alloc(r, (n_user + 1) * sizeof *members);
    uint32_t *n_members = alloc(r, (n_user + 1) * sizeof *n_members);
    s->groups = alloc(r, (n_user + 1) * sizeof *s->groups);
    if (!members || !n_members || !s->groups)
        return false;
    memset(s->groups, 0, (n_user + 1) * sizeof *s->groups);
    /* a user group named "(default)" is replaced by llama-swap's own, its members left in
     * none; the other groups keep the file's order */
    uint32_t n = 0, dflt = UINT32_MAX;
    for (uint32_t i = 0; i < n_user; i++) {
        if (!decode_group(r, groups->kid[2 * i], groups->kid[2 * i + 1], &s->groups[n],
                          &members[n], &n_members[n]))
            return false;
        if (!strcmp(s->groups[n].name, GGFIT__SWAP_DEFAULT_GROUP))
            dflt = n;
        n++;
    }
    uint32_t total = 0;
    for (uint32_t g = 0; g < n; g++)
        if ((total += n_members[g]) > NAMES_MAX)
            return fail(r, GGFIT_ELIMIT, "more than %d group members in all (ggfit's limit)",
                        NAMES_MAX);
    /* duplicate and shared members, over every group as llama-swap lists them (the
     * replaced "(default)" not among them) */
    for (uint32_t g = 0; g < n; g++)
        for (uint32_t i = 0; i < n_members[g] && g != dflt; i++)
            for (uint32_t h = 0; h <= g; h++)
                for (uint32_t j = 0; j < (h == g ? i : n_members[h]) && h != dflt; j++) {
                    if (strcmp(members[h][j], members[g][i]))
                        continue;
                    if (h == g)
                        return fail(r, GGFIT_EINVAL, "duplicate model member %s found in group: "
                                    "%s", members[g][i], s->groups[g].name);
                    return fail(r, GGFIT_EINVAL, "model member %s is used in multiple groups: %s "
                                "and %s", members[g][i], s->groups[h].name, s->groups[g].name);
                }
    /* members are model ids (llama-swap fails on others when its router starts) */
    for (uint32_t g = 0; g < n; g++) {
        ggfit__swap_group *gr = &s->groups[g];
        if (!(gr->members = alloc(r, (n_members[g] + 1) * sizeof *gr->members)))
            return false;
        for (uint32_t i = 0; i < n_members[g] && g != dflt; i++) {
            uint32_t k = ggfit__swap_find(s, members[g][i]);
            if (k == UINT32_MAX)
                return fail(r, GGFIT_EINVAL, "creating group router: no model config for \"%s\"",
                            members[g][i]);
            if (strcmp(s->models[k].name, members[g][i]))
                return fail(r, GGFIT_EINVAL, "group %s: member %s is an alias of model %s: "
                            "llama-swap would run a second copy of it (list the model's id)",
                            gr->name, members[g][i], s->models[k].name);
            gr->members[gr->n_members++] = k;
            s->models[k].group = g;
        }
    }
    /* "(default)": the models listed in no group (sorted), swap and exclusive */
    ggfit__swap_group *d = dflt != UINT32_MAX ? &s->groups[dflt] : &s->groups[n++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", GGFIT__SWAP_DEFAULT_GROUP);
    d->swap = d->exclusive = true;
    if (!(d->members = alloc(r, (s->n_models + 1) * sizeof *d->members)))
        return false;
    for (uint32_t k = 0; k < s->n_models; k++) {
        bool listed = false;
        for (uint32_t g = 0; g < n_user && !listed; g++)
            for (uint32_t i = 0; i < n_members[g] && !listed; i++)
                listed = !strcmp(members[g][i], s->models[k].name);
        if (!listed) {
            d->members[d->n_members++] = k;
            s->models[k].group = (uint32_t)(d - s->groups);
        }
    }
    s->n_groups = n;
    return true;
}

static bool top_int(rd *r, const node *root, const char *key, int64_t *out, int64_t dflt)
{
    *out = dflt;
    return dec_int(r, get(root, key), out);
}

/* LoadConfigFromReader from the text on */
static bool load(rd *r, const char *text, size_t len, ggfit__swap *s)
{
    char *env_text = NULL;
    size_t env_len = 0;
    node *root;
    if (!env_pass(r, text, len, &env_text, &env_len))
        return false;
    bool ok = build(r, env_text ? env_text : text, env_text ? env_len : len, &root);
    ggfit_free(env_text);
    if (!ok)
        return false;
    if (is_null(root) && !(root = node_new(r, N_MAP, 1)))
        return false;
    if (root->kind != N_MAP)
        return terror(r, root, "config.configMacroConfig");
    /* the macro declarations, checked before anything else: global, then per model */
    node *models = get(root, "models");
    macro *g;
    uint32_t ng, nw = 0;
    if (models && !is_null(models) && models->kind != N_MAP)
        return terror(r, models, "map[string]config.modelMacroConfig");
    uint32_t n_models = is_null(models) ? 0 : models->n / 2;
    work *w = alloc(r, (n_models + 1) * sizeof *w);
    if (!w || !read_macros(r, get(root, "macros"), NULL, &g, &ng))
        return false;
    for (uint32_t i = 0; i < n_models; i++)
        w[nw++] = (work){ .id = models->kid[2 * i], .v = models->kid[2 * i + 1] };
    qsort(w, nw, sizeof *w, work_cmp);
    for (uint32_t i = 0; i < nw; i++) {
        if (!is_null(w[i].v) && w[i].v->kind != N_MAP)
            return terror(r, w[i].v, "config.modelMacroConfig");
        if (!read_macros(r, get(w[i].v, "macros"), w[i].id->s, &w[i].own, &w[i].n_own))
            return false;
    }
    for (uint32_t i = 0; i < nw; i++)
        if (!is_null(w[i].v) && !(w[i].v = prepare(r, w[i].v)))
            return false;
    /* the global macros in every other top-level value; then startPort */
    scope gs;
    node *top = node_new(r, N_MAP, root->line);
    if (!top || !scope_init(r, &gs, g, ng) || !(top->kid = alloc(r, root->n * sizeof *top->kid)))
        return false;
    for (uint32_t i = 0; i + 1 < root->n; i += 2) {
        const node *k = root->kid[i];
        if (key_is(k, "macros"))
            continue;
        node *v = key_is(k, "models") ? root->kid[i + 1] : subst_tree(r, &gs, root->kid[i + 1]);
        if (!v)
            return false;
        top->kid[top->n++] = root->kid[i];
        top->kid[top->n++] = v;
    }
    root = top;
    if (!top_int(r, root, "startPort", &s->start_port, 5800))
        return false;
    if (s->start_port < 1)
        return fail(r, GGFIT_EINVAL, "startPort must be greater than 1");
    /* every model's scope is the global one and its own: bounded in all */
    uint64_t entries = 0;
    for (uint32_t i = 0; i < nw; i++)
        if ((entries += 1 + ng + w[i].n_own) > SCOPES_MAX)
            return fail(r, GGFIT_ELIMIT, "%u models with %u global macros: more than %d "
                        "macros to substitute in all (ggfit's limit)", nw, ng, SCOPES_MAX);
    int64_t port = s->start_port;
    for (uint32_t i = 0; i < nw; i++)
        if (!is_null(w[i].v) && !expand_model(r, &w[i], &gs, &port))
            return false;
    /* no ${name} may be left, but ${PID} in cmdStop */
    uses *u = ggfit__calloc(1, sizeof *u);
    if (!u)
        return fail(r, GGFIT_ENOMEM, "out of memory");
    ok = true;
    for (uint32_t i = 0; ok && i + 1 < root->n; i += 2) {
        const node *k = root->kid[i];
        if (key_is(k, "models") || !text_in(k->s, known_top))
            continue;
        snprintf(u->path, sizeof u->path, "%s", k->s);
        ok = leftover(r, root->kid[i + 1], u);
    }
    for (uint32_t i = 0; ok && i < nw; i++) {
        const node *m = w[i].v;
        for (uint32_t f = 0; ok && m && m->kind == N_MAP && f + 1 < m->n; f += 2) {
            u->model = w[i].id->s;
            u->allow_pid = key_is(m->kid[f], "cmdStop");
            snprintf(u->path, sizeof u->path, "models.%s.%s", w[i].id->s, m->kid[f]->s);
            snprintf(u->field, sizeof u->field, "%s", m->kid[f]->s);
            ok = leftover(r, m->kid[f + 1], u);
        }
    }
    ggfit_free(u);
    if (!ok)
        return false;
    /* the typed configuration and llama-swap's checks, in its order */
    char *log_to = dup_s(r, "proxy");
    if (!log_to)
        return false;
    if (!top_int(r, root, "healthCheckTimeout", &s->health_check_timeout, 120) ||
        !top_int(r, root, "globalTTL", &s->global_ttl, 0) ||
        !top_int(r, root, "unloadTimeout", &s->unload_timeout, 10) ||
        !dec_str(r, get(root, "logToStdout"), &log_to))
        return false;
    s->models = alloc(r, (nw + 1) * sizeof *s->models);
    if (!s->models)
        return false;
    memset(s->models, 0, (nw + 1) * sizeof *s->models);
    s->n_models = nw;
    for (uint32_t i = 0; i < nw; i++)
        if (!decode_model(r, &w[i], &s->models[i]))
            return false;
    char **preload = NULL;
    uint32_t n_preload = 0;
    if (!dec_strs(r, get(get(get(root, "hooks"), "on_startup"), "preload"), &preload, &n_preload))
        return false;
    if (s->health_check_timeout < 15)
        s->health_check_timeout = 15;
    if (s->global_ttl < 0)
        return fail(r, GGFIT_EINVAL, "globalTTL must be >= 0");
    if (s->unload_timeout < 0)
        return fail(r, GGFIT_EINVAL, "unloadTimeout must be >= 0");
    if (!s->unload_timeout)
        s->unload_timeout = 10;
    if (strcmp(log_to, "proxy") && strcmp(log_to, "upstream") && strcmp(log_to, "both") &&
        strcmp(log_to, "none"))
        return fail(r, GGFIT_EINVAL, "logToStdout must be one of: proxy, upstream, both, none");
    for (uint32_t k = 0; k < nw; k++) {
        ggfit__swap_model *m = &s->models[k];
        if (m->ttl == -1)
            m->ttl = s->global_ttl;
        if (m->ttl < 0)
            return fail(r, GGFIT_EINVAL, "model %s: invalid TTL value %lld", m->name,
                        (long long)m->ttl);
        if (m->unload_timeout < 0)
            return fail(r, GGFIT_EINVAL, "model %s: invalid unloadTimeout value %lld", m->name,
                        (long long)m->unload_timeout);
        if (!m->unload_timeout)
            m->unload_timeout = s->unload_timeout;
    }
    if (!check_aliases(r, s, w) || !index_aliases(r, s) || !read_groups(r, root, s))
        return false;
    if (!(s->preload = alloc(r, (n_preload + 1) * sizeof *s->preload)))
        return false;
    for (uint32_t i = 0; i < n_preload; i++) {
        size_t n = strlen(preload[i]);
        const char *t = trim(preload[i], &n);
        char *name = dup_n(r, t, n);
        uint32_t k = name ? ggfit__swap_find(s, name) : UINT32_MAX;
        if (!name)
            return false;
        if (k != UINT32_MAX)
            s->preload[s->n_preload++] = s->models[k].name;
    }
    /* each command as llama-swap starts it */
    for (uint32_t k = 0; k < nw; k++) {
        ggfit__swap_model *m = &s->models[k];
        sbuf b = { 0 };
        ok = strip_lines(r, m->cmd, strlen(m->cmd), true, &b, 0) &&
             split_words(r, b.p, b.len, &m->argv, &m->argc);
        ggfit_free(b.p);
        if (!ok)
            return false;
    }
    return true;
}

ggfit_status ggfit__swap_parse(const char *text, size_t len, const char *name, ggfit__swap *out,
                               char **err)
{
    memset(out, 0, sizeof *out);
    rd r = { 0 };
    if (!(r.a = ggfit__calloc(1, sizeof *r.a)))
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    out->arena = r.a;
    if (load(&r, text, len, out))
        return GGFIT_OK;
    if (r.status == GGFIT_OK)
        fail(&r, GGFIT_EINVAL, "cannot read the configuration");
    ggfit_status st = r.status;
    ggfit__fail(err, st, "%s: %s", name, r.err ? r.err : "out of memory");
    ggfit_free(r.err);
    ggfit__swap_free(out);
    return st;
}

ggfit_status ggfit__swap_read(const char *path, ggfit__swap *out, char **err)
{
    struct stat st;
    memset(out, 0, sizeof *out);
    if (stat(path, &st) != 0)
        return ggfit__fail(err, GGFIT_EIO, "config %s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return ggfit__fail(err, GGFIT_EIO, "config %s: is a directory (llama-swap's -config "
                           "names a YAML file)", path);
    if ((uint64_t)st.st_size > FILE_MAX)
        return ggfit__fail(err, GGFIT_ELIMIT, "config %s: %lld bytes, more than ggfit reads of "
                           "a config (%zu MiB)", path, (long long)st.st_size, FILE_MAX >> 20);
    FILE *f = fopen(path, "rb");
    if (!f)
        return ggfit__fail(err, GGFIT_EIO, "config %s: %s", path, strerror(errno));
    char *text = ggfit__malloc(FILE_MAX + 1);
    size_t n = text ? fread(text, 1, FILE_MAX + 1, f) : 0;
    bool bad = ferror(f);
    fclose(f);
    if (!text)
        return ggfit__fail(err, GGFIT_ENOMEM, "out of memory");
    ggfit_status status;
    char name[600];
    snprintf(name, sizeof name, "config %s", path);
    if (bad)
        status = ggfit__fail(err, GGFIT_EIO, "%s: read error", name);
    else if (n > FILE_MAX)
        status = ggfit__fail(err, GGFIT_ELIMIT, "%s: more than ggfit reads of a config (%zu MiB)",
                             name, FILE_MAX >> 20);
    else
        status = ggfit__swap_parse(text, n, name, out, err);
    ggfit_free(text);
    return status;
}

void ggfit__swap_free(ggfit__swap *s)
{
    if (!s)
        return;
    arena_free(s->arena);
    memset(s, 0, sizeof *s);
}

void ggfit__swap_evicts(const ggfit__swap *s, uint32_t asked, const bool *running, bool *stopped)
{
    uint32_t tg = s->models[asked].group;
    for (uint32_t m = 0; m < s->n_models; m++) {
        stopped[m] = false;
        if (m == asked || !running[m] || tg == GGFIT__SWAP_NO_GROUP)
            continue;
        uint32_t og = s->models[m].group;
        const ggfit__swap_group *t = &s->groups[tg];
        bool persistent = og != GGFIT__SWAP_NO_GROUP && s->groups[og].persistent;
        stopped[m] = og == tg ? t->swap : t->exclusive && !persistent;
    }
}
