#!/usr/bin/env python3
"""FIDE's reference tool as the oracle of the hub's standings (C.07 tie-breaks).

    standings.py TRF RULES UNRATED TIEBREAKS HUB_JSON...

For each hub answer (`GET /api/standings?round=R`, saved as JSON), runs gacrux (the FIDE
Technical Commission's tie-break checker, PyPI) on the same TRF after the same round, with
the same list, the rule set (`/V2024` or `/V2026` on every code) and the rating of unrated
players (`-u`; `none` for none), and compares rank,
points and every value, player by player. Exits 1 on any difference, listing the first.

gacrux does not read everything real pairing programs write: a forfeit written without a
colour (`153 - -`, Swiss-Chess 2005) stops it ("No result for black"). Such a game is given
colours before gacrux reads the file (the lower start rank White): a forfeit is no game
played, so no tie-break counts its colour.
"""
import json
import re
import subprocess
import sys
import tempfile

from core_tally import CoreTally


def normalised(trf_text):
    """The TRF with every colourless paired entry given a colour."""
    lines = []
    for line in trf_text.splitlines():
        if line.startswith("001") and len(line) > 89:
            me = int(line[4:8])
            head, rounds = line[:89], line[89:]
            out = []
            for i in range(0, len(rounds), 10):
                cell = rounds[i:i + 10]
                opponent = cell[2:6].strip()
                if len(cell) >= 8 and opponent.isdigit() and int(opponent) > 0 and cell[7] == "-":
                    colour = "w" if me < int(opponent) else "b"
                    cell = cell[:7] + colour + cell[8:]
                out.append(cell)
            line = head + "".join(out)
        lines.append(line)
    return "\n".join(lines) + "\n"


def trf_spelling(code):
    """FIDE's `BH-C1` as TRF-2026 writes it, `BH/C1`: only a `-` after the name (`KS/L-2`
    keeps its sign)."""
    name, _, rest = code.partition("/")
    name = name.replace("-", "/", 1)
    return name + ("/" + rest if rest else "")


def gacrux(trf_path, round_, codes, rules, unrated):
    version = {"fide-2024": "V2024", "fide-2026": "V2026"}[rules]
    args = ["PTS/" + version] + [trf_spelling(c) + "/" + version for c in codes]
    out = subprocess.run(
        [sys.executable, "-m", "gacrux.tiebreakchecker", "-i", trf_path, "-n", str(round_),
         "-t", *args, "-F", "txt", "-d", "T", "-r", *(["-u", unrated] if unrated != "none" else [])],
        capture_output=True, text=True, check=True).stdout
    rows = {}
    lines = [l for l in out.splitlines() if l.strip()]
    if not lines or not lines[0].startswith("Rank"):
        raise SystemExit(f"gacrux said: {out[:500]}")
    for line in lines[1:]:
        fields = line.split("\t")
        rank, start = int(fields[0]), int(fields[1])
        values = [None if v in ("-0", "None", "") else float(v) for v in fields[2:]]
        rows[start] = (rank, values[0], values[1:])
    return rows


# tiebreak-core's names for the codes it computes (the others through MTB26 descriptors).
CORE_CRITERIA = {"WIN": "wins", "WON": "won", "BPG": "games_black", "BWG": "wins_black",
                 "REP": "rounds_elected", "TPR": "tpr"}


def tiebreak_core_players(trf_text, round_, unrated):
    """The TRF's first `round_` rounds as tiebreak-core's records (Article 16's kinds)."""
    from tiebreak_core import GameRecord, PlayerTiebreakData
    ratings, rows = {}, {}
    for line in trf_text.splitlines():
        if not line.startswith("001") or len(line) < 89:
            continue
        start = int(line[4:8])
        rating = line[48:52].strip()
        ratings[start] = int(rating) if rating.isdigit() and int(rating) > 0 else None
        rows[start] = line[89:]
    players = {}
    for start, cells in rows.items():
        games = []
        for r in range(round_):
            cell = cells[r * 10:(r + 1) * 10].ljust(10)
            opponent = int(cell[2:6]) if cell[2:6].strip().isdigit() else 0
            colour = "black" if cell[7] == "b" else "white"
            result = cell[9]
            if opponent > 0 and result in "10=WDL" and result != " ":
                score = {"1": 1.0, "W": 1.0, "=": 0.5, "D": 0.5}.get(result, 0.0)
                kind = "played"
            elif opponent > 0 and result == "+":
                score, kind = 1.0, "forfeit_win"
            elif opponent > 0:
                score, kind = 0.0, "forfeit_loss"
            elif result in "U+":
                score, kind = 1.0, "pairing_bye"
            elif result == "F":
                score, kind = 1.0, "requested_bye"
            elif result == "H":
                score, kind = 0.5, "requested_bye"
            else:  # a zero-point bye, or no entry (absent, withdrawn: 16.1.1)
                score, kind = 0.0, "requested_bye"
            rating = ratings.get(opponent) or (unrated if opponent > 0 else 0) or 0
            games.append(GameRecord(opponent if kind != "pairing_bye" and kind != "requested_bye" else -1,
                                    rating, score, colour, r + 1, kind=kind))
        own = ratings[start] or unrated or 0
        players[start] = PlayerTiebreakData(start, own, sum(g.score for g in games), games)
    return players


def round_robin(trf_text):
    """Whether gacrux reads the event as a round-robin: record 092 naming one (and not a
    Swiss), else as many players as rounds or one more (or twice as many)."""
    kind = next((l[3:].upper() for l in trf_text.splitlines() if l.startswith("092")), "")
    if "SWISS" in kind:
        return False
    if any(k in kind for k in ("RR", "ROBIN", "BERGER")):
        return True
    players = [l for l in trf_text.splitlines() if l.startswith("001")]
    declared = [int(l[3:].strip()) for l in trf_text.splitlines()
                if l[:3] in ("XXR", "142") and l[3:].strip().isdigit()]
    rounds = max(declared + [max((len(l) - 89 + 1) // 10 for l in players)])
    return len(players) in (rounds, rounds + 1) or 2 * len(players) in (rounds, rounds + 1)


def tiebreak_core_value(players, start, code, round_, rules, mode):
    from tiebreak_core import calculate_descriptor_strict, calculate_strict
    if code in CORE_CRITERIA:
        return calculate_strict(players[start], players, CORE_CRITERIA[code],
                                total_rounds=round_, ruleset=rules, mode=mode)
    return calculate_descriptor_strict(players[start], players, code, round_, ruleset=rules,
                                       mode=mode)


def main():
    trf, rules, unrated, codes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
    hubs = sys.argv[5:]
    with open(trf, encoding="latin-1") as f:
        text = normalised(f.read())
    with tempfile.NamedTemporaryFile("w", suffix=".trf", delete=False, encoding="latin-1") as f:
        f.write(text)
        fixed = f.name
    compared = 0
    distinct = {code: set() for code in codes}
    # tiebreak-core, the other open reference, after the last round: how often it agrees with
    # the hub (and so with gacrux). Reported, not required: where the two references differ
    # the hub follows gacrux.
    core = CoreTally(codes)
    for path in hubs:
        with open(path) as f:
            hub = json.load(f)
        round_ = hub["round"]
        assert hub["tiebreaks"] == codes, (hub["tiebreaks"], codes)
        assert hub["rules"] == rules, hub["rules"]
        want = gacrux(fixed, round_, codes, rules, unrated)
        got = {row["start_rank"]: row for row in hub["rows"]}
        missing = sorted(set(want) - set(got))
        # A player with no round yet (a late entry) is in gacrux's table, not the hub's.
        missing = [s for s in missing if want[s][1] != 0 or any(v for v in want[s][2])]
        if missing:
            raise SystemExit(f"round {round_}: players {missing[:10]} missing from the hub's standings")
        for start, row in got.items():
            if start not in want:
                raise SystemExit(f"round {round_}: player {start} is not in gacrux's table")
            rank, points, values = want[start]
            def differ(a, b):
                return (a is None) != (b is None) or (a is not None and abs(a - b) > 1e-9)
            if differ(points, row["points"]):
                raise SystemExit(f"round {round_}, player {start}: points {row['points']}, gacrux {points}")
            for code, mine, theirs in zip(codes, row["tiebreaks"], values):
                if differ(theirs, mine):
                    raise SystemExit(f"round {round_}, player {start}, {code} ({rules}): hub {mine}, gacrux {theirs}")
                compared += 1
                distinct[code].add(theirs)
            if rank != row["rank"]:
                raise SystemExit(f"round {round_}, player {start}: rank {row['rank']}, gacrux {rank}")
        if path != hubs[-1]:
            continue  # tiebreak-core recomputes its context at every call: the last round only
        unrated_rating = None if unrated == "none" else int(unrated)
        players = tiebreak_core_players(text, round_, unrated_rating)
        # tiebreak-core's round-robin mode (its 15.2 carve-out) where gacrux reads one.
        mode = "round_robin" if round_robin(text) else "swiss"
        for start, row in got.items():
            for code, mine in zip(codes, row["tiebreaks"]):
                if code == "DE":
                    continue  # a ranking stage there, not a value
                core.compare(code, mine,
                             lambda: tiebreak_core_value(players, start, code, round_, rules, mode),
                             f"round {round_}, player {start}")
    system = "round-robin" if round_robin(text) else "Swiss"
    print(f"{trf} ({system}) {rules}, unrated {unrated}: {len(hubs)} rounds, "
          f"{compared} values equal to gacrux's")
    core.report(f"tiebreak-core {rules} ", every_code=False)
    # How many different values each tie-break took: one that never varies proves little.
    print(json.dumps({"distinct": {code: len(values) for code, values in distinct.items()}}))


if __name__ == "__main__":
    main()
