//! MQTT, where the boards' nodes and the pagers meet the hub.
//!
//! - [`broker`]: the embedded rumqttd broker; [`topic_acl`]: which topics each of its
//!   logins may touch.
//! - [`client`]: the hub's MQTT client (embedded or external broker); [`reach`]: whether
//!   it reaches the broker.
//! - [`gateway`]: on a clustered hall, the boards' events and downlinks as core NATS
//!   messages of the MQTT gateway's subjects.

pub mod broker;
pub mod client;
pub mod gateway;
pub mod reach;
pub mod topic_acl;
