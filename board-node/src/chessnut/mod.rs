//! Chessnut boards (Air, Air+, Go, Pro, Move) over Bluetooth LE: the published GATT protocol
//! ([`wire`]) and a board's link as the node keeps it, sans-IO ([`session`]). The BLE
//! transport that carries them (BlueZ through `bluer`) and `board-node chessnut` are not
//! built yet (issue 67).

pub mod session;
pub mod wire;
