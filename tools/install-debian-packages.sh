#!/usr/bin/env bash
# Debian packages the suite uses outside Python: fio (benchmarks/ compares against it),
# chromium (report tests render the HTML page headless) and postgresql-15 (suite history's
# PostgreSQL store is tested against a throwaway server: tools/postgres.sh) and stress-ng (tools/loaded-tests.sh
# keeps every core busy while the tests run). Idempotent; needs root.
set -euo pipefail
packages=(fio chromium postgresql-15 stress-ng)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "tools/install-debian-packages.sh: need root to install: ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
