//! Parquet files as rows and back. A decoded file's columns are matched to the table's by
//! name (cast where the file's type differs but converts, NULL where the file lacks a
//! nullable column); encoding writes one file per batch with the table's codec, closing
//! row groups at the configured size.

use arrow_array::{ArrayRef, RecordBatch, new_null_array};
use arrow_schema::SchemaRef;
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;
use tributary_types::{ParquetCompression, ParquetFormat};

/// Rows per batch read from a file.
const READ_BATCH_ROWS: usize = 8_192;

/// Rows written between row-group size checks.
const WRITE_SLICE_ROWS: usize = 1_024;

/// The Parquet part of a [`crate::BatchDecoder`]: decoded files awaiting `finish`.
#[derive(Debug)]
pub(crate) struct ParquetRows {
    output: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl ParquetRows {
    pub(crate) fn new(output: SchemaRef) -> Self {
        Self {
            output,
            batches: Vec::new(),
        }
    }

    /// Decode one whole file; on failure nothing of it is kept.
    pub(crate) fn push(&mut self, file: &[u8]) -> Result<(), String> {
        // The parquet crate asserts (panics) on some kinds of damaged metadata, such as
        // negative column offsets. A damaged file is bad data, not a crash: contain it.
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.read(file)))
            .map_err(|_| {
            "the Parquet file is damaged (its metadata is inconsistent)".to_string()
        })??;
        self.batches.extend(decoded);
        Ok(())
    }

    fn read(&self, file: &[u8]) -> Result<Vec<RecordBatch>, String> {
        // The embedded Arrow schema is skipped: the table's schema is the one that counts
        // (columns are cast to it), and a damaged copy of it can panic arrow-ipc.
        let options = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
        let reader = ParquetRecordBatchReaderBuilder::try_new_with_options(
            Bytes::copy_from_slice(file),
            options,
        )
        .map_err(|e| format!("it is not a readable Parquet file: {e}"))?
        .with_batch_size(READ_BATCH_ROWS)
        .build()
        .map_err(|e| format!("it is not a readable Parquet file: {e}"))?;
        let mut decoded = Vec::new();
        for batch in reader {
            let batch = batch.map_err(|e| format!("the Parquet file is damaged: {e}"))?;
            decoded.push(self.conform(&batch)?);
        }
        Ok(decoded)
    }

    /// The table's columns from a file's batch.
    fn conform(&self, batch: &RecordBatch) -> Result<RecordBatch, String> {
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.output.fields().len());
        for field in self.output.fields() {
            let column = match batch.column_by_name(field.name()) {
                Some(c) if c.data_type() == field.data_type() => c.clone(),
                Some(c) => arrow_cast::cast(c, field.data_type()).map_err(|e| {
                    format!(
                        "column '{}' is {} in the file and cannot be read as {}: {e}",
                        field.name(),
                        c.data_type(),
                        field.data_type()
                    )
                })?,
                None if field.is_nullable() => new_null_array(field.data_type(), batch.num_rows()),
                None => {
                    return Err(format!(
                        "the file has no column '{}', which is NOT NULL",
                        field.name()
                    ));
                }
            };
            if !field.is_nullable() && column.null_count() > 0 {
                return Err(format!(
                    "column '{}' is NOT NULL, but the file has nulls in it",
                    field.name()
                ));
            }
            columns.push(column);
        }
        RecordBatch::try_new(self.output.clone(), columns).map_err(|e| e.to_string())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.batches.iter().all(|b| b.num_rows() == 0)
    }

    pub(crate) fn finish(&mut self) -> Result<RecordBatch, String> {
        let batches = std::mem::take(&mut self.batches);
        arrow_select::concat::concat_batches(&self.output, &batches).map_err(|e| e.to_string())
    }
}

/// One Parquet file holding `batch`.
pub(crate) fn write_file(format: &ParquetFormat, batch: &RecordBatch) -> Result<Vec<u8>, String> {
    let compression = match format.compression {
        ParquetCompression::Uncompressed => Compression::UNCOMPRESSED,
        ParquetCompression::Snappy => Compression::SNAPPY,
        ParquetCompression::Gzip => Compression::GZIP(GzipLevel::default()),
        ParquetCompression::Zstd => Compression::ZSTD(ZstdLevel::default()),
        ParquetCompression::Lz4 => Compression::LZ4,
        ParquetCompression::Lz4Raw => Compression::LZ4_RAW,
    };
    let props = WriterProperties::builder()
        .set_compression(compression)
        .build();
    let mut writer =
        ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props)).map_err(|e| e.to_string())?;
    let limit = format.row_group_bytes.map(|b| b as usize);
    let mut at = 0;
    while at < batch.num_rows() {
        let n = WRITE_SLICE_ROWS.min(batch.num_rows() - at);
        writer
            .write(&batch.slice(at, n))
            .map_err(|e| e.to_string())?;
        at += n;
        if limit.is_some_and(|l| writer.in_progress_size() >= l) {
            writer.flush().map_err(|e| e.to_string())?;
        }
    }
    writer.into_inner().map_err(|e| e.to_string())
}
