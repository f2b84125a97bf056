#!/bin/sh
# Test "hosts" on one machine: network namespaces joined by a bridge, each with its own
# address and (through a UTS namespace) its own hostname, sharing this file system.
#
#   tools/netns-hosts.sh up N [PREFIX]     make hosts PREFIX1..PREFIXN (default PREFIX suite-h)
#   tools/netns-hosts.sh down [PREFIX]     remove them (every namespace, veth, bridge, file)
#   tools/netns-hosts.sh list [PREFIX]     the host names, one a line (a --hostfile)
#
# Then:  suite run --hosts suite-h1,suite-h2 --launcher tools/netns-launcher ...
# tools/netns-launcher is called as ssh is (`LAUNCHER [-x] [-o OPT] HOST COMMAND`), by mpiexec
# (hydra's -launcher ssh -launcher-exec) and by `suite run` for its per-host cache drop and
# cgroup; it runs COMMAND in HOST's namespaces instead of over ssh. Real clusters keep ssh.
# The hosts share one kernel: one page cache, one cgroup hierarchy (see docs/multi-host.md).
#
# Environment: SUITE_NETNS_SUBNET (first three octets, default 10.231.0): the bridge is .1,
# host i is .(10+i); SUITE_NETNS_STATE (default /run/suite-netns). Needs root and iproute2.
set -eu
STATE=${SUITE_NETNS_STATE:-/run/suite-netns}
SUBNET=${SUITE_NETNS_SUBNET:-10.231.0}

usage() { echo "usage: $0 up N [PREFIX] | down [PREFIX] | list [PREFIX]" >&2; exit 2; }

check_prefix() {
    case "$1" in
        *[!A-Za-z0-9-]*|"") echo "$0: PREFIX: expected letters, digits, '-', got '$1'" >&2; exit 2 ;;
    esac
    if [ "${#1}" -gt 9 ]; then echo "$0: PREFIX: expected at most 9 characters (interface names), got '$1'" >&2; exit 2; fi
}

down() {
    p=$1
    for h in $(cat "$STATE/$p.hosts" "$STATE/$p.hosts.tmp" 2>/dev/null); do
        umount "$STATE/$h.uts" 2>/dev/null || true
        rm -f "$STATE/$h.uts" "$STATE/$h.gw"
        ip netns del "$h" 2>/dev/null || true
    done
    for dev in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1); do
        case "$dev" in "${p}v"[0-9]*|"${p}br") ip link del "$dev" 2>/dev/null || true ;; esac
    done
    rm -f "$STATE/$p.hosts" "$STATE/$p.hosts.tmp"
    rmdir "$STATE" 2>/dev/null || true
}

up() {
    n=$1 p=$2
    case "$n" in ''|*[!0-9]*) echo "$0: N: expected a number of hosts (1-200), got '$n'" >&2; exit 2 ;; esac
    if [ "$n" -lt 1 ] || [ "$n" -gt 200 ]; then echo "$0: N: expected 1-200, got $n" >&2; exit 2; fi
    if [ -e "$STATE/$p.hosts" ]; then echo "$0: $p: hosts already up ($STATE/$p.hosts); run 'down $p' first" >&2; exit 2; fi
    trap 'down "$p"' EXIT          # a failure half-way leaves nothing behind
    mkdir -p "$STATE"
    br="${p}br"
    ip link add "$br" type bridge
    ip addr add "$SUBNET.1/24" dev "$br"
    ip link set "$br" up
    : > "$STATE/$p.hosts.tmp"
    i=1
    while [ "$i" -le "$n" ]; do
        h="$p$i"
        echo "$h" >> "$STATE/$p.hosts.tmp"
        ip netns add "$h"
        ip link add "${p}v$i" type veth peer name "${p}p$i"
        ip link set "${p}p$i" netns "$h"
        ip link set "${p}v$i" master "$br"
        ip link set "${p}v$i" up
        ip netns exec "$h" ip link set "${p}p$i" name eth0
        ip netns exec "$h" ip addr add "$SUBNET.$((10 + i))/24" dev eth0
        ip netns exec "$h" ip link set eth0 up
        ip netns exec "$h" ip link set lo up
        touch "$STATE/$h.uts"
        unshare --uts="$STATE/$h.uts" hostname "$h"
        echo "$SUBNET.1" > "$STATE/$h.gw"
        i=$((i + 1))
    done
    mv "$STATE/$p.hosts.tmp" "$STATE/$p.hosts"
    trap - EXIT
    cat "$STATE/$p.hosts"
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case "$cmd" in
    up)   [ $# -ge 1 ] || usage; pfx=${2:-suite-h}; check_prefix "$pfx"; up "$1" "$pfx" ;;
    down) pfx=${1:-suite-h}; check_prefix "$pfx"; down "$pfx" ;;
    list) pfx=${1:-suite-h}; check_prefix "$pfx"; cat "$STATE/$pfx.hosts" ;;
    *) usage ;;
esac
