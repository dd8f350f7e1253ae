//! A Debezium source read as the table its changes describe. Each decoded row carries
//! its change kind (`_change`: `+I`, `-U`, `+U`, `-D`); a query sees the rows that are
//! live once every change read has been applied by PRIMARY KEY, so an aggregate or a
//! join over the table counts each row once, as a streaming engine's updating result
//! would settle. The changes are applied as they are read and the live rows come out
//! when the read ends (the source's end or the session's preview bounds), in the order
//! their last change arrived. Memory grows with the changes read, which the preview
//! bounds cap for endless sources.

use datafusion::arrow::array::{Array, RecordBatch, StringArray};
use datafusion::arrow::compute::interleave_record_batch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::row::{OwnedRow, RowConverter, SortField};
use datafusion::error::{DataFusionError, Result};
use std::collections::HashMap;
use tributary_types::ConnectionTable;

/// The live rows of a changelog, keyed by the table's PRIMARY KEY.
pub(crate) struct Changelog {
    /// The key columns' places in the full row.
    key_columns: Vec<usize>,
    keys: RowConverter,
    /// Every batch of full rows read (a live row points into one).
    batches: Vec<RecordBatch>,
    /// Each key's live row: (batch, row).
    live: HashMap<OwnedRow, (usize, usize)>,
}

impl Changelog {
    /// The changelog of `table`, whose full rows have `schema`; `None` when its format
    /// appends rows rather than changing them.
    pub(crate) fn of(table: &ConnectionTable, schema: &SchemaRef) -> Result<Option<Self>> {
        if !table.is_updating() {
            return Ok(None);
        }
        let key_columns: Vec<usize> = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, f)| table.schema.primary_keys.contains(f.name()))
            .map(|(i, _)| i)
            .collect();
        if key_columns.is_empty() {
            return Err(DataFusionError::Plan(format!(
                "table '{}' holds changes (debezium_json) but has no PRIMARY KEY to apply them by",
                table.name
            )));
        }
        let sort_fields = key_columns
            .iter()
            .map(|i| SortField::new(schema.field(*i).data_type().clone()))
            .collect();
        Ok(Some(Self {
            key_columns,
            keys: RowConverter::new(sort_fields)?,
            batches: Vec::new(),
            live: HashMap::new(),
        }))
    }

    /// Apply the changes of `rows`, whose kinds are `changes`.
    pub(crate) fn apply(&mut self, rows: RecordBatch, changes: &StringArray) -> Result<()> {
        let columns: Vec<_> = self
            .key_columns
            .iter()
            .map(|i| rows.column(*i).clone())
            .collect();
        let keys = self.keys.convert_columns(&columns)?;
        let batch = self.batches.len();
        for row in 0..rows.num_rows() {
            let key = keys.row(row).owned();
            match changes.is_valid(row).then(|| changes.value(row)) {
                Some("+I" | "+U") => {
                    self.live.insert(key, (batch, row));
                }
                Some("-U" | "-D") => {
                    self.live.remove(&key);
                }
                _ => {}
            }
        }
        self.batches.push(rows);
        Ok(())
    }

    /// The live rows, in the order their last change arrived; `None` when there are none.
    pub(crate) fn into_rows(self) -> Result<Option<RecordBatch>> {
        let mut at: Vec<(usize, usize)> = self.live.into_values().collect();
        if at.is_empty() {
            return Ok(None);
        }
        at.sort_unstable();
        let batches: Vec<&RecordBatch> = self.batches.iter().collect();
        Ok(Some(interleave_record_batch(&batches, &at)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;
    use tributary_types::{ConnectionSchema, Format, JsonFormat};

    #[test]
    fn changes_apply_by_key_and_the_live_rows_come_out_in_arrival_order() {
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let mut table = ConnectionTable::new(
            tributary_catalog::new_table_id(),
            "t",
            "kafka",
            tributary_types::ConnectionType::Source,
        );
        table.schema = ConnectionSchema {
            format: Some(Format::Json(JsonFormat {
                debezium: true,
                ..Default::default()
            })),
            primary_keys: ["id".to_string()].into(),
            ..Default::default()
        };
        let mut log = Changelog::of(&table, &schema).unwrap().unwrap();
        let batch = |ids: Vec<i64>, names: Vec<&str>| {
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(ids)),
                    Arc::new(StringArray::from(names)),
                ],
            )
            .unwrap()
        };
        log.apply(
            batch(vec![1, 2, 1, 1], vec!["a", "c", "a", "b"]),
            &StringArray::from(vec!["+I", "+I", "-U", "+U"]),
        )
        .unwrap();
        log.apply(
            batch(vec![2, 3], vec!["c", "d"]),
            &StringArray::from(vec!["-D", "+I"]),
        )
        .unwrap();
        let live = log.into_rows().unwrap().unwrap();
        let ids = live
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let names = live
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(ids.values(), &[1, 3]);
        assert_eq!((names.value(0), names.value(1)), ("b", "d"));

        table.schema.primary_keys.clear();
        let e = Changelog::of(&table, &schema).err().unwrap();
        assert!(e.to_string().contains("no PRIMARY KEY"), "{e}");
    }
}
