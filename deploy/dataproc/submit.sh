#!/usr/bin/env bash
# Submit one parascout job to Dataproc:  deploy/dataproc/submit.sh CLUSTER REGION JOB_MODULE ARGS...
#   deploy/dataproc/submit.sh my-cluster europe-west1 scan_cdx --root gs://BUCKET/cc --unlocked-root --cdx-api --url 'example.is/*'
# (parascout cannot lock a gs:// root: --unlocked-root promises that one job at a time writes it)
set -euo pipefail
cluster=$1 region=$2 module=$3; shift 3
jars=()  # the Java UDFs (STRAND handles ~4x faster); without the jar jobs fall back to regexp_replace
[ -f udfs/parascout-udfs.jar ] && jars=(--jars udfs/parascout-udfs.jar)
gcloud dataproc jobs submit pyspark "jobs/${module}.py" \
  --cluster "$cluster" --region "$region" "${jars[@]}" \
  --properties-file <(python3 -c 'import yaml,sys; print("\n".join(f"{k}={v}" for k,v in yaml.safe_load(open("conf/dataproc.yaml"))["spark"].items()))') \
  -- --conf conf/dataproc.yaml "$@"
