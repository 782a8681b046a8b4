# Sourced by scripts/serve and scripts/test: make ./.venv exist and match pyproject.toml.
# Usage: ensure_venv EXTRAS   (e.g. "" or "test")
ensure_venv() {
  local extras="$1"
  local python="${PYTHON:-}"
  if [ -z "$python" ]; then
    for candidate in python3.11 python3 python; do
      if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
    done
  fi
  if [ ! -x .venv/bin/python ]; then
    echo "creating .venv with $python" >&2
    "$python" -m venv .venv
  fi
  local spec="."
  [ -n "$extras" ] && spec=".[$extras]"
  local stamp=".venv/.installed-${extras:-base}"
  local want
  want="$(cat pyproject.toml | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "installing switchgate $spec into .venv" >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$spec" >&2
    echo "$want" > "$stamp"
  fi
}
