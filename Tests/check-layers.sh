#!/usr/bin/env bash
# check-layers.sh — the C core's layers call and include only downwards:
#   base → os → storage → btree → objects → query → api   (CCore/src/<layer>/)
# A file may include headers of its own folder and the door (<layer>/<layer>.h) of a lower layer,
# and its object file may use symbols defined by objects of its own folder and of lower layers. Prints every violation and
# fails if there is one; otherwise prints "layers: N files, no call or include goes up".
# Usage: Tests/check-layers.sh [object dir, default build/dbg]
set -uo pipefail
cd "$(dirname "$0")/.."
OBJ=${1:-build/dbg}
LAYERS=(base os storage btree objects query api)
rank() { local i; for i in "${!LAYERS[@]}"; do [ "${LAYERS[$i]}" = "$1" ] && echo "$i" && return; done; echo 99; }
bad=0
files=0
# includes
for f in CCore/src/*/*.[ch]; do
  files=$((files + 1))
  layer=$(basename "$(dirname "$f")")
  r=$(rank "$layer")
  [ "$r" = 99 ] && { echo "$f: folder '$layer' is not a layer"; bad=1; continue; }
  while read -r inc; do
    il=${inc%%/*}
    [ "$il" = "$inc" ] && { echo "$f includes \"$inc\": name the layer folder"; bad=1; continue; }
    ir=$(rank "$il")
    if [ "$ir" -gt "$r" ]; then echo "$f ($layer) includes $inc (a higher layer)"; bad=1; fi
    if [ "$il" != "$layer" ] && [ "$inc" != "$il/$il.h" ]; then
      echo "$f ($layer) includes $inc: another layer is entered through its door, $il/$il.h"; bad=1
    fi
  done < <(grep -oE '^#include "[^"]+"' "$f" | sed -E 's/#include "(.*)"/\1/' | grep -v '^strata.h$')
done
# calls (symbols an object uses that a higher layer's object defines)
if [ -d "$OBJ" ]; then
  defs=$(mktemp)
  for o in "$OBJ"/*/*.o; do
    l=$(basename "$(dirname "$o")")
    nm --defined-only -g "$o" | awk -v l="$l" '{print $3, l}'
  done | sort > "$defs"
  for o in "$OBJ"/*/*.o; do
    l=$(basename "$(dirname "$o")")
    r=$(rank "$l")
    while read -r sym; do
      dl=$(awk -v s="$sym" '$1 == s {print $2; exit}' "$defs")
      [ -z "$dl" ] && continue
      if [ "$(rank "$dl")" -gt "$r" ]; then
        echo "$l/$(basename "$o" .o).c ($l) calls $sym, defined in $dl (a higher layer)"; bad=1
      fi
    done < <(nm -u "$o" | awk '{print $2}')
  done
  rm -f "$defs"
else
  echo "no objects in $OBJ: build first (make build)"; bad=1
fi
if [ "$bad" = 0 ]; then echo "layers: $files files, no call or include goes up"; fi
exit "$bad"
