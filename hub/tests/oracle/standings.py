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


def gacrux(trf_path, round_, codes, rules, unrated):
    version = {"fide-2024": "V2024", "fide-2026": "V2026"}[rules]
    args = ["PTS/" + version] + [c.replace("-", "/") + "/" + version for c in codes]
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
    print(f"{trf} {rules}, unrated {unrated}: {len(hubs)} rounds, {compared} values equal to gacrux's")
    # How many different values each tie-break took: one that never varies proves little.
    print(json.dumps({"distinct": {code: len(values) for code, values in distinct.items()}}))


if __name__ == "__main__":
    main()
