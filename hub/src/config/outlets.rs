//! Where the broadcast's outlets send, as the configuration names them: the lichess
//! broadcast's rounds and an FTP server. Plain settings, read here and used by the outlets
//! (`edge/outlets/`), so the configuration needs nothing of the outlets.

use std::collections::BTreeMap;

use crate::core::ids::RoundNo;
use crate::core::relay::slices::BoardRanges;

/// Games lichess shows in a round.
pub const GAMES_PER_ROUND: usize = 100;

/// One lichess round a hub round's boards go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LichessSlice {
    /// Its boards; `None`: every board of the round.
    pub boards: Option<BoardRanges>,
    /// The lichess round's id.
    pub round_id: String,
}

/// Where and how to push.
#[derive(Clone, PartialEq, Eq)]
pub struct LichessTarget {
    /// `https://lichess.org`, or a test server.
    pub url: String,
    /// The lichess round every board of the round the hub begins in goes to
    /// (`[broadcast.lichess] round_id`), where `[[rounds]]` does not say otherwise.
    pub round_id: Option<String>,
    /// Each round's lichess rounds (`[[rounds]] lichess_round_id`, `lichess_slices`).
    pub rounds: BTreeMap<RoundNo, Vec<LichessSlice>>,
    /// A personal API token with the `study:write` scope.
    pub token: String,
}

impl std::fmt::Debug for LichessTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LichessTarget")
            .field("url", &self.url)
            .field("round_id", &self.round_id)
            .field("rounds", &self.rounds)
            .finish_non_exhaustive() // the token: never in a log
    }
}

impl LichessTarget {
    /// The lichess rounds `round` goes to: its own, or for the round the hub began in
    /// (`first`), the broadcast's; none: not pushed.
    pub fn slices(&self, round: RoundNo, first: RoundNo) -> Vec<LichessSlice> {
        match self.rounds.get(&round) {
            Some(slices) => slices.clone(),
            None => match &self.round_id {
                Some(id) if round == first => vec![LichessSlice {
                    boards: None,
                    round_id: id.clone(),
                }],
                _ => Vec::new(),
            },
        }
    }
}

/// The server, as `[broadcast.ftp] url` names it.
#[derive(Clone, PartialEq, Eq)]
pub struct FtpTarget {
    /// `ftps://`: explicit TLS before the login.
    pub secure: bool,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// The folder the rounds' folders go in (`""`: the login's own).
    pub dir: String,
    /// The CA (PEM) an `ftps://` server's certificate is checked against (`[broadcast.ftp]
    /// ca`); `None`: the web's roots.
    pub ca_pem: Option<String>,
}

impl std::fmt::Debug for FtpTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

/// Why an FTP URL was refused.
#[derive(Debug, thiserror::Error)]
pub enum FtpUrlError {
    #[error("not a URL: {0}")]
    Url(#[from] url::ParseError),
    #[error("ftp:// or ftps://, not {0}://")]
    Scheme(String),
    #[error("no host")]
    NoHost,
    #[error("the user name or password is not UTF-8 once decoded")]
    Encoding,
}

impl FtpTarget {
    /// `ftp://USER:PASSWORD@HOST:PORT/DIR` or `ftps://…`; port 21 and user `anonymous`
    /// where the URL is silent.
    pub fn from_url(text: &str) -> Result<FtpTarget, FtpUrlError> {
        let url = url::Url::parse(text)?;
        let secure = match url.scheme() {
            "ftp" => false,
            "ftps" => true,
            other => return Err(FtpUrlError::Scheme(other.to_owned())),
        };
        let decode = |s: &str| percent_decode(s).ok_or(FtpUrlError::Encoding);
        let user = match url.username() {
            "" => "anonymous".to_owned(),
            user => decode(user)?,
        };
        Ok(FtpTarget {
            secure,
            host: url.host_str().ok_or(FtpUrlError::NoHost)?.to_owned(),
            port: url.port().unwrap_or(21),
            user,
            password: decode(url.password().unwrap_or(""))?,
            dir: decode(url.path().trim_matches('/'))?,
            ca_pem: None,
        })
    }

    /// The URL without its password: for logs and the status.
    pub fn shown(&self) -> String {
        let scheme = if self.secure { "ftps" } else { "ftp" };
        format!(
            "{scheme}://{}@{}:{}/{}",
            self.user, self.host, self.port, self.dir
        )
    }
}

/// `%XX` escapes of a URL's part decoded; `None` where the bytes are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slices_of_a_round_and_the_first_rounds_broadcast() {
        let slice = |boards: &str, id: &str| LichessSlice {
            boards: Some(boards.parse().unwrap()),
            round_id: id.into(),
        };
        let target = LichessTarget {
            url: "https://lichess.org".into(),
            round_id: Some("First001".into()),
            rounds: BTreeMap::from([(
                RoundNo(2),
                vec![slice("1-100", "AbCd1234"), slice("101-200", "EfGh5678")],
            )]),
            token: "lip_secret".into(),
        };
        assert_eq!(
            target.slices(RoundNo(1), RoundNo(1))[0].round_id,
            "First001"
        );
        assert_eq!(target.slices(RoundNo(2), RoundNo(1)).len(), 2);
        assert!(target.slices(RoundNo(3), RoundNo(1)).is_empty());
        assert!(!format!("{target:?}").contains("lip_secret"));
    }

    #[test]
    fn the_url_names_the_server_the_login_and_the_folder() {
        let ftp = FtpTarget::from_url("ftps://zeit%40hall:p%3Ass@ftp.example.org:2121/live/open")
            .unwrap();
        assert!(ftp.secure);
        assert_eq!((ftp.host.as_str(), ftp.port), ("ftp.example.org", 2121));
        assert_eq!(
            (ftp.user.as_str(), ftp.password.as_str()),
            ("zeit@hall", "p:ss")
        );
        assert!(!format!("{ftp:?}").contains("p:ss") && !ftp.shown().contains("p%3Ass"));
        let plain = FtpTarget::from_url("ftp://upload.example.org").unwrap();
        assert_eq!(
            (plain.port, plain.user.as_str(), plain.dir.as_str()),
            (21, "anonymous", "")
        );
        assert!(matches!(
            FtpTarget::from_url("sftp://h/x"),
            Err(FtpUrlError::Scheme(_))
        ));
        assert!(FtpTarget::from_url("not a url").is_err());
    }
}
