//! The decode plan: an Avro writer schema resolved against an Iceberg read
//! type by field id (spec: "Column Projection", Appendix A "Field IDs"),
//! compiled once and then run over every record of a file, writing values
//! straight into Arrow columns. Writer fields the reader does not want are
//! skipped without being decoded; reader fields the writer lacks become nulls.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StructArray};

use super::binary::Cursor;
use super::columns::{Builders, Slot, SlotField};
use super::schema::Schema;
use crate::error::{Error, Result};
use crate::types::{PrimitiveType, Type};

/// How to skip one writer value.
#[derive(Debug, Clone)]
enum Skip {
    Nothing,
    Bytes1,
    Varint,
    Fixed(usize),
    Bytes,
    Record(Vec<Skip>),
    Array(Box<Skip>),
    /// An array whose items are records of `n` varints (int -> long maps).
    VarintArray(usize),
    /// An array of {varint, bytes} records (int -> binary maps: the bounds).
    VarintBytesArray,
    Map(Box<Skip>),
    Union(Vec<Skip>),
}

/// One step of a compiled plan.
#[derive(Debug, Clone)]
enum Node {
    Skip(Skip),
    Missing(Slot),
    Bool(usize),
    Int(usize),
    IntToLong(usize),
    /// An Avro long read as an Iceberg int or date: other writers declare
    /// some ints as longs (pyiceberg 0.12 writes `equality_ids` as
    /// `array<long>`). A value outside the int range is refused, naming
    /// the field `path`.
    LongToInt {
        col: usize,
        path: Arc<str>,
    },
    Long(usize),
    /// An Avro `timestamp-millis` long read as microseconds or nanoseconds
    /// (`factor` 1000 or 1000000), as Java's reader scales it.
    ScaledLong {
        col: usize,
        factor: i64,
        path: Arc<str>,
    },
    Float(usize),
    FloatToDouble(usize),
    Double(usize),
    Bytes(usize),
    Fixed {
        size: usize,
        col: usize,
    },
    DecimalFixed {
        size: usize,
        col: usize,
    },
    DecimalBytes(usize),
    Optional {
        null_index: i64,
        inner: Box<Node>,
        slot: Slot,
    },
    /// Any other union: one node per branch (a null branch is
    /// [`Node::Missing`]). Avro allows them and Java's reader reads them;
    /// Iceberg writers only write `["null", T]`.
    Union(Vec<Node>),
    Record {
        fields: Vec<Node>,
        nulls: Option<usize>,
    },
    Array {
        col: usize,
        item: Box<Node>,
    },
    /// An Iceberg map with int keys and long or binary values; with `keep`,
    /// only the entries whose key it holds are decoded (the others skipped).
    IntMap {
        col: usize,
        key: usize,
        value: MapValue,
        keep: Option<Arc<KeySet>>,
    },
    StringMap {
        col: usize,
        key: usize,
        value: Box<Node>,
    },
}

/// The keys an [`Node::IntMap`] keeps: a bitmap over non-negative ints
/// (metrics maps are keyed by field ids, which are small).
#[derive(Debug)]
pub struct KeySet {
    bits: Vec<u64>,
}

impl KeySet {
    pub fn new(keys: &[i32]) -> KeySet {
        let top = keys.iter().copied().filter(|k| *k >= 0).max().unwrap_or(0) as usize;
        let mut bits = vec![0u64; top / 64 + 1];
        for k in keys.iter().filter(|k| **k >= 0) {
            bits[*k as usize / 64] |= 1 << (*k as usize % 64);
        }
        KeySet { bits }
    }

    #[inline(always)]
    fn contains(&self, key: i32) -> bool {
        usize::try_from(key).is_ok_and(|k| {
            self.bits
                .get(k / 64)
                .is_some_and(|word| word & (1 << (k % 64)) != 0)
        })
    }
}

/// The value column of an [`Node::IntMap`], with the null branch index of
/// an optional value.
#[derive(Debug, Clone, Copy)]
enum MapValue {
    Long(usize),
    OptLong(i64, usize),
    Bytes(usize),
    OptBytes(i64, usize),
}

/// A compiled plan for one (writer schema, read type) pair.
#[derive(Debug, Clone)]
pub struct Plan {
    root: Node,
    slot: Slot,
    read_type: Type,
}

impl Plan {
    /// Resolves `writer` (a record schema) against `read_type` (a struct).
    pub fn compile(writer: &Schema, read_type: &Type) -> Result<Plan> {
        let mut builders = Builders::default();
        let slot = builders.allocate(read_type);
        let root = compile_node(writer, &slot, "")?;
        Ok(Plan {
            root,
            slot,
            read_type: read_type.clone(),
        })
    }

    /// [`Plan::compile`], decoding only the entries of int-keyed maps (a
    /// manifest's metrics maps) whose key is in `keys`: a scan needs the
    /// metrics of the columns its filter reads, not of every column.
    pub fn compile_keeping(writer: &Schema, read_type: &Type, keys: &[i32]) -> Result<Plan> {
        let mut plan = Plan::compile(writer, read_type)?;
        restrict_int_maps(&mut plan.root, &Arc::new(KeySet::new(keys)));
        Ok(plan)
    }

    pub fn read_type(&self) -> &Type {
        &self.read_type
    }

    /// Fresh columns for one decode with this plan.
    pub fn builders(&self) -> Builders {
        let mut builders = Builders::default();
        let slot = builders.allocate(&self.read_type);
        debug_assert_eq!(slot, self.slot);
        builders
    }

    /// Decodes `count` records from one decompressed block.
    pub fn decode_block(&self, data: &[u8], count: usize, builders: &mut Builders) -> Result<()> {
        // Every record of an Iceberg schema takes at least one byte; a larger
        // count is corruption, and refusing it bounds the work done.
        if count > data.len() {
            return Err(Error::InvalidData(format!(
                "Avro block claims {count} records in {} bytes",
                data.len()
            )));
        }
        let mut cursor = Cursor::new(data);
        for _ in 0..count {
            exec(&self.root, &mut cursor, builders)?;
        }
        if !cursor.is_empty() {
            return Err(Error::InvalidData(format!(
                "Avro block has {} bytes after its {count} records",
                data.len() - cursor.position()
            )));
        }
        Ok(())
    }

    /// The decoded records as one struct array (of the read type).
    pub fn finish(&self, builders: &mut Builders) -> Result<StructArray> {
        let array: ArrayRef = builders.finish(&self.slot)?;
        array
            .as_any()
            .downcast_ref::<StructArray>()
            .cloned()
            .ok_or_else(|| Error::Internal("read type is not a struct".to_owned()))
    }
}

fn mismatch(path: &str, writer: &Schema, reader: &dyn std::fmt::Display) -> Error {
    Error::InvalidData(format!(
        "field {path}: Avro {} cannot be read as Iceberg {reader}",
        writer.kind()
    ))
}

fn compile_skip(schema: &Schema) -> Skip {
    match schema {
        Schema::Null => Skip::Nothing,
        Schema::Boolean => Skip::Bytes1,
        Schema::Int { .. } | Schema::Long { .. } | Schema::Enum { .. } => Skip::Varint,
        Schema::Float => Skip::Fixed(4),
        Schema::Double => Skip::Fixed(8),
        Schema::Bytes { .. } | Schema::String { .. } => Skip::Bytes,
        Schema::Fixed { size, .. } => Skip::Fixed(*size),
        Schema::Record(r) => {
            Skip::Record(r.fields.iter().map(|f| compile_skip(&f.schema)).collect())
        }
        Schema::Array { items, .. } => match compile_skip(items) {
            Skip::Varint => Skip::VarintArray(1),
            Skip::Record(fields) if fields.iter().all(|f| matches!(f, Skip::Varint)) => {
                Skip::VarintArray(fields.len())
            }
            Skip::Record(fields) if matches!(fields.as_slice(), [Skip::Varint, Skip::Bytes]) => {
                Skip::VarintBytesArray
            }
            item => Skip::Array(Box::new(item)),
        },
        Schema::Map { values, .. } => Skip::Map(Box::new(compile_skip(values))),
        Schema::Union(branches) => Skip::Union(branches.iter().map(compile_skip).collect()),
    }
}

fn restrict_int_maps(node: &mut Node, keys: &Arc<KeySet>) {
    match node {
        Node::IntMap { keep, .. } => *keep = Some(keys.clone()),
        Node::Optional { inner, .. } => restrict_int_maps(inner, keys),
        Node::Union(branches) => branches.iter_mut().for_each(|b| restrict_int_maps(b, keys)),
        Node::Record { fields, .. } => fields.iter_mut().for_each(|f| restrict_int_maps(f, keys)),
        Node::Array { item, .. } => restrict_int_maps(item, keys),
        Node::StringMap { value, .. } => restrict_int_maps(value, keys),
        _ => {}
    }
}

fn compile_node(writer: &Schema, slot: &Slot, path: &str) -> Result<Node> {
    match writer {
        // Avro null: Java writes Iceberg's `unknown` as a bare "null" (not a
        // union), and v3 lets `unknown` be promoted to any type, so a field
        // written as null reads as nulls of whatever the read type is.
        Schema::Null => return Ok(Node::Missing(slot.clone())),
        Schema::Union(branches) => {
            if let Some((null_index, inner)) = writer.as_optional() {
                return Ok(Node::Optional {
                    null_index: null_index as i64,
                    inner: Box::new(compile_node(inner, slot, path)?),
                    slot: slot.clone(),
                });
            }
            if branches.iter().any(|b| matches!(b, Schema::Union(_))) {
                return Err(Error::InvalidData(format!(
                    "field {path}: an Avro union may not hold another union"
                )));
            }
            return branches
                .iter()
                .map(|branch| compile_node(branch, slot, path))
                .collect::<Result<Vec<_>>>()
                .map(Node::Union);
        }
        _ => {}
    }
    match slot {
        Slot::Prim { ty, col } => compile_primitive(writer, *ty, *col, path),
        Slot::Struct { nulls, fields } => {
            let Schema::Record(record) = writer else {
                return Err(mismatch(path, writer, &"struct"));
            };
            compile_record(record, fields, Some(*nulls), path)
        }
        Slot::List { col, element } => match writer {
            Schema::Array {
                items,
                logical_map: false,
                ..
            } => Ok(Node::Array {
                col: *col,
                item: Box::new(compile_node(items, element, &format!("{path}.element"))?),
            }),
            _ => Err(mismatch(path, writer, &"list")),
        },
        Slot::Map { col, key, value } => match writer {
            // Iceberg's map encoding: an array of {key, value} records.
            Schema::Array { items, .. } => {
                let Schema::Record(entry) = items.as_ref() else {
                    return Err(mismatch(path, writer, &"map"));
                };
                if entry.fields.len() != 2 {
                    return Err(Error::InvalidData(format!(
                        "field {path}: map entries must be records of 2 fields, found {}",
                        entry.fields.len()
                    )));
                }
                let fields = vec![
                    compile_node(&entry.fields[0].schema, key, &format!("{path}.key"))?,
                    compile_node(&entry.fields[1].schema, value, &format!("{path}.value"))?,
                ];
                // The metrics maps (int -> long, int -> binary) get a tight loop.
                if let [Node::Int(key_col), value_node] = fields.as_slice() {
                    let value = match value_node {
                        Node::Long(c) => Some(MapValue::Long(*c)),
                        Node::Bytes(c) => Some(MapValue::Bytes(*c)),
                        Node::Optional {
                            null_index, inner, ..
                        } => match inner.as_ref() {
                            Node::Long(c) => Some(MapValue::OptLong(*null_index, *c)),
                            Node::Bytes(c) => Some(MapValue::OptBytes(*null_index, *c)),
                            _ => None,
                        },
                        _ => None,
                    };
                    if let Some(value) = value {
                        return Ok(Node::IntMap {
                            col: *col,
                            key: *key_col,
                            value,
                            keep: None,
                        });
                    }
                }
                Ok(Node::Array {
                    col: *col,
                    item: Box::new(Node::Record {
                        fields,
                        nulls: None,
                    }),
                })
            }
            Schema::Map { values, .. } => match key.as_ref() {
                Slot::Prim {
                    ty: PrimitiveType::String,
                    col: key_col,
                } => Ok(Node::StringMap {
                    col: *col,
                    key: *key_col,
                    value: Box::new(compile_node(values, value, &format!("{path}.value"))?),
                }),
                _ => Err(mismatch(path, writer, &"map with non-string keys")),
            },
            _ => Err(mismatch(path, writer, &"map")),
        },
    }
}

fn compile_record(
    record: &super::schema::Record,
    fields: &[SlotField],
    nulls: Option<usize>,
    path: &str,
) -> Result<Node> {
    let mut nodes = Vec::with_capacity(record.fields.len() + fields.len());
    let mut seen = vec![false; fields.len()];
    // A field without a field-id is another writer's extra: skipped, as
    // Java's reader skips it. A record where no field has one is not
    // Iceberg's at all.
    if !record.fields.is_empty() && record.fields.iter().all(|f| f.field_id.is_none()) {
        return Err(Error::InvalidData(format!(
            "Avro record {}{} has no field with a field-id (not an Iceberg schema)",
            record.name,
            if path.is_empty() {
                String::new()
            } else {
                format!(" (field {path})")
            },
        )));
    }
    for field in &record.fields {
        let Some(id) = field.field_id else {
            nodes.push(Node::Skip(compile_skip(&field.schema)));
            continue;
        };
        match fields.iter().position(|f| f.id == id) {
            Some(i) if !seen[i] => {
                seen[i] = true;
                let child_path = if path.is_empty() {
                    fields[i].name.clone()
                } else {
                    format!("{path}.{}", fields[i].name)
                };
                nodes.push(compile_node(&field.schema, &fields[i].slot, &child_path)?);
            }
            _ => nodes.push(Node::Skip(compile_skip(&field.schema))),
        }
    }
    for (i, f) in fields.iter().enumerate() {
        if !seen[i] {
            nodes.push(Node::Missing(f.slot.clone()));
        }
    }
    Ok(Node::Record {
        fields: nodes,
        nulls,
    })
}

fn compile_primitive(writer: &Schema, ty: PrimitiveType, col: usize, path: &str) -> Result<Node> {
    use PrimitiveType as P;
    let millis = |logical: &Option<String>| logical.as_deref() == Some("timestamp-millis");
    Ok(match (ty, writer) {
        (P::Boolean, Schema::Boolean) => Node::Bool(col),
        (P::Int | P::Date, Schema::Int { .. }) => Node::Int(col),
        (P::Int | P::Date, Schema::Long { .. }) => Node::LongToInt {
            col,
            path: path.into(),
        },
        (P::Long, Schema::Int { .. }) => Node::IntToLong(col),
        // Java's reader scales `timestamp-millis`; the other logical types
        // of a long it reads as they are, and so do we.
        (P::Timestamp | P::Timestamptz, Schema::Long { logical }) if millis(logical) => {
            Node::ScaledLong {
                col,
                factor: 1_000,
                path: path.into(),
            }
        }
        (P::TimestampNs | P::TimestamptzNs, Schema::Long { logical }) if millis(logical) => {
            Node::ScaledLong {
                col,
                factor: 1_000_000,
                path: path.into(),
            }
        }
        (
            P::Long | P::Time | P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs,
            Schema::Long { .. },
        ) => Node::Long(col),
        (P::Float, Schema::Float) => Node::Float(col),
        (P::Double, Schema::Float) => Node::FloatToDouble(col),
        (P::Double, Schema::Double) => Node::Double(col),
        (P::String | P::Binary, Schema::String { .. } | Schema::Bytes { .. }) => Node::Bytes(col),
        (P::Uuid, Schema::Fixed { size: 16, .. }) => Node::Fixed { size: 16, col },
        (P::Fixed(n), Schema::Fixed { size, .. }) if n as usize == *size => {
            Node::Fixed { size: *size, col }
        }
        (P::Decimal { .. }, Schema::Fixed { size, .. }) if *size <= 16 => {
            Node::DecimalFixed { size: *size, col }
        }
        (P::Decimal { .. }, Schema::Bytes { .. }) => Node::DecimalBytes(col),
        _ => return Err(mismatch(path, writer, &ty)),
    })
}

/// Sign-extends a big-endian two's-complement integer of up to 16 bytes.
#[inline]
fn decimal_from_be(bytes: &[u8]) -> Result<i128> {
    if bytes.len() > 16 {
        return Err(Error::InvalidData(format!(
            "decimal of {} bytes exceeds 16",
            bytes.len()
        )));
    }
    let mut buf = if bytes.first().is_some_and(|b| b & 0x80 != 0) {
        [0xffu8; 16]
    } else {
        [0u8; 16]
    };
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(buf))
}

/// Runs one node. The arms every manifest entry passes through many times
/// (ints, longs, strings, optionals, records) stay here; the rest live in
/// functions that are not inlined, which keeps this function's stack frame
/// and register saves small: it is entered dozens of times per entry.
fn exec(node: &Node, c: &mut Cursor, b: &mut Builders) -> Result<()> {
    match node {
        Node::Int(col) => {
            let v = c.read_int()?;
            b.i32s[*col].push(v);
        }
        Node::Long(col) => {
            let v = c.read_long()?;
            b.i64s[*col].push(v);
        }
        Node::Bytes(col) => {
            let v = c.read_bytes()?;
            b.bins[*col].push(v)?;
        }
        Node::Optional {
            null_index,
            inner,
            slot,
        } => {
            let branch = c.read_long()?;
            if branch == *null_index {
                b.push_null(slot);
            } else if branch == 1 - *null_index {
                exec(inner, c, b)?;
            } else {
                return Err(invalid_branch(branch));
            }
        }
        Node::Record { fields, nulls } => {
            for f in fields {
                exec(f, c, b)?;
            }
            if let Some(n) = nulls {
                b.structs[*n].append_non_null();
            }
        }
        Node::IntMap {
            col,
            key,
            value,
            keep,
        } => exec_int_map(*col, *key, *value, keep.as_deref(), c, b)?,
        Node::Skip(s) => skip(s, c)?,
        other => exec_other(other, c, b)?,
    }
    Ok(())
}

#[cold]
fn invalid_branch(branch: i64) -> Error {
    Error::InvalidData(format!("invalid Avro union branch {branch}"))
}

#[inline(never)]
fn exec_int_map(
    col: usize,
    key: usize,
    value: MapValue,
    keep: Option<&KeySet>,
    c: &mut Cursor,
    b: &mut Builders,
) -> Result<()> {
    let mut total = 0usize;
    loop {
        let (count, _) = c.read_block_count()?;
        if count == 0 {
            break;
        }
        check_items(c, count)?;
        total += match keep {
            None => {
                int_map_block(count, key, value, c, b)?;
                count
            }
            Some(keys) => int_map_block_keeping(count, key, value, keys, c, b)?,
        };
    }
    b.lists[col].push(total)
}

/// One block of an int-keyed map, keeping the entries whose key `keys`
/// holds and skipping the others' values; returns how many were kept.
fn int_map_block_keeping(
    count: usize,
    key: usize,
    value: MapValue,
    keys: &KeySet,
    c: &mut Cursor,
    b: &mut Builders,
) -> Result<usize> {
    let mut kept = 0;
    for _ in 0..count {
        let k = c.read_int()?;
        if keys.contains(k) {
            b.i32s[key].values.push(k);
            b.i32s[key].nulls.append_non_null();
            int_map_value(value, c, b)?;
            kept += 1;
        } else {
            skip_int_map_value(value, c)?;
        }
    }
    Ok(kept)
}

fn skip_int_map_value(value: MapValue, c: &mut Cursor) -> Result<()> {
    let present = |null_index: i64, c: &mut Cursor| -> Result<bool> {
        let branch = c.read_long()?;
        if branch == null_index {
            Ok(false)
        } else if branch == 1 - null_index {
            Ok(true)
        } else {
            Err(invalid_branch(branch))
        }
    };
    match value {
        MapValue::Long(_) => c.skip_long(),
        MapValue::Bytes(_) => c.read_bytes().map(|_| ()),
        MapValue::OptLong(n, _) => {
            if present(n, c)? {
                c.skip_long()?;
            }
            Ok(())
        }
        MapValue::OptBytes(n, _) => {
            if present(n, c)? {
                c.read_bytes()?;
            }
            Ok(())
        }
    }
}

#[inline(never)]
fn exec_other(node: &Node, c: &mut Cursor, b: &mut Builders) -> Result<()> {
    match node {
        Node::Int(_)
        | Node::Long(_)
        | Node::Bytes(_)
        | Node::Optional { .. }
        | Node::Record { .. }
        | Node::IntMap { .. }
        | Node::Skip(_) => exec(node, c, b)?,
        Node::Array { col, item } => {
            let mut total = 0usize;
            loop {
                let (count, _) = c.read_block_count()?;
                if count == 0 {
                    break;
                }
                check_items(c, count)?;
                for _ in 0..count {
                    exec(item, c, b)?;
                }
                total += count;
            }
            b.lists[*col].push(total)?;
        }
        Node::Missing(slot) => b.push_null(slot),
        Node::Bool(col) => {
            let v = c.read_bool()?;
            let (values, nulls) = &mut b.bools[*col];
            values.append(v);
            nulls.append_non_null();
        }
        Node::IntToLong(col) => {
            let v = c.read_int()?;
            b.i64s[*col].push(i64::from(v));
        }
        Node::LongToInt { col, path } => {
            let v = c.read_long()?;
            let narrowed = i32::try_from(v).map_err(|_| {
                Error::InvalidData(format!(
                    "field {path}: Avro long {v} does not fit the Iceberg int it is read as"
                ))
            })?;
            b.i32s[*col].push(narrowed);
        }
        Node::ScaledLong { col, factor, path } => {
            let v = c.read_long()?;
            let scaled = v.checked_mul(*factor).ok_or_else(|| {
                Error::InvalidData(format!(
                    "field {path}: timestamp-millis {v} overflows a long when read as \
                     {}",
                    if *factor == 1_000 {
                        "microseconds"
                    } else {
                        "nanoseconds"
                    }
                ))
            })?;
            b.i64s[*col].push(scaled);
        }
        Node::Union(branches) => {
            let branch = c.read_long()?;
            let node = usize::try_from(branch)
                .ok()
                .and_then(|i| branches.get(i))
                .ok_or_else(|| invalid_branch(branch))?;
            exec(node, c, b)?;
        }
        Node::Float(col) => {
            let v = c.read_f32()?;
            b.f32s[*col].push(v);
        }
        Node::FloatToDouble(col) => {
            let v = c.read_f32()?;
            b.f64s[*col].push(f64::from(v));
        }
        Node::Double(col) => {
            let v = c.read_f64()?;
            b.f64s[*col].push(v);
        }
        Node::Fixed { size, col } => {
            let v = c.read_fixed(*size)?;
            let f = &mut b.fixeds[*col];
            f.data.extend_from_slice(v);
            f.nulls.append_non_null();
        }
        Node::DecimalFixed { size, col } => {
            let v = decimal_from_be(c.read_fixed(*size)?)?;
            b.i128s[*col].push(v);
        }
        Node::DecimalBytes(col) => {
            let v = decimal_from_be(c.read_bytes()?)?;
            b.i128s[*col].push(v);
        }
        Node::StringMap { col, key, value } => {
            let mut total = 0usize;
            loop {
                let (count, _) = c.read_block_count()?;
                if count == 0 {
                    break;
                }
                check_items(c, count)?;
                for _ in 0..count {
                    let k = c.read_bytes()?;
                    b.bins[*key].push(k)?;
                    exec(value, c, b)?;
                }
                total += count;
            }
            b.lists[*col].push(total)?;
        }
    }
    Ok(())
}

/// One block of `count` entries of an int-keyed map. The metrics maps are
/// most of a manifest entry, so the common value types get loops that
/// reserve room once and mark the (required) keys and values valid in bulk.
/// On an error the whole decode fails, so a half-filled block is harmless.
#[inline(always)]
fn int_map_block(
    count: usize,
    key: usize,
    value: MapValue,
    c: &mut Cursor,
    b: &mut Builders,
) -> Result<()> {
    let keys = &mut b.i32s[key];
    keys.values.reserve(count);
    match value {
        MapValue::Long(col) => {
            let values = &mut b.i64s[col];
            values.values.reserve(count);
            for _ in 0..count {
                keys.values.push(c.read_int()?);
                values.values.push(c.read_long()?);
            }
            values.nulls.append_n_non_nulls(count);
        }
        MapValue::Bytes(col) => {
            let values = &mut b.bins[col];
            values.offsets.reserve(count);
            for _ in 0..count {
                keys.values.push(c.read_int()?);
                append_bound(&mut values.data, c.read_bytes()?);
                values.offsets.push(values.data.len() as i32);
            }
            // The data only grows: when its final length fits, so did
            // every offset written above.
            i32::try_from(values.data.len())
                .map_err(|_| Error::InvalidData("binary column larger than 2 GiB".to_owned()))?;
            values.nulls.append_n_non_nulls(count);
        }
        _ => {
            for _ in 0..count {
                let k = c.read_int()?;
                b.i32s[key].values.push(k);
                int_map_value(value, c, b)?;
            }
        }
    }
    b.i32s[key].nulls.append_n_non_nulls(count);
    Ok(())
}

/// Appends a map value's bytes. Bounds are mostly 8 bytes (long, double,
/// timestamps) or 4 (int, date, float): copies of a known width compile to
/// one load and store instead of a call to memcpy.
#[inline(always)]
fn append_bound(data: &mut Vec<u8>, value: &[u8]) {
    if let Ok(word) = <[u8; 8]>::try_from(value) {
        data.extend_from_slice(&word);
    } else if let Ok(half) = <[u8; 4]>::try_from(value) {
        data.extend_from_slice(&half);
    } else {
        data.extend_from_slice(value);
    }
}

#[inline(always)]
fn int_map_value(value: MapValue, c: &mut Cursor, b: &mut Builders) -> Result<()> {
    let present = |null_index: i64, c: &mut Cursor| -> Result<bool> {
        let branch = c.read_long()?;
        if branch == null_index {
            Ok(false)
        } else if branch == 1 - null_index {
            Ok(true)
        } else {
            Err(Error::InvalidData(format!(
                "invalid Avro union branch {branch}"
            )))
        }
    };
    match value {
        MapValue::Long(col) => {
            let v = c.read_long()?;
            b.i64s[col].push(v);
        }
        MapValue::Bytes(col) => {
            let v = c.read_bytes()?;
            b.bins[col].push(v)?;
        }
        MapValue::OptLong(null_index, col) => {
            if present(null_index, c)? {
                let v = c.read_long()?;
                b.i64s[col].push(v);
            } else {
                b.i64s[col].push_null();
            }
        }
        MapValue::OptBytes(null_index, col) => {
            if present(null_index, c)? {
                let v = c.read_bytes()?;
                b.bins[col].push(v)?;
            } else {
                b.bins[col].push_null();
            }
        }
    }
    Ok(())
}

/// Items of Iceberg arrays and maps take at least one byte each: a larger
/// count than the bytes left is corruption.
#[inline(always)]
fn check_items(c: &Cursor, count: usize) -> Result<()> {
    if count > c.remaining() {
        return Err(Error::InvalidData(format!(
            "Avro array claims {count} items, more than its bytes"
        )));
    }
    Ok(())
}

fn skip(s: &Skip, c: &mut Cursor) -> Result<()> {
    match s {
        Skip::Nothing => {}
        Skip::Bytes1 => c.skip(1)?,
        Skip::Varint => c.skip_long()?,
        Skip::Fixed(n) => c.skip(*n)?,
        Skip::Bytes => {
            c.read_bytes()?;
        }
        Skip::Record(fields) => {
            for f in fields {
                skip(f, c)?;
            }
        }
        Skip::VarintArray(per_item) => loop {
            let (count, size) = c.read_block_count()?;
            if count == 0 {
                break;
            }
            if let Some(size) = size {
                c.skip(size)?;
                continue;
            }
            check_items(c, count)?;
            c.skip_longs(count.saturating_mul(*per_item))?;
        },
        Skip::VarintBytesArray => loop {
            let (count, size) = c.read_block_count()?;
            if count == 0 {
                break;
            }
            if let Some(size) = size {
                c.skip(size)?;
                continue;
            }
            check_items(c, count)?;
            for _ in 0..count {
                c.skip_long()?;
                c.read_bytes()?;
            }
        },
        Skip::Array(item) | Skip::Map(item) => loop {
            let (count, size) = c.read_block_count()?;
            if count == 0 {
                break;
            }
            if let Some(size) = size {
                c.skip(size)?;
                continue;
            }
            check_items(c, count)?;
            for _ in 0..count {
                if matches!(s, Skip::Map(_)) {
                    c.read_bytes()?;
                }
                skip(item, c)?;
            }
        },
        Skip::Union(branches) => {
            let branch = c.read_long()?;
            let chosen = usize::try_from(branch)
                .ok()
                .and_then(|i| branches.get(i))
                .ok_or_else(|| Error::InvalidData(format!("invalid Avro union branch {branch}")))?;
            skip(chosen, c)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        Int32Type, Int64Type, TimestampMicrosecondType, TimestampNanosecondType,
    };

    use super::*;
    use crate::avro::binary::write_long;
    use crate::types::NestedField;

    fn decode(writer: &str, read: Vec<NestedField>, rows: &[Vec<i64>]) -> Result<StructArray> {
        let plan = Plan::compile(&Schema::parse(writer)?, &Type::Struct(read))?;
        let mut data = Vec::new();
        for row in rows {
            for v in row {
                write_long(&mut data, *v);
            }
        }
        let mut builders = plan.builders();
        plan.decode_block(&data, rows.len(), &mut builders)?;
        plan.finish(&mut builders)
    }

    fn record(fields: &str) -> String {
        format!(r#"{{"type":"record","name":"r","fields":[{fields}]}}"#)
    }

    fn int(id: i32, name: &str) -> NestedField {
        NestedField::optional(id, name, Type::Primitive(PrimitiveType::Int))
    }

    #[test]
    fn longs_read_as_ints_when_they_fit() {
        let writer = record(r#"{"name":"a","type":"long","field-id":1}"#);
        let array = decode(&writer, vec![int(1, "a")], &[vec![5], vec![-(1 << 31)]]).unwrap();
        let a = array.column(0).as_primitive::<Int32Type>();
        assert_eq!(a.values().to_vec(), vec![5, i32::MIN]);
        let err = decode(&writer, vec![int(1, "a")], &[vec![1 << 31]]).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidData(m) if m.contains("field a") && m.contains("2147483648")),
            "{err:?}"
        );
    }

    #[test]
    fn unions_in_any_shape() {
        // [T, "null"]: the null branch last; ["null", "int", "long"]; ["long"].
        let writer = record(
            r#"{"name":"a","type":["long","null"],"field-id":1},
               {"name":"b","type":["null","int","long"],"field-id":2},
               {"name":"c","type":["long"],"field-id":3}"#,
        );
        let read = vec![
            NestedField::optional(1, "a", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "b", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(3, "c", Type::Primitive(PrimitiveType::Int)),
        ];
        let rows = [vec![0, 7, 1, 9, 0, 4], vec![1, 2, 1 << 40, 0, -4]];
        let array = decode(&writer, read.clone(), &rows).unwrap();
        let a = array.column(0).as_primitive::<Int64Type>();
        assert_eq!((a.value(0), a.is_null(1)), (7, true));
        let b = array.column(1).as_primitive::<Int64Type>();
        assert_eq!((b.value(0), b.value(1)), (9, 1 << 40));
        let c = array.column(2).as_primitive::<Int32Type>();
        assert_eq!(c.values().to_vec(), vec![4, -4]);
        let bad = decode(&writer, read, &[vec![2, 0, 0, 0, 0]]).unwrap_err();
        assert!(
            matches!(&bad, Error::InvalidData(m) if m.contains("branch 2")),
            "{bad:?}"
        );
    }

    #[test]
    fn avro_null_reads_as_nulls_of_any_type() {
        // Java writes `unknown` as a bare "null"; v3 may promote it to any type.
        let writer = record(
            r#"{"name":"u","type":"null","field-id":1},{"name":"x","type":"int","field-id":2}"#,
        );
        let array = decode(&writer, vec![int(1, "u"), int(2, "x")], &[vec![3]]).unwrap();
        assert!(array.column(0).is_null(0));
        assert_eq!(array.column(1).as_primitive::<Int32Type>().value(0), 3);
    }

    #[test]
    fn timestamp_millis_scale_to_the_read_unit() {
        let writer = record(
            r#"{"name":"t","type":{"type":"long","logicalType":"timestamp-millis"},"field-id":1},
               {"name":"n","type":{"type":"long","logicalType":"timestamp-millis"},"field-id":2}"#,
        );
        let read = vec![
            NestedField::optional(1, "t", Type::Primitive(PrimitiveType::Timestamptz)),
            NestedField::optional(2, "n", Type::Primitive(PrimitiveType::TimestampNs)),
        ];
        let array = decode(&writer, read.clone(), &[vec![-1, 1500]]).unwrap();
        let micros = array.column(0).as_primitive::<TimestampMicrosecondType>();
        assert_eq!(micros.value(0), -1000);
        let nanos = array.column(1).as_primitive::<TimestampNanosecondType>();
        assert_eq!(nanos.value(0), 1_500_000_000);
        let err = decode(&writer, read, &[vec![0, i64::MAX / 1000]]).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidData(m) if m.contains("field n")),
            "{err:?}"
        );
    }

    #[test]
    fn fields_without_ids_are_skipped_unless_none_has_one() {
        let writer =
            record(r#"{"name":"note","type":"string"},{"name":"a","type":"int","field-id":1}"#);
        let mut data = Vec::new();
        crate::avro::binary::write_bytes(&mut data, b"hi");
        write_long(&mut data, 6);
        let plan = Plan::compile(
            &Schema::parse(&writer).unwrap(),
            &Type::Struct(vec![int(1, "a")]),
        )
        .unwrap();
        let mut builders = plan.builders();
        plan.decode_block(&data, 1, &mut builders).unwrap();
        let array = plan.finish(&mut builders).unwrap();
        assert_eq!(array.column(0).as_primitive::<Int32Type>().value(0), 6);
        let none = record(r#"{"name":"a","type":"int"}"#);
        let err = Plan::compile(
            &Schema::parse(&none).unwrap(),
            &Type::Struct(vec![int(1, "a")]),
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::InvalidData(m) if m.contains("field-id")),
            "{err:?}"
        );
    }
}
