#!/bin/sh
# The hall's Mosquitto users, from the hub: run once before the hub's first start (with the
# data directory, on the hub's machine), then after enrolling nodes or arbiters.
# Usage: users.sh [DATA_DIR | http://HUB:8080] [PASSWORD_FILE] [ACL_FILE]
#   Writes the password file, and the ACL file: zeitnot.acl (beside this script, or
#   ZEITNOT_ACL_TEMPLATE) with a block for each arbiter's pager login (pager-…), which
#   only Mosquitto's per-user ACL lines can hold to the pagers' topics.
#   users.sh /var/lib/zeitnot                 the hub is stopped: read its data directory
#                                             (every login, the hub's own included)
#   users.sh https://hub.hall:8443            the hub runs: ask it, with ZEITNOT_ARBITER_TOKEN
#                                             set (and ZEITNOT_HALL_CA, the hall CA's file, for
#                                             https); the hub never serves its own password,
#                                             so the hub's line is kept from PASSWORD_FILE
set -eu
source=${1:-/var/lib/zeitnot}
file=${2:-/etc/mosquitto/zeitnot.passwd}
acl=${3:-/etc/mosquitto/zeitnot.acl}
template=${ZEITNOT_ACL_TEMPLATE:-$(dirname "$0")/zeitnot.acl}
marker='# --- the arbiters pagers: written by users.sh ---'
umask 077
tmp=$(mktemp)
acl_tmp=$(mktemp)
trap 'rm -f "$tmp" "$acl_tmp"' EXIT
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
# The ACL: the template up to the pagers' part, then one block per pager login.
sed "/^$marker\$/,\$d" "$template" > "$acl_tmp"
echo "$marker" >> "$acl_tmp"
for user in $(grep -o '^pager-[0-9a-f]*' "$tmp"); do
  printf '\nuser %s\ntopic read zeitnot/+/alerts/#\ntopic read zeitnot/+/status\ntopic read zeitnot/+/broadcast/#\ntopic write zeitnot/+/pager/command\n' "$user" >> "$acl_tmp"
done
chmod 640 "$tmp" "$acl_tmp"
mv "$tmp" "$file"
mv "$acl_tmp" "$acl"
trap - EXIT
chgrp mosquitto "$file" "$acl" 2>/dev/null || true
# Mosquitto rereads its password and ACL files on SIGHUP.
pkill -HUP -x mosquitto 2>/dev/null || true
echo "wrote $(wc -l < "$file") users to $file and their topics to $acl"
