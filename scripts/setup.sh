#!/usr/bin/env bash
# Idempotent setup: a venv in .venv with the pinned dependencies and this package (editable).
# torch is installed first and alone: `torch==2.13.0` resolves to the CPU build on this kind
# of machine; letting another package pull torch would fetch a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian packages the tests drive for real: PostgreSQL (Dagster's instance storage and the device leases
# on a real server, which the tests start in a temporary directory) and Chromium (the viewer's browser test)
missing=()
command -v pg_ctl >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing+=(postgresql)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "setup: not installed (apt-get install ${missing[*]}): the tests that need them fail or skip, saying so" >&2
    fi
fi
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
stamp=.venv/.mobileforge-installed
want="$(cat pyproject.toml requirements.lock | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    python -m pip install --quiet --upgrade pip
    python -m pip install --quiet torch==2.13.0
    python -m pip install --quiet -r requirements.lock
    python -m pip install --quiet --no-deps -e ".[dev]"
    echo "$want" > "$stamp"
fi
# Bytecode for the project's packages: every Dagster run and training step is a fresh process that
# imports the graph, and with PYTHONDONTWRITEBYTECODE set none would be cached (~0.4 CPU s each).
# A source changed later makes its cache stale, which Python notices and ignores.
python -m compileall -q -j 0 mobileforge pipelines assets resources ops training phonesim >/dev/null
