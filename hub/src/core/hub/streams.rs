//! Each board's node stream as the journal holds it, to tell a resend from another node.
//!
//! A node resends what the hub has not acknowledged, so duplicates are normal; but a
//! duplicate whose content differs from the journaled event under its number is another
//! node's stream (a node replaced mid-game, or one that lost its outbox, starts again at 1).
//! Such a node is told to continue after the journal (`ContinueAt`), at most once a second
//! per board (its window of duplicates arrives in a burst), and is never acknowledged: that
//! would make it forget events the hub does not have.

use std::hash::{Hash, Hasher};

use protocol::{BoardNo, Seq, Uplink};

use crate::core::ids::IdMap;
use crate::core::time::HubMs;

/// How often the same board's node is told again to continue at the same point.
pub const CONTINUE_RETRY_MS: u64 = 1_000;

/// How many of a board's first events are kept: a node that starts again from 1 (a node
/// swapped in, or one that lost its outbox) sends at most its window of them before it is
/// told where to continue.
pub const HEAD: u64 = 512;
/// How many of a board's latest events are kept: a resend is of what the node has not seen
/// acknowledged, at most its window.
pub const RECENT: usize = 1_024;

/// One board's stream: fingerprints of its first events and of its latest.
#[derive(Debug, Default)]
struct Stream {
    head: Vec<u64>,
    /// The fingerprints of events `recent_from + 1`, `recent_from + 2`, …
    recent: std::collections::VecDeque<u64>,
    recent_from: u64,
}

#[derive(Debug, Default)]
pub struct Streams {
    journaled: IdMap<BoardNo, Stream>,
    /// The last `ContinueAt` sent to each board, and when.
    continued: IdMap<BoardNo, (Seq, HubMs)>,
}

/// An event's fingerprint: its fields hashed as they are (FxHash), kept in memory only and
/// made again by the replay. Encoding the event to hash its bytes cost a fourteenth of the
/// hub's loop; the nodes' events are sealed, so nobody can choose two that collide.
fn print(event: &Uplink) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    event.hash(&mut hasher);
    hasher.finish()
}

impl Streams {
    /// `event` was journaled (live or on replay), next in its board's sequence.
    pub fn journaled(&mut self, event: &Uplink) {
        let stream = self.journaled.entry(event.board).or_default();
        let seq = event.seq.0;
        let fingerprint = print(event);
        if seq <= HEAD && seq == stream.head.len() as u64 + 1 {
            stream.head.push(fingerprint);
        }
        if seq == stream.recent_from + stream.recent.len() as u64 + 1 {
            stream.recent.push_back(fingerprint);
            if stream.recent.len() > RECENT {
                stream.recent.pop_front();
                stream.recent_from += 1;
            }
        }
    }

    /// A restart resumed `board` after its event `mark` without reading the events before
    /// (its head was read): its stream goes on from there.
    pub fn resume(&mut self, board: BoardNo, mark: Seq) {
        let stream = self.journaled.entry(board).or_default();
        stream.recent.clear();
        stream.recent_from = mark.0;
    }

    /// Whether a duplicate of a journaled number differs from what the journal holds (as far
    /// as its first and latest events are kept).
    pub fn diverges(&self, event: &Uplink) -> bool {
        let Some(stream) = self.journaled.get(&event.board) else {
            return false;
        };
        let seq = event.seq.0;
        let kept = if seq <= HEAD {
            stream
                .head
                .get(usize::try_from(seq.saturating_sub(1)).unwrap_or(usize::MAX))
        } else {
            seq.checked_sub(stream.recent_from + 1)
                .and_then(|i| stream.recent.get(usize::try_from(i).unwrap_or(usize::MAX)))
        };
        kept.is_some_and(|journaled| *journaled != print(event))
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
    fn a_board_keeps_its_first_and_latest_events_and_resumes_after_a_mark() {
        let mut streams = Streams::default();
        for seq in 1..=5_000 {
            streams.journaled(&event(seq, seq * 10));
        }
        // A node starting again from 1 is told apart; so is a late resend gone wrong.
        assert!(streams.diverges(&event(1, 999)));
        assert!(streams.diverges(&event(4_990, 1)));
        assert!(!streams.diverges(&event(4_990, 49_900)), "a resend");
        // What lies between is no longer kept: taken for a resend.
        assert!(!streams.diverges(&event(2_000, 1)));
        // A restart that resumed the board after 9,000 without reading the events before:
        // its head (read again) and what follows are kept.
        let mut resumed = Streams::default();
        for seq in 1..=HEAD {
            resumed.journaled(&event(seq, seq * 10));
        }
        resumed.resume(BoardNo(3), Seq(9_000));
        resumed.journaled(&event(9_001, 90_010));
        assert!(
            resumed.diverges(&event(1, 999)),
            "a new node is still told apart"
        );
        assert!(resumed.diverges(&event(9_001, 1)));
        assert!(!resumed.diverges(&event(9_001, 90_010)));
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
