"""Independent check of the broadcast feed with python-chess 1.11.2.

Usage: broadcast_feed.py FEED.pgn RECORD.json

FEED.pgn is what GET /broadcast/round/{r}/games.pgn served; RECORD.json the hub's own record
of the same boards (from GET /api/boards/{n}): {"board": {"moves": [SAN...], "clock_ms":
[ms or null...], "result": "..."}}. Every game must parse without errors, every move must be
legal, and the moves, each move's %clk (whole seconds) and the result must equal the
record. Prints one line per game; exit status 0 when everything agrees.
"""
import io
import json
import sys

import chess.pgn

assert chess.__version__ == "1.11.2", f"python-chess {chess.__version__}, need 1.11.2"

feed, record = sys.argv[1], sys.argv[2]
with open(record) as f:
    expected = json.load(f)
failures = 0
games = 0
with open(feed) as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        games += 1
        board = game.headers["Round"].split(".")[1]
        want = expected[board]
        problems = []
        if game.errors:
            problems.append(f"errors {game.errors}")
        sans, clocks = [], []
        node = game
        position = game.board()
        for move in game.mainline_moves():
            pass
        node = game
        while node.variations:
            child = node.variation(0)
            if child.move not in node.board().legal_moves:
                problems.append(f"illegal {child.move}")
            sans.append(node.board().san(child.move))
            clk = child.clock()
            clocks.append(None if clk is None else int(round(clk)))
            node = child
        want_clocks = [None if ms is None else ms // 1000 for ms in want["clock_ms"]]
        if sans != want["moves"]:
            problems.append(f"moves differ: feed {len(sans)}, hub {len(want['moves'])}")
        if clocks != want_clocks:
            diff = [(i, a, b) for i, (a, b) in enumerate(zip(clocks, want_clocks)) if a != b][:3]
            problems.append(f"%clk differs at {diff}")
        if game.headers["Result"] != want["result"]:
            problems.append(f"result {game.headers['Result']} vs {want['result']}")
        print(f"board {board}: {len(sans)} moves, result {game.headers['Result']}"
              + ("" if not problems else f" -- {'; '.join(problems)}"))
        failures += bool(problems)
if games != len(expected):
    print(f"{games} games in the feed, {len(expected)} boards in the record")
    failures += 1
sys.exit(1 if failures else 0)
