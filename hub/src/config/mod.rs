//! The event's configuration file (TOML), read by `hub serve --config FILE`; command-line
//! flags override what it says.
//!
//! ```toml
//! [event]
//! id = "oslo-open"             # MQTT topic level
//! name = "Oslo Open 2026"
//! time_control = "90 minutes for 40 moves, then 30 minutes, 30 seconds per move from move 1"
//! allowed_lateness_s = 900     # 6.7.1; without it no late-arrival alerts
//!
//! [laws]
//! edition = "2023"             # 2023, 2018, 2014, 2009
//! game_type = "standard"       # standard, rapid, blitz (default: from the time control)
//! supervision = "full"         # rapid/blitz: full or partial
//!
//! [alerts]
//! escalate_urgent_s = 30       # unacknowledged alerts go to the chief arbiter after …
//! flag_forecast_s = 15
//! clock_tolerance_s = 10       # a clock changed by this + one increment: for the arbiter
//!
//! [[zones]]
//! name = "A"
//! boards = ["1-25", "40"]
//!
//! [[arbiters]]
//! name = "Ola"
//! zones = ["A"]
//! language = "nb"
//!
//! [[arbiters]]
//! name = "Eva"
//! chief = true
//! language = "sv"
//!
//! [access]
//! arbiter_token = "…"          # the page's login and the API's token (16+ characters);
//!                               # without it the hub makes one and prints its login link
//! hosts = ["hub.local"]        # names the hub is reached under besides its IP addresses
//! open_hall = false             # true: take unsealed events from boards nobody enrolled (a lab)
//! tls = "auto"                  # TLS on every listener off loopback; "on", or "off" (warned)
//! ```
//!
//! Errors name the line and the field.

use std::ops::RangeInclusive;
use std::path::Path;

use protocol::time_control::TimeControl;
use serde::Deserialize;
use toml::Spanned;

use crate::core::alerts::routing::{Arbiter, Routing, Zone};
use crate::core::alerts::{AlertSettings, Language};
use crate::core::ids::{BoardNo, HardwareId, RoundNo};
use crate::core::laws::{self, Edition, GameType, Rules, Supervision};
use crate::core::relay::public::BroadcastSettings;
use crate::pairings::{self, trf::Trf, Tournament};
use outlets::{FtpTarget, LichessTarget};

mod broadcast;
pub mod file;
pub mod outlets;
mod sections;
pub mod tls;

/// What the public sees (the feed, the spectators' page, the broadcast topics, the LiveChess
/// folder, lichess) is this far behind the boards unless the configuration says otherwise:
/// 15 minutes, so that a live feed cannot become a player's engine in the hall by default.
pub const DEFAULT_DELAY_S: u64 = 15 * 60;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    event: EventSection,
    #[serde(default)]
    laws: LawsSection,
    #[serde(default)]
    alerts: AlertsSection,
    #[serde(default)]
    zones: Vec<ZoneSection>,
    #[serde(default)]
    arbiters: Vec<ArbiterSection>,
    #[serde(default)]
    pairings: PairingsSection,
    #[serde(default)]
    broadcast: BroadcastSection,
    #[serde(default)]
    rounds: Vec<RoundSection>,
    #[serde(default)]
    nodes: Vec<NodeSection>,
    #[serde(default)]
    access: AccessSection,
    #[serde(default)]
    sections: Vec<sections::SectionTable>,
    #[serde(default)]
    standings: StandingsSection,
}

/// `[standings]`: the tie-breaks' rules and list.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StandingsSection {
    /// `"fide-2026"` (the default) or `"fide-2024"`.
    rules: Option<Spanned<String>>,
    /// In TRF-2026's spelling: `["BH-C1", "BH", "SB", "DE", "WIN"]`.
    tiebreaks: Option<Vec<Spanned<String>>>,
    /// The rating unrated players count with in ARO and TPR.
    unrated: Option<u16>,
    /// `"swiss"` or `"round-robin"`: how the event is paired, where its file does not say.
    system: Option<Spanned<String>>,
}

/// Who may see the arbiters' view over HTTP.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AccessSection {
    /// The supervision page's login and the API's bearer token.
    arbiter_token: Option<String>,
    /// Names the hub is reached under besides its IP addresses and `localhost`.
    #[serde(default)]
    hosts: Vec<String>,
    /// Take unsealed events for boards whose node was never enrolled: a lab, never a hall.
    #[serde(default)]
    open_hall: bool,
    /// Which listeners speak TLS: `auto` (all but loopback's), `on`, `off`.
    tls: Option<tls::TlsChoice>,
}

/// The technician's binding of a node (by its e-board's hardware id) to a board.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeSection {
    hardware: Spanned<String>,
    board: u16,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BroadcastSection {
    /// The public feed shows each game as it was this long ago.
    delay_s: Option<u64>,
    /// A DGT LiveChess-compatible folder to keep written (relay tools read it).
    folder: Option<String>,
    lichess: Option<LichessSection>,
    ftp: Option<FtpSection>,
    /// `confirmed` (default: a flag fall's result waits for the arbiter) or `at_once`.
    flag_results: Option<FlagResults>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FlagResults {
    Confirmed,
    AtOnce,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LichessSection {
    /// `https://lichess.org` by default.
    url: Option<String>,
    /// The lichess round the round the hub begins in is pushed to, every board of it (where
    /// `[[rounds]]` does not say otherwise).
    round_id: Option<Spanned<String>>,
    token: String,
}

/// One lichess round a hub round's boards are pushed to: `{ boards = "1-100", round_id =
/// "AbCd1234" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SliceSection {
    boards: Spanned<String>,
    round_id: Spanned<String>,
}

/// `[broadcast.ftp]`: where each round's `games.pgn` is uploaded (chess.com's broadcasts).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FtpSection {
    /// `ftp://USER:PASSWORD@HOST:PORT/DIR` or `ftps://…` (explicit TLS).
    url: Spanned<String>,
    /// The CA (PEM) an `ftps://` server's certificate is checked against: a hall's own
    /// server with its own certificate. The web's roots where left out.
    ca: Option<Spanned<String>>,
}

impl std::fmt::Debug for FtpSection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FtpSection { url: <not shown: it holds a password> }")
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PairingsSection {
    /// The pairing program's TRF: every round it pairs, results back out.
    trf: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoundSection {
    number: Spanned<u64>,
    /// When the round starts, as the regulations say: `2026-11-27T15:00+01:00`.
    start: Option<Spanned<String>>,
    /// A CSV of this round's pairings; it takes precedence over the TRF's.
    pairings: Option<Spanned<String>>,
    /// The lichess broadcast round this round is pushed to, every board of it.
    lichess_round_id: Option<Spanned<String>>,
    /// The lichess rounds this round's boards are pushed to, a slice each (at most 100
    /// boards: lichess shows no more in a round).
    lichess_slices: Option<Vec<SliceSection>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventSection {
    id: Option<String>,
    name: Option<String>,
    site: Option<String>,
    time_control: Option<Spanned<String>>,
    allowed_lateness_s: Option<u64>,
    /// The round a new hub begins in (default: the last with pairings).
    round: Option<Spanned<u64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LawsSection {
    edition: Option<Spanned<String>>,
    game_type: Option<GameTypeName>,
    supervision: Option<SupervisionName>,
    #[serde(default)]
    chess960: bool,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum GameTypeName {
    Standard,
    Rapid,
    Blitz,
}

impl From<GameTypeName> for GameType {
    fn from(name: GameTypeName) -> GameType {
        match name {
            GameTypeName::Standard => GameType::Standard,
            GameTypeName::Rapid => GameType::Rapid,
            GameTypeName::Blitz => GameType::Blitz,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SupervisionName {
    Full,
    Partial,
}

impl From<SupervisionName> for Supervision {
    fn from(name: SupervisionName) -> Supervision {
        match name {
            SupervisionName::Full => Supervision::Full,
            SupervisionName::Partial => Supervision::Partial,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AlertsSection {
    escalate_urgent_s: Option<u64>,
    escalate_high_s: Option<u64>,
    escalate_normal_s: Option<u64>,
    flag_forecast_s: Option<u64>,
    time_trouble_s: Option<u64>,
    zone_time_trouble_boards: Option<usize>,
    node_silent_s: Option<u64>,
    clock_silent_s: Option<u64>,
    clock_start_s: Option<u64>,
    clock_tolerance_s: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ZoneSection {
    name: Spanned<String>,
    boards: Vec<Spanned<BoardsItem>>,
}

/// `12` or `"1-25"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum BoardsItem {
    One(u16),
    Range(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArbiterSection {
    name: String,
    #[serde(default)]
    zones: Vec<String>,
    language: Option<Spanned<String>>,
    #[serde(default)]
    chief: bool,
}

/// What the file configures; `None` where it is silent.
#[derive(Debug, Clone, Default)]
pub struct EventConfig {
    pub event_id: Option<String>,
    pub name: Option<String>,
    pub edition: Option<Edition>,
    pub game_type: Option<GameType>,
    pub supervision: Option<Supervision>,
    pub chess960: bool,
    pub time_control: Option<TimeControl>,
    pub routing: Routing,
    pub alerts: AlertSettings,
    /// The pairing files as read: the rounds, and the TRFs for the results.
    pub tournament: Tournament,
    /// The feed as configured, its delay [`DEFAULT_DELAY_S`] where the file is silent.
    pub broadcast: BroadcastSettings,
    /// A DGT LiveChess-compatible folder to keep written (`[broadcast] folder`).
    pub folder: Option<std::path::PathBuf>,
    /// The lichess rounds to push each round to (`[broadcast.lichess]`, `[[rounds]]
    /// lichess_slices`).
    pub lichess: Option<LichessTarget>,
    /// The FTP server each round's `games.pgn` is uploaded to (`[broadcast.ftp]`).
    pub ftp: Option<FtpTarget>,
    /// `[broadcast] delay_s` as the file says it, for the command line to override.
    pub delay_s: Option<u64>,
    /// Hardware id → board.
    pub bindings: std::collections::BTreeMap<HardwareId, BoardNo>,
    /// The arbiters' view answers only to this token.
    pub arbiter_token: Option<String>,
    /// Names the hub is reached under besides its IP addresses and `localhost`.
    pub hosts: Vec<String>,
    /// `[access] open_hall`: unsealed events from boards nobody enrolled are taken.
    pub open_hall: bool,
    /// `[access] tls`.
    pub tls: Option<tls::TlsChoice>,
    /// The pairing files it names: the hub reads them again when they change (the pairing
    /// program exports the next round's pairings into the same file).
    pub pairing_files: Vec<std::path::PathBuf>,
    /// `[[sections]]`: boards with their own rules, time control and pairings.
    pub sections: Vec<crate::core::sections::Section>,
    /// `[standings]`.
    pub standings: crate::core::standings::Settings,
}

/// `[standings]` read: each code checked, with the line it is on.
fn standings_settings(
    section: &StandingsSection,
    invalid: &impl Fn(std::ops::Range<usize>, &str, String) -> ConfigError,
) -> Result<crate::core::standings::Settings, ConfigError> {
    use crate::core::standings::Rules;
    let rules = match &section.rules {
        Some(rules) => rules
            .get_ref()
            .parse::<Rules>()
            .map_err(|why| invalid(rules.span(), "standings.rules", why))?,
        None => Rules::default(),
    };
    let (tiebreaks, team_tiebreaks) = match &section.tiebreaks {
        Some(codes) => {
            let texts: Vec<&str> = codes.iter().map(|c| c.get_ref().as_str()).collect();
            crate::core::standings::read_list(&texts).map_err(|(i, why)| {
                invalid(codes[i].span(), "standings.tiebreaks", why.to_string())
            })?
        }
        None => (None, None),
    };
    let system = section
        .system
        .as_ref()
        .map(|system| {
            system
                .get_ref()
                .parse()
                .map_err(|why| invalid(system.span(), "standings.system", why))
        })
        .transpose()?;
    Ok(crate::core::standings::Settings {
        rules,
        tiebreaks,
        team_tiebreaks,
        unrated: section.unrated,
        system,
    })
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// TOML syntax or a field of the wrong type: toml's message names line and field.
    #[error("{path}: {message}")]
    Syntax { path: String, message: String },
    #[error("{path}, line {line}: {field}: {why}")]
    Invalid {
        path: String,
        line: usize,
        field: String,
        why: String,
    },
}

/// Reads and checks the configuration at `path`.
pub fn load(path: &Path) -> Result<EventConfig, ConfigError> {
    let text = file::read_text(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse(&path.display().to_string(), &text, base)
}

/// Reads and checks a configuration; `path` names it in errors, files it names are found
/// from `base`.
pub fn parse(path: &str, text: &str, base: &Path) -> Result<EventConfig, ConfigError> {
    let file: File = toml::from_str(text).map_err(|e| ConfigError::Syntax {
        path: path.to_owned(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    let invalid = |span: std::ops::Range<usize>, field: &str, why: String| ConfigError::Invalid {
        path: path.to_owned(),
        line: text[..span.start.min(text.len())].lines().count().max(1),
        field: field.to_owned(),
        why,
    };
    let edition = match &file.laws.edition {
        Some(e) => Some(
            e.get_ref()
                .parse::<Edition>()
                .map_err(|why| invalid(e.span(), "laws.edition", why.to_string()))?,
        ),
        None => None,
    };
    let time_control = match &file.event.time_control {
        Some(tc) => Some(
            TimeControl::parse_any(tc.get_ref())
                .map_err(|why| invalid(tc.span(), "event.time_control", why.to_string()))?,
        ),
        None => None,
    };
    let game_type = file.laws.game_type.map(GameType::from);
    let mut zones = Vec::new();
    for (i, zone) in file.zones.iter().enumerate() {
        let mut boards = Vec::new();
        for item in &zone.boards {
            let range = board_range(item.get_ref())
                .map_err(|why| invalid(item.span(), &format!("zones[{i}].boards"), why))?;
            boards.push(range);
        }
        zones.push(Zone {
            name: zone.name.get_ref().clone(),
            boards,
        });
    }
    let mut arbiters = Vec::new();
    for (i, arbiter) in file.arbiters.iter().enumerate() {
        let language = match &arbiter.language {
            Some(code) => code.get_ref().parse::<Language>().map_err(|why| {
                invalid(
                    code.span(),
                    &format!("arbiters[{i}].language"),
                    why.to_string(),
                )
            })?,
            None => Language::English,
        };
        arbiters.push(Arbiter {
            name: arbiter.name.clone(),
            zones: arbiter.zones.clone(),
            language,
            chief: arbiter.chief,
        });
    }
    let routing = Routing { zones, arbiters };
    if let Err(why) = routing.validate() {
        let span = file.zones.first().map_or(0..0, |z| z.name.span());
        return Err(invalid(span, "zones", why.to_string()));
    }
    let defaults = AlertSettings::default();
    let s = |v: Option<u64>, default: u64| v.map_or(default, |s| s.saturating_mul(1000));
    let a = &file.alerts;
    let alerts = AlertSettings {
        escalate_urgent_ms: s(a.escalate_urgent_s, defaults.escalate_urgent_ms),
        escalate_high_ms: s(a.escalate_high_s, defaults.escalate_high_ms),
        escalate_normal_ms: s(a.escalate_normal_s, defaults.escalate_normal_ms),
        flag_forecast_ms: s(a.flag_forecast_s, defaults.flag_forecast_ms),
        time_trouble_ms: a.time_trouble_s.map(|s| s * 1000),
        zone_time_trouble_boards: a
            .zone_time_trouble_boards
            .unwrap_or(defaults.zone_time_trouble_boards),
        allowed_lateness_ms: file.event.allowed_lateness_s.map(|s| s * 1000),
        node_silent_ms: s(a.node_silent_s, defaults.node_silent_ms),
        clock_silent_ms: s(a.clock_silent_s, defaults.clock_silent_ms),
        clock_start_ms: s(a.clock_start_s, defaults.clock_start_ms),
        clock_tolerance_ms: s(a.clock_tolerance_s, defaults.clock_tolerance_ms),
    };
    let read = |name: &Spanned<String>, field: &str| -> Result<String, ConfigError> {
        let file = base.join(name.get_ref());
        file::read_text(&file)
            .map_err(|e| invalid(name.span(), field, format!("{}: {e}", file.display())))
    };
    let trf = match &file.pairings.trf {
        Some(name) => Some(
            Trf::parse(&read(name, "pairings.trf")?)
                .map_err(|e| invalid(name.span(), "pairings.trf", e.to_string()))?,
        ),
        None => None,
    };
    // The pairing program's time control (TRF-2026's record 222) where the configuration
    // names none.
    let time_control = time_control.or_else(|| trf.as_ref().and_then(Trf::time_control));
    let round_no = |n: &Spanned<u64>, field: &str| {
        RoundNo::new(*n.get_ref()).ok_or_else(|| {
            invalid(
                n.span(),
                field,
                format!("{}: rounds are numbered 1 to 999", n.get_ref()),
            )
        })
    };
    let mut csv_rounds = Vec::new();
    for (i, round) in file.rounds.iter().enumerate() {
        let number = round_no(&round.number, &format!("rounds[{i}].number"))?;
        if let Some(name) = &round.pairings {
            let field = format!("rounds[{i}].pairings");
            let games = pairings::csv::read(&read(name, &field)?)
                .map_err(|e| invalid(name.span(), &field, e.to_string()))?;
            csv_rounds.push((number, games));
        }
    }
    let first = match &file.event.round {
        Some(n) => Some(round_no(n, "event.round")?),
        None => None,
    };
    let mut tournament = Tournament::new(trf, csv_rounds, first);
    let mut lichess_rounds = std::collections::BTreeMap::new();
    for (i, round) in file.rounds.iter().enumerate() {
        let number = round_no(&round.number, &format!("rounds[{i}].number"))?;
        let field = format!("rounds[{i}]");
        let slices = broadcast::lichess_slices(round, &field, &invalid)?;
        if !slices.is_empty() {
            if file.broadcast.lichess.is_none() {
                let span = round.number.span();
                let why = "lichess rounds need [broadcast.lichess] (its token)".to_owned();
                return Err(invalid(span, &field, why));
            }
            lichess_rounds.insert(number, slices);
        }
        if let Some(start) = &round.start {
            let at = start_time(start.get_ref())
                .map_err(|why| invalid(start.span(), &format!("rounds[{i}].start"), why))?;
            tournament.rounds.starts.insert(number, at);
        }
    }
    let mut bindings: std::collections::BTreeMap<HardwareId, BoardNo> =
        std::collections::BTreeMap::new();
    for (i, node) in file.nodes.iter().enumerate() {
        let field = format!("nodes[{i}]");
        if node.board == 0 {
            return Err(invalid(
                node.hardware.span(),
                &field,
                "board 0: boards count from 1".into(),
            ));
        }
        let board = BoardNo(node.board);
        if let Some((other, _)) = bindings.iter().find(|(_, b)| **b == board) {
            let why = format!("board {} is bound to {:?} already", node.board, other.0);
            return Err(invalid(node.hardware.span(), &field, why));
        }
        if bindings
            .insert(HardwareId(node.hardware.get_ref().clone()), board)
            .is_some()
        {
            let why = format!("hardware {:?} is bound twice", node.hardware.get_ref());
            return Err(invalid(node.hardware.span(), &field, why));
        }
    }
    let hall_rules = {
        let edition = edition.unwrap_or_default();
        Rules {
            edition,
            game_type: game_type.unwrap_or_else(|| {
                time_control
                    .as_ref()
                    .map_or(GameType::Standard, |tc| laws::speed(tc, edition))
            }),
            supervision: file
                .laws
                .supervision
                .map(Supervision::from)
                .unwrap_or_default(),
            chess960: file.laws.chess960,
        }
    };
    let hall = sections::HallDefaults {
        rules: hall_rules,
        time_control: time_control.as_ref(),
        base,
        invalid: &invalid,
    };
    let (sections, section_files) = sections::read(&file.sections, &hall, &mut tournament)?;
    let pairing_files = file
        .pairings
        .trf
        .iter()
        .chain(file.rounds.iter().filter_map(|r| r.pairings.as_ref()))
        .map(|name| base.join(name.get_ref()))
        .chain(section_files)
        .collect();
    let standings = standings_settings(&file.standings, &invalid)?;
    Ok(EventConfig {
        standings,
        tournament,
        pairing_files,
        sections,
        bindings,
        arbiter_token: file.access.arbiter_token,
        hosts: file.access.hosts,
        open_hall: file.access.open_hall,
        tls: file.access.tls,
        broadcast: BroadcastSettings {
            event_name: file.event.name.clone(),
            site: file.event.site,
            delay_ms: file.broadcast.delay_s.unwrap_or(DEFAULT_DELAY_S) * 1000,
            flag_results_at_once: file.broadcast.flag_results == Some(FlagResults::AtOnce),
        },
        folder: file.broadcast.folder.map(|f| base.join(f)),
        lichess: match file.broadcast.lichess {
            Some(l) => Some(LichessTarget {
                url: l.url.unwrap_or_else(|| "https://lichess.org".to_owned()),
                round_id: match l.round_id {
                    Some(id) => Some(broadcast::lichess_round_id(
                        &id,
                        "broadcast.lichess.round_id",
                        &invalid,
                    )?),
                    None => None,
                },
                rounds: lichess_rounds,
                token: l.token,
            }),
            None => None,
        },
        ftp: match &file.broadcast.ftp {
            Some(ftp) => {
                let mut target = FtpTarget::from_url(ftp.url.get_ref())
                    .map_err(|why| invalid(ftp.url.span(), "broadcast.ftp.url", why.to_string()))?;
                if let Some(ca) = &ftp.ca {
                    let pem = read(ca, "broadcast.ftp.ca")?;
                    link::tls::client_config(pem.as_bytes())
                        .map_err(|e| invalid(ca.span(), "broadcast.ftp.ca", e.to_string()))?;
                    target.ca_pem = Some(pem);
                }
                Some(target)
            }
            None => None,
        },
        delay_s: file.broadcast.delay_s,
        event_id: file.event.id,
        name: file.event.name,
        edition,
        game_type,
        supervision: file.laws.supervision.map(Supervision::from),
        chess960: file.laws.chess960,
        time_control,
        routing,
        alerts,
    })
}

/// A round's start, `YYYY-MM-DDTHH:MM[:SS]` with `Z` or the hall's offset (`+01:00`), as
/// Unix ms. The offset is required: the hub's clock is UTC and the hall's is not.
fn start_time(text: &str) -> Result<u64, String> {
    let wrong = || format!("{text:?}: write the start as 2026-11-27T15:00+01:00 (or …Z for UTC)");
    let text = text.trim();
    let (date, rest) = text.split_at_checked(10).ok_or_else(wrong)?;
    let rest = rest.strip_prefix(['T', ' ']).ok_or_else(wrong)?;
    let (time, offset_min) = if let Some(time) = rest.strip_suffix('Z') {
        (time, 0i64)
    } else {
        let at = rest.rfind(['+', '-']).ok_or_else(wrong)?;
        let (time, offset) = rest.split_at(at);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (h, m) = offset[1..].split_once(':').ok_or_else(wrong)?;
        // Real offsets run from -12:00 to +14:00; a bound also keeps the sum from overflow.
        let part = |s: &str, max: i64| s.parse::<i64>().ok().filter(|n| (0..=max).contains(n));
        let minutes = part(h, 14).ok_or_else(wrong)? * 60 + part(m, 59).ok_or_else(wrong)?;
        (time, sign * minutes)
    };
    let numbers = |s: &str, sep: char| -> Result<Vec<i64>, String> {
        s.split(sep)
            .map(|n| n.parse::<i64>().map_err(|_| wrong()))
            .collect()
    };
    let (ymd, hms) = (numbers(date, '-')?, numbers(time, ':')?);
    let ([y, mo, d], [h, mi, sec @ ..]) = (ymd.as_slice(), hms.as_slice()) else {
        return Err(wrong());
    };
    let sec = sec.first().copied().unwrap_or(0);
    if !(1..=12).contains(mo) || !(1..=31).contains(d) || *h > 23 || *mi > 59 || sec > 59 {
        return Err(wrong());
    }
    // Days from civil (Howard Hinnant), the inverse of `broadcast::pgn_date`.
    let y = if *mo <= 2 { y - 1 } else { *y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if *mo > 2 { mo - 3 } else { mo + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + h * 3_600 + mi * 60 + sec - offset_min * 60;
    u64::try_from(seconds * 1000).map_err(|_| wrong())
}

pub(super) fn board_range(item: &BoardsItem) -> Result<RangeInclusive<BoardNo>, String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u16>()
            .ok()
            .filter(|n| *n > 0)
            .map(BoardNo)
            .ok_or_else(|| format!("{s:?} is not a board number"))
    };
    match item {
        BoardsItem::One(n) if *n > 0 => Ok(BoardNo(*n)..=BoardNo(*n)),
        BoardsItem::One(n) => Err(format!("{n} is not a board number")),
        BoardsItem::Range(text) => {
            let (from, to) = match text.split_once('-') {
                Some((from, to)) => (number(from)?, number(to)?),
                None => (number(text)?, number(text)?),
            };
            if from > to {
                return Err(format!("{text:?}: the range runs backwards"));
            }
            Ok(from..=to)
        }
    }
}

impl EventConfig {
    /// The rules, with what the command line gave taking precedence.
    pub fn rules(
        &self,
        edition: Option<Edition>,
        game_type: Option<GameType>,
        supervision: Option<Supervision>,
        chess960: bool,
        time_control: Option<&TimeControl>,
    ) -> Rules {
        let edition = edition.or(self.edition).unwrap_or_default();
        let game_type = game_type.or(self.game_type).unwrap_or_else(|| {
            time_control
                .or(self.time_control.as_ref())
                .map_or(GameType::Standard, |tc| laws::speed(tc, edition))
        });
        Rules {
            edition,
            game_type,
            supervision: supervision.or(self.supervision).unwrap_or_default(),
            chess960: chess960 || self.chess960,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_start_is_read_with_the_halls_offset() {
        // 2026-11-27 15:00 in Oslo (UTC+1) is 14:00 UTC.
        let at = start_time("2026-11-27T15:00+01:00").unwrap();
        assert_eq!(
            crate::view::feed::pgn_date(crate::core::time::HubMs(at)),
            "2026.11.27"
        );
        assert_eq!(at, start_time("2026-11-27 14:00Z").unwrap());
        assert_eq!(at % 86_400_000, 14 * 3_600_000);
        assert_eq!(start_time("1970-01-01T00:00:01Z").unwrap(), 1_000);
        assert!(start_time("2026-11-27 15:00")
            .unwrap_err()
            .contains("+01:00"));
        assert!(start_time("2026-13-27T15:00Z").is_err());
        // An offset past any time zone is refused (it overflowed the sum once).
        assert_eq!(
            start_time("2026-11-27T15:00-05:30").unwrap(),
            at + 6 * 3_600_000 + 30 * 60_000
        );
        assert!(start_time("2026-11-27T15:00+15:00").is_err());
        assert!(start_time("2026-11-27T15:00+999999999999999999:00").is_err());
    }

    const EXAMPLE: &str = r#"
[event]
id = "oslo-open"
time_control = "900+10"
allowed_lateness_s = 900

[laws]
edition = "2014"
supervision = "partial"

[alerts]
escalate_urgent_s = 20

[[zones]]
name = "A"
boards = ["1-25", 40]

[[zones]]
name = "B"
boards = ["26-39"]

[[arbiters]]
name = "Ola"
zones = ["A"]
language = "nb"

[[arbiters]]
name = "Eva"
chief = true

[[nodes]]
hardware = "DGT-3000-17"
board = 1

[[nodes]]
hardware = "DGT-3000-18"
board = 2
"#;

    #[test]
    fn a_full_configuration_reads() {
        let config = parse("event.toml", EXAMPLE, Path::new(".")).unwrap();
        assert_eq!(config.event_id.as_deref(), Some("oslo-open"));
        let rules = config.rules(None, None, None, false, None);
        assert_eq!(rules.edition, Edition::Laws2014);
        assert_eq!(rules.game_type, GameType::Rapid, "900+10 is rapid");
        assert_eq!(rules.supervision, Supervision::Partial);
        assert_eq!(config.routing.zone_of(BoardNo(40)), "A");
        assert_eq!(config.routing.zone_of(BoardNo(30)), "B");
        assert_eq!(config.routing.arbiters_of("A"), ["Ola"]);
        assert_eq!(config.routing.chiefs(), ["Eva"]);
        assert_eq!(config.alerts.escalate_urgent_ms, 20_000);
        assert_eq!(config.alerts.escalate_high_ms, 60_000);
        assert_eq!(config.alerts.allowed_lateness_ms, Some(900_000));
        assert_eq!(
            config.bindings[&HardwareId::from("DGT-3000-18")],
            BoardNo(2)
        );
        // The command line overrides the file.
        let rules = config.rules(
            Some(Edition::Laws2023),
            Some(GameType::Blitz),
            None,
            false,
            None,
        );
        assert_eq!(
            (rules.edition, rules.game_type),
            (Edition::Laws2023, GameType::Blitz)
        );
    }

    #[test]
    fn the_pairing_system_is_read_and_a_word_it_does_not_know_refused() {
        use crate::core::standings::System;
        let with = |system: &str| {
            let text = format!("{EXAMPLE}\n[standings]\nsystem = \"{system}\"\n");
            parse("event.toml", &text, Path::new("."))
        };
        let system = |system| with(system).unwrap().standings.system;
        assert_eq!(system("round-robin"), Some(System::RoundRobin));
        assert_eq!(system("swiss"), Some(System::Swiss));
        let e = with("berger").unwrap_err().to_string();
        assert!(
            e.contains("standings.system") && e.contains("\"round-robin\""),
            "{e}"
        );
        let silent = parse("event.toml", EXAMPLE, Path::new(".")).unwrap();
        assert_eq!(silent.standings.system, None);
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let bad = EXAMPLE.replace("edition = \"2014\"", "edition = \"2015\"");
        let e = parse("event.toml", &bad, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("event.toml, line 8: laws.edition: unknown edition"),
            "{e}"
        );

        let bad = EXAMPLE.replace("\"26-39\"", "\"39-26\"");
        let e = parse("event.toml", &bad, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 20: zones[1].boards"), "{e}");

        let bad = EXAMPLE.replace("language = \"nb\"", "language = \"de\"");
        let e = parse("event.toml", &bad, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains("arbiters[0].language"), "{e}");

        let bad = EXAMPLE.replace("escalate_urgent_s = 20", "escalate_urgent = 20");
        let e = parse("event.toml", &bad, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 12") && e.contains("escalate_urgent"),
            "{e}"
        );

        let bad = EXAMPLE.replace("\"26-39\"", "\"25-39\"");
        let e = parse("event.toml", &bad, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains("board 25 is in zones \"A\" and \"B\""), "{e}");
    }
}
