//! Names from outside the hub (players from the pairing files, arbiters, teams) as text that
//! stays on its line and reads as it is. A name reaches PGN tags, terminals, alerts and pages;
//! a newline in it would end a PGN tag and start another (`[Result "1-0"]` forged into a
//! broadcast), an escape sequence would restyle a pager's terminal, and a bidirectional
//! override would show a name other than it is.

/// Control characters (newlines, escapes) and the bidirectional overrides and isolates.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with each unsafe character ([`is_unsafe`]) as U+FFFD: one line, shown as it is.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if is_unsafe(c) { '\u{fffd}' } else { c })
        .collect()
}

/// Unicode's format characters that show nothing (zero-width spaces and joiners, direction
/// marks and overrides, the soft hyphen, the byte-order mark): in a name they make two names
/// that read alike differ, or one read backwards.
pub fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{61c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
    )
}

/// `text` without its format characters ([`is_format`]): what arbiters' notes and names are
/// kept as.
pub fn without_format(text: &str) -> String {
    text.chars().filter(|c| !is_format(*c)).collect()
}

/// The names the hub signs with itself, in the audit trail and the alerts' routing: no
/// arbiter may be enrolled or sign under one, nor under one that reads alike.
pub const RESERVED: [&str; 4] = ["chief", "configuration", "schedule", "pairing program"];

/// What a name looks like, as Unicode TR 39's skeletons compare them, for the letters that
/// pass for Latin ones in names (Cyrillic and Greek): format characters gone, lower case,
/// lookalikes as the Latin letter, spaces as one.
pub fn skeleton(name: &str) -> String {
    let lower = without_format(name).to_lowercase();
    let latin: String = lower
        .chars()
        .map(|c| match c {
            'а' | 'α' => 'a',
            'с' | 'ϲ' => 'c',
            'ԁ' => 'd',
            'е' | 'ε' | 'ё' => 'e',
            'һ' => 'h',
            'і' | 'ι' | 'ї' => 'i',
            'ј' => 'j',
            'κ' | 'к' => 'k',
            'м' => 'm',
            'п' => 'n',
            'о' | 'ο' | 'σ' => 'o',
            'р' | 'ρ' => 'p',
            'ԛ' => 'q',
            'г' => 'r',
            'ѕ' => 's',
            'т' | 'τ' => 't',
            'υ' | 'ս' => 'u',
            'ν' | 'ѵ' => 'v',
            'ԝ' | 'ω' => 'w',
            'х' | 'χ' => 'x',
            'у' | 'γ' => 'y',
            '0' => 'o',
            '1' | 'l' => 'l',
            other => other,
        })
        .collect();
    latin.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The reserved name ([`RESERVED`]) `name` reads as, if any.
pub fn reserved(name: &str) -> Option<&'static str> {
    let seen = skeleton(name);
    RESERVED.into_iter().find(|r| skeleton(r) == seen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hubs_own_names_are_reserved_however_they_are_written() {
        for name in [
            "chief",
            "Chief ",
            "chi\u{200b}ef",
            "сhief", // Cyrillic с
            "pairing  program",
            "PAIRING PRОGRAM", // Cyrillic О
            "configuration",
            "schedule\u{feff}",
        ] {
            assert!(reserved(name).is_some(), "{name:?}");
        }
        for name in ["IA Eva", "Chiefly", "Øystein", "Иванов"] {
            assert_eq!(reserved(name), None, "{name}");
        }
        assert_eq!(without_format("note\u{202e}gnp.exe\u{200d}"), "notegnp.exe");
    }

    #[test]
    fn a_name_stays_one_line_and_reads_as_it_is() {
        assert_eq!(printable("Ødegård, Åse"), "Ødegård, Åse");
        assert_eq!(
            printable("Иванов\n[Result \"1-0\"]"),
            "Иванов\u{fffd}[Result \"1-0\"]"
        );
        assert_eq!(printable("evil\u{202e}gnp.exe"), "evil\u{fffd}gnp.exe");
        assert_eq!(printable("\u{1b}[2J"), "\u{fffd}[2J");
        // Right-to-left scripts need no override: their letters stay.
        assert_eq!(printable("أحمد، يوسف"), "أحمد، يوسف");
    }
}
