#!/bin/bash
# A compose swarm peer: `swarmcast get $SWARM_NAME` into the container, then
# lingers serving the others until the tracker reports every peer done.
# Writes /results/$SWARM_NAME/<hostname>.json, one line:
#   {"peer":..,"exit":..,"sha256":..,"started":..,"finished":..,"seconds":..,"report":<--json output>}
# and the node's progress lines to <hostname>.log. A swarm that is not
# published yet (exit 3) is retried for $PUBLISH_WAIT seconds.
set -uo pipefail

name=${SWARM_NAME:?SWARM_NAME is required}
out=/results/$name
me=$(hostname)
mkdir -p "$out"
child=
# tini (init: true) signals this shell only; pass the signal on so that the
# node saves its state and `docker stop` takes no grace period.
trap '[[ -n $child ]] && kill -TERM "$child" 2>/dev/null' TERM INT

started=$(date +%s.%N)
deadline=$((SECONDS + ${PUBLISH_WAIT:-60}))
while :; do
  # GET_ARGS: extra options, word-split on purpose.
  # shellcheck disable=SC2086
  swarmcast get "$name" --tracker "${TRACKER:-http://tracker:6969}" -o /data/dl \
    --listen 0.0.0.0:6881 --linger "${LINGER:-4m}" --progress-interval 2s --json \
    ${GET_ARGS:-} >/tmp/report.json 2>>"$out/$me.log" &
  child=$!
  wait "$child"
  rc=$?
  # wait returns early when a trapped signal arrives: collect the real code.
  while kill -0 "$child" 2>/dev/null; do
    wait "$child"
    rc=$?
  done
  child=
  [[ $rc == 3 && $SECONDS -lt $deadline ]] || break
  sleep 1
done
finished=$(date +%s.%N)

sum=
if [[ -f /data/dl/$name ]]; then
  sum=$(sha256sum "/data/dl/$name")
  sum=${sum%% *}
fi
report=$(head -n 1 /tmp/report.json)
[[ $report == "{"* ]] || report=null
printf '{"peer":"%s","exit":%d,"sha256":"%s","started":%s,"finished":%s,"seconds":%s,"report":%s}\n' \
  "$me" "$rc" "$sum" "$started" "$finished" \
  "$(awk -v a="$started" -v b="$finished" 'BEGIN{printf "%.3f", b-a}')" "$report" \
  >"$out/$me.json.part"
mv "$out/$me.json.part" "$out/$me.json"
exit "$rc"
