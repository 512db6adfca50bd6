//! The page's logins: a login with the arbiters' token opens a session whose id (256 random
//! bits, never the token) is the page's cookie. A log-out or its expiry ends it, and a stolen
//! cookie is worth one session, not the token. The hub keeps the sessions in its data
//! directory (a hash of each id, never the id), so that a restart mid-round does not log
//! every arbiter out. Wrong tokens are throttled per client address and for the whole hub,
//! so guessing is slower than the token is long.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use sha2::Digest;

/// How long a session lasts: a playing day.
pub const LIFETIME: Duration = Duration::from_secs(14 * 3600);
/// Sessions held at once; the oldest ends first when more are opened.
pub const MAX_SESSIONS: usize = 1_000;
/// Wrong tokens a client address may send in [`WINDOW`] before it must wait.
pub const TRIES_PER_CLIENT: u32 = 10;
/// Wrong tokens the whole hub takes in [`WINDOW`] (addresses are cheap to change).
pub const TRIES_OVERALL: u32 = 100;
pub const WINDOW: Duration = Duration::from_secs(60);
/// Addresses whose wrong tries are remembered at once.
const MAX_CLIENTS: usize = 10_000;

#[derive(Debug, Clone, Default)]
pub struct Sessions(Arc<Mutex<Inner>>);

#[derive(Debug, Default)]
struct Inner {
    /// The hash of each open session's id, and when it ends.
    open: HashMap<String, SystemTime>,
    /// Hashes by opening time, for ending the oldest first.
    order: VecDeque<String>,
    /// Where they are kept, if anywhere.
    file: Option<PathBuf>,
    /// Per client: the window's start and the wrong tries in it.
    wrong: HashMap<IpAddr, (Instant, u32)>,
    wrong_overall: Option<(Instant, u32)>,
}

/// What is kept of a session's id: its SHA-256, so the file is no list of cookies.
fn hash(id: &str) -> String {
    sha2::Sha256::digest(id.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Sessions {
    /// Sessions kept in `file` (its owner's only): those still open at `now` are read back.
    pub fn kept_in(file: &Path, now: SystemTime) -> anyhow::Result<Sessions> {
        let mut inner = Inner {
            file: Some(file.to_owned()),
            ..Inner::default()
        };
        let text = super::secret_file::read(file)?.unwrap_or_default();
        let mut kept: Vec<(SystemTime, String)> = text
            .lines()
            .filter_map(|line| {
                let (hash, until) = line.split_once(' ')?;
                let until = SystemTime::UNIX_EPOCH + Duration::from_millis(until.parse().ok()?);
                (hash.len() == 64 && until > now).then(|| (until, hash.to_owned()))
            })
            .collect();
        kept.sort();
        for (until, hash) in kept.into_iter().rev().take(MAX_SESSIONS).rev() {
            inner.order.push_back(hash.clone());
            inner.open.insert(hash, until);
        }
        Ok(Sessions(Arc::new(Mutex::new(inner))))
    }

    /// Opens a session; its id, for the cookie.
    pub fn open(&self, now: SystemTime) -> String {
        let id = super::login::new_token();
        let mut inner = self.0.lock().expect("sessions lock");
        while inner.open.len() >= MAX_SESSIONS {
            let Some(oldest) = inner.order.pop_front() else {
                break;
            };
            inner.open.remove(&oldest);
        }
        let key = hash(&id);
        inner.open.insert(key.clone(), now + LIFETIME);
        inner.order.push_back(key);
        inner.save();
        id
    }

    /// Whether `id` is an open session at `now`.
    pub fn is_open(&self, id: &str, now: SystemTime) -> bool {
        if id.len() != 64 {
            return false;
        }
        let inner = self.0.lock().expect("sessions lock");
        inner.open.get(&hash(id)).is_some_and(|until| now < *until)
    }

    /// Ends session `id` (a log-out).
    pub fn close(&self, id: &str) {
        let key = hash(id);
        let mut inner = self.0.lock().expect("sessions lock");
        if inner.open.remove(&key).is_some() {
            inner.order.retain(|o| *o != key);
            inner.save();
        }
    }

    /// Whether `client` may try a token now; `Err` with how long to wait.
    pub fn may_try(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        let inner = self.0.lock().expect("sessions lock");
        let blocked = |window: Option<&(Instant, u32)>, limit: u32| {
            window
                .filter(|(start, tries)| now < *start + WINDOW && *tries >= limit)
                .map(|(start, _)| *start + WINDOW - now)
        };
        match blocked(inner.wrong.get(&client), TRIES_PER_CLIENT)
            .or_else(|| blocked(inner.wrong_overall.as_ref(), TRIES_OVERALL))
        {
            Some(wait) => Err(wait),
            None => Ok(()),
        }
    }

    /// `client` sent a wrong token.
    pub fn wrong_try(&self, client: IpAddr, now: Instant) {
        let mut inner = self.0.lock().expect("sessions lock");
        let count = |window: &mut (Instant, u32)| {
            if now >= window.0 + WINDOW {
                *window = (now, 0);
            }
            window.1 += 1;
        };
        if inner.wrong.len() >= MAX_CLIENTS {
            inner.wrong.retain(|_, (start, _)| now < *start + WINDOW);
        }
        if inner.wrong.len() < MAX_CLIENTS {
            count(inner.wrong.entry(client).or_insert((now, 0)));
        }
        count(inner.wrong_overall.get_or_insert((now, 0)));
    }
}

impl Inner {
    /// Writes the open sessions to the file, if kept in one (a log-in or log-out is rare:
    /// the whole file each time, replaced in one step).
    fn save(&self) {
        let Some(file) = &self.file else {
            return;
        };
        let text: String = self
            .order
            .iter()
            .filter_map(|h| Some(format!("{h} {}\n", unix_ms(*self.open.get(h)?))))
            .collect();
        let temporary = file.with_extension("new");
        let saved = super::secret_file::write(&temporary, text.trim_end())
            .and_then(|()| Ok(std::fs::rename(&temporary, file)?));
        if let Err(e) = saved {
            tracing::warn!(error = %e, "the page's sessions could not be kept: a restart will log the arbiters out");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_its_own_random_id_until_it_ends() {
        let sessions = Sessions::default();
        let now = SystemTime::now();
        let a = sessions.open(now);
        let b = sessions.open(now);
        assert_ne!(a, b);
        assert!(sessions.is_open(&a, now));
        assert!(!sessions.is_open("a guess", now));
        sessions.close(&a);
        assert!(!sessions.is_open(&a, now));
        assert!(sessions.is_open(&b, now + LIFETIME - Duration::from_secs(1)));
        assert!(!sessions.is_open(&b, now + LIFETIME));
    }

    #[test]
    fn the_oldest_session_ends_when_too_many_are_open() {
        let sessions = Sessions::default();
        let now = SystemTime::now();
        let first = sessions.open(now);
        for _ in 0..MAX_SESSIONS {
            sessions.open(now);
        }
        assert!(!sessions.is_open(&first, now));
        assert_eq!(sessions.0.lock().unwrap().open.len(), MAX_SESSIONS);
    }

    #[test]
    fn kept_sessions_outlive_a_restart_and_the_file_holds_no_cookie() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sessions");
        let now = SystemTime::now();
        let sessions = Sessions::kept_in(&file, now).unwrap();
        let (kept, ended) = (sessions.open(now), sessions.open(now));
        sessions.close(&ended);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(&kept), "the file holds hashes, not ids");
        let restarted = Sessions::kept_in(&file, now).unwrap();
        assert!(restarted.is_open(&kept, now));
        assert!(!restarted.is_open(&ended, now), "a log-out stays a log-out");
        let later = Sessions::kept_in(&file, now + LIFETIME).unwrap();
        assert!(
            !later.is_open(&kept, now + LIFETIME),
            "expired at the restart"
        );
    }

    #[test]
    fn wrong_tokens_are_throttled_per_client_and_overall() {
        let sessions = Sessions::default();
        let now = Instant::now();
        let client: IpAddr = "10.0.0.9".parse().unwrap();
        for _ in 0..TRIES_PER_CLIENT {
            assert!(sessions.may_try(client, now).is_ok());
            sessions.wrong_try(client, now);
        }
        assert!(sessions.may_try(client, now).is_err());
        assert!(sessions.may_try(client, now + WINDOW).is_ok());
        // Many addresses together meet the hub's own limit.
        for n in 0..TRIES_OVERALL {
            let other = IpAddr::from([10, 1, (n / 256) as u8, (n % 256) as u8]);
            sessions.wrong_try(other, now + WINDOW);
        }
        let fresh: IpAddr = "10.9.9.9".parse().unwrap();
        assert!(sessions.may_try(fresh, now + WINDOW).is_err());
    }
}
