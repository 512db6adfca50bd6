//! Questions about the alerts, and an arbiter's acknowledgement or resolution of one.

use tokio::sync::oneshot::Sender;

use crate::core::alerts::desk::AlertError;
use crate::core::alerts::{Alert, AlertCommand};
use crate::core::ids::AlertId;
use crate::core::phone::PhoneAct;

/// The alerts as they stand.
pub enum AlertRead {
    /// Every alert.
    All { reply: Sender<Vec<Alert>> },
}

/// An arbiter acts on an alert.
pub enum AlertChange {
    /// From the page or the API, by an arbiter's own login held to their zones
    /// (`Some(name)`) or the chief's token (`None`); answered once durable.
    Command {
        id: AlertId,
        command: AlertCommand,
        held_to: Option<String>,
        reply: Sender<Result<Alert, AlertError>>,
    },
    /// A tap on a phone's button, with the MAC its key gives it.
    Phone {
        arbiter: String,
        id: AlertId,
        act: PhoneAct,
        mac: String,
        reply: Sender<Result<Alert, AlertError>>,
    },
}
