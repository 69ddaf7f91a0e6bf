#!/usr/bin/env python3
"""The documentation's coverage check (`make docs`, `make test`): every public declaration of the
Strata module (not @_spi) has a doc comment, and every article of the DocC catalog is linked
from the landing page. Reads the symbol graph that swift-symbolgraph-extract wrote.

usage: check-docs.py SYMBOL_GRAPH_DIR CATALOG_DIR
"""
import glob
import json
import os
import re
import sys


def main(graph_dir, catalog):
    seen, missing = set(), []
    for path in glob.glob(os.path.join(graph_dir, "Strata*.symbols.json")):
        for s in json.load(open(path))["symbols"]:
            if s.get("accessLevel") != "public" or s.get("spi"):
                continue
            uri = s.get("location", {}).get("uri", "")
            if "/Sources/Strata/" not in uri:
                continue  # inherited from another module's protocol or type
            where = uri.split("/Sources/Strata/")[1] + ":" + str(s["location"]["position"]["line"] + 1)
            name = ".".join(s["pathComponents"])
            if (where, name) in seen:
                continue
            seen.add((where, name))
            if not s.get("docComment"):
                missing.append(f"  Sources/Strata/{where}: {s['kind']['displayName'].lower()} {name}")
    if not seen:
        print(f"docs: no symbols of Strata in {graph_dir}")
        return 1
    landing = open(os.path.join(catalog, "Strata.md")).read()
    linked = set(re.findall(r"<doc:(\w+)>", landing))
    articles = {os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(catalog, "*.md"))}
    unlinked = sorted(articles - linked - {"Strata"})
    dangling = sorted(linked - articles)
    for m in missing:
        print(m)
    for a in unlinked:
        print(f"  {catalog}/{a}.md: not linked from the landing page's topics")
    for a in dangling:
        print(f"  Strata.md links <doc:{a}>, which is no article")
    print(f"docs: {len(seen)} public declarations, {len(missing)} without a doc comment; "
          f"{len(articles) - 1} articles, {len(unlinked) + len(dangling)} not linked")
    return 1 if missing or unlinked or dangling else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
