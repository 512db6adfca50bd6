//! When the feed shows a result, at event level: a game the rules end at once; a flag fall
//! only once the arbiter declared the result (6.8: the arbiter calls the flag; the hub
//! proposes), or at once where the event configured it; never before the broadcast delay.

use crate::support;

use hub::core::hub::HubConfig;
use hub::core::ids::RoundNo;
use hub::core::laws::Rules;
use hub::core::pairings::Rounds;
use hub::core::relay::public::BroadcastSettings;
use hub::core::time::HubMs;
use hub::view::feed;
use protocol::BoardNo;
use serde_json::json;
use shakmaty::{Color, Position};
use support::events::Script;
use support::hub::TestHub;

/// The hub's core, and its feed's view of board 1 under any settings.
struct Feed {
    hub: TestHub,
}

impl Feed {
    fn new(rules: Rules, control: Option<&str>) -> Feed {
        Feed {
            hub: TestHub::new(HubConfig {
                event: "t".into(),
                rules,
                time_control: control.map(|c| c.parse().unwrap()),
                ..HubConfig::default()
            }),
        }
    }

    fn result(&self, now: u64, settings: &BroadcastSettings) -> String {
        let hub = self.hub.hub();
        let source = feed::FeedSource {
            hall: hub.hall(),
            relay: hub.relay(),
            archive: hub.archive(),
            rounds: &Rounds::default(),
            settings,
            event_id: "t",
        };
        let games = feed::games(
            &source,
            HubMs(now),
            RoundNo::FIRST,
            Some(BoardNo(1)),
            &mut feed::FeedCache::default(),
        )
        .unwrap();
        let pgn = &games[0].pgn;
        pgn.lines()
            .find_map(|l| l.strip_prefix("[Result \"")?.strip_suffix("\"]"))
            .unwrap()
            .to_owned()
    }
}

fn flag_fall() -> (Feed, Script) {
    let mut feed = Feed::new(Rules::default(), Some("5400+30"));
    let mut s = Script::new(BoardNo(1), 5_430_000);
    s.increment_ms = 30_000;
    let start = s.position.board().clone();
    s.show(&mut feed.hub, &start);
    for uci in ["e2e4", "e7e5"] {
        s.play(&mut feed.hub, uci, 5_000);
    }
    s.reading(&mut feed.hub, 1_000, Some(Color::White), Some(Color::White));
    (feed, s)
}

#[test]
fn a_flag_falls_result_waits_for_the_arbiter_unless_configured_6_8() {
    let (mut feed, s) = flag_fall();
    let confirmed = BroadcastSettings::default();
    let at_once = BroadcastSettings {
        flag_results_at_once: true,
        ..BroadcastSettings::default()
    };
    assert_eq!(feed.result(s.now, &confirmed), "*");
    assert_eq!(
        feed.result(s.now, &at_once),
        "0-1",
        "6.9: White's flag, Black can mate"
    );

    // With a delay the flag's result is not shown before the delay passed.
    let delayed = BroadcastSettings {
        delay_ms: 10_000,
        ..at_once.clone()
    };
    assert_eq!(feed.result(s.now + 5_000, &delayed), "*");
    assert_eq!(feed.result(s.now + 10_000, &delayed), "0-1");

    // The arbiter declares it: shown either way.
    let mut action = json!({"decision": "result", "result": "0-1", "cause": "flag_fall"});
    action["arbiter"] = json!("IA Test");
    let (answer, _) = feed.hub.decide(
        HubMs(s.now + 20_000),
        BoardNo(1),
        serde_json::from_value(action).unwrap(),
    );
    answer.expect("the decision fits");
    assert_eq!(feed.result(s.now + 20_000, &confirmed), "0-1");
}

#[test]
fn a_game_the_rules_end_shows_its_result_at_once_5_1_1() {
    let mut feed = Feed::new(Rules::default(), None);
    let mut s = Script::new(BoardNo(1), 300_000);
    let start = s.position.board().clone();
    s.show(&mut feed.hub, &start);
    for uci in ["f2f3", "e7e5", "g2g4", "d8h4"] {
        s.play(&mut feed.hub, uci, 1_000);
    }
    assert_eq!(feed.result(s.now, &BroadcastSettings::default()), "0-1");
}
