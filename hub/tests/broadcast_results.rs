//! When the feed shows a result, at event level: a game the rules end at once; a flag fall
//! only once the arbiter declared the result (6.8: the arbiter calls the flag; the hub
//! proposes), or at once where the event configured it; never before the broadcast delay.

mod support;

use hub::core::arbiter::DecisionRecord;
use hub::core::hall::{Effect, Hall};
use hub::core::laws::Rules;
use hub::core::relay::Relay;
use hub::core::time::HubMs;
use hub::pairings::Rounds;
use hub::view::feed::{self, BroadcastSettings};
use protocol::BoardNo;
use serde_json::json;
use shakmaty::{Color, Position};
use support::events::Script;

struct Feed {
    hall: Hall,
    relay: Relay,
}

impl Feed {
    fn take(&mut self, s: &Script, effects: Vec<Effect>) {
        for effect in &effects {
            self.relay.on_effect(HubMs(s.now), effect);
        }
    }

    fn result(&self, now: u64, settings: &BroadcastSettings) -> String {
        let games = feed::games(
            &self.hall,
            &self.relay,
            &Rounds::default(),
            settings,
            "t",
            HubMs(now),
            1,
            Some(1),
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
    let mut feed = Feed {
        hall: Hall::new(Rules::default()).with_time_control(Some("5400+30".parse().unwrap())),
        relay: Relay::default(),
    };
    let mut s = Script::new(BoardNo(1), 5_430_000);
    s.increment_ms = 30_000;
    let start = s.position.board().clone();
    let effects = s.show(&mut feed.hall, &start);
    feed.take(&s, effects);
    for uci in ["e2e4", "e7e5"] {
        let effects = s.play(&mut feed.hall, uci, 5_000);
        feed.take(&s, effects);
    }
    let effects = s.reading(
        &mut feed.hall,
        1_000,
        Some(Color::White),
        Some(Color::White),
    );
    feed.take(&s, effects);
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
    let record = DecisionRecord {
        id: 1,
        board: 1,
        at: HubMs(s.now + 20_000),
        after_seq: s.last_seq(),
        action: serde_json::from_value(action).unwrap(),
    };
    for effect in feed.hall.decide(&record).unwrap() {
        feed.relay.on_effect(record.at, &effect);
    }
    feed.relay.on_decision(&record);
    assert_eq!(feed.result(s.now + 20_000, &confirmed), "0-1");
}

#[test]
fn a_game_the_rules_end_shows_its_result_at_once_5_1_1() {
    let mut feed = Feed {
        hall: Hall::new(Rules::default()),
        relay: Relay::default(),
    };
    let mut s = Script::new(BoardNo(1), 300_000);
    let start = s.position.board().clone();
    let effects = s.show(&mut feed.hall, &start);
    feed.take(&s, effects);
    for uci in ["f2f3", "e7e5", "g2g4", "d8h4"] {
        let effects = s.play(&mut feed.hall, uci, 1_000);
        feed.take(&s, effects);
    }
    assert_eq!(feed.result(s.now, &BroadcastSettings::default()), "0-1");
}
