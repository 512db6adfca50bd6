// The standings table the supervision page, the spectators' page and the phone show, from
// GET /api/standings: rank (shared where nothing separates), name, points and the event's
// tie-breaks in its order; a player whose game is still in play is marked, and the table
// says it is provisional. A team event's teams (GET /api/standings/teams) the same way,
// with match and game points. One renderer, so the three screens never disagree.

/**
 * The standings (`round`: null for the round in play; `teams`: a team event's teams), or
 * null where there are none (yet).
 */
export async function fetchStandings({ round = null, section = null, spectators = false, teams = false } = {}) {
  const query = new URLSearchParams();
  if (round != null) query.set("round", round);
  if (section != null) query.set("section", section);
  // The public view even on a logged-in screen: results only after the broadcast delay.
  if (spectators) query.set("audience", "spectators");
  const text = query.toString();
  const path = teams ? "/api/standings/teams" : "/api/standings";
  const response = await fetch(path + (text ? "?" + text : "")).catch(() => null);
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

/** Whether a table is a team event's teams (GET /api/standings/teams). */
export function isTeams(standings) {
  return standings.rows.length > 0 && "team" in standings.rows[0];
}

/**
 * The table: every tie-break, or (`compact`, a phone) only the first `compact` of them.
 * A running player's row (a team's: a board of its match in play) has the class `running`
 * and a "playing" mark.
 */
export function standingsTable(standings, { compact = null } = {}) {
  const codes = compact == null ? standings.tiebreaks : standings.tiebreaks.slice(0, compact);
  const teams = isTeams(standings);
  const table = document.createElement("table");
  table.className = teams ? "standings teams" : "standings";
  table.dataset.round = standings.round;
  if (standings.section) table.dataset.section = standings.section;
  const head = document.createElement("tr");
  const points = teams ? [cell("th", "MP"), cell("th", "GP")] : [cell("th", "Pts")];
  head.append(cell("th", "#"), cell("th", "No."), cell("th", teams ? "Team" : "Name"), ...points,
    ...codes.map((code) => cell("th", code)));
  table.createTHead().append(head);
  const body = table.createTBody();
  for (const row of standings.rows) {
    const line = document.createElement("tr");
    if (teams) line.dataset.team = row.number;
    else line.dataset.start = row.start_rank;
    const name = cell("td", teams ? row.team : row.name, "name");
    if (row.running) {
      line.classList.add("running");
      name.append(cell("span", "playing", "pill"));
    }
    const scores = teams
      ? [cell("td", shown(row.match_points), "points"), cell("td", shown(row.game_points), "game-points")]
      : [cell("td", shown(row.points), "points")];
    line.append(cell("td", String(row.rank)), cell("td", String(teams ? row.number : row.start_rank)),
      name, ...scores, ...row.tiebreaks.slice(0, codes.length).map((v) => cell("td", shown(v))));
    body.append(line);
  }
  return table;
}

/** The heading: the teams or the section, the round, whether it is provisional, the rules. */
export function standingsCaption(standings) {
  return (isTeams(standings) ? "Teams: " : "")
    + (standings.section ? standings.section + ": " : "") + "after round " + standings.round
    + (standings.provisional ? " (provisional: games in play count as not yet played)" : "")
    + " · " + standings.rules;
}
