//! Team standings against FIDE's reference tool: for both team events of
//! `../shared/data/real/trf/` (the Grandmommy's Cup as FIDE's Technical Commission published
//! it in TRF-2025 and as adapted to TRF-2026: 50 teams of four boards, 14 rounds, with full-
//! and half-point byes, the pairing-allocated bye, forfeited matches and unopposed boards)
//! and after every round, the hub (started on the file, `GET /api/standings/teams?round=R`)
//! gives each team the match points, game points, rank and every tie-break value gacrux
//! (PyPI) gives, under both editions of C.07's Article 16. The list covers the team
//! families: the extended direct encounter board by board (`EDET`, 13.3), the extended
//! Sonneborn-Berger (`EMGSB`, `ESB:GP`, 12.3), Buchholz on match and game points with cuts
//! (`BH:MP/C1`, `BH:GP`), Sonneborn-Berger, the game points as a tie-break (`MPvGP`), wins
//! and progressive scores on match points, matches played and won as the Black team
//! (`BPG:MP`, `BWG:MP`), and `/P` (a match decided without play counted as played).

use crate::support;

use std::path::Path;

use support::oracle::{final_standings, python_script};
use support::Hub;

const FILES: [&str; 2] = [
    "grandmommys-cup_trf26-adaptation_sharly.trf",
    "grandmommys-cup_fide-tec-trf25-sample.trf",
];

/// The file's own list (`202`) first, then the other families.
const LIST: [&str; 16] = [
    "EDET/P",
    "EMGSB/C1/P",
    "BH:MP/C1/P",
    "MPvGP",
    "EDE",
    "BH:GP",
    "BH:MP",
    "SB:MP",
    "SB:GP",
    "ESB:GP",
    "EMMSB",
    "WIN:MP",
    "PS:MP",
    "BH:GP/C1",
    "AOB:MP",
    "DE:MP",
];

/// The direct encounters first (the first where it decides; after it, the others agree or
/// find nothing left to decide), then the counting families, last the matches played and
/// won as the Black team (`BPG:MP`, `BWG:MP`: which team is White is decided on the first
/// board, as the out-of-order records `300` and the colour sequence `352` place them).
const ENCOUNTER_FIRST: [&str; 13] = [
    "DE:GP/P", "DE:MP", "EDE/P", "KS:MP", "REP:MP", "WON:MP", "BH:MP/M1", "SB:MP/C1", "PS:GP",
    "AOB:GP", "TPN", "BPG:MP", "BWG:MP",
];

#[test]
fn every_round_of_real_team_events_ranks_as_fide_s_reference_tool_ranks_it() {
    let mut distinct: std::collections::BTreeMap<String, u64> = Default::default();
    let runs = [
        ("fide-2026", &LIST[..]),
        ("fide-2024", &LIST[..]),
        ("fide-2026", &ENCOUNTER_FIRST[..]),
    ];
    for (rules, list) in runs {
        for file in FILES {
            let trf = support::real_data().join("trf").join(file);
            for (code, n) in checked_against_gacrux(&trf, rules, list) {
                let most = distinct.entry(code).or_default();
                *most = (*most).max(n);
            }
        }
    }
    for code in LIST.iter().chain(&ENCOUNTER_FIRST) {
        // An encounter decides among few; a code that never varies proves little.
        let floor = match *code {
            "DE:MP" | "EDE/P" => 1,
            "DE:GP/P" | "EDE" | "EDET/P" => 2,
            "WIN:MP" | "REP:MP" | "WON:MP" | "BPG:MP" | "BWG:MP" => 4,
            _ => 10,
        };
        assert!(
            distinct.get(*code).copied().unwrap_or(0) >= floor,
            "{code} took fewer than {floor} values in every file, which proves little: {distinct:?}"
        );
    }
}

/// The hub's team standings after every round of `trf`, each equal to gacrux's (the test
/// fails where not); how many different values each code took.
fn checked_against_gacrux(
    trf: &Path,
    rules: &str,
    list: &[&str],
) -> std::collections::BTreeMap<String, u64> {
    let file = trf.file_name().unwrap().to_string_lossy();
    let dir = tempfile::tempdir().unwrap();
    let quoted: Vec<String> = list.iter().map(|c| format!("{c:?}")).collect();
    let config = format!(
        "[pairings]\ntrf = {:?}\n\n[standings]\nrules = {rules:?}\ntiebreaks = [{}]\n",
        trf.display().to_string(),
        quoted.join(", ")
    );
    let (hub, _) = Hub::configured(dir.path(), &config);
    let (_, saved) = final_standings(&hub.web, "/api/standings/teams", dir.path());
    assert_eq!(saved.len(), 14, "{file}: 14 rounds");
    let codes = list.join(",");
    let mut args = vec![trf, Path::new(rules), Path::new(&codes)];
    args.extend(saved.iter().map(|p| p.as_path()));
    let output = python_script("team_standings.py", &args);
    let said = String::from_utf8_lossy(&output.stdout);
    eprintln!("{said}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "{file} ({rules}): the hub's team standings differ from gacrux's: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let counts: serde_json::Value =
        serde_json::from_str(said.lines().last().unwrap_or_default()).unwrap();
    counts["distinct"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(code, n)| (code.clone(), n.as_u64().unwrap_or(0)))
        .collect()
}
