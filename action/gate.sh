#!/usr/bin/env bash
# Step 4 of the capslint action: fail the job as capslint's exit code says, after the SARIF upload.
set -euo pipefail

code="${CAPSLINT_EXIT_CODE:-}"
case "$code" in
  0)
    exit 0
    ;;
  1)
    if [[ "${INPUT_FAIL_ON_FINDINGS:-true}" == "true" ]]; then
      echo "capslint found problems: see the annotations or the log above."
      exit 1
    fi
    echo "capslint found problems; not failing because fail-on-findings is false."
    ;;
  *)
    echo "capslint could not complete (exit code ${code:-unknown}): see the log above."
    exit 2
    ;;
esac
