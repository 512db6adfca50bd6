#!/usr/bin/env python3
"""FIDE's reference tool reads the ranks a results file records.

    trf_ranks.py TRF ROUND

Runs gacrux (the FIDE Technical Commission's tie-break checker, PyPI) on the file after
ROUND with no list of its own, so that it ranks by the file's TRF-2026 records (`212`, else
`202`) under the rules of the file's start date, and compares its rank of every player with
the rank column (characters 86-89 of each `001` record). Exits 1 on any difference, or
where the file has no list; prints the list gacrux used and how many ranks agree.

gacrux reads bytes, the TRF counts characters: names are replaced by ASCII first.
"""
import subprocess
import sys
import tempfile


def main():
    path, round_ = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not any(l.startswith(("202 ", "212 ")) for l in lines):
        raise SystemExit("the file records no tie-break list (202 or 212)")
    ascii_lines, recorded = [], {}
    for line in lines:
        if line.startswith("001"):
            start = int(line[4:8])
            recorded[start] = int(line[85:89])
            line = line[:14] + f"Player {start}".ljust(33) + line[47:]
        ascii_lines.append(line)
    with tempfile.NamedTemporaryFile("w", suffix=".trf", delete=False, encoding="ascii") as f:
        f.write("\n".join(ascii_lines) + "\n")
        ascii_path = f.name
    out = subprocess.run(
        [sys.executable, "-m", "gacrux.tiebreakchecker", "-i", ascii_path, "-n", round_,
         "-F", "txt", "-d", "T", "-r"], capture_output=True, text=True, check=True).stdout
    rows = [l.split("\t") for l in out.splitlines() if l.strip()]
    if not rows or rows[0][0] != "Rank":
        raise SystemExit(f"gacrux said: {out[:500]}")
    ranked = {int(r[1]): int(r[0]) for r in rows[1:]}
    for start, rank in sorted(recorded.items()):
        if ranked.get(start) != rank:
            raise SystemExit(f"player {start}: the file's rank {rank}, gacrux's {ranked.get(start)} "
                             f"(by {' '.join(rows[0][2:])})")
    print(f"{path} after round {round_}: {len(recorded)} ranks equal to gacrux's by {' '.join(rows[0][2:])}")


if __name__ == "__main__":
    main()
