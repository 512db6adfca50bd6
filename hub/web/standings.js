// The standings table the supervision page, the spectators' page and the phone show, from
// GET /api/standings: rank (shared where nothing separates), name, points and the event's
// tie-breaks in its order; a player whose game is still in play is marked, and the table
// says it is provisional. One renderer, so the three screens never disagree.

/** The standings (`round`: null for the round in play), or null where there are none yet. */
export async function fetchStandings({ round = null, section = null, spectators = false } = {}) {
  const query = new URLSearchParams();
  if (round != null) query.set("round", round);
  if (section != null) query.set("section", section);
  // The public view even on a logged-in screen: results only after the broadcast delay.
  if (spectators) query.set("audience", "spectators");
  const text = query.toString();
  const response = await fetch("/api/standings" + (text ? "?" + text : "")).catch(() => null);
  return response && response.ok ? response.json() : null;
}

/** A value as the crosstables print it: points with a half, others to two decimals. */
function shown(value) {
  if (value == null) return "–";
  if (Number.isInteger(value)) return String(value);
  return Number.isInteger(value * 2) ? String(value) : value.toFixed(2);
}

function cell(tag, text, className) {
  const node = document.createElement(tag);
  node.textContent = text;
  if (className) node.className = className;
  return node;
}

/**
 * The table: every tie-break, or (`compact`, a phone) only the first `compact` of them.
 * A running player's row has the class `running` and a "playing" mark.
 */
export function standingsTable(standings, { compact = null } = {}) {
  const codes = compact == null ? standings.tiebreaks : standings.tiebreaks.slice(0, compact);
  const table = document.createElement("table");
  table.className = "standings";
  table.dataset.round = standings.round;
  if (standings.section) table.dataset.section = standings.section;
  const head = document.createElement("tr");
  head.append(cell("th", "#"), cell("th", "No."), cell("th", "Name"), cell("th", "Pts"),
    ...codes.map((code) => cell("th", code)));
  table.createTHead().append(head);
  const body = table.createTBody();
  for (const row of standings.rows) {
    const line = document.createElement("tr");
    line.dataset.start = row.start_rank;
    const name = cell("td", row.name, "name");
    if (row.running) {
      line.classList.add("running");
      name.append(cell("span", "playing", "pill"));
    }
    line.append(cell("td", String(row.rank)), cell("td", String(row.start_rank)), name,
      cell("td", shown(row.points), "points"),
      ...row.tiebreaks.slice(0, codes.length).map((v) => cell("td", shown(v))));
    body.append(line);
  }
  return table;
}

/** The heading: the round, whether it is provisional, the rules. */
export function standingsCaption(standings) {
  return (standings.section ? standings.section + ": " : "") + "after round " + standings.round
    + (standings.provisional ? " (provisional: games in play count as not yet played)" : "")
    + " · " + standings.rules;
}
