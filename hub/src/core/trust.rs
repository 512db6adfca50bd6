//! Which node may speak for which board: the keys the hub issued when it enrolled each
//! node's hardware, and the verdict on every message off the wire (see `protocol::seal`).
//!
//! A board's events are taken only when sealed with the key of the hardware bound to it. A
//! hall the organiser opened (`[access] open_hall`) also takes unsealed events for boards
//! whose node was never enrolled, as a lab does; an enrolled board stays protected even
//! there. Refusals are counted per board; a board refused again and again within
//! [`FORGERY_WINDOW_MS`] gets one technician alert per window.

use std::collections::BTreeMap;

use protocol::seal::{NodeKey, Sealed};
use protocol::Uplink;

use super::bindings::Bindings;
use super::ids::{BoardNo, HardwareId, HubMs, IdMap};

/// Refusals in one window that raise the alert: one forged message can be a stray, three
/// are someone at work.
pub const FORGERY_ALERT_AFTER: u32 = 3;
/// How long refusals are counted together; at most one alert per board per window.
pub const FORGERY_WINDOW_MS: u64 = 10 * 60_000;
/// Boards paged one by one in a window; forgeries for more boards are a flood, paged once
/// for the hall (a technician walks to one board, not to sixty).
pub const FLOOD_AFTER_BOARDS: usize = 3;

/// Who is told of a run of forged messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForgeryPage {
    /// The board's own alert.
    Board { since: HubMs, refused: u32 },
    /// One alert for the hall: the boards paged or forged in this window, since when.
    Hall { since: HubMs, boards: Vec<BoardNo> },
}

/// Why a message was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its tag is not the bound node's (forged, altered, another node's, a zero tag).
    BadTag,
    /// No enrolled node is bound to its board, and the hall takes no unsealed events.
    NotEnrolled,
}

/// The keys and the refusal counts.
#[derive(Debug, Default)]
pub struct Trust {
    open_hall: bool,
    /// Every enrolled hardware's key.
    keys: BTreeMap<HardwareId, NodeKey>,
    /// The key of the hardware bound to each board, rebuilt when bindings or keys change.
    by_board: IdMap<BoardNo, NodeKey>,
    /// Per board: the window's start and the refusals in it.
    refusals: IdMap<BoardNo, (HubMs, u32)>,
    /// Per board: every refusal so far, and the last one's time, for the technician.
    refused: BTreeMap<BoardNo, (u64, HubMs)>,
    /// The boards paged for forgeries in the current window, in order, with when.
    paged: Vec<(HubMs, BoardNo)>,
    /// When the hall was last paged for a flood.
    flood_paged: Option<HubMs>,
}

impl Trust {
    pub fn new(open_hall: bool) -> Trust {
        Trust {
            open_hall,
            ..Trust::default()
        }
    }

    pub fn open_hall(&self) -> bool {
        self.open_hall
    }

    /// The key of `hardware`, if enrolled.
    pub fn key(&self, hardware: &HardwareId) -> Option<&NodeKey> {
        self.keys.get(hardware)
    }

    /// Enrols `hardware` with `fresh` as its key, replacing any earlier key: enrolling again
    /// is how a lost or copied key is replaced, so the old one must stop working (and the
    /// token that enrols must never be a way to read a node's existing key).
    pub fn enrol(&mut self, hardware: &HardwareId, fresh: NodeKey) {
        self.keys.insert(hardware.clone(), fresh);
    }

    /// Sets `hardware`'s key as the journal holds it (`None`: revoked).
    pub fn restore(&mut self, hardware: HardwareId, key: Option<NodeKey>) {
        match key {
            Some(key) => self.keys.insert(hardware, key),
            None => self.keys.remove(&hardware),
        };
    }

    /// Bindings or keys changed: which key each board's messages must carry.
    pub fn rebind_all(&mut self, bindings: &Bindings) {
        self.by_board = bindings
            .map()
            .iter()
            .filter_map(|(hw, board)| Some((*board, self.keys.get(hw)?.clone())))
            .collect();
    }

    /// The bindings or keys of `boards` changed: which key their messages must carry.
    pub fn rebind(&mut self, bindings: &Bindings, boards: impl IntoIterator<Item = BoardNo>) {
        for board in boards {
            match bindings.hardware_on(board).and_then(|hw| self.keys.get(hw)) {
                Some(key) => self.by_board.insert(board, key.clone()),
                None => self.by_board.remove(&board),
            };
        }
    }

    /// The key `board`'s downlinks are sealed with, if its node is enrolled.
    pub fn board_key(&self, board: BoardNo) -> Option<&NodeKey> {
        self.by_board.get(&board)
    }

    /// Every board with refused messages: how many, and when the last one came.
    pub fn refused_boards(&self) -> impl Iterator<Item = (BoardNo, u64, HubMs)> + '_ {
        self.refused
            .iter()
            .map(|(board, (count, last))| (*board, *count, *last))
    }

    /// Every board with an enrolled node, and the node's key.
    pub fn boards(&self) -> impl Iterator<Item = (BoardNo, &NodeKey)> {
        self.by_board.iter().map(|(board, key)| (*board, key))
    }

    /// Whether `sealed` may be taken for its board of `event`.
    pub fn check(&self, event: &str, sealed: &Sealed<Uplink>) -> Result<(), Refusal> {
        match self.by_board.get(&sealed.message.board) {
            Some(key) if sealed.verify(key, event) => Ok(()),
            Some(_) => Err(Refusal::BadTag),
            None if self.open_hall => Ok(()),
            None => Err(Refusal::NotEnrolled),
        }
    }

    /// Counts a refusal at `board`; when the window's count reaches [`FORGERY_ALERT_AFTER`],
    /// the moment to tell the technician, returns when the window began and the count.
    pub fn refused(&mut self, now: HubMs, board: BoardNo) -> Option<(HubMs, u32)> {
        let (total, last) = self.refused.entry(board).or_insert((0, now));
        *total += 1;
        *last = now;
        let (since, count) = self.refusals.entry(board).or_insert((now, 0));
        if now.since(*since) >= FORGERY_WINDOW_MS {
            *since = now;
            *count = 0;
        }
        *count += 1;
        (*count == FORGERY_ALERT_AFTER).then_some((*since, *count))
    }

    /// Who to page for `board`'s run of forgeries (`since`, `refused`: as [`Trust::refused`]
    /// gave it): the board, for the first boards of a window; then the hall, once; then
    /// nobody (the refusals are still counted).
    pub fn forgery_page(
        &mut self,
        now: HubMs,
        board: BoardNo,
        since: HubMs,
        refused: u32,
    ) -> Option<ForgeryPage> {
        self.paged
            .retain(|(at, _)| now.since(*at) < FORGERY_WINDOW_MS);
        if self.paged.len() < FLOOD_AFTER_BOARDS {
            self.paged.push((now, board));
            return Some(ForgeryPage::Board { since, refused });
        }
        if self
            .flood_paged
            .is_some_and(|at| now.since(at) < FORGERY_WINDOW_MS)
        {
            return None;
        }
        self.flood_paged = Some(now);
        let first = self.paged.first().map_or(now, |(at, _)| *at);
        let mut boards: Vec<BoardNo> = self.paged.iter().map(|(_, b)| *b).collect();
        boards.push(board);
        Some(ForgeryPage::Hall {
            since: first,
            boards,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::seal;
    use protocol::{NodeMs, Seq, UplinkBody};

    fn frame(key: Option<&NodeKey>, board: u16) -> Sealed<Uplink> {
        let event = Uplink::new(BoardNo(board), Seq(1), NodeMs(0), UplinkBody::Heartbeat);
        seal::open_uplink(&seal::seal_uplink(key, "ev", seal::Boot(1), &event)).unwrap()
    }

    fn hall(open: bool) -> (Trust, NodeKey) {
        let mut trust = Trust::new(open);
        let hw = HardwareId::from("DGT-1");
        let key = NodeKey::from_bytes([1; 32]);
        trust.enrol(&hw, key.clone());
        let mut bindings = Bindings::default();
        let _ = bindings.bind(&hw, Some(BoardNo(1)));
        trust.rebind(&bindings, [BoardNo(1)]);
        (trust, key)
    }

    #[test]
    fn only_the_bound_nodes_key_speaks_for_a_board() {
        let (trust, key) = hall(false);
        let other = NodeKey::from_bytes([2; 32]);
        assert_eq!(trust.check("ev", &frame(Some(&key), 1)), Ok(()));
        assert_eq!(
            trust.check("ev", &frame(Some(&other), 1)),
            Err(Refusal::BadTag)
        );
        assert_eq!(trust.check("ev", &frame(None, 1)), Err(Refusal::BadTag));
        assert_eq!(
            trust.check("ev", &frame(Some(&key), 2)),
            Err(Refusal::NotEnrolled)
        );
    }

    #[test]
    fn an_open_hall_takes_unsealed_events_only_for_boards_nobody_enrolled() {
        let (trust, key) = hall(true);
        assert_eq!(trust.check("ev", &frame(None, 2)), Ok(()));
        assert_eq!(trust.check("ev", &frame(None, 1)), Err(Refusal::BadTag));
        assert_eq!(trust.check("ev", &frame(Some(&key), 1)), Ok(()));
    }

    #[test]
    fn enrolling_again_replaces_the_key_and_revoking_unbinds_it() {
        let (mut trust, key) = hall(false);
        let hw = HardwareId::from("DGT-1");
        let mut bindings = Bindings::default();
        let _ = bindings.bind(&hw, Some(BoardNo(1)));
        let new = NodeKey::from_bytes([9; 32]);
        trust.enrol(&hw, new.clone());
        trust.rebind_all(&bindings);
        assert_eq!(trust.key(&hw), Some(&new));
        assert_eq!(
            trust.check("ev", &frame(Some(&key), 1)),
            Err(Refusal::BadTag),
            "the old key no longer speaks for the board"
        );
        assert_eq!(trust.check("ev", &frame(Some(&new), 1)), Ok(()));
        trust.restore(hw.clone(), None);
        let mut bindings = Bindings::default();
        let _ = bindings.bind(&hw, Some(BoardNo(1)));
        trust.rebind(&bindings, [BoardNo(1)]);
        assert_eq!(trust.board_key(BoardNo(1)), None);
        trust.rebind_all(&bindings);
        assert_eq!(trust.board_key(BoardNo(1)), None);
        assert_eq!(
            trust.check("ev", &frame(Some(&key), 1)),
            Err(Refusal::NotEnrolled)
        );
    }

    #[test]
    fn the_third_refusal_in_a_window_alerts_once() {
        let mut trust = Trust::new(false);
        let b = BoardNo(4);
        let alerts: Vec<_> = (0..10).map(|i| trust.refused(HubMs(i * 1000), b)).collect();
        assert_eq!(alerts.iter().flatten().count(), 1);
        assert_eq!(alerts[2], Some((HubMs(0), FORGERY_ALERT_AFTER)));
        // A new window counts anew.
        let later = HubMs(FORGERY_WINDOW_MS + 10_000);
        assert_eq!(trust.refused(later, b), None);
        assert_eq!(trust.refused(later, b), None);
        assert_eq!(trust.refused(later, b), Some((later, FORGERY_ALERT_AFTER)));
    }
}
