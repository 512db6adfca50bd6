"""Independent check of the hub's rules on real games, with python-chess 1.11.2.

Input: JSON lines written by hub/tests/real_games.rs, one per game: the PGN's moves in UCI
and what the hub concluded after replaying them as board events: how many moves it
completed before the game ended, the final FEN, the status and the claimable draws.

python-chess recomputes each of them. Status order follows the hub's documented policy
(checkmate, stalemate, dead position, fivefold, 75 moves). python-chess knows only the static
material rule for dead positions (Art. 5.2.2); the hub also sees forced and blocked ones. A
game the hub declares dead where python-chess still plays is listed, not failed, when the
position is the same; real_games.rs confirms each with chasolver's full analysis.
Exit status 0 when everything agrees; disagreements are printed.
"""
import json
import sys

import chess

assert chess.__version__ == "1.11.2", f"python-chess {chess.__version__}, need 1.11.2"


def status(board: chess.Board) -> str:
    if board.is_checkmate():
        return "checkmate"
    if board.is_stalemate():
        return "stalemate"
    if board.is_insufficient_material():
        return "dead_position"
    if board.is_fivefold_repetition():
        return "fivefold_repetition"
    if board.is_seventyfive_moves():
        return "seventyfive_moves"
    return "playing"


def claimable(board: chess.Board) -> list:
    claims = []
    if board.can_claim_threefold_repetition():
        claims.append("threefold_repetition")
    if board.can_claim_fifty_moves():
        claims.append("fifty_moves")
    return claims


def fifty_claim_with_mating_move(board: chess.Board) -> bool:
    """python-chess issue 1188: at 99 half-moves it refuses a claim (Art. 9.3.1) whose every
    non-zeroing move ends the game; under the Laws the written move completes the fifty."""
    if board.halfmove_clock != 99:
        return False
    quiet = [m for m in board.legal_moves if not board.is_zeroing(m)]
    ends = []
    for move in quiet:
        board.push(move)
        ends.append(not any(board.legal_moves))
        board.pop()
    return bool(quiet) and all(ends)


def main(path: str) -> int:
    games = mismatches = 0
    known_gaps = []
    beyond_static = []
    endings = {}
    with open(path) as lines:
        for line in lines:
            game = json.loads(line)
            games += 1
            board = chess.Board()
            state = status(board)
            for uci in game["uci"]:
                if state != "playing":
                    break
                board.push_uci(uci)
                state = status(board)
            want = {
                "plies": len(board.move_stack),
                "fen": board.fen(),
                "status": state,
                "claimable": claimable(board) if state == "playing" else [],
            }
            endings[state] = endings.get(state, 0) + 1
            hub = game["hub"]
            if hub == want:
                continue
            where = f'{game["file"]} game {game["game"]}'
            if hub["status"] == "dead_position" and hub["claimable"] == []:
                earlier = chess.Board()
                for uci in game["uci"][: hub["plies"]]:
                    earlier.push_uci(uci)
                if status(earlier) == "playing" and earlier.fen() == hub["fen"]:
                    beyond_static.append(f'{where}: {hub["fen"]}')
                    continue
            if (
                hub["claimable"] == want["claimable"] + ["fifty_moves"]
                and {k: v for k, v in hub.items() if k != "claimable"}
                == {k: v for k, v in want.items() if k != "claimable"}
                and fifty_claim_with_mating_move(board)
            ):
                known_gaps.append(where)
                continue
            mismatches += 1
            print(f"MISMATCH {where}:\n  hub          {hub}\n  python-chess {want}")
    print(f"python-chess {chess.__version__}: {games} games, {mismatches} mismatches; final states {endings}")
    for where in beyond_static:
        print(f"  dead position (5.2.2) beyond python-chess's material rule: {where}")
    for where in known_gaps:
        print(f"  python-chess issue 1188 (Art. 9.3.1), the hub is right: {where}")
    return 1 if mismatches or games == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
