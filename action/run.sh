#!/usr/bin/env bash
# Step 2 of the capslint action: run capslint with the action's inputs.
#
# The findings go to the log as workflow commands (annotations on the diff) or as the full report;
# with `sarif`, a SARIF report is written for the upload step; with `summary`, the count per rule goes
# to the job summary. The exit code is recorded for the gate step, which runs after the upload, so
# the SARIF is uploaded even when the job is about to fail.
set -uo pipefail

# Split the arguments on whitespace, without globbing or evaluating anything in them.
read -r -a args <<<"${INPUT_ARGS:-}"
if [[ ${#args[@]} -eq 0 ]]; then
  args=(check .)
fi

is_check=false
[[ "${args[0]}" == "check" ]] && is_check=true
names_format=false
for arg in "${args[@]}"; do
  case "$arg" in
    --output-format | --output-format=* | --statistics | --output-file | --output-file=* | -o) names_format=true ;;
  esac
done

report=()
if [[ "$is_check" == true && "$names_format" == false ]]; then
  if [[ "${INPUT_ANNOTATIONS:-true}" == "true" ]]; then
    report=(--output-format github)
  else
    report=(--output-format full)
  fi
fi

status=0
capslint "${args[@]}" "${report[@]}" || status=$?
echo "exit-code=$status" >>"$GITHUB_OUTPUT"

if [[ "$is_check" == true && "${INPUT_SARIF:-false}" == "true" ]]; then
  sarif="${RUNNER_TEMP:?RUNNER_TEMP is not set}/capslint.sarif"
  rm -f "$sarif"
  capslint "${args[@]}" --output-format sarif --output-file "$sarif" --exit-zero >/dev/null 2>&1 || true
  if [[ -s "$sarif" ]]; then
    echo "sarif-file=$sarif" >>"$GITHUB_OUTPUT"
  else
    echo "::warning title=capslint::no SARIF report was written (exit code $status)"
  fi
fi

if [[ "$is_check" == true && "${INPUT_SUMMARY:-true}" == "true" && -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  {
    echo "### capslint"
    echo
    statistics="$(capslint "${args[@]}" --statistics --exit-zero 2>/dev/null)" || true
    if grep -q $'\t' <<<"$statistics"; then
      echo "| findings | code | rule |"
      echo "| ---: | --- | --- |"
      while IFS=$'\t' read -r count code name; do
        [[ -n "$code" ]] && echo "| ${count// /} | \`$code\` | $name |"
      done < <(grep $'\t' <<<"$statistics")
      echo
    fi
    grep -v $'\t' <<<"$statistics" || true
  } >>"$GITHUB_STEP_SUMMARY"
fi
exit 0
