#!/usr/bin/env bash
# Sets up everything a fresh machine needs; safe to run again (each step is skipped when done).
#   scripts/setup.sh          Python venv + Python tools + npm packages (site, calculators, bench)
#   scripts/setup.sh browser  also Debian's chromium for the browser tests (apt; needs root or sudo)
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
stamp=.venv/.requirements.sha
want=$(cat requirements-dev.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages (torch==2.13.0 CPU build from the local disk)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements-dev.txt
  .venv/bin/pip install -q --no-deps -e .
  echo "$want" > "$stamp"
fi

if [ -f package.json ]; then
  lock=node_modules/.package-lock.json
  if [ ! -f "$lock" ] || [ package-lock.json -nt "$lock" ]; then
    echo "setup: npm ci (pyodide runtime, pinned)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
fi

# poppler-utils: pdftotext/pdfinfo, to read the PDFs Chromium prints (tests/test_browser_report.py)
if [ "${1:-}" = "browser" ] && { [ ! -x /usr/bin/chromium ] || ! command -v pdftotext >/dev/null; }; then
  echo "setup: installing Debian's chromium and poppler-utils for the browser tests"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium poppler-utils >/dev/null
fi
echo "setup: ready"
