#!/bin/sh
# Open MPI launch agent for tests/netns/netns_mpi_test.sh: stands in for ssh.
#   rsh_agent.sh [ssh-style options] HOST COMMAND...
# mpirun calls it (--mca plm_rsh_agent) to start orted on HOST. HOST is an address from the
# test's hostfile; the map file named by $ROTOR_NETNS_MAP ("ADDRESS NAMESPACE HOSTNAME" lines)
# gives the network namespace that owns it. Like sshd, the agent runs COMMAND (the words joined
# with spaces) with a shell on the "remote host": inside that namespace, in a UTS namespace of
# its own whose hostname is HOSTNAME, so each "host" has its own network stack and name.
set -eu
while [ $# -gt 0 ]; do
  case "$1" in
    -x|-n|-T|-q) shift ;;            # ssh flags Open MPI may add; meaningless here
    -o|-p|-l) shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "rsh_agent.sh: usage: rsh_agent.sh HOST COMMAND..." >&2; exit 255; }
host=$1; shift
: "${ROTOR_NETNS_MAP:?rsh_agent.sh: ROTOR_NETNS_MAP is not set}"
line=$(awk -v h="$host" '$1 == h || $3 == h { print $2, $3; exit }' "$ROTOR_NETNS_MAP")
if [ -z "$line" ]; then
  echo "rsh_agent.sh: unknown host $host (not in $ROTOR_NETNS_MAP)" >&2
  exit 255
fi
ns=${line% *}
name=${line#* }
if [ -n "${ROTOR_NETNS_AGENT_LOG:-}" ]; then
  echo "agent: $host -> netns $ns: $*" >>"$ROTOR_NETNS_AGENT_LOG"
fi
exec ip netns exec "$ns" unshare --uts /bin/sh -c \
  'echo "$1" > /proc/sys/kernel/hostname && shift && eval "$*"' rsh_agent "$name" "$@"
