#!/usr/bin/env bash
# Step 1 of the capslint action: make `capslint` available to the next steps.
#
# `version` (default: this action's release) names the capslint to use:
# - a capslint already on PATH of that version is used as it is (any version when `version` is empty);
# - else the prebuilt wheel `capslint==VERSION` is installed from the Python package index into a
#   virtual environment under $RUNNER_TEMP, with uv when it is on PATH, else with Python's venv and pip
#   (empty `version`: the version of this action's own checkout), and its binary alone goes on PATH;
# - `version: source`, or a wheel that cannot be installed, builds the source in `path` (default: this
#   action's checkout) with `cargo install --locked`, when cargo is installed.
# Inputs come in through the environment, never through the script's text.
set -euo pipefail

want="${INPUT_VERSION:-}"
want="${want#v}"
action_path="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}"
runner_temp="${RUNNER_TEMP:?RUNNER_TEMP is not set}"

# The version a capslint binary reports (`capslint 0.1.0`).
version_of() {
  "$1" --version | awk '{ print $2 }'
}

# Records the capslint that the next steps run.
use() {
  local directory="$1" version
  version="$(version_of "$directory/capslint")"
  echo "$directory" >>"$GITHUB_PATH"
  echo "version=$version" >>"$GITHUB_OUTPUT"
  if [[ -n "$want" && "$want" != source && "$version" != "$want" ]]; then
    echo "::warning title=capslint::capslint $want was asked for, but $version was installed"
  fi
  echo "Installed capslint $version into $directory"
}

# The version of the action's own checkout, from its Cargo.toml.
action_version() {
  sed -n 's/^version = "\(.*\)"$/\1/p' "$action_path/Cargo.toml" | head -n 1
}

# Installs the wheel `capslint==$1` into a virtual environment, and prints a directory that holds its
# binary alone (the binary is self-contained): on PATH, the environment's python and pip would shadow
# the job's own in later steps.
install_wheel() {
  local version="$1" venv="$runner_temp/capslint-venv" bin="$runner_temp/capslint-bin" python="" scripts
  rm -rf "$venv"
  if command -v uv >/dev/null 2>&1; then
    echo "Installing capslint $version from the package index with uv" >&2
    uv venv --quiet "$venv" >&2 || return 1
    VIRTUAL_ENV="$venv" uv pip install --quiet "capslint==$version" >&2 || return 1
  else
    for candidate in python3 python; do
      if command -v "$candidate" >/dev/null 2>&1; then
        python="$candidate"
        break
      fi
    done
    if [[ -z "$python" ]]; then
      echo "Neither uv nor Python 3 is installed" >&2
      return 1
    fi
    echo "Installing capslint $version from the package index with $python -m pip" >&2
    "$python" -m venv "$venv" >&2 || return 1
    "$(scripts_dir "$venv")/python" -m pip install --quiet --disable-pip-version-check \
      "capslint==$version" >&2 || return 1
  fi
  scripts="$(scripts_dir "$venv")"
  rm -rf "$bin"
  mkdir -p "$bin"
  cp "$scripts"/capslint* "$bin/" || return 1
  echo "$bin"
}

# A virtual environment's scripts directory: `bin`, or `Scripts` on Windows.
scripts_dir() {
  if [[ -d "$1/Scripts" ]]; then echo "$1/Scripts"; else echo "$1/bin"; fi
}

# Builds the source with cargo, when cargo is installed, and prints the directory of the binary.
build_source() {
  local source_path="${INPUT_PATH:-}" root="$runner_temp/capslint"
  if [[ -z "$source_path" ]]; then
    source_path="$action_path"
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    echo "::error title=capslint::cargo is not installed, so capslint cannot be built from $source_path: add a Rust toolchain step before this action, or put capslint on PATH" >&2
    return 1
  fi
  echo "Building capslint from $source_path with cargo" >&2
  # A capslint checkout is a workspace; the binary is its crates/capslint.
  if [[ -f "$source_path/crates/capslint/Cargo.toml" ]]; then
    source_path="$source_path/crates/capslint"
  fi
  cargo install --locked --root "$root" --path "$source_path" >&2 || return 1
  echo "$root/bin"
}

if [[ "$want" != source ]] && command -v capslint >/dev/null 2>&1; then
  have="$(version_of capslint)"
  if [[ -z "$want" || "$want" == "$have" ]]; then
    echo "Using $(command -v capslint) (capslint $have)"
    echo "version=$have" >>"$GITHUB_OUTPUT"
    exit 0
  fi
  echo "capslint $have is on PATH, but $want was asked for"
fi

if [[ "$want" != source ]]; then
  if directory="$(install_wheel "${want:-$(action_version)}")"; then
    use "$directory"
    exit 0
  fi
  echo "capslint ${want:-$(action_version)} could not be installed from the package index; building it from source instead"
fi

if directory="$(build_source)"; then
  use "$directory"
  exit 0
fi
exit 2
