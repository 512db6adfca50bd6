//! The shell's answers about the alerts, and an arbiter's acknowledgement or resolution.

use super::Shell;
use crate::core::time::HubMs;
use crate::edge::http::api::{AlertChange, AlertRead};
use crate::run::requests::Waiting;

impl AlertRead {
    pub(super) fn answer(self, shell: &mut Shell) {
        match self {
            AlertRead::All { reply } => {
                drop(reply.send(shell.hub.desk().alerts().cloned().collect()))
            }
        }
    }
}

impl AlertChange {
    pub(super) fn apply(self, shell: &mut Shell, now: HubMs) {
        match self {
            AlertChange::Command {
                id,
                command,
                held_to,
                reply,
            } => {
                let request = shell.requests.request(Waiting::Alert(reply));
                shell
                    .hub
                    .handle_alert_command(now, Some(request), id, command, held_to.as_deref());
            }
            AlertChange::Phone {
                arbiter,
                id,
                act,
                mac,
                reply,
            } => {
                let request = shell.requests.request(Waiting::Alert(reply));
                shell
                    .hub
                    .handle_phone_command(now, request, &arbiter, id, act, &mac);
            }
        }
    }
}
