//! The hub's own steps that no member owns.

use protocol::{NodeMs, Seq, UplinkBody};

use super::*;

fn heartbeat(board: u16, seq: u64) -> Uplink {
    Uplink::new(
        BoardNo(board),
        Seq(seq),
        NodeMs(seq * 1_000),
        UplinkBody::Heartbeat,
    )
}

#[test]
fn a_session_up_asks_every_board_for_what_follows_its_last_event() {
    let mut hub = Hub::new(HubConfig {
        event: "t".into(),
        ..HubConfig::default()
    });
    for seq in 1..=3 {
        hub.handle_uplink(HubMs(0), heartbeat(4, seq));
    }
    hub.handle_uplink(HubMs(0), heartbeat(9, 1));
    hub.poll_all_durable(HubMs(0));
    hub.handle_session_up(HubMs(1));
    let asked: Vec<(BoardNo, Seq)> = std::iter::from_fn(|| hub.poll_output())
        .filter_map(|output| match output {
            Output::Downlink(board, DownlinkBody::ResendFrom { seq }, _) => Some((board, seq)),
            _ => None,
        })
        .collect();
    assert_eq!(asked, [(BoardNo(4), Seq(4)), (BoardNo(9), Seq(2))]);
}
