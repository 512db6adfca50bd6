//! The journal stream's messages: what the active hub appends to the cluster, and every
//! hub folds into its own sled.
//!
//! A message is a format byte, a kind byte and its body:
//! - [`Message::Genesis`] (the stream's first): which hub began the stream; JSON. The
//!   hall's secrets are never in the stream: each hub has them from its data directory
//!   (`hub cluster-join`, [`super::secrets`]), and every record is sealed under them
//!   ([`super::seal`]), this one too, so a hub of another hall cannot read the stream.
//! - [`Message::Writes`]: the writes of one flush, in the order the core asked for them;
//!   a count (4 bytes, big-endian), then each write as its length (4 bytes) and its bytes:
//!   the bytes sled keeps ([`kept`]), after a tag: `0` a board event as one is kept alone;
//!   else the tree (1 + its place in [`Tree::ALL`]), whether the entry is kept or removed
//!   (1, 0), its key's length (4 bytes, big-endian), its key and its value.
//! - [`Message::Takeover`]: a hub took the hall over; from here on only it writes.
//!
//! A write that cannot be read is an error in its place; the writes around it are read.
//! Messages of format 1, written before sled's bytes were the stream's, are read as then
//! ([`legacy`]).

use serde::{Deserialize, Serialize};

use protocol::codec;

use crate::core::hub::Write;
use crate::edge::journal::write_codec::{
    kept, single_record, single_value, split_u32, write_of, Kept, Tree,
};

mod legacy;

/// The format this build writes: writes as sled keeps them.
const FORMAT: u8 = 2;
/// Format 1: writes as the stream encoded them before ([`legacy`]).
const FORMAT_LEGACY: u8 = 1;
const EVENT: u8 = 0;
const GENESIS: u8 = 0;
const WRITES: u8 = 1;
const TAKEOVER: u8 = 2;

/// The stream's first record: the hub that began it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Genesis {
    pub hub: String,
}

/// A hub took over: its name and the lease's epoch it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Takeover {
    pub hub: String,
    pub epoch: u64,
}

/// One message of the journal stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Genesis(Genesis),
    /// Each write, or why it cannot be read.
    Writes(Vec<Result<Write, RecordError>>),
    Takeover(Takeover),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("journal stream message of format {0}, this build reads {FORMAT_LEGACY} and {FORMAT}")]
    Format(u8),
    #[error("journal stream message: {0}")]
    Malformed(String),
}

fn malformed(why: impl std::fmt::Display) -> RecordError {
    RecordError::Malformed(why.to_string())
}

/// The message holding `writes`, in order.
pub fn writes_message<'a>(writes: impl ExactSizeIterator<Item = &'a Write>) -> Vec<u8> {
    let mut out = vec![FORMAT, WRITES];
    out.extend((writes.len() as u32).to_be_bytes());
    for write in writes {
        let bytes = encode_write(write);
        out.extend((bytes.len() as u32).to_be_bytes());
        out.extend(bytes);
    }
    out
}

/// A write as the stream carries it: its tag, then its bytes as sled keeps them.
fn encode_write(write: &Write) -> Vec<u8> {
    match kept(write) {
        Kept::Event(record) => {
            let mut out = vec![EVENT];
            out.extend(single_value(
                record.at.0,
                &codec::encode_uplink(&record.event),
            ));
            out
        }
        Kept::Entry { tree, key, value } => {
            let place = Tree::ALL
                .iter()
                .position(|t| *t == tree)
                .expect("every tree");
            let mut out = vec![place as u8 + 1, u8::from(value.is_some())];
            out.extend((key.len() as u32).to_be_bytes());
            out.extend(key);
            out.extend(value.unwrap_or_default());
            out
        }
    }
}

/// A write of the stream from its bytes; why not, if it cannot be read.
fn decode_write(bytes: &[u8]) -> Result<Write, String> {
    let (tag, body) = bytes.split_first().ok_or("an empty write")?;
    if *tag == EVENT {
        return single_record(body).map(Write::Event);
    }
    let tree = *Tree::ALL
        .get(usize::from(tag - 1))
        .ok_or_else(|| format!("a write of tag {tag}"))?;
    let cut = || format!("{}: cut", tree.name());
    let (present, body) = body.split_first().ok_or_else(cut)?;
    let (len, rest) = split_u32(body).ok_or_else(cut)?;
    if rest.len() < len as usize {
        return Err(cut());
    }
    let (key, value) = rest.split_at(len as usize);
    let value = match present {
        1 => Some(value),
        0 if value.is_empty() => None,
        _ => return Err(format!("{}: neither kept nor removed", tree.name())),
    };
    write_of(tree, key, value)
}

pub fn genesis_message(genesis: &Genesis) -> Vec<u8> {
    json_message(GENESIS, genesis)
}

pub fn takeover_message(takeover: &Takeover) -> Vec<u8> {
    json_message(TAKEOVER, takeover)
}

fn json_message(kind: u8, body: &impl Serialize) -> Vec<u8> {
    let mut out = vec![FORMAT, kind];
    out.extend(serde_json::to_vec(body).expect("a message body serializes"));
    out
}

/// Reads a message of the stream.
pub fn decode(bytes: &[u8]) -> Result<Message, RecordError> {
    let [format, kind, body @ ..] = bytes else {
        return Err(malformed(format!("{} bytes", bytes.len())));
    };
    let read: fn(&[u8]) -> Result<Write, String> = match *format {
        FORMAT => decode_write,
        FORMAT_LEGACY => legacy::decode_write,
        other => return Err(RecordError::Format(other)),
    };
    match *kind {
        GENESIS => Ok(Message::Genesis(
            serde_json::from_slice(body).map_err(malformed)?,
        )),
        TAKEOVER => Ok(Message::Takeover(
            serde_json::from_slice(body).map_err(malformed)?,
        )),
        WRITES => decode_writes(body, read).map(Message::Writes),
        other => Err(malformed(format!("kind {other}"))),
    }
}

fn decode_writes(
    body: &[u8],
    decode_write: fn(&[u8]) -> Result<Write, String>,
) -> Result<Vec<Result<Write, RecordError>>, RecordError> {
    let (count, mut rest) = split_u32(body).ok_or_else(|| malformed("no count"))?;
    // Each write takes at least its length: a count past that is a broken message.
    if count as usize > rest.len() / 4 {
        return Err(malformed(format!("{count} writes in {} bytes", rest.len())));
    }
    let mut writes = Vec::with_capacity(count as usize);
    for i in 0..count {
        let (len, after) = split_u32(rest).ok_or_else(|| malformed(format!("write {i}: cut")))?;
        if after.len() < len as usize {
            return Err(malformed(format!("write {i}: cut")));
        }
        let (bytes, after) = after.split_at(len as usize);
        writes.push(decode_write(bytes).map_err(RecordError::Malformed));
        rest = after;
    }
    Ok(writes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::ids::HardwareId;
    use crate::core::record::Record;
    use crate::core::roster::Member;
    use crate::core::time::HubMs;
    use protocol::seal::NodeKey;
    use protocol::{BoardNo, NodeMs, Seq, Uplink, UplinkBody};

    fn event(board: u16, seq: u64) -> Write {
        Write::Event(Record {
            at: HubMs(1000 + seq),
            event: Uplink::new(BoardNo(board), Seq(seq), NodeMs(seq), UplinkBody::Heartbeat),
        })
    }

    fn writes(message: Message) -> Vec<Result<Write, RecordError>> {
        match message {
            Message::Writes(writes) => writes,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_flush_of_writes_reads_back_in_order() {
        let sent = vec![
            event(3, 1),
            Write::Binding {
                hardware: HardwareId("dgt-4411".into()),
                board: Some(BoardNo(3)),
            },
            Write::Enrolment {
                hardware: HardwareId("dgt-4411".into()),
                key: Some(NodeKey::from_bytes([7; 32])),
            },
            Write::Enrolment {
                hardware: HardwareId("dgt-9".into()),
                key: None,
            },
            Write::Arbiter {
                name: "Åse Berg".into(),
                member: Some(Member {
                    key: NodeKey::from_bytes([9; 32]),
                    zones: vec!["B".into()],
                    language: None,
                    renewed: 1,
                }),
            },
            Write::Arbiter {
                name: "Ola".into(),
                member: None,
            },
            event(3, 2),
        ];
        let got = writes(decode(&writes_message(sent.iter())).unwrap());
        let got: Vec<Write> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(got, sent);
    }

    #[test]
    fn genesis_and_takeover_read_back() {
        let genesis = Genesis {
            hub: "hub-a".into(),
        };
        assert_eq!(
            decode(&genesis_message(&genesis)).unwrap(),
            Message::Genesis(genesis.clone())
        );
        let takeover = Takeover {
            hub: "hub-b".into(),
            epoch: 4,
        };
        assert_eq!(
            decode(&takeover_message(&takeover)).unwrap(),
            Message::Takeover(takeover)
        );
    }

    #[test]
    fn a_damaged_write_is_an_error_in_its_place_and_the_others_read() {
        let sent = [event(1, 1), event(1, 2), event(1, 3)];
        let mut bytes = writes_message(sent.iter());
        // The second write's tag: 2 header bytes, the count, the first write (its length
        // and bytes), the second's length.
        let first_len = u32::from_be_bytes(bytes[6..10].try_into().unwrap()) as usize;
        bytes[10 + first_len + 4] = 99;
        let got = writes(decode(&bytes).unwrap());
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].as_ref().unwrap(), &sent[0]);
        assert!(got[1].is_err());
        assert_eq!(got[2].as_ref().unwrap(), &sent[2]);
    }

    #[test]
    fn broken_messages_are_errors_never_panics() {
        let good = writes_message([event(1, 1), event(1, 2)].iter());
        for cut in 0..good.len() {
            let _ = decode(&good[..cut]);
        }
        assert!(decode(&good[..good.len() - 1]).is_err());
        assert_eq!(decode(&[3, WRITES]), Err(RecordError::Format(3)));
        assert!(decode(&[FORMAT, WRITES, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[FORMAT, 9]).is_err());
        assert!(decode(&[FORMAT, GENESIS, b'{']).is_err());
    }
}
