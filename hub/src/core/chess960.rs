//! Chess960 (2023 Guidelines II): the start position comes from the board.
//!
//! Before the first move the players set up the back rank drawn for the round; the hub takes
//! the board's first placement as the start position when it is a Chess960 one: pawns on
//! their second ranks, the same back rank for both colours, bishops on squares of opposite
//! colours and the king between the rooks. Castling then follows the Chess960 rules (II.3):
//! king and rook end on the usual squares, whatever they started on.

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, File, FromSetup, Rank, Role, Setup, Square,
};

/// The Chess960 start position whose pieces stand as on `board`, or `None` if `board` is not
/// one of the 960 start positions.
pub fn start_position(board: &Board) -> Option<Chess> {
    let back_rank = |rank: Rank, color: Color| -> Option<Vec<Role>> {
        Square::ALL
            .into_iter()
            .filter(|sq| sq.rank() == rank)
            .map(|sq| {
                board
                    .piece_at(sq)
                    .filter(|p| p.color == color)
                    .map(|p| p.role)
            })
            .collect()
    };
    let white = back_rank(Rank::First, Color::White)?;
    let black = back_rank(Rank::Eighth, Color::Black)?;
    let pawns = |rank: Rank, color: Color| {
        Square::ALL
            .into_iter()
            .filter(|sq| sq.rank() == rank)
            .all(|sq| {
                board
                    .piece_at(sq)
                    .is_some_and(|p| p.color == color && p.role == Role::Pawn)
            })
    };
    if white != black
        || board.occupied().count() != 32
        || !pawns(Rank::Second, Color::White)
        || !pawns(Rank::Seventh, Color::Black)
    {
        return None;
    }
    let files = |role: Role| {
        white
            .iter()
            .enumerate()
            .filter(move |(_, r)| **r == role)
            .map(|(f, _)| f)
    };
    let (rooks, bishops): (Vec<_>, Vec<_>) =
        (files(Role::Rook).collect(), files(Role::Bishop).collect());
    let king = files(Role::King).next()?;
    let counts_right = rooks.len() == 2
        && bishops.len() == 2
        && files(Role::Knight).count() == 2
        && files(Role::Queen).count() == 1;
    if !counts_right || bishops[0] % 2 == bishops[1] % 2 || !(rooks[0] < king && king < rooks[1]) {
        return None;
    }
    let mut castling_rights = Bitboard::EMPTY;
    for file in rooks {
        let file = File::new(file as u32);
        castling_rights |= Bitboard::from(Square::from_coords(file, Rank::First));
        castling_rights |= Bitboard::from(Square::from_coords(file, Rank::Eighth));
    }
    let setup = Setup {
        board: board.clone(),
        castling_rights,
        ..Setup::initial()
    };
    Chess::from_setup(setup, CastlingMode::Chess960).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::EnPassantMode;

    fn board(fen: &str) -> Board {
        Board::from_ascii_board_fen(fen.as_bytes()).unwrap()
    }

    #[test]
    fn a_chess960_back_rank_is_a_start_position_with_960_castling_rights() {
        let start = start_position(&board("bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN")).unwrap();
        let fen = Fen::from_position(&start, EnPassantMode::Legal).to_string();
        assert_eq!(
            fen,
            "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1"
        );
        // The standard position is one of the 960.
        assert!(start_position(&Board::new()).is_some());
    }

    #[test]
    fn positions_that_are_not_960_starts_are_refused() {
        for fen in [
            "bqbnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BQBNNRKR", // bishops on squares of one colour
            "rrbqkbnn/pppppppp/8/8/8/8/PPPPPPPP/RRBQKBNN", // king not between the rooks
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR", // black and white differ
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR", // a move was made
        ] {
            assert!(start_position(&board(fen)).is_none(), "{fen}");
        }
    }
}
