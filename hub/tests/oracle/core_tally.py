"""tiebreak-core, the other open reference, compared with the hub value by value and
tallied per code: reported, not required (where the two references differ, the hub follows
gacrux). Shared by `standings.py` and `team_standings.py`."""


class CoreTally:
    def __init__(self, codes):
        self.seen = {code: {"equal": 0, "differ": 0, "unsupported": 0, "first": None}
                     for code in codes}

    def compare(self, code, mine, theirs_of, where):
        """`theirs_of()` is tiebreak-core's value; one it cannot compute counts as such."""
        seen = self.seen[code]
        try:
            theirs = theirs_of()
        except Exception:  # a code, a modifier or a case it does not compute
            seen["unsupported"] += 1
            return
        if mine is None or abs(theirs - mine) > 1e-9:
            seen["differ"] += 1
            if seen["first"] is None:
                seen["first"] = f"{where}: hub {mine}, tiebreak-core {theirs}"
        else:
            seen["equal"] += 1

    def report(self, prefix, every_code):
        """One line a code (`every_code`: also those it agreed with throughout)."""
        for code, n in self.seen.items():
            if every_code or n["differ"] or n["unsupported"]:
                first = f"; first: {n['first']}" if n["first"] else ""
                print(f"{prefix}{code}: {n['equal']} equal, {n['differ']} differ, "
                      f"{n['unsupported']} not computed{first}")
