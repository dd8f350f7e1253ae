//! Source positions: a line/column location and a span between two locations.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A position in SQL source text. Lines and columns are 1-based; `0` means "unknown".
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct Location {
    /// 1-based line number.
    pub line: u64,
    /// 1-based column number, counted in characters.
    pub column: u64,
}

impl Location {
    /// A location at `line`, `column` (both 1-based).
    pub const fn new(line: u64, column: u64) -> Self {
        Self { line, column }
    }

    /// Whether this location points somewhere real.
    pub const fn is_known(&self) -> bool {
        self.line > 0
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A half-open range of source text, `start` inclusive and `end` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Span {
    /// Where the span begins.
    pub start: Location,
    /// Where the span ends (exclusive).
    pub end: Location,
}

impl Span {
    /// The span from `start` to `end`.
    pub const fn new(start: Location, end: Location) -> Self {
        Self { start, end }
    }

    /// Whether this span points somewhere real.
    pub const fn is_known(&self) -> bool {
        self.start.is_known()
    }

    /// The smallest span covering both `self` and `other`; unknown spans are ignored.
    pub fn union(&self, other: &Span) -> Span {
        match (self.is_known(), other.is_known()) {
            (false, _) => *other,
            (_, false) => *self,
            _ => Span::new(self.start.min(other.start), self.end.max(other.end)),
        }
    }

    /// Shift a span that was measured in a fragment starting at `origin` (1-based) so that
    /// it is relative to the whole text.
    pub fn offset_by(&self, origin: Location) -> Span {
        if !self.is_known() || !origin.is_known() {
            return *self;
        }
        let shift = |loc: Location| {
            if loc.line == 1 {
                Location::new(origin.line, origin.column + loc.column - 1)
            } else {
                Location::new(origin.line + loc.line - 1, loc.column)
            }
        };
        Span::new(shift(self.start), shift(self.end))
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_covers_both_and_ignores_unknown() {
        let a = Span::new(Location::new(1, 5), Location::new(1, 9));
        let b = Span::new(Location::new(2, 1), Location::new(2, 4));
        assert_eq!(
            a.union(&b),
            Span::new(Location::new(1, 5), Location::new(2, 4))
        );
        assert_eq!(a.union(&Span::default()), a);
        assert_eq!(Span::default().union(&b), b);
    }

    #[test]
    fn offset_moves_first_line_columns_only() {
        let s = Span::new(Location::new(1, 3), Location::new(2, 2));
        let moved = s.offset_by(Location::new(10, 5));
        assert_eq!(moved.start, Location::new(10, 7));
        assert_eq!(moved.end, Location::new(11, 2));
    }
}
