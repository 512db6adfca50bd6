//! Who the embedded broker and the page let in, as the core's keys and roster have them
//! now: enrolled nodes under their boards' logins, enrolled arbiters under theirs. The
//! shell holds an [`Admission`] and tells it when the keys or the roster changed.

use std::collections::HashSet;

use protocol::{identity, BoardNo};

use crate::core::hub::Hub;
use crate::core::phone::PhoneCredentials;
use crate::edge::{http::access::Access, http::login, mqtt::broker};

/// Who the broker lets in now, beside the core's keys and roster.
pub(super) struct Admission {
    /// Who the embedded broker lets in (`None`: an external broker, or an open hall).
    users: Option<broker::Users>,
    /// The boards whose nodes `users` admits now.
    nodes: HashSet<BoardNo>,
    /// The pagers' usernames `users` admits now.
    pagers: HashSet<String>,
}

impl Admission {
    pub(super) fn new(users: Option<broker::Users>) -> Admission {
        Admission {
            users,
            nodes: HashSet::new(),
            pagers: HashSet::new(),
        }
    }

    /// The embedded broker's users, for the broker to check logins against.
    pub(super) fn users(&self) -> Option<&broker::Users> {
        self.users.as_ref()
    }

    /// The embedded broker lets in exactly the enrolled nodes ([`nodes`]).
    pub(super) fn nodes(&mut self, hub: &Hub) {
        if let Some(users) = &self.users {
            nodes(users, hub, &mut self.nodes);
        }
    }

    /// The embedded broker and the page let in exactly the enrolled arbiters
    /// ([`arbiters`]).
    pub(super) fn arbiters(&mut self, access: &Access, hub: &Hub) {
        arbiters(self.users.as_ref(), access, hub, &mut self.pagers);
    }

    /// The broker's logins of `boards`, whose nodes' keys changed ([`boards`]).
    pub(super) fn boards(&mut self, hub: &Hub, changed: impl IntoIterator<Item = BoardNo>) {
        if let Some(users) = &self.users {
            boards(users, hub, &mut self.nodes, changed);
        }
    }
}

/// The embedded broker lets in exactly the enrolled nodes, each under its board's username
/// with the password its key derives: every enrolled board of `hub`, and no other of the
/// boards `admitted` held (at a start, and when the hall is rebuilt from the journal).
fn nodes(users: &broker::Users, hub: &Hub, admitted: &mut HashSet<BoardNo>) {
    let enrolled: HashSet<BoardNo> = hub.enrolled_boards().map(|(board, _)| board).collect();
    let gone: Vec<BoardNo> = admitted.difference(&enrolled).copied().collect();
    boards(users, hub, admitted, enrolled.into_iter().chain(gone));
}

/// Each enrolled arbiter's pager login on the embedded broker (`users`, if it keeps any;
/// `admitted` the pagers it admits) and page login (`access`), as `hub`'s roster has them
/// now: a revoked arbiter's are gone, and so are their page's sessions.
fn arbiters(
    users: Option<&broker::Users>,
    access: &Access,
    hub: &Hub,
    admitted: &mut HashSet<String>,
) {
    access.set_arbiters(
        hub.arbiter_members()
            .map(|(name, member)| (name, login::arbiter_login(member))),
    );
    access.set_phones(
        hub.arbiter_members()
            .map(|(name, member)| (name.to_owned(), PhoneCredentials::of(member))),
    );
    let Some(users) = users else {
        return;
    };
    let mut now = HashSet::new();
    for (_, key) in hub.arbiters() {
        let user = identity::pager_user(key);
        users.set(
            user.clone(),
            identity::pager_password(key),
            identity::pager_client_prefix(hub.event(), &user),
        );
        now.insert(user);
    }
    for gone in admitted.difference(&now) {
        users.remove(gone);
    }
    *admitted = now;
}

/// The broker's logins of `boards` as `hub` has their nodes' keys now.
fn boards(
    users: &broker::Users,
    hub: &Hub,
    admitted: &mut HashSet<BoardNo>,
    boards: impl IntoIterator<Item = BoardNo>,
) {
    for board in boards {
        match hub.board_key(board) {
            Some(key) => {
                users.set(
                    identity::node_user(board),
                    identity::node_password(key),
                    identity::node_client_prefix(hub.event(), board),
                );
                admitted.insert(board);
            }
            None => {
                users.remove(&identity::node_user(board));
                admitted.remove(&board);
            }
        }
    }
}
