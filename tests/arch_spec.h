/*
 * arch_spec.h - the specs of small models that the architecture tests
 * (tests/test_archs.c, tests/test_arch_<family>.c) write and project.
 * Each header project_all writes is named <arch>-<n>.gguf, n counting the
 * calls of the test program; GGFIT_ARCHS_DUMP=DIR keeps them under those
 * names, which is how data/tiny/ is made, and lists each with the spec's
 * place in DIR/SPECS: tests/test_tiny.c writes them all again and holds
 * data/tiny/ to them byte for byte, and project_all holds each to the
 * figures llama.cpp printed for its file (data/oracle/llamacpp.jsonl).
 */
#ifndef GGFIT_ARCH_SPEC_H
#define GGFIT_ARCH_SPEC_H

#include <jansson.h>

#include "gguf_writer.h"
#include "test_util.h"

enum { E = 256, HD = 64, NH = E / HD, NKV = 2, F = 512, V = 1000, NL = 3, NX = 4 };

/* A header under construction: keys, then tensors. */
typedef struct kv {
    char key[96];
    int kind;   /* 'u' u32, 'f' f32, 's' string, 'b' bool, 'a' u32 array, 'g' f32 array,
                   'r' any array */
    uint32_t u;
    uint32_t a[4];  /* 'a': u values */
    float f;
    const char *s;
    const void *arr;    /* 'r': u elements of GGUF type arr_type, packed */
    uint32_t arr_type;
} kv;

typedef struct model_spec {
    const char *arch;
    kv kvs[48];
    size_t n_kv;
    gw_tensor_spec t[768];
    char names[768][64];
    size_t n_t;
} model_spec;

void key_u32(model_spec *s, const char *suffix, uint32_t v);
void key_f32(model_spec *s, const char *suffix, float v);
void key_bool(model_spec *s, const char *suffix, bool v);
void key_arr4(model_spec *s, const char *suffix, const uint32_t v[4]);
/* An array of n elements of GGUF type `type` (bool: one byte each; 32-bit
 * types: four), read from v, which must outlive the spec. */
void key_arr(model_spec *s, const char *suffix, uint32_t type, const void *v, uint32_t n);
void key_str(model_spec *s, const char *suffix, const char *v);
/* Removes the key "<arch>.<suffix>" (every copy), if any. */
void key_drop(model_spec *s, const char *suffix);
/* The keys the architecture's row requires (llama.cpp's load_arch_hparams
 * reads them without a default) that s lacks, each set to 1: for tests of
 * a later refusal. */
void key_required(model_spec *s);
/* Keys under "<arch>." and tensors (fmt with %d = il), in file order. */
void tensor(model_spec *s, const char *fmt, int il, int64_t ne0, int64_t ne1, int64_t ne2);
/* A spec of arch with the usual keys (E, heads, NL blocks, ...); its file. */
void spec_init(model_spec *s, const char *arch);
void write_spec(const model_spec *s, gw *w);
/* Common tensors: separate Q/K/V (+ biases), a SwiGLU FFN, embeddings and
 * output. */
void attn_qkv(model_spec *s, int il, bool bias);
void ffn_swiglu(model_spec *s, int il);
void head(model_spec *s, bool output, bool output_bias);
/* The bytes of a row. Projections: project_all runs -fa auto/on/off on one
 * RPC device and on the CPU, fails if compute is estimated, holds the
 * model to every case llama.cpp printed for its file (oracle_check), then
 * checks kept graphs against fresh ones; returns the last compute bytes.
 * `where` ("file:line", the macro's) names the spec in failures and in
 * GGFIT_ARCHS_DUMP's list. */
uint64_t total(const ggfit_mem *m);
void kept_equals_fresh(const model_spec *s, const gw *w, ggfit_model *kept, uint32_t n_ctx);
uint64_t project_all_at(const model_spec *s, uint32_t n_ctx, const char *where);
#define SPEC_STR_(x) #x
#define SPEC_STR(x) SPEC_STR_(x)
#define project_all(s, n_ctx) project_all_at((s), (n_ctx), __FILE__ ":" SPEC_STR(__LINE__))

/* llama.cpp's figures for the header w, held to m (oracle_check): those of
 * data/tiny/<file>, or of another file of data/tiny/ with w's bytes when
 * this one's differ (the spec numbered otherwise; test_tiny says so) or
 * have none recorded (a copy). Fails, naming where, when no file holds
 * w's bytes though <file> exists (the spec changed); nothing for a new
 * spec, whose file test_tiny asks for. */
void check_recorded(const char *file, const gw *w, ggfit_model *m, const char *where);
/* data/oracle/b<build>/llamacpp.jsonl (GGFIT_ORACLE_DIR for data/oracle):
 * llama.cpp's figures at each supported build. */
const char *oracle_path(uint32_t build);
/* The cases oracle_path() holds for `file` (llama.cpp's bytes for it,
 * tools/llamacmp.py --record), each projected on m with its flags and 0
 * to 4 RPC devices of 80 GiB: every row must be equal to the byte, or the
 * test fails naming the file, `where`, the case and the figure. Returns
 * how many cases there were (0: none recorded). */
int oracle_check(ggfit_model *m, const char *file, const char *where);
/* One recorded case (a parsed line of llamacpp.jsonl) projected on m:
 * whether every row is llama.cpp's; if not, the first difference in why. */
bool oracle_case(ggfit_model *m, json_t *c, uint32_t build, char *why, size_t n);
/* The flags of a recorded case ("-c 4096 -fa off"; "--for server":
 * llama-server's rules, ggfit_params_server) into p. */
void oracle_params(ggfit_params *p, const char *args);
/* One projection of the model on the CPU with the default flags and
 * n_ctx, which must succeed (not written out with GGFIT_ARCHS_DUMP). */
void project_one(const model_spec *s, uint32_t n_ctx, ggfit_projection *pr);
/* Whether two models project to the same bytes on the CPU (project_one). */
bool same_projection(const model_spec *a, const model_spec *b, uint32_t n_ctx);
/* The projection refuses the model with GGFIT_EFORMAT and a message
 * holding `what`, as llama.cpp refuses to load it. */
void refused_with(const model_spec *s, const char *what);

#endif
