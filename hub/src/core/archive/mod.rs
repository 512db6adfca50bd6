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
use super::board::BoardDetail;
use super::ending::Status;
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
    /// (its `decisions` kept up to date here; its standing is `standing`'s).
    pub detail: BoardDetail,
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

    /// The detail with the standing as it is now.
    pub fn detail(&self) -> BoardDetail {
        let mut detail = self.detail.clone();
        detail.summary.status = self.standing.status;
        detail.summary.result = self.standing.result;
        detail.summary.article = self.standing.article;
        detail.summary.round = self.round;
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
                status: Status::Declared(cause),
                result,
                article: Cause::article(cause, edition).map(Into::into),
            },
        };
        self.timeline
            .result_changed(record.at, self.standing.result.is_decided());
        let entry = AuditEntry {
            record: record.clone(),
            article: cause.and_then(|c| c.article(edition)).map(Into::into),
            clock_expects_ms: None,
            clock_side: None,
        };
        self.detail.decisions.push(entry.clone());
        Ok(entry)
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

    /// Takes a game out: its board plays it again (a forced start undone).
    pub fn remove(&mut self, round: RoundNo, board: BoardNo) -> Option<PlayedGame> {
        self.games.remove(&(round, board))
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
    use crate::core::arbiter::ArbiterAction;
    use crate::core::ids::DecisionId;
    use crate::core::ids::Seq;
    use crate::core::laws::Edition;

    /// `GET /api/boards/1` of the demo after a flag fall and the arbiter's result, as an
    /// earlier hub kept it once decided on: a JSON value (keys in order), without `round`.
    const AFTER_DECISION: &str = include_str!("detail_after_decision.json");
    /// `GET /api/boards/5` of the demo with an illegal move (7.5.5) and the clock's deviation.
    const ILLEGAL_MOVE: &str = include_str!("detail_illegal_move.json");

    fn value(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_detail_an_earlier_hub_archived_reads_typed_and_writes_the_same_fields() {
        for stored in [AFTER_DECISION, ILLEGAL_MOVE] {
            let detail: BoardDetail = serde_json::from_str(stored).unwrap();
            let written = serde_json::to_value(&detail).unwrap();
            let mut expected = value(stored);
            // A detail archived before the summary showed its round reads as round 0; the
            // archive's view gives it the round it is kept under.
            expected["round"] = expected.get("round").cloned().unwrap_or(0.into());
            // Before moves were filled in, none were: an earlier detail reads as none.
            expected["filled_in"] = serde_json::json!([]);
            expected["battery_low"] = serde_json::Value::Null;
            assert_eq!(written, expected);
        }
        let flagged: BoardDetail = serde_json::from_str(AFTER_DECISION).unwrap();
        let flag = flagged.clock.as_ref().unwrap().flag_fall.as_ref().unwrap();
        assert_eq!(
            (flag.article.as_ref(), flag.result),
            ("6.9", Some(GameResult::BlackWins))
        );
        assert_eq!(flagged.decisions[0].article.as_deref(), Some("6.9"));
        let illegal: BoardDetail = serde_json::from_str(ILLEGAL_MOVE).unwrap();
        assert_eq!(illegal.illegal_moves[0].ruling.article, "7.5.5");
    }

    #[test]
    fn an_archived_games_view_takes_its_round_and_standing_and_keeps_each_decision() {
        let detail: BoardDetail = serde_json::from_str(AFTER_DECISION).unwrap();
        let standing = Standing {
            status: detail.summary.status,
            result: detail.summary.result,
            article: detail.summary.article,
        };
        let mut game = PlayedGame {
            round: RoundNo(3),
            board: BoardNo(1),
            detail,
            standing: standing.clone(),
            ruled: standing,
            pgn: PgnGame::default(),
            timeline: Timeline::default(),
            tags: Tags {
                event: "Demo".into(),
                site: "Oslo".into(),
                date: "2026.11.28".into(),
                round: "3.1".into(),
                white: None,
                black: None,
                time_control: Some("900+10".into()),
                game_id: "demo-3-1".into(),
                white_team: None,
                black_team: None,
            },
            flag_result: Some(GameResult::BlackWins),
        };
        assert_eq!(game.detail().summary.round, RoundNo(3));
        // Withdrawn (`*`): back to how the rules left it, the decision in the audit trail.
        let record = DecisionRecord {
            id: DecisionId(2),
            board: BoardNo(1),
            at: HubMs(1_795_881_200_000),
            after_seq: Seq(94),
            round: Some(RoundNo(3)),
            action: ArbiterAction {
                arbiter: "IA Eva".into(),
                decision: Decision::Result {
                    result: GameResult::Ongoing,
                    cause: None,
                },
                note: None,
                override_reason: None,
            },
        };
        game.decide(&record, Edition::Laws2023).unwrap();
        let shown = game.detail();
        assert_eq!(shown.decisions.len(), 2);
        assert_eq!(shown.summary.status.name(), "flag_fall");
        // What the journal keeps reads back as it was.
        let stored = serde_json::to_string(&game).unwrap();
        assert_eq!(serde_json::from_str::<PlayedGame>(&stored).unwrap(), game);
    }
}
