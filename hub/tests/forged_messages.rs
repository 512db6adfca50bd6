//! Forged messages page the technician only for a board of the hall: a node enrolled for it,
//! or a game on it. A client that types any board number into a forged uplink is counted,
//! never paged (issue 31: a login raised `forged_message` for boards 1 to 10,000).

mod support;

use hub::core::hub::HubConfig;
use hub::core::time::HubMs;
use protocol::seal::{self, NodeKey};
use protocol::{BoardNo, NodeMs, Seq, Uplink, UplinkBody};
use support::hub::TestHub;

fn forged(board: u16, seq: u64, key: Option<&NodeKey>) -> Vec<u8> {
    let event = Uplink::new(BoardNo(board), Seq(seq), NodeMs(0), UplinkBody::Heartbeat);
    seal::seal_uplink(key, "default", &event)
}

#[test]
fn a_forged_run_pages_for_an_enrolled_board_and_not_for_a_number_nobody_uses() {
    let mut hub = TestHub::new(HubConfig::default());
    let key = NodeKey::from_bytes([4; 32]);
    hub.enrol(HubMs(1_000), "DGT-1", BoardNo(1), key);
    let wrong = NodeKey::from_bytes([9; 32]);
    let mut raised = Vec::new();
    for seq in 1..=3 {
        let at = HubMs(2_000 + seq);
        raised.extend(hub.sealed_uplink(at, &forged(1, seq, Some(&wrong))));
        raised.extend(hub.sealed_uplink(at, &forged(4_321, seq, None)));
        raised.extend(hub.sealed_uplink(at, &forged(9_999, seq, Some(&wrong))));
    }
    let boards: Vec<Option<BoardNo>> = raised
        .iter()
        .filter(|c| support::serde_name(&c.alert.kind) == "forged_message")
        .map(|c| c.alert.board)
        .collect();
    assert_eq!(boards, vec![Some(BoardNo(1))], "{raised:#?}");
    assert!(
        hub.hall().board(BoardNo(4_321)).is_none(),
        "nothing of the forgery was kept"
    );
}
