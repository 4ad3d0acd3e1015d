/*
 * registry.c - the architectures ggfit knows, one registry row each
 * (ggfit__model_<id>, in src/models/<id>.c, or in the file of the
 * architecture whose graph it shares), and the lookup by
 * general.architecture. Adding an architecture is one file and one X()
 * here. Names are unique, so the order of the list does not matter.
 * Beside them, every architecture llama.cpp loads, for the list of what
 * ggfit does with each (ggfit_arch_get).
 */
#include <string.h>

#include "ggfit.h"
#include "llama/arch.h"
#include "versions/version.h"

#define MODELS(X) \
    X(apertus) X(bailingmoe2) X(cohere2) X(command_r) X(deepseek2) X(dots1) \
    X(ernie4_5) X(ernie4_5_moe) X(exaone4) X(falcon_h1) X(gemma) X(gemma2) \
    X(gemma3) X(gemma3n) X(gemma4) X(glm4) X(glm4moe) X(gptoss) X(granite) X(granitemoe) \
    X(granitehybrid) X(hunyuan_dense) X(hunyuan_moe) X(jamba) X(lfm2) X(lfm2moe) \
    X(llama) X(llama4) X(mamba) X(mamba2) X(minimax_m2) X(mistral3) \
    X(nemotron_h) X(olmo2) X(phi3) X(plamo2) X(qwen2) X(qwen2moe) X(qwen3) \
    X(qwen3moe) X(qwen3next) X(qwen35) X(qwen35moe) X(qwen3vl) X(qwen3vlmoe) X(seed_oss) X(smollm3) \
    X(starcoder2) X(nemotron_h_moe) X(mistral4) X(olmoe) X(phimoe) X(qwen2vl) \
    X(exaone_moe) X(bert) X(nomic_bert) X(nomic_bert_moe) X(jina_bert_v2) X(jina_bert_v3) X(modern_bert) X(eurobert) X(neo_bert) X(gemma_embedding) \
    X(rwkv6) X(rwkv6qwen2) X(rwkv7) X(arwkv7) X(plamo) X(plamo3) X(bitnet) \
    X(step35) X(kimi_linear) X(minimax_m3) X(deepseek32) X(glm_dsa) \
    X(falcon) X(gpt2) X(gptneox) X(bloom) X(mpt) X(starcoder) X(stablelm) X(refact) \
    X(codeshell) X(phi2) X(qwen) \
    X(dream) X(llada) X(llada_moe) X(rnd1) X(t5encoder) \
    X(internlm2) X(xverse) X(exaone) X(orion) X(arcee) X(maincoder) \
    X(minicpm) X(olmo) X(nanbeige) X(mellum) \
    X(bailingmoe) X(dbrx) X(arctic) X(grok) \
    X(openelm) X(nemotron) X(jais) X(chatglm) X(baichuan) X(smallthinker) X(llama_embed) X(pangu_embedded) X(hunyuan_vl) X(deci) X(minicpm3) X(plm) X(hy_v3) X(afmoe) X(cohere2moe) X(laguna) X(mimo2) X(grovemoe) \
    X(deepseek) X(jais2) X(deepseek2ocr) X(paddleocr) X(cogvlm) X(chameleon) \
    X(eagle3) \
    X(talkie) X(qwen3tts) X(t5) X(wavtokenizer_dec) X(deepseek4) \
    X(pockettts) X(muse_glimmer) X(granite_swa) X(graniteswitch) \
    X(dots3note) X(minimax_01) X(bailingmoe3) X(kimi_k3)

/* Architectures ggfit has no rules for, each with its row's why only
 * (src/models/<id>.c): projections take the generic rules as for any
 * unknown name; `ggfit archs` says why. */
#define REASONS(X) \
    X(gptj) X(mixtral) X(gemma4_assistant) X(dflash)

#define DECLARE(id) extern const ggfit_arch ggfit__model_##id;
MODELS(DECLARE)
REASONS(DECLARE)
#undef DECLARE

#define ROW(id) &ggfit__model_##id,
static const ggfit_arch *const models[] = { MODELS(ROW) };
static const ggfit_arch *const reasons[] = { REASONS(ROW) };
#undef ROW

/* Architectures not in the list get the plain transformer's rules and no
 * graph, and the projection says so. */
static const ggfit_arch generic = { .name = "", .mem = GGFIT_MEM_KV };

const ggfit_arch *ggfit__arch(const char *name, bool *known)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(models[i]->name, name) == 0) {
            *known = true;
            return models[i];
        }
    *known = false;
    return &generic;
}

/* ---- every architecture llama.cpp knows -----------------------------------
 * LLM_ARCH_NAMES in src/llama-arch.cpp at the newest supported version
 * (b10587; an older one lacks those whose row names the change that added
 * them), in its
 * order ("clip", a projector, is not a language model). */

/* Names in place rather than pointers: no relocation at each start. The
 * longest is 16 characters; one of 31 would still fit. */
static const char llama_archs[][32] = {
    "llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt",
    "baichuan", "starcoder", "refact", "bert", "modern-bert", "nomic-bert", "nomic-bert-moe",
    "neo-bert", "jina-bert-v2", "jina-bert-v3", "eurobert", "bloom", "stablelm", "qwen",
    "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe",
    "qwen35", "qwen35moe", "phi2", "phi3", "phimoe", "plamo", "plamo2", "plamo3", "codeshell",
    "orion", "internlm2", "minicpm", "minicpm3", "gemma", "gemma2", "gemma3", "gemma3n",
    "gemma4", "gemma4-assistant", "gemma-embedding", "starcoder2", "mamba", "mamba2", "jamba",
    "falcon-h1", "xverse", "command-r", "cohere2", "cohere2moe", "dbrx", "olmo", "olmo2",
    "olmoe", "muse-glimmer", "openelm", "arctic", "deepseek", "deepseek2", "deepseek2-ocr",
    "deepseek32", "deepseek4", "chatglm", "glm4", "glm4moe", "glm-dsa", "bitnet", "t5",
    "t5encoder", "jais", "jais2", "nemotron", "nemotron_h", "nemotron_h_moe", "exaone",
    "exaone4", "exaone-moe", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "granite", "granitemoe",
    "granitehybrid", "graniteswitch", "granite_swa", "chameleon", "wavtokenizer-dec", "plm",
    "bailingmoe", "bailingmoe2", "bailingmoe3", "dots1", "dots3note", "arcee", "afmoe",
    "laguna", "ernie4_5", "ernie4_5-moe", "hunyuan-moe", "hunyuan-dense", "hunyuan_vl",
    "hy_v3", "smollm3", "gpt-oss", "lfm2", "lfm2moe", "dream", "smallthinker", "llada",
    "llada-moe", "seed_oss", "grovemoe", "apertus", "minimax-01", "minimax-m2", "minimax-m3",
    "cogvlm", "rnd1", "pangu-embedded", "mistral3", "eagle3", "dflash", "mistral4",
    "paddleocr", "mimo2", "step35", "llama-embed", "maincoder", "kimi-linear", "kimi-k3",
    "talkie", "mellum", "nanbeige", "qwen3tts", "pockettts", "(unknown)",
};

#define N_LLAMA (sizeof llama_archs / sizeof llama_archs[0])
#define N_MODELS (sizeof models / sizeof models[0])
#define N_REASONS (sizeof reasons / sizeof reasons[0])

static const ggfit_arch *row_of(const char *name)
{
    for (size_t i = 0; i < N_MODELS; i++)
        if (strcmp(models[i]->name, name) == 0)
            return models[i];
    return NULL;
}

/* The reason-only row of a name, or NULL. */
static const ggfit_arch *reason_of(const char *name)
{
    for (size_t i = 0; i < N_REASONS; i++)
        if (strcmp(reasons[i]->name, name) == 0)
            return reasons[i];
    return NULL;
}

/* Row i of the models, then of the reasons; NULL past the end. */
static const ggfit_arch *any_row(size_t i)
{
    return i < N_MODELS ? models[i] : i < N_MODELS + N_REASONS ? reasons[i - N_MODELS] : NULL;
}

/* Rows of ggfit's that llama.cpp's list lacks (names older files carry)
 * come after llama.cpp's names: the k-th such row, or NULL. */
static const ggfit_arch *extra_row(size_t k)
{
    for (size_t i = 0; any_row(i); i++) {
        bool listed = false;
        for (size_t j = 0; j < N_LLAMA && !listed; j++)
            listed = strcmp(any_row(i)->name, llama_archs[j]) == 0;
        if (!listed && k-- == 0)
            return any_row(i);
    }
    return NULL;
}

size_t ggfit_arch_count(void)
{
    size_t n = N_LLAMA;
    while (extra_row(n - N_LLAMA))
        n++;
    return n;
}

ggfit_status ggfit_arch_get(size_t i, ggfit_arch_info *out)
{
    if (!out)
        return GGFIT_EINVAL;
    memset(out, 0, sizeof *out);
    const ggfit_arch *a;
    if (i < N_LLAMA) {
        out->name = llama_archs[i];
        out->in_llama = true;
        a = row_of(out->name);
    } else if (!(a = extra_row(i - N_LLAMA))) {
        return GGFIT_EINVAL;
    } else {
        out->name = a->name;
    }
    const ggfit_arch *r = reason_of(out->name);
    if (!a || a == r) {
        out->status = GGFIT_ARCH_GENERIC;
        out->memory = "KV cache (generic rules)";
        out->why = r ? r->why : NULL;
        return GGFIT_OK;
    }
    out->status = a->build ? GGFIT_ARCH_EXACT : GGFIT_ARCH_NO_GRAPH;
    out->why = a->build ? NULL : a->why;
    static const char *const mem[] = {
        [GGFIT_MEM_KV] = "KV cache", [GGFIT_MEM_RECURRENT] = "recurrent state",
        [GGFIT_MEM_HYBRID] = "KV cache and recurrent state",
        [GGFIT_MEM_NONE] = "none (no KV cache)",
    };
    out->memory = (unsigned)a->mem < sizeof mem / sizeof mem[0] && mem[a->mem] ? mem[a->mem]
                                                                             : "other";
    if (a->mem == GGFIT_MEM_KV && a->swa_period)
        out->memory = "KV cache, sliding window";
    return GGFIT_OK;
}

/* The row of architecture i, as ggfit_arch_get finds it; NULL for a name
 * with generic rules only. */
static const ggfit_arch *row_at(size_t i)
{
    const ggfit_arch *a = i < N_LLAMA ? row_of(llama_archs[i]) : extra_row(i - N_LLAMA);
    return a && a != reason_of(a->name) ? a : NULL;
}

uint32_t ggfit_arch_added(size_t i, const char **commit)
{
    const ggfit_arch *a = row_at(i);
    const ggfit__change_row *c = &ggfit__llama_changes[a ? a->added : LLAMA_CHANGE_NONE];
    if (commit)
        *commit = c->commit;
    return c->build;
}

bool ggfit_arch_exact_at(size_t i, uint32_t build)
{
    const ggfit_arch *a = row_at(i);
    return a && a->build && ggfit__llama_has(build, (ggfit__llama_change)a->added);
}
