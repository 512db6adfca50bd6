// The phone view: an arbiter's alerts and boards, for a phone in one hand.
// It follows the arbiter's own ntfy topic as server-sent events (the same events the ntfy
// app gets) and reads the alerts and boards from the API; decisions go to the API, signed
// with the arbiter's own login. A new alert rings (vibration and a tone) while it is open.

import { fetchStandings, isTeams, standingsTable, standingsCaption } from "/assets/standings.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

const state = {
  me: null,              // {arbiter, zones (null: the whole hall), chief, language, topic}
  alerts: [],            // the open alerts of my zones, as last read
  known: new Set(),      // alert ids already shown: only new ones ring
  lang: localStorage.getItem("zeitnot.lang") || null,
  board: null,           // the board of the board view
  detail: null,          // its last reading
  stream: null,
  wakeLock: null,
  audio: null,
};
// What the browser test reads: how often the phone rang, and what connected.
const phone = { rings: 0, vibrations: 0, tones: 0, connected: 0 };
window.zeitnot = { state, phone };

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

function clockText(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  return (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(sec).padStart(2, "0");
}

// ---- ringing ----------------------------------------------------------------------------

/** A short two-tone call; browsers allow sound only after the page was touched once. */
function tone() {
  try {
    state.audio = state.audio || new AudioContext();
    const ctx = state.audio;
    if (ctx.state === "suspended") { $("sound-hint").hidden = false; ctx.resume(); }
    for (const [at, hz] of [[0, 880], [0.25, 660]]) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = hz;
      gain.gain.value = 0.2;
      osc.connect(gain).connect(ctx.destination);
      osc.start(ctx.currentTime + at);
      osc.stop(ctx.currentTime + at + 0.2);
    }
    phone.tones++;
  } catch (_) { /* no audio here */ }
}

function ring() {
  phone.rings++;
  if (navigator.vibrate && navigator.vibrate([300, 150, 300])) phone.vibrations++;
  tone();
}

// ---- the alerts -------------------------------------------------------------------------

function mine(alert) {
  const zones = state.me.zones;
  return zones == null || zones.includes(alert.zone) || (state.me.chief && alert.escalated_at != null);
}

async function refreshAlerts() {
  const lang = state.lang || state.me.language || "en";
  const response = await fetch("/api/alerts?state=open&lang=" + lang).catch(() => null);
  if (!response || !response.ok) return false;
  state.alerts = (await response.json()).filter(mine);
  renderAlerts();
  if (state.board != null) renderBoardAlerts();
  return true;
}

/** "Board 12: White's flag fell." → "White's flag fell.": the card's title says the board. */
function withoutPlace(text) {
  const i = text.indexOf(": ");
  return i > 0 && i < 20 ? text.slice(i + 2) : text;
}

function alertCard(a) {
  const place = a.board != null ? "Board " + a.board : "Zone " + a.zone;
  const title = place + (a.article ? " · Art. " + a.article : "");
  const buttons = el("div", { class: "buttons" });
  if (a.state === "raised") {
    buttons.append(el("button", { type: "button", class: "ack", onclick: () => command(a.id, "ack") }, "Acknowledge"));
  }
  buttons.append(el("button", { type: "button", onclick: () => askResolve(a) }, "Resolve"));
  if (a.board != null) {
    buttons.append(el("button", { type: "button", class: "secondary", onclick: () => { location.hash = "#board-" + a.board; } }, "Board " + a.board));
  }
  const meta = [a.state === "acknowledged" && a.acknowledged ? "acknowledged by " + a.acknowledged.by : "new",
    new Date(a.raised_at).toLocaleTimeString(), a.escalated_at ? "escalated" : null,
    a.repeats && a.repeats.length ? "×" + (a.repeats.length + 1) + " (the same again)" : null,
    a.reopened_by ? "result withdrawn: decide again" : null].filter(Boolean).join(" · ");
  return el("li", { class: "alert " + a.severity + " " + a.state, "data-id": a.id },
    el("div", { class: "title" }, title),
    a.players ? el("div", { class: "meta" }, a.players) : null,
    el("p", { class: "text" }, withoutPlace(a.text)),
    el("p", { class: "todo" }, a.action),
    el("div", { class: "meta" }, meta),
    buttons);
}

/** The round in play's boards that still need a result (e-board or not): each opens its board. */
async function refreshOpenBoards() {
  const rounds = await fetch("/api/rounds").then((r) => (r.ok ? r.json() : [])).catch(() => []);
  const round = rounds.find((r) => r.in_play);
  const games = round
    ? await fetch("/api/rounds/" + round.round + "/pairings").then((r) => (r.ok ? r.json() : [])).catch(() => [])
    : [];
  const open = games.filter((g) => g.result === "*");
  $("open-count").textContent = open.length ? "(" + open.length + ")" : "";
  $("open-boards").replaceChildren(...(open.length
    ? open.map((g) => el("button", { type: "button", class: "secondary", "data-board": g.board,
      onclick: () => { location.hash = "#board-" + g.board; } }, String(g.board)))
    : [el("span", { class: "quiet" }, games.length ? "Every board has a result." : "No pairings for the round in play.")]));
}

function renderAlerts() {
  $("alerts").replaceChildren(...state.alerts.map(alertCard));
  $("alert-count").textContent = state.alerts.length ? "(" + state.alerts.length + ")" : "";
  $("no-alerts").hidden = state.alerts.length > 0;
}

async function command(id, action, note) {
  const response = await fetch("/api/alerts/" + id + "/" + action, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(note ? { note } : {}),
  }).catch(() => null);
  if (!response || !response.ok) alert("Not done: " + (response ? await response.text() : "the hub does not answer"));
  await refreshAlerts();
}

function askResolve(a) {
  $("resolve-title").textContent = "Resolve: " + (a.board != null ? "board " + a.board : "zone " + a.zone);
  $("resolve-note").value = "";
  $("resolve-dialog").dataset.id = a.id;
  $("resolve-dialog").showModal();
}

/** A notification from the arbiter's topic: read the alerts again; a new one rings. */
async function onNotification(message) {
  await refreshAlerts();
  const id = Number(String(message.sequence_id || "").replace("alert-", ""));
  if (message.priority >= 4 && id && !state.known.has(id) && state.alerts.some((a) => a.id === id)) ring();
  for (const a of state.alerts) state.known.add(a.id);
}

// ---- the stream --------------------------------------------------------------------------

function connect() {
  if (state.stream) state.stream.close();
  if (!state.me.topic) {
    // The chief's hall token has no phone of its own: it reads the alerts every few seconds.
    setConn(true);
    return;
  }
  const stream = new EventSource("/" + state.me.topic + "/sse?since=none");
  state.stream = stream;
  stream.addEventListener("open", () => { phone.connected++; setConn(true); refreshAlerts(); });
  stream.onmessage = (e) => onNotification(JSON.parse(e.data));
  stream.addEventListener("message_clear", () => refreshAlerts());
  stream.onerror = () => setConn(false);
}

function setConn(up) {
  $("conn").textContent = up ? "live" : "offline";
  $("conn").classList.toggle("down", !up);
}

/** Keep the screen on while the view is open (where the origin allows: HTTPS). */
async function keepAwake() {
  if (!("wakeLock" in navigator) || document.visibilityState !== "visible") return;
  try { state.wakeLock = await navigator.wakeLock.request("screen"); } catch (_) { /* not allowed here */ }
}

// ---- the board view ----------------------------------------------------------------------

const GLYPHS = { K: "♔", Q: "♕", R: "♖", B: "♗", N: "♘", P: "♙", k: "♚", q: "♛", r: "♜", b: "♝", n: "♞", p: "♟" };

function drawDiagram(fen) {
  const svg = $("diagram");
  const ns = "http://www.w3.org/2000/svg";
  const squares = [], pieces = [];
  const ranks = fen.split(" ")[0].split("/");
  for (let r = 0; r < 8; r++) {
    for (let f = 0; f < 8; f++) {
      const s = document.createElementNS(ns, "rect");
      Object.entries({ x: f, y: r, width: 1, height: 1, class: (r + f) % 2 ? "dark" : "light" }).forEach(([k, v]) => s.setAttribute(k, v));
      squares.push(s);
    }
    let f = 0;
    for (const ch of ranks[r] || "") {
      if (/\d/.test(ch)) { f += Number(ch); continue; }
      const t = document.createElementNS(ns, "text");
      t.setAttribute("x", f + 0.5);
      t.setAttribute("y", r + 0.55);
      t.textContent = GLYPHS[ch] || ch;
      pieces.push(t);
      f++;
    }
  }
  svg.replaceChildren(...squares, ...pieces);
  svg.dataset.fen = fen;
}

function renderClocks() {
  const clock = state.detail && state.detail.clock;
  for (const side of ["white", "black"]) {
    const face = $("clock-" + side);
    face.querySelector("b").textContent = clock ? clockText(clock[side + "_ms"]) : "–";
    face.classList.toggle("running", !!clock && clock.running === side);
    face.classList.toggle("flag", !!clock && (clock.flag === side || clock.flag === "both"));
  }
}

function renderBoardAlerts() {
  const here = state.alerts.filter((a) => a.board === state.board);
  $("board-alerts").replaceChildren(...here.map(alertCard));
}

async function loadBoard(board) {
  $("board-title").textContent = "Board " + board;
  const response = await fetch("/api/boards/" + board).catch(() => null);
  if (state.board !== board) return;
  if (!response || !response.ok) {
    state.detail = null;
    $("board-status").textContent = "No moves from this board yet.";
    drawDiagram("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR");
    $("moves").textContent = "";
    renderClocks();
    renderBoardAlerts();
    return;
  }
  const d = await response.json();
  state.detail = d;
  drawDiagram(d.fen);
  renderClocks();
  $("board-status").textContent = (d.result === "*" ? "Playing" : d.result + (d.article ? " · Art. " + d.article : ""))
    + " · " + (d.ply ? "after " + afterPly(d.ply) : "no move yet") + (d.board_sync && d.board_sync !== "in_sync" ? " · board " + d.board_sync.replace(/_/g, " ") : "")
    + (d.battery_low ? " · clock battery low" : "");
  const filled = d.filled_in || [];
  const moves = [];
  d.moves.forEach((san, i) => {
    const ply = i + 1;
    const stretch = filled.find((f) => f.from_ply <= ply && ply <= f.to_ply);
    // Filled-in moves stand in brackets, as a scoresheet's uncertain moves are.
    const open = stretch && stretch.from_ply === ply ? "[" : "";
    const close = stretch && stretch.to_ply === ply ? "]" + (stretch.confirmed ? "" : "?") : "";
    moves.push(open + (i % 2 && !open ? san : (Math.floor(i / 2) + 1) + (i % 2 ? "… " : ". ") + san) + close);
  });
  $("moves").textContent = moves.join(" ") || "No moves yet.";
  renderOrders(filled);
  $("reinstate-ply").value = Math.max(0, d.ply - 1);
  showReinstatePly();
  startFromRuling(d.ruling);
  $("board-view").dataset.loaded = board;
  renderBoardAlerts();
}

/** Moves the hub filled in without seeing their order (7.4): each order that reaches the
 * board, the one followed first, for the arbiter to confirm or choose after checking the
 * scoresheets. */
function renderOrders(filled) {
  const open = filled.filter((f) => !f.confirmed);
  $("orders").hidden = !open.length;
  $("orders").replaceChildren(...open.map((f) => el("div", { class: "order" },
    el("p", {}, "Moves in [ ]? filled in: the board did not show their order (Art. 7.4). "
      + f.orders + (f.more_orders ? "+" : "") + " orders reach the board:"),
    ...f.candidates.map((moves, i) => el("button", {
      type: "button", class: "big",
      onclick: () => decide({ decision: "order", from_ply: f.from_ply, moves },
        (i ? "Choose the order " : "Confirm the order ") + moves.join(" ")),
    }, (i ? "Choose: " : "Confirm: ") + moves.join(" "))))));
}

/** The move that completed `ply` half-moves, as FIDE numbers it: "9. (White's 9th move)"
 * or "8… (Black's 8th move)". */
function afterPly(ply) {
  const n = Math.floor((ply + 1) / 2);
  return ply % 2 ? n + ". (White's move " + n + ")" : n + "… (Black's move " + n + ")";
}

function showReinstatePly() {
  const ply = Number($("reinstate-ply").value);
  $("reinstate-move").textContent = ply ? "after " + afterPly(ply) : "the start position";
}

/** The result form starts from what the hub ruled (a flag's 6.9 result, a mate), never
 * from a fixed default; without a ruling it asks for a choice. */
function startFromRuling(ruling) {
  $("result").value = ruling ? ruling.result : "";
  const cause = ruling && [...$("cause").options].find((o) => o.value === ruling.cause);
  $("cause").value = cause ? cause.value : "";
  $("ruling-line").textContent = ruling ? "The hub ruled " + ruling.result + " (Art. " + ruling.article + ")" : "";
}

/** A decision at the board, once the arbiter confirms what it says. */
async function decide(body, says) {
  if (!confirm(says + " at board " + state.board + "?")) return;
  const response = await fetch("/api/boards/" + state.board + "/decisions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ arbiter: state.me.arbiter, ...body }),
  }).catch(() => null);
  const text = response ? await response.text() : "the hub does not answer";
  if (response && response.ok) {
    const entry = JSON.parse(text);
    $("decision-answer").textContent = "Done: " + entry.decision.replace(/_/g, " ") + (entry.article ? " · Art. " + entry.article : "")
      + (entry.override ? " · overriding the hub's ruling: " + entry.override : "");
  } else {
    $("decision-answer").textContent = "Not done: " + text;
  }
  await loadBoard(state.board);
  await refreshAlerts();
  refreshOpenBoards();
}

async function checkClaim(event) {
  event.preventDefault();
  const body = { claim: $("claim").value };
  if ($("claim-move").value.trim()) body.move = $("claim-move").value.trim();
  const response = await fetch("/api/boards/" + state.board + "/claims", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  }).catch(() => null);
  if (!response || !response.ok) {
    $("decision-answer").textContent = "Cannot check: " + (response ? await response.text() : "the hub does not answer");
    return;
  }
  const c = await response.json();
  $("decision-answer").textContent = (c.valid ? "Claim correct" : "Claim incorrect") + " · Art. " + c.article
    + (c.occurred ? " · " + c.occurred : "")
    + (!c.valid && c.penalty_if_incorrect ? " · " + c.penalty_if_incorrect + " s to the opponent" : "")
    + (c.problem ? " · " + c.problem : "");
  $("decision-answer").dataset.valid = c.valid;
}

// ---- routing and start ------------------------------------------------------------------

function route() {
  const board = /^#board-(\d+)$/.exec(location.hash);
  const alertLink = /^#alert-(\d+)$/.exec(location.hash);
  if (alertLink) {
    // A notification's link: the alert's board, or the list with the alert on top.
    const a = state.alerts.find((x) => x.id === Number(alertLink[1]));
    if (a && a.board != null) { location.replace("#board-" + a.board); return; }
  }
  state.board = board ? Number(board[1]) : null;
  $("list-view").hidden = state.board != null;
  $("board-view").hidden = state.board == null;
  delete $("board-view").dataset.loaded;
  $("decision-answer").textContent = "";
  delete $("decision-answer").dataset.valid;
  if (state.board != null) loadBoard(state.board);
  window.scrollTo(0, 0);
}

/** The standings after the round in play, each section's: points and the first two
 * tie-breaks (the whole list is on the supervision page). */
async function refreshStandings() {
  if (!$("standings-panel").open) return;
  let tables = [];
  const hall = await fetchStandings();
  if (hall) tables = [hall];
  else {
    const rounds = await fetch("/api/rounds").then((r) => (r.ok ? r.json() : [])).catch(() => []);
    const inPlay = rounds.find((r) => r.in_play);
    const games = inPlay ? await fetch("/api/rounds/" + inPlay.round + "/pairings")
      .then((r) => (r.ok ? r.json() : [])).catch(() => []) : [];
    for (const section of new Set(games.map((g) => g.section).filter((s) => s))) {
      const table = await fetchStandings({ section });
      if (table) tables.push(table);
    }
  }
  // A team event's teams first.
  const teams = await fetchStandings({ teams: true });
  if (teams) tables = [teams, ...tables];
  $("standings-caption").textContent = tables.length ? standingsCaption(tables[0]) : "none yet";
  $("standings").replaceChildren(...tables.flatMap((t, i) => [
    ...(i > 0 || t.section ? [el("h2", {}, t.section || (isTeams(t) ? "Teams" : "Players"))] : []),
    standingsTable(t, { compact: 2 })]));
}

async function start() {
  if (params.has("token")) {
    // The enrolment's link logs in once; the token leaves the address bar and the history.
    await fetch("/api/session", {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: params.get("token") }),
    }).catch(() => null);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
  }
  const session = await fetch("/api/session").then((r) => r.json()).catch(() => ({}));
  if (!session.arbiter) {
    $("login-needed").hidden = false;
    $("list-view").hidden = true;
    setConn(false);
    return;
  }
  state.me = await fetch("/api/phone").then((r) => r.json());
  $("arbiter").textContent = state.me.arbiter;
  $("zones").textContent = state.me.zones == null ? "whole hall" : "zone " + state.me.zones.join(", ");
  if (state.me.ntfy) {
    $("ntfy-panel").hidden = false;
    $("ntfy-server").textContent = state.me.ntfy.server;
    $("ntfy-topic").textContent = state.me.ntfy.topic;
    $("ntfy-token").value = state.me.ntfy.token;
    $("ntfy-subscribe").href = state.me.ntfy.link;
    $("ntfy-subscribe").onclick = () => { navigator.clipboard?.writeText(state.me.ntfy.token).catch(() => {}); };
  }
  $("lang").value = state.lang || state.me.language || "en";
  $("lang").onchange = () => { state.lang = $("lang").value; localStorage.setItem("zeitnot.lang", state.lang); refreshAlerts(); };
  $("goto-board").onchange = () => { if ($("goto-board").value) location.hash = "#board-" + $("goto-board").value; };
  $("logout").onclick = async () => { await fetch("/api/session", { method: "DELETE" }); location.reload(); };
  $("back").onclick = () => { location.hash = ""; };
  $("sound-on").onclick = () => { state.audio = state.audio || new AudioContext(); state.audio.resume(); $("sound-hint").hidden = true; };
  $("resolve-cancel").onclick = () => $("resolve-dialog").close();
  $("resolve-form").onsubmit = async (e) => {
    e.preventDefault();
    const id = Number($("resolve-dialog").dataset.id);
    $("resolve-dialog").close();
    await command(id, "resolve", $("resolve-note").value.trim());
  };
  // A forfeit (+-, -+, --) is a game not played: its cause is the forfeit, or a late arrival.
  $("result").onchange = () => {
    if (/^[+-]/.test($("result").value) && $("cause").value !== "late_arrival") $("cause").value = "forfeit";
  };
  $("result-form").onsubmit = (e) => {
    e.preventDefault();
    if (!$("result").value || !$("cause").value) {
      $("decision-answer").textContent = "Choose the result and its cause.";
      return;
    }
    const cause = $("cause").selectedOptions[0].textContent;
    const body = { decision: "result", result: $("result").value, cause: $("cause").value };
    const ruling = state.detail && state.detail.ruling;
    // Departing from the hub's ruling takes the arbiter's reason, kept in the audit trail.
    if (ruling && body.result !== "*" && body.result !== ruling.result) {
      const reason = prompt("The hub ruled " + ruling.result + " (Art. " + ruling.article + "). Why "
        + body.result + " instead? (kept in the audit trail)");
      if (!reason || !reason.trim()) return;
      body.override = reason.trim();
    }
    decide(body, "Declare " + body.result + " (" + cause + ")");
  };
  $("reinstate-form").onsubmit = (e) => {
    e.preventDefault();
    const ply = Number($("reinstate-ply").value);
    decide({ decision: "reinstate", ply }, "Reinstate the position " + (ply ? "after " + afterPly(ply) : "at the start"));
  };
  $("reinstate-ply").oninput = showReinstatePly;
  $("time-form").onsubmit = (e) => {
    e.preventDefault();
    const minutes = Number($("time-minutes").value);
    decide({ decision: "adjust_time", side: $("time-side").value, ms: Math.round(minutes * 60000), reason: "penalty" },
      "Add " + minutes + " min to " + $("time-side").value);
  };
  $("claim-form").onsubmit = checkClaim;
  $("standings-panel").ontoggle = refreshStandings;
  await refreshAlerts();
  refreshOpenBoards();
  for (const a of state.alerts) state.known.add(a.id);
  connect();
  window.addEventListener("hashchange", route);
  route();
  keepAwake();
  // Back from sleep: the stream may have died with the radio; start it again.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState !== "visible") return;
    keepAwake();
    if (!state.stream || state.stream.readyState === EventSource.CLOSED) connect();
    refreshAlerts();
  });
  // A safety net under the stream, and the board's clocks.
  setInterval(() => { if (!state.me.topic || document.visibilityState === "visible") refreshAlerts(); }, state.me.topic ? 30000 : 3000);
  setInterval(() => { if (state.board != null) loadBoard(state.board); }, 5000);
  setInterval(() => { if (document.visibilityState === "visible") refreshOpenBoards(); }, 15000);
  setInterval(() => { if (document.visibilityState === "visible") refreshStandings(); }, 15000);
}

start();
