/*
 * test_swap.c - llama-swap's config read as llama-swap v250 reads it
 * (src/common/swap.c): env macros, macros and their order, ${PORT} and
 * ${MODEL_ID}, comment lines, how a cmd is split, anchors and merge keys,
 * duplicate keys, groups and their defaults, the errors' words, hostile
 * files, and which models each request stops (groupSwapper.EvictionFor).
 * The example configs are the YAML files of tests/swap.
 */
#include "test_util.h"

#include <sys/stat.h>
#include <time.h>

#include "common/swap.h"

/* text read as a config (cmocka fails the test on an error) */
static void parse(const char *text, ggfit__swap *s)
{
    char *err = NULL;
    if (ggfit__swap_parse(text, strlen(text), "config t.yaml", s, &err) != GGFIT_OK)
        fail_msg("%s\n-> %s", text, err);
}

/* text refused with status st and a message containing want */
static void refused(const char *text, ggfit_status st, const char *want)
{
    ggfit__swap s;
    char *err = NULL;
    ggfit_status got = ggfit__swap_parse(text, strlen(text), "config t.yaml", &s, &err);
    if (got != st || !err || !strstr(err, want))
        fail_msg("%s\n-> %d '%s', not %d '%s'", text, got, err ? err : "(none)", st, want);
    assert_non_null(strstr(err, "config t.yaml: "));
    assert_null(s.models);
    ggfit_free(err);
    ggfit__swap_free(&s);
}

static const ggfit__swap_model *model(const ggfit__swap *s, const char *name)
{
    for (uint32_t k = 0; k < s->n_models; k++)
        if (!strcmp(s->models[k].name, name))
            return &s->models[k];
    fail_msg("no model %s", name);
    return NULL;
}

/* model name's argv as "<a> <b> ..." */
static const char *words(const ggfit__swap *s, const char *name)
{
    static char out[4096];
    const ggfit__swap_model *m = model(s, name);
    out[0] = '\0';
    for (int i = 0; i < m->argc; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s<%s>", i ? " " : "",
                 m->argv[i]);
    assert_null(m->argv[m->argc]);
    return out;
}

static const char *group_of(const ggfit__swap *s, const char *name)
{
    uint32_t g = model(s, name)->group;
    return g == GGFIT__SWAP_NO_GROUP ? "-" : s->groups[g].name;
}

/* the models stopped when asked is requested while those of running (a
 * space-separated list) are up, as a space-separated list */
static const char *evicts(const ggfit__swap *s, const char *asked, const char *running)
{
    static char out[1024];
    bool up[64] = { 0 }, stopped[64];
    char buf[512];
    assert_true(s->n_models <= 64);
    snprintf(buf, sizeof buf, "%s", running);
    for (char *t = strtok(buf, " "); t; t = strtok(NULL, " "))
        up[model(s, t) - s->models] = true;
    ggfit__swap_evicts(s, (uint32_t)(model(s, asked) - s->models), up, stopped);
    out[0] = '\0';
    for (uint32_t k = 0; k < s->n_models; k++)
        if (stopped[k])
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", *out ? " " : "",
                     s->models[k].name);
    return out;
}

static void read_file(const char *path, ggfit__swap *s)
{
    char *err = NULL;
    if (ggfit__swap_read(path, s, &err) != GGFIT_OK)
        fail_msg("%s: %s", path, err);
}

/* ---- the example configs ------------------------------------------------------ */

static void test_issue_example(void **state)
{
    (void)state;
    ggfit__swap s;
    read_file("tests/swap/issue.yaml", &s);
    assert_int_equal(s.n_models, 4);
    assert_string_equal(s.models[0].name, "chat");     /* byte-sorted */
    assert_string_equal(s.models[3].name, "rerank");
    assert_string_equal(words(&s, "chat"),
                        "</opt/llama.cpp/build/bin/llama-server> <--host> <127.0.0.1> <--port> "
                        "<9100> <--no-webui> <-ngl> <99> <-fa> <on> "
                        "<-m> </models/Qwen3-30B-A3B-Q4_K_M.gguf> <--ctx-size> <16384> "
                        "<-ot> <.ffn_.*_exps.=CPU> "
                        "<--mmproj> </models/mmproj-Qwen3-30B-A3B-F16.gguf>");
    assert_string_equal(words(&s, "coder"),
                        "</opt/llama.cpp/build/bin/llama-server> <--host> <127.0.0.1> <--port> "
                        "<9101> <--no-webui> <-ngl> <99> <-fa> <on> "
                        "<-m> </models/Qwen2.5-Coder-32B-Instruct-Q4_K_M.gguf> "
                        "<-md> </models/Qwen2.5-Coder-0.5B-Instruct-Q8_0.gguf> <--draft-max> "
                        "<16> <--draft-min> <4> <-ngld> <99> <-c> <32768>");
    assert_string_equal(words(&s, "rerank"),
                        "</opt/llama.cpp/build/bin/llama-server> <--host> <127.0.0.1> <--port> "
                        "<9103> <--no-webui> <-ngl> <99> <-fa> <on> "
                        "<-m> </models/bge reranker v2 m3 Q4_K_M.gguf> <--reranking> <-c> <8192>");
    const ggfit__swap_model *coder = model(&s, "coder"), *chat = model(&s, "chat");
    assert_int_equal(coder->n_env, 2);
    assert_string_equal(coder->env[1], "LLAMA_ARG_CACHE_TYPE_K=q8_0");
    assert_string_equal(coder->proxy, "http://localhost:9101");
    assert_int_equal(coder->port, 9101);
    assert_int_equal(chat->ttl, 900);                 /* globalTTL */
    assert_int_equal(model(&s, "rerank")->ttl, 0);
    assert_int_equal(chat->n_aliases, 2);
    assert_string_equal(chat->aliases[0], "gpt-4o-mini");
    assert_int_equal(s.health_check_timeout, 300);
    assert_int_equal(s.unload_timeout, 10);
    /* groups in the file's order, then "(default)", empty here */
    assert_int_equal(s.n_groups, 3);
    assert_string_equal(s.groups[0].name, "llm");
    assert_true(s.groups[0].swap && s.groups[0].exclusive && !s.groups[0].persistent);
    assert_string_equal(s.groups[1].name, "rag");
    assert_true(!s.groups[1].swap && !s.groups[1].exclusive && s.groups[1].persistent);
    assert_string_equal(s.groups[2].name, "(default)");
    assert_int_equal(s.groups[2].n_members, 0);
    assert_string_equal(group_of(&s, "embed"), "rag");
    /* trimmed, unknown names dropped */
    assert_int_equal(s.n_preload, 2);
    assert_string_equal(s.preload[1], "rerank");
    /* the coder takes the chat model's place; the rag pair stays */
    assert_string_equal(evicts(&s, "coder", "chat embed rerank"), "chat");
    assert_string_equal(evicts(&s, "embed", "chat rerank"), "");
    assert_int_equal(ggfit__swap_find(&s, "gpt-4o-mini"), 0);
    assert_int_equal(ggfit__swap_find(&s, "rerank"), 3);
    assert_int_equal(ggfit__swap_find(&s, "nothing"), UINT32_MAX);
    ggfit__swap_free(&s);
    ggfit__swap_free(&s);   /* twice is harmless */
}

static void test_spec_example(void **state)
{
    (void)state;
    ggfit__swap s;
    read_file("tests/swap/spec5.yaml", &s);
    assert_string_equal(words(&s, "chat-32b"),
                        "</opt/llama.cpp/build/bin/llama-server> <--host> <127.0.0.1> <--port> "
                        "<9100> <--no-webui> <-ngl> <99> <-m> </models/Qwen3-32B-Q4_K_M.gguf> "
                        "<--ctx-size> <32768> <-ot> <.ffn_(up|down)_exps.=CPU> <--mmproj> "
                        "</models/mmproj-Qwen3-F16.gguf>");
    /* folded: one line; the global ctx */
    assert_string_equal(words(&s, "chat-8b"),
                        "</opt/llama.cpp/build/bin/llama-server> <--port> <9101> <-m> "
                        "</models/Llama-3.1-8B-Q8_0.gguf> <-c> <8192> <-fa> <on>");
    assert_int_equal(model(&s, "embed")->port, 9102);
    assert_int_equal(model(&s, "rerank")->port, 9103);
    assert_int_equal(model(&s, "rerank")->ttl, 600);
    /* the trace of §5: preload embed, rerank; chat-32b; chat-8b */
    assert_string_equal(evicts(&s, "rerank", "embed"), "");
    assert_string_equal(evicts(&s, "chat-32b", "embed rerank"), "");
    assert_string_equal(evicts(&s, "chat-8b", "chat-32b embed rerank"), "chat-32b");
    ggfit__swap_free(&s);
}

/* llama-swap's TestConfig_SanitizeCommand vector */
static void test_sanitize(void **state)
{
    (void)state;
    ggfit__swap s;
    read_file("tests/swap/sanitize.yaml", &s);
    assert_string_equal(words(&s, "m"),
                        "<python> <model1.py> <-a> <double quotes> <--arg2> <single quotes> <-s> "
                        "<--arg3> <123> <--arg4> <\"string in string\"> <-c> <'single quoted'>");
    assert_int_equal(model(&s, "m")->port, 0);
    ggfit__swap_free(&s);
}

static void test_anchors_example(void **state)
{
    (void)state;
    ggfit__swap s;
    read_file("tests/swap/anchors.yaml", &s);
    const ggfit__swap_model *a = model(&s, "a"), *b = model(&s, "b");
    /* <<: [*defaults, *kvcache]: env from defaults only (shallow, earlier wins) */
    assert_int_equal(a->n_env, 2);
    assert_string_equal(a->env[0], "LLAMA_ARG_N_GPU_LAYERS=99");
    assert_true(a->unlisted);
    assert_int_equal(a->ttl, 300);
    assert_string_equal(a->proxy, "http://127.0.0.1:5800");
    assert_string_equal(words(&s, "a"), "<llama-server> <--port> <5800> <-m> </m/a.gguf>");
    /* own keys win over the merged ones */
    assert_int_equal(b->ttl, 60);
    assert_string_equal(b->env[0], "LLAMA_ARG_CACHE_TYPE_K=q8_0");
    assert_string_equal(words(&s, "b"), "<llama-server> <--port> <5801> <-m> </m/b.gguf>");
    /* an aliased scalar; an id with a space */
    assert_string_equal(words(&s, "c d"), "</usr/bin/llama-server> <--port> <5802>");
    /* no groups: everything in "(default)", one at a time */
    assert_int_equal(s.n_groups, 1);
    assert_int_equal(s.groups[0].n_members, 3);
    assert_string_equal(evicts(&s, "a", "b"), "b");
    ggfit__swap_free(&s);
}

/* ---- env macros ------------------------------------------------------------------- */

static void test_env_macros(void **state)
{
    (void)state;
    ggfit__swap s;
    setenv("SWAP_T_BIN", "/opt/bin", 1);
    setenv("SWAP_T_ODD", "a\\b\"c", 1);
    setenv("SWAP_T_ID", "m1", 1);
    unsetenv("SWAP_T_UNSET");
    /* anywhere in the text, keys too; a comment's name need not be set */
    parse("# ${env.SWAP_T_UNSET} in a comment\n"
          "models:\n"
          "  ${env.SWAP_T_ID}:\n"
          "    proxy: http://h:1\n"
          "    cmd: ${env.SWAP_T_BIN}/llama-server -m x\n"
          "    env: [\"ODD=${env.SWAP_T_ODD}\", 'RAW=${env.SWAP_T_ODD}']\n", &s);
    assert_string_equal(words(&s, "m1"), "</opt/bin/llama-server> <-m> <x>");
    /* '\' and '"' escaped: decoded back in a double-quoted scalar, doubled elsewhere */
    assert_string_equal(model(&s, "m1")->env[0], "ODD=a\\b\"c");
    assert_string_equal(model(&s, "m1")->env[1], "RAW=a\\\\b\\\"c");
    ggfit__swap_free(&s);
    refused("models:\n  m:\n    cmd: ${env.SWAP_T_UNSET} --port ${PORT}\n", GGFIT_EINVAL,
            "environment variable 'SWAP_T_UNSET' is not set");
    /* inside a | block a # line is content, not a comment: its variable must be set */
    refused("models:\n  m:\n    cmd: |\n      x --port ${PORT}\n      # ${env.SWAP_T_UNSET}\n",
            GGFIT_EINVAL, "environment variable 'SWAP_T_UNSET' is not set");
    setenv("SWAP_T_NL", "a\nb", 1);
    refused("models:\n  m:\n    cmd: x ${env.SWAP_T_NL}\n", GGFIT_EINVAL,
            "environment variable 'SWAP_T_NL' contains newlines or null bytes which are not "
            "allowed in YAML substitution");
    /* a file that does not parse: the names from its text */
    refused("models: [\n ${env.SWAP_T_UNSET}\n", GGFIT_EINVAL,
            "environment variable 'SWAP_T_UNSET' is not set");
    /* ${env.x} with a name that cannot be one is left alone (and is no macro) */
    parse("models:\n  m:\n    proxy: http://h:1\n    cmd: a ${env.1x} ${HOME:-x} $HOME\n", &s);
    assert_string_equal(words(&s, "m"), "<a> <${env.1x}> <${HOME:-x}> <$HOME>");
    ggfit__swap_free(&s);
}

/* ---- macros ------------------------------------------------------------------------ */

static void test_macros(void **state)
{
    (void)state;
    ggfit__swap s;
    /* a macro uses those declared before it; a model's own replaces a global in place (seen
     * by the globals after it) or is appended; MODEL_ID everywhere */
    parse("macros:\n"
          "  bin: /b/llama-server\n"
          "  tag: g\n"
          "  msg: \"v-${tag}\"\n"
          "  srv: ${bin} --port ${PORT} -a ${MODEL_ID}\n"
          "models:\n"
          "  m:\n"
          "    macros: {tag: m, extra: \"${msg}+\"}\n"
          "    cmd: ${srv} ${msg} ${extra}\n"
          "  n:\n"
          "    cmd: ${srv} ${msg}\n", &s);
    assert_string_equal(words(&s, "m"), "</b/llama-server> <--port> <5800> <-a> <m> <v-m> <v-m+>");
    assert_string_equal(words(&s, "n"), "</b/llama-server> <--port> <5801> <-a> <n> <v-g>");
    ggfit__swap_free(&s);
    /* declared after its user: left, then an unknown macro */
    refused("macros:\n  a: x ${b}\n  b: y\nmodels:\n  m:\n    proxy: http://h:1\n    cmd: ${a}\n",
            GGFIT_EINVAL, "unknown macro '${b}' found in m.cmd");
    /* a model-only macro cannot be used in a global's value */
    refused("macros:\n  g: ${own}\nmodels:\n  m:\n    macros: {own: 1}\n    proxy: http://h:1\n"
            "    cmd: ${g}\n", GGFIT_EINVAL, "unknown macro '${own}' found in m.cmd");
    /* types: a value that is exactly ${x} keeps x's type; spliced values as Go prints them */
    parse("macros:\n"
          "  t: 60\n  f1: 0.7\n  f2: 1.0\n  f3: 1e-5\n  f4: 1000000.0\n  f5: 123456.0\n"
          "  b: true\n  o: 010\n  h: 0x1F\n  s: \"60\"\n"
          "models:\n"
          "  m:\n"
          "    ttl: ${t}\n"
          "    unlisted: ${b}\n"
          "    proxy: http://h:1\n"
          "    cmd: x ${f1} ${f2} ${f3} ${f4} ${f5} ${b} ${o} ${h} ${s}\n", &s);
    assert_string_equal(words(&s, "m"),
                        "<x> <0.7> <1> <1e-05> <1e+06> <123456> <true> <8> <31> <60>");
    assert_int_equal(model(&s, "m")->ttl, 60);
    assert_true(model(&s, "m")->unlisted);
    ggfit__swap_free(&s);
    /* a quoted "60" stays a string: no int */
    refused("macros:\n  s: \"60\"\nmodels:\n  m:\n    ttl: ${s}\n    proxy: http://h:1\n",
            GGFIT_EINVAL, "line 5: cannot unmarshal !!str `60` into int");
    /* the declarations' checks, global then per model */
    refused("macros:\n  a234567890123456789012345678901234567890123456789012345678901234: x\n",
            GGFIT_EINVAL, "macro name "
            "'a234567890123456789012345678901234567890123456789012345678901234' "
            "exceeds maximum length of 63 characters");
    refused("macros:\n  a.b: x\n", GGFIT_EINVAL,
            "macro name 'a.b' contains invalid characters, must match pattern ^[a-zA-Z0-9_-]+$");
    refused("macros:\n  a:\n", GGFIT_EINVAL,
            "macro 'a' has invalid type <nil>, must be a scalar type (string, int, float, or "
            "bool)");
    refused("macros:\n  a: [1]\n", GGFIT_EINVAL, "macro 'a' has invalid type []interface {}");
    refused("macros:\n  a: {x: 1}\n", GGFIT_EINVAL,
            "macro 'a' has invalid type map[string]interface {}");
    refused("macros:\n  a: 2024-01-02\n", GGFIT_EINVAL, "macro 'a' has invalid type time.Time");
    refused("macros:\n  a: x${a}\n", GGFIT_EINVAL, "macro 'a' contains self-reference");
    refused("macros:\n  PORT: 1\n", GGFIT_EINVAL, "macro name 'PORT' is reserved");
    refused("macros:\n  MODEL_ID: 1\n", GGFIT_EINVAL, "macro name 'MODEL_ID' is reserved");
    refused("macros: [a]\n", GGFIT_EINVAL, "macros must be a mapping");
    refused("models:\n  m:\n    macros:\n      PID: 1\n", GGFIT_EINVAL,
            "model m: macro name 'PID' is reserved");
    refused("models:\n  m:\n    macros: 5\n", GGFIT_EINVAL, "macros must be a mapping");
    /* macros in every top-level value (startPort included), not in keys */
    parse("macros:\n  sp: 7000\n  x: y\nstartPort: ${sp}\nmodels:\n  ${x}:\n"
          "    cmd: a --port ${PORT}\n", &s);
    assert_string_equal(s.models[0].name, "${x}");
    assert_int_equal(s.models[0].port, 7000);
    ggfit__swap_free(&s);
}

/* ---- ${PORT}, ${MODEL_ID}, ${PID} and leftovers --------------------------------- */

static void test_ports(void **state)
{
    (void)state;
    ggfit__swap s;
    /* byte-sorted ids ('B' < 'a'); only models whose cmd asks take a port; one that comes
     * through a macro counts */
    parse("macros:\n  p: --port ${PORT}\n"
          "startPort: 5000\n"
          "models:\n"
          "  c: {cmd: \"x ${p}\"}\n"
          "  b: {cmd: x --port 8080, proxy: \"http://localhost:8080\"}\n"
          "  a: {cmd: \"x --port ${PORT}\"}\n"
          "  B: {cmd: \"x --port ${PORT}\", metadata: {port: \"${PORT}\"}}\n", &s);
    assert_int_equal(model(&s, "B")->port, 5000);
    assert_int_equal(model(&s, "a")->port, 5001);
    assert_int_equal(model(&s, "b")->port, 0);
    assert_int_equal(model(&s, "c")->port, 5002);
    assert_string_equal(model(&s, "c")->proxy, "http://localhost:5002");
    assert_string_equal(words(&s, "c"), "<x> <--port> <5002>");
    ggfit__swap_free(&s);
    /* the default proxy needs ${PORT} in cmd */
    refused("models:\n  m:\n    cmd: x --port 8080\n", GGFIT_EINVAL,
            "model m: proxy uses ${PORT} but cmd does not - ${PORT} is only available when used "
            "in cmd");
    refused("models:\n  m:\n    cmd: x\n    proxy: http://h:${PORT}\n", GGFIT_EINVAL,
            "model m: proxy uses ${PORT} but cmd does not");
    refused("startPort: 0\n", GGFIT_EINVAL, "startPort must be greater than 1");
    refused("startPort: abc\n", GGFIT_EINVAL, "line 1: cannot unmarshal !!str `abc` into int");
    /* ${PID} only in cmdStop */
    parse("models:\n  m:\n    cmd: x --port ${PORT}\n    cmdStop: kill ${PID}\n", &s);
    assert_string_equal(model(&s, "m")->cmd_stop, "kill ${PID}");
    ggfit__swap_free(&s);
    refused("models:\n  m:\n    cmd: x --port ${PORT} ${PID}\n", GGFIT_EINVAL,
            "unknown macro '${PID}' found in m.cmd");
    refused("models:\n  m:\n    proxy: http://h:1\n    cmd: x\n    cmdStop: kill ${PORT}\n",
            GGFIT_EINVAL, "macro '${PORT}' should have been substituted in m.cmdStop");
    refused("models:\n  m:\n    proxy: http://h:1\n    cmd: x\n    env: [\"P=${PORT}\"]\n",
            GGFIT_EINVAL, "model m env: unknown macro '${PORT}'");
    refused("models:\n  m:\n    proxy: http://h:1\n    cmd: x\n    metadata: {a: {b: \"${q}\"}}\n",
            GGFIT_EINVAL, "model m metadata: unknown macro '${q}'");
    refused("models:\n  m:\n    proxy: http://h:1\n    cmd: x\n"
            "    filters: {stripParams: \"${q}\"}\n", GGFIT_EINVAL,
            "unknown macro '${q}' found in m.filters.stripParams");
    refused("hooks:\n  on_startup:\n    preload: [\"${MODEL_ID}\"]\n", GGFIT_EINVAL,
            "hooks.on_startup.preload[0]: unknown macro '${MODEL_ID}'");
    /* an unknown top-level key is not checked */
    parse("defs: {a: \"${nothing}\"}\n", &s);
    ggfit__swap_free(&s);
}

/* ---- comments and splitting --------------------------------------------------------- */

static void test_comments(void **state)
{
    (void)state;
    ggfit__swap s;
    /* '#' lines dropped before macros (a macro in one is never an error); a '#' inside a
     * line is a word; a comment line that a macro brings is dropped when the cmd is split */
    parse("macros:\n  note: |\n    # from a macro\n    -v\n"
          "models:\n"
          "  m:\n"
          "    proxy: http://h:1\n"
          "    cmd: | # a YAML comment\n"
          "      x -c 4096 # ctx\n"
          "        # ${undefined} --port 1\n"
          "      ${note}\n"
          "      --a 'b  c' \\\n"
          "      --d \"e\\\"f\" g\\ h \"\" ''\n"
          "      \"open quote to the end\n"
          "      z\n", &s);
    assert_string_equal(words(&s, "m"),
                        "<x> <-c> <4096> <#> <ctx> <-v> <--a> <b  c> <--d> <e\"f> <g h> <> <> "
                        "<open quote to the end\nz\n>");
    /* the comment line is gone from the stored cmd, the macro's stays until the split */
    assert_null(strstr(model(&s, "m")->cmd, "undefined"));
    assert_non_null(strstr(model(&s, "m")->cmd, "# from a macro"));
    ggfit__swap_free(&s);
    /* folded: a '#' line becomes words, a trailing '\' escapes the space after it */
    parse("models:\n  m:\n    proxy: http://h:1\n    cmd: >\n      x --a 1 \\\n      # c\n"
          "      --b\n", &s);
    assert_string_equal(words(&s, "m"), "<x> <--a> <1> < #> <c> <--b>");
    ggfit__swap_free(&s);
    /* double quotes keep a '\' before other characters; single quotes keep everything;
     * outside quotes '\x' is x (Windows paths lose their '\') */
    parse("models:\n  m:\n    proxy: http://h:1\n"
          "    cmd: 'x \"a\\b\" ''c\\d'' C:\\m\\x.gguf \\$HOME tab\there'\n", &s);
    assert_string_equal(words(&s, "m"), "<x> <a\\b> <c\\d> <C:mx.gguf> <$HOME> <tab> <here>");
    ggfit__swap_free(&s);
    /* CRLF files; a comment line indented with a no-break space (Go's TrimSpace) */
    parse("models:\r\n  m:\r\n    proxy: http://h:1\r\n    cmd: |\r\n      x -a\r\n"
          "      \xc2\xa0# c\r\n      -b\r\n", &s);
    assert_string_equal(words(&s, "m"), "<x> <-a> <-b>");
    ggfit__swap_free(&s);
    /* no cmd: no words (llama-swap fails when it starts it) */
    parse("models:\n  m:\n    proxy: http://h:1\n    cmd: \"  # only\"\n  n:\n", &s);
    assert_int_equal(model(&s, "m")->argc, 0);
    assert_int_equal(model(&s, "n")->argc, 0);
    assert_string_equal(model(&s, "n")->proxy, "");   /* a null model: Go's zero value */
    ggfit__swap_free(&s);
}

/* ---- YAML: merge keys, duplicates, types, unknown keys -------------------------------- */

static void test_yaml(void **state)
{
    (void)state;
    ggfit__swap s;
    /* merge: own keys first, then the sources in order; a source's own merge applied */
    parse("base: &base {ttl: 5, unlisted: true, proxy: \"http://h:1\"}\n"
          "more: &more {<<: *base, ttl: 7, useModelName: u}\n"
          "models:\n"
          "  m:\n"
          "    <<: [*more, {ttl: 9, checkEndpoint: none}]\n"
          "    cmd: x\n"
          "  n: {<<: *base, ttl: 1, cmd: y}\n"
          "unknownTopLevel: {whatever: [1, 2]}\n", &s);
    const ggfit__swap_model *m = model(&s, "m");
    assert_int_equal(m->ttl, 7);
    assert_true(m->unlisted);
    assert_string_equal(m->use_model_name, "u");
    assert_string_equal(m->check_endpoint, "none");
    assert_int_equal(model(&s, "n")->ttl, 1);
    ggfit__swap_free(&s);
    refused("a: &a 5\nmodels:\n  m: {<<: *a}\n", GGFIT_EINVAL,
            "yaml: map merge requires map or sequence of maps as the value");
    refused("a: &a 5\nmodels:\n  m: {<<: [*a]}\n", GGFIT_EINVAL,
            "yaml: map merge requires map or sequence of maps as the value");
    /* duplicate keys anywhere, "<<" included */
    refused("models:\n  m:\n    ttl: 1\n    cmd: x\n    ttl: 2\n", GGFIT_EINVAL,
            "yaml: unmarshal errors:\n  line 5: mapping key \"ttl\" already defined at line 3");
    refused("x: {a: 1, \"a\": 2}\n", GGFIT_EINVAL, "mapping key \"a\" already defined at line 1");
    refused("a: &a {x: 1}\nb:\n  <<: *a\n  <<: *a\n", GGFIT_EINVAL,
            "line 4: mapping key \"<<\" already defined at line 3");
    refused("models:\n  m:\n    cmd: x\n  m:\n    cmd: y\n", GGFIT_EINVAL,
            "line 4: mapping key \"m\" already defined at line 2");
    refused("x: *nope\n", GGFIT_EINVAL, "yaml: unknown anchor 'nope' referenced");
    refused("x: &a [1, *a]\n", GGFIT_EINVAL, "yaml: anchor 'a' value contains itself");
    refused("models:\n  m: [\n", GGFIT_EINVAL, "yaml: line 2: did not find expected node content");
    /* yaml.v3 numbers lines from 0 here, and leaves out line 0 */
    refused("a: b: c\n", GGFIT_EINVAL, "t.yaml: yaml: mapping values are not allowed in this "
            "context");
    refused("x: 1\na: b: c\n", GGFIT_EINVAL, "yaml: line 2: mapping values are not allowed");
    refused("- a\n", GGFIT_EINVAL, "cannot unmarshal !!seq into config.configMacroConfig");
    refused("models: [a]\n", GGFIT_EINVAL, "cannot unmarshal !!seq into "
            "map[string]config.modelMacroConfig");
    refused("models:\n  m: abc\n", GGFIT_EINVAL,
            "line 2: cannot unmarshal !!str `abc` into config.modelMacroConfig");
    refused("models:\n  m:\n    ttl: abcdefghijklm\n    proxy: http://h:1\n", GGFIT_EINVAL,
            "line 3: cannot unmarshal !!str `abcdefg...` into int");
    refused("models:\n  m:\n    proxy: http://h:1\n    env: {A: 1}\n", GGFIT_EINVAL,
            "line 4: cannot unmarshal !!map into []string");
    refused("models:\n  m:\n    proxy: http://h:1\n    unlisted: \"true\"\n", GGFIT_EINVAL,
            "line 4: cannot unmarshal !!str `true` into bool");
    /* a second document is not read; an empty file is a config without models */
    parse("models:\n  m: {cmd: x, proxy: \"http://h:1\"}\n---\n: : bad [\n", &s);
    assert_int_equal(s.n_models, 1);
    ggfit__swap_free(&s);
    parse("# nothing\n", &s);
    assert_int_equal(s.n_models, 0);
    assert_int_equal(s.n_groups, 1);
    assert_int_equal(s.start_port, 5800);
    ggfit__swap_free(&s);
    /* timeouts and ttl checks; healthCheckTimeout at least 15 */
    parse("healthCheckTimeout: 3\nglobalTTL: 0\nunloadTimeout: 0\n"
          "models:\n  m: {cmd: x, proxy: \"http://h:1\", ttl: 1.9, unloadTimeout: 4}\n", &s);
    assert_int_equal(s.health_check_timeout, 15);
    assert_int_equal(s.unload_timeout, 10);
    assert_int_equal(model(&s, "m")->ttl, 1);            /* yaml.v3 truncates */
    assert_int_equal(model(&s, "m")->unload_timeout, 4);
    ggfit__swap_free(&s);
    refused("globalTTL: -1\n", GGFIT_EINVAL, "globalTTL must be >= 0");
    refused("unloadTimeout: -1\n", GGFIT_EINVAL, "unloadTimeout must be >= 0");
    refused("models:\n  m: {cmd: x, proxy: \"http://h:1\", ttl: -2}\n", GGFIT_EINVAL,
            "model m: invalid TTL value -2");
    refused("models:\n  m: {cmd: x, proxy: \"http://h:1\", unloadTimeout: -2}\n", GGFIT_EINVAL,
            "model m: invalid unloadTimeout value -2");
    refused("logToStdout: all\n", GGFIT_EINVAL,
            "logToStdout must be one of: proxy, upstream, both, none");
}

/* ---- aliases and preload ------------------------------------------------------------- */

static void test_aliases(void **state)
{
    (void)state;
    ggfit__swap s;
    parse("models:\n"
          "  a: {cmd: x, proxy: \"http://h:1\", aliases: [a1],\n"
          "      filters: {setParamsByID: {a: {}, \"${MODEL_ID}-fast\": {}, a1: {}}}}\n"
          "  b: {cmd: x, proxy: \"http://h:1\"}\n"
          "hooks: {on_startup: {preload: [\"  a-fast \", \"\", b, gone, a1]}}\n", &s);
    const ggfit__swap_model *a = model(&s, "a");
    assert_int_equal(a->n_aliases, 2);
    assert_string_equal(a->aliases[1], "a-fast");
    assert_int_equal(s.n_preload, 3);
    assert_string_equal(s.preload[0], "a");
    assert_string_equal(s.preload[1], "b");
    assert_string_equal(s.preload[2], "a");
    ggfit__swap_free(&s);
    refused("models:\n  a: {cmd: x, proxy: \"http://h:1\", aliases: [z]}\n"
            "  b: {cmd: x, proxy: \"http://h:1\", aliases: [z]}\n", GGFIT_EINVAL,
            "duplicate alias z found in model: b");
    refused("models:\n  a: {cmd: x, proxy: \"http://h:1\", filters: {setParamsByID: {b: {}}}}\n"
            "  b: {cmd: x, proxy: \"http://h:1\"}\n", GGFIT_EINVAL,
            "model a filters.setParamsByID: key 'b' conflicts with an existing model ID");
    refused("models:\n  a: {cmd: x, proxy: \"http://h:1\", filters: {setParamsByID: {z: {}}}}\n"
            "  b: {cmd: x, proxy: \"http://h:1\", aliases: [z]}\n", GGFIT_EINVAL,
            "duplicate alias 'z' in model a filters.setParamsByID, already used by model b");
    refused("models:\n  a: {cmd: x, proxy: \"http://h:1\", filters: {setParamsByID: "
            "{\"${q}\": {}}}}\n", GGFIT_EINVAL,
            "unknown macro '${q}' found in model a filters.setParamsByID key");
    refused("models:\n  a: {cmd: x, proxy: \"http://h:1\", filters: {setParamsByID: "
            "{\"${MODEL_ID}\": {}, a: {}}}}\n", GGFIT_EINVAL,
            "model a filters.setParamsByID: keys \"a\" and \"a\" resolve to the same value");
}

/* ---- groups ---------------------------------------------------------------------- */

static const char models4[] =
    "models:\n"
    "  a: {cmd: x, proxy: \"http://h:1\"}\n"
    "  b: {cmd: x, proxy: \"http://h:1\", aliases: [bee]}\n"
    "  c: {cmd: x, proxy: \"http://h:1\"}\n"
    "  d: {cmd: x, proxy: \"http://h:1\"}\n";

static void groups_of(const char *groups, ggfit__swap *s)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", models4, groups);
    parse(text, s);
}

static void groups_refused(const char *groups, ggfit_status st, const char *want)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", models4, groups);
    refused(text, st, want);
}

static void test_groups(void **state)
{
    (void)state;
    ggfit__swap s;
    /* the defaults; the models in no group in "(default)" */
    groups_of("groups:\n  g:\n    members: [b, a]\n  e: {members: []}\n  z:\n", &s);
    assert_int_equal(s.n_groups, 4);
    assert_string_equal(s.groups[0].name, "g");
    assert_true(s.groups[0].swap && s.groups[0].exclusive && !s.groups[0].persistent);
    assert_int_equal(s.groups[0].members[0], 1);        /* b, the file's order */
    /* a group given as null is Go's zero GroupConfig */
    assert_string_equal(s.groups[2].name, "z");
    assert_true(!s.groups[2].swap && !s.groups[2].exclusive && !s.groups[2].persistent);
    assert_string_equal(s.groups[3].name, "(default)");
    assert_int_equal(s.groups[3].n_members, 2);
    assert_string_equal(group_of(&s, "c"), "(default)");
    ggfit__swap_free(&s);
    /* YAML 1.1's words for a bool field */
    groups_of("groups:\n  g: {swap: no, exclusive: Off, persistent: \"yes\", members: [a]}\n", &s);
    assert_true(!s.groups[0].swap && !s.groups[0].exclusive && s.groups[0].persistent);
    ggfit__swap_free(&s);
    /* the routing block */
    groups_of("routing:\n  router:\n    use: group\n    settings:\n      groups:\n"
              "        g: {swap: false, members: [a, b]}\n", &s);
    assert_string_equal(group_of(&s, "a"), "g");
    assert_false(s.groups[0].swap);
    ggfit__swap_free(&s);
    /* a user group named "(default)" is replaced: its members are in none */
    groups_of("groups:\n  (default): {members: [a]}\n  g: {members: [b]}\n", &s);
    assert_int_equal(s.n_groups, 2);
    assert_string_equal(group_of(&s, "a"), "-");
    assert_string_equal(group_of(&s, "c"), "(default)");
    assert_string_equal(s.groups[0].name, "(default)");
    assert_int_equal(s.groups[0].n_members, 2);
    assert_string_equal(evicts(&s, "a", "b c"), "");
    ggfit__swap_free(&s);
    groups_refused("groups:\n  g: {members: [a, a]}\n", GGFIT_EINVAL,
                   "duplicate model member a found in group: g");
    groups_refused("groups:\n  g: {members: [a]}\n  h: {members: [b, a]}\n", GGFIT_EINVAL,
                   "model member a is used in multiple groups: g and h");
    groups_refused("groups:\n  g: {members: [x]}\n", GGFIT_EINVAL,
                   "creating group router: no model config for \"x\"");
    groups_refused("groups:\n  g: {members: [bee]}\n", GGFIT_EINVAL,
                   "group g: member bee is an alias of model b");
    groups_refused("groups:\n  g: {members: a}\n", GGFIT_EINVAL,
                   "cannot unmarshal !!str `a` into []string");
    groups_refused("groups:\n  g: {members: [a]}\nrouting: {router: {use: group}}\n",
                   GGFIT_EINVAL, "config uses both the legacy top-level 'matrix'/'groups' keys "
                   "and the new 'routing.router' block");
    groups_refused("routing: {router: {use: fancy}}\n", GGFIT_EINVAL,
                   "routing.router.use: unknown router \"fancy\" (valid: group, matrix)");
    groups_refused("routing: {router: {use: matrix}}\n", GGFIT_EINVAL,
                   "routing.router.use is 'matrix' but routing.router.settings.matrix is not set");
    groups_refused("groups:\n  g: {members: [a]}\nmatrix: {sets: {s: a}}\n", GGFIT_EINVAL,
                   "config cannot use both 'groups' and 'matrix'");
    groups_refused("matrix: {sets: {s: \"a & b\"}}\n", GGFIT_EUNSUPPORTED, "matrix router");
}

/* ---- evictions ---------------------------------------------------------------------- */

static void test_evicts(void **state)
{
    (void)state;
    ggfit__swap s;
    /* swap: one member at a time; exclusive: other non-persistent groups go */
    groups_of("groups:\n"
              "  sw: {members: [a, b]}\n"
              "  many: {swap: false, exclusive: false, members: [c]}\n", &s);
    assert_string_equal(evicts(&s, "a", "b c d"), "b c d");   /* d: "(default)" */
    assert_string_equal(evicts(&s, "a", "a"), "");
    assert_string_equal(evicts(&s, "c", "a d"), "");          /* not exclusive: stays */
    assert_string_equal(evicts(&s, "d", "a c"), "a c");       /* (default) is exclusive */
    ggfit__swap_free(&s);
    /* swap: false keeps its members together; persistent resists others' exclusive loads */
    groups_of("groups:\n"
              "  together: {swap: false, members: [a, b]}\n"
              "  keep: {swap: false, exclusive: false, persistent: true, members: [c]}\n", &s);
    assert_string_equal(evicts(&s, "b", "a c d"), "d");
    assert_string_equal(evicts(&s, "d", "a b c"), "a b");
    assert_string_equal(evicts(&s, "c", "a b d"), "");
    ggfit__swap_free(&s);
    /* §5's variants of the rag group: V1 swap false only: chat and rag never together */
    groups_of("groups:\n  chat: {members: [a, b]}\n  rag: {swap: false, members: [c, d]}\n", &s);
    assert_string_equal(evicts(&s, "c", "a d"), "a");
    assert_string_equal(evicts(&s, "a", "c d"), "c d");
    ggfit__swap_free(&s);
    /* V3 swap false + persistent (exclusive by default): rag evicts the chat model, chat
     * leaves rag alone */
    groups_of("groups:\n  chat: {members: [a, b]}\n"
              "  rag: {swap: false, persistent: true, members: [c, d]}\n", &s);
    assert_string_equal(evicts(&s, "c", "a d"), "a");
    assert_string_equal(evicts(&s, "b", "a c d"), "a");
    ggfit__swap_free(&s);
    /* V2 swap false, exclusive false: the next chat request evicts rag */
    groups_of("groups:\n  chat: {members: [a, b]}\n"
              "  rag: {swap: false, exclusive: false, members: [c, d]}\n", &s);
    assert_string_equal(evicts(&s, "c", "a d"), "");
    assert_string_equal(evicts(&s, "b", "c d"), "c d");
    ggfit__swap_free(&s);
}

/* ---- hostile files -------------------------------------------------------------------- */

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void write_file(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
}

static void test_hostile(void **state)
{
    (void)state;
    /* billion laughs: 10^9 nodes as aliases expand it; stopped before anything is copied */
    double t0 = seconds();
    refused("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
            "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
            "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
            "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
            "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
            "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n",
            GGFIT_ELIMIT, "yaml: document contains excessive aliasing");
    /* the same through merge keys */
    refused("a: &a {a0: 1, a1: 1, a2: 1, a3: 1, a4: 1, a5: 1, a6: 1, a7: 1}\n"
            "b: &b {b0: *a, b1: *a, b2: *a, b3: *a, b4: *a, b5: *a, b6: *a, b7: *a}\n"
            "c: &c {c0: *b, c1: *b, c2: *b, c3: *b, c4: *b, c5: *b, c6: *b, c7: *b}\n"
            "d: &d {d0: *c, d1: *c, d2: *c, d3: *c, d4: *c, d5: *c, d6: *c, d7: *c}\n"
            "e: &e {e0: *d, e1: *d, e2: *d, e3: *d, e4: *d, e5: *d, e6: *d, e7: *d}\n"
            "f: &f {f0: *e, f1: *e, f2: *e, f3: *e, f4: *e, f5: *e, f6: *e, f7: *e}\n"
            "g: &g {<<: [*f, *f], g0: *f, g1: *f, g2: *f, g3: *f, g4: *f, g5: *f, g6: *f}\n"
            "h: &h {h0: *g, h1: *g, h2: *g, h3: *g, h4: *g, h5: *g, h6: *g, h7: *g}\n",
            GGFIT_ELIMIT, "excessive aliasing");
    /* a macro bomb: each macro ten of the one before */
    refused("macros:\n"
            "  m0: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
            "  m1: ${m0}${m0}${m0}${m0}${m0}${m0}${m0}${m0}${m0}${m0}\n"
            "  m2: ${m1}${m1}${m1}${m1}${m1}${m1}${m1}${m1}${m1}${m1}\n"
            "  m3: ${m2}${m2}${m2}${m2}${m2}${m2}${m2}${m2}${m2}${m2}\n"
            "  m4: ${m3}${m3}${m3}${m3}${m3}${m3}${m3}${m3}${m3}${m3}\n"
            "  m5: ${m4}${m4}${m4}${m4}${m4}${m4}${m4}${m4}${m4}${m4}\n"
            "  m6: ${m5}${m5}${m5}${m5}${m5}${m5}${m5}${m5}${m5}${m5}\n"
            "  m7: ${m6}${m6}${m6}${m6}${m6}${m6}${m6}${m6}${m6}${m6}\n"
            "models:\n  m: {proxy: \"http://h:1\", cmd: \"${m7}\"}\n",
            GGFIT_ELIMIT, "grows past 1 MiB as its macros expand");
    /* empty macros referred to 10^8 times cost their length, not their paths */
    refused("macros:\n"
            "  e0: \"\"\n"
            "  e1: ${e0}${e0}${e0}${e0}${e0}${e0}${e0}${e0}${e0}${e0}\n"
            "  e2: ${e1}${e1}${e1}${e1}${e1}${e1}${e1}${e1}${e1}${e1}\n"
            "  e3: ${e2}${e2}${e2}${e2}${e2}${e2}${e2}${e2}${e2}${e2}\n"
            "  e4: ${e3}${e3}${e3}${e3}${e3}${e3}${e3}${e3}${e3}${e3}\n"
            "  e5: ${e4}${e4}${e4}${e4}${e4}${e4}${e4}${e4}${e4}${e4}\n"
            "  e6: ${e5}${e5}${e5}${e5}${e5}${e5}${e5}${e5}${e5}${e5}\n"
            "  e7: ${e6}${e6}${e6}${e6}${e6}${e6}${e6}${e6}${e6}${e6}\n"
            "  e8: ${e7}${e7}${e7}${e7}${e7}${e7}${e7}${e7}${e7}${e7}\n"
            "models:\n  m: {cmd: \"${e8}\"}\n",
            GGFIT_EINVAL, "model m: proxy uses ${PORT} but cmd does not");
    assert_true(seconds() - t0 < 10.0);   /* not exponential: 10^8 paths would be hours */
    /* deep nesting */
    size_t n = 200000;
    char *deep = malloc(2 * n + 8);
    assert_non_null(deep);
    memcpy(deep, "x: ", 3);
    memset(deep + 3, '[', n);
    memset(deep + 3 + n, ']', n);
    deep[3 + 2 * n] = '\0';
    refused(deep, GGFIT_ELIMIT, "nested more than 1000 deep");
    free(deep);
    /* binary junk, NUL bytes, bad UTF-8 */
    ggfit__swap s;
    char *err = NULL;
    static const char junk[] = "models:\n  m: \x01\x02\xff\xfe\x00\x00 cmd\n";
    assert_int_equal(ggfit__swap_parse(junk, sizeof junk - 1, "j", &s, &err), GGFIT_EINVAL);
    assert_non_null(strstr(err, "j: yaml: "));
    ggfit_free(err);
    ggfit__swap_free(&s);
    uint32_t seed = 1;
    char rnd[4096];
    for (int k = 0; k < 200; k++) {
        for (size_t i = 0; i < sizeof rnd; i++) {
            seed = seed * 1103515245u + 12345u;
            rnd[i] = (char)(seed >> 16);
        }
        err = NULL;
        ggfit_status st = ggfit__swap_parse(rnd, sizeof rnd, "r", &s, &err);
        assert_true(st == GGFIT_OK || err != NULL);
        ggfit_free(err);
        ggfit__swap_free(&s);
    }
    /* files: missing, a directory, too large */
    char path[512];
    err = NULL;
    assert_int_equal(ggfit__swap_read("/nonexistent/config.yaml", &s, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "config /nonexistent/config.yaml: No such file or directory"));
    ggfit_free(err);
    err = NULL;
    assert_int_equal(ggfit__swap_read(tmp_dir(), &s, &err), GGFIT_EIO);
    assert_non_null(strstr(err, "is a directory"));
    ggfit_free(err);
    snprintf(path, sizeof path, "%s/swap-huge.yaml", tmp_dir());
    size_t big = (size_t)9 << 20;
    char *huge = malloc(big);
    assert_non_null(huge);
    memset(huge, '#', big);
    write_file(path, huge, big);
    free(huge);
    err = NULL;
    assert_int_equal(ggfit__swap_read(path, &s, &err), GGFIT_ELIMIT);
    assert_non_null(strstr(err, "more than ggfit reads of a config (8 MiB)"));
    ggfit_free(err);
    remove(path);
}

/* every allocation failing in turn: an error, never a crash or a leak */
static void test_alloc_failures(void **state)
{
    (void)state;
    setenv("SWAP_T_BIN", "/opt/bin", 1);
    static const char text[] =
        "macros:\n  srv: ${env.SWAP_T_BIN}/llama-server --port ${PORT}\n  c: 4096\n"
        "base: &b {ttl: 5, env: [\"A=1\"]}\n"
        "models:\n"
        "  a: {<<: *b, cmd: \"${srv} -c ${c}\", aliases: [x]}\n"
        "  b: {cmd: \"${srv}\", filters: {setParamsByID: {\"${MODEL_ID}-y\": {}}}}\n"
        "groups:\n  g: {members: [a]}\n"
        "hooks: {on_startup: {preload: [a]}}\n";
    for (uint64_t k = 1;; k++) {
        ggfit__swap s;
        char *err = NULL;
        ggfit__fail_alloc_after(k);
        ggfit_status st = ggfit__swap_parse(text, sizeof text - 1, "t", &s, &err);
        uint64_t used = ggfit__fail_alloc_after(0);
        ggfit_free(err);
        ggfit__swap_free(&s);
        if (st == GGFIT_OK) {
            assert_true(used < k);
            break;
        }
        assert_true(st == GGFIT_ENOMEM);
        assert_true(k < 10000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_example),
        cmocka_unit_test(test_spec_example),
        cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_anchors_example),
        cmocka_unit_test(test_env_macros),
        cmocka_unit_test(test_macros),
        cmocka_unit_test(test_ports),
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_yaml),
        cmocka_unit_test(test_aliases),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_evicts),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
