//! Forged messages page the technician only for a board of the hall: a node enrolled for it,
//! or a game on it. A client that types any board number into a forged uplink is counted,
//! never paged (a login typing boards 1 to 10,000 once raised a `forged_message` for each).

use crate::support;

use hub::core::hub::HubConfig;
use hub::core::time::HubMs;
use protocol::seal::{self, NodeKey};
use protocol::{BoardNo, NodeMs, Seq, Uplink, UplinkBody};
use support::hub::TestHub;

fn forged(board: u16, seq: u64, key: Option<&NodeKey>) -> Vec<u8> {
    let event = Uplink::new(BoardNo(board), Seq(seq), NodeMs(0), UplinkBody::Heartbeat);
    seal::seal_uplink(key, "default", seal::Boot(1), &event)
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

#[test]
fn a_flood_of_forgeries_for_many_boards_is_one_alert_for_the_hall() {
    let mut hub = TestHub::new(HubConfig::default());
    for board in 1..=20u16 {
        let key = NodeKey::from_bytes([board as u8; 32]);
        hub.enrol(HubMs(1_000), &format!("DGT-{board}"), BoardNo(board), key);
    }
    let wrong = NodeKey::from_bytes([99; 32]);
    let mut raised = Vec::new();
    for seq in 1..=3 {
        for board in 1..=20u16 {
            let at = HubMs(2_000 + seq * 100 + u64::from(board));
            raised.extend(hub.sealed_uplink(at, &forged(board, seq, Some(&wrong))));
        }
    }
    let kinds: Vec<(String, Option<BoardNo>)> = raised
        .iter()
        .map(|c| (support::serde_name(&c.alert.kind), c.alert.board))
        .collect();
    let per_board = kinds.iter().filter(|(k, _)| k == "forged_message").count();
    let flood: Vec<_> = raised
        .iter()
        .filter(|c| support::serde_name(&c.alert.kind) == "forged_flood")
        .collect();
    assert_eq!(
        per_board, 3,
        "the first boards are paged one by one: {kinds:?}"
    );
    assert_eq!(flood.len(), 1, "then one alert for the hall: {kinds:?}");
    assert_eq!(flood[0].alert.board, None);
    assert_eq!(
        flood[0].alert.facts.boards,
        vec![BoardNo(1), BoardNo(2), BoardNo(3), BoardNo(4)],
        "it names the boards"
    );
    // Later in the same window: nobody more is paged; the refusals are still counted.
    let mut later = Vec::new();
    for seq in 4..=6 {
        later.extend(hub.sealed_uplink(HubMs(60_000 + seq), &forged(5, seq, Some(&wrong))));
    }
    assert!(later.is_empty(), "{later:#?}");
}
