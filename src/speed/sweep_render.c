/*
 * sweep_render.c - a sweep (plan/search.c) as a table, CSV, JSON and an SVG
 * picture drawn here with plain printf: three panels sharing the x axis
 * (generation, prompt, memory per pool with its limit dashed).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/base.h"
#include "render/render.h"

static const char *const axis_names[] = { "context", "-ngl", "-ncmoe" };
static const char *const axis_ids[] = { "ctx", "ngl", "ncmoe" };

static double gib(uint64_t b)
{
    return (double)b / (1024.0 * GGFIT_MiB);
}

/* The machine in words, within n bytes (256 always were): "NVIDIA
 * GeForce RTX 3090 24 GiB, 124 GiB system memory free". */
static const char *machine(const ggfit_sweep *s, char *buf, size_t n)
{
    size_t w = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d < s->n_devices && w < n; d++)
        w += (size_t)snprintf(buf + w, n - w, "%s%s %.0f GiB", d ? " + " : "",
                              s->device_names[d], gib(s->device_total[d]));
    if (w < n)
        snprintf(buf + w, n - w, "%s%.0f GiB system memory free", s->n_devices ? ", " : "",
                 gib(s->host_free));
    return buf;
}

/* A model by its file name, not its path (the table fits 80 columns). */
static const char *file_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *ggfit_sweep_text(const ggfit_sweep *s)
{
    char m[256];
    ggfit_sb sb = { 0 };
    char version[256];
    ggfit__sb_printf(&sb, "for llama.cpp %s\n",
                     ggfit_llama_version_str(&s->llama, version, sizeof version));
    ggfit__sb_printf(&sb, "%s on %s: memory [GiB] and predicted llama-bench speed against %s",
                     file_name(s->model), machine(s, m, sizeof m), axis_names[s->axis]);
    if (s->axis != GGFIT_SWEEP_CTX)
        ggfit__sb_printf(&sb, " at -c %u", s->n_ctx);
    else
        ggfit__sb_printf(&sb, " (each context with llama.cpp's fit)");
    /* n_ctx where it is not the axis's own figure (the context axis's, or -c) */
    bool ctx_col = false, ngl_col = s->axis != GGFIT_SWEEP_NGL;   /* and -ngl, likewise */
    for (size_t k = 0; k < s->n_points; k++) {
        ctx_col |= s->points[k].n_ctx != (s->axis == GGFIT_SWEEP_CTX ? s->points[k].x : s->n_ctx);
        ngl_col |= s->points[k].n_gpu_layers != (int32_t)s->points[k].x;
    }
    int pw[GGFIT_MAX_POOLS];   /* a pool's column: its name, 6 to 14 wide */
    for (uint32_t i = 0; i < s->n_pools; i++) {
        int n = (int)strlen(s->pool_names[i]);
        pw[i] = n < 6 ? 6 : n > 14 ? 14 : n;
    }
    ggfit__sb_printf(&sb, "\n  %7s", axis_names[s->axis]);
    if (ctx_col)
        ggfit__sb_printf(&sb, " %7s", "n_ctx");
    if (ngl_col)
        ggfit__sb_printf(&sb, " %4s", "-ngl");
    ggfit__sb_printf(&sb, " %4s %7s %6s %7s", "fits", "pp t/s", "tg t/s", "tg full");
    for (uint32_t i = 0; i < s->n_pools; i++)
        ggfit__sb_printf(&sb, " %*.*s", pw[i], pw[i], s->pool_names[i]);
    ggfit__sb_printf(&sb, "\n  %7s%s%s %4s %7s %6s %7s", "limit", ctx_col ? "        " : "",
                     ngl_col ? "     " : "", "", "", "", "");
    for (uint32_t i = 0; i < s->n_pools; i++)
        ggfit__sb_printf(&sb, " %*.1f", pw[i], gib(s->pool_limits[i]));
    ggfit__sb_printf(&sb, "\n");
    for (size_t k = 0; k < s->n_points; k++) {
        const ggfit_sweep_point *p = &s->points[k];
        ggfit__sb_printf(&sb, "  %7u", p->x);
        if (ctx_col)
            ggfit__sb_printf(&sb, " %7u", p->n_ctx);
        if (ngl_col)
            ggfit__sb_printf(&sb, " %4d", p->n_gpu_layers);
        ggfit__sb_printf(&sb, " %4s %7.0f %6.1f %7.1f", p->fits ? "yes" : "no", p->pp_tps,
                         p->tg_tps, p->tg_tps_full);
        for (uint32_t i = 0; i < s->n_pools; i++)
            ggfit__sb_printf(&sb, " %*.1f", pw[i], gib(p->used[i]));
        ggfit__sb_printf(&sb, "\n");
    }
    ggfit__sb_printf(&sb, "  limit: the most each may use; pp%u and tg%u at depth 0; tg full: "
                          "at depth n_ctx - %u (the cache full)", s->n_prompt, s->n_gen, s->n_gen);
    if (s->host_used)
        ggfit__sb_printf(&sb, "; host memory %.1f GB/s (%s)", s->host_bw_gbs, s->host_bw_from);
    ggfit__sb_printf(&sb, "\n");
    return ggfit__text_take(&sb);
}

char *ggfit_sweep_csv(const ggfit_sweep *s)
{
    ggfit_sb sb = { 0 };
    ggfit__sb_printf(&sb, "%s,n_ctx,n_gpu_layers,fits,pp_tps,tg_tps,tg_tps_full",
                     axis_ids[s->axis]);
    for (uint32_t i = 0; i < s->n_pools; i++)
        ggfit__sb_printf(&sb, ",used_%s,limit_%s", s->pool_names[i], s->pool_names[i]);
    ggfit__sb_printf(&sb, "\n");
    for (size_t k = 0; k < s->n_points; k++) {
        const ggfit_sweep_point *p = &s->points[k];
        ggfit__sb_printf(&sb, "%u,%u,%d,%d,%.2f,%.2f,%.2f", p->x, p->n_ctx, p->n_gpu_layers,
                         p->fits, p->pp_tps, p->tg_tps, p->tg_tps_full);
        for (uint32_t i = 0; i < s->n_pools; i++)
            ggfit__sb_printf(&sb, ",%llu,%llu", (unsigned long long)p->used[i],
                             (unsigned long long)s->pool_limits[i]);
        ggfit__sb_printf(&sb, "\n");
    }
    return ggfit__sb_take(&sb);
}

char *ggfit_sweep_json(const ggfit_sweep *s)
{
    char m[256];
    json_t *pools = json_array(), *pts = json_array();
    json_t *root = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i}", "axis",
                             axis_ids[s->axis], "model", s->model, "machine",
                             machine(s, m, sizeof m), "n_layer", (int)s->n_layer,
                             "n_ctx_train", (int)s->n_ctx_train, "n_ctx", (int)s->n_ctx,
                             "n_prompt", (int)s->n_prompt, "n_gen", (int)s->n_gen);
    char *out = NULL;
    if (!root || !pools || !pts ||
        json_object_set_new(root, "llama", ggfit__llama_json(&s->llama)) ||
        json_object_set_new(root, "host_bandwidth",
                            s->host_used ? json_pack("{s:f, s:s}", "gbs", s->host_bw_gbs,
                                                     "from", s->host_bw_from)
                                         : json_null()))
        goto done;
    for (uint32_t i = 0; i < s->n_pools; i++)
        if (json_array_append_new(pools, json_pack("{s:s, s:I}", "name", s->pool_names[i],
                                                   "limit", (json_int_t)s->pool_limits[i])))
            goto done;
    for (size_t k = 0; k < s->n_points; k++) {
        const ggfit_sweep_point *p = &s->points[k];
        json_t *used = json_array();
        for (uint32_t i = 0; used && i < s->n_pools; i++)
            if (json_array_append_new(used, json_integer((json_int_t)p->used[i]))) {
                json_decref(used);
                used = NULL;
            }
        if (!used || json_array_append_new(pts, json_pack("{s:i, s:b, s:b, s:i, s:i, s:f, "
                                                          "s:f, s:f, s:o}", "x", (int)p->x,
                                                          "fitted", p->fitted, "fits", p->fits,
                                                          "n_ctx", (int)p->n_ctx, "n_gpu_layers",
                                                          (int)p->n_gpu_layers, "pp_tps",
                                                          p->pp_tps, "tg_tps", p->tg_tps,
                                                          "tg_tps_full", p->tg_tps_full, "used",
                                                          used)))
            goto done;
    }
    int bad = json_object_set_new(root, "pools", pools);
    pools = NULL;
    bad = bad || json_object_set_new(root, "points", pts);
    pts = NULL;
    if (!bad)
        out = ggfit__json_doc(json_incref(root), "sweep", GGFIT__JSON_FLAGS);
done:
    json_decref(pools);
    json_decref(pts);
    json_decref(root);
    return out;
}

/* ---- the picture ------------------------------------------------------------ */

enum { W = 800, LEFT = 70, RIGHT = 200, TOP = 56, PANEL_H = 150, GAP = 46 };

static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b",
                                      "#e377c2", "#7f7f7f", "#17becf" };

/*
 * The chart's arithmetic goes without libm: the CLI then loads libc alone,
 * which saves about a quarter of a millisecond on every run, and these are
 * the only calls it would load libm for.
 */
static double dmax(double a, double b)
{
    return a > b || b != b ? a : b;   /* fmax for what is drawn */
}

/* log2(x) of an integer >= 1: the top bit's place, and the rest's ln by
 * 2 atanh((m - 1) / (m + 1)) with m = x / 2^e in [1, 2), whose terms fall
 * ninefold at least each step: 17 terms leave less than a unit in the last
 * place. */
static double log2_int(uint32_t x)
{
    int e = 0;
    while (e < 31 && x >> (e + 1))
        e++;
    double m = (double)x / (double)((uint32_t)1 << e), t = (m - 1) / (m + 1), t2 = t * t;
    double term = t, sum = 0;
    for (int k = 1; k < 35; k += 2, term *= t2)
        sum += term / k;
    return e + 2 * sum / 0.69314718055994530942;
}

/* A round number at or above v (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k). */
static double nice_max(double v)
{
    if (v <= 0 || v != v)
        return 1;
    double e = 1;   /* the power of ten at or below v: exact from 1e-22 to 1e22 */
    int k = 0;
    while (k < 22 && e * 10 <= v)
        e *= 10, k++;
    while (k > -22 && e > v) {
        k--;
        e = 1;
        for (int i = 0; i < -k; i++)
            e *= 10;
        e = 1 / e;
    }
    static const double m[] = { 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (v <= m[i] * e * 1.0000001)
            return m[i] * e;
    return 10 * e;
}

typedef struct plot {
    ggfit_sb *sb;
    const ggfit_sweep *s;
    double x0, x1;            /* the axis' range (log2 of the context) */
} plot;

static double xval(const plot *pl, uint32_t x)
{
    return pl->s->axis == GGFIT_SWEEP_CTX ? log2_int(x ? x : 1) : (double)x;
}

static double px(const plot *pl, uint32_t x)
{
    double span = pl->x1 > pl->x0 ? pl->x1 - pl->x0 : 1;
    return LEFT + (xval(pl, x) - pl->x0) / span * (W - LEFT - RIGHT);
}

static void xml_text(ggfit_sb *sb, const char *t)
{
    for (; *t; t++) {
        if (*t == '&')
            ggfit__sb_printf(sb, "&amp;");
        else if (*t == '<')
            ggfit__sb_printf(sb, "&lt;");
        else if (*t == '>')
            ggfit__sb_printf(sb, "&gt;");
        else
            ggfit__sb_printf(sb, "%c", *t);
    }
}

/* A panel's frame, grid and y labels; returns its y scale's top value. */
static double frame(plot *pl, int top, const char *title, double ymax)
{
    ggfit_sb *sb = pl->sb;
    double y1 = nice_max(ymax);
    int right = W - RIGHT;
    ggfit__sb_printf(sb, "<text x=\"%d\" y=\"%d\" class=\"t\">", LEFT, top - 8);
    xml_text(sb, title);
    ggfit__sb_printf(sb, "</text>\n");
    for (int i = 0; i <= 5; i++) {
        double y = top + PANEL_H - i * PANEL_H / 5.0;
        ggfit__sb_printf(sb, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"g\"/>\n"
                             "<text x=\"%d\" y=\"%.1f\" class=\"yl\">%g</text>\n",
                         LEFT, y, right, y, LEFT - 6, y + 4, y1 * i / 5);
    }
    /* x ticks: every point's value when few, else about 8 */
    size_t n = pl->s->n_points, every = n > 12 ? (n + 7) / 8 : 1;
    for (size_t k = 0; k < n; k += every) {
        uint32_t x = pl->s->points[k].x;
        char lab[32];
        if (pl->s->axis == GGFIT_SWEEP_CTX && x >= 1024 && x % 1024 == 0)
            snprintf(lab, sizeof lab, "%uK", x / 1024);
        else
            snprintf(lab, sizeof lab, "%u", x);
        ggfit__sb_printf(sb, "<text x=\"%.1f\" y=\"%d\" class=\"xl\">%s</text>\n", px(pl, x),
                         top + PANEL_H + 16, lab);
    }
    ggfit__sb_printf(sb, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"f\"/>\n",
                     LEFT, top, right - LEFT, PANEL_H);
    return y1;
}

/* One series: a line through the points, each marked (hollow when that
 * plan does not fit), and its name in the legend at row. */
static void series(plot *pl, int top, double y1, const double *v, const char *name,
                   const char *color, bool dashed, int row)
{
    ggfit_sb *sb = pl->sb;
    const ggfit_sweep *s = pl->s;
    ggfit__sb_printf(sb, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                     color, dashed ? " stroke-dasharray=\"5,3\"" : "");
    for (size_t k = 0; k < s->n_points; k++)
        ggfit__sb_printf(sb, "%s%.1f,%.1f", k ? " " : "", px(pl, s->points[k].x),
                         top + PANEL_H - v[k] / y1 * PANEL_H);
    ggfit__sb_printf(sb, "\"/>\n");
    for (size_t k = 0; k < s->n_points; k++)
        ggfit__sb_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" stroke=\"%s\" fill=\"%s\"/>\n",
                         px(pl, s->points[k].x), top + PANEL_H - v[k] / y1 * PANEL_H, color,
                         s->points[k].fits ? color : "white");
    int ly = top + 14 + row * 18;
    ggfit__sb_printf(sb, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                         "stroke-width=\"2\"%s/>\n<text x=\"%d\" y=\"%d\" class=\"lg\">",
                     W - RIGHT + 12, ly, W - RIGHT + 36, ly, color,
                     dashed ? " stroke-dasharray=\"5,3\"" : "", W - RIGHT + 42, ly + 4);
    xml_text(sb, name);
    ggfit__sb_printf(sb, "</text>\n");
}

char *ggfit_sweep_svg(const ggfit_sweep *s)
{
    ggfit_sb sb = { 0 };
    double tg[GGFIT_MAX_SWEEP], tgf[GGFIT_MAX_SWEEP], pp[GGFIT_MAX_SWEEP];
    double mem[GGFIT_MAX_POOLS][GGFIT_MAX_SWEEP];
    double tg_max = 0, pp_max = 0, mem_max = 0;
    for (size_t k = 0; k < s->n_points; k++) {
        tg[k] = s->points[k].tg_tps;
        tgf[k] = s->points[k].tg_tps_full;
        pp[k] = s->points[k].pp_tps;
        tg_max = dmax(tg_max, dmax(tg[k], tgf[k]));
        pp_max = dmax(pp_max, pp[k]);
        for (uint32_t i = 0; i < s->n_pools; i++) {
            mem[i][k] = gib(s->points[k].used[i]);
            mem_max = dmax(mem_max, mem[i][k]);
        }
    }
    /* the devices' limits set the scale; system memory's only when what
     * is used comes near it (a 12 GiB card beside 60 GiB of RAM) */
    for (uint32_t i = 0; i < s->n_pools; i++)
        if (!s->pool_host[i])
            mem_max = dmax(mem_max, gib(s->pool_limits[i]));
    for (uint32_t i = 0; i < s->n_pools; i++)
        if (s->pool_host[i] && gib(s->pool_limits[i]) < 1.5 * mem_max)
            mem_max = dmax(mem_max, gib(s->pool_limits[i]));
    plot pl = { &sb, s, 0, 1 };
    if (s->n_points) {
        pl.x0 = xval(&pl, s->points[0].x);
        pl.x1 = xval(&pl, s->points[s->n_points - 1].x);
    }
    int h = TOP + 3 * PANEL_H + 2 * GAP + 56;
    ggfit__sb_printf(&sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                          "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
                          "<style>.t{font-weight:bold}.g{stroke:#e4e4e4}.f{fill:none;"
                          "stroke:#888}.yl{text-anchor:end}.xl{text-anchor:middle}"
                          ".lg{font-size:11px}</style>\n<rect width=\"100%%\" height=\"100%%\" "
                          "fill=\"white\"/>\n<text x=\"%d\" y=\"20\" font-size=\"14\" "
                          "class=\"t\">", W, h, W, h, LEFT);
    xml_text(&sb, s->model);
    ggfit__sb_printf(&sb, " against %s%s</text>\n<text x=\"%d\" y=\"36\">", axis_names[s->axis],
                     s->axis == GGFIT_SWEEP_CTX ? " (llama.cpp's fit at each)" : "", LEFT);
    char m[256];
    xml_text(&sb, machine(s, m, sizeof m));
    ggfit__sb_printf(&sb, "; predicted by ggfit; hollow: does not fit</text>\n");
    char title[96];
    snprintf(title, sizeof title, "generation, tg%u [tokens/s]", s->n_gen);
    int top = TOP + 10;
    double y1 = frame(&pl, top, title, tg_max);
    series(&pl, top, y1, tg, "empty cache", colors[0], false, 0);
    series(&pl, top, y1, tgf, "cache full", colors[0], true, 1);
    top += PANEL_H + GAP;
    snprintf(title, sizeof title, "prompt, pp%u [tokens/s]", s->n_prompt);
    y1 = frame(&pl, top, title, pp_max);
    series(&pl, top, y1, pp, "empty cache", colors[1], false, 0);
    top += PANEL_H + GAP;
    y1 = frame(&pl, top, "memory used [GiB] (dashed: the most each may use)", mem_max);
    for (uint32_t i = 0; i < s->n_pools; i++) {
        const char *c = colors[(i + 2) % (sizeof colors / sizeof colors[0])];
        double ly = top + PANEL_H - gib(s->pool_limits[i]) / y1 * PANEL_H;
        series(&pl, top, y1, mem[i], s->pool_names[i], c, false, (int)i);
        if (ly < top)
            continue;   /* above the scale */
        ggfit__sb_printf(&sb, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
                              "stroke-dasharray=\"5,3\"/>\n", LEFT, ly, W - RIGHT, ly, c);
    }
    ggfit__sb_printf(&sb, "<text x=\"%d\" y=\"%d\" class=\"xl\">%s</text>\n</svg>\n",
                     (LEFT + W - RIGHT) / 2, top + PANEL_H + 32, axis_names[s->axis]);
    return ggfit__sb_take(&sb);
}
