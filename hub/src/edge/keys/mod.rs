//! The hall's keys: its certificate authority and the hub's certificate ([`hall_ca`]), the
//! TLS listeners' handshakes ([`tls`]), the arbiters' token ([`arbiter_token`]), and secrets
//! on disk, their owner's only ([`secret_file`]).

pub mod arbiter_token;
pub mod hall_ca;
pub mod secret_file;
pub mod tls;
