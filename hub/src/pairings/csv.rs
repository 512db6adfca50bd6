//! Pairings from CSV, as a spreadsheet or a pairing program exports them: one row per
//! board, columns found by their header (any order; names may contain commas when quoted).
//!
//! ```text
//! board,white,white_title,white_rating,white_fide_id,white_federation,black,black_title,black_rating,black_fide_id,black_federation,result
//! 1,"Carlsen, Magnus",GM,2830,1503014,NOR,"Nakamura, Hikaru",GM,2800,2016192,USA,
//! ```
//!
//! `board`, `white` and `black` are required; the rest may be left out or empty. A pairing
//! program's own pairing list saved as CSV reads too ([`column_name`]): Swiss-Manager's and
//! chess-results' `Bo.;No.;Name;Rtg;Pts.;Result;Pts.;Name;Rtg;No.`, Vega's `Bo,White,Black`;
//! `,` `;` or tab between fields; results as they print them (`1 - 0`, `½ - ½`, `+ - -`).

use protocol::BoardNo;
use std::collections::HashMap;

use crate::core::pairings::{Pairing, Seat};

#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("CSV: {0}")]
    Csv(#[from] csv::Error),
    #[error("CSV line {line}: {why}")]
    Row { line: u64, why: String },
    #[error("CSV: no column {0:?} in the header")]
    MissingColumn(&'static str),
}

/// The column a header names, in this module's words. Pairing programs' pairing lists name
/// them their own way: Swiss-Manager's and chess-results' `Bo.`, `No.`, `Name`, `Rtg`,
/// `FED`, `Result` (each player's columns twice, White's first), Vega's `Bo`, `White`,
/// `Black`. `nth` is how many times the header was seen before.
fn column_name(header: &str, nth: usize) -> String {
    let header = header.trim().to_lowercase();
    let side = if nth == 0 { "white" } else { "black" };
    let per_player = |field: &str| format!("{side}{field}");
    match header.as_str() {
        "bo." | "bo" | "brd" | "brd." | "table" => "board".to_owned(),
        "res." | "res" => "result".to_owned(),
        "name" => per_player(""),
        "no." | "no" | "snr" | "sno" => per_player("_start_rank"),
        "rtg" | "elo" | "rating" => per_player("_rating"),
        "fed" | "fed." | "federation" => per_player("_federation"),
        "fide-id" | "fide id" | "fideid" => per_player("_fide_id"),
        "title" | "tit." => per_player("_title"),
        _ => header,
    }
}

/// A result as pairing lists print it (`1 - 0`, `½ - ½`, `+ - -`, `0-0`) in the hub's words
/// (`1-0`, `1/2-1/2`, `+-`); blank while not played (`*`).
fn result_of(text: &str) -> String {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    match compact.as_str() {
        "" => "*",
        "½-½" | "0.5-0.5" | "=-=" | "1/2-1/2" => "1/2-1/2",
        "+--" | "+:-" => "+-",
        "--+" | "-:+" => "-+",
        "---" | "-:-" | "0-0" => "--",
        other => return other.to_owned(),
    }
    .to_owned()
}

/// The field separator of `text`'s header: `,` or, as spreadsheets save CSV in much of
/// Europe, `;` (or a tab).
fn separator(text: &str) -> u8 {
    let header = text.lines().next().unwrap_or_default();
    [b',', b';', b'\t']
        .into_iter()
        .max_by_key(|s| header.bytes().filter(|b| b == s).count())
        .unwrap_or(b',')
}

/// Reads the pairings of one round.
pub fn read(text: &str) -> Result<Vec<Pairing>, CsvError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .delimiter(separator(text))
        .from_reader(text.as_bytes());
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut columns: HashMap<String, usize> = HashMap::new();
    for (i, header) in reader.headers()?.iter().enumerate() {
        let key = header.trim().to_lowercase();
        let nth = seen.entry(key).or_default();
        let name = column_name(header, *nth);
        *nth += 1;
        columns.entry(name).or_insert(i);
    }
    for required in ["board", "white", "black"] {
        if !columns.contains_key(required) {
            return Err(CsvError::MissingColumn(required));
        }
    }
    let mut pairings = Vec::new();
    for row in reader.records() {
        let row = row?;
        let line = row.position().map_or(0, csv::Position::line);
        let bad = |why: String| CsvError::Row { line, why };
        let get = |name: &str| {
            columns
                .get(name)
                .and_then(|i| row.get(*i))
                .filter(|v| !v.is_empty())
        };
        let number = |name: &str| -> Result<Option<u64>, CsvError> {
            get(name)
                .map(|v| {
                    v.parse::<u64>()
                        .map_err(|_| bad(format!("{name} {v:?} is not a number")))
                })
                .transpose()
        };
        let board = number("board")?.ok_or_else(|| bad("no board number".into()))?;
        let board = u16::try_from(board)
            .ok()
            .filter(|b| *b > 0)
            .ok_or_else(|| bad(format!("board {board}")))?;
        let seat = |side: &str| -> Result<Seat, CsvError> {
            Ok(Seat {
                name: crate::core::names::printable(
                    get(side).ok_or_else(|| bad(format!("no {side} player")))?,
                ),
                fide_id: number(&format!("{side}_fide_id"))?,
                rating: number(&format!("{side}_rating"))?.and_then(|r| u16::try_from(r).ok()),
                title: get(&format!("{side}_title")).map(str::to_owned),
                federation: get(&format!("{side}_federation")).map(str::to_owned),
                start_rank: number(&format!("{side}_start_rank"))?
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(0),
            })
        };
        pairings.push(Pairing {
            board: BoardNo(board),
            white: seat("white")?,
            black: seat("black")?,
            result: result_of(get("result").unwrap_or_default()),
            white_team: None,
            black_team: None,
            section: None,
        });
    }
    let mut boards: Vec<BoardNo> = pairings.iter().map(|p| p.board).collect();
    boards.sort_unstable();
    if let Some(twice) = boards.windows(2).find(|w| w[0] == w[1]) {
        return Err(CsvError::Row {
            line: 0,
            why: format!("board {} is paired twice", twice[0]),
        });
    }
    Ok(pairings)
}

/// A round's games with their results, in the columns [`read`] takes: what goes back to a
/// pairing program that exports CSV rounds (`GET /api/rounds/{r}/results.csv`).
pub fn write(games: &[Pairing]) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let sides = ["white", "black"];
    let mut header = vec!["board".to_owned()];
    for side in sides {
        for field in ["", "_title", "_rating", "_fide_id", "_federation"] {
            header.push(format!("{side}{field}"));
        }
    }
    header.push("result".to_owned());
    let _ = out.write_record(&header);
    for game in games {
        let mut row = vec![game.board.0.to_string()];
        for seat in [&game.white, &game.black] {
            row.push(text_cell(&seat.name));
            row.push(text_cell(seat.title.as_deref().unwrap_or_default()));
            row.push(seat.rating.map(|r| r.to_string()).unwrap_or_default());
            row.push(seat.fide_id.map(|r| r.to_string()).unwrap_or_default());
            row.push(text_cell(seat.federation.as_deref().unwrap_or_default()));
        }
        row.push(game.result.clone());
        let _ = out.write_record(&row);
    }
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A text cell a spreadsheet shows as text (OWASP's CSV injection rule): a cell that begins
/// with `=`, `+`, `-`, `@` or a tab is a formula to Excel and LibreOffice, so it gets a
/// leading `'`; line breaks, which would start a row of the file's own, become spaces. The
/// names come from files and forms anyone may have typed into; the results are the hub's
/// own codes (`+-` included) and are written as they are.
fn text_cell(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.starts_with(['=', '+', '-', '@']) {
        format!("'{one_line}")
    } else {
        one_line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_spreadsheet_would_run_are_written_as_text_on_one_line() {
        let text = "board,white,black,white_title,white_federation,result\n\
                    1,\"=HYPERLINK(\"\"http://x\"\")\",@SUM(A1),\"GM\r\n=1+1\",-NOR,+-\n";
        let written = write(&read(text).unwrap());
        let row: Vec<String> = written
            .lines()
            .nth(1)
            .map(|l| {
                let mut reader = csv::ReaderBuilder::new()
                    .has_headers(false)
                    .from_reader(l.as_bytes());
                reader
                    .records()
                    .next()
                    .unwrap()
                    .unwrap()
                    .iter()
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap();
        assert_eq!(written.lines().count(), 2, "one row a game: {written}");
        assert_eq!(row[1], "'=HYPERLINK(\"http://x\")");
        assert_eq!(row[2], "GM  =1+1");
        assert_eq!(row[5], "'-NOR");
        assert_eq!(row[6], "'@SUM(A1)");
        assert_eq!(row[11], "+-", "a forfeit stays the hub's code");
    }

    #[test]
    fn rows_read_by_their_header_with_quoted_names() {
        let text = "black,board,white,white_rating,white_title,white_fide_id\n\
                    \"Nakamura, Hikaru\",1,\"Carlsen, Magnus\",2830,GM,1503014\n\
                    Player B,2,Player A,,,\n";
        let pairings = read(text).unwrap();
        assert_eq!(pairings.len(), 2);
        assert_eq!(pairings[0].white.name, "Carlsen, Magnus");
        assert_eq!(pairings[0].black.name, "Nakamura, Hikaru");
        assert_eq!(pairings[0].white.rating, Some(2830));
        assert_eq!(pairings[0].white.fide_id, Some(1_503_014));
        assert_eq!(pairings[1].white.rating, None);
        assert_eq!(pairings[1].result, "*");
    }

    #[test]
    fn results_written_read_back_as_they_were() {
        let text =
            "board,white,black,white_rating,result\n1,\"Carlsen, Magnus\",B,2830,1-0\n2,C,D,,+-\n";
        let games = read(text).unwrap();
        let written = write(&games);
        assert_eq!(read(&written).unwrap(), games);
        assert!(written.starts_with("board,white,white_title"), "{written}");
    }

    #[test]
    fn a_pairing_list_as_swiss_manager_prints_it_saved_with_semicolons() {
        // Bo.; No.; Name; Rtg; Pts.; Result; Pts.; Name; Rtg; No. (chess-results' layout)
        let text = "Bo.;No.;Name;Rtg;Pts.;Result;Pts.;Name;Rtg;No.\n\
                    1;12;Kovács, Bőr;2310;1;1 - 0;1;Carlsen, Magnus;2830;1\n\
                    2;7;Иванова, Анна;2280;½;½ - ½;½;Nakamura, Hikaru;2800;2\n\
                    3;3;Gukesh, D;2790;0;+ - -;0;Virtanen, Aino;2200;8\n\
                    4;9;Nguyễn, Hà;2150;0;;0;Firouzja, Alireza;2770;4\n";
        let games = read(text).unwrap();
        assert_eq!(games.len(), 4);
        assert_eq!(games[0].white.name, "Kovács, Bőr");
        assert_eq!(games[0].white.start_rank, 12);
        assert_eq!(games[0].black.name, "Carlsen, Magnus");
        assert_eq!(games[0].black.rating, Some(2830));
        assert_eq!(games[0].black.start_rank, 1);
        let results: Vec<&str> = games.iter().map(|g| g.result.as_str()).collect();
        assert_eq!(results, ["1-0", "1/2-1/2", "+-", "*"]);
    }

    #[test]
    fn bad_rows_name_their_line() {
        let e = read("board,white,black\n1,A,B\nx,C,D\n").unwrap_err();
        assert_eq!(e.to_string(), "CSV line 3: board \"x\" is not a number");
        let e = read("board,white\n1,A\n").unwrap_err();
        assert!(e.to_string().contains("\"black\""), "{e}");
        let e = read("board,white,black\n1,A,B\n1,C,D\n").unwrap_err();
        assert!(e.to_string().contains("board 1 is paired twice"), "{e}");
    }
}
