#!/usr/bin/env python3
"""jsonschema_check.py - validates ggfit's JSON against docs/schema/.

  jsonschema_check.py [--schemas DIR] [--ggfit GGFIT --commands DIR] [--dump DIR] [FILE...]

Each FILE holds one JSON document or JSON lines (ggfit batch's answers).
With --commands, every file in DIR holds one command's words NUL-separated
(tests/cli.sh's record()), the first ggfit; those with --json are run again
and their stdout checked (a command whose stdout is empty failed as it
should: its error went to stderr). A document's "kind" picks its schema: the
schema whose properties.kind has that "const" (or lists it in "enum").
Prints "json: N documents, every one valid" or each failure with the command
and the first error; exit status 1 on a failure. --dump writes each
document to DIR/KIND-N.json as well (to see what the commands print).

Needs python3-jsonschema (Debian's 4.10 or a newer one).
"""
import glob
import json
import os
import subprocess
import sys

import jsonschema

BASE = "https://ggfit.invalid/schema/"


def load_schemas(folder):
    schemas, by_kind = {}, {}
    for f in sorted(glob.glob(os.path.join(folder, "*.schema.json"))):
        with open(f) as fh:
            s = json.load(fh)
        schemas[s.get("$id", BASE + os.path.basename(f))] = s
        kind = s.get("properties", {}).get("kind", {})
        for k in ([kind["const"]] if "const" in kind else kind.get("enum", [])):
            by_kind[k] = s
    return schemas, by_kind


def validator_for(schema, schemas):
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    try:  # jsonschema 4.18 and later
        from referencing import Registry, Resource
        reg = Registry().with_resources(
            (uri, Resource.from_contents(s)) for uri, s in schemas.items())
        return cls(schema, registry=reg)
    except (ImportError, TypeError):  # Debian's 4.10
        resolver = jsonschema.RefResolver.from_schema(schema, store=schemas)
        return cls(schema, resolver=resolver)


class Checker:
    def __init__(self, folder):
        self.schemas, self.by_kind = load_schemas(folder)
        self.validators = {}
        self.n = 0
        self.bad = 0
        self.dump = None

    def check(self, doc, where):
        self.n += 1
        why = None
        if self.dump and isinstance(doc, dict):
            name = "%s-%d.json" % (str(doc.get("kind")).replace(" ", "_"), self.n)
            with open(os.path.join(self.dump, name), "w") as fh:
                json.dump(doc, fh, indent=1)
        if not isinstance(doc, dict):
            why = "not an object: %s" % type(doc).__name__
        elif doc.get("json_version") != 1:
            why = "json_version is %r, not 1" % doc.get("json_version")
        elif doc.get("kind") not in self.by_kind:
            why = "no schema for kind %r" % doc.get("kind")
        else:
            s = self.by_kind[doc["kind"]]
            v = self.validators.get(id(s))
            if v is None:
                v = self.validators[id(s)] = validator_for(s, self.schemas)
            errs = list(v.iter_errors(doc))
            # a field that fails its own schema is "unevaluated" too (jsonschema 4.10): its error first
            err = jsonschema.exceptions.best_match(
                [e for e in errs if e.validator != "unevaluatedProperties"] or errs)
            if err is not None:
                path = "".join("[%s]" % json.dumps(p) for p in err.absolute_path)
                why = "%s: %s" % (path or "(top)", err.message[:400])
        if why:
            self.bad += 1
            print("FAIL %s\n    %s" % (where, why))

    def text(self, text, where):
        text = text.strip()
        try:
            docs = [json.loads(text)]
        except ValueError:
            try:
                docs = [json.loads(line) for line in text.splitlines() if line.strip()]
            except ValueError as e:
                self.n += 1
                self.bad += 1
                print("FAIL %s\n    not JSON: %s" % (where, e))
                return
        for d in docs:
            self.check(d, where)


def main(argv):
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "schema")
    ggfit = commands = dump = None
    files = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--schemas", "--ggfit", "--commands", "--dump") and i + 1 < len(argv):
            if a == "--dump":
                dump = argv[i + 1]
            elif a == "--schemas":
                folder = argv[i + 1]
            elif a == "--ggfit":
                ggfit = argv[i + 1]
            else:
                commands = argv[i + 1]
            i += 2
            continue
        files.append(a)
        i += 1
    c = Checker(folder)
    c.dump = dump
    for f in files:
        with open(f, encoding="utf-8") as fh:
            c.text(fh.read(), f)
    if commands:
        seen = set()
        for f in sorted(glob.glob(commands + "/*"), key=lambda f: int(os.path.basename(f))):
            words = open(f, "rb").read().decode().split("\0")[:-1]
            args = words[1:]
            if "--json" not in args or tuple(args) in seen:
                continue
            seen.add(tuple(args))
            p = subprocess.run([ggfit or words[0]] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            out = p.stdout.decode("utf-8", "replace")
            if out.strip():
                c.text(out, "ggfit " + " ".join(args))
    print("json: %d documents, %s" % (c.n, "every one valid" if not c.bad
                                         else "%d invalid" % c.bad))
    return 1 if c.bad or not c.n else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
