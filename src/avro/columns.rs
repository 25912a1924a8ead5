//! Growable Arrow columns that the decode plan writes into, and the slot tree
//! that maps an Iceberg read type onto them.
//!
//! Columns live in typed arenas (`Builders`); a slot names one arena entry.
//! Finishing turns the arenas into Arrow arrays without copying the buffers.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int32Array, Int64Array, ListArray, MapArray, NullArray,
    StringArray, StructArray, Time64MicrosecondArray, TimestampMicrosecondArray,
    TimestampNanosecondArray,
};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, TimeUnit};

use crate::error::{Error, Result};
use crate::types::{NestedField, PrimitiveType, Type};

/// Values plus validity of one primitive column.
pub struct PrimCol<T> {
    pub values: Vec<T>,
    pub nulls: NullBufferBuilder,
}

impl<T: Default> PrimCol<T> {
    fn new() -> Self {
        PrimCol {
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }
    #[inline(always)]
    pub fn push(&mut self, v: T) {
        self.values.push(v);
        self.nulls.append_non_null();
    }
    #[inline(always)]
    pub fn push_null(&mut self) {
        self.values.push(T::default());
        self.nulls.append_null();
    }
}

/// Variable-length binary or string values.
pub struct BinCol {
    pub offsets: Vec<i32>,
    pub data: Vec<u8>,
    pub nulls: NullBufferBuilder,
}

impl BinCol {
    fn new() -> Self {
        BinCol {
            offsets: vec![0],
            data: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }
    #[inline(always)]
    pub fn push(&mut self, v: &[u8]) -> Result<()> {
        self.data.extend_from_slice(v);
        let end = i32::try_from(self.data.len())
            .map_err(|_| Error::InvalidData("binary column larger than 2 GiB".to_owned()))?;
        self.offsets.push(end);
        self.nulls.append_non_null();
        Ok(())
    }
    #[inline(always)]
    pub fn push_null(&mut self) {
        let last = self.offsets.last().copied().unwrap_or(0);
        self.offsets.push(last);
        self.nulls.append_null();
    }
}

/// Fixed-size binary values.
pub struct FixedCol {
    pub size: usize,
    pub data: Vec<u8>,
    pub nulls: NullBufferBuilder,
}

/// Offsets (and validity) of a list or map column; its children are other slots.
pub struct ListCol {
    pub offsets: Vec<i32>,
    pub nulls: NullBufferBuilder,
    pub items: usize,
}

impl ListCol {
    #[inline(always)]
    pub fn push(&mut self, count: usize) -> Result<()> {
        self.items += count;
        let end = i32::try_from(self.items)
            .map_err(|_| Error::InvalidData("list column with more than 2^31 items".to_owned()))?;
        self.offsets.push(end);
        self.nulls.append_non_null();
        Ok(())
    }
    pub fn push_null(&mut self) {
        let last = self.offsets.last().copied().unwrap_or(0);
        self.offsets.push(last);
        self.nulls.append_null();
    }
}

/// All columns of one decode.
#[derive(Default)]
pub struct Builders {
    pub bools: Vec<(BooleanBufferBuilder, NullBufferBuilder)>,
    pub i32s: Vec<PrimCol<i32>>,
    pub i64s: Vec<PrimCol<i64>>,
    pub f32s: Vec<PrimCol<f32>>,
    pub f64s: Vec<PrimCol<f64>>,
    pub i128s: Vec<PrimCol<i128>>,
    pub bins: Vec<BinCol>,
    pub fixeds: Vec<FixedCol>,
    pub lists: Vec<ListCol>,
    pub structs: Vec<NullBufferBuilder>,
}

/// Where the values of one node of the read type go.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot {
    Prim {
        ty: PrimitiveType,
        col: usize,
    },
    Struct {
        nulls: usize,
        fields: Vec<SlotField>,
    },
    List {
        col: usize,
        element: Box<Slot>,
    },
    Map {
        col: usize,
        key: Box<Slot>,
        value: Box<Slot>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct SlotField {
    pub id: i32,
    pub name: String,
    pub slot: Slot,
}

/// The arena a primitive type's values are stored in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    Bool,
    I32,
    I64,
    F32,
    F64,
    I128,
    Bin,
    Fixed(usize),
}

pub fn storage(ty: PrimitiveType) -> Storage {
    match ty {
        PrimitiveType::Boolean => Storage::Bool,
        // `unknown` is always null: an int column whose values are never set.
        PrimitiveType::Int | PrimitiveType::Date | PrimitiveType::Unknown => Storage::I32,
        PrimitiveType::Long
        | PrimitiveType::Time
        | PrimitiveType::Timestamp
        | PrimitiveType::Timestamptz
        | PrimitiveType::TimestampNs
        | PrimitiveType::TimestamptzNs => Storage::I64,
        PrimitiveType::Float => Storage::F32,
        PrimitiveType::Double => Storage::F64,
        PrimitiveType::Decimal { .. } => Storage::I128,
        PrimitiveType::String | PrimitiveType::Binary => Storage::Bin,
        PrimitiveType::Uuid => Storage::Fixed(16),
        PrimitiveType::Fixed(n) => Storage::Fixed(n as usize),
    }
}

impl Builders {
    /// Allocates the columns of a read type and returns its slot tree.
    pub fn allocate(&mut self, ty: &Type) -> Slot {
        match ty {
            Type::Primitive(p) => {
                let col = match storage(*p) {
                    Storage::Bool => {
                        self.bools
                            .push((BooleanBufferBuilder::new(0), NullBufferBuilder::new(0)));
                        self.bools.len() - 1
                    }
                    Storage::I32 => push_len(&mut self.i32s, PrimCol::new()),
                    Storage::I64 => push_len(&mut self.i64s, PrimCol::new()),
                    Storage::F32 => push_len(&mut self.f32s, PrimCol::new()),
                    Storage::F64 => push_len(&mut self.f64s, PrimCol::new()),
                    Storage::I128 => push_len(&mut self.i128s, PrimCol::new()),
                    Storage::Bin => push_len(&mut self.bins, BinCol::new()),
                    Storage::Fixed(size) => push_len(
                        &mut self.fixeds,
                        FixedCol {
                            size,
                            data: Vec::new(),
                            nulls: NullBufferBuilder::new(0),
                        },
                    ),
                };
                Slot::Prim { ty: *p, col }
            }
            // Geometry and geography values are WKB bytes; a variant is never
            // part of a manifest (no transform but void accepts it), and its
            // bytes would be read, not interpreted.
            Type::Variant | Type::Geometry { .. } | Type::Geography { .. } => {
                self.allocate(&Type::Primitive(PrimitiveType::Binary))
            }
            Type::Struct(fields) => {
                let nulls = push_len(&mut self.structs, NullBufferBuilder::new(0));
                let fields = fields
                    .iter()
                    .map(|f| SlotField {
                        id: f.id,
                        name: f.name.clone(),
                        slot: self.allocate(&f.field_type),
                    })
                    .collect();
                Slot::Struct { nulls, fields }
            }
            Type::List { element, .. } => {
                let col = self.new_list();
                Slot::List {
                    col,
                    element: Box::new(self.allocate(element)),
                }
            }
            Type::Map { key, value, .. } => {
                let col = self.new_list();
                Slot::Map {
                    col,
                    key: Box::new(self.allocate(key)),
                    value: Box::new(self.allocate(value)),
                }
            }
        }
    }

    /// Room for `rows` more values in every column.
    pub fn reserve(&mut self, rows: usize) {
        for c in &mut self.i32s {
            c.values.reserve(rows);
        }
        for c in &mut self.i64s {
            c.values.reserve(rows);
        }
        for c in &mut self.bins {
            c.offsets.reserve(rows);
        }
        for c in &mut self.lists {
            c.offsets.reserve(rows);
        }
    }

    /// Room for the rest of `total` records once `done` are decoded, judged
    /// by each column's length so far: nested columns (the metrics maps'
    /// keys and values, the paths' bytes) otherwise grow by doubling, each
    /// step copying everything decoded before it.
    pub fn reserve_rest(&mut self, done: usize, total: usize) {
        if done == 0 || total <= done {
            return;
        }
        let rest = total - done;
        let more = |len: usize| len.saturating_mul(rest) / done;
        for c in &mut self.i32s {
            c.values.reserve(more(c.values.len()));
        }
        for c in &mut self.i64s {
            c.values.reserve(more(c.values.len()));
        }
        for c in &mut self.f32s {
            c.values.reserve(more(c.values.len()));
        }
        for c in &mut self.f64s {
            c.values.reserve(more(c.values.len()));
        }
        for c in &mut self.i128s {
            c.values.reserve(more(c.values.len()));
        }
        for c in &mut self.bins {
            c.offsets.reserve(more(c.offsets.len()));
            c.data.reserve(more(c.data.len()));
        }
        for c in &mut self.fixeds {
            c.data.reserve(more(c.data.len()));
        }
        for c in &mut self.lists {
            c.offsets.reserve(more(c.offsets.len()));
        }
    }

    fn new_list(&mut self) -> usize {
        push_len(
            &mut self.lists,
            ListCol {
                offsets: vec![0],
                nulls: NullBufferBuilder::new(0),
                items: 0,
            },
        )
    }

    /// Appends a null for `slot` (and placeholder values in its children, as
    /// Arrow's struct layout needs).
    pub fn push_null(&mut self, slot: &Slot) {
        match slot {
            Slot::Prim { ty, col } => match storage(*ty) {
                Storage::Bool => {
                    let (values, nulls) = &mut self.bools[*col];
                    values.append(false);
                    nulls.append_null();
                }
                Storage::I32 => self.i32s[*col].push_null(),
                Storage::I64 => self.i64s[*col].push_null(),
                Storage::F32 => self.f32s[*col].push_null(),
                Storage::F64 => self.f64s[*col].push_null(),
                Storage::I128 => self.i128s[*col].push_null(),
                Storage::Bin => self.bins[*col].push_null(),
                Storage::Fixed(size) => {
                    let c = &mut self.fixeds[*col];
                    c.data.resize(c.data.len() + size, 0);
                    c.nulls.append_null();
                }
            },
            Slot::Struct { nulls, fields } => {
                self.structs[*nulls].append_null();
                for f in fields {
                    self.push_null(&f.slot);
                }
            }
            Slot::List { col, .. } | Slot::Map { col, .. } => self.lists[*col].push_null(),
        }
    }

    /// Turns the columns of `slot` into an Arrow array.
    pub fn finish(&mut self, slot: &Slot) -> Result<ArrayRef> {
        let invalid = |e: arrow_schema::ArrowError| Error::InvalidData(e.to_string());
        Ok(match slot {
            Slot::Prim { ty, col } => {
                let col = *col;
                match ty {
                    PrimitiveType::Boolean => {
                        let (values, nulls) = &mut self.bools[col];
                        Arc::new(BooleanArray::new(values.finish(), nulls.finish()))
                    }
                    PrimitiveType::Int => {
                        let (v, n) = take_prim(&mut self.i32s[col]);
                        Arc::new(Int32Array::new(v, n))
                    }
                    PrimitiveType::Date => {
                        let (v, n) = take_prim(&mut self.i32s[col]);
                        Arc::new(Date32Array::new(v, n))
                    }
                    PrimitiveType::Long => {
                        let (v, n) = take_prim(&mut self.i64s[col]);
                        Arc::new(Int64Array::new(v, n))
                    }
                    PrimitiveType::Time => {
                        let (v, n) = take_prim(&mut self.i64s[col]);
                        Arc::new(Time64MicrosecondArray::new(v, n))
                    }
                    PrimitiveType::Timestamp => {
                        let (v, n) = take_prim(&mut self.i64s[col]);
                        Arc::new(TimestampMicrosecondArray::new(v, n))
                    }
                    PrimitiveType::Timestamptz => {
                        let (v, n) = take_prim(&mut self.i64s[col]);
                        Arc::new(TimestampMicrosecondArray::new(v, n).with_timezone("UTC"))
                    }
                    PrimitiveType::TimestampNs => {
                        let (v, n) = take_prim(&mut self.i64s[col]);
                        Arc::new(TimestampNanosecondArray::new(v, n))
                    }
                    PrimitiveType::TimestamptzNs => {
                        let (v, n) = take_prim(&mut self.i64s[col]);
                        Arc::new(TimestampNanosecondArray::new(v, n).with_timezone("UTC"))
                    }
                    PrimitiveType::Unknown => {
                        let (v, _) = take_prim(&mut self.i32s[col]);
                        Arc::new(NullArray::new(v.len()))
                    }
                    PrimitiveType::Float => {
                        let (v, n) = take_prim(&mut self.f32s[col]);
                        Arc::new(Float32Array::new(v, n))
                    }
                    PrimitiveType::Double => {
                        let (v, n) = take_prim(&mut self.f64s[col]);
                        Arc::new(Float64Array::new(v, n))
                    }
                    PrimitiveType::Decimal { precision, scale } => {
                        let (v, n) = take_prim(&mut self.i128s[col]);
                        let scale =
                            i8::try_from(*scale).map_err(|_| Error::Internal("scale".into()))?;
                        Arc::new(
                            Decimal128Array::try_new(v, n)
                                .and_then(|a| a.with_precision_and_scale(*precision as u8, scale))
                                .map_err(invalid)?,
                        )
                    }
                    PrimitiveType::String => {
                        let c = &mut self.bins[col];
                        let offsets =
                            OffsetBuffer::new(ScalarBuffer::from(std::mem::take(&mut c.offsets)));
                        c.offsets.push(0);
                        let data = Buffer::from_vec(std::mem::take(&mut c.data));
                        Arc::new(
                            StringArray::try_new(offsets, data, c.nulls.finish()).map_err(|e| {
                                Error::InvalidData(format!("string field is not valid UTF-8 ({e})"))
                            })?,
                        )
                    }
                    PrimitiveType::Binary => {
                        let c = &mut self.bins[col];
                        let offsets =
                            OffsetBuffer::new(ScalarBuffer::from(std::mem::take(&mut c.offsets)));
                        c.offsets.push(0);
                        let data = Buffer::from_vec(std::mem::take(&mut c.data));
                        Arc::new(
                            BinaryArray::try_new(offsets, data, c.nulls.finish())
                                .map_err(invalid)?,
                        )
                    }
                    PrimitiveType::Uuid | PrimitiveType::Fixed(_) => {
                        let c = &mut self.fixeds[col];
                        let size = i32::try_from(c.size)
                            .map_err(|_| Error::InvalidData("fixed size too large".to_owned()))?;
                        let data = Buffer::from_vec(std::mem::take(&mut c.data));
                        Arc::new(
                            FixedSizeBinaryArray::try_new(size, data, c.nulls.finish())
                                .map_err(invalid)?,
                        )
                    }
                }
            }
            Slot::Struct { nulls, fields } => {
                let arrays = fields
                    .iter()
                    .map(|f| self.finish(&f.slot))
                    .collect::<Result<Vec<_>>>()?;
                let arrow_fields = struct_fields(fields);
                let len = self.structs[*nulls].len();
                let nulls = self.structs[*nulls].finish();
                if arrays.is_empty() {
                    Arc::new(StructArray::new_empty_fields(len, nulls))
                } else {
                    Arc::new(StructArray::try_new(arrow_fields, arrays, nulls).map_err(invalid)?)
                }
            }
            Slot::List { col, element } => {
                let values = self.finish(element)?;
                let (offsets, nulls) = self.take_offsets(*col);
                let field = Arc::new(Field::new("item", data_type(element), true));
                Arc::new(ListArray::try_new(field, offsets, values, nulls).map_err(invalid)?)
            }
            Slot::Map { col, key, value } => {
                let keys = self.finish(key)?;
                let values = self.finish(value)?;
                let (offsets, nulls) = self.take_offsets(*col);
                let entry_fields = map_entry_fields(key, value);
                let entries = StructArray::try_new(entry_fields.clone(), vec![keys, values], None)
                    .map_err(invalid)?;
                let field = Arc::new(Field::new("entries", DataType::Struct(entry_fields), false));
                Arc::new(MapArray::try_new(field, offsets, entries, nulls, false).map_err(invalid)?)
            }
        })
    }

    fn take_offsets(
        &mut self,
        col: usize,
    ) -> (OffsetBuffer<i32>, Option<arrow_buffer::NullBuffer>) {
        let c = &mut self.lists[col];
        let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::take(&mut c.offsets)));
        c.offsets.push(0);
        c.items = 0;
        (offsets, c.nulls.finish())
    }

    /// The number of values in `slot` so far (rows for a top-level struct).
    pub fn len(&self, slot: &Slot) -> usize {
        match slot {
            Slot::Struct { nulls, .. } => self.structs[*nulls].len(),
            Slot::List { col, .. } | Slot::Map { col, .. } => self.lists[*col].offsets.len() - 1,
            Slot::Prim { ty, col } => match storage(*ty) {
                Storage::Bool => self.bools[*col].1.len(),
                Storage::I32 => self.i32s[*col].values.len(),
                Storage::I64 => self.i64s[*col].values.len(),
                Storage::F32 => self.f32s[*col].values.len(),
                Storage::F64 => self.f64s[*col].values.len(),
                Storage::I128 => self.i128s[*col].values.len(),
                Storage::Bin => self.bins[*col].offsets.len() - 1,
                Storage::Fixed(_) => self.fixeds[*col].nulls.len(),
            },
        }
    }
}

fn push_len<T>(v: &mut Vec<T>, item: T) -> usize {
    v.push(item);
    v.len() - 1
}

fn take_prim<T: arrow_buffer::ArrowNativeType>(
    c: &mut PrimCol<T>,
) -> (ScalarBuffer<T>, Option<arrow_buffer::NullBuffer>) {
    (
        ScalarBuffer::from(std::mem::take(&mut c.values)),
        c.nulls.finish(),
    )
}

/// The Arrow type of an Iceberg primitive type.
pub fn primitive_data_type(ty: PrimitiveType) -> DataType {
    match ty {
        PrimitiveType::Boolean => DataType::Boolean,
        PrimitiveType::Int => DataType::Int32,
        PrimitiveType::Long => DataType::Int64,
        PrimitiveType::Float => DataType::Float32,
        PrimitiveType::Double => DataType::Float64,
        PrimitiveType::Decimal { precision, scale } => {
            DataType::Decimal128(precision as u8, scale as i8)
        }
        PrimitiveType::Date => DataType::Date32,
        PrimitiveType::Time => DataType::Time64(TimeUnit::Microsecond),
        PrimitiveType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        PrimitiveType::Timestamptz => {
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        }
        PrimitiveType::TimestampNs => DataType::Timestamp(TimeUnit::Nanosecond, None),
        PrimitiveType::TimestamptzNs => {
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
        }
        PrimitiveType::Unknown => DataType::Null,
        PrimitiveType::String => DataType::Utf8,
        PrimitiveType::Uuid => DataType::FixedSizeBinary(16),
        PrimitiveType::Fixed(n) => DataType::FixedSizeBinary(n as i32),
        PrimitiveType::Binary => DataType::Binary,
    }
}

pub fn data_type(slot: &Slot) -> DataType {
    match slot {
        Slot::Prim { ty, .. } => primitive_data_type(*ty),
        Slot::Struct { fields, .. } => DataType::Struct(struct_fields(fields)),
        Slot::List { element, .. } => {
            DataType::List(Arc::new(Field::new("item", data_type(element), true)))
        }
        Slot::Map { key, value, .. } => DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(map_entry_fields(key, value)),
                false,
            )),
            false,
        ),
    }
}

pub fn struct_fields(fields: &[SlotField]) -> Fields {
    fields
        .iter()
        .map(|f| Field::new(f.name.clone(), data_type(&f.slot), true))
        .collect()
}

fn map_entry_fields(key: &Slot, value: &Slot) -> Fields {
    Fields::from(vec![
        Field::new("key", data_type(key), false),
        Field::new("value", data_type(value), true),
    ])
}

/// The Arrow type of an Iceberg type, as the decoder produces it.
pub fn arrow_type(ty: &Type) -> DataType {
    let mut scratch = Builders::default();
    data_type(&scratch.allocate(ty))
}

/// Looks up a struct field by id.
pub fn field_by_id(fields: &[NestedField], id: i32) -> Option<&NestedField> {
    fields.iter().find(|f| f.id == id)
}
