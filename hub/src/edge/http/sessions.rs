//! The page's logins: a login with the hall's token or an arbiter's own login opens a
//! session whose id (256 random bits, never the credential) is the page's cookie, and which
//! remembers who logged in. A log-out, its expiry or the arbiter's revocation ends it, and a
//! stolen cookie is worth one session, not the credential. The hub keeps the sessions in its data
//! directory (a hash of each id, never the id), so that a restart mid-round does not log
//! every arbiter out. Wrong tokens are throttled per client ([`super::guesses`]).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::credential::{hash, Login};

/// How long a session lasts: a playing day.
pub const LIFETIME: Duration = Duration::from_secs(14 * 3600);
/// Sessions one arbiter's login holds at once (a phone, a tablet, a laptop…); their oldest
/// ends first when they open more, so no arbiter can end the others' sessions.
pub const PER_ARBITER: usize = 8;
/// Sessions the hall's token holds at once (the chief arbiter's screens, a desk's).
pub const PER_CHIEF: usize = 64;
/// Sessions held at once: every arbiter's share and the chief's fit
/// ([`crate::core::roster::MAX_ARBITERS`] × [`PER_ARBITER`] + [`PER_CHIEF`]); the oldest
/// ends first past it.
pub const MAX_SESSIONS: usize = 4_096;
const _: () = assert!(crate::core::roster::MAX_ARBITERS * PER_ARBITER + PER_CHIEF <= MAX_SESSIONS);

#[derive(Debug, Clone, Default)]
pub struct Sessions(Arc<Mutex<Inner>>);

#[derive(Debug, Default)]
struct Inner {
    /// The hash of each open session's id, and the session.
    open: HashMap<String, Session>,
    /// Hashes by opening time, for ending the oldest first.
    order: VecDeque<String>,
    /// Where they are kept, if anywhere.
    file: Option<PathBuf>,
}

/// An open session: who, with which credential, until when.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Session {
    until: SystemTime,
    login: Login,
    /// The hash of the arbiter's login it was opened with: revoking or re-enrolling the
    /// arbiter ends it. Empty for the hall's token.
    credential: String,
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
        let text = crate::edge::keys::secret_file::read(file)?.unwrap_or_default();
        let mut kept: Vec<(SystemTime, String, Session)> =
            text.lines().filter_map(read_line).collect();
        kept.retain(|(until, ..)| *until > now);
        kept.sort_by_key(|(until, ..)| *until);
        for (_, hash, session) in kept.into_iter().rev().take(MAX_SESSIONS).rev() {
            inner.order.push_back(hash.clone());
            inner.open.insert(hash, session);
        }
        Ok(Sessions(Arc::new(Mutex::new(inner))))
    }

    /// Opens a session of `login`, who logged in with the credential whose hash is
    /// `credential` (empty: the hall's token); its id, for the cookie.
    pub fn open(&self, now: SystemTime, login: Login, credential: String) -> String {
        let id = crate::edge::keys::arbiter_token::new_token();
        let mut inner = self.0.lock().expect("sessions lock");
        let share = match login {
            Login::Chief => PER_CHIEF,
            Login::Arbiter(_) => PER_ARBITER,
        };
        let theirs: Vec<String> = inner
            .order
            .iter()
            .filter(|h| inner.open.get(*h).is_some_and(|s| s.login == login))
            .cloned()
            .collect();
        for oldest in theirs.iter().take((theirs.len() + 1).saturating_sub(share)) {
            inner.open.remove(oldest);
            inner.order.retain(|h| h != oldest);
        }
        while inner.open.len() >= MAX_SESSIONS {
            let Some(oldest) = inner.order.pop_front() else {
                break;
            };
            inner.open.remove(&oldest);
        }
        let key = hash(&id);
        let session = Session {
            until: now + LIFETIME,
            login,
            credential,
        };
        inner.open.insert(key.clone(), session);
        inner.order.push_back(key);
        inner.save();
        id
    }

    /// Who is logged in with session `id` at `now`, if it is open.
    pub fn who(&self, id: &str, now: SystemTime) -> Option<Login> {
        if id.len() != 64 {
            return None;
        }
        let inner = self.0.lock().expect("sessions lock");
        let session = inner.open.get(&hash(id))?;
        (now < session.until).then(|| session.login.clone())
    }

    /// Whether `id` is an open session at `now`.
    pub fn is_open(&self, id: &str, now: SystemTime) -> bool {
        self.who(id, now).is_some()
    }

    /// Ends every arbiter's session whose credential is not among `valid` (hashes): the
    /// arbiter was revoked or enrolled again.
    pub fn keep_only(&self, valid: &std::collections::HashSet<String>) {
        let mut inner = self.0.lock().expect("sessions lock");
        let before = inner.open.len();
        inner
            .open
            .retain(|_, s| s.credential.is_empty() || valid.contains(&s.credential));
        if inner.open.len() != before {
            let Inner { open, order, .. } = &mut *inner;
            order.retain(|h| open.contains_key(h));
            inner.save();
        }
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
}

/// A session's line in the file: `HASH UNTIL_MS` for the hall's token, `HASH UNTIL_MS
/// CREDENTIAL NAME_HEX` for an arbiter (the name in hex: it may hold spaces).
fn write_line(hash: &str, session: &Session) -> String {
    let until = unix_ms(session.until);
    match &session.login {
        Login::Chief => format!("{hash} {until}\n"),
        Login::Arbiter(name) => {
            let name: String = name.bytes().map(|b| format!("{b:02x}")).collect();
            format!("{hash} {until} {} {name}\n", session.credential)
        }
    }
}

/// A line as [`write_line`] writes it: the session's end, its hash, the session.
fn read_line(line: &str) -> Option<(SystemTime, String, Session)> {
    let mut fields = line.split(' ');
    let hash = fields.next().filter(|h| h.len() == 64)?;
    let until = SystemTime::UNIX_EPOCH + Duration::from_millis(fields.next()?.parse().ok()?);
    let (login, credential) = match (fields.next(), fields.next()) {
        (None, _) => (Login::Chief, String::new()),
        (Some(credential), Some(name)) if credential.len() == 64 && name.len() % 2 == 0 => {
            let bytes: Option<Vec<u8>> = (0..name.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(name.get(i..i + 2)?, 16).ok())
                .collect();
            let name = String::from_utf8(bytes?).ok()?;
            (Login::Arbiter(name), credential.to_owned())
        }
        _ => return None,
    };
    let session = Session {
        until,
        login,
        credential,
    };
    Some((until, hash.to_owned(), session))
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
            .filter_map(|h| Some(write_line(h, self.open.get(h)?)))
            .collect();
        let temporary = file.with_extension("new");
        let saved = crate::edge::keys::secret_file::write(&temporary, text.trim_end())
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
        let a = sessions.open(now, Login::Chief, String::new());
        let b = sessions.open(now, Login::Chief, String::new());
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
        let first = sessions.open(now, Login::Arbiter("arbiter 0".into()), hash("0"));
        for i in 0..MAX_SESSIONS {
            let name = format!("arbiter {}", i / PER_ARBITER + 1);
            sessions.open(now, Login::Arbiter(name), hash(&i.to_string()));
        }
        assert!(!sessions.is_open(&first, now));
        assert_eq!(sessions.0.lock().unwrap().open.len(), MAX_SESSIONS);
    }

    #[test]
    fn an_arbiter_opening_many_sessions_ends_only_their_own() {
        let sessions = Sessions::default();
        let now = SystemTime::now();
        let chief = sessions.open(now, Login::Chief, String::new());
        let berg = Login::Arbiter("IA Berg".into());
        let aas = sessions.open(now, Login::Arbiter("IA Aas".into()), hash("aas"));
        let first = sessions.open(now, berg.clone(), hash("berg"));
        for _ in 0..1_000 {
            sessions.open(now, berg.clone(), hash("berg"));
        }
        assert!(sessions.is_open(&chief, now) && sessions.is_open(&aas, now));
        assert!(!sessions.is_open(&first, now), "Berg's oldest ended");
        let open = &sessions.0.lock().unwrap().open;
        let bergs = open.values().filter(|s| s.login == berg).count();
        assert_eq!(bergs, PER_ARBITER);
    }

    #[test]
    fn kept_sessions_outlive_a_restart_and_the_file_holds_no_cookie() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sessions");
        let now = SystemTime::now();
        let sessions = Sessions::kept_in(&file, now).unwrap();
        let (kept, ended) = (
            sessions.open(now, Login::Chief, String::new()),
            sessions.open(now, Login::Chief, String::new()),
        );
        let berg = Login::Arbiter("IA Berg".into());
        let bergs = sessions.open(now, berg.clone(), hash("berg's login"));
        sessions.close(&ended);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(&kept), "the file holds hashes, not ids");
        let restarted = Sessions::kept_in(&file, now).unwrap();
        assert_eq!(restarted.who(&kept, now), Some(Login::Chief));
        assert_eq!(
            restarted.who(&bergs, now),
            Some(berg),
            "who logged in, kept"
        );
        assert!(!restarted.is_open(&ended, now), "a log-out stays a log-out");
        let later = Sessions::kept_in(&file, now + LIFETIME).unwrap();
        assert!(
            !later.is_open(&kept, now + LIFETIME),
            "expired at the restart"
        );
    }

    #[test]
    fn revoking_an_arbiter_ends_their_sessions_only() {
        let sessions = Sessions::default();
        let now = SystemTime::now();
        let chief = sessions.open(now, Login::Chief, String::new());
        let berg = sessions.open(now, Login::Arbiter("IA Berg".into()), hash("b1"));
        let dahl = sessions.open(now, Login::Arbiter("IA Dahl".into()), hash("d1"));
        // Berg enrolled again (a new login): her old session ends, Dahl's stays.
        sessions.keep_only(&[hash("b2"), hash("d1")].into_iter().collect());
        assert!(sessions.is_open(&chief, now));
        assert!(!sessions.is_open(&berg, now));
        assert!(sessions.is_open(&dahl, now));
    }
}
