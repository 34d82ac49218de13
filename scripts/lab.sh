#!/usr/bin/env bash
# `npm run lab`: Debian's Jupyter Notebook on notebooks/ with the tslab kernel, on 127.0.0.1 only.
# Needs: apt-get install -y --no-install-recommends jupyter-notebook jupyter-nbconvert jupyter-client python3-ipython
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/jupyter-notebook ]; then
  echo "Jupyter Notebook is missing: apt-get install -y --no-install-recommends jupyter-notebook jupyter-client python3-ipython" >&2
  exit 1
fi
bash scripts/setup-notebooks.sh
export JUPYTER_PATH="$PWD/.jupyter/share/jupyter"
export JUPYTER_RUNTIME_DIR="$PWD/.jupyter/runtime"
port="${LAB_PORT:-8888}"
extra=()
# Containers and CI machines often run as root, which Jupyter refuses without this flag.
[ "$(id -u)" = 0 ] && extra+=(--allow-root)
echo "Starting Jupyter Notebook on notebooks/ (kernel: TypeScript (tslab)); open the URL with the token printed below."
echo "URL: http://127.0.0.1:$port/ (Ctrl-C stops it; LAB_PORT=<port> for another port)"
echo "The runs in a browser: npx typelm view (http://127.0.0.1:4173/, see docs/viewer.md)"
# No port retries: Jupyter would move to the next free port and the URL above would be wrong.
exec /usr/bin/jupyter-notebook --no-browser --ip=127.0.0.1 --port="$port" --NotebookApp.port_retries=0 \
  --notebook-dir="$PWD/notebooks" "${extra[@]}"
