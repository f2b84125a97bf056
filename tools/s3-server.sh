#!/usr/bin/env bash
# A real local S3 server for the tests and for trying `suite` on object storage: versitygw (Apache-2.0,
# an S3 gateway over a POSIX directory), pinned, built once with the Go toolchain and cached.
#
#   tools/s3-server.sh start [--dir DIR] [--port PORT] [--bucket NAME]...   start it on 127.0.0.1
#   tools/s3-server.sh stop [--dir DIR]                                     stop it (SIGTERM, then SIGKILL)
#   tools/s3-server.sh status [--dir DIR]                                   exit 0 when it answers
#   tools/s3-server.sh env [--dir DIR]                                      the AWS variables, as exports
#   tools/s3-server.sh build                                                build (or find) the binary only
#
# DIR (default ~/.cache/suite/s3-server) holds data/ (the buckets: one directory each), meta/ (versitygw's
# sidecar metadata), env (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION; mode 600),
# pid and log. New credentials are drawn at every start; they go to DIR/env only, never to stdout.
# Use it with:  eval "$(tools/s3-server.sh env)"  or  set -a; . DIR/env; set +a
# Exit codes: 0 ok, 1 not running (status), 2 usage or a failed start (the Go toolchain missing: one line).
set -euo pipefail

VERSION=v1.8.0
MODULE=github.com/versity/versitygw/cmd/versitygw
CACHE=${SUITE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/suite}
BIN_DIR=$CACHE/versitygw-$VERSION
BIN=$BIN_DIR/versitygw

die() { echo "s3-server: $*" >&2; exit 2; }

find_go() {
    if [ -n "${GO:-}" ]; then echo "$GO"; return; fi
    for go in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go; do
        if [ -n "$go" ] && [ -x "$go" ]; then echo "$go"; return; fi
    done
}

build() {
    [ -x "$BIN" ] && return 0
    local go
    go=$(find_go)
    [ -n "$go" ] || die "the Go toolchain: expected go on PATH or /usr/local/go/bin/go, got neither (versitygw $VERSION is built with it)"
    mkdir -p "$BIN_DIR"
    local tmp
    tmp=$(mktemp -d "$BIN_DIR/.build.XXXXXX")
    echo "s3-server: building versitygw $VERSION (once, cached in $BIN_DIR; about 1-2 min)" >&2
    if ! GOBIN="$tmp" GOFLAGS=-mod=mod "$go" install "$MODULE@$VERSION" >"$tmp/build.log" 2>&1; then
        tail -5 "$tmp/build.log" >&2
        rm -rf "$tmp"
        die "go install $MODULE@$VERSION failed"
    fi
    mv "$tmp/versitygw" "$BIN"          # the rename: a half-built binary is never taken as built
    rm -rf "$tmp"
}

DIR=${SUITE_S3_DIR:-$CACHE/s3-server}
PORT=""
BUCKETS=()
cmd=${1:-}
[ -n "$cmd" ] || die "usage: tools/s3-server.sh start|stop|status|env|build [--dir DIR] [--port PORT] [--bucket NAME]"
shift
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) DIR=$2; shift 2 ;;
        --port) PORT=$2; shift 2 ;;
        --bucket) BUCKETS+=("$2"); shift 2 ;;
        *) die "unknown option: $1" ;;
    esac
done

running() {
    [ -f "$DIR/pid" ] && kill -0 "$(cat "$DIR/pid")" 2>/dev/null
}

answers() {     # an HTTP answer (any status) from the endpoint
    local endpoint
    endpoint=$(sed -n 's/^AWS_ENDPOINT_URL=//p' "$DIR/env" 2>/dev/null)
    [ -n "$endpoint" ] || return 1
    python3 - "$endpoint" <<'EOF'
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(sys.argv[1] + "/", timeout=1)
except urllib.error.HTTPError:
    pass
except Exception:
    sys.exit(1)
EOF
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    if running; then
        echo "s3-server: already running (pid $(cat "$DIR/pid")); env: $DIR/env"
        return 0
    fi
    build
    mkdir -p "$DIR/data" "$DIR/meta"
    local port access secret
    port=${PORT:-$(free_port)}
    access=$(python3 -c 'import secrets; print("suite" + secrets.token_hex(8))')
    secret=$(python3 -c 'import secrets; print(secrets.token_urlsafe(30))')
    for bucket in "${BUCKETS[@]}"; do       # a bucket of the posix backend is a top-level directory
        mkdir -p "$DIR/data/$bucket"
    done
    ( umask 077
      printf 'AWS_ENDPOINT_URL=http://127.0.0.1:%s\nAWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\nAWS_REGION=us-east-1\n' \
          "$port" "$access" "$secret" >"$DIR/env.tmp"
      mv "$DIR/env.tmp" "$DIR/env" )
    # the keys reach versitygw through its environment, not its argv (ps shows argv)
    ROOT_ACCESS_KEY=$access ROOT_SECRET_KEY=$secret nohup "$BIN" --port "127.0.0.1:$port" --region us-east-1 \
        posix --sidecar "$DIR/meta" "$DIR/data" >"$DIR/log" 2>&1 </dev/null &
    echo $! >"$DIR/pid"
    for _ in $(seq 1 100); do
        if answers; then
            echo "s3-server: versitygw $VERSION on http://127.0.0.1:$port, data $DIR/data, env $DIR/env"
            return 0
        fi
        running || break
        sleep 0.1
    done
    tail -5 "$DIR/log" >&2 || true
    stop >/dev/null 2>&1 || true
    die "versitygw did not answer on 127.0.0.1:$port (log: $DIR/log)"
}

stop() {
    if ! running; then
        rm -f "$DIR/pid"
        echo "s3-server: not running"
        return 0
    fi
    local pid
    pid=$(cat "$DIR/pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$DIR/pid"
    echo "s3-server: stopped (pid $pid)"
}

case "$cmd" in
    build) build; echo "$BIN" ;;
    start) start ;;
    stop) stop ;;
    status)
        if running && answers; then echo "s3-server: running (pid $(cat "$DIR/pid")), env $DIR/env"; else echo "s3-server: not running"; exit 1; fi ;;
    env)
        [ -f "$DIR/env" ] || die "$DIR/env: expected the environment of a started server, got no file"
        sed 's/^/export /' "$DIR/env" ;;
    *) die "usage: tools/s3-server.sh start|stop|status|env|build [--dir DIR] [--port PORT] [--bucket NAME]" ;;
esac
