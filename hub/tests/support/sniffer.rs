//! A man in the middle on loopback: a TCP relay that forwards a port and keeps every byte
//! that crosses it, both ways, as `tcpdump` on the hall's network would see them.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// The relay: connect to [`Sniffer::addr`] instead of the target.
pub struct Sniffer {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl Sniffer {
    /// Relays connections to `target` until the test ends.
    pub fn start(target: SocketAddr) -> Sniffer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port for the sniffer");
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = seen.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                let Ok(server) = TcpStream::connect(target) else {
                    continue;
                };
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let kept = kept.clone();
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        while let Ok(n @ 1..) = from.read(&mut buf) {
                            kept.lock().unwrap().extend_from_slice(&buf[..n]);
                            if to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(Shutdown::Write);
                    });
                }
            }
        });
        Sniffer { addr, seen }
    }

    /// Every byte seen so far.
    pub fn seen(&self) -> Vec<u8> {
        self.seen.lock().unwrap().clone()
    }

    /// Whether `text` crossed the wire in clear.
    pub fn saw(&self, text: &str) -> bool {
        let seen = self.seen();
        !text.is_empty() && seen.windows(text.len()).any(|w| w == text.as_bytes())
    }
}
