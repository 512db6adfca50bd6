#!/usr/bin/env python3
"""An arbiter's phone as ntfy's Android app is one, written from ntfy's published protocol
(docs/subscribe/api.md, docs/publish.md "Action buttons") and nothing of the hub's code.

    ntfy_phone.py SERVER TOPIC TOKEN [SINCE]

It subscribes to SERVER/TOPIC/json with "Authorization: Bearer TOKEN" and prints every
event it gets as a line of JSON, {"recv_ns": <wall clock>, "event": {...}}. When the
stream ends it reconnects, as the app does, with since= the id of the last message it got
(the app waits 5 s first; this phone 0.3 s, to keep the test short). On stdin it takes

    tap MESSAGE_ID LABEL     sends the request of that message's http action LABEL
                             as the app does (method, url, headers, body) and prints
                             {"tap": MESSAGE_ID, "status": ..., "body": ...}
    quit
"""

import http.client
import json
import sys
import threading
import time
import urllib.parse

SERVER, TOPIC, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]
since = sys.argv[4] if len(sys.argv) > 4 else None
messages = {}
lock = threading.Lock()


def say(obj):
    with lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def connection(url):
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        return http.client.HTTPSConnection(parts.netloc, timeout=90), parts
    return http.client.HTTPConnection(parts.netloc, timeout=90), parts


def subscribe():
    global since
    while True:
        url = f"{SERVER}/{TOPIC}/json"
        if since:
            url += "?since=" + urllib.parse.quote(since)
        try:
            conn, parts = connection(url)
            path = parts.path + ("?" + parts.query if parts.query else "")
            conn.request("GET", path, headers={"Authorization": f"Bearer {TOKEN}"})
            response = conn.getresponse()
            if response.status != 200:
                say({"recv_ns": time.time_ns(), "refused": response.status,
                     "body": response.read().decode(errors="replace")})
                time.sleep(0.3)
                continue
            say({"recv_ns": time.time_ns(), "connected": since})
            while True:
                line = response.readline()
                if not line:
                    break
                event = json.loads(line)
                if event.get("event") in ("message", "message_clear", "message_delete"):
                    since = event["id"]
                    messages[event["id"]] = event
                say({"recv_ns": time.time_ns(), "event": event})
        except (OSError, http.client.HTTPException, ValueError) as e:
            say({"recv_ns": time.time_ns(), "error": str(e)})
        say({"recv_ns": time.time_ns(), "disconnected": True})
        time.sleep(0.3)


def tap(message_id, label):
    message = messages.get(message_id)
    action = None
    if message:
        action = next((a for a in message.get("actions", [])
                       if a.get("action") == "http" and a.get("label") == label), None)
    if action is None:
        say({"tap": message_id, "status": None, "body": "no such action"})
        return
    # As the app's UserActionWorker: POST unless a method is given, the headers, the body.
    conn, parts = connection(action["url"])
    path = parts.path + ("?" + parts.query if parts.query else "")
    conn.request(action.get("method", "POST"), path, body=action.get("body", "").encode(),
                 headers=action.get("headers", {}))
    response = conn.getresponse()
    say({"tap": message_id, "status": response.status,
         "body": response.read().decode(errors="replace")})


threading.Thread(target=subscribe, daemon=True).start()
for command in sys.stdin:
    words = command.split(maxsplit=2)
    if not words:
        continue
    if words[0] == "quit":
        break
    if words[0] == "tap" and len(words) == 3:
        tap(words[1], words[2].strip())
