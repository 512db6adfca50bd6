//! A board node played by a test through a real broker: it publishes what a real node
//! would (a hello, placements, clock readings and presses), without an outbox.

use std::time::Instant;

use protocol::seal::{self, NodeKey};
use protocol::{topic, BoardNo, ClockReport, Hello, NodeMs, Seq, Uplink, UplinkBody};
use rumqttc::{AsyncClient, QoS};
use shakmaty::{Chess, Position, Square};

/// A board node played by the test: it publishes what a real node would.
pub struct TestBoard {
    pub board: u16,
    seq: u64,
    started: Instant,
    pub position: Chess,
    /// White's and Black's time on the clock.
    pub clock: [u32; 2],
    client: AsyncClient,
    /// The key the hub issued for this board's hardware (`board-N`).
    key: NodeKey,
}

/// An MQTT session logged in as `enrolment`'s node, connected: what a [`TestBoard`] of that
/// board publishes through (the broker's ACL lets a node's login publish its own board only).
pub async fn node_session(port: u16, enrolment: &super::Enrolment) -> AsyncClient {
    let broker = link::BrokerAddr::plain("127.0.0.1", port);
    let (client, mut events) = link::start(&broker, enrolment.node_link());
    while !matches!(events.recv().await, Some(link::LinkEvent::Connected)) {}
    tokio::spawn(async move { while events.recv().await.is_some() {} });
    client
}

impl TestBoard {
    /// A board whose node (hardware `board-N`) `enrolment` enrolled with the hub.
    pub async fn start(board: u16, client: AsyncClient, enrolment: &super::Enrolment) -> TestBoard {
        assert_eq!(enrolment.hardware, format!("board-{board}"));
        let mut b = TestBoard {
            board,
            seq: 0,
            started: Instant::now(),
            position: Chess::default(),
            clock: [900_000; 2],
            client,
            key: enrolment.node_key(),
        };
        b.send(UplinkBody::Hello(Hello {
            software: "alerts-e2e".into(),
            board_hw: format!("board-{board}"),
            clock_hw: format!("clock-{board}"),
            highest_seq: Seq(0),
        }))
        .await;
        let start = b.position.board().clone();
        b.show(&start).await;
        b.reading(Some(protocol::Color::White), None).await;
        b
    }

    /// Publishes one event; returns when it left.
    pub async fn send(&mut self, body: UplinkBody) -> Instant {
        self.seq += 1;
        let at = NodeMs(self.started.elapsed().as_millis() as u64);
        let event = Uplink::new(BoardNo(self.board), Seq(self.seq), at, body);
        let sent = Instant::now();
        self.client
            .publish(
                topic::uplink("default", BoardNo(self.board)),
                QoS::AtLeastOnce,
                false,
                seal::seal_uplink(Some(&self.key), "default", seal::Boot(1), &event),
            )
            .await
            .unwrap();
        sent
    }

    pub async fn show(&mut self, board: &shakmaty::Board) -> Instant {
        self.send(UplinkBody::Placement(board_node::sensors::placement(board)))
            .await
    }

    pub async fn reading(
        &mut self,
        running: Option<protocol::Color>,
        flag: Option<protocol::Color>,
    ) -> Instant {
        if let Some(flagged) = flag {
            self.clock[usize::from(flagged == protocol::Color::Black)] = 0;
        }
        self.send(UplinkBody::Clock(ClockReport {
            white_ms: self.clock[0],
            black_ms: self.clock[1],
            running,
            white_flag: flag == Some(protocol::Color::White),
            black_flag: flag == Some(protocol::Color::Black),
            pressed_by: None,
        }))
        .await
    }

    /// Sets `board` down and presses the clock for the side to move.
    pub async fn press_with(&mut self, board: &shakmaty::Board) -> Instant {
        self.show(board).await;
        let mover = self.position.turn();
        let (by, next) = match mover {
            shakmaty::Color::White => (protocol::Color::White, protocol::Color::Black),
            shakmaty::Color::Black => (protocol::Color::Black, protocol::Color::White),
        };
        let i = usize::from(mover == shakmaty::Color::Black);
        self.clock[i] = self.clock[i] - 2_000 + 10_000;
        self.send(UplinkBody::Clock(ClockReport {
            white_ms: self.clock[0],
            black_ms: self.clock[1],
            running: Some(next),
            white_flag: false,
            black_flag: false,
            pressed_by: Some(by),
        }))
        .await
    }

    pub async fn play(&mut self, uci: &str) -> Instant {
        let m = uci
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(&self.position)
            .unwrap();
        let mut after = self.position.clone();
        after.play_unchecked(m);
        let sent = self.press_with(after.board()).await;
        self.position = after;
        sent
    }
}

/// What happens at a board that an arbiter must handle.
#[derive(Clone, Copy)]
pub enum Incident {
    /// White's flag falls (6.9).
    FlagFall,
    /// Black moves the king two squares and presses (7.5.5).
    IllegalMove,
    /// A player stops the clock (6.11.2).
    PausedClock,
}

impl Incident {
    pub fn kind(self) -> &'static str {
        match self {
            Incident::FlagFall => "flag_fall",
            Incident::IllegalMove => "illegal_move",
            Incident::PausedClock => "clock_paused",
        }
    }

    pub fn article(self) -> &'static str {
        match self {
            Incident::FlagFall => "6.9",
            Incident::IllegalMove => "7.5.5",
            Incident::PausedClock => "6.11.2",
        }
    }

    /// Makes it happen at `board`; when the deciding message left.
    pub async fn cause(self, board: &mut TestBoard) -> Instant {
        match self {
            Incident::FlagFall => {
                board.play("e2e4").await;
                board.play("e7e5").await;
                let white = Some(protocol::Color::White);
                board.reading(white, white).await
            }
            Incident::IllegalMove => {
                board.play("e2e4").await;
                let mut illegal = board.position.board().clone();
                let king = illegal.remove_piece_at(Square::E8).unwrap();
                illegal.set_piece_at(Square::E6, king);
                board.press_with(&illegal).await
            }
            Incident::PausedClock => {
                board.play("d2d4").await;
                board.reading(None, None).await
            }
        }
    }
}
