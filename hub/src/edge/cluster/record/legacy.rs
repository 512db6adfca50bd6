//! The stream's writes as format 1 encoded them, before the stream carried sled's bytes: a
//! tag byte (1 event, 2 decision, 3 alert, 4 binding, 5 enrolment, 6 arbiter, 7 round
//! start, 8 game), then a board event's receive time (8 bytes, big-endian) and wire
//! encoding, an arbiter's name (its length in 4 bytes, then UTF-8) and enrolment as sled
//! keeps it, anything else as JSON. Read only: a stream begun by an earlier build still
//! replays.

use protocol::codec;
use protocol::seal::{NodeKey, KEY_LEN as KEY_LEN_NODE};
use protocol::BoardNo;
use serde::Deserialize;

use crate::core::hub::Write;
use crate::core::ids::HardwareId;
use crate::core::record::Record;
use crate::core::time::HubMs;
use crate::edge::journal::write_codec::{read_member, split_u32};

const EVENT: u8 = 1;
const DECISION: u8 = 2;
const ALERT: u8 = 3;
const BINDING: u8 = 4;
const ENROLMENT: u8 = 5;
const ARBITER: u8 = 6;
const ROUND_START: u8 = 7;
const GAME: u8 = 8;

#[derive(Deserialize)]
struct BindingBody {
    hardware: HardwareId,
    board: Option<u16>,
}

#[derive(Deserialize)]
struct EnrolmentBody {
    hardware: HardwareId,
    key: Option<Vec<u8>>,
}

/// A write of the stream from its bytes; why not, if it cannot be read.
pub(super) fn decode_write(bytes: &[u8]) -> Result<Write, String> {
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

#[cfg(test)]
mod tests {
    use super::super::{decode, Message};
    use super::*;
    use protocol::{NodeMs, Seq, Uplink, UplinkBody};

    /// A message of format 1 as an earlier build appended it, written here byte by byte.
    #[test]
    fn a_message_of_format_1_still_reads() {
        let record = Record {
            at: HubMs(1234),
            event: Uplink::new(BoardNo(3), Seq(7), NodeMs(7), UplinkBody::Heartbeat),
        };
        let mut event = vec![EVENT];
        event.extend(record.at.0.to_be_bytes());
        event.extend(codec::encode_uplink(&record.event));
        let mut binding = vec![BINDING];
        binding.extend(br#"{"hardware":"dgt-4411","board":3}"#);
        let mut revoked = vec![ARBITER];
        revoked.extend(3u32.to_be_bytes());
        revoked.extend(b"Ola");
        let writes = [event, binding, revoked, vec![42]];
        let mut message = vec![1, 1];
        message.extend((writes.len() as u32).to_be_bytes());
        for write in &writes {
            message.extend((write.len() as u32).to_be_bytes());
            message.extend(write);
        }
        let Message::Writes(got) = decode(&message).unwrap() else {
            panic!("writes")
        };
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], Ok(Write::Event(record)));
        assert_eq!(
            got[1],
            Ok(Write::Binding {
                hardware: HardwareId("dgt-4411".into()),
                board: Some(BoardNo(3)),
            })
        );
        assert_eq!(
            got[2],
            Ok(Write::Arbiter {
                name: "Ola".into(),
                member: None,
            })
        );
        assert!(got[3].is_err(), "tag 42 is no write");
    }
}
