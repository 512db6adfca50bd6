#!/usr/bin/env python3
"""A fake Chessnut board on BlueZoo's fake radio: a GATT peripheral that plays a real game.

It follows chessnutech's published protocol (`Chessnut_eBoards`) and what real boards do
beyond it (../shared/NOTES.md, "Chessnut boards over Bluetooth LE"):

- service 1b7e8261-…, positions notified on 1b7e8262-…; commands written to 1b7e8272-…
  (service 1b7e8271-…), answered on 1b7e8273-…;
- reporting starts only when `21 01 00` is written; then a frame about ten times a second
  whether or not anything changed: `01 24`, 32 bytes of 64 nibbles (h8, g8, … a1, the low
  nibble first), a 4-byte counter (38 bytes); `--short-frames` plies send the documented
  36-byte frame (`01 22`, two bytes after the squares) instead;
- `29 01 00` is answered `2A 02 <bit 7 charging, bits 0-6 percent> 00`.

The game comes from PGN through python-chess (independent of the node's decoder). Ply k's
position stands from `epoch + k * ply_ms`; a process started again with the same epoch
goes on where the clock says, as a board does whose link came back. `--flicker-ply P`
makes one empty square flicker (a piece half on it) for 2 s within ply P's standing.
"""
import argparse
import asyncio
import io
import os
import signal
import socket
import sys
import time

import chess
import chess.pgn
import sdbus

from bluezoo.interfaces.GattManager import GattManagerInterface
from bluezoo.interfaces.LEAdvertisingManager import LEAdvertisingManagerInterface
from bluezoo.utils import setup_default_bus

FEN_SERVICE = "1b7e8261-2877-41c3-b46e-cf057c562023"
FEN_NOTIFY = "1b7e8262-2877-41c3-b46e-cf057c562023"
COMMAND_SERVICE = "1b7e8271-2877-41c3-b46e-cf057c562023"
COMMAND_WRITE = "1b7e8272-2877-41c3-b46e-cf057c562023"
COMMAND_ANSWER = "1b7e8273-2877-41c3-b46e-cf057c562023"

# chessnutech's piece codes: 0 empty, then q k b p n R P r B N Q K.
CODES = {None: 0}
for code, symbol in enumerate("qkbpnRPrBNQK", start=1):
    CODES[symbol] = code

parser = argparse.ArgumentParser()
parser.add_argument("--adapter", default="hci1")
parser.add_argument("--name", default="Chessnut Air")
parser.add_argument("--pgn", required=True)
parser.add_argument("--game", type=int, default=1, help="1-based game of the file")
parser.add_argument("--epoch-ms", type=int, required=True)
parser.add_argument("--ply-ms", type=int, default=3000)
parser.add_argument("--battery", type=int, default=15, help="percent, not charging")
parser.add_argument("--short-frames", default="", help="plies FIRST-LAST sent as 36-byte frames")
parser.add_argument("--flicker-ply", type=int, default=-1)
args = parser.parse_args()


def positions():
    with open(args.pgn, encoding="utf-8", errors="replace") as f:
        text = f.read()
    pgn = io.StringIO(text)
    for _ in range(args.game - 1):
        chess.pgn.skip_game(pgn)
    game = chess.pgn.read_game(pgn)
    board = game.board()
    out = [board.copy()]
    for move in game.mainline_moves():
        board.push(move)
        out.append(board.copy())
    return out


POSITIONS = positions()
SHORT = tuple(int(p) for p in args.short_frames.split("-")) if args.short_frames else (-1, -1)


def squares(board, extra_piece_on=None):
    """The 32 bytes of a position: h8 first, the low nibble first."""
    out = bytearray()
    order = [chess.square(file, rank) for rank in range(7, -1, -1) for file in range(7, -1, -1)]
    for i in range(0, 64, 2):
        codes = []
        for square in order[i:i + 2]:
            piece = board.piece_at(square)
            symbol = piece.symbol() if piece else None
            if square == extra_piece_on:
                symbol = "P"
            codes.append(CODES[symbol])
        out.append(codes[0] | codes[1] << 4)
    return bytes(out)


def ply_now():
    elapsed = time.time() * 1000 - args.epoch_ms
    return max(0, min(len(POSITIONS) - 1, int(elapsed // args.ply_ms))), elapsed % args.ply_ms


def flicker_square(board):
    """An empty square in the middle of the board."""
    for name in ("d5", "e5", "d4", "e4", "c5", "f5", "c4", "f4", "a3", "h6"):
        square = chess.parse_square(name)
        if board.piece_at(square) is None:
            return square
    return None


counter = 0


def frame():
    global counter
    ply, into = ply_now()
    board = POSITIONS[ply]
    extra = None
    # Flicker: 2 s into the ply's standing, the piece comes and goes every 100 ms.
    if ply == args.flicker_ply and 300 <= into < 2300 and int(into // 100) % 2 == 0:
        extra = flicker_square(board)
    body = squares(board, extra)
    counter = (counter + 1) % (1 << 32)
    if SHORT[0] <= ply <= SHORT[1]:
        return bytes([0x01, 0x22]) + body + bytes([0, 0])
    return bytes([0x01, 0x24]) + body + counter.to_bytes(4, "little")


loop = asyncio.new_event_loop()
setup_default_bus("system")


class Service(sdbus.DbusInterfaceCommonAsync, interface_name="org.bluez.GattService1"):
    def __init__(self, uuid):
        super().__init__()
        self.uuid = uuid

    @sdbus.dbus_property_async(property_signature="s")
    def UUID(self) -> str:
        return self.uuid

    @sdbus.dbus_property_async(property_signature="b")
    def Primary(self) -> bool:
        return True


class Characteristic(sdbus.DbusInterfaceCommonAsync, interface_name="org.bluez.GattCharacteristic1"):
    def __init__(self, uuid, service, flags, on_write=None):
        super().__init__()
        self.uuid, self.service, self.flags, self.on_write = uuid, service, flags, on_write
        self.value = bytearray()
        self.notifying = False
        self.sock = None

    @sdbus.dbus_method_async(input_signature="a{sv}", result_signature="ay",
                             flags=sdbus.DbusUnprivilegedFlag)
    async def ReadValue(self, options: dict) -> bytes:
        return bytes(self.value)

    @sdbus.dbus_method_async(input_signature="aya{sv}", flags=sdbus.DbusUnprivilegedFlag)
    async def WriteValue(self, value: bytes, options: dict):
        if self.on_write:
            self.on_write(bytes(value))

    @sdbus.dbus_method_async(input_signature="a{sv}", result_signature="hq",
                             flags=sdbus.DbusUnprivilegedFlag)
    async def AcquireNotify(self, options: dict) -> tuple:
        # BlueZoo hands AcquireNotify to the peripheral (real BlueZ would emulate it).
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock = ours

        def closed():
            if not ours.recv(64):
                loop.remove_reader(ours.fileno())
                self.sock = None
                ours.close()

        loop.add_reader(ours.fileno(), closed)
        return os.dup(theirs.fileno()), 64

    @sdbus.dbus_method_async(flags=sdbus.DbusUnprivilegedFlag)
    async def Confirm(self):
        pass

    @sdbus.dbus_method_async(flags=sdbus.DbusUnprivilegedFlag)
    async def StartNotify(self):
        self.notifying = True

    @sdbus.dbus_method_async(flags=sdbus.DbusUnprivilegedFlag)
    async def StopNotify(self):
        self.notifying = False

    @sdbus.dbus_property_async(property_signature="s")
    def UUID(self) -> str:
        return self.uuid

    @sdbus.dbus_property_async(property_signature="o")
    def Service(self) -> str:
        return self.service

    @sdbus.dbus_property_async(property_signature="ay", flags=sdbus.DbusPropertyEmitsChangeFlag)
    def Value(self) -> bytes:
        return bytes(self.value)

    @Value.setter_private
    def _set_value(self, value: bytes):
        self.value = bytearray(value)

    @sdbus.dbus_property_async(property_signature="b", flags=sdbus.DbusPropertyEmitsChangeFlag)
    def Notifying(self) -> bool:
        return self.notifying

    @sdbus.dbus_property_async(property_signature="as")
    def Flags(self) -> list:
        return self.flags

    async def notify(self, value):
        if self.sock is not None:
            try:
                self.sock.send(value)
            except OSError:
                self.sock = None
            return
        await self.Value.set_async(value)


class Advertisement(sdbus.DbusInterfaceCommonAsync, interface_name="org.bluez.LEAdvertisement1"):
    @sdbus.dbus_method_async(flags=sdbus.DbusUnprivilegedFlag)
    async def Release(self):
        pass

    @sdbus.dbus_property_async(property_signature="s")
    def Type(self) -> str:
        return "peripheral"

    @sdbus.dbus_property_async(property_signature="as")
    def ServiceUUIDs(self) -> list:
        return [FEN_SERVICE]

    @sdbus.dbus_property_async(property_signature="b")
    def Discoverable(self) -> bool:
        return True

    @sdbus.dbus_property_async(property_signature="as")
    def Includes(self) -> list:
        return []

    @sdbus.dbus_property_async(property_signature="s")
    def LocalName(self) -> str:
        return args.name

    @sdbus.dbus_property_async(property_signature="q")
    def Timeout(self) -> int:
        return 0


reporting = False
pending_answers = []


def on_command(value):
    global reporting
    print("command", value.hex(), flush=True)
    if value[:1] == b"\x21":
        reporting = True
    elif value[:1] == b"\x29":
        pending_answers.append(bytes([0x2A, 0x02, args.battery & 0x7F, 0x00]))


manager = sdbus.DbusObjectManagerInterfaceAsync()
manager.export_to_dbus("/")
manager.export_with_manager("/fen", Service(FEN_SERVICE))
positions_char = Characteristic(FEN_NOTIFY, "/fen", ["read", "notify"])
manager.export_with_manager("/fen/notify", positions_char)
manager.export_with_manager("/cmd", Service(COMMAND_SERVICE))
commands_char = Characteristic(COMMAND_WRITE, "/cmd", ["write", "write-without-response"], on_command)
manager.export_with_manager("/cmd/write", commands_char)
answers_char = Characteristic(COMMAND_ANSWER, "/cmd", ["read", "notify"])
manager.export_with_manager("/cmd/answer", answers_char)
manager.export_with_manager("/adv", Advertisement())

adapter = f"/org/bluez/{args.adapter}"


async def startup():
    await GattManagerInterface.new_proxy("org.bluez", adapter).RegisterApplication("/", {})
    await LEAdvertisingManagerInterface.new_proxy("org.bluez", adapter).RegisterAdvertisement("/adv", {})
    print(f"advertising {args.name!r} on {args.adapter}: {len(POSITIONS) - 1} plies", flush=True)
    if 0 <= args.flicker_ply < len(POSITIONS):
        print(f"flicker on {chess.square_name(flicker_square(POSITIONS[args.flicker_ply]))}", flush=True)


async def report():
    while True:
        await asyncio.sleep(0.1)
        while pending_answers:
            await answers_char.notify(pending_answers.pop(0))
        if reporting:
            await positions_char.notify(frame())


loop.run_until_complete(startup())
loop.create_task(report())
loop.add_signal_handler(signal.SIGINT, loop.stop)
loop.add_signal_handler(signal.SIGTERM, loop.stop)
loop.run_forever()
sys.exit(0)
