//! Lower and upper bounds (spec: "Manifests" `lower_bounds` /
//! `upper_bounds`, "Manifest Lists" field summaries; Appendix D binary
//! single values) read in place: a column of bounds is the positions of one
//! column's entries in a map's binary values, compared without copying.
//!
//! Widths are checked once, when the column is made, and a bound of the
//! wrong width is an error naming its row (no silent fallback). Accepted:
//! - the type's own width; decimals of 1 to 16 bytes (minimum-length
//!   big-endian two's complement);
//! - the width of a type the column was promoted from (spec: "Schema
//!   Evolution"; pitfalls: iceberg #2232): 4 bytes for a `long` (int), a
//!   `double` (float) or a timestamp (v3: a date, read as midnight).
//!
//! A NaN bound (the spec forbids them; old ORC writers wrote them) is no
//! bound. Zeros keep their sign as written: -0.0 precedes +0.0 (spec:
//! "Manifests", note 2), and Java prunes on them as written, so frazil
//! plans the files Java plans.

use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, PrimitiveArray};
use arrow_buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use arrow_schema::DataType;

use super::compare::{Column, RawBounds, RawKind};
use super::metrics::NO_ENTRY;
use crate::avro::columns::primitive_data_type;
use crate::error::Error;
use crate::types::PrimitiveType;
use crate::values::MICROS_PER_DAY;

/// Which bound a column of bounds holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Lower,
    Upper,
}

/// One unreadable bound: the row and what is wrong with it.
#[derive(Debug)]
pub(crate) struct BadBound {
    pub row: usize,
    pub error: Error,
}

/// How bounds of a type decode (None: never a value), their Arrow type,
/// which widths are allowed, and those widths for error messages.
type Layout = (Option<RawKind>, DataType, fn(usize) -> bool, &'static str);

/// The [`Layout`] of bounds of `ty` (the same on either side).
fn layout(ty: PrimitiveType) -> Layout {
    use PrimitiveType as P;
    let int = |per_day| Some(RawKind::Int { per_day });
    let float = Some(RawKind::Float);
    let dt = primitive_data_type(ty);
    match ty {
        P::Boolean => (Some(RawKind::Bool), dt, |n| n == 1, "1"),
        P::Int | P::Date => (int(1), dt, |n| n == 4, "4"),
        P::Long => (
            int(1),
            dt,
            |n| n == 4 || n == 8,
            "8 (or 4, written as an int)",
        ),
        P::Time => (int(1), dt, |n| n == 8, "8"),
        P::Timestamp | P::Timestamptz => (
            int(MICROS_PER_DAY),
            dt,
            |n| n == 4 || n == 8,
            "8 (or 4, written as a date)",
        ),
        P::TimestampNs | P::TimestamptzNs => (
            int(MICROS_PER_DAY * 1000),
            dt,
            |n| n == 4 || n == 8,
            "8 (or 4, written as a date)",
        ),
        P::Float => (float, dt, |n| n == 4, "4"),
        P::Double => (
            float,
            dt,
            |n| n == 4 || n == 8,
            "8 (or 4, written as a float)",
        ),
        P::Decimal { .. } => (
            Some(RawKind::Decimal),
            dt,
            |n| (1..=16).contains(&n),
            "1 to 16",
        ),
        P::String | P::Binary => (Some(RawKind::Bytes), DataType::Binary, |_| true, "any"),
        P::Uuid => (Some(RawKind::Bytes), DataType::Binary, |n| n == 16, "16"),
        P::Fixed(_) => (
            Some(RawKind::Bytes),
            DataType::Binary,
            |_| true,
            "the fixed length",
        ),
        P::Unknown => (None, DataType::Null, |_| true, "none"),
    }
}

/// The bounds at `positions` (one per row, or [`NO_ENTRY`]) of `values`,
/// of a column of type `ty`, as a column read in place.
pub(crate) fn bound_column<'a>(
    values: &'a BinaryArray,
    positions: &'a [u32],
    ty: PrimitiveType,
    side: Side,
) -> Result<Column<'a>, BadBound> {
    let raw = RawBounds {
        positions,
        offsets: values.value_offsets(),
        data: values.value_data(),
    };
    let (kind, data_type, width_ok, expected) = layout(ty);
    let floating = ty.is_floating();
    let fixed_length = match ty {
        PrimitiveType::Fixed(n) => usize::try_from(n).ok(),
        _ => None,
    };
    let nulls = values.nulls().filter(|b| b.null_count() > 0);
    let mut bad = None;
    let valid = BooleanBuffer::collect_bool(positions.len(), |row| {
        let p = positions[row];
        if p == NO_ENTRY || kind.is_none() || nulls.is_some_and(|b| b.is_null(p as usize)) {
            return false;
        }
        let b = raw.get(row);
        if !width_ok(b.len()) || fixed_length.is_some_and(|n| n != b.len()) {
            bad = bad.or(Some((row, b.len())));
            return false;
        }
        // NaN is never a bound.
        !match b.len() {
            4 if floating => f32::from_le_bytes(b.try_into().unwrap_or_default()).is_nan(),
            8 if floating => f64::from_le_bytes(b.try_into().unwrap_or_default()).is_nan(),
            _ => false,
        }
    });
    if let Some((row, len)) = bad {
        return Err(BadBound {
            row,
            error: Error::InvalidData(format!(
                "the {} bound of a {ty} column has {len} bytes, expected {expected}",
                match side {
                    Side::Lower => "lower",
                    Side::Upper => "upper",
                },
            )),
        });
    }
    Ok(Column::raw(raw, kind, data_type, valid))
}

/// The bounds as an Arrow array of `ty`'s type (strings, UUIDs and fixed
/// as binary): for transforming them.
pub(crate) fn to_array(column: &Column<'_>, ty: PrimitiveType) -> ArrayRef {
    use PrimitiveType as P;
    let n = column.len();
    let nulls = NullBuffer::new(column.valid().clone());
    fn primitive<T: ArrowPrimitiveType>(
        n: usize,
        nulls: &NullBuffer,
        ty: PrimitiveType,
        value: impl Fn(usize) -> T::Native,
    ) -> ArrayRef {
        let values: ScalarBuffer<T::Native> = (0..n).map(value).collect();
        Arc::new(
            PrimitiveArray::<T>::new(values, Some(nulls.clone()))
                .with_data_type(primitive_data_type(ty)),
        )
    }
    match ty {
        P::Boolean => Arc::new(BooleanArray::new(
            BooleanBuffer::collect_bool(n, |i| column.bool_at(i)),
            Some(nulls),
        )),
        P::Int => primitive::<Int32Type>(n, &nulls, ty, |i| column.int_at(i) as i32),
        P::Date => primitive::<Date32Type>(n, &nulls, ty, |i| column.int_at(i) as i32),
        P::Long => primitive::<Int64Type>(n, &nulls, ty, |i| column.int_at(i)),
        P::Time => primitive::<Time64MicrosecondType>(n, &nulls, ty, |i| column.int_at(i)),
        P::Timestamp | P::Timestamptz => {
            primitive::<TimestampMicrosecondType>(n, &nulls, ty, |i| column.int_at(i))
        }
        P::TimestampNs | P::TimestamptzNs => {
            primitive::<TimestampNanosecondType>(n, &nulls, ty, |i| column.int_at(i))
        }
        P::Float => primitive::<Float32Type>(n, &nulls, ty, |i| column.float_at(i) as f32),
        P::Double => primitive::<Float64Type>(n, &nulls, ty, |i| column.float_at(i)),
        P::Decimal { .. } => primitive::<Decimal128Type>(n, &nulls, ty, |i| column.decimal_at(i)),
        P::String | P::Binary | P::Uuid | P::Fixed(_) => {
            let mut b = BinaryBuilder::new();
            for i in 0..n {
                if column.valid().value(i) {
                    b.append_value(column.bytes(i));
                } else {
                    b.append_null();
                }
            }
            Arc::new(b.finish())
        }
        P::Unknown => Arc::new(arrow_array::NullArray::new(n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::predicate::Op;
    use crate::expr::visitors::compare::be_i128;
    use crate::values::Literal;

    fn column_of(
        bytes: &[Option<&[u8]>],
        ty: PrimitiveType,
        side: Side,
    ) -> Result<Vec<bool>, BadBound> {
        let values = BinaryArray::from(bytes.to_vec());
        let positions: Vec<u32> = (0..bytes.len() as u32).collect();
        let c = bound_column(&values, &positions, ty, side)?;
        Ok(c.valid().iter().collect())
    }

    #[test]
    fn widths_are_checked_and_promotions_read() {
        let four: &[u8] = &[1, 0, 0, 0];
        let eight: &[u8] = &[1, 0, 0, 0, 0, 0, 0, 0];
        assert!(column_of(&[Some(four)], PrimitiveType::Int, Side::Lower).is_ok());
        assert!(column_of(&[Some(eight)], PrimitiveType::Int, Side::Lower).is_err());
        assert!(column_of(&[Some(four), Some(eight)], PrimitiveType::Long, Side::Lower).is_ok());
        assert!(column_of(&[Some(&[1, 2])], PrimitiveType::Long, Side::Lower).is_err());
        assert!(column_of(
            &[Some(&[0; 17])],
            PrimitiveType::Decimal {
                precision: 38,
                scale: 0
            },
            Side::Lower
        )
        .is_err());
        assert!(column_of(&[Some(&[0; 15])], PrimitiveType::Uuid, Side::Lower).is_err());
        assert!(column_of(&[Some(&[0; 3])], PrimitiveType::Fixed(4), Side::Lower).is_err());
        let err = column_of(
            &[Some(four), Some(&[1, 2, 3])],
            PrimitiveType::Date,
            Side::Upper,
        )
        .unwrap_err();
        assert_eq!(err.row, 1);
        // A null or missing bound, and a NaN one, are no bound.
        let nan = f64::NAN.to_le_bytes();
        assert_eq!(
            column_of(
                &[None, Some(&nan), Some(&2.0f64.to_le_bytes())],
                PrimitiveType::Double,
                Side::Lower
            )
            .unwrap(),
            [false, false, true]
        );
    }

    #[test]
    fn values_decode_in_place() {
        let values = BinaryArray::from(vec![
            &(-2i32).to_le_bytes()[..],
            &7i64.to_le_bytes()[..],
            &[0x80][..],
            &[0x00, 0x80][..],
            &0.0f32.to_le_bytes()[..],
        ]);
        let at = |p: u32| vec![p];
        let p0 = at(0);
        let c = bound_column(&values, &p0, PrimitiveType::Timestamp, Side::Lower).unwrap();
        // 4 bytes on a timestamp: days of a date, midnight.
        assert!(c
            .compare(Op::Eq, &Literal::Timestamp(-2 * MICROS_PER_DAY))
            .unwrap()
            .value(0));
        let p1 = at(1);
        let c = bound_column(&values, &p1, PrimitiveType::Long, Side::Lower).unwrap();
        assert!(c.compare(Op::Eq, &Literal::Long(7)).unwrap().value(0));
        let d = PrimitiveType::Decimal {
            precision: 9,
            scale: 2,
        };
        let p2 = at(2);
        let c = bound_column(&values, &p2, d, Side::Lower).unwrap();
        assert!(c.compare(Op::Eq, &Literal::Decimal(-128)).unwrap().value(0));
        let p3 = at(3);
        let c = bound_column(&values, &p3, d, Side::Lower).unwrap();
        assert!(c.compare(Op::Eq, &Literal::Decimal(128)).unwrap().value(0));
        // Zero keeps its sign: a +0.0 bound is not -0.0.
        let p4 = at(4);
        let lower = bound_column(&values, &p4, PrimitiveType::Double, Side::Lower).unwrap();
        assert!(!lower
            .compare(Op::Eq, &Literal::Double(-0.0))
            .unwrap()
            .value(0));
        let upper = bound_column(&values, &p4, PrimitiveType::Double, Side::Upper).unwrap();
        assert!(upper
            .compare(Op::Eq, &Literal::Double(0.0))
            .unwrap()
            .value(0));
        let array = to_array(&upper, PrimitiveType::Double);
        assert_eq!(array.data_type(), &DataType::Float64);
        assert_eq!(be_i128(&[0xff, 0x7f]), -129);
    }
}
