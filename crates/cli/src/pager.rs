//! The shell's pager: a result wider or taller than the terminal goes to `$PAGER`
//! (`less -SRFX` when unset: chopped long lines, colours kept, quits at once when the
//! text fits, leaves it on screen), as psql does. `PAGER=''` or `PAGER=cat` turns it off.

use std::io::{IsTerminal, Write};
use std::process::{Command, Stdio};

/// The pager's command when `$PAGER` is not set.
const DEFAULT_PAGER: &str = "less -SRFX";

/// The terminal's width and height in characters, when standard output is one.
fn terminal_size() -> Option<(usize, usize)> {
    let out = std::io::stdout();
    if !out.is_terminal() {
        return None;
    }
    let size = rustix::termios::tcgetwinsize(&out).ok()?;
    (size.ws_col > 0 && size.ws_row > 0).then_some((size.ws_col as usize, size.ws_row as usize))
}

/// Whether `text` needs a pager on a `width` × `height` terminal.
fn too_big(text: &str, width: usize, height: usize) -> bool {
    let mut lines = 0;
    for line in text.lines() {
        lines += 1;
        // Escapes (colour) take no room on screen.
        if visible_width(line) > width || lines >= height {
            return true;
        }
    }
    false
}

fn visible_width(line: &str) -> usize {
    let mut width = 0;
    let mut escape = false;
    for c in line.chars() {
        match (escape, c) {
            (false, '\x1b') => escape = true,
            (true, 'm') => escape = false,
            (true, _) => {}
            (false, _) => width += 1,
        }
    }
    width
}

/// Show `text` through the pager when it does not fit the terminal; `false` when it was
/// not (it fits, no terminal, no pager, or the pager could not start), so the caller
/// prints it.
pub fn page(text: &str) -> bool {
    let Some((width, height)) = terminal_size() else {
        return false;
    };
    if !too_big(text, width, height) {
        return false;
    }
    let pager = std::env::var("PAGER").unwrap_or_else(|_| DEFAULT_PAGER.into());
    let mut words = pager.split_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    if program == "cat" {
        return false;
    }
    let mut command = Command::new(program);
    command.args(words).stdin(Stdio::piped());
    if program == "less" && std::env::var_os("LESS").is_none() {
        command.env("LESS", "-SRFX");
    }
    let Ok(mut child) = command.spawn() else {
        return false;
    };
    if let Some(mut input) = child.stdin.take() {
        // The user may quit the pager before reading it all: that is not an error.
        let _ = input.write_all(text.as_bytes());
        let _ = input.write_all(b"\n");
    }
    let _ = child.wait();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_needs_a_pager_when_wider_or_taller_than_the_terminal() {
        assert!(!too_big("ab\ncd", 2, 3));
        assert!(too_big("abc", 2, 3), "wider");
        assert!(
            too_big("a\nb\nc", 2, 3),
            "as tall as the screen, with the prompt"
        );
        assert!(!too_big("\x1b[1mab\x1b[0m", 2, 3), "escapes take no room");
    }
}
