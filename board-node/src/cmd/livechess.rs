//! `board-node livechess`: the boards DGT LiveChess drives, read through its local API
//! (`ws://HOST:1982/api/v1.0`), each LiveChess board (by serial number) a hall board.

use anyhow::Context;

use super::boards::NodeArgs;
use super::stopped::stopped;
use crate::live;

/// LiveChess and its boards.
#[derive(clap::Args)]
pub struct LiveChessArgs {
    #[command(flatten)]
    node: NodeArgs,
    /// LiveChess's API: ws://HOST:1982/api/v1.0.
    #[arg(long)]
    url: String,
    /// Each LiveChess board and the hall board it is: SERIAL=BOARD[,SERIAL=BOARD…]
    /// (the serial number as LiveChess lists it). The boards' key files and hardware ids
    /// [default: the serial number] follow this order.
    #[arg(long, value_delimiter = ',', required = true)]
    boards: Vec<String>,
}

/// `SERIAL=BOARD` read.
fn pair(text: &str) -> anyhow::Result<(String, u16)> {
    let (serial, board) = text
        .split_once('=')
        .with_context(|| format!("--boards {text:?}: SERIAL=BOARD, as 7425=12"))?;
    let board: u16 = board
        .trim()
        .parse()
        .with_context(|| format!("--boards {text:?}: {board:?} is not a board number"))?;
    let serial = serial.trim();
    anyhow::ensure!(
        !serial.is_empty() && serial.len() <= 64 && serial.chars().all(|c| c.is_ascii_graphic()),
        "--boards {text:?}: {serial:?} is not a LiveChess serial number"
    );
    Ok((serial.to_owned(), board))
}

/// Serves the boards until stopped.
pub async fn run(args: LiveChessArgs) -> anyhow::Result<()> {
    // LiveChess serves its API in plain WebSocket on the hall's network (no wss://).
    anyhow::ensure!(
        args.url.starts_with("ws://"),
        "--url {:?}: LiveChess's API is ws://HOST:1982/api/v1.0",
        args.url
    );
    let pairs = args
        .boards
        .iter()
        .map(|b| pair(b))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (serials, boards): (Vec<String>, Vec<u16>) = pairs.into_iter().unzip();
    for (i, board) in boards.iter().enumerate() {
        anyhow::ensure!(
            !boards[..i].contains(board) && !serials[..i].contains(&serials[i]),
            "--boards: board {board} or LiveChess board {} is given twice",
            serials[i]
        );
    }
    let configs = args
        .node
        .configs(&boards, |i, _| serials[i].clone(), "livechess-clock")?;
    live::serve_livechess(
        args.url,
        configs.into_iter().zip(serials.clone()).collect(),
        stopped(),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_livechess_board_is_paired_with_a_hall_board() {
        assert_eq!(pair("7425=12").unwrap(), ("7425".to_owned(), 12));
        assert!(pair("7425").is_err());
        assert!(pair("7425=twelve").is_err());
        assert!(pair("=3").is_err());
    }
}
