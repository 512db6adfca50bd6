//! The bytes of every [`Write`] the hub's core asks for: one codec, used by the sled
//! journal ([`super::store`]: each kind in its tree) and by the cluster's stream
//! ([`crate::edge::cluster::record`]: the writes of a flush, each tagged). A board event is
//! the hub's receive time (8 bytes, big-endian) then the event in its wire encoding (the
//! postcard layout frozen by the protocol's golden tests); an arbiter's enrolment is their
//! key then, when any, their zones and language as JSON; anything else is JSON.

use protocol::seal::{NodeKey, KEY_LEN as KEY_LEN_NODE};
use protocol::{codec, BoardNo, Seq, PROTOCOL_VERSION};
use serde::{Deserialize, Serialize};

use super::error::StoreError;
use crate::core::alerts::Language;
use crate::core::hub::Write;
use crate::core::ids::HardwareId;
use crate::core::record::Record;
use crate::core::roster::Member;
use crate::core::time::HubMs;

/// An event's key: the board (2 bytes, big-endian) then its sequence number (8 bytes).
pub const KEY_LEN: usize = 10;
/// The format byte of an event stored one per record.
pub const JOURNAL_FORMAT: u8 = 1;
/// An event stored one per record: the format byte and the receive time.
const HEADER_LEN: usize = 9;

/// What an arbiter's enrolment says besides the key, as stored after it.
#[derive(serde::Serialize, serde::Deserialize)]
struct MemberFacts {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    zones: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    language: Option<Language>,
    #[serde(default, skip_serializing_if = "is_zero")]
    renewed: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An arbiter's stored value: the key, then the zones and language when any.
pub fn member_value(member: &Member) -> Vec<u8> {
    let mut value = member.key.bytes().to_vec();
    if !member.zones.is_empty() || member.language.is_some() || member.renewed != 0 {
        let facts = MemberFacts {
            zones: member.zones.clone(),
            language: member.language,
            renewed: member.renewed,
        };
        value.extend(serde_json::to_vec(&facts).expect("zones serialize"));
    }
    value
}

/// An arbiter's enrolment from its stored value (a key alone before phones: the
/// configuration's zones); why not, if it cannot be read.
pub fn read_member(value: &[u8]) -> Result<Member, String> {
    if value.len() < KEY_LEN_NODE {
        return Err(format!("{} bytes, shorter than a key", value.len()));
    }
    let (key, facts) = value.split_at(KEY_LEN_NODE);
    let key = NodeKey::from_bytes(key.try_into().expect("a key's length"));
    let facts: MemberFacts = if facts.is_empty() {
        MemberFacts {
            zones: Vec::new(),
            language: None,
            renewed: 0,
        }
    } else {
        serde_json::from_slice(facts).map_err(|e| format!("its zones: {e}"))?
    };
    Ok(Member {
        key,
        zones: facts.zones,
        language: facts.language,
        renewed: facts.renewed,
    })
}

/// An event's value as the journal stored one per record (and a round's archive does).
pub fn single_value(at: u64, wire: &[u8]) -> Vec<u8> {
    let mut value = Vec::with_capacity(HEADER_LEN + wire.len());
    value.push(JOURNAL_FORMAT);
    value.extend_from_slice(&at.to_be_bytes());
    value.extend_from_slice(wire);
    value
}

pub fn key(board: BoardNo, seq: Seq) -> [u8; KEY_LEN] {
    let mut key = [0; KEY_LEN];
    key[..2].copy_from_slice(&board.0.to_be_bytes());
    key[2..].copy_from_slice(&seq.0.to_be_bytes());
    key
}

pub fn parse_key(key: &[u8]) -> Result<(BoardNo, Seq), StoreError> {
    let key: [u8; KEY_LEN] = key.try_into().map_err(|_| StoreError::BadKey(key.len()))?;
    let board = u16::from_be_bytes([key[0], key[1]]);
    let seq = u64::from_be_bytes(key[2..].try_into().expect("8 bytes"));
    Ok((BoardNo(board), Seq(seq)))
}

/// An event stored one per record (before batches, and in a round's archive).
pub fn decode(key: &[u8], value: &[u8]) -> Result<Record, StoreError> {
    let (board, seq) = parse_key(key)?;
    if value.len() < HEADER_LEN || value[0] != JOURNAL_FORMAT {
        return Err(StoreError::Unreadable {
            board,
            seq,
            why: format!("header {:?}", &value[..value.len().min(HEADER_LEN)]),
        });
    }
    let at = u64::from_be_bytes(value[1..HEADER_LEN].try_into().expect("8 bytes"));
    decode_event(board, seq, at, &value[HEADER_LEN..])
}

/// `board`'s event `seq`, received at `at`, from its wire encoding.
pub fn decode_event(board: BoardNo, seq: Seq, at: u64, wire: &[u8]) -> Result<Record, StoreError> {
    let unreadable = |why: String| StoreError::Unreadable { board, seq, why };
    let mut message = std::borrow::Cow::Borrowed(wire);
    if message.first() == Some(&1) {
        // Written under protocol 1, whose messages have version 2's layout (2 added the
        // tags on the wire, which the journal does not keep): read as version 2.
        message.to_mut()[0] = PROTOCOL_VERSION as u8;
    }
    let event = codec::decode_uplink(&message).map_err(|e| unreadable(e.to_string()))?;
    if event.board != board || event.seq != seq {
        return Err(unreadable(format!(
            "holds {}/{}",
            event.board.0, event.seq.0
        )));
    }
    Ok(Record {
        at: HubMs(at),
        event,
    })
}

const EVENT: u8 = 1;
const DECISION: u8 = 2;
const ALERT: u8 = 3;
const BINDING: u8 = 4;
const ENROLMENT: u8 = 5;
const ARBITER: u8 = 6;
const ROUND_START: u8 = 7;
const GAME: u8 = 8;

#[derive(Serialize, Deserialize)]
struct BindingBody {
    hardware: HardwareId,
    board: Option<u16>,
}

#[derive(Serialize, Deserialize)]
struct EnrolmentBody {
    hardware: HardwareId,
    key: Option<Vec<u8>>,
}

/// A write as the stream carries it: a tag byte, then its body.
pub fn encode_write(write: &Write) -> Vec<u8> {
    let json = |tag: u8, body: &dyn erased::Json| {
        let mut out = vec![tag];
        out.extend(body.to_json());
        out
    };
    match write {
        Write::Event(record) => {
            let mut out = vec![EVENT];
            out.extend(record.at.0.to_be_bytes());
            out.extend(codec::encode_uplink(&record.event));
            out
        }
        Write::Decision(decision) => json(DECISION, decision),
        Write::Alert(alert) => json(ALERT, alert.as_ref()),
        Write::Binding { hardware, board } => json(
            BINDING,
            &BindingBody {
                hardware: hardware.clone(),
                board: board.map(|b| b.0),
            },
        ),
        Write::Enrolment { hardware, key } => json(
            ENROLMENT,
            &EnrolmentBody {
                hardware: hardware.clone(),
                key: key.as_ref().map(|k| k.bytes().to_vec()),
            },
        ),
        Write::Arbiter { name, member } => {
            let mut out = vec![ARBITER];
            out.extend((name.len() as u32).to_be_bytes());
            out.extend(name.as_bytes());
            if let Some(member) = member {
                out.extend(member_value(member));
            }
            out
        }
        Write::RoundStart(start) => json(ROUND_START, start),
        Write::Game(game) => json(GAME, game.as_ref()),
    }
}

/// A write of the stream from its bytes; why not, if it cannot be read.
pub fn decode_write(bytes: &[u8]) -> Result<Write, String> {
    let (tag, body) = bytes
        .split_first()
        .ok_or_else(|| malformed("an empty write"))?;
    let json = |what: &str| {
        let what = what.to_owned();
        move |e: serde_json::Error| malformed(format!("{what}: {e}"))
    };
    Ok(match *tag {
        EVENT => {
            let (at, wire) = body
                .split_first_chunk::<8>()
                .ok_or_else(|| malformed("an event without its time"))?;
            let event = codec::decode_uplink(wire).map_err(|e| malformed(format!("event: {e}")))?;
            Write::Event(Record {
                at: HubMs(u64::from_be_bytes(*at)),
                event,
            })
        }
        DECISION => Write::Decision(serde_json::from_slice(body).map_err(json("decision"))?),
        ALERT => Write::Alert(Box::new(
            serde_json::from_slice(body).map_err(json("alert"))?,
        )),
        BINDING => {
            let b: BindingBody = serde_json::from_slice(body).map_err(json("binding"))?;
            Write::Binding {
                hardware: b.hardware,
                board: b.board.map(BoardNo),
            }
        }
        ENROLMENT => {
            let e: EnrolmentBody = serde_json::from_slice(body).map_err(json("enrolment"))?;
            let key = e
                .key
                .map(|k| {
                    <[u8; KEY_LEN_NODE]>::try_from(k.as_slice())
                        .map(NodeKey::from_bytes)
                        .map_err(|_| malformed("an enrolment's key is not 32 bytes"))
                })
                .transpose()?;
            Write::Enrolment {
                hardware: e.hardware,
                key,
            }
        }
        ARBITER => {
            let (len, rest) = split_u32(body).ok_or_else(|| malformed("an arbiter: cut"))?;
            if rest.len() < len as usize {
                return Err(malformed("an arbiter's name: cut"));
            }
            let (name, member) = rest.split_at(len as usize);
            let name = String::from_utf8(name.to_vec()).map_err(malformed)?;
            let member = if member.is_empty() {
                None
            } else {
                Some(read_member(member).map_err(|e| malformed(format!("arbiter {name}: {e}")))?)
            };
            Write::Arbiter { name, member }
        }
        ROUND_START => {
            Write::RoundStart(serde_json::from_slice(body).map_err(json("round start"))?)
        }
        GAME => Write::Game(Box::new(
            serde_json::from_slice(body).map_err(json("game"))?,
        )),
        other => return Err(malformed(format!("a write of tag {other}"))),
    })
}

/// Why a write cannot be read.
fn malformed(why: impl std::fmt::Display) -> String {
    why.to_string()
}

/// A length (4 bytes, big-endian) and what follows it.
pub fn split_u32(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let (head, rest) = bytes.split_first_chunk::<4>()?;
    Some((u32::from_be_bytes(*head), rest))
}

/// One JSON encoder for the writes' bodies of different types.
mod erased {
    pub trait Json {
        fn to_json(&self) -> Vec<u8>;
    }

    impl<T: serde::Serialize> Json for T {
        fn to_json(&self) -> Vec<u8> {
            serde_json::to_vec(self).expect("a journal write serializes")
        }
    }
}
