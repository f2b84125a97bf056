#!/usr/bin/env bash
# Render an HTML page in Debian's headless chromium (installed by tools/install-debian-packages.sh).
#   tools/render-page.sh PAGE.html SCREENSHOT.png [DOM.html]
# Writes SCREENSHOT.png (1280x2000 window), SCREENSHOT.png.log (chromium's log: console messages
# are its "CONSOLE" lines) and, when DOM.html is given, the DOM after load (--dump-dom).
# Uses a throw-away profile and no network; exits with chromium's status.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: tools/render-page.sh PAGE.html SCREENSHOT.png [DOM.html]" >&2
    exit 2
fi
page=$(realpath "$1")
png=$2
dom=${3:-}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "tools/render-page.sh: chromium not found (run tools/install-debian-packages.sh)" >&2
    exit 2
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$profile")
timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --window-size=1280,2000 \
    --screenshot="$png" "file://$page" >/dev/null 2>"$png.log"
if [ -n "$dom" ]; then
    timeout 120 "$browser" "${flags[@]}" --virtual-time-budget=5000 --dump-dom "file://$page" >"$dom" 2>>"$png.log"
fi
