#!/usr/bin/env bash
# README's test command (.ci/run) on a fresh clone, N times in a row (default 3), with every core and the disk
# kept busy by another job (stress-ng: one CPU hog per core and one disk writer, --hdd 1, in $LOADED_WORK) for
# as long as the tests run: issues 38 and 47's "the test suite holds under load". Stops at the first failing
# run. Logs: $LOADED_WORK/run-<i>.log (default /tmp/loaded-tests).
# Usage: tools/loaded-tests.sh [N]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
times=${1:-3}
work=${LOADED_WORK:-/tmp/loaded-tests}
command -v stress-ng >/dev/null || { echo "tools/loaded-tests.sh: expected stress-ng (tools/install-debian-packages.sh), got none" >&2; exit 2; }
mkdir -p "$work"
[ -d "$repo/../shared" ] && ln -sfn "$(cd "$repo/../shared" && pwd)" "$work/shared"
hog=""
trap '[ -n "$hog" ] && kill "$hog" 2>/dev/null; true' EXIT
for i in $(seq 1 "$times"); do
    rm -rf "$work/main"
    git clone -q "$repo" "$work/main"
    stress-ng --cpu "$(nproc)" --hdd 1 --temp-path "$work" --quiet & hog=$!
    start=$(date +%s)
    rc=0
    (cd "$work/main" && CI=true bash .ci/run > "$work/run-$i.log" 2>&1) || rc=$?
    kill "$hog"; wait "$hog" 2>/dev/null || true; hog=""
    echo "loaded run $i of $times: exit $rc in $(( $(date +%s) - start )) s: $(grep -E '(passed|failed)' "$work/run-$i.log" | tail -1)"
    [ "$rc" -eq 0 ] || exit "$rc"
done
