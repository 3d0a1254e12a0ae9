#!/usr/bin/env bash
# EMR bootstrap action: install parascout and its pinned dependencies on every node.
#   --bootstrap-actions Path=s3://BUCKET/parascout/bootstrap.sh,Args=[s3://BUCKET/parascout/dist]
# DIST holds what `make package` builds: parascout-*.whl and constraints.txt.
set -euo pipefail
DIST=${1:?usage: bootstrap.sh s3://BUCKET/path/to/dist}
workdir=$(mktemp -d)
aws s3 cp --recursive "$DIST" "$workdir"
PY=${PARASCOUT_PYTHON:-python3}
sudo "$PY" -m pip install --upgrade pip
# CPU torch first, from PyTorch's CPU index (PyPI's Linux wheel is the multi-GB CUDA build)
sudo "$PY" -m pip install --index-url https://download.pytorch.org/whl/cpu "$(grep ^torch== "$workdir/constraints.txt")"
sudo "$PY" -m pip install -c "$workdir/constraints.txt" "$(ls "$workdir"/parascout-*.whl)[all]"
