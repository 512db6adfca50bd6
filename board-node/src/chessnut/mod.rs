//! Chessnut boards (Air, Air+, Go, Pro, Move) over Bluetooth LE: the published GATT protocol
//! ([`wire`]), a board's link as the node keeps it, sans-IO ([`session`]), and the BLE
//! transport that carries them, BlueZ through `bluer` ([`ble`]).

pub mod ble;
pub mod session;
pub mod wire;
