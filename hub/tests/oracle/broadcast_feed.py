"""Independent check of the broadcast feed with python-chess 1.11.2, against the source games.

Usage: broadcast_feed.py FEED.pgn SOURCES.json

FEED.pgn is what GET /broadcast/round/{r}/games.pgn served. SOURCES.json names, per board, the
real game the board's node replayed and what the hub's API said of each move's clock:
{"board": {"pgn": PATH, "game": N (from 1), "clock_ms": [ms or null...]}}.

Every game must parse without errors and every move be legal. Against the source game (never
the hub's own record): the feed's moves are the source's; after every move the feed's %clk is
the source's %clk where the source has one (the clock's display is definitive, FIDE 6.10.1),
and so is the API's clock_ms (whole seconds); the feed's result is the source's or "*" (flag
falls, resignations and agreements wait for the arbiter), and the source's when the final
position decides the game by itself (checkmate, stalemate, insufficient material).
Prints one line per game; exit status 0 when everything agrees.
"""
import json
import sys

import chess.pgn

assert chess.__version__ == "1.11.2", f"python-chess {chess.__version__}, need 1.11.2"


def mainline(game):
    """(SAN, %clk in whole seconds or None) of every move."""
    moves = []
    node = game
    while node.variations:
        child = node.variation(0)
        clk = child.clock()
        moves.append((node.board().san(child.move), None if clk is None else int(round(clk))))
        node = child
    return moves, node.board()


def source_game(path, number):
    with open(path) as f:
        for _ in range(number - 1):
            chess.pgn.skip_game(f)
        return chess.pgn.read_game(f)


feed, sources_path = sys.argv[1], sys.argv[2]
with open(sources_path) as f:
    sources = json.load(f)
failures = 0
games = 0
with open(feed) as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        games += 1
        board = game.headers["Round"].split(".")[1]
        want = sources[board]
        source = source_game(want["pgn"], want["game"])
        problems = []
        if game.errors:
            problems.append(f"errors {game.errors}")
        node = game
        while node.variations:
            child = node.variation(0)
            if child.move not in node.board().legal_moves:
                problems.append(f"illegal {child.move}")
            node = child
        shown, _ = mainline(game)
        recorded, final = mainline(source)
        # A DGT result signal (both kings to the centre) reaches some sources as a last,
        # illegal king move: python-chess keeps it in the errors, not in the mainline.
        if [san for san, _ in shown] != [san for san, _ in recorded]:
            problems.append(f"moves differ: feed {len(shown)}, source {len(recorded)}")
        compared = 0
        for i, ((_, feed_clk), (_, source_clk)) in enumerate(zip(shown, recorded)):
            if source_clk is None:
                continue
            compared += 1
            if feed_clk != source_clk:
                problems.append(f"ply {i + 1}: %clk {feed_clk} in the feed, {source_clk} in the source")
            api = want["clock_ms"][i] if i < len(want["clock_ms"]) else None
            if api is None or api // 1000 != source_clk:
                problems.append(f"ply {i + 1}: clock_ms {api} in the API, {source_clk} s in the source")
            if len(problems) > 5:
                break
        result = game.headers["Result"]
        if result not in (source.headers["Result"], "*"):
            problems.append(f"result {result}, the source's {source.headers['Result']}")
        decided = final.outcome(claim_draw=False)
        if decided is not None and result != decided.result():
            problems.append(f"result {result}, the final position gives {decided.result()}")
        print(f"board {board}: {len(shown)} moves, {compared} clocks as the source's, result {result}"
              + ("" if not problems else f" -- {'; '.join(problems[:6])}"))
        failures += bool(problems)
if games != len(sources):
    print(f"{games} games in the feed, {len(sources)} boards in the sources")
    failures += 1
sys.exit(1 if failures else 0)
