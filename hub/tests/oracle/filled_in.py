"""Independent check, with python-chess 1.11.2, of a broadcast feed whose games hold moves the
hub filled in (their order not seen by the board), against the source games.

Usage: filled_in.py FEED.pgn EXPECT.json

EXPECT.json, per board: {"board": {"pgn": PATH, "game": N (from 1), "from_ply": P, "to_ply": Q,
"plies": K, "confirmed": bool}}: the source game the board's emulator played, the plies the hub
filled in (from 1), how many plies the feed must show, and whether the arbiter has confirmed
the order.

Every game must parse without errors and every move be legal. Against the source game (never
the hub's own record): the first K moves are the source's, except plies P to Q, which may be
in another order if it reaches the source's position after ply Q (then every later move is
the source's); once confirmed, every move is the source's. Plies P to Q, and only they, carry
the feed's comment for moves filled in, saying whether the order is confirmed.
Prints one line per game; exit status 0 when everything agrees.
"""
import json
import sys

import chess.pgn

assert chess.__version__ == "1.11.2", f"python-chess {chess.__version__}, need 1.11.2"

FILLED = "Filled in:"
CONFIRMED = "the arbiter confirmed the order"


def source_game(path, number):
    with open(path) as f:
        for _ in range(number - 1):
            chess.pgn.skip_game(f)
        return chess.pgn.read_game(f)


def check(game, want):
    problems = []
    if game.errors:
        problems.append(f"errors {game.errors}")
    source = [m for m in source_game(want["pgn"], want["game"]).mainline_moves()]
    fed = []
    comments = []
    node = game
    while node.variations:
        child = node.variation(0)
        fed.append(child.move)
        comments.append(" ".join(child.comment.split()))
        node = child
    plies, start, end = want["plies"], want["from_ply"], want["to_ply"]
    if len(fed) != plies:
        problems.append(f"{len(fed)} moves, not {plies}")
    # The feed's position after ply Q, and the source's.
    board, expected = chess.Board(), chess.Board()
    for i, (a, b) in enumerate(zip(fed, source)):
        ply = i + 1
        board.push(a)
        expected.push(b)
        inside = start <= ply <= end
        if a != b and (want["confirmed"] or not inside):
            problems.append(f"ply {ply}: {a.uci()}, the source {b.uci()}")
            break
        if ply == end and board.board_fen() != expected.board_fen():
            problems.append(f"after ply {ply} the feed's position is not the source's")
        says = FILLED in comments[i]
        if says != inside:
            problems.append(f"ply {ply}: the filled-in comment {'missing' if inside else 'where none was filled in'}")
        if inside and (CONFIRMED in comments[i]) != want["confirmed"]:
            problems.append(f"ply {ply}: the comment says confirmed={not want['confirmed']}")
    return problems


def main():
    feed, expect_path = sys.argv[1], sys.argv[2]
    with open(expect_path) as f:
        expect = json.load(f)
    failures = 0
    seen = set()
    with open(feed) as f:
        while True:
            game = chess.pgn.read_game(f)
            if game is None:
                break
            board = game.headers["Round"].split(".")[1]
            if board not in expect:
                continue
            seen.add(board)
            problems = check(game, expect[board])
            failures += bool(problems)
            print(f"board {board}: {'; '.join(problems) if problems else 'ok'}")
    for board in expect:
        if board not in seen:
            failures += 1
            print(f"board {board}: not in the feed")
    sys.exit(1 if failures else 0)


main()
