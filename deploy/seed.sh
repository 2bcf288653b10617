#!/bin/bash
# The compose swarm's seed: makes a file of $SWARM_SIZE random bytes named
# $SWARM_NAME (once; kept on the seed's volume), writes its sha256 to
# /results/$SWARM_NAME/seed.sha256 for the checks, then becomes
# `swarmcast seed`, publishing the file to the tracker under that name with
# the tracker's admin token ($TOKEN_FILE, default the tracker's own token
# file on its volume, mounted read-only here).
set -euo pipefail

name=${SWARM_NAME:?SWARM_NAME is required}
size=${SWARM_SIZE:-64M}
dir=/data/seed
file=$dir/$name
mkdir -p "$dir" "/results/$name"
if [[ ! -f $file ]]; then
  head -c "$size" /dev/urandom >"$file.part"
  mv "$file.part" "$file"
fi
sum=$(sha256sum "$file")
printf '%s\n' "${sum%% *}" >"/results/$name/seed.sha256.part"
mv "/results/$name/seed.sha256.part" "/results/$name/seed.sha256"
# SEED_ARGS: extra options, e.g. --max-upload-rate 16M (word-split on purpose).
# shellcheck disable=SC2086
exec swarmcast seed "$file" --name "$name" --tracker "${TRACKER:-http://tracker:6969}" \
  --token-file "${TOKEN_FILE:-/var/lib/swarmcast/tracker.db.token}" \
  --listen 0.0.0.0:6881 --progress-interval 2s --json ${SEED_ARGS:-}
