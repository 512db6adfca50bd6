//! Each board's node stream as the journal holds it, to tell a resend from another node.
//!
//! A node resends what the hub has not acknowledged, so duplicates are normal; but a
//! duplicate whose content differs from the journaled event under its number is another
//! node's stream (a node replaced mid-game, or one that lost its outbox, starts again at 1).
//! Such a node is told to continue after the journal (`ContinueAt`), at most once a second
//! per board (its window of duplicates arrives in a burst), and is never acknowledged: that
//! would make it forget events the hub does not have.

use std::collections::HashMap;

use protocol::{codec, BoardNo, Seq, Uplink};

use crate::core::fingerprint::fnv1a;
use crate::core::time::HubMs;

/// How often the same board's node is told again to continue at the same point.
pub const CONTINUE_RETRY_MS: u64 = 1_000;

#[derive(Debug, Default)]
pub struct Streams {
    /// Per board, the fingerprint of each journaled event, by sequence number − 1.
    journaled: HashMap<BoardNo, Vec<u64>>,
    /// The last `ContinueAt` sent to each board, and when.
    continued: HashMap<BoardNo, (Seq, HubMs)>,
}

fn print(event: &Uplink) -> u64 {
    fnv1a(&codec::encode_uplink(event))
}

impl Streams {
    /// `event` was journaled (live or on replay), next in its board's sequence.
    pub fn journaled(&mut self, event: &Uplink) {
        let prints = self.journaled.entry(event.board).or_default();
        let index = usize::try_from(event.seq.0.saturating_sub(1)).unwrap_or(usize::MAX);
        if index == prints.len() {
            prints.push(print(event));
        }
    }

    /// Whether a duplicate of a journaled number differs from what the journal holds.
    pub fn diverges(&self, event: &Uplink) -> bool {
        let index = usize::try_from(event.seq.0.saturating_sub(1)).unwrap_or(usize::MAX);
        self.journaled
            .get(&event.board)
            .and_then(|prints| prints.get(index))
            .is_some_and(|journaled| *journaled != print(event))
    }

    /// Where the board's node is to continue (after `accepted`), if it is due to be told.
    pub fn continue_at(&mut self, now: HubMs, board: BoardNo, accepted: Seq) -> Option<Seq> {
        let seq = accepted.next();
        let due = match self.continued.get(&board) {
            Some((asked, at)) => *asked != seq || now.since(*at) >= CONTINUE_RETRY_MS,
            None => true,
        };
        due.then(|| {
            self.continued.insert(board, (seq, now));
            seq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{NodeMs, UplinkBody};

    fn event(seq: u64, at: u64) -> Uplink {
        Uplink::new(BoardNo(3), Seq(seq), NodeMs(at), UplinkBody::Heartbeat)
    }

    #[test]
    fn a_resend_is_the_same_event_another_nodes_is_not() {
        let mut streams = Streams::default();
        streams.journaled(&event(1, 100));
        streams.journaled(&event(2, 200));
        assert!(!streams.diverges(&event(2, 200)), "a resend");
        assert!(
            streams.diverges(&event(2, 999)),
            "another node's second event"
        );
        assert!(!streams.diverges(&event(3, 300)), "not journaled yet");
    }

    #[test]
    fn the_node_is_told_to_continue_once_a_second() {
        let mut streams = Streams::default();
        let board = BoardNo(3);
        assert_eq!(streams.continue_at(HubMs(0), board, Seq(40)), Some(Seq(41)));
        assert_eq!(streams.continue_at(HubMs(500), board, Seq(40)), None);
        assert_eq!(
            streams.continue_at(HubMs(1_000), board, Seq(40)),
            Some(Seq(41))
        );
        assert_eq!(
            streams.continue_at(HubMs(1_100), board, Seq(41)),
            Some(Seq(42)),
            "a new point is news"
        );
    }
}
