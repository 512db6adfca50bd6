//! Feeding a replay script to the hub's core, as the live hub and its journal replay do.

use board_node::source::{Reading, Timed};
use hub::core::hall::{Effect, Hall};
use hub::core::intake::Admission;
use hub::core::record::Record;
use hub::core::time::HubMs;
use protocol::{BoardNo, NodeMs, Seq, Uplink, UplinkBody};

/// Admits and applies every reading of `script` on `board`, stamped in game time (the hub's
/// receive time follows the node's); returns the effects.
pub fn feed(hall: &mut Hall, board: BoardNo, script: Vec<Timed>) -> Vec<Effect> {
    let mut effects = Vec::new();
    for (i, timed) in script.into_iter().enumerate() {
        let body = match timed.reading {
            Reading::Placement(p) => UplinkBody::Placement(p),
            Reading::Clock(c) => UplinkBody::Clock(c),
        };
        let event = Uplink::new(board, Seq(i as u64 + 1), NodeMs(timed.game_ms), body);
        let at = HubMs(timed.game_ms);
        assert_eq!(hall.admit(at, &event), Admission::Accept);
        effects.extend(hall.apply(&Record { at, event }));
    }
    effects
}
