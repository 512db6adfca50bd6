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

#[cfg(test)]
mod tests {
    use super::*;

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
