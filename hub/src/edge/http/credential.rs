//! Who a request comes from ([`Login`]), and what is kept of a credential or a session's
//! id ([`hash`]): the two things the logins, the sessions and the access rules share.

use sha2::Digest;

/// Who a request comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Login {
    /// The hall's token: the chief arbiter (and the technician's scripts).
    Chief,
    /// An enrolled arbiter, logged in with their own credential.
    Arbiter(String),
}

impl Login {
    /// The name an action of this login is signed with: an arbiter's own, always; the
    /// chief's token may name the arbiter it enters for (it can enrol any name anyway), and
    /// is `"chief"` otherwise.
    pub fn signs(&self, typed: Option<String>) -> String {
        match self {
            Login::Arbiter(name) => name.clone(),
            Login::Chief => typed
                .filter(|t| !t.trim().is_empty())
                .unwrap_or_else(|| "chief".to_owned()),
        }
    }

    /// The arbiter whose zones hold this login's commands (their own login); `None` for
    /// the chief's token, which acts anywhere.
    pub fn held_to_zones(&self) -> Option<String> {
        match self {
            Login::Arbiter(name) => Some(name.clone()),
            Login::Chief => None,
        }
    }

    /// As the page shows it.
    pub fn name(&self) -> &str {
        match self {
            Login::Chief => "chief",
            Login::Arbiter(name) => name,
        }
    }
}

/// What is kept of a session's id (or a credential): its SHA-256, so the file is no list of
/// cookies.
pub fn hash(id: &str) -> String {
    sha2::Sha256::digest(id.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
