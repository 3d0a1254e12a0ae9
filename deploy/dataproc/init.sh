#!/usr/bin/env bash
# Dataproc initialization action: install parascout on every node.
#   --initialization-actions gs://BUCKET/parascout/init.sh --metadata parascout-dist=gs://BUCKET/parascout/dist
set -euo pipefail
DIST=$(/usr/share/google/get_metadata_value attributes/parascout-dist)
workdir=$(mktemp -d)
gsutil -m cp -r "$DIST/*" "$workdir/"
PY=${PARASCOUT_PYTHON:-/opt/conda/default/bin/python}
# CPU torch first, from PyTorch's CPU index (PyPI's Linux wheel is the multi-GB CUDA build)
"$PY" -m pip install --index-url https://download.pytorch.org/whl/cpu "$(grep ^torch== "$workdir/constraints.txt")"
"$PY" -m pip install -c "$workdir/constraints.txt" "$(ls "$workdir"/parascout-*.whl)[all]"
