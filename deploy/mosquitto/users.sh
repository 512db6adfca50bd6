#!/bin/sh
# The hall's Mosquitto users, from the hub: run once before the hub's first start (with the
# data directory, on the hub's machine), then after enrolling nodes.
# Usage: users.sh [DATA_DIR | http://HUB:8080] [PASSWORD_FILE]
#   users.sh /var/lib/zeitnot                 the hub is stopped: read its data directory
#                                             (every login, the hub's own included)
#   users.sh https://hub.hall:8443            the hub runs: ask it, with ZEITNOT_ARBITER_TOKEN
#                                             set (and ZEITNOT_HALL_CA, the hall CA's file, for
#                                             https); the hub never serves its own password,
#                                             so the hub's line is kept from PASSWORD_FILE
set -eu
source=${1:-/var/lib/zeitnot}
file=${2:-/etc/mosquitto/zeitnot.passwd}
umask 077
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
case $source in
  http://*|https://*)
    : "${ZEITNOT_ARBITER_TOKEN:?set ZEITNOT_ARBITER_TOKEN to the arbiters token (hub login-link prints it)}"
    curl -fsS --cacert "${ZEITNOT_HALL_CA:-/var/lib/zeitnot/journal/hall-ca.pem}" \
      -H "Authorization: Bearer $ZEITNOT_ARBITER_TOKEN" "$source/api/broker/users" > "$tmp"
    mosquitto_passwd -U "$tmp"
    if ! grep '^zeitnot-hub:' "$file" >> "$tmp" 2>/dev/null; then
      echo "$file has no line for the hub: run users.sh with the hub's data directory first" >&2
      exit 1
    fi ;;
  *)
    hub broker-users --data "$source" > "$tmp"
    mosquitto_passwd -U "$tmp" ;;
esac
chmod 640 "$tmp"
mv "$tmp" "$file"
trap - EXIT
chgrp mosquitto "$file" 2>/dev/null || true
# Mosquitto rereads its password and ACL files on SIGHUP.
pkill -HUP -x mosquitto 2>/dev/null || true
echo "wrote $(wc -l < "$file") users to $file"
