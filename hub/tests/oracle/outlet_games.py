"""Reads a broadcast's PGN with python-chess 1.11.2, as an outlet's reader (lichess, chess.com)
would, and prints what it holds as JSON, for a test to compare with the source games.

Usage: outlet_games.py FILE.pgn

One object per game, in file order: its tags, the mainline's moves in SAN with each move's %clk
in whole seconds (null where none), the most variations any position has (0 or 1 on a feed
that is one mainline), and python-chess's errors (an illegal move, a bad tag).
"""
import json
import sys

import chess.pgn

assert chess.__version__ == "1.11.2", f"python-chess {chess.__version__}, need 1.11.2"

games = []
with open(sys.argv[1], encoding="utf-8") as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        sans, clocks, branching = [], [], 0
        node = game
        while node.variations:
            branching = max(branching, len(node.variations))
            child = node.variation(0)
            sans.append(node.board().san(child.move))
            clk = child.clock()
            clocks.append(None if clk is None else int(round(clk)))
            node = child
        games.append(
            {
                "tags": dict(game.headers),
                "sans": sans,
                "clocks": clocks,
                "variations": branching,
                "errors": [str(e) for e in game.errors],
            }
        )
json.dump(games, sys.stdout)
