#!/bin/bash
# The compose swarm's tracker: makes the fleet's agent token once
# ($AGENT_TOKEN_FILE, default /var/lib/swarmcast/agent.token, beside the
# database on the tracker's volume, mode 0600) and becomes
# `swarmcast-tracker --agent-token-file` with the arguments given. The
# agents, the same uid, read that file from the volume mounted read-only;
# the token may sync as an agent and fetch, never publish or deploy.
# A restarted tracker keeps the token, so running agents stay accepted.
set -euo pipefail

token=${AGENT_TOKEN_FILE:-/var/lib/swarmcast/agent.token}
if [[ ! -f $token ]]; then
  umask 077
  # 32 random bytes as hex, written beside and renamed, so a reader never
  # sees half a token.
  od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$token.part"
  echo >>"$token.part"
  mv "$token.part" "$token"
fi
exec swarmcast-tracker --agent-token-file "$token" "$@"
