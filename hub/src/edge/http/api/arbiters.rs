//! Questions about the arbiters: who is enrolled, their logins and phones, and the chief
//! arbiter's enrolments.

use tokio::sync::oneshot::Sender;

use crate::core::hub::{ArbiterEnrolment, EnrolmentRefusal};
use crate::core::phone::{PhoneCredentials, PhoneWatch};

use super::{ArbiterEnrolRequest, PhoneFeed};

/// Who the arbiters are.
pub enum ArbiterRead {
    /// The enrolled arbiters' names.
    Names { reply: Sender<Vec<String>> },
    /// An arbiter's own page login (`None`: not enrolled).
    Login {
        arbiter: String,
        reply: Sender<Option<String>>,
    },
    /// What an arbiter's phone watches, and its subscription (`None`: not enrolled).
    PhoneWatch {
        arbiter: String,
        reply: Sender<Option<(PhoneWatch, PhoneCredentials)>>,
    },
    /// An arbiter's phone stream, from after step `after` (`None`: not enrolled).
    PhoneFeed {
        arbiter: String,
        after: u64,
        reply: Sender<Option<PhoneFeed>>,
    },
}

/// The chief arbiter's changes to the roster.
pub enum ArbiterChange {
    /// Enrols an arbiter (a new key); answered with their pager's credentials once
    /// durable, or why not.
    Enrol {
        request: ArbiterEnrolRequest,
        reply: Sender<Result<ArbiterEnrolment, EnrolmentRefusal>>,
    },
    /// Revokes an arbiter; answered with the roster once durable.
    Revoke {
        arbiter: String,
        reply: Sender<Vec<String>>,
    },
    /// Renews an arbiter's links (page login, phone); the enrolled arbiters, once durable.
    RenewLinks {
        arbiter: String,
        reply: Sender<Vec<String>>,
    },
}
