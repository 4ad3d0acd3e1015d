#!/usr/bin/env python3
"""gen_man.py - ggfit's man page from the table of flags and of commands.

    gen_man.py TEMPLATE FLAGS LLAMA_ARGS COMMANDS VERSION_H > build/ggfit.1
    gen_man.py --check PAGE FLAGS LLAMA_ARGS

TEMPLATE is docs/ggfit.1.in, the hand-written parts (NAME, DESCRIPTION,
ENVIRONMENT, EXIT STATUS, EXAMPLES, SEE ALSO) with @SYNOPSIS@, @COMMANDS@,
@OPTIONS@, @LLAMA_FLAGS@ and @VERSION@ where the rest goes. SYNOPSIS is
the plan's synopsis of data/commands.txt (COMMANDS), `ggfit -h`'s; COMMANDS
each command's own synopsis and what its -h says (the plan's: its entry in
`ggfit -h`'s list), as cli/ggfit.c prints them (scripts/gen_commands.awk
makes them its table), each part's lines joined. The options are
the rows of data/flags.tsv with a help text, in its order, joined with
data/llama_args.tsv as scripts/gen_llama_args.awk joins them (the names,
negated names and LLAMA_ARG_* variable of a llama.cpp flag are llama.cpp's);
every other flag of the table is named in LLAMA.CPP FLAGS. --help prints
the same rows (cli/ggfit.c).

--check renders PAGE with groff (-man -ww: every warning) and fails on a
warning, or on a name of the table the rendered page does not hold.
"""
import re
import subprocess
import sys

COMMANDS = ["plan", "inspect", "devices", "archs", "reorder", "bench", "sweep"]


def rows(path):
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("#") or not line.strip():
            continue
        yield line.split("\t")


def table(flags_tsv, llama_tsv):
    """(ours, rest): data/flags.tsv's rows as dicts, in its order, and the
    llama.cpp rows it does not name."""
    llama = list(rows(llama_tsv))
    used = set()
    ours = []
    for f in rows(flags_tsv):
        name, negated, env = f[0], f[1], f[2]
        if negated == "=":
            for k, l in enumerate(llama):
                if name in l[0].split(",") or name in l[1].split(","):
                    name, negated, env = l[0], l[1], l[3]
                    used.add(k)
                    break
            else:
                sys.exit("gen_man.py: %s is not a flag of %s" % (f[0], llama_tsv))
        ours.append({
            "names": name.split(","),
            "negated": [] if negated == "-" else negated.split(","),
            "env": "" if env == "-" else env,
            "scope": f[6], "memory": f[7],
            "commands": COMMANDS if f[10] in ("-", "=") and f[6] != "cli" else f[10].split(","),
            "metavar": "" if f[11] in ("-", "=") else f[11],
            "help": "" if f[12] in ("-", "=") else f[12],
        })
    rest = [{"names": l[0].split(","), "negated": [] if l[1] == "-" else l[1].split(",")}
            for k, l in enumerate(llama) if k not in used]
    return ours, rest


def commands(path):
    """data/commands.txt's blocks, in its order: dicts of name, forms (each
    form of the synopsis as one line of words), summary and about (each its
    lines joined, "" where none)."""
    out = []
    part = None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("#") or not line:
            continue
        if line.startswith("command "):
            out.append({"name": line.split()[1], "synopsis": [], "summary": [], "about": []})
        elif line in ("synopsis", "summary", "about"):
            part = line
        elif line.startswith("\t"):
            out[-1][part].append(line[1:])
        else:
            sys.exit("gen_man.py: %s: unexpected line %r" % (path, line))
    for c in out:
        forms = []
        for line in c.pop("synopsis"):
            if line.startswith("ggfit"):
                forms.append(line)
            else:   # a form's further line
                forms[-1] += " " + line.strip()
        c["forms"] = [" ".join(f.split()) for f in forms]
        c["summary"] = " ".join(" ".join(c["summary"]).split())
        c["about"] = " ".join(" ".join(c["about"]).split())
    return out


# The words of a synopsis set in italics (what the user writes in their
# place); the rest is bold (typed as is) but for brackets, bars and "...".
PLACEHOLDERS = {"flags", "llama.cpp", "placement", "constants", "its"}


def synopsis_words(form):
    """A form of a synopsis in roff's fonts: names and flags bold, what
    stands for a value italic, [ ] | ... roman."""
    out = []
    for t in re.findall(r"\s+|[\[\]|]|\.\.\.|[^\s\[\]|]+", form):
        if t.isspace() or t in ("[", "]", "|", "..."):
            out.append(roff(t))
        elif t in PLACEHOLDERS or (re.search(r"[A-Z]", t) and not re.search(r"[a-z]", t)):
            out.append("\\fI" + roff(t) + "\\fR")
        else:
            out.append("\\fB" + roff(t) + "\\fR")
    return "".join(out)


def synopsis(cmds):
    """SYNOPSIS: the plan's forms, each a hanging paragraph after ggfit (one
    .YS after the last: one between would space them; .YS turns hyphenation
    back on, which the page has off)."""
    out = []
    for f in cmds[0]["forms"]:
        out += [".SY ggfit", synopsis_words(f[len("ggfit"):].strip())]
    return "\n".join(out + [".YS", ".nh"])


def commands_section(cmds):
    """COMMANDS: each command's forms as the tag, what its -h says as the
    paragraph; the plan's forms those of no other command, its entry in
    `ggfit -h`'s list."""
    names = {c["name"] for c in cmds[1:]}
    out = []
    for c in cmds:
        forms = c["forms"]
        if c["name"] == "plan":
            forms = [f for f in forms if len(f.split()) < 2 or
                     (f.split()[1] not in names and f.split()[1] != "--version")]
        for k, f in enumerate(forms):
            out += [".TP" if k == 0 else ".TQ", synopsis_words(f)]
        out.append(roff(c["about"] or c["summary"]))
    return "\n".join(out)


def roff(text):
    """Plain text as roff: backslashes and hyphens escaped, no line starting
    with a control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text)


def flag(name):
    return "\\fB" + roff(name) + "\\fR"


def options(ours):
    out = []
    for r in ours:
        if not r["help"]:
            continue
        head = ", ".join(flag(n) for n in r["names"] + r["negated"])
        if r["metavar"]:
            head += " \\fI" + roff(r["metavar"]) + "\\fR"
        out += [".TP", head, roff(r["help"])]
        notes = []
        if r["commands"] != COMMANDS and r["commands"] != ["plan", "bench", "sweep"]:
            notes.append("Commands: " + ", ".join(
                "\\fBggfit\\fR" + ("" if c == "plan" else " \\fB" + c + "\\fR")
                for c in r["commands"]) + ".")
        if r["env"]:
            notes.append("Also \\fB" + roff(r["env"]) + "\\fR.")
        if notes:
            out += [".br", " ".join(notes)]
    return "\n".join(out)


def llama_flags(ours, rest):
    applied = [r for r in ours if not r["help"] and r["scope"] != "cli"]
    def names(rs):
        return ", ".join(flag(n) for r in rs for n in r["names"] + r["negated"])
    counted = [r for r in applied if r["memory"] == "counted"]
    noted = [r for r in applied if r["memory"] != "counted"]
    return "\n".join([
        ".PP",
        "llama.cpp's flags that ggfit applies as llama.cpp does, under every name "
        "llama.cpp gives them (\\fBLLAMA_ARG_*\\fR variables too):",
        names(counted) + ".",
        ".PP",
        "The others ggfit recognises: the draft model's and the projector's, counted "
        "with \\fB\\-\\-for server\\fR alone, and those the plan lists in its notes:",
        names(noted) + ".",
        ".PP",
        "Every other flag of llama.cpp's programs (common/arg.cpp) is taken with its "
        "values and listed in the plan's notes as without effect on memory:",
        names(rest) + ".",
    ])


def generate(template, flags_tsv, llama_tsv, commands_txt, version_h):
    ours, rest = table(flags_tsv, llama_tsv)
    cmds = commands(commands_txt)
    version = re.search(r'#define GGFIT_VERSION "([^"]+)"', open(version_h).read()).group(1)
    page = open(template, encoding="utf-8").read()
    for key, value in (("@SYNOPSIS@", synopsis(cmds)), ("@COMMANDS@", commands_section(cmds)),
                       ("@OPTIONS@", options(ours)), ("@LLAMA_FLAGS@", llama_flags(ours, rest)),
                       ("@VERSION@", version)):
        page = page.replace(key, value)
    sys.stdout.write(page)


def check(page, flags_tsv, llama_tsv):
    warn = subprocess.run(["groff", "-man", "-ww", "-z", page], capture_output=True, text=True)
    if warn.returncode or warn.stderr:
        sys.exit("%s: groff: %s" % (page, warn.stderr.strip() or "exit %d" % warn.returncode))
    text = subprocess.run(["groff", "-man", "-Tascii", "-P-cbou", page], capture_output=True,
                          text=True, check=True).stdout
    words = set(w.strip(",.;()") for w in text.split())
    ours, rest = table(flags_tsv, llama_tsv)
    missing = [n for r in ours + rest for n in r["names"] + r["negated"] if n not in words]
    if missing:
        sys.exit("%s: no %s" % (page, ", ".join(missing)))
    print("man: ok, %d flags" % (len(ours) + len(rest)))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--check":
        check(*sys.argv[2:])
    elif len(sys.argv) == 6:
        generate(*sys.argv[1:])
    else:
        sys.exit(__doc__)
