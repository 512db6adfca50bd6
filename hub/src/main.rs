//! `hub`: the command line. Every command is one call into the library (`hub::cmd`).

use clap::{Parser, Subcommand};
use hub::cmd;

#[derive(Parser)]
#[command(
    version,
    about = "Zeitnot hub: applies the Laws of Chess to every board of a hall"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once at the start: the size of `serve`'s flags costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run the hub for a hall.
    Serve(cmd::serve::ServeArgs),
    /// An arbiter's pager in the terminal: the zone's open alerts, the most urgent first,
    /// a bell on a new one. Type `a ID` (or `a` for the top one) to acknowledge, `r ID note`
    /// to resolve, `q` to quit.
    #[command(after_help = cmd::pager::OTHER_CLIENTS)]
    Pager(cmd::pager::PagerArgs),
    /// Everyone an external broker (Mosquitto) must let in, as `username:password` lines for
    /// `mosquitto_passwd -U` (while the hub runs: `GET /api/broker/users`). Makes the hall's
    /// secret on a first run, so the broker can be set up before the hub first starts.
    BrokerUsers(cmd::keys::BrokerUsersArgs),
    /// Re-keys the hall on a stopped hub: a new hall secret (the hub's signing key and its
    /// Mosquitto password), every arbiter revoked (enrol each again: their key files name
    /// the old signing key), and a new arbiter token at the next start (unless configured),
    /// every page logged out. Then: `deploy/mosquitto/users.sh` for an external broker.
    RotateHallSecret(cmd::keys::RotateArgs),
    /// The hall's secrets (the hall secret, the MQTT session id, the arbiters' token, the
    /// hall CA) from the first hub of a cluster, stopped or not started yet, to a file
    /// (0600) for `hub cluster-join` on each other hub. They never cross NATS.
    ClusterSecrets(cmd::keys::ClusterSecretsArgs),
    /// A stopped hub takes the hall's secrets from the file `hub cluster-secrets` wrote:
    /// then it can join the cluster (a hub without them cannot read its journal stream).
    ClusterJoin(cmd::keys::ClusterJoinArgs),
    /// Enrols an arbiter with a new key (an earlier one of the name stops working): their
    /// pager's credentials for `hub pager --key-file`, and their own page login (while the
    /// hub runs: `POST /api/arbiters/enrol`).
    EnrolArbiter(cmd::keys::EnrolArbiterArgs),
    /// Replays real games from PGN files through the hub's core as a hall sees them and
    /// prints the alerts the arbiters would get, per 100 games by kind.
    AlertReport(cmd::report::ReportArgs),
    /// The arbiters' login link of the hub whose data directory is `--data`: the token it
    /// made at its first start, as `http://HOST:PORT/?token=…`.
    LoginLink(cmd::keys::LoginLinkArgs),
    /// A server certificate and key for an external broker (Mosquitto) reached as `--name`,
    /// signed by the hall CA of the hub whose data directory is `--data`: the nodes and
    /// pagers that pin the hall CA then trust the broker (deploy/README.md).
    BrokerCert(cmd::keys::BrokerCertArgs),
    /// Enrol a node for a board on a hub that is not running (while it runs: `POST
    /// /api/nodes/enrol`): prints `{"hardware","board","key"}` and writes the key to
    /// `--key-file` for the node's own `--key-file`. Enrolling the same hardware again hands
    /// out a new key (the old one stops working) and moves it to the board given: a swap in
    /// one step.
    Enrol(cmd::keys::EnrolArgs),
    /// The MQTT broker the hub embeds, alone and open to anyone (no logins): the baseline
    /// the benchmarks compare the hub with. Not for a hall.
    #[command(hide = true)]
    Broker(cmd::broker::BrokerArgs),
    /// A demo hall: embedded broker, hub and simulated boards replaying real games.
    Demo(cmd::demo::DemoConfig),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Whatever the hub writes (the journal, the token, key files) is its user's only.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    let cli = Cli::parse();
    log_for(&cli.command);
    match cli.command {
        Command::Serve(args) => cmd::serve::run(args, shutdown_signal()).await,
        Command::Pager(args) => cmd::pager::run(args.config()?).await,
        Command::BrokerUsers(args) => cmd::keys::broker_users(args),
        Command::RotateHallSecret(args) => cmd::keys::rotate_hall_secret(args),
        Command::ClusterSecrets(args) => cmd::keys::cluster_secrets(args),
        Command::ClusterJoin(args) => cmd::keys::cluster_join(args),
        Command::EnrolArbiter(args) => cmd::keys::enrol_arbiter(args),
        Command::AlertReport(args) => cmd::report::print(args),
        Command::LoginLink(args) => cmd::keys::login_link(args),
        Command::BrokerCert(args) => cmd::keys::broker_cert(args),
        Command::Enrol(args) => cmd::keys::enrol(args),
        Command::Broker(args) => cmd::broker::run(args, shutdown_signal()).await,
        Command::Demo(config) => cmd::demo::run(config).await,
    }
}

/// Logs to stderr: the hall's service logs what it does; the other commands print their own
/// summary and log only what goes wrong (RUST_LOG asks for more).
fn log_for(command: &Command) {
    let default_filter = match command {
        Command::Serve(_) => "warn,hub=info,board_node=warn",
        _ => "warn",
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colours for a terminal only: a journal or a log file gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| default_filter.into()),
        )
        .init();
}

/// Ctrl-C or SIGTERM (systemd's stop).
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("stopping");
}
