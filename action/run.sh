#!/usr/bin/env bash
# Step 2 of the capslint action: run capslint once, and show its findings.
#
# For `check`, capslint writes one SARIF report; action/report.py derives from it the annotations on
# the diff (the workflow commands capslint's `github` format prints) or a listing, the count per rule
# in the job summary, and, with `sarif`, the file the upload step sends to code scanning. Other
# commands, and a `check` whose arguments name their own output, run as they are. The exit code is
# recorded for the gate step, which runs after the upload, so the SARIF is uploaded even when the job
# is about to fail.
set -uo pipefail

# Split the arguments on whitespace, without globbing or evaluating anything in them.
read -r -a args <<<"${INPUT_ARGS:-}"
if [[ ${#args[@]} -eq 0 ]]; then
  args=(check .)
fi

names_output=false
for arg in "${args[@]}"; do
  case "$arg" in
    --output-format | --output-format=* | --statistics | --output-file | --output-file=* | -o | -o?*) names_output=true ;;
  esac
done

if [[ "${args[0]}" != check || "$names_output" == true ]]; then
  status=0
  capslint "${args[@]}" || status=$?
  echo "exit-code=$status" >>"$GITHUB_OUTPUT"
  exit 0
fi

sarif="${RUNNER_TEMP:?RUNNER_TEMP is not set}/capslint.sarif"
rm -f "$sarif"
status=0
capslint "${args[@]}" --output-format sarif --output-file "$sarif" || status=$?
echo "exit-code=$status" >>"$GITHUB_OUTPUT"

if [[ ! -s "$sarif" ]]; then
  echo "::warning title=capslint::capslint wrote no report (exit code $status)"
  exit 0
fi

python=""
for candidate in python3 python; do
  if command -v "$candidate" >/dev/null 2>&1; then
    python="$candidate"
    break
  fi
done
report=("$sarif")
[[ "${INPUT_ANNOTATIONS:-true}" == "true" ]] && report+=(--annotations)
[[ "${INPUT_SUMMARY:-true}" == "true" && -n "${GITHUB_STEP_SUMMARY:-}" ]] && report+=(--summary "$GITHUB_STEP_SUMMARY")
if [[ -z "$python" ]]; then
  echo "::warning title=capslint::Python 3 is not installed: no annotations, listing or summary; the report is $sarif"
elif ! "$python" "${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}/action/report.py" "${report[@]}"; then
  echo "::warning title=capslint::the findings could not be shown; the report is $sarif"
fi

if [[ "${INPUT_SARIF:-false}" == "true" ]]; then
  echo "sarif-file=$sarif" >>"$GITHUB_OUTPUT"
fi
exit 0
