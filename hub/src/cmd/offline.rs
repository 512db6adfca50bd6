//! The offline commands (`hub enrol`, `hub enrol-arbiter`, `hub broker-users`, `hub
//! rotate-hall-secret`, `hub cluster-secrets`, `hub cluster-join`) on a hub that is not
//! running: one way of opening its journal, the same fold and the same core calls as a
//! running hub's API, their writes flushed before anything is handed out.

use anyhow::Context;
use protocol::seal::NodeKey;
use protocol::{identity, BoardNo};

use crate::core::hub::{
    ArbiterEnrolment, Enrolled, Hub, HubConfig, Output, Reply, RequestId, Write,
};
use crate::edge::cluster::secrets::HallSecrets;
use crate::edge::http::api::ArbiterEnrolRequest;
use crate::edge::journal::Journal;
use crate::edge::{keys::arbiter_token, mqtt::broker};
use crate::metrics::Metrics;
use crate::run::clock::HubClock;
use crate::run::restore::restored_hub;

/// A stopped hub: its journal at `data` and the core folded over it as a start folds it,
/// with the time now. What the offline commands act on, through the same core calls as a
/// running hub's API.
struct Offline {
    journal: Journal,
    hub: Hub,
    now: crate::core::time::HubMs,
}

impl Offline {
    /// Opens the journal at `data` (locked while the hub runs: `instead` says what to use
    /// then) and folds `config`'s core over it.
    fn open(data: &std::path::Path, config: &HubConfig, instead: &str) -> anyhow::Result<Offline> {
        let journal = journal(data, instead)?;
        let mut clock = HubClock::default();
        let (hub, _) = restored_hub(config, &journal, &Metrics::default(), &mut clock)?;
        Ok(Offline {
            journal,
            hub,
            now: clock.now(),
        })
    }

    /// Carries out what the core asked: its writes journaled and flushed (the round a new
    /// hub begins in is the serving hub's to journal, from its configuration); its replies.
    fn settle(&mut self) -> anyhow::Result<Vec<Reply>> {
        let mut replies = Vec::new();
        for output in self.hub.poll_all_durable(self.now) {
            match output {
                Output::Write(_, Write::RoundStart(_)) => {}
                Output::Write(_, write) => self.journal.write(&write)?,
                Output::Reply(_, reply) => replies.push(reply),
                _ => {}
            }
        }
        self.journal.flush()?;
        Ok(replies)
    }
}

/// The journal at `data` of a stopped hub (locked while the hub runs: `instead` says what
/// to do then).
fn journal(data: &std::path::Path, instead: &str) -> anyhow::Result<Journal> {
    Journal::open(data).with_context(|| {
        format!(
            "opening the journal in {} (while the hub runs, {instead})",
            data.display()
        )
    })
}

/// The hall's secrets from the data directory `data` of a stopped hub (made there on a
/// first run, so the first hub of a cluster can export before it first starts).
pub fn hall_secrets(data: &std::path::Path) -> anyhow::Result<HallSecrets> {
    let journal = journal(data, "stop it first, or use the file exported at set-up")?;
    HallSecrets::of(data, &journal)
}

/// Makes `secrets` those of the stopped hub whose data directory is `data`.
pub fn join_hall(data: &std::path::Path, secrets: &HallSecrets) -> anyhow::Result<()> {
    let journal = journal(data, "stop it first: its secrets cannot change under it")?;
    secrets.adopt(data, &journal)
}

/// Enrols `hardware` for `board` in the journal at `data` of a hub that is not running, as
/// `POST /api/nodes/enrol` does on one that runs: the same fold, the same core call, its
/// writes flushed before the key is handed out.
pub fn enrol(
    data: &std::path::Path,
    config: &HubConfig,
    hardware: &crate::core::ids::HardwareId,
    board: BoardNo,
) -> anyhow::Result<Enrolled> {
    let mut offline = Offline::open(data, config, "enrol with POST /api/nodes/enrol")?;
    let fresh = NodeKey::from_bytes(rand::random());
    let now = offline.now;
    offline
        .hub
        .handle_enrolment(now, RequestId(0), hardware, board, fresh);
    let enrolled = offline.settle()?.into_iter().find_map(|reply| match reply {
        Reply::Enrolled(answer) => Some(answer),
        _ => None,
    });
    enrolled.context("the core gave no enrolment")
}

/// The external broker's users from the journal at `data` of a hub that is not running:
/// the hub's own login and `Hub::broker_users` (while it runs, `GET /api/broker/users`
/// serves the latter only). Makes the hall's secret on a first run, so the broker can be set
/// up before the hub first starts.
pub fn broker_users(data: &std::path::Path, config: &HubConfig) -> anyhow::Result<String> {
    let offline = Offline::open(data, config, "use GET /api/broker/users")?;
    let hall = offline.journal.hall_secret().context("the hall's secret")?;
    offline.journal.flush()?;
    let others = offline
        .hub
        .broker_users()
        .context("the hall has no secret")?;
    let others = broker::passwd_lines(&others);
    Ok(format!(
        "{}:{}\n{others}",
        identity::HUB_USER,
        identity::hub_password(&hall)
    ))
}

/// Enrols `arbiter` in the journal at `data` of a hub that is not running, as `POST
/// /api/arbiters/enrol` does on one that runs: the same fold, the same core call, its write
/// flushed before the key is handed out. `config` has the hall's zones.
pub fn enrol_arbiter(
    data: &std::path::Path,
    config: &HubConfig,
    arbiter: ArbiterEnrolRequest,
) -> anyhow::Result<ArbiterEnrolment> {
    let mut offline = Offline::open(data, config, "use POST /api/arbiters/enrol")?;
    let fresh = NodeKey::from_bytes(rand::random());
    let now = offline.now;
    offline.hub.handle_arbiter_enrolment(
        now,
        RequestId(0),
        &arbiter.name,
        fresh,
        arbiter.zones,
        arbiter.language,
    );
    let enrolled = offline.settle()?.into_iter().find_map(|reply| match reply {
        Reply::ArbiterEnrolled(answer) => Some(answer),
        _ => None,
    });
    Ok(enrolled.context("the enrolment was not answered")??)
}

/// Re-keys the hall of the hub that is not running whose data directory is `data` (`hub
/// rotate-hall-secret`): a new hall secret (the hub's signing key and its broker password
/// derive from it), every arbiter revoked (their key files name the old signing key: each
/// is enrolled again), and the made arbiter token and the page's sessions gone (a new token
/// is made at the next start). Node keys are the nodes' own: re-enrol a node to re-key it.
/// Returns the arbiters revoked, to be enrolled again.
pub fn rotate_hall_secret(
    data: &std::path::Path,
    config: &HubConfig,
) -> anyhow::Result<Vec<String>> {
    let mut offline = Offline::open(
        data,
        config,
        "stop it first: its secret cannot change under it",
    )?;
    anyhow::ensure!(
        offline.journal.stream_seq()? == 0,
        "this hub is one of a clustered hall, whose journal stream is sealed under the hall secret: a new secret would leave the stream unreadable. Re-key a cluster by starting a new event (a new stream) with new secrets on every hub (hub cluster-secrets, hub cluster-join)"
    );
    let names: Vec<String> = offline
        .hub
        .arbiters()
        .map(|(name, _)| name.to_owned())
        .collect();
    let now = offline.now;
    for name in &names {
        offline
            .hub
            .handle_arbiter_revocation(now, RequestId(0), name);
    }
    offline.settle()?;
    let journal = offline.journal;
    journal
        .rotate_hall_secret()
        .context("the new hall secret")?;
    for file in [arbiter_token::token_file(data), data.join("page-sessions")] {
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", file.display()))
            }
            _ => {}
        }
    }
    Ok(names)
}
