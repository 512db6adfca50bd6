//! The games of rounds that are over: what the API, the feed and the results show of each,
//! kept whole when its board goes on to its next game.
//!
//! A board's game is archived when the board's next round starts ([`super::hub::Hub`]). The
//! archive holds what was shown of it then (the detail of `GET /api/boards/{n}`, the PGN's
//! moves and clocks, when each move was completed) and no position or clock model: a
//! finished game is never played on. The arbiter may still declare or withdraw its result
//! (a resignation nobody entered before the next round); nothing else changes it.
//!
//! Each archived game is journaled (tree `games`) as it changes, so a restart takes it back
//! as it was and need not replay its round's events.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::arbiter::{AuditEntry, Cause, Decision, DecisionError, DecisionRecord, GameResult};
use super::ids::{BoardNo, RoundNo};
use super::laws::Edition;
use super::relay::pgn::{PgnGame, Tags};
use super::relay::{Timeline, Visible};
use super::standing::Standing;
use super::time::HubMs;

/// One board's game of a round that is over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlayedGame {
    pub round: RoundNo,
    pub board: BoardNo,
    /// `GET /api/rounds/{r}/boards/{n}`: the board's detail as it stood when the round ended
    /// (its `status`, `result`, `article` and `decisions` kept up to date here).
    pub detail: DetailJson,
    /// Where the game stands now.
    pub standing: Standing,
    /// Where it stood by the rules: what withdrawing a declared result returns to.
    pub ruled: Standing,
    /// The feed's view: moves, clocks, and when each was completed.
    pub pgn: PgnGame,
    pub timeline: Timeline,
    /// The feed's tags when it was archived (the players, the teams, the time control).
    pub tags: Tags,
    /// The result a flag fall gives (6.9), for a feed that shows it before the arbiter.
    pub flag_result: Option<GameResult>,
}

impl PlayedGame {
    /// What the public sees of it at `now`: the same delay as in play (a round started right
    /// after the game's last move does not show it early).
    pub fn visible(&self, now: HubMs, delay_ms: u64) -> Visible {
        self.timeline.visible(now, delay_ms)
    }

    /// The detail with the standing and the decisions as they are now.
    pub fn detail(&self) -> serde_json::Value {
        let mut detail = self.detail.value();
        if let Some(fields) = detail.as_object_mut() {
            fields.insert("status".into(), self.standing.status.clone().into());
            fields.insert("result".into(), self.standing.result.code().into());
            fields.insert(
                "article".into(),
                self.standing
                    .article
                    .clone()
                    .map_or(serde_json::Value::Null, Into::into),
            );
            fields.insert("round".into(), self.round.0.into());
        }
        detail
    }

    /// The arbiter declares the game's result, or withdraws a declaration (`*`): the only
    /// decision a finished round's game takes.
    pub fn decide(
        &mut self,
        record: &DecisionRecord,
        edition: Edition,
    ) -> Result<AuditEntry, DecisionError> {
        let Decision::Result { result, cause } = record.action.decision else {
            return Err(DecisionError::RoundOver(self.round));
        };
        self.standing = match (result, cause) {
            (GameResult::Ongoing, _) => self.ruled.clone(),
            (_, None) => return Err(DecisionError::CauseMissing),
            (result, Some(cause)) => Standing {
                status: cause.name().to_owned(),
                result,
                article: Cause::article(cause, edition).map(str::to_owned),
            },
        };
        self.timeline
            .result_changed(record.at, self.standing.result.is_decided());
        let entry = AuditEntry {
            record: record.clone(),
            article: cause.and_then(|c| c.article(edition)),
            clock_expects_ms: None,
            clock_side: None,
        };
        let mut detail = self.detail.value();
        if let Some(decisions) = detail
            .get_mut("decisions")
            .and_then(serde_json::Value::as_array_mut)
        {
            decisions.push(serde_json::to_value(&entry).unwrap_or_default());
            self.detail = DetailJson::of(&detail);
        }
        Ok(entry)
    }
}

/// A finished game's detail as its JSON text. It is read rarely (a finished round's board
/// asked for, a decision on it), and held as a `serde_json::Value` tree, an 11-round event's
/// 5,000 games took most of a restarted hub's memory. Stored in the journal as before: the
/// JSON object itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DetailJson(Box<serde_json::value::RawValue>);

impl DetailJson {
    pub fn of(detail: &impl Serialize) -> DetailJson {
        DetailJson(serde_json::value::to_raw_value(detail).expect("a board's detail serializes"))
    }

    /// The detail as a value to read or change.
    pub fn value(&self) -> serde_json::Value {
        serde_json::from_str(self.0.get()).expect("the JSON text of a value")
    }
}

impl PartialEq for DetailJson {
    /// The same detail, whatever the order of its keys in the text.
    fn eq(&self, other: &DetailJson) -> bool {
        self.0.get() == other.0.get() || self.value() == other.value()
    }
}

/// Every archived game, by round and board.
#[derive(Debug, Clone, Default)]
pub struct Archive {
    games: BTreeMap<(RoundNo, BoardNo), PlayedGame>,
}

impl Archive {
    pub fn insert(&mut self, game: PlayedGame) {
        self.games.insert((game.round, game.board), game);
    }

    pub fn get(&self, round: RoundNo, board: BoardNo) -> Option<&PlayedGame> {
        self.games.get(&(round, board))
    }

    pub fn get_mut(&mut self, round: RoundNo, board: BoardNo) -> Option<&mut PlayedGame> {
        self.games.get_mut(&(round, board))
    }

    /// The games of `round`, by board.
    pub fn round(&self, round: RoundNo) -> impl Iterator<Item = &PlayedGame> {
        self.games
            .range((round, BoardNo(0))..=(round, BoardNo(u16::MAX)))
            .map(|(_, game)| game)
    }

    /// Every round with an archived game.
    pub fn rounds(&self) -> Vec<RoundNo> {
        let mut rounds: Vec<RoundNo> = self.games.keys().map(|(round, _)| *round).collect();
        rounds.dedup();
        rounds
    }

    pub fn len(&self) -> usize {
        self.games.len()
    }

    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_games_detail_is_kept_as_text_and_stored_as_the_object_it_was() {
        // The journal's `games` tree keeps each detail as a JSON object, as when it was a
        // `serde_json::Value`: what an earlier hub wrote reads back, and the same is written.
        let stored = r#"{"moves":["e4","c5"],"clock_ms":[5400000,null],"decisions":[]}"#;
        let detail: DetailJson = serde_json::from_str(stored).unwrap();
        assert_eq!(serde_json::to_string(&detail).unwrap(), stored);
        let value = detail.value();
        assert_eq!(value["moves"][1], "c5");
        assert_eq!(DetailJson::of(&value), detail);
    }
}
