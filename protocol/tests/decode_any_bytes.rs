//! Bytes off the network decode to a message or an error, never a panic, and every message
//! survives a round trip.

use proptest::prelude::*;
use protocol::codec::{
    decode_downlink, decode_uplink, encode_downlink, encode_uplink, with_encoded_uplink,
};
use protocol::{
    BoardNo, ClockReport, Color, DecodeError, Downlink, DownlinkBody, Hello, NodeMs, Piece,
    Placement, Role, Seq, Square, Uplink, UplinkBody, PROTOCOL_VERSION,
};

fn color() -> impl Strategy<Value = Color> {
    prop_oneof![Just(Color::White), Just(Color::Black)]
}

fn piece() -> impl Strategy<Value = Piece> {
    (color(), 0..6usize).prop_map(|(color, i)| Piece {
        color,
        role: Role::ALL[i],
    })
}

fn placement() -> impl Strategy<Value = Placement> {
    proptest::collection::vec(proptest::option::of(piece()), 64).prop_map(|squares| {
        let mut placement = Placement::EMPTY;
        for (sq, piece) in Square::all().zip(squares) {
            placement.set(sq, piece);
        }
        placement
    })
}

fn body() -> impl Strategy<Value = UplinkBody> {
    prop_oneof![
        Just(UplinkBody::Heartbeat),
        placement().prop_map(UplinkBody::Placement),
        (
            any::<u32>(),
            any::<u32>(),
            proptest::option::of(color()),
            any::<bool>(),
            any::<bool>(),
            proptest::option::of(color())
        )
            .prop_map(
                |(white_ms, black_ms, running, white_flag, black_flag, pressed_by)| {
                    UplinkBody::Clock(ClockReport {
                        white_ms,
                        black_ms,
                        running,
                        white_flag,
                        black_flag,
                        pressed_by,
                    })
                }
            ),
        // Within the bounds: up to 64 bus addresses of 14 bits.
        proptest::collection::vec(0u16..1 << 14, 0..=UplinkBody::MAX_STRANGERS)
            .prop_map(UplinkBody::Strangers),
        // Up to 16 characters of up to 4 bytes: within Hello::MAX_TEXT.
        (".{0,16}", ".{0,16}", ".{0,16}", 0..Seq::LIMIT.0).prop_map(|(s, b, c, h)| {
            UplinkBody::Hello(Hello {
                software: s,
                board_hw: b,
                clock_hw: c,
                highest_seq: Seq(h),
            })
        }),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_uplink(&bytes);
        let _ = decode_downlink(&bytes);
    }

    #[test]
    fn uplinks_round_trip(board in 1..=BoardNo::MAX.0, seq in 0..Seq::LIMIT.0, ms in 0..NodeMs::LIMIT.0, body in body()) {
        let message = Uplink::new(BoardNo(board), Seq(seq), NodeMs(ms), body);
        prop_assert_eq!(decode_uplink(&encode_uplink(&message)), Ok(message));
    }

    /// Encoded on the stack or, too large for it (more strangers than the protocol takes),
    /// on the heap: the bytes postcard itself makes.
    #[test]
    fn uplinks_encode_on_the_stack_as_postcard_does(board in 1..=BoardNo::MAX.0, seq in 0..Seq::LIMIT.0, ms in 0..NodeMs::LIMIT.0, body in body(), crowd in 200usize..400) {
        let message = Uplink::new(BoardNo(board), Seq(seq), NodeMs(ms), body);
        let large = Uplink::new(BoardNo(board), Seq(seq), NodeMs(ms), UplinkBody::Strangers(vec![(1 << 14) - 1; crowd]));
        prop_assert!(postcard::to_allocvec(&large).unwrap().len() > 256, "past the stack's room");
        for message in [message, large] {
            let postcard = postcard::to_allocvec(&message).unwrap();
            prop_assert_eq!(with_encoded_uplink(&message, <[u8]>::to_vec), postcard.clone());
            prop_assert_eq!(encode_uplink(&message), postcard);
        }
    }

    #[test]
    fn downlinks_round_trip(board in 1..=BoardNo::MAX.0, seq in 0..Seq::LIMIT.0, ack in any::<bool>()) {
        let body = if ack { DownlinkBody::Ack { up_to_seq: Seq(seq) } } else { DownlinkBody::ResendFrom { seq: Seq(seq) } };
        let message = Downlink::new(BoardNo(board), body);
        prop_assert_eq!(decode_downlink(&encode_downlink(&message)), Ok(message));
    }

    /// Numbers past the protocol's bounds are refused by name, whatever else the message holds.
    #[test]
    fn numbers_past_the_bounds_are_refused(seq in Seq::LIMIT.0.., ms in NodeMs::LIMIT.0.., board in BoardNo::MAX.0 + 1.., body in body()) {
        for board in [0, board] {
            let nowhere = Uplink::new(BoardNo(board), Seq(1), NodeMs(1), body.clone());
            prop_assert_eq!(decode_uplink(&encode_uplink(&nowhere)), Err(DecodeError::OutOfRange("board number")));
            let down = encode_downlink(&Downlink::new(BoardNo(board), DownlinkBody::Ack { up_to_seq: Seq(1) }));
            prop_assert_eq!(decode_downlink(&down), Err(DecodeError::OutOfRange("board number")));
        }
        let late = Uplink::new(BoardNo(1), Seq(1), NodeMs(ms), body.clone());
        prop_assert_eq!(decode_uplink(&encode_uplink(&late)), Err(DecodeError::OutOfRange("node time")));
        let far = Uplink::new(BoardNo(1), Seq(seq), NodeMs(1), body);
        prop_assert_eq!(decode_uplink(&encode_uplink(&far)), Err(DecodeError::OutOfRange("sequence number")));
        for body in [DownlinkBody::Ack { up_to_seq: Seq(seq) }, DownlinkBody::ResendFrom { seq: Seq(seq) }, DownlinkBody::ContinueAt { seq: Seq(seq) }] {
            let bytes = encode_downlink(&Downlink::new(BoardNo(1), body));
            prop_assert_eq!(decode_downlink(&bytes), Err(DecodeError::OutOfRange("sequence number")));
        }
    }

    /// A chain's strangers: bus addresses of 14 bits, a bounded number of them.
    #[test]
    fn strangers_past_the_bounds_are_refused(address in (1u16 << 14).., extra in 1usize..8) {
        let wide = Uplink::new(BoardNo(1), Seq(1), NodeMs(1), UplinkBody::Strangers(vec![7, address]));
        prop_assert_eq!(decode_uplink(&encode_uplink(&wide)), Err(DecodeError::OutOfRange("strangers")));
        let many = vec![7; UplinkBody::MAX_STRANGERS + extra];
        let crowd = Uplink::new(BoardNo(1), Seq(1), NodeMs(1), UplinkBody::Strangers(many));
        prop_assert_eq!(decode_uplink(&encode_uplink(&crowd)), Err(DecodeError::OutOfRange("strangers")));
    }

    #[test]
    fn truncation_is_an_error(body in body(), cut in 1usize..8) {
        let bytes = encode_uplink(&Uplink::new(BoardNo(1), Seq(1), NodeMs(1), body));
        let cut = cut.min(bytes.len());
        prop_assert!(decode_uplink(&bytes[..bytes.len() - cut]).is_err());
    }
}

#[test]
fn other_versions_are_named_not_called_garbage() {
    let mut bytes = encode_uplink(&Uplink::new(
        BoardNo(1),
        Seq(1),
        NodeMs(1),
        UplinkBody::Heartbeat,
    ));
    bytes[0] = 4;
    assert_eq!(decode_uplink(&bytes), Err(DecodeError::UnknownVersion(4)));
    // Version 1 had no tags: a node that old is named, not taken.
    bytes[0] = 1;
    assert_eq!(decode_uplink(&bytes), Err(DecodeError::UnknownVersion(1)));
    // Version 2's messages are version 3's but for the version (a journal holds them).
    bytes[0] = 2;
    assert!(decode_uplink(&bytes).is_ok());
    assert_eq!(PROTOCOL_VERSION, 3);
}

/// A `Hello` is kept per board and journaled: its texts are bounded, where the broker would
/// have let 256 KiB through.
#[test]
fn a_hello_with_a_long_text_is_refused() {
    let hello = |board_hw: String| {
        encode_uplink(&Uplink::new(
            BoardNo(1),
            Seq(1),
            NodeMs(1),
            UplinkBody::Hello(Hello {
                software: "board-node 0.1.0".into(),
                board_hw,
                clock_hw: String::new(),
                highest_seq: Seq(0),
            }),
        ))
    };
    assert!(decode_uplink(&hello("Ø".repeat(Hello::MAX_TEXT / 2))).is_ok());
    assert_eq!(
        decode_uplink(&hello("x".repeat(Hello::MAX_TEXT + 1))),
        Err(DecodeError::OutOfRange("hello text"))
    );
    assert_eq!(
        decode_uplink(&hello("x".repeat(256 * 1024))),
        Err(DecodeError::OutOfRange("hello text"))
    );
}

#[test]
fn trailing_bytes_are_rejected() {
    let mut bytes = encode_uplink(&Uplink::new(
        BoardNo(1),
        Seq(1),
        NodeMs(1),
        UplinkBody::Heartbeat,
    ));
    bytes.push(0);
    assert_eq!(decode_uplink(&bytes), Err(DecodeError::TrailingBytes(1)));
}

#[test]
fn a_bad_piece_code_is_malformed() {
    let mut placement = Placement::EMPTY;
    placement.set(
        Square::new(0).unwrap(),
        Some(Piece {
            color: Color::White,
            role: Role::King,
        }),
    );
    let mut bytes = encode_uplink(&Uplink::new(
        BoardNo(1),
        Seq(1),
        NodeMs(1),
        UplinkBody::Placement(placement),
    ));
    // Body tag 1 (Placement) is followed by the 32 packed bytes; square a1 is the low nibble.
    let first_square = bytes.len() - 32;
    bytes[first_square] = 0x0d;
    assert_eq!(decode_uplink(&bytes), Err(DecodeError::Malformed));
}
