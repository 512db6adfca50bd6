#!/bin/sh
# The hall's Mosquitto users, from the hub: run after enrolling nodes (and once before the
# hub's first start). Usage: users.sh [DATA_DIR | http://HUB:8080] [PASSWORD_FILE]
#   users.sh /var/lib/zeitnot                 the hub is stopped: read its data directory
#   users.sh http://127.0.0.1:8080            the hub runs: ask it (on its machine, or with
#                                             ZEITNOT_ARBITER_TOKEN set)
set -eu
source=${1:-/var/lib/zeitnot}
file=${2:-/etc/mosquitto/zeitnot.passwd}
umask 077
tmp=$(mktemp)
case $source in
  http://*)
    auth=${ZEITNOT_ARBITER_TOKEN:+-H "Authorization: Bearer $ZEITNOT_ARBITER_TOKEN"}
    # shellcheck disable=SC2086
    curl -fsS $auth "$source/api/broker/users" > "$tmp" ;;
  *) hub broker-users --data "$source" > "$tmp" ;;
esac
mosquitto_passwd -U "$tmp"
chmod 640 "$tmp"
mv "$tmp" "$file"
chgrp mosquitto "$file" 2>/dev/null || true
# Mosquitto rereads its password and ACL files on SIGHUP.
pkill -HUP -x mosquitto 2>/dev/null || true
echo "wrote $(wc -l < "$file") users to $file"
