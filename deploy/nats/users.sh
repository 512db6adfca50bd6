#!/bin/sh
# The hall's NATS logins, from the hub: each MQTT login (nodes, pagers, the public reader,
# the hub's own) with the topics the Mosquitto ACL gives it, as the NATS configuration's
# `authorization` block; and the hubs' own JetStream login (zeitnot-cluster).
# Usage: users.sh [DATA_DIR | http://HUB:8080] [USERS_FILE]
#   users.sh /var/lib/zeitnot        before the first hub's first start (its data directory):
#                                    every login, the hub's own included
#   users.sh https://hub.hall:8443   a hub runs: ask it (ZEITNOT_ARBITER_TOKEN set; and
#                                    ZEITNOT_HALL_CA for https); the hub's own line is kept
#                                    from USERS_FILE
# The cluster's password comes from ZEITNOT_CLUSTER_PASSWORD, else is kept from USERS_FILE,
# else made (then put the same into both hubs' ZEITNOT_CLUSTER urls). Copy the file to the
# three machines and reload the servers (nats-server --signal reload).
set -eu
source=${1:-/var/lib/zeitnot}
file=${2:-/etc/zeitnot/nats-users.conf}
umask 077
lines=$(mktemp)
out=$(mktemp)
trap 'rm -f "$lines" "$out"' EXIT
# The password USERS_FILE keeps for a login.
kept() { sed -n "s/.*{ user: \"$1\", password: \"\([^\"]*\)\".*/\1/p" "$file" 2>/dev/null | head -1; }
case $source in
  http://*|https://*)
    : "${ZEITNOT_ARBITER_TOKEN:?set ZEITNOT_ARBITER_TOKEN to the arbiters token (hub login-link prints it)}"
    curl -fsS --cacert "${ZEITNOT_HALL_CA:-/var/lib/zeitnot/hall-ca.pem}" \
      -H "Authorization: Bearer $ZEITNOT_ARBITER_TOKEN" "$source/api/broker/users" > "$lines"
    hub=$(kept zeitnot-hub)
    if [ -z "$hub" ]; then
      echo "$file has no line for the hub: run users.sh with the first hub's data directory first" >&2
      exit 1
    fi
    echo "zeitnot-hub:$hub" >> "$lines" ;;
  *)
    hub broker-users --data "$source" > "$lines" ;;
esac
cluster=${ZEITNOT_CLUSTER_PASSWORD:-$(kept zeitnot-cluster)}
[ -n "$cluster" ] || cluster=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
quote() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
{
  echo "# The hall's NATS logins: written by deploy/nats/users.sh; secret."
  echo "authorization {"
  echo "  users = ["
  # The hubs' JetStream login: the journal stream, the lease, leaders moved off a machine.
  # Never a stream's deletion, purge, change or restore: whoever holds this login could
  # otherwise delete the journal and refill it with saved records, rolling the hall back
  # for a hub that joins afterwards. The hubs never ask for any of them.
  deny='["$JS.API.STREAM.DELETE.>", "$JS.API.STREAM.PURGE.>", "$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.MSG.DELETE.>", "$JS.API.STREAM.RESTORE.>"]'
  printf '    { user: "zeitnot-cluster", password: %s, permissions: { publish: { allow: ">", deny: %s }, subscribe: ">" } }\n' "$(quote "$cluster")" "$deny"
  while IFS=: read -r user password; do
    [ -n "$user" ] || continue
    case $user in
      zeitnot-hub)
        # The hall's topics, not the journal's subject (zeitnot.journal.EVENT), which only
        # the cluster's login appends to.
        pub='{ allow: "zeitnot.>", deny: "zeitnot.journal.>" }'
        sub='{ allow: "zeitnot.>", deny: "zeitnot.journal.>" }' ;;
      public)
        # Reads the delayed broadcast and publishes nothing. Never an empty list: NATS reads
        # `publish: []` as no restriction at all (JetStream's API and the journal included).
        pub='{ deny: ">" }'; sub='"zeitnot.*.broadcast.>"' ;;
      pager-*)
        # `zeitnot.*.alerts` too: the gateway subscribes MQTT's `alerts/#` as that subject
        # and `alerts.>`, and refuses the whole filter if either is denied.
        pub='"zeitnot.*.pager.command"'
        sub='["zeitnot.*.alerts", "zeitnot.*.alerts.>", "zeitnot.*.status", "zeitnot.*.broadcast.>"]' ;;
      *[!0-9]*)
        echo "users.sh: unknown login $user: left out" >&2
        continue ;;
      *)
        # A board's node: its board's events out, its board's answers in.
        pub="\"zeitnot.*.board.$user.up\""; sub="\"zeitnot.*.board.$user.down\"" ;;
    esac
    printf '    { user: %s, password: %s, permissions: { publish: %s, subscribe: %s } }\n' \
      "$(quote "$user")" "$(quote "$password")" "$pub" "$sub"
  done < "$lines"
  echo "  ]"
  echo "}"
} > "$out"
chmod 640 "$out"
mv "$out" "$file"
trap - EXIT
rm -f "$lines"
chgrp zeitnot "$file" 2>/dev/null || true
echo "wrote $(grep -c 'user:' "$file") logins to $file"
