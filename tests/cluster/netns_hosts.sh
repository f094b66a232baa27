#!/usr/bin/env bash
# Simulated cluster hosts on this machine, for tests/cluster_test.cc: each
# host is a network namespace with its own address on a private bridge, its
# own mount namespace (its own workspace at one shared path, its own
# /dev/shm), and its own OpenSSH server with key login.
#
#   netns_hosts.sh up DIR N     create hosts 0..N-1; writes in DIR:
#                               hosts (one address per line), key (ssh key),
#                               known_hosts, ws/ (the workspace path every
#                               host sees, backed by DIR/h<i>/ws on host i),
#                               h<i>/sshd.pid, bridge (the bridge's name)
#   netns_hosts.sh down DIR     remove every host (idempotent)
#   netns_hosts.sh probe        exit 0 when this machine allows all of it
#
# Run a command on host i: nsenter -t "$(cat DIR/h<i>/sshd.pid)" -m -n -- CMD
set -euo pipefail

tag_of() { printf 'ts%05d' $(( $(cksum <<<"$1" | cut -d' ' -f1) % 100000 )); }

probe() {
  [ "$(id -u)" -eq 0 ] || { echo "not root"; return 1; }
  for tool in ip unshare nsenter ssh ssh-keygen /usr/sbin/sshd; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed"; return 1; }
  done
  local ns="tsprobe$$"
  ip netns add "$ns" 2>/dev/null || { echo "cannot create network namespaces (ip netns add)"; return 1; }
  local ok=0
  ip link add "${ns}a" type veth peer name "${ns}b" 2>/dev/null || ok=1
  ip link del "${ns}a" 2>/dev/null || true
  ip netns exec "$ns" unshare --mount --propagation private true 2>/dev/null || ok=1
  ip netns del "$ns"
  [ $ok -eq 0 ] || echo "cannot create veth pairs or mount namespaces"
  return $ok
}

up() {
  local dir=$1 n=$2 tag
  tag=$(tag_of "$dir")
  local subnet="10.$(( 100 + 10#${tag:2:2} )).$(( 10#${tag:4:3} % 250 ))"
  mkdir -p "$dir/ws" /run/sshd
  ssh-keygen -q -t ed25519 -N '' -f "$dir/key" <<<y >/dev/null
  cp "$dir/key.pub" "$dir/authorized_keys"
  : >"$dir/known_hosts" && : >"$dir/hosts"
  ip link add "${tag}br" type bridge
  echo "${tag}br" >"$dir/bridge"
  ip link set "${tag}br" up
  for ((i = 0; i < n; i++)); do
    local ns="${tag}h$i" addr="$subnet.$((i + 1))" h="$dir/h$i"
    mkdir -p "$h/ws"
    ip netns add "$ns"
    ip link add "${tag}v$i" type veth peer name "${tag}p$i"
    ip link set "${tag}v$i" master "${tag}br" up
    ip link set "${tag}p$i" netns "$ns"
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" ip link set "${tag}p$i" name eth0
    ip netns exec "$ns" ip addr add "$addr/24" dev eth0
    ip netns exec "$ns" ip link set eth0 up
    ssh-keygen -q -t ed25519 -N '' -f "$h/hostkey" <<<y >/dev/null
    cat >"$h/sshd_config" <<CONF
ListenAddress $addr
HostKey $h/hostkey
PidFile $h/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
AcceptEnv none
CONF
    ip netns exec "$ns" unshare --mount --propagation private sh -c \
      "mount --bind '$h/ws' '$dir/ws' && mount -t tmpfs -o size=4g tmpfs /dev/shm && exec /usr/sbin/sshd -f '$h/sshd_config'"
    echo "$addr $(cut -d' ' -f1,2 "$h/hostkey.pub")" >>"$dir/known_hosts"
    echo "$addr" >>"$dir/hosts"
    echo "$ns" >"$h/netns"
  done
  # sshd writes its pid file once listening.
  for ((i = 0; i < n; i++)); do
    for _ in $(seq 50); do [ -s "$dir/h$i/sshd.pid" ] && break; sleep 0.1; done
    [ -s "$dir/h$i/sshd.pid" ] || { echo "sshd of host $i did not start"; exit 1; }
  done
}

down() {
  local dir=$1 tag
  tag=$(tag_of "$dir")
  for ns in $(ip netns list | awk '{print $1}' | grep "^${tag}h" || true); do
    ip netns pids "$ns" | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "${tag}br" 2>/dev/null || true
}

case "${1:-}" in
  up) up "$2" "$3" ;;
  down) down "$2" ;;
  probe) probe ;;
  *) echo "usage: $0 up DIR N | down DIR | probe" >&2; exit 2 ;;
esac
