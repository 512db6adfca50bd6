//! Frozen bytes of every message. A change here breaks every deployed board node: never edit
//! an expectation, add a new protocol version instead. Version 2 (the tags of
//! [`protocol::seal`]) changed the first byte of every message; version 3 (the node's boot in
//! every uplink frame, covered by every downlink's tag) changed it again and nothing else of
//! the messages, whose version-2 bytes (a journal's) still decode. The frames with their tags
//! are frozen at the end: version 3's; version 2's are refused.

use protocol::codec::{decode_downlink, decode_uplink, encode_downlink, encode_uplink};
use protocol::{
    BoardNo, ClockReport, Color, Downlink, DownlinkBody, Hello, NodeHealth, NodeMs, Piece,
    Placement, Role, Seq, Square, Uplink, UplinkBody,
};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A message of version 2, whose bytes are frozen below.
fn uplink(body: UplinkBody) -> Uplink {
    Uplink {
        version: 2,
        ..Uplink::new(BoardNo(300), Seq(70_000), NodeMs(1_763_800_000_123), body)
    }
}

fn downlink(body: DownlinkBody) -> Downlink {
    Downlink {
        version: 2,
        ..Downlink::new(BoardNo(7), body)
    }
}

/// The standard starting position, built square by square.
fn start_position() -> Placement {
    let back = [
        Role::Rook,
        Role::Knight,
        Role::Bishop,
        Role::Queen,
        Role::King,
        Role::Bishop,
        Role::Knight,
        Role::Rook,
    ];
    let mut placement = Placement::EMPTY;
    for (file, role) in (0u8..).zip(back) {
        for (color, back_rank, pawn_rank) in [(Color::White, 0, 1), (Color::Black, 7, 6)] {
            let sq = |rank| Square::from_coords(file, rank).unwrap();
            placement.set(sq(back_rank), Some(Piece { color, role }));
            let pawn = Piece {
                color,
                role: Role::Pawn,
            };
            placement.set(sq(pawn_rank), Some(pawn));
        }
    }
    placement
}

fn check_uplink(message: Uplink, expected: &str) {
    let bytes = encode_uplink(&message);
    assert_eq!(hex(&bytes), expected, "{message:?}");
    assert_eq!(decode_uplink(&bytes), Ok(message));
}

#[test]
fn heartbeat() {
    check_uplink(uplink(UplinkBody::Heartbeat), "02ac02f0a204fbccb0d5aa3303");
}

#[test]
fn health() {
    // Variant 4 (appended), two bools, the error count and the node time as varints (the
    // same time as the envelope's, so the same bytes).
    check_uplink(
        uplink(UplinkBody::Health(NodeHealth {
            board_connected: true,
            clock_connected: false,
            serial_errors: 3,
            since: NodeMs(1_763_800_000_123),
        })),
        "02ac02f0a204fbccb0d5aa3304010003fbccb0d5aa33",
    );
}

#[test]
fn pace() {
    // Variant 5 (appended), then the pace as a varint: 200,000 = 0xc0 0x9a 0x0c.
    check_uplink(
        uplink(UplinkBody::Pace {
            node_ms_per_s: 200_000,
        }),
        "02ac02f0a204fbccb0d5aa3305c09a0c",
    );
}

#[test]
fn hello() {
    check_uplink(
        uplink(UplinkBody::Hello(Hello {
            software: "board-node 0.1.0".into(),
            board_hw: "DGT-1234".into(),
            clock_hw: "".into(),
            highest_seq: Seq(69_999),
        })),
        "02ac02f0a204fbccb0d5aa330010626f6172642d6e6f646520302e312e30\
         084447542d3132333400efa204",
    );
}

#[test]
fn placement_of_the_start_position() {
    assert_eq!(
        start_position().board_fen(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    );
    check_uplink(
        uplink(UplinkBody::Placement(start_position())),
        "02ac02f0a204fbccb0d5aa330124533642111111110000000000000000\
         0000000000000000777777778ab99ca8",
    );
}

#[test]
fn clock_press() {
    check_uplink(
        uplink(UplinkBody::Clock(ClockReport {
            white_ms: 5_400_000,
            black_ms: 299_999,
            running: Some(Color::Black),
            white_flag: false,
            black_flag: true,
            pressed_by: Some(Color::White),
        })),
        "02ac02f0a204fbccb0d5aa3302c0cbc902dfa712010100010100",
    );
}

#[test]
fn downlinks() {
    let ack = downlink(DownlinkBody::Ack {
        up_to_seq: Seq(128),
    });
    let bytes = encode_downlink(&ack);
    assert_eq!(hex(&bytes), "0207008001");
    assert_eq!(decode_downlink(&bytes), Ok(ack));

    let resend = downlink(DownlinkBody::ResendFrom { seq: Seq(5) });
    let bytes = encode_downlink(&resend);
    assert_eq!(hex(&bytes), "02070105");
    assert_eq!(decode_downlink(&bytes), Ok(resend));

    let continue_at = downlink(DownlinkBody::ContinueAt { seq: Seq(300) });
    let bytes = encode_downlink(&continue_at);
    assert_eq!(hex(&bytes), "020702ac02");
    assert_eq!(decode_downlink(&bytes), Ok(continue_at));
}

/// Version 3 changes the first byte of every message and nothing else.
#[test]
fn version_3_messages_differ_only_in_their_version() {
    let v2 = uplink(UplinkBody::Heartbeat);
    let v3 = Uplink {
        version: 3,
        ..v2.clone()
    };
    assert_eq!(
        hex(&encode_uplink(&v3)),
        format!("03{}", &hex(&encode_uplink(&v2))[2..])
    );
    assert_eq!(decode_uplink(&encode_uplink(&v3)), Ok(v3));
    assert_eq!(
        decode_uplink(&encode_uplink(&v2)),
        Ok(v2),
        "a journal's version 2"
    );
}

/// The frames on the wire (version 3): an uplink, its node's boot and their tag; a downlink
/// and its tag, which covers the boot of the node it is for. The tags were computed with
/// Python's `hmac` module, independently of this crate:
/// `hmac.new(key, b"zeitnot/up\0" + b"open-2026" + b"\0" + message + boot, sha256).digest()[:16]`.
#[test]
fn sealed_frames() {
    use protocol::seal::{self, Boot, NodeKey};
    let key = NodeKey::from_bytes(std::array::from_fn(|i| i as u8));
    assert_eq!(
        key.to_text(),
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    );
    let boot = Boot(0x0123_4567_89ab_cdef);
    let heartbeat = Uplink {
        version: 3,
        ..uplink(UplinkBody::Heartbeat)
    };
    let frame = seal::seal_uplink(Some(&key), "open-2026", boot, &heartbeat);
    assert_eq!(
        hex(&frame),
        "03ac02f0a204fbccb0d5aa3303\
         0123456789abcdef\
         7f6f38def4baacaa3286e58d1c3dfc2c"
    );
    let opened = seal::open_uplink(&frame).unwrap();
    assert!(opened.verify(&key, "open-2026"));
    assert_eq!(opened.message, heartbeat);
    assert_eq!(opened.boot, boot);

    let ack = Downlink {
        version: 3,
        ..downlink(DownlinkBody::Ack {
            up_to_seq: Seq(128),
        })
    };
    let frame = seal::seal_downlink(Some(&key), "open-2026", boot, &ack);
    assert_eq!(hex(&frame), "0307008001ccf8a76041c128fb647511e95bb61348");
    assert!(seal::open_downlink(&frame, boot)
        .unwrap()
        .verify(&key, "open-2026"));
    assert!(!seal::open_downlink(&frame, Boot(1))
        .unwrap()
        .verify(&key, "open-2026"));

    // Version 2's frame of the same heartbeat (no boot): refused by its version.
    let v2 = hex_bytes("02ac02f0a204fbccb0d5aa33037a0cb12e1f1cc0763e0cb5fe90276640");
    assert_eq!(
        seal::open_uplink(&v2),
        Err(protocol::DecodeError::UnknownVersion(2))
    );

    // Without a key: zeros.
    let frame = seal::seal_uplink(None, "open-2026", boot, &heartbeat);
    assert_eq!(hex(&frame[frame.len() - 16..]), "0".repeat(32));
    // The MQTT password a node derives from its key.
    assert_eq!(key.derive("mqtt"), "e85412bbe0fe8a06192dd3e7e0132fe5");
}

fn hex_bytes(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}
