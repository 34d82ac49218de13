#!/usr/bin/env bash
# Prepares the repository for running notebooks on the tslab kernel (used by `npm run lab` and
# `npm run test:notebooks`; needs `npm ci && npm run build` first):
#  - node_modules/typelm → the repository root: tslab compiles cells with TypeScript 5.0, which cannot
#    resolve a package's own name from inside it, so notebooks import "typelm" through this link.
#  - the tslab kernel spec in ./.jupyter (a local prefix; nothing is written outside the repository).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

if [ ! -f dist/pkg/notebook.js ]; then
  echo "dist/ is missing or stale: run \`npm run build\` first" >&2
  exit 1
fi

link=node_modules/typelm
if [ ! -L "$link" ] || [ "$(readlink -f "$link")" != "$root" ]; then
  rm -rf "$link"
  ln -s .. "$link"
fi

if [ ! -x /usr/bin/jupyter ]; then
  echo "Debian's Jupyter is missing: apt-get install -y --no-install-recommends jupyter-nbconvert jupyter-client python3-ipython jupyter-notebook" >&2
  exit 1
fi

kernel="$root/.jupyter/share/jupyter/kernels/tslab/kernel.json"
# The spec records absolute paths: reinstall when the repository moved.
if [ ! -f "$kernel" ] || ! grep -q "$root/node_modules/.bin/tslab" "$kernel"; then
  node node_modules/tslab/bin/tslab install --python=/usr/bin/python3 --prefix="$root/.jupyter" \
    --binary="$root/node_modules/.bin/tslab" >/dev/null
fi
echo "tslab kernel spec: $kernel"
