//! Moves filled in: the board showed where several moves led, and the hub followed them in
//! the likeliest order without seeing it (`catch_up.rs`). The arbiter confirms that order
//! or puts another in its place (7.4: the arbiter restores what happened); the moves after
//! stay as the board showed them, and the repetitions and the 50-move count follow the
//! order chosen.

use shakmaty::san::SanPlus;
use shakmaty::{Move, Position};

use super::{Game, GameEvent};
use crate::core::arbiter::DecisionError;

/// A stretch of moves the hub filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilledIn {
    /// The first and the last of the moves (plies from 1).
    pub from_ply: usize,
    pub to_ply: usize,
    /// Every order found that reaches the board, the one followed first.
    pub orders: Vec<Vec<Move>>,
    /// The search stopped at a bound: more orders may reach the board.
    pub more_orders: bool,
    /// The arbiter confirmed the order followed (or chose it).
    pub confirmed: bool,
}

impl FilledIn {
    /// Whether move `ply` (from 1) is one of these.
    pub fn holds(&self, ply: usize) -> bool {
        (self.from_ply..=self.to_ply).contains(&ply)
    }
}

impl Game {
    /// The stretches of moves filled in, in the order of the game.
    pub fn filled_in(&self) -> &[FilledIn] {
        &self.filled_in
    }

    /// Each order of `filled` in SAN, from the position before its first move.
    pub fn orders_in_san(&self, filled: &FilledIn) -> Vec<Vec<SanPlus>> {
        let Some(before) = self.history.get(filled.from_ply - 1) else {
            return Vec::new();
        };
        filled
            .orders
            .iter()
            .map(|order| {
                let mut position = before.clone();
                order
                    .iter()
                    .map(|m| SanPlus::from_move_and_play_unchecked(&mut position, *m))
                    .collect()
            })
            .collect()
    }

    /// The arbiter's order for the moves filled in from `from_ply` (SAN from the position
    /// before it): it must reach the position the board showed, and leave every later move
    /// legal. The game then follows it.
    pub fn choose_order(
        &mut self,
        from_ply: usize,
        sans: &[SanPlus],
    ) -> Result<Vec<GameEvent>, DecisionError> {
        let index = self
            .filled_in
            .iter()
            .position(|f| f.from_ply == from_ply)
            .ok_or(DecisionError::NothingFilledIn { ply: from_ply })?;
        let (to_ply, plies) = {
            let filled = &self.filled_in[index];
            (filled.to_ply, filled.to_ply - filled.from_ply + 1)
        };
        if sans.len() != plies {
            return Err(DecisionError::OrderLength {
                from_ply,
                to_ply,
                given: sans.len(),
            });
        }
        if self.starts.iter().any(|(start, _)| *start >= from_ply) {
            return Err(DecisionError::OrderAfterIllegalMove { ply: from_ply });
        }
        // The order from the position before it, then every later move, on a copy.
        let mut position = self.history[from_ply - 1].clone();
        let mut order = Vec::with_capacity(plies);
        for (i, san) in sans.iter().enumerate() {
            let m = san
                .san
                .to_move(&position)
                .map_err(|_| DecisionError::OrderIllegal {
                    ply: from_ply + i,
                    san: san.to_string(),
                })?;
            position.play_unchecked(m);
            order.push(m);
        }
        if position.board() != self.history[to_ply].board() {
            return Err(DecisionError::OrderMissesBoard { from_ply, to_ply });
        }
        for (i, later) in self.moves[to_ply..].iter().enumerate() {
            if !position.is_legal(later.m) {
                return Err(DecisionError::OrderIllegal {
                    ply: to_ply + 1 + i,
                    san: later.san.to_string(),
                });
            }
            position.play_unchecked(later.m);
        }

        // The game again from the position before the stretch, the way a live game grows, so
        // its repetitions, its 50-move count and its ending are the rules' for this order.
        let status = self.status;
        let kept = (self.lapsing.take(), self.shown_successor.take());
        let after = self.moves[from_ply - 1..].to_vec();
        let replaced = order.iter().chain(after[plies..].iter().map(|c| &c.m));
        self.rewind(from_ply - 1);
        for (m, was) in replaced.copied().zip(after.iter()) {
            self.complete(was.at, m);
        }
        (self.lapsing, self.shown_successor) = kept;
        let filled = &mut self.filled_in[index];
        filled.orders.retain(|o| *o != order);
        filled.orders.insert(0, order);
        filled.confirmed = true;
        let mut events = vec![GameEvent::OrderChosen { from_ply, to_ply }];
        if self.status != status && self.status != super::Status::Playing {
            events.push(GameEvent::GameOver {
                status: self.status,
            });
        }
        Ok(events)
    }
}
