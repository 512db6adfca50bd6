//! Who may do what: the nodes' keys and the bindings of their hardware to boards, the
//! arbiters' roster, and the hall's secret the hub signs with. The technician and the chief
//! arbiter change them; each change is journaled and answered once durable.

use std::collections::BTreeMap;

use protocol::seal::NodeKey;
use protocol::BoardNo;

use super::durable::Deferred;
use super::output::{Enrolled, Output, Reply, RequestId, Write};
use super::Hub;
use crate::core::alerts::desk::AlertError;
use crate::core::alerts::Language;
use crate::core::arbiter::DecisionError;
use crate::core::bindings::Bindings;
use crate::core::ids::AlertId;
use crate::core::ids::HardwareId;
use crate::core::pager_seal;
use crate::core::phone::{PhoneStep, PhoneWatch};
use crate::core::roster::{Member, Roster};
use crate::core::time::HubMs;
use crate::core::trust::Trust;

/// A broker login: user name and password.
pub type BrokerLogin = (String, String);

/// The hub's member for access.
pub(super) struct Access {
    pub(super) bindings: Bindings,
    pub(super) trust: Trust,
    /// The arbiters enrolled, each with their own key.
    pub(super) roster: Roster,
    /// The hall's secret: the hub's signing key derives from it.
    pub(super) hall_secret: Option<NodeKey>,
    /// Signs what the pagers are told; from the hall's secret.
    pub(super) signer: Option<pager_seal::HubSigner>,
}

impl Access {
    pub(super) fn new(bindings: BTreeMap<HardwareId, BoardNo>, open_hall: bool) -> Access {
        Access {
            bindings: Bindings::new(bindings),
            trust: Trust::new(open_hall),
            roster: Roster::default(),
            hall_secret: None,
            signer: None,
        }
    }

    /// The hall's secret as the journal keeps it: the signer derives from it.
    pub(super) fn set_hall_secret(&mut self, secret: Option<NodeKey>) {
        self.signer = secret.as_ref().map(pager_seal::HubSigner::from_hall);
        self.hall_secret = secret;
    }
}

/// Why an arbiter was not enrolled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnrolmentRefusal {
    #[error("the hall has no secret (a hub without a journal)")]
    NoHallSecret,
    #[error(
        "the roster is full ({} arbiters): revoke one first",
        crate::core::roster::MAX_ARBITERS
    )]
    RosterFull,
    #[error("zone {0:?} is not one of the hall's: {1:?}")]
    UnknownZone(String, Vec<String>),
}

/// What an arbiter's pager needs (`hub pager --key-file`): the arbiter's name and own key
/// (their commands are sealed with it, their logins derive from it), the pager's MQTT login,
/// and the hub's public key its messages are signed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArbiterEnrolment {
    pub arbiter: String,
    pub key: NodeKey,
    pub mqtt_user: String,
    pub mqtt_password: String,
    /// What the pager's MQTT client id must start with (the broker refuses any other with
    /// CONNACK 5): `zeitnot-pager-{event}-{mqtt_user}-`, then anything of the pager's own.
    pub mqtt_client_id_prefix: String,
    pub hub_key: String,
}

impl ArbiterEnrolment {
    /// Arbiter `name`'s, enrolled with `key` in the hall of `event` with secret `hall`.
    pub fn new(hall: &NodeKey, event: &str, name: &str, key: NodeKey) -> ArbiterEnrolment {
        let mqtt_user = protocol::identity::pager_user(&key);
        ArbiterEnrolment {
            arbiter: name.to_owned(),
            mqtt_client_id_prefix: protocol::identity::pager_client_prefix(event, &mqtt_user),
            mqtt_user,
            mqtt_password: protocol::identity::pager_password(&key),
            key,
            hub_key: pager_seal::HubSigner::from_hall(hall).public_hex(),
        }
    }
}

impl Hub {
    /// The technician binds a node's e-board hardware to a board (`None`: unbinds it); the
    /// answer, the nodes' report, waits until it is durable.
    pub fn handle_binding(
        &mut self,
        now: HubMs,
        request: RequestId,
        hardware: &HardwareId,
        board: Option<BoardNo>,
    ) {
        self.now = self.now.max(now);
        let mut last = None;
        let left = self.access.bindings.board_of(hardware);
        for (hardware, board) in self.access.bindings.bind(hardware, board) {
            last = Some(self.write(Write::Binding { hardware, board }));
        }
        self.rebind(left.into_iter().chain(board));
        tracing::info!(%hardware, ?board, "node bound");
        if let Some(at) = last {
            self.pending.wait(at, Deferred::Binding(request));
        }
    }

    /// The technician enrols a node's hardware for `board` in one step: a new key (`fresh`,
    /// which the shell drew at random; an earlier key of the hardware stops working) and the
    /// binding, so a node swapped in takes the board over. The answer, with the key, waits
    /// until both are durable.
    pub fn handle_enrolment(
        &mut self,
        now: HubMs,
        request: RequestId,
        hardware: &HardwareId,
        board: BoardNo,
        fresh: NodeKey,
    ) {
        self.now = self.now.max(now);
        let known = self.access.trust.key(hardware).is_some();
        self.access.trust.enrol(hardware, fresh.clone());
        let _ = self.write(Write::Enrolment {
            hardware: hardware.clone(),
            key: Some(fresh.clone()),
        });
        let key = fresh;
        let mut at = None;
        let left = self.access.bindings.board_of(hardware);
        for (hardware, board) in self.access.bindings.bind(hardware, Some(board)) {
            at = Some(self.write(Write::Binding { hardware, board }));
        }
        self.rebind(left.into_iter().chain([board]));
        tracing::info!(%hardware, board = board.0, enrolled_before = known, "node enrolled");
        let enrolled = Enrolled {
            hardware: hardware.clone(),
            board,
            key,
        };
        let at = at.expect("binding writes at least the hardware's own");
        self.pending
            .wait(at, Deferred::Enrolment(request, enrolled));
    }

    /// The technician revokes a node's key: its hardware is unbound, and nothing sealed with
    /// the key is taken again. The answer, the nodes' report, waits until it is durable.
    pub fn handle_revocation(&mut self, now: HubMs, request: RequestId, hardware: &HardwareId) {
        self.now = self.now.max(now);
        self.access.trust.restore(hardware.clone(), None);
        let _ = self.write(Write::Enrolment {
            hardware: hardware.clone(),
            key: None,
        });
        let mut at = None;
        let left = self.access.bindings.board_of(hardware);
        for (hardware, board) in self.access.bindings.bind(hardware, None) {
            at = Some(self.write(Write::Binding { hardware, board }));
        }
        self.rebind(left);
        tracing::warn!(%hardware, "node key revoked");
        let at = at.expect("unbinding writes the hardware's own");
        self.pending.wait(at, Deferred::Binding(request));
    }

    /// The key enrolled for `hardware`, for `hub enrol` on a hub that is not running.
    pub fn enrolled_key(&self, hardware: &HardwareId) -> Option<&NodeKey> {
        self.access.trust.key(hardware)
    }

    /// The chief arbiter enrols arbiter `name` with a new key (`fresh`, which the shell drew
    /// at random; an earlier key of the name stops working), for `zones` (none: as the
    /// configuration says, or the whole hall) in `language`. The answer, the pager's
    /// credentials, waits until it is durable.
    pub fn handle_arbiter_enrolment(
        &mut self,
        now: HubMs,
        request: RequestId,
        name: &str,
        fresh: NodeKey,
        zones: Vec<String>,
        language: Option<Language>,
    ) {
        self.now = self.now.max(now);
        let refusal = if self.access.hall_secret.is_none() {
            Some(EnrolmentRefusal::NoHallSecret)
        } else if !self.access.roster.has_room_for(name) {
            Some(EnrolmentRefusal::RosterFull)
        } else {
            let known = self.desk.routing().zone_names();
            zones
                .iter()
                .find(|z| !known.contains(z))
                .map(|z| EnrolmentRefusal::UnknownZone(z.clone(), known))
        };
        let (Some(hall), None) = (self.access.hall_secret.clone(), refusal.clone()) else {
            let refusal = refusal.expect("a refusal without a hall secret");
            self.reply(request, Reply::ArbiterEnrolled(Err(refusal)));
            return;
        };
        let member = Member {
            key: fresh.clone(),
            zones,
            language,
            renewed: 0,
        };
        self.access.roster.enrol(name.to_owned(), member.clone());
        let at = self.write(Write::Arbiter {
            name: name.to_owned(),
            member: Some(member),
        });
        tracing::info!(arbiter = %name.escape_debug(), "arbiter enrolled");
        let enrolment = ArbiterEnrolment::new(&hall, &self.event, name, fresh);
        self.pending
            .wait(at, Deferred::ArbiterEnrolled(request, Box::new(enrolment)));
    }

    /// The chief arbiter revokes arbiter `name`: their pager's login, page login and seal
    /// stop working. The answer, the arbiters still enrolled, waits until it is durable.
    pub fn handle_arbiter_revocation(&mut self, now: HubMs, request: RequestId, name: &str) {
        self.now = self.now.max(now);
        if !self.access.roster.revoke(name) {
            self.reply(request, Reply::Arbiters(self.access.roster.names()));
            return;
        }
        let at = self.write(Write::Arbiter {
            name: name.to_owned(),
            member: None,
        });
        tracing::info!(arbiter = %name.escape_debug(), "arbiter revoked");
        self.pending.wait(at, Deferred::Arbiters(request));
    }

    /// The chief arbiter renews `name`'s links (a phone lost, a login link shown too
    /// widely): a new page login and phone subscription, the old ones retired once durable
    /// (their sessions end); their key, pager and signature stay. Answers with the enrolled
    /// arbiters (`name` among them unless unknown).
    pub fn handle_links_renewal(&mut self, now: HubMs, request: RequestId, name: &str) {
        self.now = self.now.max(now);
        let Some(member) = self.access.roster.renew_links(name) else {
            self.reply(request, Reply::Arbiters(self.access.roster.names()));
            return;
        };
        let at = self.write(Write::Arbiter {
            name: name.to_owned(),
            member: Some(member),
        });
        tracing::info!(arbiter = %name.escape_debug(), "arbiter's links renewed");
        self.pending.wait(at, Deferred::Arbiters(request));
    }

    /// Why arbiter `name`'s own login may not decide at `board`: the board is in a zone they
    /// do not watch (as enrolled, else as the hall configures them); `None` where they may.
    /// A hall without zones holds nobody.
    pub(super) fn out_of_zone(&self, name: &str, board: BoardNo) -> Option<DecisionError> {
        let zone = self.desk.routing().zone_of(board);
        (!self.watches(name, zone)).then(|| DecisionError::OutOfZone {
            board,
            zone: zone.to_owned(),
            arbiter: name.to_owned(),
        })
    }

    /// Why arbiter `name`'s own login may not acknowledge or resolve alert `id`: its zone is
    /// not one they watch; `None` where they may (or for an alert there is not).
    pub(super) fn alert_out_of_zone(&self, name: &str, id: AlertId) -> Option<AlertError> {
        let alert = self.desk.alerts().find(|a| a.id == id)?;
        (!self.watches(name, &alert.zone)).then(|| AlertError::OutOfZone {
            id,
            zone: alert.zone.clone(),
            arbiter: name.to_owned(),
        })
    }

    /// Whether arbiter `name` watches `zone` (not enrolled: nowhere).
    fn watches(&self, name: &str, zone: &str) -> bool {
        self.access
            .roster
            .member(name)
            .is_some_and(|m| PhoneWatch::of(name, m, self.desk.routing()).watches_zone(zone))
    }

    /// Every enrolled arbiter and their key: who the broker and the page let in.
    pub fn arbiters(&self) -> impl Iterator<Item = (&str, &NodeKey)> {
        self.access.roster.iter()
    }

    /// Every enrolled arbiter's enrolment, by name.
    pub fn arbiter_members(&self) -> impl Iterator<Item = (&str, &Member)> {
        self.access.roster.members()
    }

    /// Arbiter `name`'s phone: what it is sent, and their enrolment (the key its buttons
    /// are sealed with, its link's renewals); `None` unless they are enrolled.
    pub fn phone(&self, name: &str) -> Option<(PhoneWatch, &Member)> {
        let member = self.access.roster.member(name)?;
        Some((PhoneWatch::of(name, member, self.desk.routing()), member))
    }

    /// The alerts' steps `watch`'s phone is told of after step `after`, oldest first, at
    /// most the last `limit`.
    pub fn phone_steps(&self, watch: &PhoneWatch, after: u64, limit: usize) -> Vec<PhoneStep<'_>> {
        crate::core::phone::steps_after(self.desk.alerts(), watch, after, limit)
    }

    /// Everyone but the hub that an external broker must let in (docs/security.md, *In short*,
    /// written for Mosquitto by `edge::mqtt::broker::passwd_lines`): the pagers, the
    /// public reader and every enrolled node. The hub's own password is never among them:
    /// what the API serves must not let its reader log in as the hub (`hub broker-users` on
    /// the hub's machine adds it). `None` for a hub without a hall secret.
    pub fn broker_users(&self) -> Option<Vec<BrokerLogin>> {
        use protocol::identity;
        let _ = self.access.hall_secret.as_ref()?;
        let public = identity::PUBLIC_USER.to_owned();
        let mut logins = vec![(public.clone(), public)];
        for (_, key) in self.access.roster.iter() {
            logins.push((identity::pager_user(key), identity::pager_password(key)));
        }
        let mut nodes: Vec<_> = self.access.trust.boards().collect();
        nodes.sort_by_key(|(board, _)| *board);
        for (board, key) in nodes {
            logins.push((identity::node_user(board), identity::node_password(key)));
        }
        Some(logins)
    }

    /// `json` with the hub's signature for the pagers, if the hub has a hall secret.
    /// `topic` is where it is published, `at` when it is signed.
    pub fn signed(&self, topic: &str, at: HubMs, json: Vec<u8>) -> Vec<u8> {
        match &self.access.signer {
            Some(signer) => signer.sign(topic, at.0, json),
            None => json,
        }
    }

    /// Every board with an enrolled node, and the node's key: who the broker lets in.
    pub fn enrolled_boards(&self) -> impl Iterator<Item = (BoardNo, &NodeKey)> {
        self.access.trust.boards()
    }

    /// The key of the node enrolled for `board`.
    pub fn board_key(&self, board: BoardNo) -> Option<&NodeKey> {
        self.access.trust.board_key(board)
    }

    /// The bindings or keys of `boards` changed: the keys their messages must carry, and
    /// the shell told.
    pub(super) fn rebind(&mut self, boards: impl IntoIterator<Item = BoardNo>) {
        let boards: Vec<BoardNo> = boards.into_iter().collect();
        self.access
            .trust
            .rebind(&self.access.bindings, boards.iter().copied());
        self.outputs.push_back(Output::NodeKeys(boards));
    }

    /// Whether unsealed events are taken for boards nobody enrolled.
    pub fn open_hall(&self) -> bool {
        self.access.trust.open_hall()
    }
}
