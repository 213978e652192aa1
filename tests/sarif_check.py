#!/usr/bin/env python3
"""sarif_check.py: a structural check of the SARIF 2.1.0 bfsync writes.

Standard library only. For every object kind bfsync emits (the log, a run,
tool and driver, a result, a location, a physical location, an artifact
location, a region, a message) it checks what the SARIF 2.1.0 schema
(sarif-schema-2.1.0.json, OASIS errata 01) requires: the required
properties, the type of each property, the enumerations (version, level,
columnKind), the minimums (line and column numbers from 1, an id from -1),
that a region does not end before it starts, and, as the schema's
"additionalProperties": false does, that no object has a property the
schema does not define for it (only the ones bfsync writes are listed; any
other is flagged so the list stays honest). Exit status 0 when every file
given passes, 1 with one line per problem otherwise.

usage: sarif_check.py FILE.sarif...
"""
import json
import sys

INT, STR, OBJ, ARR = int, str, dict, list

# kind -> {property: (type, required)}
SCHEMA = {
    "log": {"$schema": (STR, False), "version": (STR, True), "runs": (ARR, True)},
    "run": {"tool": (OBJ, True), "results": (ARR, False), "columnKind": (STR, False)},
    "tool": {"driver": (OBJ, True)},
    "driver": {"name": (STR, True), "version": (STR, False), "informationUri": (STR, False)},
    "result": {"level": (STR, False), "message": (OBJ, True), "locations": (ARR, False),
               "relatedLocations": (ARR, False), "ruleId": (STR, False)},
    "location": {"id": (INT, False), "physicalLocation": (OBJ, False), "message": (OBJ, False)},
    "physicalLocation": {"artifactLocation": (OBJ, False), "region": (OBJ, False)},
    "artifactLocation": {"uri": (STR, False)},
    "region": {"startLine": (INT, False), "startColumn": (INT, False), "endLine": (INT, False),
               "endColumn": (INT, False)},
    "message": {"text": (STR, False), "id": (STR, False)},
}
ENUMS = {("log", "version"): {"2.1.0"},
         ("result", "level"): {"none", "note", "warning", "error"},
         ("run", "columnKind"): {"utf16CodeUnits", "unicodeCodePoints"}}
MINIMUM = {("location", "id"): -1, ("region", "startLine"): 1, ("region", "startColumn"): 1,
           ("region", "endLine"): 1, ("region", "endColumn"): 1}


class Checker:
    def __init__(self, name):
        self.name, self.problems = name, []

    def fail(self, path, what):
        self.problems.append(f"{self.name}: {path}: {what}")

    def obj(self, kind, value, path):
        if not isinstance(value, dict):
            return self.fail(path, f"a {kind} must be an object")
        props = SCHEMA[kind]
        for key, (typ, required) in props.items():
            if key not in value:
                if required:
                    self.fail(path, f"the {kind} lacks the required property '{key}'")
                continue
            v = value[key]
            if not isinstance(v, typ) or (typ is INT and isinstance(v, bool)):
                self.fail(f"{path}.{key}", f"must be {typ.__name__}")
                continue
            if (kind, key) in ENUMS and v not in ENUMS[(kind, key)]:
                self.fail(f"{path}.{key}", f"'{v}' is not one of {sorted(ENUMS[(kind, key)])}")
            if (kind, key) in MINIMUM and v < MINIMUM[(kind, key)]:
                self.fail(f"{path}.{key}", f"{v} is below the minimum {MINIMUM[(kind, key)]}")
        for key in value:
            if key not in props:
                self.fail(path, f"the {kind} has a property '{key}' the schema does not define")
        return True

    def log(self, doc):
        if not self.obj("log", doc, "$"):
            return
        for i, run in enumerate(doc.get("runs", [])):
            self.run(run, f"$.runs[{i}]")

    def run(self, run, path):
        if not self.obj("run", run, path):
            return
        if self.obj("tool", run.get("tool"), path + ".tool"):
            self.obj("driver", run["tool"].get("driver"), path + ".tool.driver")
        for i, result in enumerate(run.get("results", [])):
            self.result(result, f"{path}.results[{i}]")

    def result(self, result, path):
        if not self.obj("result", result, path):
            return
        self.message(result.get("message"), path + ".message")
        for key in ("locations", "relatedLocations"):
            for i, loc in enumerate(result.get(key, [])):
                self.location(loc, f"{path}.{key}[{i}]")

    def message(self, m, path):
        if self.obj("message", m, path) and "text" not in m and "id" not in m:
            self.fail(path, "a message needs text or id")

    def location(self, loc, path):
        if not self.obj("location", loc, path):
            return
        if "message" in loc:
            self.message(loc["message"], path + ".message")
        phys = loc.get("physicalLocation")
        if phys is None or not self.obj("physicalLocation", phys, path + ".physicalLocation"):
            return
        if "artifactLocation" in phys:
            self.obj("artifactLocation", phys["artifactLocation"], path + ".physicalLocation.artifactLocation")
        region = phys.get("region")
        if region is not None and self.obj("region", region, path + ".physicalLocation.region"):
            self.region(region, path + ".physicalLocation.region")

    def region(self, r, path):
        if "startLine" not in r:
            return self.fail(path, "a text region needs startLine")
        end_line = r.get("endLine", r["startLine"])
        if isinstance(end_line, int) and end_line < r["startLine"]:
            self.fail(path, "endLine is before startLine")
        if end_line == r["startLine"] and r.get("endColumn", 10**9) < r.get("startColumn", 1):
            self.fail(path, "endColumn is before startColumn on the same line")


def main(paths):
    problems = []
    for path in paths:
        c = Checker(path)
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            problems.append(f"{path}: not JSON: {e}")
            continue
        c.log(doc)
        problems += c.problems
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) if len(sys.argv) > 1 else 2)
