//! The hall's keys from the command line, on a hub that is not running (while it runs,
//! the API does the same): nodes' and arbiters' enrolment, the external broker's users,
//! re-keying the hall, the arbiters' login link, the external broker's certificate, the
//! hall's secrets carried to a cluster's other hubs.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;

use super::offline;
use super::serve::event_config;
use crate::core::hub::HubConfig;
use crate::edge::cluster::secrets::HallSecrets;
use crate::edge::{http::login, keys::arbiter_token, keys::hall_ca, keys::secret_file};

/// `hub enrol`'s command line.
#[derive(Debug, clap::Args)]
pub struct EnrolArgs {
    /// Directory of the hub's journal.
    #[arg(long, default_value = "zeitnot-data")]
    pub data: PathBuf,
    /// The node's hardware id, as it announces it (`board-node --hardware-id`).
    #[arg(long)]
    pub hardware: String,
    /// The board it reports for.
    #[arg(long)]
    pub board: u16,
    /// Write the key here (mode 0600) as well as printing it.
    #[arg(long)]
    pub key_file: Option<PathBuf>,
    /// The event's configuration, for its bindings of hardware to boards.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// `hub enrol-arbiter`'s command line.
#[derive(Debug, clap::Args)]
pub struct EnrolArbiterArgs {
    /// Directory of the hub's journal.
    #[arg(long, default_value = "zeitnot-data")]
    pub data: PathBuf,
    /// The arbiter's name, as the commands are signed.
    #[arg(long)]
    pub arbiter: String,
    /// A zone the arbiter watches (repeat for more); none: as the configuration's
    /// `[[arbiters]]` says, or the whole hall.
    #[arg(long = "zone")]
    pub zones: Vec<String>,
    /// The arbiter's language on their phone (en, nb, sv, da, fi, hu).
    #[arg(long)]
    pub language: Option<crate::core::alerts::Language>,
    /// The event's configuration, for its zones.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Write the credentials here (mode 0600) as well as printing them.
    #[arg(long)]
    pub key_file: Option<PathBuf>,
}

/// `hub broker-users`'s command line.
#[derive(Debug, clap::Args)]
pub struct BrokerUsersArgs {
    /// Directory of the hub's journal.
    #[arg(long, default_value = "zeitnot-data")]
    pub data: PathBuf,
    /// The event's configuration, for its bindings of hardware to boards.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// `hub rotate-hall-secret`'s command line.
#[derive(Debug, clap::Args)]
pub struct RotateArgs {
    /// Directory of the hub's journal.
    #[arg(long, default_value = "zeitnot-data")]
    pub data: PathBuf,
}

/// `hub cluster-secrets`'s command line.
#[derive(Debug, clap::Args)]
pub struct ClusterSecretsArgs {
    /// Directory of the hub's journal (the hub stopped, or not started yet).
    #[arg(long, default_value = "zeitnot-data")]
    pub data: PathBuf,
    /// Where to write the hall's secrets (mode 0600).
    #[arg(long)]
    pub out: PathBuf,
}

/// `hub cluster-join`'s command line.
#[derive(Debug, clap::Args)]
pub struct ClusterJoinArgs {
    /// Directory of the joining hub's journal (empty, or this hall's).
    #[arg(long, default_value = "zeitnot-data")]
    pub data: PathBuf,
    /// The file `hub cluster-secrets` wrote.
    #[arg(long)]
    pub secrets: PathBuf,
}

/// `hub login-link`'s command line.
#[derive(Debug, clap::Args)]
pub struct LoginLinkArgs {
    /// Directory of the hub's journal.
    #[arg(long, default_value = "zeitnot-data")]
    pub data: PathBuf,
    /// The hub's HTTP address, as `hub serve --http` has it.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub http: SocketAddr,
    /// The page is HTTPS (the default for a listener off loopback).
    #[arg(long)]
    pub https: bool,
}

/// `hub broker-cert`'s command line.
#[derive(Debug, clap::Args)]
pub struct BrokerCertArgs {
    /// Directory of the hub's journal.
    #[arg(long, default_value = "zeitnot-data")]
    pub data: PathBuf,
    /// A name or IP address the broker is reached under; repeat for each.
    #[arg(long = "name", required = true)]
    pub names: Vec<String>,
    /// Where to write the certificate (PEM).
    #[arg(long)]
    pub cert: PathBuf,
    /// Where to write the key (PEM, mode 0600).
    #[arg(long)]
    pub key: PathBuf,
}

/// `hub enrol`: prints the node's key and the hall CA, and writes its key file.
pub fn enrol(args: EnrolArgs) -> anyhow::Result<()> {
    let file = event_config(args.config.as_deref())?;
    anyhow::ensure!(
        !args.hardware.is_empty() && args.hardware.len() <= protocol::Hello::MAX_TEXT,
        "a hardware id of 1 to {} bytes",
        protocol::Hello::MAX_TEXT
    );
    anyhow::ensure!(
        args.board >= 1 && protocol::BoardNo(args.board) <= protocol::BoardNo::MAX,
        "boards are numbered 1 to {}",
        protocol::BoardNo::MAX
    );
    let hub_config = HubConfig {
        bindings: file.bindings,
        ..HubConfig::default()
    };
    let enrolled = offline::enrol(
        &args.data,
        &hub_config,
        &crate::core::ids::HardwareId(args.hardware),
        protocol::BoardNo(args.board),
    )?;
    if let Some(path) = args.key_file {
        super::enrol::write_key_file(&path, &enrolled.key)?;
    }
    let ca = hall_ca::ca_pem(&args.data)?;
    println!("{}", super::enrol::answer_json(&enrolled, &ca));
    Ok(())
}

/// `hub enrol-arbiter`: prints the arbiter's credentials, and writes their key file.
pub fn enrol_arbiter(args: EnrolArbiterArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        !args.arbiter.trim().is_empty() && args.arbiter.chars().count() <= 64,
        "an arbiter's name of 1 to 64 characters"
    );
    let file = event_config(args.config.as_deref())?;
    let hub_config = HubConfig {
        routing: file.routing,
        ..HubConfig::default()
    };
    let request = crate::edge::http::api::ArbiterEnrolRequest {
        name: args.arbiter,
        zones: args.zones,
        language: args.language,
    };
    let enrolment = offline::enrol_arbiter(&args.data, &hub_config, request)?;
    let ca = hall_ca::ca_pem(&args.data)?;
    let json = login::arbiter_credentials(&enrolment, &ca).to_string();
    if let Some(path) = args.key_file {
        secret_file::write(&path, &json)?;
    }
    println!("{json}");
    Ok(())
}

/// `hub broker-users`: the external broker's `username:password` lines.
pub fn broker_users(args: BrokerUsersArgs) -> anyhow::Result<()> {
    let file = event_config(args.config.as_deref())?;
    let hub_config = HubConfig {
        bindings: file.bindings,
        ..HubConfig::default()
    };
    print!("{}", offline::broker_users(&args.data, &hub_config)?);
    Ok(())
}

/// `hub rotate-hall-secret`: re-keys the hall, and says what to do next.
pub fn rotate_hall_secret(args: RotateArgs) -> anyhow::Result<()> {
    let revoked = offline::rotate_hall_secret(&args.data, &HubConfig::default())?;
    println!("The hall has a new secret: the hub signs with a new key, and its Mosquitto password changed (run deploy/mosquitto/users.sh with the data directory).");
    println!("A new arbiter token is made at the next start (unless one is configured); every page is logged out.");
    if revoked.is_empty() {
        println!("No arbiter was enrolled.");
    } else {
        println!(
            "Arbiters revoked, to enrol again (hub enrol-arbiter or POST /api/arbiters/enrol):"
        );
        for name in revoked {
            println!("  {}", name.escape_debug());
        }
    }
    Ok(())
}

/// `hub cluster-secrets`: the hall's secrets to a file, for the cluster's other hubs.
pub fn cluster_secrets(args: ClusterSecretsArgs) -> anyhow::Result<()> {
    offline::hall_secrets(&args.data)?.write(&args.out)?;
    println!(
        "The hall's secrets are in {} (its owner's only). Carry it to each other hub of the cluster (scp, a USB stick; never through NATS), run `hub cluster-join --secrets` with it there, and delete the copies: it opens the whole hall.",
        args.out.display()
    );
    Ok(())
}

/// `hub cluster-join`: a hub takes the hall's secrets from the file.
pub fn cluster_join(args: ClusterJoinArgs) -> anyhow::Result<()> {
    let secrets = HallSecrets::read(&args.secrets)?;
    offline::join_hall(&args.data, &secrets)?;
    println!(
        "{} holds the hall's secrets: start the hub with --cluster. Delete {} now.",
        args.data.display(),
        args.secrets.display()
    );
    Ok(())
}

/// `hub login-link`: the arbiters' login links with the token the hub made.
pub fn login_link(args: LoginLinkArgs) -> anyhow::Result<()> {
    let file = arbiter_token::token_file(&args.data);
    let token = secret_file::read(&file)?.with_context(|| {
        format!(
            "{} has no token: the hub makes it at its first start, unless the configuration or ZEITNOT_ARBITER_TOKEN gives one",
            file.display()
        )
    })?;
    let scheme = if args.https { "https" } else { "http" };
    for link in login::links(args.http, &token, scheme) {
        println!("{link}");
    }
    Ok(())
}

/// `hub broker-cert`: the external broker's certificate and key, from the hall CA.
pub fn broker_cert(args: BrokerCertArgs) -> anyhow::Result<()> {
    let (cert_pem, key_pem) = hall_ca::issue_for(&args.data, &args.names)?;
    std::fs::write(&args.cert, cert_pem)
        .with_context(|| format!("writing {}", args.cert.display()))?;
    secret_file::write(&args.key, key_pem.trim_end())?;
    println!(
        "{} and {}: the broker's certificate for {}, signed by the hall CA {}",
        args.cert.display(),
        args.key.display(),
        args.names.join(", "),
        hall_ca::ca_file(&args.data).display()
    );
    Ok(())
}
