//! `[[sections]]`: boards that play under their own time control, game type, edition and
//! pairings.
//!
//! ```toml
//! [[sections]]
//! name = "masters"
//! boards = ["1-60"]
//! time_control = "90 minutes for 40 moves, then 30 minutes, 30 seconds per move from move 1"
//! pairings = "masters.trf"      # its pairing program's TRF: boards 1, 2, … are its own
//!
//! [[sections]]
//! name = "juniors"
//! boards = ["61-100"]
//! time_control = "15+10"
//! game_type = "rapid"           # the [laws] fields: edition, game_type, supervision, chess960
//! supervision = "partial"
//! pairings = "juniors.trf"
//! ```
//!
//! A field a section leaves out is the hall's (`[event] time_control`, `[laws]`). A board in
//! no section plays under the hall's.

use std::ops::Range;
use std::path::Path;

use protocol::time_control::TimeControl;
use serde::Deserialize;
use toml::Spanned;

use super::{board_range, BoardsItem, ConfigError, GameTypeName, SupervisionName};
use crate::core::ids::{boards_of, BoardNo};
use crate::core::laws::{self, Edition, GameType, Rules, Supervision};
use crate::core::sections::Section;
use crate::pairings::{trf::Trf, Tournament};

/// One `[[sections]]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SectionTable {
    name: Spanned<String>,
    boards: Vec<Spanned<BoardsItem>>,
    time_control: Option<Spanned<String>>,
    edition: Option<Spanned<String>>,
    game_type: Option<GameTypeName>,
    supervision: Option<SupervisionName>,
    chess960: Option<bool>,
    /// The section's pairing program's TRF.
    pairings: Option<Spanned<String>>,
}

/// What reading the sections needs from the rest of the file.
pub(super) struct HallDefaults<'a> {
    /// The hall's rules and time control, for what a section leaves out.
    pub rules: Rules,
    pub time_control: Option<&'a TimeControl>,
    pub base: &'a Path,
    pub invalid: &'a dyn Fn(Range<usize>, &str, String) -> ConfigError,
}

/// The sections, their pairings added to `tournament`, and the pairing files they name.
pub(super) fn read(
    tables: &[SectionTable],
    hall: &HallDefaults<'_>,
    tournament: &mut Tournament,
) -> Result<(Vec<Section>, Vec<std::path::PathBuf>), ConfigError> {
    let invalid = hall.invalid;
    let mut sections: Vec<Section> = Vec::new();
    let mut files = Vec::new();
    for (i, table) in tables.iter().enumerate() {
        let field = |name: &str| format!("sections[{i}].{name}");
        let name = table.name.get_ref().clone();
        if name.is_empty() || sections.iter().any(|s| s.name.as_deref() == Some(&name)) {
            let why = format!("{name:?}: every section needs a name of its own");
            return Err(invalid(table.name.span(), &field("name"), why));
        }
        let mut boards = Vec::new();
        for item in &table.boards {
            let range = board_range(item.get_ref())
                .map_err(|why| invalid(item.span(), &field("boards"), why))?;
            if let Some(other) = sections.iter().find(|s| {
                s.boards
                    .iter()
                    .any(|r| r.start() <= range.end() && range.start() <= r.end())
            }) {
                let why = format!(
                    "boards {}-{} are section {:?}'s too",
                    range.start(),
                    range.end(),
                    other.name.as_deref().unwrap_or("")
                );
                return Err(invalid(item.span(), &field("boards"), why));
            }
            boards.push(range);
        }
        if boards.is_empty() {
            return Err(invalid(
                table.name.span(),
                &field("boards"),
                "a section has boards".into(),
            ));
        }
        let time_control = match &table.time_control {
            Some(tc) => Some(
                TimeControl::parse_any(tc.get_ref())
                    .map_err(|why| invalid(tc.span(), &field("time_control"), why.to_string()))?,
            ),
            None => hall.time_control.cloned(),
        };
        let edition = match &table.edition {
            Some(e) => e
                .get_ref()
                .parse::<Edition>()
                .map_err(|why| invalid(e.span(), &field("edition"), why.to_string()))?,
            None => hall.rules.edition,
        };
        let game_type = match table.game_type {
            Some(g) => GameType::from(g),
            // The section's own time control decides its speed, as the hall's does.
            None if table.time_control.is_some() => time_control
                .as_ref()
                .map_or(hall.rules.game_type, |tc| laws::speed(tc, edition)),
            None => hall.rules.game_type,
        };
        let rules = Rules {
            edition,
            game_type,
            supervision: table
                .supervision
                .map_or(hall.rules.supervision, Supervision::from),
            chess960: table.chess960.unwrap_or(hall.rules.chess960),
        };
        if let Some(file) = &table.pairings {
            let path = hall.base.join(file.get_ref());
            let text = super::file::read_text(&path).map_err(|e| {
                invalid(
                    file.span(),
                    &field("pairings"),
                    format!("{}: {e}", path.display()),
                )
            })?;
            let trf = Trf::parse(&text)
                .map_err(|e| invalid(file.span(), &field("pairings"), e.to_string()))?;
            let numbered: Vec<BoardNo> = boards.iter().flat_map(boards_of).collect();
            tournament.add_section(
                &name,
                &numbered,
                Tournament::new(Some(trf), Vec::new(), None),
            );
            files.push(path);
        }
        sections.push(Section {
            name: Some(name),
            boards,
            rules,
            time_control,
        });
    }
    Ok((sections, files))
}
