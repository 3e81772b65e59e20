#!/usr/bin/env bash
# Installs what the tests need beyond the Python packages: PostgreSQL, Debian's Chromium for
# the browser tests, nginx for the deployment's, and a Label Studio server in its own virtual
# environment (its pinned dependencies must not constrain ours). Idempotent: a second run only checks.
# With --check it installs nothing: it names what is missing and fails if anything is.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v pg_ctlcluster >/dev/null 2>&1 || need+=(postgresql)
[ -x /usr/bin/chromium ] || need+=(chromium)  # driven by playwright, not chromedriver
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light)  # the deployment test
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)  # verifies the deployment's unit
fc-list 2>/dev/null | grep -qi dejavu || need+=(fonts-dejavu-core)
LS_VENV="${MMRB_LABEL_STUDIO_VENV:-.venv-labelstudio}"
if [ "${1:-}" = --check ]; then
  [ -x "$LS_VENV/bin/label-studio" ] || need+=("label-studio in $LS_VENV")
  if [ ${#need[@]} -gt 0 ]; then echo "missing: ${need[*]}"; exit 1; fi
  exit 0
fi
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "tests/setup-system.sh: installing ${need[*]} with apt-get (a few minutes, once)" >&2
  $SUDO apt-get update -q
  # only what is needed: recommended packages would add about a hundred more (some 500 MB)
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
if [ ! -x "$LS_VENV/bin/label-studio" ]; then
  echo "tests/setup-system.sh: installing a Label Studio server into $LS_VENV (a few minutes, once)" >&2
  python3 -m venv "$LS_VENV"
  "$LS_VENV/bin/python" -m pip install -q --upgrade pip
  "$LS_VENV/bin/python" -m pip install -q "label-studio>=1.23,<1.24"
fi
