//! The bytes of every [`Write`] the hub's core asks for, one format per kind ([`kept`] and
//! its reverse [`write_of`]): sled keeps those bytes ([`super::store`]: each kind in its
//! tree, the board events in batches) and the cluster's stream carries the same bytes
//! ([`crate::edge::cluster::record`]). A board event is a format byte, the hub's receive
//! time (8 bytes, big-endian) then the event in its wire encoding (the postcard layout
//! frozen by the protocol's golden tests); an arbiter's enrolment is their key then, when
//! any, their zones and language as JSON; a binding its board, an enrolment the node's key;
//! the rest a format byte and JSON.

use protocol::seal::{NodeKey, KEY_LEN as KEY_LEN_NODE};
use protocol::{codec, BoardNo, Seq, PROTOCOL_VERSION};
use serde::Serialize;

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
    let record = single_record(value).map_err(|why| StoreError::Unreadable { board, seq, why })?;
    kept_under(board, seq, record)
}

/// An event alone, as [`single_value`] wrote it (a stream carries one so): its board and
/// number are the event's own.
pub fn single_record(value: &[u8]) -> Result<Record, String> {
    if value.len() < HEADER_LEN || value[0] != JOURNAL_FORMAT {
        return Err(format!(
            "an event's header {:?}",
            &value[..value.len().min(HEADER_LEN)]
        ));
    }
    let at = u64::from_be_bytes(value[1..HEADER_LEN].try_into().expect("8 bytes"));
    let event = uplink_of(&value[HEADER_LEN..])?;
    Ok(Record {
        at: HubMs(at),
        event,
    })
}

/// An event from its wire encoding as the journal keeps it.
fn uplink_of(wire: &[u8]) -> Result<protocol::Uplink, String> {
    let mut message = std::borrow::Cow::Borrowed(wire);
    if message.first() == Some(&1) {
        // Written under protocol 1, whose messages have version 2's layout (2 added the
        // tags on the wire, which the journal does not keep): read as version 2.
        message.to_mut()[0] = PROTOCOL_VERSION as u8;
    }
    codec::decode_uplink(&message).map_err(|e| e.to_string())
}

/// `board`'s event `seq`, received at `at`, from its wire encoding.
pub fn decode_event(board: BoardNo, seq: Seq, at: u64, wire: &[u8]) -> Result<Record, StoreError> {
    let event = uplink_of(wire).map_err(|why| StoreError::Unreadable { board, seq, why })?;
    let record = Record {
        at: HubMs(at),
        event,
    };
    kept_under(board, seq, record)
}

/// `record`, if it is the event its key names (`board`'s event `seq`).
fn kept_under(board: BoardNo, seq: Seq, record: Record) -> Result<Record, StoreError> {
    let event = &record.event;
    if event.board != board || event.seq != seq {
        let why = format!("holds {}/{}", event.board.0, event.seq.0);
        return Err(StoreError::Unreadable { board, seq, why });
    }
    Ok(record)
}

/// The trees that keep a record's latest state by its key: every [`Write`] but a board
/// event goes to one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tree {
    Decisions,
    Alerts,
    Bindings,
    Enrolments,
    Arbiters,
    Rounds,
    Games,
}

impl Tree {
    pub const ALL: [Tree; 7] = [
        Tree::Decisions,
        Tree::Alerts,
        Tree::Bindings,
        Tree::Enrolments,
        Tree::Arbiters,
        Tree::Rounds,
        Tree::Games,
    ];

    /// The sled tree's name.
    pub fn name(self) -> &'static str {
        match self {
            Tree::Decisions => "decisions",
            Tree::Alerts => "alerts",
            Tree::Bindings => "bindings",
            Tree::Enrolments => "enrolments",
            Tree::Arbiters => "arbiters",
            Tree::Rounds => "rounds",
            Tree::Games => "games",
        }
    }
}

/// The format byte before an id-keyed tree's JSON.
pub const DECISION_FORMAT: u8 = 1;
pub const ALERT_FORMAT: u8 = 1;
pub const ROUND_FORMAT: u8 = 1;
pub const GAME_FORMAT: u8 = 1;

/// A write as it is kept: what sled stores and, the same bytes, what the cluster's stream
/// carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept<'a> {
    /// A board event: sled batches them ([`super::batch`]); one alone is [`single_value`].
    Event(&'a Record),
    /// A record's latest state under its key in `tree`; `None`: the record is removed (a
    /// binding undone, a key or an arbiter revoked).
    Entry {
        tree: Tree,
        key: Vec<u8>,
        value: Option<Vec<u8>>,
    },
}

/// Where and as what `write` is kept.
pub fn kept(write: &Write) -> Kept<'_> {
    let entry = |tree: Tree, key: &[u8], value: Option<Vec<u8>>| Kept::Entry {
        tree,
        key: key.to_vec(),
        value,
    };
    match write {
        Write::Event(record) => Kept::Event(record),
        Write::Decision(decision) => entry(
            Tree::Decisions,
            &decision.id.0.to_be_bytes(),
            Some(json_value(DECISION_FORMAT, decision)),
        ),
        Write::Alert(alert) => entry(
            Tree::Alerts,
            &alert.id.0.to_be_bytes(),
            Some(json_value(ALERT_FORMAT, alert.as_ref())),
        ),
        Write::Binding { hardware, board } => entry(
            Tree::Bindings,
            hardware.as_str().as_bytes(),
            board.map(|b| b.0.to_be_bytes().to_vec()),
        ),
        Write::Enrolment { hardware, key } => entry(
            Tree::Enrolments,
            hardware.as_str().as_bytes(),
            key.as_ref().map(|k| k.bytes().to_vec()),
        ),
        Write::Arbiter { name, member } => entry(
            Tree::Arbiters,
            name.as_bytes(),
            member.as_ref().map(member_value),
        ),
        Write::RoundStart(start) => entry(
            Tree::Rounds,
            &u64::from(start.ordinal).to_be_bytes(),
            Some(json_value(ROUND_FORMAT, start)),
        ),
        Write::Game(game) => entry(
            Tree::Games,
            &game_id(game.round.0, game.board.0).to_be_bytes(),
            Some(json_value(GAME_FORMAT, game.as_ref())),
        ),
    }
}

/// The write a tree's entry keeps (`value` `None`: a removal); why not, if it cannot be
/// read. The reverse of [`kept`].
pub fn write_of(tree: Tree, key: &[u8], value: Option<&[u8]>) -> Result<Write, String> {
    let text = |what: &str| {
        String::from_utf8(key.to_vec()).map_err(|_| format!("{what}: a key not UTF-8"))
    };
    let needed = |what: &str| value.ok_or_else(|| format!("{what}: removed, never removable"));
    Ok(match tree {
        Tree::Decisions => Write::Decision(json_of(DECISION_FORMAT, needed("a decision")?)?),
        Tree::Alerts => Write::Alert(Box::new(json_of(ALERT_FORMAT, needed("an alert")?)?)),
        Tree::Bindings => Write::Binding {
            hardware: HardwareId(text("a binding")?),
            board: value.map(board_of).transpose()?,
        },
        Tree::Enrolments => Write::Enrolment {
            hardware: HardwareId(text("an enrolment")?),
            key: value.map(node_key_of).transpose()?,
        },
        Tree::Arbiters => {
            let name = text("an arbiter")?;
            let member = value
                .map(|v| read_member(v).map_err(|e| format!("arbiter {name}: {e}")))
                .transpose()?;
            Write::Arbiter { name, member }
        }
        Tree::Rounds => Write::RoundStart(json_of(ROUND_FORMAT, needed("a round start")?)?),
        Tree::Games => Write::Game(Box::new(json_of(GAME_FORMAT, needed("a game")?)?)),
    })
}

/// A game's key in tree `games`: its round, then its board.
pub fn game_id(round: u16, board: u16) -> u64 {
    u64::from(round) << 16 | u64::from(board)
}

/// A record of an id-keyed tree: its format byte, then the record as JSON (a record an
/// auditor may read with any tool).
pub fn json_value<T: Serialize + ?Sized>(format: u8, value: &T) -> Vec<u8> {
    let mut bytes = vec![format];
    serde_json::to_writer(&mut bytes, value).expect("a journal record serializes");
    bytes
}

/// The record of an id-keyed tree's value; why not, if it cannot be read.
pub fn json_of<T: serde::de::DeserializeOwned>(format: u8, value: &[u8]) -> Result<T, String> {
    match value.split_first() {
        Some((first, json)) if *first == format => {
            serde_json::from_slice(json).map_err(|e| e.to_string())
        }
        _ => Err("unknown format".into()),
    }
}

/// A binding's board (2 bytes, big-endian).
pub fn board_of(value: &[u8]) -> Result<BoardNo, String> {
    <[u8; 2]>::try_from(value)
        .map(|b| BoardNo(u16::from_be_bytes(b)))
        .map_err(|_| format!("a board of {} bytes", value.len()))
}

/// An enrolled node's key (32 bytes).
pub fn node_key_of(value: &[u8]) -> Result<NodeKey, String> {
    <[u8; KEY_LEN_NODE]>::try_from(value)
        .map(NodeKey::from_bytes)
        .map_err(|_| format!("a key of {} bytes", value.len()))
}

/// A length (4 bytes, big-endian) and what follows it.
pub fn split_u32(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let (head, rest) = bytes.split_first_chunk::<4>()?;
    Some((u32::from_be_bytes(*head), rest))
}
