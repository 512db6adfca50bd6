#!/usr/bin/env python3
"""FIDE's reference tool as the oracle of the hub's team standings (C.07 11-13).

    team_standings.py TRF RULES TIEBREAKS HUB_JSON...

For each hub answer (`GET /api/standings/teams?round=R`, saved as JSON), runs gacrux (the
FIDE Technical Commission's tie-break checker, PyPI) on the same team TRF after the same
round: once with the match points first and the same list (`/V2024` or `/V2026` on every
code), for each team's rank, match points and every value; once with the game points alone,
for the game points. Compares team by team (by pairing number) and exits 1 on any
difference, naming the first.

The other open reference, tiebreak-core (PyPI, its `team` module: one rule set, whose
unplayed matches count against the team's own total uncapped, as 2024's Article 16 does), is
compared after the last round under `fide-2024`, on gacrux's own reading of the file's
matches, and its differences printed, not required: where the two differ the hub follows
gacrux.
"""
import json
import os
import subprocess
import sys

from core_tally import CoreTally


def gacrux(trf_path, round_, codes):
    out = subprocess.run(
        [sys.executable, "-m", "gacrux.tiebreakchecker", "-i", trf_path, "-n", str(round_),
         "-t", *codes, "-F", "txt", "-d", "T", "-r"],
        capture_output=True, text=True, check=True).stdout
    lines = [l for l in out.splitlines() if l.strip()]
    if not lines or not lines[0].startswith("Rank"):
        raise SystemExit(f"gacrux said: {out[:500]}")
    rows = {}
    for line in lines[1:]:
        fields = line.split("\t")
        values = [None if v in ("-0", "None", "") else float(v) for v in fields[2:]]
        rows[int(fields[1])] = (int(fields[0]), values)
    return rows


def gacrux_teams(trf_path, round_):
    """gacrux's reading of the file's matches after `round_`: each team's rounds."""
    from gacrux import tiebreak as tiebreak_module
    from gacrux import tiebreakchecker
    seen = {}
    original = tiebreak_module.tiebreak.__init__

    def keep(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen["tiebreak"] = self

    tiebreak_module.tiebreak.__init__ = keep
    argv = sys.argv
    try:
        sys.argv = ["gacrux", "-i", trf_path, "-n", str(round_), "-t", "MPTS", "-F", "txt",
                    "-o", os.devnull]
        tiebreakchecker.tiebreakchecker().common_main()
    finally:
        sys.argv = argv
        tiebreak_module.tiebreak.__init__ = original
    return seen["tiebreak"].teams


def tiebreak_core_records(teams, round_):
    """gacrux's teams as tiebreak-core's records (its kinds of match, its board totals)."""
    from tiebreak_core.team import (FORFEIT_LOSS, FORFEIT_WIN, PAIRING_BYE, PLAYED, UNPLAYED,
                                    TeamMatch, TeamRecord)
    records = {}
    for cid, team in teams.items():
        matches, boards = [], {}
        for rnd, rst in sorted(team["rsts"].items()):
            if rnd > round_:
                continue
            opponent = rst["opponent"]
            if opponent > 0:
                kind = PLAYED if rst["played"] else (FORFEIT_WIN if rst["res"] == "W" else FORFEIT_LOSS)
            else:
                kind = PAIRING_BYE if rst["played"] else UNPLAYED
            matches.append(TeamMatch(opponent if opponent > 0 else -1, rnd,
                                     float(rst.get("mpoints", 0)), float(rst.get("gpoints", 0)), kind))
            for game in rst.get("games") or []:
                boards[game["board"]] = boards.get(game["board"], 0.0) + float(game["points"])
        board_points = tuple(boards.get(b, 0.0) for b in range(1, max(boards, default=0) + 1))
        records[cid] = TeamRecord(cid, sum(m.mp for m in matches), sum(m.gp for m in matches),
                                  matches, board_points)
    return records


def compare_with_tiebreak_core(trf, hub, codes):
    """tiebreak-core's value of each scalar code for each team, against the hub's."""
    from tiebreak_core.team import TeamFormat, calculate_team
    round_ = hub["round"]
    records = tiebreak_core_records(gacrux_teams(trf, round_), round_)
    tally = CoreTally(codes)
    fmt = TeamFormat(mp_win=2.0, mp_draw=1.0)
    for row in hub["rows"]:
        for code, mine in zip(codes, row["tiebreaks"]):
            # EDE is a group stage there: "not computed", as a code or modifier it lacks.
            tally.compare(code, mine,
                          lambda: calculate_team(records[row["number"]], records, code, round_, fmt),
                          f"team {row['number']}")
    tally.report("tiebreak-core ", every_code=True)


def main():
    trf, rules, codes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    version = {"fide-2024": "V2024", "fide-2026": "V2026"}[rules]
    compared = 0
    distinct = {code: set() for code in codes}
    for path in sys.argv[4:]:
        with open(path) as f:
            hub = json.load(f)
        round_ = hub["round"]
        assert hub["tiebreaks"] == codes, (hub["tiebreaks"], codes)
        want = gacrux(trf, round_, ["MPTS/" + version] + [c + "/" + version for c in codes])
        games = gacrux(trf, round_, ["GPTS/" + version])
        got = {row["number"]: row for row in hub["rows"]}
        if set(got) != set(want):
            raise SystemExit(f"round {round_}: teams {sorted(set(want) ^ set(got))[:10]} in one table only")

        def differ(a, b):
            return (a is None) != (b is None) or (a is not None and abs(a - b) > 1e-9)

        for number, row in got.items():
            rank, values = want[number]
            if differ(values[0], row["match_points"]):
                raise SystemExit(f"round {round_}, team {number}: match points {row['match_points']}, gacrux {values[0]}")
            if differ(games[number][1][0], row["game_points"]):
                raise SystemExit(f"round {round_}, team {number}: game points {row['game_points']}, gacrux {games[number][1][0]}")
            for code, mine, theirs in zip(codes, row["tiebreaks"], values[1:]):
                if differ(theirs, mine):
                    raise SystemExit(f"round {round_}, team {number}, {code} ({rules}): hub {mine}, gacrux {theirs}")
                compared += 1
                distinct[code].add(theirs)
        for number, row in got.items():
            rank = want[number][0]
            if rank != row["rank"]:
                raise SystemExit(f"round {round_}, team {number}: rank {row['rank']}, gacrux {rank}")
    print(f"{trf} {rules}: {len(sys.argv) - 4} rounds, {compared} values equal to gacrux's")
    if rules == "fide-2024":
        compare_with_tiebreak_core(trf, hub, codes)
    print(json.dumps({"distinct": {code: len(values) for code, values in distinct.items()}}))


if __name__ == "__main__":
    main()
