//! Standings against FIDE's reference tool: for every individual event of
//! `../shared/data/real/trf/` and after every round it holds, the hub (started on the file as
//! its pairings, `GET /api/standings?round=R`) ranks the players and values each tie-break
//! exactly as gacrux (the FIDE Technical Commission's tie-break checker, PyPI) does, under
//! both editions of C.07's Article 16 (`fide-2024`, `fide-2026`). The lists cover every
//! family: Buchholz with cuts and median (8.1, 14), Sonneborn-Berger (9.1), the direct
//! encounter (6), wins (7.1, 7.2), games and wins with Black (7.3, 7.4), rounds elected to
//! play (7.6), progressive scores (7.5), Koya (9.2), the opponents' average rating and the
//! performance (10.1, 10.2, with a rating for the unrated, the event's or the code's own
//! `/U1400`, and without: no value unless all are rated), the average of opponents'
//! Buchholz (8.2), Koya with its limit moved (`/L60`, `/L-3`), the perfect performance and
//! the opponents' average performances (`PTP`, `APRO`, `APPO`), the player's rating, the
//! standard score and the pairing number (`RTNG`, `STD`, `TPN`); each takes several values. The other
//! open reference, tiebreak-core, is compared after each event's last round and its
//! differences printed (docs/event.md says them).

use crate::support;

use std::path::Path;

use support::http::{http_get, http_json};
use support::oracle::{final_standings, python_script};
use support::Hub;

/// Individual events (the team files are the team standings').
const FILES: [&str; 2] = [
    "karl-mala-gedenkturnier-2005_trf06.trf",
    "lichess-swiss-2020-06_online.trf",
];

/// The direct encounter first, right after the points: it decides only where a tied group
/// is small enough to have met (in the lichess event's last rounds; a large group rarely
/// all met, and 6.3 then separates nobody).
const ENCOUNTER_FIRST: [&str; 28] = [
    "DE",
    "BH",
    "BH/C1",
    "SB",
    "WIN",
    "WON",
    "BPG",
    "BWG",
    "REP",
    "PS",
    "PS/C1",
    "KS",
    "AOB",
    "BH/M1",
    "SB/C1",
    "BH/C2",
    "ARO",
    "ARO/C1",
    "TPR",
    "ARO-C1/U1400",
    "TPR/U1400",
    "KS/L60",
    "KS/L-3",
    "PTP",
    "APRO",
    "APPO/U1400",
    "RTNG/U1400",
    "STD",
];
const BUCHHOLZ_FIRST: [&str; 25] = [
    "BH/C1", "BH/M1", "BH", "SB", "SB/C1", "DE", "WIN", "WON", "BPG", "BWG", "REP", "PS", "PS/C1",
    "KS", "ARO", "ARO/C1", "TPR", "AOB", "BH/C2", "PTP", "APRO", "APPO", "RTNG", "STD", "TPN",
];

/// (rules, the rating of the unrated, the list, the codes that must take several values)
type Run = (
    &'static str,
    Option<u16>,
    &'static [&'static str],
    &'static [&'static str],
);
const RUNS: [Run; 2] = [
    (
        "fide-2024",
        None,
        &ENCOUNTER_FIRST,
        &[
            "DE",
            "ARO-C1/U1400",
            "TPR/U1400",
            "KS/L60",
            "KS/L-3",
            "APPO/U1400",
            "RTNG/U1400",
        ],
    ),
    (
        "fide-2026",
        Some(1500),
        &BUCHHOLZ_FIRST,
        &[
            "BH/C1", "BH/M1", "BH", "SB", "SB/C1", "WIN", "WON", "BPG", "BWG", "REP", "PS",
            "PS/C1", "KS", "ARO", "ARO/C1", "TPR", "AOB", "BH/C2", "PTP", "APRO", "APPO", "RTNG",
            "STD", "TPN",
        ],
    ),
];

/// Fore Buchholz, last in both lists: it differs from Buchholz only after the event's last
/// round (not in the round in play's test, whose gacrux file leaves that round out).
const FORE: [&str; 2] = ["FB", "FB/C1"];

#[test]
fn every_round_of_real_events_ranks_as_fide_s_reference_tool_ranks_it() {
    for (rules, unrated, list, varied) in RUNS {
        let list: Vec<&str> = list.iter().chain(&FORE).copied().collect();
        let (bh, fb) = (
            list.iter().position(|c| *c == "BH").unwrap(),
            list.iter().position(|c| *c == "FB").unwrap(),
        );
        // Each code's most different values in any file.
        let mut distinct: std::collections::BTreeMap<String, u64> = Default::default();
        for file in FILES {
            let trf = support::real_data().join("trf").join(file);
            let (answers, counts) = checked_against_gacrux(&trf, rules, unrated, &list);
            for (code, n) in counts {
                let most = distinct.entry(code).or_default();
                *most = (*most).max(n);
            }
            // After the last round Fore Buchholz is not Buchholz; before it, it is.
            let differs = |answer: &serde_json::Value| {
                answer["rows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|row| row["tiebreaks"][bh] != row["tiebreaks"][fb])
            };
            let (last, before) = answers.split_last().unwrap();
            assert!(
                differs(last),
                "{file} ({rules}): FB is BH after the last round"
            );
            assert!(
                !before.iter().any(differs),
                "{file} ({rules}): FB before the last round"
            );
        }
        for code in varied.iter().chain(&FORE) {
            assert!(
                distinct.get(*code).copied().unwrap_or(0) >= 2,
                "{rules}: {code} took one value only in every file, which proves little: {distinct:?}"
            );
        }
    }
}

/// The hub's standings after every round of `trf` (`GET /api/standings?round=R`), each
/// equal to gacrux's for the same file, rules and list (the test fails where not); and how
/// many different values each code took.
pub(crate) fn checked_against_gacrux(
    trf: &Path,
    rules: &str,
    unrated: Option<u16>,
    list: &[&str],
) -> (
    Vec<serde_json::Value>,
    std::collections::BTreeMap<String, u64>,
) {
    let file = trf.file_name().unwrap().to_string_lossy();
    let dir = tempfile::tempdir().unwrap();
    let quoted: Vec<String> = list.iter().map(|c| format!("{c:?}")).collect();
    let unrated_line = unrated
        .map(|r| format!("unrated = {r}\n"))
        .unwrap_or_default();
    let config = format!(
        "[pairings]\ntrf = {:?}\n\n[standings]\nrules = {rules:?}\ntiebreaks = [{}]\n{unrated_line}",
        trf.display().to_string(),
        quoted.join(", ")
    );
    let (hub, _) = Hub::configured(dir.path(), &config);
    let (answers, saved) = final_standings(&hub.web, "/api/standings", dir.path());
    assert!(answers.len() >= 5, "{file}: {} rounds", answers.len());
    let codes = list.join(",");
    let unrated = unrated.map_or("none".to_owned(), |r| r.to_string());
    let mut args = vec![
        trf,
        Path::new(rules),
        Path::new(&unrated),
        Path::new(&codes),
    ];
    args.extend(saved.iter().map(|p| p.as_path()));
    let output = python_script("standings.py", &args);
    let said = String::from_utf8_lossy(&output.stdout);
    eprintln!("{said}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "{file} ({rules}): the hub's standings differ from gacrux's: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let counts: serde_json::Value =
        serde_json::from_str(said.lines().last().unwrap_or_default()).unwrap();
    let distinct = counts["distinct"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(code, n)| (code.clone(), n.as_u64().unwrap_or(0)))
        .collect();
    (answers, distinct)
}

/// Where a player record (`001`) of a TRF holds round `round`'s ten columns (0-based).
fn cell_of(round: usize) -> usize {
    89 + 10 * (round - 1)
}

/// Whether a TRF line is a player who has an opponent in round `round`.
fn paired_in(line: &str, round: usize) -> bool {
    let cell = cell_of(round);
    line.starts_with("001")
        && line.len() >= cell + 10
        && line[cell + 2..cell + 6]
            .trim()
            .parse::<u32>()
            .is_ok_and(|o| o > 0)
}

/// The lichess event with every decisive game of rounds 2, 5 and 8 decided by forfeit
/// instead (`1`/`0` written `+`/`-`, the points as they were): the events have no forfeit
/// between two players, which `/P` is about.
fn with_forfeits(dir: &Path) -> std::path::PathBuf {
    let text =
        std::fs::read_to_string(support::real_data().join("trf/lichess-swiss-2020-06_online.trf"))
            .unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let mut line = line.to_owned();
        for round in [2, 5, 8] {
            let (cell, paired) = (cell_of(round), paired_in(&line, round));
            let forfeit = match line.get(cell + 9..cell + 10) {
                Some("1") if paired => "+",
                Some("0") if paired => "-",
                _ => continue,
            };
            line.replace_range(cell + 9..cell + 10, forfeit);
        }
        out.push_str(&line);
        out.push('\n');
    }
    let path = dir.join("lichess-with-forfeits.trf");
    std::fs::write(&path, out).unwrap();
    path
}

/// `/P` (C.07's modifier for games decided without play): Buchholz and Sonneborn-Berger
/// take the scheduled opponent's score for a forfeit instead of Article 16's dummy, and the
/// direct encounter counts a forfeit as an encounter, each as gacrux computes it.
#[test]
fn a_forfeit_counts_as_a_game_played_where_the_code_says_p() {
    let dir = tempfile::tempdir().unwrap();
    let trf = with_forfeits(dir.path());
    let list = ["DE/P", "BH", "BH/P", "SB-C1", "SB-C1/P", "DE"];
    for rules in ["fide-2024", "fide-2026"] {
        let (answers, distinct) = checked_against_gacrux(&trf, rules, None, &list);
        for code in ["BH/P", "SB-C1/P"] {
            assert!(distinct[code] >= 2, "{rules}: {distinct:?}");
        }
        // The modifier changes values: some player's BH/P is not their BH.
        let changed = answers.iter().any(|answer| {
            answer["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|row| row["tiebreaks"][1] != row["tiebreaks"][2])
        });
        assert!(changed, "{rules}: /P changed no Buchholz");
    }
}

/// The lichess event with its last round paired but not yet played, as the pairing program
/// exports a round in play: (the hub's file, the same with the round's games left out for
/// gacrux, which reads a game without a result as an error), and the players who play.
fn last_round_in_play(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf, Vec<u32>) {
    let text =
        std::fs::read_to_string(support::real_data().join("trf/lichess-swiss-2020-06_online.trf"))
            .unwrap();
    let cell = cell_of(10);
    let (mut in_play, mut for_gacrux, mut playing) = (String::new(), String::new(), Vec::new());
    for line in text.lines() {
        if paired_in(line, 10) {
            playing.push(line[4..8].trim().parse().unwrap());
            in_play.push_str(&format!("{} \n", &line[..cell + 9]));
            // gacrux checks the points column against the results: the round's come off.
            let points: f64 = line[80..84].trim().parse().unwrap();
            let scored = match &line[cell + 9..cell + 10] {
                "1" | "+" | "W" => 1.0,
                "=" | "D" => 0.5,
                _ => 0.0,
            };
            let decided = format!("{}{:>4.1}{}", &line[..80], points - scored, &line[84..cell]);
            for_gacrux.push_str(&format!("{decided}\n"));
        } else {
            in_play.push_str(&format!("{line}\n"));
            for_gacrux.push_str(&format!("{line}\n"));
        }
    }
    let (hub_file, gacrux_file) = (dir.join("in-play.trf"), dir.join("decided.trf"));
    std::fs::write(&hub_file, in_play).unwrap();
    std::fs::write(&gacrux_file, for_gacrux).unwrap();
    (hub_file, gacrux_file, playing)
}

#[test]
fn a_round_in_play_counts_its_games_as_not_yet_played_and_marks_them() {
    let dir = tempfile::tempdir().unwrap();
    let (hub_file, gacrux_file, playing) = last_round_in_play(dir.path());
    assert!(playing.len() >= 10, "{playing:?}");
    let quoted: Vec<String> = BUCHHOLZ_FIRST.iter().map(|c| format!("{c:?}")).collect();
    let config = format!(
        "[pairings]\ntrf = {:?}\n\n[standings]\nrules = \"fide-2026\"\ntiebreaks = [{}]\n",
        hub_file.display().to_string(),
        quoted.join(", ")
    );
    let (hub, _) = Hub::configured(dir.path(), &config);
    // The round in play is the default: provisional, its players' rows marked.
    let answer = http_json(&hub.web, "/api/standings");
    assert_eq!(answer["round"], 10);
    assert_eq!(answer["provisional"], true);
    for row in answer["rows"].as_array().unwrap() {
        let start = row["start_rank"].as_u64().unwrap() as u32;
        assert_eq!(row["running"], playing.contains(&start), "{row}");
    }
    // The values are gacrux's on the decided games.
    let saved = dir.path().join("round-10.json");
    std::fs::write(&saved, answer.to_string()).unwrap();
    let codes = BUCHHOLZ_FIRST.join(",");
    let args = [
        gacrux_file.as_path(),
        Path::new("fide-2026"),
        Path::new("none"),
        Path::new(&codes),
        saved.as_path(),
    ];
    let output = python_script("standings.py", &args);
    let said = String::from_utf8_lossy(&output.stdout);
    eprintln!("{said}");
    assert!(
        output.status.success(),
        "the provisional standings differ from gacrux's on the decided games: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // CSV: a header and a line a player.
    let (status, csv) = http_get(&hub.web, "/api/standings?format=csv").unwrap();
    assert_eq!(status, 200);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("rank,start_rank,name,points,BH/C1,"),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), answer["rows"].as_array().unwrap().len() + 1);
    // Refusals say why.
    let (status, body) = http_get(&hub.web, "/api/standings?round=11").unwrap();
    assert_eq!(status, 404, "{body}");
    let (status, body) = http_get(&hub.web, "/api/standings?format=xml").unwrap();
    assert_eq!(
        (status, body.contains("json or csv")),
        (400, true),
        "{body}"
    );
}
