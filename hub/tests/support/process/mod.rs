//! The real processes a test starts: `hub serve`, `board-node`, Mosquitto, a NATS cluster,
//! `hub pager`, an arbiter's phone (ntfy's protocol, in Python), a fake Bluetooth radio
//! (BlueZoo), each in a directory of its own with its log, killed when dropped.

pub mod hub;
pub mod mosquitto;
pub mod nats;
pub mod node;
pub mod pager;
pub mod phone;
pub mod radio;

/// A process killed (and reaped) when dropped, for a test's own one-off processes.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
