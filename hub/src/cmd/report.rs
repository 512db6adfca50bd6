//! `hub alert-report`: real games replayed through the core as a hall sees them, and what
//! the arbiters' pagers would have shown, per 100 games by kind. A threshold is changed by
//! measuring it here, not by guessing.
//!
//! Each game is a board of a hall that plays them all at once from the same start (one hall
//! per time control), its node reporting as `board-node replay` does (placements, presses
//! with the recorded `[%clk]`, a heartbeat every 5 s), the hall in zones of
//! [`ZONE_BOARDS`] boards. The desk is given the time every second. When the source's game
//! ends without the rules ending it (a resignation, an agreed draw, a flag), the arbiter
//! records its result [`ARBITER_DELAY_MS`] later, as in a hall.

use std::collections::BTreeMap;
use std::path::PathBuf;

use board_node::pgn::PgnGame;
use board_node::replay::{self, ThinkTimes};
use board_node::source::{Reading, Timed};
use protocol::time_control::TimeControl;
use protocol::{BoardNo, NodeMs, Seq, Uplink, UplinkBody};

use crate::core::alerts::routing::Zone;
use crate::core::alerts::{Alert, AlertKind, AlertSettings, Routing};
use crate::core::arbiter::{ArbiterAction, Cause, Decision, GameResult};
use crate::core::ending::Status;
use crate::core::hall::Hall;
use crate::core::hub::{Hub, HubConfig, RequestId};
use crate::core::laws::{self, Edition, Rules};
use crate::core::time::HubMs;

/// Boards per zone (one arbiter's share of a hall).
pub const ZONE_BOARDS: u16 = 20;

/// How long after a game's last event the arbiter records a result the rules did not give.
pub const ARBITER_DELAY_MS: u64 = 5_000;

/// How often the node reports that it is alive (`board-node`'s heartbeat).
const HEARTBEAT_MS: u64 = 5_000;

/// How often the desk is given the time.
const TICK_MS: u64 = 1_000;

/// What the arbiters got from a file of games.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AlertReport {
    pub games: usize,
    /// Alerts by kind (`clock_set_wrong` by its detail: `clock_set_wrong/clock_adjusted`).
    pub alerts: BTreeMap<String, usize>,
    /// `clock_set_wrong/clock_adjusted` alerts by the size of the difference.
    pub clock_differences: BTreeMap<&'static str, usize>,
    /// Flag forecasts that a flag fall of that board followed: the forecast's precision.
    pub forecasts_borne_out: usize,
}

impl AlertReport {
    /// Alerts of `kind` per 100 games.
    pub fn per_100_games(&self, count: usize) -> f64 {
        100.0 * count as f64 / self.games.max(1) as f64
    }

    /// The report as a table.
    pub fn table(&self) -> String {
        let mut out = format!("{} games\n", self.games);
        out.push_str(&format!(
            "{:<40} {:>7} {:>15}\n",
            "alert", "alerts", "per 100 games"
        ));
        for (kind, count) in &self.alerts {
            out.push_str(&format!(
                "{kind:<40} {count:>7} {:>15.1}\n",
                self.per_100_games(*count)
            ));
        }
        let total: usize = self.alerts.values().sum();
        out.push_str(&format!(
            "{:<40} {total:>7} {:>15.1}\n",
            "all",
            self.per_100_games(total)
        ));
        if let Some(forecasts) = self.alerts.get("flag_forecast") {
            out.push_str(&format!(
                "flag_forecast followed by a flag fall: {} of {forecasts}\n",
                self.forecasts_borne_out
            ));
        }
        if !self.clock_differences.is_empty() {
            out.push_str("clock_adjusted by |difference|:");
            for (band, count) in &self.clock_differences {
                out.push_str(&format!(" {band}: {count}"));
            }
            out.push('\n');
        }
        out
    }
}

/// The band of a difference of `seconds`.
fn band(seconds: i64) -> &'static str {
    match seconds.unsigned_abs() {
        0..=5 => "0-5 s",
        6..=10 => "6-10 s",
        11..=30 => "11-30 s",
        31..=60 => "31-60 s",
        61..=300 => "1-5 min",
        _ => "over 5 min",
    }
}

/// One board's events, in game time, and when its result is recorded.
struct BoardScript {
    events: Vec<(u64, UplinkBody)>,
    source_result: Option<GameResult>,
    ends_at: u64,
}

fn board_script(game: &PgnGame, tc: &TimeControl, thinks: ThinkTimes) -> BoardScript {
    let readings: Vec<Timed> = replay::script_with(game, Some(tc), thinks);
    let last = readings.last().map_or(0, |t| t.game_ms);
    let ends_at = last + ARBITER_DELAY_MS;
    let events = readings
        .into_iter()
        .map(|t| (t.game_ms, t.reading.body()))
        .collect();
    let source_result = match game.result() {
        "1-0" => Some(GameResult::WhiteWins),
        "0-1" => Some(GameResult::BlackWins),
        "1/2-1/2" => Some(GameResult::Draw),
        _ => None,
    };
    BoardScript {
        events,
        source_result,
        ends_at,
    }
}

/// Zones of [`ZONE_BOARDS`] boards over `boards` boards, no arbiters named.
fn zones(boards: u16) -> Routing {
    let zones = (0..boards.div_ceil(ZONE_BOARDS))
        .map(|i| Zone {
            name: format!("Z{}", i + 1),
            boards: vec![
                BoardNo(i * ZONE_BOARDS + 1)..=BoardNo(((i + 1) * ZONE_BOARDS).min(boards)),
            ],
        })
        .collect();
    Routing {
        zones,
        arbiters: Vec::new(),
    }
}

/// Replays `games` (each with its real time control) under `edition`'s Laws with the desk's
/// `settings`, the moves' think times from `thinks` (a hall's node measures them as
/// [`ThinkTimes::AsNode`]); every alert the arbiters got, with the index in `games` of the
/// game it is about (`None`: a zone's).
pub fn alerts(
    games: &[(PgnGame, TimeControl)],
    edition: Edition,
    settings: &AlertSettings,
    thinks: ThinkTimes,
) -> Vec<(Option<usize>, Alert)> {
    let mut by_control: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (_, tc)) in games.iter().enumerate() {
        by_control.entry(tc.to_string()).or_default().push(i);
    }
    let mut out = Vec::new();
    for mut hall_games in by_control.into_values() {
        hall_games.truncate(usize::from(u16::MAX));
        let tc = games[hall_games[0]].1.clone();
        let boards = u16::try_from(hall_games.len()).unwrap_or(u16::MAX);
        let rules = Rules {
            edition,
            game_type: laws::speed(&tc, edition),
            ..Rules::default()
        };
        let mut hub = Hub::new(HubConfig {
            event: "report".into(),
            rules,
            time_control: Some(tc.clone()),
            routing: zones(boards),
            alerts: settings.clone(),
            ..HubConfig::default()
        });
        let mut scripts: Vec<BoardScript> = hall_games
            .iter()
            .map(|i| board_script(&games[*i].0, &tc, thinks))
            .collect();
        // Every node reports that it is alive until the last game of the hall is over.
        let hall_ends = scripts.iter().map(|s| s.ends_at).max().unwrap_or(0);
        for script in &mut scripts {
            let beats = (HEARTBEAT_MS..hall_ends).step_by(HEARTBEAT_MS as usize);
            script
                .events
                .extend(beats.map(|at| (at, Reading::Heartbeat.body())));
            script.events.sort_by_key(|(at, _)| *at);
        }
        replay_hall(&mut hub, &scripts);
        out.extend(hub.desk().alerts().map(|alert| {
            let game = alert.board.map(|b| hall_games[usize::from(b.0) - 1]);
            (game, alert.clone())
        }));
    }
    out
}

/// [`alerts`], counted: what `hub alert-report` prints.
pub fn run(
    games: &[(PgnGame, TimeControl)],
    edition: Edition,
    settings: &AlertSettings,
    thinks: ThinkTimes,
) -> AlertReport {
    let alerts = alerts(games, edition, settings, thinks);
    let mut report = AlertReport {
        games: games.len(),
        ..AlertReport::default()
    };
    for (_, alert) in &alerts {
        let name = serde_json::to_value(alert.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let key = match &alert.facts.detail {
            Some(detail) if name == "clock_set_wrong" => format!("{name}/{detail}"),
            _ => name.clone(),
        };
        if let Some(difference) = alert
            .facts
            .difference_s
            .filter(|_| key == "clock_set_wrong/clock_adjusted")
        {
            *report
                .clock_differences
                .entry(band(difference))
                .or_default() += 1;
        }
        *report.alerts.entry(key).or_default() += 1;
    }
    let flagged: Vec<Option<usize>> = alerts
        .iter()
        .filter(|(_, a)| matches!(a.kind, AlertKind::FlagFall | AlertKind::BothFlags))
        .map(|(game, _)| *game)
        .collect();
    report.forecasts_borne_out = alerts
        .iter()
        .filter(|(game, a)| a.kind == AlertKind::FlagForecast && flagged.contains(game))
        .count();
    report
}

/// Every board's events in time order through the hub, the time given every second, each
/// result the rules did not give recorded by the arbiter; a journal that is durable at once.
fn replay_hall(hub: &mut Hub, scripts: &[BoardScript]) {
    // (time, board index, event index); a result to record is event index `usize::MAX`.
    let mut timeline: Vec<(u64, usize, usize)> = Vec::new();
    for (b, script) in scripts.iter().enumerate() {
        timeline.extend(
            script
                .events
                .iter()
                .enumerate()
                .map(|(i, (at, _))| (*at, b, i)),
        );
        timeline.push((script.ends_at, b, usize::MAX));
    }
    timeline.sort_unstable();
    let mut seqs = vec![0u64; scripts.len()];
    let mut next_tick = TICK_MS;
    for (at, b, i) in timeline {
        while next_tick <= at {
            hub.handle_timeout(HubMs(next_tick));
            let _ = hub.poll_all_durable(HubMs(next_tick));
            next_tick += TICK_MS;
        }
        let board = BoardNo(u16::try_from(b + 1).unwrap_or(u16::MAX));
        let now = HubMs(at);
        if i == usize::MAX {
            if let Some(action) = arbiter_result(hub.hall(), board, scripts[b].source_result) {
                hub.handle_decision(now, RequestId(0), board, None, action, None);
                let _ = hub.poll_all_durable(now);
            }
            continue;
        }
        seqs[b] += 1;
        let event = Uplink::new(
            board,
            Seq(seqs[b]),
            NodeMs(at),
            scripts[b].events[i].1.clone(),
        );
        hub.handle_uplink(now, event);
        let _ = hub.poll_all_durable(now);
    }
    hub.handle_timeout(HubMs(next_tick));
    let _ = hub.poll_all_durable(HubMs(next_tick));
}

/// The arbiter's record of a result the rules did not give: the flag's ruling where a flag
/// fell, else the source's result (a resignation or an agreed draw).
fn arbiter_result(
    hall: &Hall,
    board: BoardNo,
    source: Option<GameResult>,
) -> Option<ArbiterAction> {
    let state = hall.board(board)?;
    if state.game().status() != Status::Playing {
        return None;
    }
    let (result, cause) = match state.flag_ruling() {
        Some(ruling) => (ruling.result?, Cause::FlagFall),
        None => {
            let result = source?;
            let cause = match result {
                GameResult::Draw => Cause::DrawAgreement,
                _ => Cause::Resignation,
            };
            (result, cause)
        }
    };
    Some(ArbiterAction {
        arbiter: "report".into(),
        decision: Decision::Result {
            result,
            cause: Some(cause),
        },
        note: None,
        // The game's record is what happened, whatever the hub ruled.
        override_reason: Some("the game's record".to_owned()),
    })
}

/// `hub alert-report`'s command line.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// PGN files of games with `[%clk]` (repeat the flag for several).
    #[arg(long, required = true)]
    pub pgn: Vec<PathBuf>,
    /// The games' real time control, where their `TimeControl` tags are missing or wrong
    /// [default: each game's tag].
    #[arg(long, value_parser = TimeControl::parse_any)]
    pub time_control: Option<TimeControl>,
    /// The edition of the Laws [default: 2023].
    #[arg(long)]
    pub laws: Option<Edition>,
    /// The event's configuration: its [alerts] settings are used.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Think times as a node beside the board measures them (`node`: what the clock
    /// lost), or as the broadcast stamped them (`broadcast`: each move's `%emt`).
    #[arg(long, value_enum, default_value = "node")]
    pub think_times: ThinkTimesArg,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ThinkTimesArg {
    Node,
    Broadcast,
}

impl From<ThinkTimesArg> for ThinkTimes {
    fn from(arg: ThinkTimesArg) -> ThinkTimes {
        match arg {
            ThinkTimesArg::Node => ThinkTimes::AsNode,
            ThinkTimesArg::Broadcast => ThinkTimes::Broadcast,
        }
    }
}

/// `hub alert-report`: reads the games with a time control and clock times, and prints the
/// alerts they page the arbiters with, per 100 games by kind.
pub fn print(args: ReportArgs) -> anyhow::Result<()> {
    use anyhow::Context;
    let file = super::serve::event_config(args.config.as_deref())?;
    let mut games = Vec::new();
    let mut without_control = 0;
    for path in &args.pgn {
        let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let read =
            board_node::pgn::read_games(&text).with_context(|| format!("in {}", path.display()))?;
        for game in read {
            let tc = args.time_control.clone().or_else(|| {
                game.tag("TimeControl")
                    .and_then(|t| TimeControl::parse_any(t).ok())
            });
            match tc {
                Some(tc) if game.plies.iter().any(|p| p.clk_ms.is_some()) => games.push((game, tc)),
                _ => without_control += 1,
            }
        }
    }
    if without_control > 0 {
        eprintln!("{without_control} games without a time control or clock times left out");
    }
    let edition = args.laws.or(file.edition).unwrap_or_default();
    let report = run(&games, edition, &file.alerts, args.think_times.into());
    print!("{}", report.table());
    Ok(())
}
