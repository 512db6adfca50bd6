#!/usr/bin/env python3
"""An arbiter's phone as ntfy's WebSocket clients are one: aiontfy (PyPI; the client library of
Home Assistant's ntfy integration), which subscribes only over SERVER/TOPIC/ws. Nothing of
the hub's code.

    aiontfy_phone.py SERVER TOPIC TOKEN [PRIORITY,…]

It subscribes with the token (aiontfy's `token=`: "Authorization: Bearer"), with
aiontfy's priority filter when PRIORITY is given, and prints every notification aiontfy
read as a line of JSON, {"recv_ns": <wall clock>, "event": {...}} (the frame as sent:
aiontfy 0.8.6 reads every action button as a `view` action, dropping an `http` action's
method, headers and body, so the buttons are taken from the frame, as the app does). When
the subscription ends it prints {"disconnected": ...} and subscribes again after 0.3 s.
On stdin it takes

    tap MESSAGE_ID LABEL     sends that message's http action LABEL as the app does and
                             prints {"tap": MESSAGE_ID, "status": ..., "body": ...}
    stats                    asks aiontfy for the server's stats (a path the hub does not
                             serve) and prints {"stats": <the exception aiontfy raised>, "code"}
    quit
"""

import asyncio
import json
import sys
import time

import aiohttp
import aiontfy.ntfy
from aiontfy import Ntfy
from aiontfy.exceptions import NtfyHTTPError
from aiontfy.types import Notification

SERVER, TOPIC, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]
PRIORITY = [int(p) for p in sys.argv[4].split(",")] if len(sys.argv) > 4 else None
notifications = {}
frames = {}


class Framed:
    """aiontfy's Notification as its subscriber reads one, keeping the frame it came in."""

    @staticmethod
    def from_json(data, **kwargs):
        notification = Notification.from_json(data, **kwargs)
        frames[notification.id] = json.loads(data)
        return notification


aiontfy.ntfy.Notification = Framed


def say(obj):
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def received(notification):
    notifications[notification.id] = notification
    say({"recv_ns": time.time_ns(), "event": frames[notification.id]})


async def subscribe(session):
    ntfy = Ntfy(SERVER, session=session, token=TOKEN)
    while True:
        try:
            say({"recv_ns": time.time_ns(), "connected": None})
            await ntfy.subscribe([TOPIC], received, priority=PRIORITY)
            say({"recv_ns": time.time_ns(), "disconnected": "closed"})
        except NtfyHTTPError as e:
            say({"recv_ns": time.time_ns(), "refused": e.http, "code": e.code})
        except Exception as e:  # noqa: BLE001 - the app reconnects whatever happened
            say({"recv_ns": time.time_ns(), "disconnected": repr(e)})
        await asyncio.sleep(0.3)


async def tap(session, message_id, label):
    action = next((a for a in frames[message_id].get("actions", [])
                   if a["action"] == "http" and a["label"] == label), None)
    if action is None:
        say({"tap": message_id, "status": 0, "body": f"no {label} button in {frames[message_id]}"})
        return
    async with session.request(action.get("method", "POST"), action["url"],
                               headers=action.get("headers", {}),
                               data=action.get("body", "").encode()) as response:
        say({"tap": message_id, "status": response.status, "body": await response.text()})


async def commands(session):
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        words = line.strip().split(maxsplit=2)
        if not words or words[0] == "quit":
            return
        if words[0] == "tap":
            await tap(session, words[1], words[2])
        elif words[0] == "stats":
            try:
                await Ntfy(SERVER, session=session, token=TOKEN).stats()
                say({"stats": None})
            except NtfyHTTPError as e:
                say({"stats": type(e).__name__, "code": e.code, "http": e.http})


async def main():
    async with aiohttp.ClientSession() as session:
        subscriber = asyncio.create_task(subscribe(session))
        await commands(session)
        subscriber.cancel()


asyncio.run(main())
