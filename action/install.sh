#!/usr/bin/env bash
# Step 1 of the capslint action: make `capslint` available to the next steps.
#
# A capslint already on PATH wins (when `version` is empty or matches it); else `version` installs
# that release from crates.io; else the source in `path` (default: the action's own checkout) is
# built. Inputs come in through the environment, never through the script's text.
set -euo pipefail

want="${INPUT_VERSION:-}"
want="${want#v}"

if command -v capslint >/dev/null 2>&1; then
  have="$(capslint --version | awk '{ print $2 }')"
  if [[ -z "$want" || "$want" == "$have" ]]; then
    echo "Using $(command -v capslint) (capslint $have)"
    echo "version=$have" >>"$GITHUB_OUTPUT"
    exit 0
  fi
  echo "capslint $have is on PATH, but $want was asked for"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "::error title=capslint::cargo is not installed: add a Rust toolchain step before this action, or put capslint on PATH"
  exit 2
fi

root="${RUNNER_TEMP:?RUNNER_TEMP is not set}/capslint"
if [[ -n "$want" ]]; then
  cargo install --locked --root "$root" capslint --version "$want"
else
  source_path="${INPUT_PATH:-}"
  if [[ -z "$source_path" ]]; then
    source_path="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}"
  fi
  cargo install --locked --root "$root" --path "$source_path"
fi

echo "$root/bin" >>"$GITHUB_PATH"
version="$("$root/bin/capslint" --version | awk '{ print $2 }')"
echo "Installed capslint $version into $root/bin"
echo "version=$version" >>"$GITHUB_OUTPUT"
