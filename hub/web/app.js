// The supervision page: the hall map, the alerts, time trouble and nodes, and a board view.
// One live stream (server-sent events): `hall` gives everything, `update` what changed.
// Clocks tick here, from each tile's last reading: the hub sends a clock only when it
// reports, not every second.

import { fetchStandings, isTeams, standingsTable, standingsCaption } from "/assets/standings.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

const state = {
  audience: null,        // "arbiters" | "spectators"
  tiles: new Map(),      // board -> tile as the hub sent it
  views: new Map(),      // board -> its DOM elements
  alerts: new Map(),     // id -> open alert
  offset: 0,             // hub time - Date.now()
  delayMs: 0,
  round: null,
  zones: [],
  matches: [],           // the round's team matches: {teams: [a, b], boards: [...]}
  matchViews: [],        // each match's score element
  boardOpen: null,       // the board of the board view
  boardRound: null,      // its round, when it is one that is over
  standingsOpen: undefined, // the standings view's round (null: the round in play), if open
  arbiterName: localStorage.getItem("zeitnot.arbiter") || "",
  // The alerts' language; the stream speaks English, the API all six.
  lang: params.get("lang") || localStorage.getItem("zeitnot.lang") || "en",
  translated: new Map(), // alert id -> { updated_at, text, action } in `lang`
};

// What the browser tests and the bench read: traffic and the time each update took.
const stats = {
  updates: 0, bytes: 0, tilesApplied: 0, applyMs: [], halls: 0,
  tileShownAt: {},       // board -> Date.now() when its tile last changed on screen
  longTasks: 0,
  parts: { parse: 0, dom: 0, layout: 0 }, // ms, summed over updates
};
window.zeitnot = { state, stats };
const measureLayout = params.has("measure");
try {
  new PerformanceObserver((list) => { stats.longTasks += list.getEntries().length; })
    .observe({ entryTypes: ["longtask"] });
} catch (_) { /* not every browser has long tasks */ }

const hubNow = () => Date.now() + state.offset;

function clockText(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const mm = h ? String(m).padStart(2, "0") : String(m);
  return (h ? h + ":" : "") + mm + ":" + String(sec).padStart(2, "0");
}

/** What a clock face shows now: the running side counted down since the reading. */
function shown(clock, side) {
  if (!clock) return null;
  const ms = clock[side + "_ms"];
  if (clock.running !== side || !clock.at) return ms;
  // At the board's pace: a replay at 10× counts down ten seconds a second, as its clock.
  const pace = (clock.pace || 1000) / 1000;
  return Math.max(0, ms - Math.max(0, hubNow() - clock.at) * pace);
}

function playerText(seat) {
  if (!seat) return "—";
  return [seat.title, seat.name, seat.rating ? "(" + seat.rating + ")" : null]
    .filter(Boolean).join(" ");
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

// ---- the hall map ----------------------------------------------------------------------

/** Zones and rows as configured. */
function layout(boards) {
  const placed = new Set();
  const zones = state.zones.map((z) => ({
    name: z.name,
    rows: z.rows.map(([from, to]) => {
      const row = boards.filter((b) => b >= from && b <= to);
      row.forEach((b) => placed.add(b));
      return row;
    }).filter((r) => r.length),
  }));
  // Boards outside the configured zones: one row that wraps with the screen's width.
  const rest = boards.filter((b) => !placed.has(b));
  if (rest.length) zones.push({ name: state.zones.length ? "Other boards" : "Hall", rows: [rest] });
  return zones.filter((z) => z.rows.length);
}

/** Boards above which tiles go compact. */
const COMPACT_FROM = 200;

function buildHall() {
  const hall = $("hall");
  document.body.classList.toggle("compact", state.tiles.size > COMPACT_FROM);
  hall.replaceChildren();
  state.views.clear();
  state.matchViews = [];
  const boards = [...state.tiles.keys()].sort((a, b) => a - b);
  if (state.matches.length) {
    // A team round: each match's boards together under its score.
    const inMatch = new Set();
    const matches = el("div", { class: "matches" });
    hall.append(matches);
    for (const m of state.matches) {
      const score = el("span", { class: "score" });
      const head = el("h3", { class: "match-head" }, m.teams[0] + " – " + m.teams[1] + " ", score);
      const row = el("div", { class: "row" });
      for (const b of m.boards) { row.append(tileView(b).root); inMatch.add(b); }
      matches.append(el("section", { class: "match", "data-teams": m.teams.join(" – ") }, head, row));
      state.matchViews.push({ match: m, score });
    }
    const rest = boards.filter((b) => !inMatch.has(b));
    if (rest.length) {
      const row = el("div", { class: "row" });
      for (const b of rest) row.append(tileView(b).root);
      hall.append(el("section", { class: "zone" }, el("h2", {}, "Other boards"), row));
    }
    for (const b of boards) renderTile(state.tiles.get(b));
    renderMatches();
    return;
  }
  for (const zone of layout(boards)) {
    const section = el("section", { class: "zone", "data-zone": zone.name }, el("h2", {}, "Zone " + zone.name));
    for (const row of zone.rows) {
      const r = el("div", { class: "row" });
      for (const b of row) r.append(tileView(b).root);
      section.append(r);
    }
    hall.append(section);
  }
  for (const b of boards) renderTile(state.tiles.get(b));
}

function tileView(board) {
  const v = {
    no: el("span", { class: "no" }, String(board)),
    white: el("span", { class: "pl w" }),
    wclk: el("span", { class: "clk w" }),
    black: el("span", { class: "pl b" }),
    bclk: el("span", { class: "clk b" }),
    mv: el("div", { class: "mv" }),
    badges: el("span", { class: "badges" }),
  };
  v.root = el("div", { class: "tile", id: "tile-" + board, "data-board": board, onclick: () => openBoard(board) },
    v.no, v.badges, el("div", { class: "players" }, v.white, v.wclk, v.black, v.bclk), v.mv);
  state.views.set(board, v);
  return v;
}

/** Writes only what changed: with 1,000 tiles every untouched node saves style work. */
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function renderTile(tile) {
  const v = state.views.get(tile.board);
  if (!v) return false;
  const white = playerText(tile.white), black = playerText(tile.black);
  if (v.white.title !== white) { v.white.textContent = white; v.white.title = white; }
  if (v.black.title !== black) { v.black.textContent = black; v.black.title = black; }
  setText(v.mv, tile.last_move || "");
  const tip = "Board " + tile.board + ": " + white + " – " + black + (tile.last_move ? " · " + tile.last_move : "");
  if (v.root.title !== tip) v.root.title = tip;
  v.root.dataset.ply = tile.ply;
  v.root.dataset.result = tile.result;
  const c = tile.clock;
  const tt = c ? c.time_trouble : { white: false, black: false };
  v.wclk.classList.toggle("trouble", tt.white);
  v.bclk.classList.toggle("trouble", tt.black);
  v.wclk.classList.toggle("running", !!c && c.running === "white");
  v.bclk.classList.toggle("running", !!c && c.running === "black");
  v.root.classList.toggle("trouble", tt.white || tt.black);
  v.root.classList.toggle("over", tile.result !== "*");
  v.root.classList.toggle("flagged", !!(c && c.flag));
  const a = tile.alerts;
  const badgeKey = [c && c.flag, a && a.open, a && a.severity, a && a.unacknowledged, tile.node_connected, tile.board_connected, tile.result].join("|");
  if (v.badgeKey !== badgeKey) {
    v.badgeKey = badgeKey;
    const badges = [];
    if (c && c.flag) badges.push(el("span", { class: "badge flag", title: "Flag: " + c.flag }, "⚑ " + c.flag[0].toUpperCase()));
    if (a) {
      badges.push(el("span", {
        class: "badge alert " + a.severity + (a.unacknowledged ? " unacknowledged" : ""),
        title: a.open + " open alert(s)",
      }, "!" + a.open));
    }
    if (tile.node_connected === false) badges.push(el("span", { class: "badge offline", title: "Node not heard from" }, "node"));
    else if (tile.board_connected === false) badges.push(el("span", { class: "badge offline", title: "E-board not answering: its cable or its power" }, "board"));
    if (tile.result !== "*") badges.push(el("span", { class: "badge result" }, tile.result));
    v.badges.replaceChildren(...badges);
  }
  tickTile(tile, v);
  stats.tileShownAt[tile.board] = Date.now();
  return true;
}

/** A team match's score as its games finish: a win is a point to the winner's team. */
function matchScore(m) {
  const points = { [m.teams[0]]: 0, [m.teams[1]]: 0 };
  for (const b of m.boards) {
    const t = state.tiles.get(b);
    if (!t || !t.white_team || !t.black_team) continue;
    if (t.result === "1-0") points[t.white_team] += 1;
    else if (t.result === "0-1") points[t.black_team] += 1;
    else if (t.result === "1/2-1/2") { points[t.white_team] += 0.5; points[t.black_team] += 0.5; }
  }
  return [points[m.teams[0]], points[m.teams[1]]];
}

const half = (x) => (Math.floor(x) || (x % 1 ? "" : "0")) + (x % 1 ? "½" : "");

function renderMatches() {
  for (const { match, score } of state.matchViews || []) {
    const [a, b] = matchScore(match);
    setText(score, half(a) + "–" + half(b));
  }
}

function tickTile(tile, v) {
  const c = tile.clock;
  setText(v.wclk, c ? clockText(shown(c, "white")) : "");
  setText(v.bclk, c ? clockText(shown(c, "black")) : "");
}

// ---- the stream ------------------------------------------------------------------------

function onHall(data) {
  const hall = JSON.parse(data);
  stats.halls += 1;
  stats.bytes += data.length;
  state.offset = hall.now - Date.now();
  state.audience = hall.audience;
  state.delayMs = hall.delay_ms;
  state.round = hall.round;
  state.zones = hall.zones;
  state.matches = hall.matches || [];
  document.body.classList.toggle("spectators", hall.audience === "spectators");
  $("event").textContent = hall.event_name || hall.event;
  const start = hall.round_start ? new Date(hall.round_start).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : null;
  $("round").textContent = hall.round ? "Round " + hall.round + (start ? (hall.now < hall.round_start ? " · starts " : " · started ") + start : "") : "";
  $("audience").textContent = hall.audience === "arbiters" ? "Arbiters"
    : "Spectators" + (hall.delay_ms ? " · " + Math.round(hall.delay_ms / 60000) + " min delay" : "");
  state.tiles = new Map(hall.tiles.map((t) => [t.board, t]));
  state.alerts = new Map((hall.alerts || []).map((a) => [a.id, a]));
  buildHall();
  renderAlerts();
  renderCounts();
  renderTrouble();
}

function onUpdate(data) {
  const t0 = performance.now();
  const update = JSON.parse(data);
  const t1 = performance.now();
  state.offset = update.now - Date.now();
  if (update.round !== undefined && update.round !== state.round) {
    // The next round began: its pairings, its matches, its boards.
    connect();
    refreshRounds();
    return;
  }
  let added = false;
  for (const tile of update.tiles) {
    state.tiles.set(tile.board, tile);
    if (!renderTile(tile)) added = true;
  }
  if (added) buildHall();
  renderMatches();
  if (update.alerts) {
    for (const a of update.alerts) {
      if (a.state === "raised" || a.state === "acknowledged") state.alerts.set(a.id, a);
      else state.alerts.delete(a.id);
    }
    renderAlerts();
  }
  renderCounts();
  if (state.boardOpen != null && update.tiles.some((t) => t.board === state.boardOpen)) loadBoard(state.boardOpen);
  const t2 = performance.now();
  if (measureLayout) void document.body.offsetHeight; // style and layout, counted below
  const t3 = performance.now();
  stats.parts.parse += t1 - t0;
  stats.parts.dom += t2 - t1;
  stats.parts.layout += t3 - t2;
  stats.applyMs.push(t3 - t0);
  if (stats.applyMs.length > 10000) stats.applyMs.splice(0, 5000);
  stats.updates += 1;
  stats.tilesApplied += update.tiles.length;
  stats.bytes += data.length;
}

let source = null;
function connect() {
  if (source) source.close();
  const url = state.audience === "arbiters" ? "/api/live" : "/api/public/live";
  source = new EventSource(url);
  source.addEventListener("hall", (e) => onHall(e.data));
  source.addEventListener("update", (e) => onUpdate(e.data));
  source.onopen = () => { $("conn").textContent = "live"; $("conn").className = "conn up"; };
  source.onerror = () => { $("conn").textContent = "reconnecting…"; $("conn").className = "conn down"; };
}

function renderCounts() {
  let playing = 0, over = 0;
  for (const t of state.tiles.values()) (t.result === "*" ? playing++ : over++);
  $("counts").textContent = state.tiles.size + " boards · " + playing + " playing · " + over + " finished";
  $("alert-count").textContent = state.alerts.size ? "(" + state.alerts.size + " open)" : "";
}

// ---- alerts ------------------------------------------------------------------------------

const SEVERITY = { urgent: 0, high: 1, normal: 2, info: 3 };

/** The panel lists the most urgent alerts; the count says how many are open. */
const ALERTS_LISTED = 100;
let alertsDue = false;

function renderAlerts() {
  if (state.audience !== "arbiters" || alertsDue) return;
  alertsDue = true;
  requestAnimationFrame(() => {
    alertsDue = false;
    const alerts = [...state.alerts.values()].sort((a, b) =>
      SEVERITY[a.severity] - SEVERITY[b.severity]
      || (a.acknowledged ? 1 : 0) - (b.acknowledged ? 1 : 0)
      || b.raised_at - a.raised_at).slice(0, ALERTS_LISTED);
    $("alerts").replaceChildren(...alerts.map(alertItem));
    if (state.lang !== "en" && alerts.some((a) => state.translated.get(a.id)?.updated_at !== a.updated_at)) translateAlerts();
  });
}

/** The open alerts' texts in the arbiter's language, at most once a second. */
let translating = null;
function translateAlerts() {
  if (translating) return;
  translating = setTimeout(async () => {
    const lang = state.lang;
    const response = await fetch("/api/alerts?state=open&lang=" + lang).catch(() => null);
    if (response && response.ok && lang === state.lang) {
      for (const a of await response.json()) state.translated.set(a.id, { updated_at: a.updated_at, text: a.text, action: a.action });
      renderAlerts();
    }
    setTimeout(() => { translating = null; }, 1000);
  }, 0);
}

function alertItem(a) {
  const t = state.lang !== "en" && state.translated.get(a.id);
  const words = t && t.updated_at === a.updated_at ? t : a;
  const when = new Date(a.raised_at).toLocaleTimeString();
  const acked = a.acknowledged ? "acknowledged by " + a.acknowledged.by : "raised " + when;
  const li = el("li", { class: "alert-item " + a.severity, "data-alert": a.id, "data-state": a.state, "data-kind": a.kind, "data-board": a.board ?? "" },
    el("div", { class: "head" },
      el("span", {}, a.board ? "Board " + a.board : "Zone " + a.zone),
      // An alert of an earlier round's game, still open.
      a.incident && a.incident.round && state.round && a.incident.round !== state.round
        ? el("span", { class: "article" }, "round " + a.incident.round) : null,
      a.article ? el("span", { class: "article" }, "Art. " + a.article) : null,
      // One fault, one page: the same again at the board is counted here.
      a.repeats && a.repeats.length ? el("span", { class: "article", title: "the same fault again while open" }, "×" + (a.repeats.length + 1)) : null,
      a.reopened_by ? el("span", { class: "article" }, "result withdrawn") : null,
      el("span", { class: "state" }, acked)),
    el("div", { class: "text" }, words.text),
    el("div", { class: "action" }, words.action));
  if (!a.acknowledged) li.append(el("button", { type: "button", class: "ack", onclick: () => alertCommand(a.id, "ack") }, "Acknowledge"));
  li.append(el("button", { type: "button", class: "resolve", onclick: () => alertCommand(a.id, "resolve") }, "Resolve"));
  if (a.board) li.append(el("button", { type: "button", onclick: () => openBoard(a.board) }, "Board"));
  return li;
}

/** The same workflow as the pagers: the change comes back over the stream once durable. */
async function alertCommand(id, action) {
  const body = { by: state.arbiterName || "supervision page" };
  if (action === "resolve") {
    const note = prompt("Resolve alert " + id + ": note (optional)");
    if (note === null) return;
    if (note) body.note = note;
  }
  const response = await fetch("/api/alerts/" + id + "/" + action, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  });
  if (response.status === 401) return showLogin("Your session ended: log in again.");
  if (response.ok) {
    const alert = await response.json();
    if (alert.state === "raised" || alert.state === "acknowledged") state.alerts.set(alert.id, alert);
    else state.alerts.delete(alert.id);
    renderAlerts();
    renderCounts();
  }
}

// ---- time trouble and nodes ----------------------------------------------------------------

/** Boards by urgency: fallen flags, then the running side's time to its flag. */
function renderTrouble() {
  const rows = [];
  for (const t of state.tiles.values()) {
    const c = t.clock;
    if (!c || t.result !== "*") continue;
    const tt = c.time_trouble.white || c.time_trouble.black;
    const running = c.running ? shown(c, c.running) : null;
    if (!c.flag && !tt && !(running != null && running < 5 * 60000)) continue;
    rows.push({ board: t.board, fallen: !!c.flag, ms: c.flag ? 0 : (running ?? Infinity), side: c.flag || c.running });
  }
  rows.sort((a, b) => (b.fallen - a.fallen) || a.ms - b.ms);
  $("trouble-count").textContent = rows.length ? "(" + rows.length + ")" : "";
  $("trouble").replaceChildren(...rows.slice(0, 30).map((r) => el("li", {
    class: "trouble-item" + (r.fallen ? " fallen" : ""), "data-board": r.board, onclick: () => openBoard(r.board),
  }, el("span", {}, "Board " + r.board), el("span", {}, r.side || ""),
  el("span", { class: "ttf" }, r.fallen ? "flag" : r.ms === Infinity ? "—" : clockText(r.ms)))));
}

/** The clocks whose battery is low, as their nodes report them (DGT clocks warn). */
function batteryLine(nodes) {
  const low = nodes.filter((n) => n.battery_low === true).map((n) => n.board);
  const reporting = nodes.filter((n) => n.battery_low != null).length;
  if (low.length) return el("div", { class: "warning battery-low" }, "Clock battery low: board " + low.join(", board ") + ". Replace the batteries.");
  return el("div", { class: "muted" }, reporting ? "Clock batteries: fine on the " + reporting + " clocks that report them." : "Battery: not reported by these nodes.");
}

async function refreshNodes() {
  if (state.audience !== "arbiters") return;
  const response = await fetch("/api/nodes").catch(() => null);
  if (!response || !response.ok) return;
  const report = await response.json();
  const nodes = report.nodes;
  const down = nodes.filter((n) => !n.connected);
  $("node-count").textContent = "(" + (nodes.length - down.length) + "/" + nodes.length + " connected)";
  $("nodes").replaceChildren(
    el("div", { class: "offline-list" + (down.length ? " down" : "") }, down.length
      ? "Not heard from: " + down.map((n) => "board " + n.board + (n.silent_ms != null ? " (" + Math.round(n.silent_ms / 1000) + " s)" : "")).join(", ")
      : "Every node is heard from."),
    batteryLine(nodes),
    ...report.warnings.map((w) => el("div", { class: "warning" }, warningText(w))));
}

// ---- the arbiters' phones (the chief arbiter's token only) ---------------------------------

/** The enrolled arbiters, each with a button that shows their phone's login as a QR code. */
async function refreshArbiters() {
  if (state.audience !== "arbiters") return;
  const response = await fetch("/api/arbiters").catch(() => null);
  // 403: an arbiter's own login, which holds no keys. The panel stays hidden.
  if (!response || !response.ok) return;
  const names = (await response.json()).arbiters;
  $("arbiters-panel").hidden = false;
  $("arbiter-count").textContent = "(" + names.length + ")";
  $("arbiter-list").replaceChildren(...names.map((name) =>
    el("li", {}, el("span", {}, name),
      el("button", { type: "button", onclick: () => showPhoneQr(name) }, "Phone QR"),
      el("button", { type: "button", class: "renew", onclick: () => renewLinks(name) }, "Renew links"))));
}

/** A lost phone, a QR code seen by others: the arbiter's login and phone links are renewed
 * (the old ones stop working), and the new QR code is shown. */
async function renewLinks(name) {
  if (!confirm(`Renew ${name}'s links? Their phone and their page sessions must log in again with the new QR code; their pager keeps working.`)) return;
  const response = await fetch("/api/arbiters/renew", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ arbiter: name }),
  }).catch(() => null);
  if (!response || !response.ok) {
    $("phone-qr").hidden = false;
    $("phone-qr-caption").textContent = "Not renewed: " + (response ? await response.text() : "the hub does not answer");
    return;
  }
  showPhoneQr(name);
}

function showPhoneQr(name) {
  $("phone-qr-img").src = "/api/arbiters/phone.svg?arbiter=" + encodeURIComponent(name) + "&t=" + Date.now();
  $("phone-qr-caption").textContent = name + ": scan with the phone's camera. The phone view logs in; its 'Alerts on a locked phone' section subscribes the ntfy app.";
  $("phone-qr").hidden = false;
}

async function enrolArbiter(event) {
  event.preventDefault();
  const name = $("enrol-name").value.trim();
  const zones = $("enrol-zones").value.split(/[\s,]+/).filter(Boolean);
  const response = await fetch("/api/arbiters/enrol", {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify(zones.length ? { arbiter: name, zones } : { arbiter: name }),
  }).catch(() => null);
  if (!response || !response.ok) {
    $("phone-qr").hidden = false;
    $("phone-qr-caption").textContent = "Not enrolled: " + (response ? await response.text() : "the hub does not answer");
    return;
  }
  await refreshArbiters();
  showPhoneQr(name);
}

/** The technician binds a node to a board (`POST /api/nodes/bind`), answered once durable. */
async function bindNode(event) {
  event.preventDefault();
  const hardware = $("bind-hardware").value.trim();
  const board = Number($("bind-board").value);
  const response = await fetch("/api/nodes/bind", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ hardware, board }),
  });
  $("bind-result").textContent = response.ok ? "bound " + hardware + " to board " + board : "refused: " + (await response.text());
  if (response.ok) refreshNodes();
}

function warningText(w) {
  switch (w.kind) {
    case "unbound_node": return "Board " + w.board + ": node " + w.hardware + " is not bound to a board";
    case "bound_elsewhere": return "Board " + w.board + ": node " + w.hardware + " is bound to board " + w.bound_to;
    case "duplicate_hardware": return w.hardware + " reports for boards " + w.boards.join(", ");
    case "board_without_node": return "Board " + w.board + ": no node heard";
    case "refused_messages": return "Board " + w.board + ": " + w.refused + " messages refused (not its enrolled node)";
    case "board_disconnected": return "Board " + w.board + ": e-board not answering for " + Math.round(w.ago_ms / 1000) + " s (cable, power)";
    case "node_clock_stepped": return "Board " + w.board + ": the node's clock stepped " + (w.ahead ? "ahead" : "back") + " by " + Math.round(w.ms / 1000) + " s (" + w.steps + " times); its times were corrected";
    case "stranger_on_chain": return "Board " + w.board + "'s chain: an e-board nobody enrolled answers (bus address " + w.address + "): enrol it or take it off the chain";
    case "clock_disconnected": return "Board " + w.board + ": no clock on the e-board for " + Math.round(w.ago_ms / 1000) + " s";
    default: return JSON.stringify(w);
  }
}

// ---- the board view ------------------------------------------------------------------------

const GLYPHS = { K: "♔", Q: "♕", R: "♖", B: "♗", N: "♘", P: "♙", k: "♚", q: "♛", r: "♜", b: "♝", n: "♞", p: "♟" };

function drawDiagram(fen) {
  const svg = $("diagram");
  const ns = "http://www.w3.org/2000/svg";
  const nodes = [];
  const ranks = fen.split(" ")[0].split("/");
  for (let r = 0; r < 8; r++) {
    let f = 0;
    for (const ch of ranks[r] || "") {
      if (/\d/.test(ch)) { f += Number(ch); continue; }
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", f + 0.5);
      t.setAttribute("y", r + 0.55);
      t.dataset.square = "abcdefgh"[f] + (8 - r);
      t.dataset.piece = ch;
      t.textContent = GLYPHS[ch] || ch;
      nodes.push(t);
      f++;
    }
  }
  const squares = [];
  for (let r = 0; r < 8; r++) for (let f = 0; f < 8; f++) {
    const s = document.createElementNS(ns, "rect");
    s.setAttribute("x", f); s.setAttribute("y", r); s.setAttribute("width", 1); s.setAttribute("height", 1);
    s.setAttribute("class", (r + f) % 2 ? "dark" : "light");
    squares.push(s);
  }
  svg.replaceChildren(...squares, ...nodes);
  svg.dataset.fen = fen;
}

/** Both players' remaining time after each of their moves. */
function drawTimePlot(clockMs) {
  const svg = $("time-plot");
  const ns = "http://www.w3.org/2000/svg";
  const points = { white: [], black: [] };
  clockMs.forEach((ms, i) => { if (ms != null) points[i % 2 ? "black" : "white"].push([Math.floor(i / 2) + 1, ms]); });
  const all = [...points.white, ...points.black];
  const maxMove = Math.max(10, ...all.map((p) => p[0]));
  const maxMs = Math.max(60000, ...all.map((p) => p[1]));
  const [w, h, pad] = [400, 200, 28];
  const x = (m) => pad + (m - 1) / Math.max(1, maxMove - 1) * (w - pad - 8);
  const y = (ms) => h - pad + 8 - ms / maxMs * (h - pad - 8) + 0;
  const children = [];
  const line = (cls, x1, y1, x2, y2) => {
    const l = document.createElementNS(ns, "line");
    Object.entries({ x1, y1, x2, y2, class: cls }).forEach(([k, v]) => l.setAttribute(k, v));
    return l;
  };
  children.push(line("axis", pad, y(0), w - 8, y(0)), line("axis", pad, y(0), pad, 8));
  const label = (tx, ty, text) => {
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", tx); t.setAttribute("y", ty); t.textContent = text;
    return t;
  };
  children.push(label(2, y(maxMs) + 4, clockText(maxMs)), label(2, y(0), "0"), label(w - 60, h - 4, "move " + maxMove));
  const legend = (cls, lx, text) => {
    const l = line(cls, lx, 12, lx + 16, 12);
    return [l, label(lx + 20, 15, text)];
  };
  children.push(...legend("white", w - 130, "White"), ...legend("black", w - 70, "Black"));
  for (const side of ["white", "black"]) {
    const p = document.createElementNS(ns, "polyline");
    p.setAttribute("class", side);
    p.setAttribute("points", points[side].map(([m, ms]) => x(m).toFixed(1) + "," + y(ms).toFixed(1)).join(" "));
    p.dataset.points = points[side].length;
    children.push(p);
    for (const [m, ms] of points[side]) {
      const dot = document.createElementNS(ns, "circle");
      Object.entries({ cx: x(m).toFixed(1), cy: y(ms).toFixed(1), r: 2.5, class: side + " dot" }).forEach(([k, v]) => dot.setAttribute(k, v));
      children.push(dot);
    }
  }
  svg.replaceChildren(...children);
}

/** The moves with each side's clock; moves the hub filled in (their order not seen, 7.4)
 * are marked until an arbiter confirms the order. */
function drawMoves(moves, clockMs, filled = []) {
  const rows = [];
  const move = (j) => {
    const stretch = filled.find((f) => f.from_ply <= j + 1 && j + 1 <= f.to_ply);
    if (!stretch) return el("td", {}, moves[j] || "");
    const why = stretch.confirmed ? "filled in; the arbiter confirmed the order"
      : "filled in: the board did not show the order (" + stretch.orders + " possible)";
    return el("td", { class: stretch.confirmed ? "filled confirmed" : "filled", title: why }, moves[j]);
  };
  for (let i = 0; i < moves.length; i += 2) {
    const t = (j) => (clockMs[j] != null ? clockText(clockMs[j]) : "");
    rows.push(el("tr", {}, el("td", {}, String(i / 2 + 1)), move(i), el("td", { class: "t" }, t(i)),
      move(i + 1), el("td", { class: "t" }, moves[i + 1] ? t(i + 1) : "")));
  }
  $("moves").tBodies[0].replaceChildren(...rows);
}

function drawTimeline(detail, alerts) {
  const items = [];
  for (const a of alerts) {
    items.push({ at: a.raised_at, cls: a.severity, text: (a.article ? "Art. " + a.article + " · " : "") + a.text + " [" + a.state + "]" });
  }
  for (const d of detail.decisions || []) {
    const departs = d.override ? "overriding the hub's ruling: " + d.override : null;
    const what = [d.decision.replace(/_/g, " "), d.result, d.cause, departs, d.note].filter(Boolean).join(" · ");
    items.push({ at: d.at, cls: "decision", text: "Decision by " + d.arbiter + ": " + what + (d.article ? " · Art. " + d.article : "") });
  }
  for (const m of detail.illegal_moves || []) {
    // As the alert says it: FIDE's move number and the side, the penalty's article.
    const n = Math.floor(m.ply / 2) + 1;
    const side = m.by === "white" ? "White" : "Black";
    const article = (m.ruling && m.ruling.article) || m.article;
    items.push({ at: null, cls: "urgent", text: "Illegal move (" + m.kind.replace(/_/g, " ") + ") by " + side + " at move " + n + (m.by === "white" ? "." : "…") + " · Art. " + article });
  }
  for (const f of detail.filled_in || []) {
    const orders = f.candidates.map((o) => o.join(" ")).join(" | ");
    items.push({ at: null, cls: f.confirmed ? "" : "high", text: "Moves " + f.from_ply + "–" + f.to_ply + " (half-moves) filled in, the order "
      + (f.confirmed ? "confirmed by the arbiter: " : "not seen; " + f.orders + (f.more_orders ? "+" : "") + " orders reach the board: ") + orders });
  }
  items.sort((a, b) => (a.at ?? 0) - (b.at ?? 0));
  $("timeline").replaceChildren(...(items.length ? items : [{ text: "Nothing irregular.", cls: "" }]).map((i) =>
    el("li", { class: i.cls }, (i.at ? new Date(i.at).toLocaleTimeString() + " · " : "") + i.text)));
}

let boardLoad = 0;
async function loadBoard(board) {
  const mine = ++boardLoad;
  const arbiters = state.audience === "arbiters";
  // A board's game of a round that is over, or the one it plays.
  const round = state.boardRound;
  const url = round != null && arbiters ? "/api/rounds/" + round + "/boards/" + board
    : arbiters ? "/api/boards/" + board : "/api/public/boards/" + board;
  const response = await fetch(url);
  if (mine !== boardLoad || state.boardOpen !== board) return;
  const tile = round == null ? state.tiles.get(board) : null;
  $("board-title").textContent = "Board " + board + (round != null ? " · round " + round : "");
  $("board-players").textContent = tile ? playerText(tile.white) + " – " + playerText(tile.black) : "";
  if (!response.ok) {
    $("board-result").textContent = "no moves yet";
    drawDiagram("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR");
    drawMoves([], []);
    drawTimePlot([]);
    return;
  }
  const detail = await response.json();
  $("board-result").textContent = detail.result === "*" ? "playing" : detail.result;
  drawDiagram(detail.fen);
  $("board-fen").textContent = detail.fen;
  drawMoves(detail.moves, detail.clock_ms, detail.filled_in);
  drawTimePlot(detail.clock_ms);
  if (arbiters) {
    const alerts = await fetch("/api/alerts?board=" + board).then((r) => (r.ok ? r.json() : []));
    if (mine === boardLoad) drawTimeline(detail, alerts);
  }
  $("board-view").dataset.loaded = board;
}

function openBoard(board) {
  location.hash = "#/board/" + board;
}

// ---- the rounds: the one in play, and looking back -------------------------------------

async function refreshRounds() {
  const rounds = await fetch("/api/rounds").then((r) => (r.ok ? r.json() : [])).catch(() => []);
  const list = $("rounds");
  list.replaceChildren(...rounds.map((r) => el("li", {
    class: "round-item" + (r.in_play ? " in-play" : "") + (r.complete ? " complete" : ""),
    "data-round": r.round,
    onclick: () => { location.hash = "#/round/" + r.round; },
  }, "Round " + r.round, el("span", { class: "state" },
    (r.in_play ? "in play · " : "") + r.finished + "/" + r.games + " finished"))));
}

/**
 * The chief may take back a forced start (a round started by mistake): offered on the round
 * in play when its last start was forced; the hub says 403 to a login that is not the
 * chief's, 409 once a move was made in the round.
 */
async function offerUndo(round) {
  const states = await fetch("/api/rounds").then((r) => (r.ok ? r.json() : [])).catch(() => []);
  const here = states.find((r) => r.round === round);
  const last = here && here.in_play ? here.started[here.started.length - 1] : null;
  $("round-undo-box").hidden = !(state.audience === "arbiters" && last && last.forced && !last.undone);
  $("round-undo-error").textContent = "";
  $("round-undo").onclick = async () => {
    if (!confirm("Undo the forced start of round " + round + "? Every game it ended goes back to its board.")) return;
    const response = await fetch("/api/rounds/" + round + "/undo-start", {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ by: state.arbiterName || undefined }),
    });
    if (response.ok) { refreshRounds(); loadRound(round); } else { $("round-undo-error").textContent = await response.text(); }
  };
}

/** The broadcast's outlets for the arbiters: what each lichess round, folder or upload of
 * this round last got, and an outlet that fails, with why (GET /api/broadcast/outlets). */
async function showOutlets(round) {
  const line = $("round-outlets");
  line.textContent = "";
  if (state.audience !== "arbiters") return;
  const outlets = await fetch("/api/broadcast/outlets").then((r) => (r.ok ? r.json() : [])).catch(() => []);
  const parts = outlets.flatMap((o) => {
    const here = Object.entries(o.destinations).filter(([, d]) => d.round === round);
    const sent = here.map(([name, d]) => name + (d.boards ? " (boards " + d.boards + ")" : "") + ": " +
      d.games + " games" + (d.finished ? ", finished" : ""));
    const failing = o.failing ? [o.outlet + " failing: " + o.failing] : [];
    return failing.concat(sent.length ? [o.outlet + " — " + sent.join("; ")] : []);
  });
  line.textContent = parts.length ? "Broadcast: " + parts.join(" · ") : "";
}

/** A round's games with their results (its pairings, else the boards that played it). */
async function loadRound(round) {
  $("round-title").textContent = "Round " + round;
  offerUndo(round);
  showOutlets(round);
  $("round-pgn").href = "/broadcast/round/" + round + "/games.pgn";
  $("round-standings").href = "#/standings/" + round;
  const response = await fetch("/api/rounds/" + round + "/pairings");
  const body = $("round-games").querySelector("tbody");
  if (!response.ok) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 4 }, "No pairings for this round: its games are in the PGN.")));
    return;
  }
  const games = await response.json();
  body.replaceChildren(...games.map((g) => el("tr", {
    "data-board": g.board,
    onclick: () => { if (state.audience === "arbiters") location.hash = "#/round/" + round + "/board/" + g.board; },
  }, el("td", {}, String(g.board)),
  el("td", {}, playerText(g.white) + (g.white_team ? " (" + g.white_team + ")" : "")),
  el("td", { class: "result" }, g.result),
  el("td", {}, playerText(g.black) + (g.black_team ? " (" + g.black_team + ")" : "")))));
  // The players without a board (byes, absent, withdrawn), and the boards still to score.
  const byes = await fetch("/api/rounds/" + round + "/byes").then((r) => (r.ok ? r.json() : [])).catch(() => []);
  const byeNames = { half_point_bye: "½-point bye", full_point_bye: "1-point bye",
    pairing_allocated_bye: "pairing-allocated bye", zero_point_bye: "zero-point bye", not_paired: "not paired" };
  $("round-byes").textContent = byes.length
    ? "Without a board: " + byes.map((b) => playerText(b.player) + " (" + (byeNames[b.bye] || b.bye) + ", " + b.points + ")").join("; ")
    : "";
  const open = games.filter((g) => g.result === "*").map((g) => g.board);
  $("round-open").textContent = open.length ? "Boards without a result: " + open.join(", ") : "Every board has a result.";
  // A round not started yet: its board list, to confirm before it starts.
  const states = await fetch("/api/rounds").then((r) => (r.ok ? r.json() : [])).catch(() => []);
  const inPlay = states.find((r) => r.in_play);
  // Only the round after the round in play starts (the hub says 403 to a login that is not the chief's).
  const startable = state.audience === "arbiters" && inPlay && round === inPlay.round + 1;
  $("round-start-box").hidden = !startable;
  $("round-start-error").textContent = "";
  $("round-start").onclick = async () => {
    if (!confirm("Start round " + round + " with the " + games.length + " boards listed? The boards must match the pairing list on the wall.")) return;
    const response = await fetch("/api/rounds/" + round + "/start", {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ by: state.arbiterName || undefined }),
    });
    if (response.ok) { refreshRounds(); loadRound(round); } else { $("round-start-error").textContent = await response.text(); }
  };
  $("round-view").dataset.loaded = round;
}

/**
 * The standings after `round` (null: the round in play), a table a section (the hall's own,
 * else each section its round's pairings name). A spectator's screen asks for the public
 * view: results only once the broadcast delay has released them.
 */
async function loadStandings(round) {
  const spectators = state.audience !== "arbiters";
  let tables = [];
  const hall = await fetchStandings({ round, spectators });
  if (hall) {
    tables = [hall];
  } else {
    const rounds = await fetch("/api/rounds").then((r) => (r.ok ? r.json() : [])).catch(() => []);
    const inPlay = rounds.find((r) => r.in_play);
    const of = round ?? (inPlay ? inPlay.round : null);
    const games = of == null ? [] : await fetch("/api/rounds/" + of + "/pairings")
      .then((r) => (r.ok ? r.json() : [])).catch(() => []);
    const sections = [...new Set(games.map((g) => g.section).filter((s) => s))];
    for (const section of sections) {
      const table = await fetchStandings({ round, section, spectators });
      if (table) tables.push(table);
    }
  }
  // A team event's teams first.
  const teams = await fetchStandings({ round, spectators, teams: true });
  if (teams) tables = [teams, ...tables];
  const box = $("standings-tables");
  if (!tables.length) {
    box.replaceChildren(el("p", {}, "No standings yet: no round has pairings."));
  } else {
    box.replaceChildren(...tables.flatMap((t) => [
      el("p", { class: "standings-caption" }, standingsCaption(t)), standingsTable(t)]));
  }
  $("standings-csv").replaceChildren(...tables.map((t) => el("a", {
    class: "pill",
    href: (isTeams(t) ? "/api/standings/teams" : "/api/standings") + "?format=csv&round=" + t.round
      + (t.section ? "&section=" + encodeURIComponent(t.section) : ""),
  }, "CSV" + (isTeams(t) ? " teams" : "") + (t.section ? " " + t.section : ""))));
  $("standings-view").dataset.loaded = tables.map((t) => t.round).join(",") || "none";
}

function route() {
  const board = location.hash.match(/^#\/(?:round\/(\d+)\/)?board\/(\d+)$/);
  const round = location.hash.match(/^#\/round\/(\d+)$/);
  const standings = location.hash.match(/^#\/standings(?:\/(\d+))?$/);
  state.standingsOpen = standings ? (standings[1] ? Number(standings[1]) : null) : undefined;
  $("standings-view").hidden = !standings;
  delete $("standings-view").dataset.loaded;
  if (standings) loadStandings(state.standingsOpen);
  state.boardOpen = board ? Number(board[2]) : null;
  state.boardRound = board && board[1] ? Number(board[1]) : null;
  $("board-view").hidden = state.boardOpen == null;
  delete $("board-view").dataset.loaded;
  if (state.boardOpen != null) loadBoard(state.boardOpen);
  $("round-view").hidden = !round;
  delete $("round-view").dataset.loaded;
  if (round) loadRound(Number(round[1]));
}

// ---- login ------------------------------------------------------------------------------------

function showLogin(message) {
  $("login-error").hidden = !message;
  $("login-error").textContent = message || "";
  $("login-name").value = state.arbiterName;
  $("login").showModal();
}

async function logIn(token, name, replace = false) {
  const response = await fetch("/api/session", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token, replace }),
  });
  // Logged in as somebody else: a link must not swap the session unseen.
  if (response.status === 409) {
    const conflict = await response.json();
    const switchTo = confirm(`This browser is logged in as ${conflict.logged_in_as}. `
      + `The link logs in as ${conflict.token_of}. Switch to ${conflict.token_of}?`);
    return switchTo ? logIn(token, name, true) : false;
  }
  if (!response.ok) return false;
  if (name) { state.arbiterName = name; localStorage.setItem("zeitnot.arbiter", name); }
  return true;
}

async function start() {
  // A link with ?token=… logs in once and leaves no token in the address bar or history.
  if (params.has("token")) {
    await logIn(params.get("token"), params.get("arbiter"));
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
  }
  const session = await fetch("/api/session").then((r) => r.json());
  // An arbiter's own login signs with their name, whatever is typed.
  if (session.name && session.name !== "chief") state.arbiterName = session.name;
  const spectatorPage = location.pathname === "/spectator";
  state.audience = session.arbiter && !spectatorPage ? "arbiters" : "spectators";
  document.body.classList.toggle("spectators", state.audience === "spectators");
  $("open-warning").hidden = session.login_required || spectatorPage;
  $("open-hall-warning").hidden = !session.open_hall || spectatorPage;
  $("login-button").hidden = !session.login_required || session.arbiter;
  $("logout-button").hidden = !session.login_required || !session.arbiter;
  if (session.name) $("logout-button").textContent = `Log out (${session.name})`;
  $("login-button").onclick = () => showLogin();
  $("logout-button").onclick = async () => { await fetch("/api/session", { method: "DELETE" }); location.reload(); };
  $("login-cancel").onclick = () => $("login").close();
  $("login-form").onsubmit = async (e) => {
    e.preventDefault();
    if (await logIn($("login-token").value, $("login-name").value)) location.reload();
    else showLogin("Wrong token.");
  };
  $("board-close").onclick = () => { location.hash = ""; };
  $("round-close").onclick = () => { location.hash = ""; };
  $("standings-close").onclick = () => { location.hash = ""; };
  $("bind-form").onsubmit = bindNode;
  $("enrol-form").onsubmit = enrolArbiter;
  $("lang").value = state.lang;
  $("lang").onchange = () => {
    state.lang = $("lang").value;
    localStorage.setItem("zeitnot.lang", state.lang);
    state.translated.clear();
    renderAlerts();
  };
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && location.hash) location.hash = ""; });
  window.addEventListener("hashchange", route);
  connect();
  route();
  // Clocks tick every second; time trouble re-sorts as they do.
  setInterval(() => {
    for (const [board, v] of state.views) {
      const t = state.tiles.get(board);
      if (t && t.clock && t.clock.running) tickTile(t, v);
    }
    renderTrouble();
  }, 1000);
  refreshNodes();
  setInterval(refreshNodes, 5000);
  refreshArbiters();
  refreshRounds();
  setInterval(refreshRounds, 10000);
  // Open standings follow the games as they end.
  setInterval(() => { if (state.standingsOpen !== undefined) loadStandings(state.standingsOpen); }, 10000);
  if (!spectatorPage) {
    refreshHealth();
    setInterval(refreshHealth, 5000);
  }
}

/** A journal that cannot write stops the hall: the red line says why until it works again. */
async function refreshHealth() {
  const line = $("health-warning");
  try {
    const response = await fetch("/healthz");
    const text = (await response.text()).trim();
    line.hidden = response.ok;
    if (!response.ok) line.textContent = `The hub takes no events and acknowledges nothing: ${text}`;
  } catch {
    line.hidden = false;
    line.textContent = "The hub does not answer.";
  }
}

start();
