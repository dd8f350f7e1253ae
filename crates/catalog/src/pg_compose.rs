//! Statements composed from the parts one call needs, parameters numbered as they are
//! added. A write or read-ahead made of every part it might need costs the server the
//! setup of every part at each call (an insert into a table the group does not touch
//! still builds its executor nodes); composed, a group creating one table sets up a
//! third of that. Each composition is one text, prepared once per connection, and there
//! are a few dozen of them, not one per group.

use postgres::types::ToSql;

/// A statement being put together: its parts, and the parameters they refer to.
#[derive(Default)]
pub(crate) struct Composed<'a> {
    params: Vec<&'a (dyn ToSql + Sync)>,
}

impl<'a> Composed<'a> {
    /// Add a parameter; how the statement refers to it (`$n`).
    pub(crate) fn param(&mut self, value: &'a (dyn ToSql + Sync)) -> String {
        self.params.push(value);
        format!("${}", self.params.len())
    }

    /// The parameters, in the order the statement numbers them.
    pub(crate) fn params(&self) -> &[&'a (dyn ToSql + Sync)] {
        &self.params
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_numbered_as_added() {
        let (a, b) = (1_i64, "x");
        let mut c = Composed::default();
        assert_eq!(c.param(&a), "$1");
        assert_eq!(c.param(&b), "$2");
        assert_eq!(c.params().len(), 2);
    }
}
