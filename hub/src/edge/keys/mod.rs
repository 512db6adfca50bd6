//! The hall's keys: its certificate authority and the hub's certificate ([`hall_ca`]),
//! which listeners speak TLS and their handshakes ([`tls`]), and secrets on disk, their
//! owner's only ([`secret_file`]).

pub mod hall_ca;
pub mod secret_file;
pub mod tls;
