#!/bin/sh
# symbols.sh BUILD_DIR - both libraries define nothing outside the ggfit_
# prefix (src/base/namespace.h renames the internal helpers); prints one
# "symbols: ok" line or the offending names.
b=$1
bad=$( { nm -g --defined-only "$b/libggfit.a" | awk 'NF==3{print $3}'
         nm -D --defined-only "$b/libggfit.so" | awk 'NF==3{print $3}'; } |
       grep -v '^ggfit_' | sort -u)
if [ -n "$bad" ]; then
    echo "symbols outside the ggfit_ prefix (add them to src/base/namespace.h):"
    echo "$bad"
    exit 1
fi
echo "symbols: ok"
