//! Uploading each round's `games.pgn` to an FTP server, as chess.com's broadcasts take them
//! (its *Tournament Broadcast Guide*: "the combined `games.pgn` file for each round", one
//! folder a round, frequent uploads): `DIR/round-{r}/games.pgn` whenever the round's feed
//! changed, at most once a second, retried with a growing wait; earlier rounds' folders
//! stay. FTPS (explicit TLS, `AUTH TLS`) where the URL says `ftps://`.
//!
//! Each file is uploaded aside (`games.pgn.part`) and renamed over the old one, so a reader
//! never fetches half a round. The client is suppaftp (a maintained FTP/FTPS crate on
//! tokio and rustls); the password is never logged nor served.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use suppaftp::tokio::{AsyncRustlsConnector, AsyncRustlsFtpStream};
use suppaftp::types::FileType;
use tokio::sync::Notify;

use super::status::Destination;
use super::{Outlet, OutletStatus, RoundFeed, StatusBoard};
use crate::config::outlets::FtpTarget;
use crate::core::ids::RoundNo;
use crate::view::feed;

/// Uploads are at most this often.
const UPLOAD_EVERY: Duration = Duration::from_secs(1);
/// Waits between attempts after a failure: 1 s, doubling, at most a minute.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(60);
/// One connection's work (connect, log in, every changed round) takes at most this long.
const SESSION_LIMIT: Duration = Duration::from_secs(30);

/// Where round `round`'s folder is on `target`.
fn round_dir(target: &FtpTarget, round: RoundNo) -> String {
    match target.dir.as_str() {
        "" => format!("round-{round}"),
        dir => format!("{dir}/round-{round}"),
    }
}

/// A round's file as the outlet hands it to the task.
#[derive(Debug, Clone)]
struct RoundFile {
    pgn: Arc<str>,
    print: u64,
    games: usize,
}

#[derive(Default)]
struct Inbox {
    rounds: Mutex<BTreeMap<RoundNo, RoundFile>>,
    changed: Notify,
    closed: AtomicBool,
}

/// The outlet: each round's games as one file, handed to the task that uploads them.
pub struct Uploader {
    inbox: Arc<Inbox>,
    status: StatusBoard,
}

impl Uploader {
    /// The outlet, its task started.
    pub fn start(target: FtpTarget) -> Uploader {
        let inbox = Arc::new(Inbox::default());
        let status = StatusBoard::new("ftp", target.shown());
        tokio::spawn(run(target, inbox.clone(), status.clone()));
        Uploader { inbox, status }
    }
}

impl Drop for Uploader {
    fn drop(&mut self) {
        self.inbox.closed.store(true, Ordering::Relaxed);
        self.inbox.changed.notify_one();
    }
}

impl Outlet for Uploader {
    fn round_changed(&mut self, feed: &RoundFeed<'_>) -> bool {
        let file = RoundFile {
            pgn: feed
                .games
                .iter()
                .map(|g| g.pgn.as_str())
                .collect::<String>()
                .into(),
            print: feed::fingerprint(feed.games),
            games: feed.games.len(),
        };
        let mut rounds = self.inbox.rounds.lock().unwrap_or_else(|p| p.into_inner());
        rounds.insert(feed.round, file);
        drop(rounds);
        self.inbox.changed.notify_one();
        true
    }

    fn status(&self) -> OutletStatus {
        self.status.get()
    }
}

/// Uploads every changed round, at most once a second, until the outlet is dropped.
async fn run(target: FtpTarget, inbox: Arc<Inbox>, status: StatusBoard) {
    let tls = match tls_connector(target.ca_pem.as_deref()) {
        Ok(tls) => Arc::new(tls),
        Err(e) => {
            tracing::error!(error = %e, "no TLS for the FTP server; not uploading");
            status.failed(&e.to_string());
            return;
        }
    };
    let mut uploaded: HashMap<RoundNo, u64> = HashMap::new();
    let mut wait = RETRY_FIRST;
    while !inbox.closed.load(Ordering::Relaxed) {
        let behind: Vec<(RoundNo, RoundFile)> = {
            let rounds = inbox.rounds.lock().unwrap_or_else(|p| p.into_inner());
            rounds
                .iter()
                .filter(|(r, f)| uploaded.get(r) != Some(&f.print))
                .map(|(r, f)| (*r, f.clone()))
                .collect()
        };
        if behind.is_empty() {
            inbox.changed.notified().await;
            continue;
        }
        let session = upload(&target, &tls, &behind, &status, &mut uploaded);
        let failure = match tokio::time::timeout(SESSION_LIMIT, session).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some(format!("no answer within {SESSION_LIMIT:?}")),
        };
        match failure {
            None => {
                wait = RETRY_FIRST;
                tokio::time::sleep(UPLOAD_EVERY).await;
            }
            Some(why) => {
                if status.failed(&why) {
                    tracing::warn!(server = %target.shown(), %why, retry_in = ?wait, "FTP upload failed; retrying");
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(RETRY_MAX);
            }
        }
    }
}

/// One session: connect, log in, upload each round of `behind`, quit.
async fn upload(
    target: &FtpTarget,
    tls: &Arc<tokio_rustls::TlsConnector>,
    behind: &[(RoundNo, RoundFile)],
    status: &StatusBoard,
    uploaded: &mut HashMap<RoundNo, u64>,
) -> suppaftp::FtpResult<()> {
    let mut ftp = AsyncRustlsFtpStream::connect((target.host.as_str(), target.port)).await?;
    if target.secure {
        let connector = AsyncRustlsConnector::from(tokio_rustls::TlsConnector::clone(tls));
        ftp = ftp.into_secure(connector, &target.host).await?;
    }
    ftp.login(target.user.as_str(), target.password.as_str())
        .await?;
    ftp.transfer_type(FileType::Binary).await?;
    if !target.dir.is_empty() {
        let _ = ftp.mkdir(&target.dir).await; // there already, most times
    }
    for (round, file) in behind {
        let dir = round_dir(target, *round);
        let _ = ftp.mkdir(&dir).await;
        let (aside, path) = (format!("{dir}/games.pgn.part"), format!("{dir}/games.pgn"));
        ftp.put_file(&aside, &mut file.pgn.as_bytes()).await?;
        if ftp.rename(&aside, &path).await.is_err() {
            // Servers that will not rename over a file (Windows's): the old one goes first.
            let _ = ftp.rm(&path).await;
            ftp.rename(&aside, &path).await?;
        }
        uploaded.insert(*round, file.print);
        let destination = Destination {
            round: *round,
            games: file.games,
            ..Destination::default()
        };
        status.sent(&path, destination);
        tracing::debug!(%path, games = file.games, "round uploaded by FTP");
    }
    let _ = ftp.quit().await;
    Ok(())
}

/// TLS for `ftps://`: the configured CA's, or the web's roots (as the lichess push trusts
/// them).
fn tls_connector(ca_pem: Option<&str>) -> Result<tokio_rustls::TlsConnector, link::tls::TlsError> {
    let config = match ca_pem {
        Some(pem) => link::tls::client_config(pem.as_bytes())?,
        None => {
            let roots =
                rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()?
                .with_root_certificates(roots)
                .with_no_client_auth();
            Arc::new(config)
        }
    };
    Ok(tokio_rustls::TlsConnector::from(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_round_has_its_folder_under_the_url_s() {
        let ftp = FtpTarget::from_url("ftps://zeit%40hall:p%3Ass@ftp.example.org:2121/live/open")
            .unwrap();
        assert_eq!(round_dir(&ftp, RoundNo(3)), "live/open/round-3");
        let plain = FtpTarget::from_url("ftp://upload.example.org").unwrap();
        assert_eq!(round_dir(&plain, RoundNo(1)), "round-1");
    }
}
