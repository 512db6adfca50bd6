//! A stable-Rust fuzzer for what arrives from outside: the uplink and downlink decoders
//! (`protocol::codec`), the pagers' command reader (`view::pager::parse_command`), the DGT
//! board's serial decoder, and the files an organiser hands in: TRF and CSV pairings, the
//! event configuration, PGN.
//!
//! `cargo bench -p zeitnot-hub --bench fuzz_wire -- --inputs 100000000`
//!
//! Seeds are real: every event of the World Cup rapid games as a node sends it, the hub's
//! downlinks, real pager commands, the recorded DGT byte streams, the real TRF files, the
//! configuration example of `docs/configuration.md`, single games of a real PGN file. The
//! readers of whole files take a thousandth as many inputs as the wire decoders. Each input is a seed mutated by one to four of: a bit
//! flipped, a byte set, a byte inserted or removed, a cut, a slice repeated, two seeds
//! spliced, or random bytes. Every decoder must return without panicking; whatever decodes
//! must encode and decode again to itself. A panic ends the run with the input that caused
//! it (a crash found); the figures printed are the inputs tried per decoder and the time.

use std::path::Path;
use std::time::Instant;

use board_node::{pgn, replay};
use hub::view::pager::parse_command;
use protocol::seal::{self, NodeKey};
use protocol::{BoardNo, Downlink, DownlinkBody, NodeMs, Seq, Uplink};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn main() {
    let inputs = flag("--inputs").unwrap_or(10_000_000);
    let Seeds {
        uplinks,
        downlinks,
        commands,
    } = seeds();
    println!(
        "fuzz_wire: seeds {} uplinks, {} downlinks, {} pager commands; {inputs} inputs per decoder",
        uplinks.len(),
        downlinks.len(),
        commands.len()
    );
    let mut rng = StdRng::seed_from_u64(flag("--seed").unwrap_or(20_261_124));
    // The wire's frames: a message and its tag, opened and checked as the hub and the
    // nodes do; a mutated frame must never verify unless the mutation left it whole.
    let key = seed_key();
    run("uplink", inputs, &uplinks, &mut rng, |bytes| {
        if let Ok(sealed) = seal::open_uplink(bytes) {
            let resealed = seal::seal_uplink(Some(&key), EVENT, seal::Boot(1), &sealed.message);
            assert_eq!(
                seal::open_uplink(&resealed).map(|s| s.message),
                Ok(sealed.message.clone())
            );
            if sealed.verify(&key, EVENT) {
                assert_eq!(resealed, bytes, "a frame that verifies is the node's own");
            }
            true
        } else {
            false
        }
    });
    run("downlink", inputs, &downlinks, &mut rng, |bytes| {
        if let Ok(sealed) = seal::open_downlink(bytes, seal::Boot(1)) {
            let resealed = seal::seal_downlink(Some(&key), EVENT, seal::Boot(1), &sealed.message);
            assert_eq!(
                seal::open_downlink(&resealed, seal::Boot(1)).map(|s| s.message),
                Ok(sealed.message.clone())
            );
            if sealed.verify(&key, EVENT) {
                assert_eq!(resealed, bytes, "a frame that verifies is the hub's own");
            }
            true
        } else {
            false
        }
    });
    // JSON parsing is slower: a tenth as many.
    run("pager command", inputs / 10, &commands, &mut rng, |bytes| {
        parse_command(bytes).is_ok()
    });
    let files = Files::read();
    run("DGT stream", inputs / 10, &files.dgt, &mut rng, |bytes| {
        let mut decoder = board_node::dgt::wire::Decoder::default();
        decoder.push(bytes);
        let mut good = false;
        while let Some(message) = decoder.next_message() {
            good |= message.is_ok();
        }
        good
    });
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let few = (inputs / 1000).max(1000);
    run("TRF", few, &files.trf, &mut rng, |bytes| {
        hub::pairings::trf::Trf::parse(&text(bytes)).is_ok()
    });
    run("CSV pairings", few, &files.csv, &mut rng, |bytes| {
        hub::pairings::csv::read(&text(bytes)).is_ok()
    });
    let base = std::env::temp_dir();
    run("configuration", few, &files.config, &mut rng, |bytes| {
        hub::config::parse("event.toml", &text(bytes), &base).is_ok()
    });
    run("PGN", few, &files.pgn, &mut rng, |bytes| {
        pgn::read_games(bytes).is_ok()
    });
}

/// The organiser's files and the DGT recordings, as seeds.
struct Files {
    dgt: Vec<Vec<u8>>,
    trf: Vec<Vec<u8>>,
    csv: Vec<Vec<u8>>,
    config: Vec<Vec<u8>>,
    pgn: Vec<Vec<u8>>,
}

impl Files {
    fn read() -> Files {
        use base64::Engine;
        let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/real");
        let read = |path: &Path| std::fs::read(path).expect("shared/data/real");
        // Each recording's bytes, in pieces of 64 messages.
        let mut dgt = Vec::new();
        for name in ["1", "2", "johan"] {
            let text = read(&real.join(format!("dgt/dgtdriver/{name}.inbytes")));
            let lines: Vec<Vec<u8>> = String::from_utf8_lossy(&text)
                .lines()
                .filter_map(|l| {
                    base64::engine::general_purpose::STANDARD
                        .decode(l.trim())
                        .ok()
                })
                .collect();
            dgt.extend(lines.chunks(64).map(|c| c.concat()));
        }
        let trf = std::fs::read_dir(real.join("trf"))
            .expect("TRF files")
            .map(|e| read(&e.unwrap().path()))
            .collect();
        let csv = vec![
            b"board,white,black,white_rating,white_title,white_fide_id,result\n\
            1,\"Carlsen, Magnus\",\"Nakamura, Hikaru\",2830,GM,1503014,*\n\
            2,Player A,Player B,,,,1-0\n"
                .to_vec(),
        ];
        let docs = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/configuration.md"));
        let docs = String::from_utf8_lossy(&docs);
        let example = docs
            .split("```toml")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .expect("the configuration example");
        let config = vec![example.as_bytes().to_vec()];
        let games = read(&real.join("pgn-clocks/fide_world_cup_2025_blitz_3+2.pgn"));
        let games = String::from_utf8_lossy(&games);
        let pgn = games
            .split("\n\n[Event ")
            .take(50)
            .map(|g| format!("[Event {g}\n\n").into_bytes())
            .collect();
        Files {
            dgt,
            trf,
            csv,
            config,
            pgn,
        }
    }
}

/// Feeds `inputs` mutated seeds to `decode` (true: the input decoded) and prints the
/// figures.
fn run(
    what: &str,
    inputs: u64,
    seeds: &[Vec<u8>],
    rng: &mut StdRng,
    mut decode: impl FnMut(&[u8]) -> bool,
) {
    let started = Instant::now();
    let mut decoded = 0u64;
    let mut input = Vec::with_capacity(512);
    for _ in 0..inputs {
        mutate(seeds, rng, &mut input);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(&input)));
        match outcome {
            Ok(true) => decoded += 1,
            Ok(false) => {}
            Err(_) => panic!("{what}: a crash on input {input:02x?}"),
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "  {what:>13}: {inputs} inputs in {seconds:.1} s ({:.0} ns each), {decoded} accepted (wire messages also re-encoded and decoded to themselves), 0 crashes",
        seconds * 1e9 / inputs.max(1) as f64
    );
}

/// One input: a seed with one to four mutations, or random bytes.
fn mutate(seeds: &[Vec<u8>], rng: &mut StdRng, out: &mut Vec<u8>) {
    out.clear();
    if rng.random_ratio(1, 20) {
        let len = rng.random_range(0..64);
        out.extend((0..len).map(|_| rng.random::<u8>()));
        return;
    }
    out.extend_from_slice(&seeds[rng.random_range(0..seeds.len())]);
    for _ in 0..rng.random_range(1..=4) {
        let len = out.len();
        match rng.random_range(0..7) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                out[i] ^= 1 << rng.random_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.random_range(0..len);
                out[i] = rng.random();
            }
            2 => {
                let i = rng.random_range(0..=len);
                out.insert(i, rng.random());
            }
            3 if len > 0 => {
                out.remove(rng.random_range(0..len));
            }
            4 => out.truncate(rng.random_range(0..=len)),
            5 if len > 0 => {
                let from = rng.random_range(0..len);
                let to = rng.random_range(from..=len.min(from + 16));
                let slice = out[from..to].to_vec();
                out.splice(to..to, slice);
            }
            _ => {
                let other = &seeds[rng.random_range(0..seeds.len())];
                let cut = rng.random_range(0..=len);
                out.truncate(cut);
                out.extend_from_slice(&other[rng.random_range(0..=other.len())..]);
            }
        }
    }
}

/// Real inputs of each kind, encoded as they travel.
struct Seeds {
    uplinks: Vec<Vec<u8>>,
    downlinks: Vec<Vec<u8>>,
    commands: Vec<Vec<u8>>,
}

/// The event id and the key the seeds are sealed with.
const EVENT: &str = "fuzz";

fn seed_key() -> NodeKey {
    NodeKey::from_bytes([0x42; 32])
}

/// Real uplinks (a node replaying the World Cup's rapid games), downlinks and pager commands.
fn seeds() -> Seeds {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/real/pgn-clocks/fide_world_cup_2025_rapid_15+10.pgn");
    let text = std::fs::read(path).expect("shared/data/real");
    let mut uplinks = Vec::new();
    for (g, game) in pgn::read_games(&text).expect("games").iter().enumerate() {
        let board = BoardNo(1 + g as u16);
        for (i, timed) in replay::script(game, None).into_iter().enumerate() {
            let event = Uplink::new(
                board,
                Seq(1 + i as u64),
                NodeMs(1_795_000_000_000 + timed.game_ms),
                timed.reading.body(),
            );
            uplinks.push(seal::seal_uplink(
                Some(&seed_key()),
                EVENT,
                seal::Boot(1),
                &event,
            ));
        }
    }
    let downlinks = [1u64, 57, 300, 70_000, 1 << 40]
        .into_iter()
        .flat_map(|seq| {
            [
                DownlinkBody::Ack {
                    up_to_seq: Seq(seq),
                },
                DownlinkBody::ResendFrom { seq: Seq(seq) },
                DownlinkBody::ContinueAt { seq: Seq(seq) },
            ]
        })
        .map(|body| {
            seal::seal_downlink(
                Some(&seed_key()),
                EVENT,
                seal::Boot(1),
                &Downlink::new(BoardNo(12), body),
            )
        })
        .collect();
    let commands = [
        r#"{"id": 7, "action": "ack", "by": "ola"}"#,
        r#"{"id": 7, "action": "resolve", "by": "IA Berg", "note": "flag confirmed, 0-1"}"#,
        r#"{"id": 123456, "action": "ack"}"#,
        r#"{"id": 3, "action": "resolve", "note": "reinstated, 2 min to White"}"#,
    ]
    .iter()
    .map(|c| c.as_bytes().to_vec())
    .collect();
    Seeds {
        uplinks,
        downlinks,
        commands,
    }
}

fn flag(name: &str) -> Option<u64> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1)?.parse().ok()
}
