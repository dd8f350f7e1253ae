//! The work of a lookup join, batch by batch: each input batch's distinct keys are looked
//! up (in the cache first, then in one fetch for the rest), the values are decoded into
//! the lookup table's rows, and each input row is joined with its key's row (inner: rows
//! without one are dropped; left: kept with NULLs). The lookup table's reader is opened
//! at the first batch and closed with the stream.

use super::catalog::SessionShared;
use super::connect::{Opened, Transfer, connect};
use super::lookup_cache::LookupCache;
use super::rows::{RowAssembler, Rows};
use datafusion::arrow::array::{
    Array, ArrayRef, BooleanArray, RecordBatch, StringArray, UInt32Array, new_null_array,
};
use datafusion::arrow::compute::{cast, filter_record_batch, take};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::JoinType;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::physical_plan::metrics::Count;
use futures::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tributary_connectors::lookup::LookupReader;
use tributary_connectors::probe::SampledMessage;
use tributary_types::ConnectionTable;

/// What every partition of one lookup join shares.
pub(crate) struct JoinSpec {
    pub table: Arc<ConnectionTable>,
    pub shared: Arc<SessionShared>,
    /// The output: the input's columns, then the lookup table's.
    pub schema: SchemaRef,
    /// Each key, as an expression over the input (its lookup column is the key).
    pub keys: Vec<Arc<dyn PhysicalExpr>>,
    /// A condition on looked-up rows, over the lookup columns read.
    pub lookup_filter: Option<Arc<dyn PhysicalExpr>>,
    /// The lookup columns the join emits, as indexes into those read.
    pub outputs: Vec<usize>,
    /// A condition on joined rows, over the output.
    pub filter: Option<Arc<dyn PhysicalExpr>>,
    pub join_type: JoinType,
    /// Shared by the partitions: a key one fetched, the others need not.
    pub cache: Option<Arc<Mutex<LookupCache>>>,
}

/// One partition's counters, shown by EXPLAIN ANALYZE.
#[derive(Clone)]
pub(crate) struct LookupMetrics {
    /// Distinct keys asked of the system.
    pub keys_fetched: Count,
    /// Distinct keys answered by the cache.
    pub cache_hits: Count,
    /// Rows out.
    pub output_rows: Count,
}

/// One partition of the join.
pub(crate) struct Joining {
    pub spec: Arc<JoinSpec>,
    pub input: SendableRecordBatchStream,
    pub rows: RowAssembler,
    pub reader: Option<Box<dyn LookupReader>>,
    pub metrics: LookupMetrics,
}

impl Joining {
    /// The next joined batch; `None` at the input's end.
    pub(crate) async fn next(mut self) -> Result<Option<(RecordBatch, Self)>> {
        while let Some(batch) = self.input.next().await {
            let batch = batch?;
            if batch.num_rows() == 0 {
                continue;
            }
            let out = self.join(&batch).await?;
            if out.num_rows() > 0 {
                self.metrics.output_rows.add(out.num_rows());
                return Ok(Some((out, self)));
            }
        }
        Ok(None)
    }

    async fn join(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let spec = self.spec.clone();
        let keys = RowKeys::of(&spec.keys, batch)?;
        let values = self.values(&keys.distinct).await?;
        let matched = self.matched_rows(&keys.distinct, values)?;
        let (lookup_rows, key_row) = match matched {
            Some((rows, key_row)) => (Some(rows), key_row),
            None => (None, vec![None; keys.distinct.len()]),
        };
        let mut left = Vec::with_capacity(batch.num_rows());
        let mut right = Vec::with_capacity(batch.num_rows());
        for (i, key) in keys.of_row.iter().enumerate() {
            let row = key.and_then(|k| key_row[k]);
            if row.is_none() && spec.join_type == JoinType::Inner {
                continue;
            }
            left.push(i as u32);
            right.push(row);
        }
        let left = UInt32Array::from(left);
        let right = UInt32Array::from(right);
        let out = self.assemble(batch, lookup_rows.as_ref(), &left, &right)?;
        let Some(filter) = &spec.filter else {
            return Ok(out);
        };
        // A condition on the joined row: inner rows failing it go; left rows keep their
        // input columns and lose the looked-up ones.
        let keep = as_mask(filter.evaluate(&out)?.into_array(out.num_rows())?)?;
        if spec.join_type == JoinType::Inner {
            return Ok(filter_record_batch(&out, &keep)?);
        }
        let right: UInt32Array = right
            .iter()
            .zip(keep.iter())
            .map(|(r, k)| if k == Some(true) { r } else { None })
            .collect();
        self.assemble(batch, lookup_rows.as_ref(), &left, &right)
    }

    /// The value of each distinct key: from the cache, then one fetch for the rest.
    async fn values(&mut self, keys: &[String]) -> Result<Vec<Option<SampledMessage>>> {
        let now = Instant::now();
        let mut values: Vec<Option<Option<SampledMessage>>> = vec![None; keys.len()];
        if let Some(cache) = &self.spec.cache {
            let mut cache = lock(cache)?;
            for (slot, key) in values.iter_mut().zip(keys) {
                *slot = cache.get(key, now);
            }
        }
        let missing: Vec<usize> = (0..keys.len()).filter(|&i| values[i].is_none()).collect();
        self.metrics.cache_hits.add(keys.len() - missing.len());
        if !missing.is_empty() {
            let wanted: Vec<String> = missing.iter().map(|&i| keys[i].clone()).collect();
            let fetched = self.fetch(&wanted).await?;
            self.metrics.keys_fetched.add(wanted.len());
            let mut cache = match &self.spec.cache {
                Some(c) => Some(lock(c)?),
                None => None,
            };
            for ((&i, key), value) in missing.iter().zip(wanted).zip(fetched) {
                if let Some(cache) = cache.as_mut() {
                    cache.put(key, value.clone(), now);
                }
                values[i] = Some(value);
            }
        }
        Ok(values.into_iter().map(Option::flatten).collect())
    }

    async fn fetch(&mut self, keys: &[String]) -> Result<Vec<Option<SampledMessage>>> {
        let table = &self.spec.table;
        if self.reader.is_none() {
            self.reader = match connect(
                &self.spec.shared,
                table,
                Transfer::Lookup,
                usize::MAX,
                tributary_connectors::probe::Split::WHOLE,
            )
            .await?
            {
                Opened::Lookup(r) => Some(r),
                _ => {
                    return Err(DataFusionError::Internal(
                        "a lookup opened no lookup".into(),
                    ));
                }
            };
        }
        let Some(reader) = self.reader.as_mut() else {
            return Err(DataFusionError::Internal("the lookup is not open".into()));
        };
        let values = reader
            .fetch(keys)
            .await
            .map_err(|e| Transfer::Lookup.failure(table, e.message, e.hint))?;
        if values.len() != keys.len() {
            return Err(DataFusionError::Internal(format!(
                "a lookup of {} keys answered {} values",
                keys.len(),
                values.len()
            )));
        }
        Ok(values)
    }

    /// The looked-up rows, and for each distinct key the row it matches (the first row
    /// its value decoded to that passes the lookup filter); `None` when no key matched.
    fn matched_rows(
        &mut self,
        keys: &[String],
        values: Vec<Option<SampledMessage>>,
    ) -> Result<Option<(RecordBatch, Vec<Option<u32>>)>> {
        let mut messages = Vec::new();
        let mut message_key = Vec::new();
        for (k, value) in values.into_iter().enumerate() {
            if let Some(m) = value {
                messages.push(m);
                message_key.push(k);
            }
        }
        if messages.is_empty() {
            return Ok(None);
        }
        let Some(Rows { batch, sources }) = self.rows.rows(&messages)? else {
            return Ok(None);
        };
        let passes = match &self.spec.lookup_filter {
            Some(f) => Some(as_mask(f.evaluate(&batch)?.into_array(batch.num_rows())?)?),
            None => None,
        };
        let mut key_row = vec![None; keys.len()];
        for (row, &message) in sources.iter().enumerate() {
            let k = message_key[message];
            let ok = passes
                .as_ref()
                .is_none_or(|p| p.is_valid(row) && p.value(row));
            if ok && key_row[k].is_none() {
                key_row[k] = Some(row as u32);
            }
        }
        Ok(Some((batch.project(&self.spec.outputs)?, key_row)))
    }

    /// The output rows: the input's rows at `left`, the lookup rows at `right` (NULL
    /// where `right` is).
    fn assemble(
        &self,
        input: &RecordBatch,
        lookup: Option<&RecordBatch>,
        left: &UInt32Array,
        right: &UInt32Array,
    ) -> Result<RecordBatch> {
        let schema = &self.spec.schema;
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        for c in input.columns() {
            columns.push(take(c, left, None)?);
        }
        let inputs = input.num_columns();
        for (i, field) in schema.fields().iter().enumerate().skip(inputs) {
            columns.push(match lookup {
                Some(rows) => take(rows.column(i - inputs), right, None)?,
                None => new_null_array(field.data_type(), left.len()),
            });
        }
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}

/// The key of each input row, as an index into the batch's distinct keys.
struct RowKeys {
    distinct: Vec<String>,
    /// `None` for rows whose key is NULL, or whose keys disagree (a join on two key
    /// expressions matches only when both name the same key).
    of_row: Vec<Option<usize>>,
}

impl RowKeys {
    fn of(exprs: &[Arc<dyn PhysicalExpr>], batch: &RecordBatch) -> Result<Self> {
        let n = batch.num_rows();
        let mut arrays = Vec::with_capacity(exprs.len());
        for e in exprs {
            let values = e.evaluate(batch)?.into_array(n)?;
            let text = cast(&values, &DataType::Utf8)?;
            let Some(text) = text.as_any().downcast_ref::<StringArray>().cloned() else {
                return Err(DataFusionError::Internal(
                    "a key did not cast to text".into(),
                ));
            };
            arrays.push(text);
        }
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut distinct = Vec::new();
        let mut of_row = Vec::with_capacity(n);
        for row in 0..n {
            let mut key: Option<&str> = None;
            let mut agree = true;
            for a in &arrays {
                if a.is_null(row) {
                    agree = false;
                    break;
                }
                let v = a.value(row);
                match key {
                    Some(k) if k != v => agree = false,
                    _ => key = Some(v),
                }
            }
            of_row.push(match (agree, key) {
                (true, Some(k)) => Some(*index.entry(k).or_insert_with(|| {
                    distinct.push(k.to_string());
                    distinct.len() - 1
                })),
                _ => None,
            });
        }
        Ok(Self { distinct, of_row })
    }
}

fn as_mask(array: ArrayRef) -> Result<BooleanArray> {
    array
        .as_any()
        .downcast_ref::<BooleanArray>()
        .cloned()
        .ok_or_else(|| DataFusionError::Plan("a join condition must be a boolean".into()))
}

fn lock(cache: &Mutex<LookupCache>) -> Result<std::sync::MutexGuard<'_, LookupCache>> {
    cache
        .lock()
        .map_err(|_| DataFusionError::Internal("the lookup cache was poisoned".into()))
}
