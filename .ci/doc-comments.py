#!/usr/bin/env python3
"""Fails when a public symbol declared in Sources/ has no doc comment (issue 30).

Reads the symbol graphs that `swift package generate-documentation` extracted (under
.build/*/extracted-symbols/) for the targets named on the command line. Extensions are not
symbols a reader looks up and are skipped; their members are checked.
"""
import glob
import json
import os
import sys

# Symbols of this package's own sources only: a dependency's extension of a standard type (swift-
# algorithms' `scan` on Sequence) appears in the graph too, with a path under .build/checkouts.
own = os.getcwd().rstrip("/") + "/Sources/"

missing = []
checked = 0
for target in sys.argv[1:]:
    files = glob.glob(f".build/*/extracted-symbols/*/{target}/*.symbols.json")
    if not files:
        sys.exit(f"no symbol graph for {target}: run swift package generate-documentation first")
    for path in files:
        for s in json.load(open(path))["symbols"]:
            uri = s.get("location", {}).get("uri", "")
            if own not in uri or s.get("accessLevel") not in ("public", "open"):
                continue
            if s["kind"]["identifier"] == "swift.extension":
                continue
            checked += 1
            if not s.get("docComment"):
                line = s["location"]["position"]["line"] + 1
                missing.append(f"Sources/{uri.split('/Sources/')[1]}:{line}: {'.'.join(s['pathComponents'])}")
for m in sorted(set(missing)):
    print(f"{m}: public symbol without a doc comment", file=sys.stderr)
print(f"{checked} public symbols, {len(set(missing))} without a doc comment")
sys.exit(1 if missing else 0)
