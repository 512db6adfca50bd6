//! The numbers in the API's paths, typed as the handlers use them: `{n}` a [`BoardNo`],
//! `{r}` a [`RoundNo`], a round's PGN file its board. What is not a number answers 400 in
//! the API's words, before the handler runs.

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;

use super::api::ApiError;
use crate::core::ids::{BoardNo, RoundNo};

/// `/…/boards/{n}`.
pub(super) struct BoardPath(pub BoardNo);

/// `/…/rounds/{r}`.
pub(super) struct RoundPath(pub RoundNo);

/// `/api/rounds/{r}/boards/{n}`.
pub(super) struct RoundBoardPath(pub RoundNo, pub BoardNo);

/// `/broadcast/round/{r}/{file}`: `games.pgn` (every board: `None`) or `game-N.pgn`.
pub(super) struct PgnPath(pub RoundNo, pub Option<BoardNo>);

/// A board number from a path.
fn board_number(n: &str) -> Result<BoardNo, ApiError> {
    n.parse()
        .map(BoardNo)
        .map_err(|_| ApiError::BadBoard(n.to_owned()))
}

/// A round number from a path.
fn round_number(r: &str) -> Result<RoundNo, ApiError> {
    r.parse::<u64>()
        .ok()
        .and_then(RoundNo::new)
        .ok_or_else(|| ApiError::BadRound(r.to_owned()))
}

/// A PGN file of a round's feed: its board (`None`: every board).
fn pgn_file(file: &str) -> Result<Option<BoardNo>, ApiError> {
    if file == "games.pgn" {
        return Ok(None);
    }
    file.strip_prefix("game-")
        .and_then(|f| f.strip_suffix(".pgn"))
        .and_then(|n| n.parse::<u16>().ok())
        .map(|n| Some(BoardNo(n)))
        .ok_or_else(|| ApiError::BadQuery(format!("{file:?}: games.pgn or game-N.pgn")))
}

/// The path's parameters, as the route captured them.
async fn params<S: Send + Sync>(parts: &mut Parts, state: &S) -> Result<RawPathParams, ApiError> {
    RawPathParams::from_request_parts(parts, state)
        .await
        .map_err(|e| ApiError::BadQuery(e.body_text()))
}

/// The parameter `name` (the routes name it; a route without it is a bug).
fn named<'a>(params: &'a RawPathParams, name: &str) -> &'a str {
    params
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("a route with {{{name}}}"))
}

impl<S: Send + Sync> FromRequestParts<S> for BoardPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let params = params(parts, state).await?;
        Ok(BoardPath(board_number(named(&params, "n"))?))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RoundPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let params = params(parts, state).await?;
        Ok(RoundPath(round_number(named(&params, "r"))?))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RoundBoardPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let params = params(parts, state).await?;
        let round = round_number(named(&params, "r"))?;
        Ok(RoundBoardPath(round, board_number(named(&params, "n"))?))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for PgnPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let params = params(parts, state).await?;
        let round = round_number(named(&params, "r"))?;
        Ok(PgnPath(round, pgn_file(named(&params, "file"))?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_numbers_are_read_or_refused_in_the_apis_words() {
        assert_eq!(board_number("12").unwrap(), BoardNo(12));
        assert!(matches!(board_number("x"), Err(ApiError::BadBoard(n)) if n == "x"));
        assert!(matches!(board_number("70000"), Err(ApiError::BadBoard(_))));
        assert_eq!(round_number("3").unwrap(), RoundNo::new(3).unwrap());
        assert!(matches!(round_number("0"), Err(ApiError::BadRound(_))));
        assert_eq!(pgn_file("games.pgn").unwrap(), None);
        assert_eq!(pgn_file("game-7.pgn").unwrap(), Some(BoardNo(7)));
        assert!(matches!(pgn_file("game-x.pgn"), Err(ApiError::BadQuery(_))));
    }
}
