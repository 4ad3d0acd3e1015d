#!/bin/sh
# python.sh BUILD - the Python module as a user installs it: a fresh venv
# (Debian's python3 with its site packages: setuptools, pytest), the built
# library copied beside the module (make python), pip install . from the
# repository, then pytest on tests/python against the CLI's --json.
set -e
b=$1
root=$(pwd)
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import pytest, setuptools, venv' 2>/dev/null; then
    echo "python: $py lacks pytest, setuptools or venv (scripts/deps.sh test installs them)"
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m venv --system-site-packages "$tmp/venv"
cp "$b/libggfit.so.1" python/ggfit/libggfit.so.1
# in a copy: pip builds in the tree it is given (build/, *.egg-info)
mkdir "$tmp/src" && cp -r pyproject.toml python "$tmp/src/"
(cd "$tmp/src" && "$tmp/venv/bin/pip" install -q --no-build-isolation --no-index --no-deps . \
    >"$tmp/pip.log" 2>&1) || { cat "$tmp/pip.log"; exit 1; }
cd "$tmp" && GGFIT_ROOT=$root GGFIT_CLI=$root/$b/ggfit "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider \
    "$root/tests/python"
