//! The broadcast's outlets as a round's configuration names them: the lichess rounds its
//! boards are pushed to, checked before the hall opens (a slice lichess would cut, two
//! slices with a board in common, a round id that is no lichess id).

use std::ops::Range;

use toml::Spanned;

use super::outlets::{LichessSlice, GAMES_PER_ROUND};
use super::{ConfigError, RoundSection};
use crate::core::relay::slices::BoardRanges;

type Invalid<'a> = dyn Fn(Range<usize>, &str, String) -> ConfigError + 'a;

/// A lichess round id as it goes into the push's URL: letters, digits, `-` and `_`.
pub(super) fn lichess_round_id(
    id: &Spanned<String>,
    field: &str,
    invalid: &Invalid<'_>,
) -> Result<String, ConfigError> {
    let text = id.get_ref();
    let fits = (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !fits {
        let why = format!(
            "{text:?} is no lichess round id (the 8 letters and digits of the round's URL)"
        );
        return Err(invalid(id.span(), field, why));
    }
    Ok(text.clone())
}

/// A round's lichess rounds: its slices, or `lichess_round_id` as one slice of every board.
pub(super) fn lichess_slices(
    round: &RoundSection,
    field: &str,
    invalid: &Invalid<'_>,
) -> Result<Vec<LichessSlice>, ConfigError> {
    let mut slices: Vec<LichessSlice> = Vec::new();
    if let Some(id) = &round.lichess_round_id {
        let field = format!("{field}.lichess_round_id");
        slices.push(LichessSlice {
            boards: None,
            round_id: lichess_round_id(id, &field, invalid)?,
        });
    }
    for (i, slice) in round.lichess_slices.iter().flatten().enumerate() {
        let field = format!("{field}.lichess_slices[{i}]");
        let boards: BoardRanges = slice
            .boards
            .get_ref()
            .parse()
            .map_err(|e| invalid(slice.boards.span(), &field, format!("boards: {e}")))?;
        if boards.len() > GAMES_PER_ROUND {
            let why = format!(
                "boards {boards}: {} boards, and lichess shows at most {GAMES_PER_ROUND} games a round: cut it in two",
                boards.len()
            );
            return Err(invalid(slice.boards.span(), &field, why));
        }
        let round_id = lichess_round_id(&slice.round_id, &field, invalid)?;
        for other in &slices {
            let clash = match &other.boards {
                None => Some("lichess_round_id takes every board".to_owned()),
                Some(b) if b.overlaps(&boards) => Some(format!("boards {b} and {boards} overlap")),
                Some(_) if other.round_id == round_id => {
                    Some(format!("two slices pushed to lichess round {round_id}"))
                }
                Some(_) => None,
            };
            if let Some(why) = clash {
                return Err(invalid(slice.boards.span(), &field, why));
            }
        }
        slices.push(LichessSlice {
            boards: Some(boards),
            round_id,
        });
    }
    Ok(slices)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::parse;
    use crate::core::ids::RoundNo;

    const LICHESS: &str = "[broadcast.lichess]\ntoken = \"lip_t\"\n\n";

    fn error(text: &str) -> String {
        parse("event.toml", text, Path::new("."))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_rounds_slices_go_to_their_lichess_rounds() {
        let text = format!(
            "{LICHESS}[broadcast.ftp]\nurl = \"ftp://u:secret@127.0.0.1:2121/live\"\n\n\
             [[rounds]]\nnumber = 1\nlichess_slices = [ {{ boards = \"1-100\", round_id = \"AbCd1234\" }}, \
             {{ boards = \"101-150,201-250\", round_id = \"EfGh5678\" }} ]\n\n\
             [[rounds]]\nnumber = 2\nlichess_round_id = \"IjKl9012\"\n"
        );
        let config = parse("event.toml", &text, Path::new(".")).unwrap();
        let lichess = config.lichess.unwrap();
        let one = lichess.slices(RoundNo(1), RoundNo(1));
        let boards: Vec<String> = one
            .iter()
            .map(|s| s.boards.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(boards, ["1-100", "101-150,201-250"]);
        let two = lichess.slices(RoundNo(2), RoundNo(1));
        assert_eq!(
            (two[0].boards.is_none(), two[0].round_id.as_str()),
            (true, "IjKl9012")
        );
        assert_eq!(config.ftp.unwrap().dir, "live");
    }

    #[test]
    fn a_slice_lichess_would_cut_or_two_with_a_board_in_common_are_refused() {
        let round = |slices: &str| {
            format!("{LICHESS}[[rounds]]\nnumber = 1\nlichess_slices = [ {slices} ]\n")
        };
        let e = error(&round(r#"{ boards = "1-101", round_id = "AbCd1234" }"#));
        assert!(
            e.contains("rounds[0].lichess_slices[0]") && e.contains("at most 100 games"),
            "{e}"
        );
        let e = error(&round(
            r#"{ boards = "1-100", round_id = "AbCd1234" }, { boards = "100-150", round_id = "EfGh5678" }"#,
        ));
        assert!(e.contains("overlap"), "{e}");
        let e = error(&round(r#"{ boards = "1-10", round_id = "../../api" }"#));
        assert!(e.contains("no lichess round id"), "{e}");
        let e = error(&round(r#"{ boards = "ten", round_id = "AbCd1234" }"#));
        assert!(e.contains("boards:"), "{e}");
        let e = error("[[rounds]]\nnumber = 1\nlichess_round_id = \"AbCd1234\"\n");
        assert!(e.contains("[broadcast.lichess]"), "{e}");
        let e = error("[broadcast.ftp]\nurl = \"sftp://h/x\"\n");
        assert!(
            e.contains("broadcast.ftp.url") && e.contains("ftp:// or ftps://"),
            "{e}"
        );
    }
}
