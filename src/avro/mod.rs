//! Avro container files as Iceberg uses them (spec: Appendix A, "Avro").
//!
//! Reading resolves the file's writer schema against an Iceberg read type by
//! field id and decodes blocks straight into Arrow columns ([`decode::Plan`]);
//! plans are compiled once per (writer schema, read type) and cached.

pub mod binary;
pub mod columns;
pub mod container;
pub mod crate_writer;
pub mod decode;
pub mod encode;
pub mod schema;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_array::StructArray;

use crate::error::{Error, Result};
use crate::types::Type;
pub use container::{Codec, Header};
pub use decode::Plan;

type PlanKey = (String, String);

static PLANS: Mutex<Option<HashMap<PlanKey, Arc<Plan>>>> = Mutex::new(None);

/// Plans kept at most; a table has few distinct writer schemas.
const MAX_PLANS: usize = 256;

/// The cached plan for `header`'s writer schema read as `read_type`.
pub fn plan_for(header: &Header, read_type: &Type) -> Result<Arc<Plan>> {
    let key = (header.schema_json.clone(), format!("{read_type:?}"));
    {
        let cache = PLANS.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(plan) = cache.as_ref().and_then(|c| c.get(&key)) {
            return Ok(plan.clone());
        }
    }
    let plan = Arc::new(Plan::compile(&header.schema, read_type)?);
    let mut cache = PLANS.lock().unwrap_or_else(|p| p.into_inner());
    let map = cache.get_or_insert_with(HashMap::new);
    if map.len() >= MAX_PLANS {
        map.clear();
    }
    map.insert(key, plan.clone());
    Ok(plan)
}

/// Decodes every record of the container file `data` as `read_type`.
pub fn read_with(data: &[u8], header: &Header, read_type: &Type) -> Result<StructArray> {
    let plan = plan_for(header, read_type)?;
    read_with_plan(data, header, &plan)
}

/// Decodes every record of the container file `data` with `plan` (compiled
/// for `header`'s writer schema).
pub fn read_with_plan(data: &[u8], header: &Header, plan: &Plan) -> Result<StructArray> {
    let mut builders = plan.builders();
    // A first pass over the block headers counts the records, so that the
    // columns are allocated once instead of growing by doubling.
    let mut counting = container::Blocks::new(data, header);
    let mut records = 0usize;
    while let Ok(Some((count, _))) = counting.next_block() {
        records = records.saturating_add(count);
    }
    builders.reserve(records.min(data.len()));
    with_block_buffer(|scratch| {
        let mut blocks = container::Blocks::new(data, header);
        let mut done = 0usize;
        while let Some((count, block)) = blocks.next_block()? {
            let plain: &[u8] = if header.codec == Codec::Null {
                block
            } else {
                let n = header.codec.decompress_into(block, scratch)?;
                scratch.get(..n).unwrap_or(&[])
            };
            plan.decode_block(plain, count, &mut builders)?;
            if done == 0 {
                builders.reserve_rest(count, records.min(data.len()));
            }
            done += count;
        }
        Ok(())
    })?;
    plan.finish(&mut builders)
}

/// Runs `f` with this thread's buffer for decompressed blocks. Reading many
/// manifests reuses one buffer instead of allocating (and zeroing) a block's
/// worth per file; a buffer grown past `KEEP` by one huge block is released.
fn with_block_buffer<T>(f: impl FnOnce(&mut Vec<u8>) -> Result<T>) -> Result<T> {
    const KEEP: usize = 8 << 20;
    thread_local! {
        static BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut buffer = BUFFER.take();
    let out = f(&mut buffer);
    if buffer.capacity() <= KEEP {
        BUFFER.set(buffer);
    }
    out
}

/// Which code writes the container files of manifests and manifest lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerWriter {
    /// [`container::Writer`] with [`encode::encode_struct`]: the default,
    /// faster at every size (benches/RESULTS.md, "Avro: crate vs hand-written").
    HandWritten,
    /// The `apache-avro` crate's `Writer` ([`crate_writer`]).
    Crate,
}

/// Writes `rows` (a struct of the Iceberg type `fields`) as a container file
/// with the writer schema `schema_json` and the header `metadata`; `what`
/// names a row in errors.
pub fn write_rows(
    writer: ContainerWriter,
    schema_json: &str,
    metadata: &[(String, String)],
    codec: Codec,
    fields: &[crate::types::NestedField],
    rows: &arrow_array::StructArray,
    what: &str,
) -> Result<Vec<u8>> {
    match writer {
        ContainerWriter::Crate => {
            crate_writer::write(schema_json, metadata, codec, fields, rows, what)
        }
        ContainerWriter::HandWritten => {
            let mut out = container::Writer::new(schema_json, metadata, codec);
            for row in 0..arrow_array::Array::len(rows) {
                encode::encode_struct(fields, rows, row, out.record_buffer())
                    .map_err(|e| Error::InvalidValue(format!("{what} {row}: {e}")))?;
                out.end_record()?;
            }
            out.finish()
        }
    }
}

/// Prefixes an error with the file it came from.
pub fn in_file(location: &str) -> impl Fn(Error) -> Error + '_ {
    move |e| match e {
        Error::InvalidData(m) => Error::InvalidData(format!("{location}: {m}")),
        Error::InvalidValue(m) => Error::InvalidValue(format!("{location}: {m}")),
        Error::TypeMismatch(m) => Error::TypeMismatch(format!("{location}: {m}")),
        Error::UnknownType(m) => Error::InvalidData(format!("{location}: {m}")),
        Error::Validation(m) => Error::Validation(format!("{location}: {m}")),
        Error::UnknownField(m) => Error::UnknownField(format!("{location}: {m}")),
        // A file naming a transform frazil cannot apply is unreadable here.
        e @ (Error::InvalidTransform(_) | Error::UnsupportedTransform { .. }) => {
            Error::InvalidData(format!("{location}: {e}"))
        }
        other => other,
    }
}
