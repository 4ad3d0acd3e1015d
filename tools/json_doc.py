#!/usr/bin/env python3
"""usage: tools/json_doc.py [--check]

docs/json.md's field tables are the schemas in docs/schema/ written as
Markdown: every document's fields, then the shared parts (common.schema.json's
$defs), each field with its type, unit ("x-unit"), whether it is always
there, and its description. Without --check the part of docs/json.md between
the markers is rewritten; with --check the script exits 1 when it differs
(tests/cli.sh runs it so), so the tables never drift from the schemas.
"""
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "json.md")
BEGIN = "<!-- fields: written by tools/json_doc.py from docs/schema/ -->\n"
END = "<!-- end of fields -->"


def ref_name(r):
    return r.rsplit("/", 1)[-1]


def type_of(p):
    """The field's type in words, with links to the shared parts."""
    if "$ref" in p:
        n = ref_name(p["$ref"])
        return "[%s](#shared-%s)" % (n, n.replace("_", "_"))
    if "anyOf" in p:
        return " or ".join(type_of(x) for x in p["anyOf"])
    if "const" in p:
        return "`%s`" % json.dumps(p["const"])
    t = p.get("type")
    if t is None:
        return "any"
    if isinstance(t, list):
        words = [x for x in t]
    else:
        words = [t]
    out = []
    for w in words:
        if w == "array":
            it = p.get("items", {})
            inner = type_of(it) if it else "any"
            if it.get("type") == "object" and "properties" in it:
                inner = "object"
            out.append("array of " + inner)
        elif w == "object" and "additionalProperties" in p and isinstance(p["additionalProperties"], dict):
            out.append("object of " + type_of(p["additionalProperties"]))
        else:
            out.append(w)
    s = " or ".join(out)
    if "enum" in p:
        s += ": " + ", ".join("`%s`" % json.dumps(e) for e in p["enum"])
    return s


def rows(s, prefix, out):
    """Table rows for an object schema's fields, nested objects inline."""
    req = set(s.get("required", []))
    for k, p in s.get("properties", {}).items():
        name = prefix + k
        out.append("| `%s` | %s | %s | %s | %s |" % (
            name, type_of(p), p.get("x-unit", ""), "always" if k in req else "sometimes",
            p.get("description", "").replace("|", "\\|")))
        inner = p.get("items", p) if p.get("type") == "array" or "array" in (p.get("type") or []) else p
        if inner.get("type") == "object" and "properties" in inner:
            rows(inner, name + ("[]." if inner is not p else "."), out)
        for alt in p.get("anyOf", []):
            if alt.get("type") == "object" and "properties" in alt:
                rows(alt, name + ".", out)


def parts(s):
    """The object schemas a document is made of: its own, $ref'd, allOf/anyOf."""
    out = []
    if "properties" in s:
        out.append(("", s))
    if "$ref" in s:
        out.append((ref_name(s["$ref"]), None))
    for x in s.get("allOf", []):
        out += parts(x)
    for i, x in enumerate(s.get("anyOf", [])):
        out.append(("%s shape: %s" % ("One" if i == 0 else "The other", x.get("title", "")), "title"))
        out += parts(x)
    return out


HEAD = ["| field | type | unit | present | meaning |", "|---|---|---|---|---|"]


def text():
    schemas = {}
    for f in sorted(glob.glob(os.path.join(ROOT, "docs", "schema", "*.schema.json"))):
        with open(f) as fh:
            schemas[os.path.basename(f)] = json.load(fh)
    common = schemas.pop("common.schema.json")
    lines = ["### Documents", ""]
    for name, s in schemas.items():
        kind = s["properties"]["kind"]
        kinds = [kind["const"]] if "const" in kind else kind["enum"]
        lines += ["#### %s" % " / ".join(kinds), "",
                  "%s ([schema/%s](schema/%s))." % (s.get("title", ""), name, name), ""]
        for n, part in parts(s):
            if part == "title":
                lines += ["**%s**" % n, ""]
                continue
            if part is None:
                n = n.split(": ")[-1]
                lines += ["With the fields of [%s](#shared-%s)." % (n, n.replace("_", "_")), ""]
                continue
            out = []
            rows(part, "", out)
            lines += HEAD + out + [""]
    lines += ["### Shared parts", "", "common.schema.json's `$defs`, each written once.", ""]
    for n, s in common["$defs"].items():
        lines += ["#### shared: %s" % n, ""]
        if "properties" not in s:
            lines += ["%s, no other field." % type_of({"$ref": s["$ref"]}), ""]
            continue
        out = []
        rows(s, "", out)
        lines += HEAD + out + [""]
    return "\n".join(lines)


def main(argv):
    with open(DOC) as fh:
        doc = fh.read()
    a, b = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    new = doc[:a] + "\n" + text() + "\n" + doc[b:]
    if "--check" in argv:
        if new != doc:
            print("docs/json.md: the field tables differ from docs/schema/: run tools/json_doc.py")
            return 1
        print("docs/json.md: the field tables are docs/schema/'s")
        return 0
    if new != doc:
        with open(DOC, "w") as fh:
            fh.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
