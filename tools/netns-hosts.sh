#!/usr/bin/env bash
# Test hosts on this machine: one network namespace per host, each joined by a veth pair to a bridge that lives in
# a namespace of its own, addresses from 10.231.0.0/24 (which exists only inside those namespaces: nothing is added
# to this machine's own network), each host's link shaped: a token bucket (tc tbf) on the host's egress for the
# bandwidth, and a one-way latency and random loss on every packet between two hosts.
#
#   netns-hosts.sh up   --hosts N [--bandwidth MBIT] [--latency MS] [--loss PCT] [--prefix P]
#   netns-hosts.sh down [--prefix P]
#   netns-hosts.sh run  --hosts N [shaping] [--prefix P] [--grace S] -- COMMAND [ARGS...]
#
# Latency and loss come from netem on each host's egress where the kernel has sch_netem. Where it has not (the
# Firecracker kernel this project is developed on), a delay line does the same in the switch: the bridge hands the
# frames it forwards to iptables (br_netfilter), one NFQUEUE rule queues every one of them, and netdelay
# (tools/netdelay, built as build/tools/netdelay/netdelay; $PIPESQUEEZE_NETDELAY names another) holds each packet for
# the latency, or drops it with the loss probability, before the bridge passes it on. Either way a packet from one
# host to another is delayed once, so the round trip between two hosts is twice the latency. The delay line needs
# iptables; its counters (packets, the longest hold) end up in netdelay.log of a fresh $TMPDIR/netns-hosts-P.XXXXXX
# folder, which `run` prints at its end and `down` removes.
#
# `run` makes the hosts, starts COMMAND once per host as one rank of a multi-process run (RANK, WORLD_SIZE,
# MASTER_ADDR = host 0, MASTER_PORT, a fresh PIPESQUEEZE_STORE_TOKEN, PIPESQUEEZE_BIND=eth0), waits for every rank
# and always removes the hosts again: when the ranks end, when one fails (the others get S seconds, default 30, to
# notice and record the failure, then are stopped), on Ctrl-C or on a kill of this script (SIGKILL excepted: `down`
# cleans up after that). Its exit status is the first failing rank's, else 0. `up` replaces hosts of the same prefix:
# give concurrent runs their own --prefix.
# Needs root (CAP_NET_ADMIN) and iproute2. Host i is P-h<i> at 10.231.0.<i+1>; the bridge is in P-sw.
set -u

die() {
  echo "netns-hosts: $*" >&2
  exit 2
}

action=${1:-}
[[ -n $action ]] || die "usage: netns-hosts.sh up|down|run ... (see the head of this script)"
shift
hosts=0 bandwidth=0 latency=0 loss=0 prefix=ps grace=30
while (($#)); do
  case $1 in
    --hosts) hosts=${2:-}; shift 2 ;;
    --bandwidth) bandwidth=${2:-}; shift 2 ;;
    --latency) latency=${2:-}; shift 2 ;;
    --loss) loss=${2:-}; shift 2 ;;
    --prefix) prefix=${2:-}; shift 2 ;;
    --grace) grace=${2:-}; shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument '$1'" ;;
  esac
done
command=("$@")

number() { [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || die "$1 must be a number, not '$2'"; }
number --bandwidth "$bandwidth"
number --latency "$latency"
number --loss "$loss"
number --grace "$grace"
[[ $prefix =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "--prefix must be 1-8 lowercase letters or digits, not '$prefix'"

sw=$prefix-sw
host() { echo "$prefix-h$1"; }
address() { echo "10.231.0.$(($1 + 1))"; }
delay_dir=""  # the delay line's ready file and log (a fresh folder per `up`)
shaper=none  # what delays and drops packets: none, netem or delay-line
forget_logs() { rm -rf "${TMPDIR:-/tmp}/netns-hosts-$prefix".??????; }

# Every namespace of this prefix, with whatever still runs in it, and the links that die with them. A delay line is
# asked to stop first, so it lets go of what it holds and writes its counters.
down() {
  local ns pids
  if ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$sw"; then
    pids=$(ip netns pids "$sw" 2>/dev/null)
    if [[ -n $pids ]]; then
      # shellcheck disable=SC2086
      kill -TERM $pids 2>/dev/null
      for _ in 1 2 3 4 5 6 7 8 9 10; do  # an ended process leaves the namespace even before it is reaped
        [[ -z $(ip netns pids "$sw" 2>/dev/null) ]] && break
        sleep 0.1
      done
    fi
  fi
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$prefix-(sw|h[0-9]+)$"); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  return 0
}

has_netem() {  # the kernel's sch_netem, tried on a throwaway pair inside the switch namespace
  ip -n "$sw" link add probe0 type veth peer name probe1 2>/dev/null || return 1
  local ok=1
  ip netns exec "$sw" tc qdisc add dev probe0 root netem delay 1ms 2>/dev/null && ok=0
  ip -n "$sw" link del probe0 2>/dev/null
  return $ok
}

netdelay_program() {
  local built
  built=$(cd "$(dirname "$0")/.." && pwd)/build/tools/netdelay/netdelay
  if [[ -n ${PIPESQUEEZE_NETDELAY:-} ]]; then
    echo "$PIPESQUEEZE_NETDELAY"
  elif [[ -x $built ]]; then
    echo "$built"
  fi
}

# How latency and loss will be made: netem where the kernel has it, else the delay line, else a refusal naming what
# is missing.
choose_shaper() {
  [[ $latency != 0 || $loss != 0 ]] || return 0
  if has_netem; then
    shaper=netem
    return 0
  fi
  local program
  program=$(netdelay_program)
  [[ -n $program && -x $program ]] ||
    { down; die "this kernel has no netem qdisc (sch_netem), and the delay line that replaces it was not found" \
      "(build the netdelay target, or set PIPESQUEEZE_NETDELAY to it); or use --latency 0 --loss 0"; }
  command -v iptables >/dev/null ||
    { down; die "this kernel has no netem qdisc (sch_netem), and its replacement, the delay line, needs iptables" \
      "(apt-get install iptables); or use --latency 0 --loss 0"; }
  shaper=delay-line
}

# The delay line between the hosts: netdelay bound to netfilter queue 0 of the switch namespace, then the rule that
# sends every bridged IPv4 packet there (in that order: a queue without a reader drops what reaches it).
start_delay_line() {
  local program ready pid
  program=$(netdelay_program)
  forget_logs
  delay_dir=$(mktemp -d "${TMPDIR:-/tmp}/netns-hosts-$prefix.XXXXXX") || { down; die "cannot make a folder in ${TMPDIR:-/tmp}"; }
  ready=$delay_dir/ready
  # br_netfilter may be a module that is not loaded yet; where it is built in, modprobe has nothing to do.
  modprobe br_netfilter 2>/dev/null
  ip netns exec "$sw" sysctl -qw net.bridge.bridge-nf-call-iptables=1 ||
    { down; die "this kernel cannot pass bridged frames to iptables (br_netfilter), which the delay line needs"; }
  ip netns exec "$sw" "$program" --queue 0 --delay-ms "$latency" --loss "$loss" --ready "$ready" \
    >"$delay_dir/netdelay.log" 2>&1 </dev/null &
  pid=$!
  for _ in $(seq 100); do
    [[ -s $ready ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  [[ -s $ready ]] || { down; die "the delay line did not start: $(tail -n 3 "$delay_dir/netdelay.log" 2>/dev/null)"; }
  rm -f "$ready"
  ip netns exec "$sw" iptables -w -A FORWARD -j NFQUEUE --queue-num 0 ||
    { down; die "iptables refused the delay line's NFQUEUE rule in $sw"; }
}

# One host's egress: netem (latency, loss) above a token bucket (bandwidth), or the bucket alone.
shape() {
  local ns=$1 dev=$2 parent="root"
  local -a tcx=(ip netns exec "$ns" tc)
  if [[ $shaper == netem ]]; then
    "${tcx[@]}" qdisc add dev "$dev" root handle 1: netem delay "${latency}ms" loss "${loss}%" limit 100000 ||
      return 1
    parent="parent 1:"
  fi
  if [[ $bandwidth != 0 ]]; then
    # A wire lends no credit: the bucket holds half a millisecond at the rate (two packets at least), and TCP hands
    # this interface segments no larger than the bucket, since veth passes a segment on whole and a bucket smaller
    # than a segment would drop it. With the 64 KiB that unsegmented TCP needs, a message after a pause left its
    # first 64 KiB at memory speed, 5 ms early at 100 Mbit/s. The queue holds a second at the rate, so a burst of
    # messages waits instead of being dropped.
    local burst segment
    burst=$(awk -v r="$bandwidth" 'BEGIN { b = r * 1e6 / 8 * 0.0005; if (b < 3028) b = 3028; printf "%d", b }')
    segment=$((burst < 65536 ? burst : 65536))
    ip -n "$ns" link set dev "$dev" gso_max_size "$segment" || return 1
    # shellcheck disable=SC2086
    "${tcx[@]}" qdisc add dev "$dev" $parent handle 2: tbf rate "${bandwidth}mbit" burst "$burst" latency 1s ||
      return 1
  fi
}

up() {
  [[ $hosts =~ ^[0-9]{1,3}$ ]] && ((hosts >= 1 && hosts <= 200)) || die "--hosts must be 1 to 200, not '$hosts'"
  [[ $(id -u) == 0 ]] || die "making network namespaces needs root (CAP_NET_ADMIN)"
  command -v ip >/dev/null && command -v tc >/dev/null || die "ip and tc are missing: apt-get install iproute2"
  down
  ip netns add "$sw" 2>/dev/null || die "cannot create network namespace $sw (no CAP_NET_ADMIN, or namespaces are off)"
  ip -n "$sw" link add br0 type bridge && ip -n "$sw" link set br0 up && ip -n "$sw" link set lo up ||
    { down; die "cannot make a bridge in $sw (this kernel has no bridge support)"; }
  choose_shaper
  local i ns
  for ((i = 0; i < hosts; i++)); do
    ns=$(host "$i")
    ip netns add "$ns" || { down; die "cannot create network namespace $ns"; }
    ip link add eth0 netns "$ns" type veth peer name "h$i" netns "$sw" &&
      ip -n "$sw" link set "h$i" master br0 && ip -n "$sw" link set "h$i" up &&
      ip -n "$ns" addr add "$(address "$i")/24" dev eth0 && ip -n "$ns" link set eth0 up &&
      ip -n "$ns" link set lo up || { down; die "cannot wire host $ns to the bridge"; }
    shape "$ns" eth0 || { down; die "tc refused to shape $ns (bandwidth $bandwidth Mbit/s, latency $latency ms)"; }
  done
  [[ $shaper == delay-line ]] && start_delay_line
  return 0
}

pids=()  # the ranks `run` started; global, as the exit trap runs after run() has returned
run() {
  ((${#command[@]})) || die "run needs a command after --"
  stop() {
    trap '' INT TERM HUP  # a second Ctrl-C does not cut the teardown short
    trap - EXIT
    ((${#pids[@]})) && kill -TERM "${pids[@]}" 2>/dev/null
    sleep 0.5
    ((${#pids[@]})) && kill -KILL "${pids[@]}" 2>/dev/null
    down
    [[ -n $delay_dir && -s $delay_dir/netdelay.log ]] && tail -n 1 "$delay_dir/netdelay.log" >&2
    forget_logs
  }
  trap 'stop; exit 130' INT
  trap 'stop; exit 143' TERM HUP
  trap stop EXIT
  up
  local token i status=0 s
  token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  for ((i = 0; i < hosts; i++)); do
    ip netns exec "$(host "$i")" env RANK="$i" WORLD_SIZE="$hosts" LOCAL_RANK=0 LOCAL_WORLD_SIZE="$hosts" \
      MASTER_ADDR="$(address 0)" MASTER_PORT=29500 PIPESQUEEZE_STORE_TOKEN="$token" PIPESQUEEZE_BIND=eth0 \
      "${command[@]}" &
    pids+=($!)
  done
  # Ranks in the order they end: the first failure is the run's status, and the others get the grace period to
  # notice it (within their parallel.timeout_s) and record it before they are stopped.
  local -a live=("${pids[@]}") rest
  local finished killer="" p
  while ((${#live[@]})); do
    wait -n -p finished "${live[@]}"
    s=$?
    rest=()
    for p in "${live[@]}"; do [[ $p == "$finished" ]] || rest+=("$p"); done
    live=("${rest[@]}")
    if ((s != 0 && status == 0)); then
      status=$s
      if ((${#live[@]})); then
        (sleep "$grace"; kill -TERM "${live[@]}" 2>/dev/null) &
        killer=$!
      fi
    fi
  done
  if [[ -n $killer ]]; then  # the timer and its sleep
    pkill -P "$killer" 2>/dev/null
    kill "$killer" 2>/dev/null
  fi
  pids=()
  return "$status"
}

case $action in
  up) up ;;
  down) down; forget_logs ;;
  run) run; exit $? ;;
  *) die "unknown action '$action': up, down or run" ;;
esac
