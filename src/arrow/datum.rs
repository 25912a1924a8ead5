//! One value of an Arrow column as an Iceberg [`Datum`], and a column from
//! datums. The Arrow types are those the manifest decoder gives each
//! Iceberg type ([`crate::avro::columns::primitive_data_type`]); strings and
//! binary are also read from their large and view layouts.
//!
//! Reading widens where the spec's type promotion does (an `int` column read
//! as `long`, `float` as `double`, a decimal at a larger precision with the
//! same scale): a partition tuple decoded with an old manifest's own spec
//! holds the old width (spec: "Schema Evolution"). A `day` value is a day
//! count whether the writer typed it `date` or `int`, so both read as
//! either. Anything else is refused, naming both types.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int32Array, Int64Array, NullArray, StringArray,
    Time64MicrosecondArray, TimestampMicrosecondArray, TimestampNanosecondArray,
};
use arrow_schema::{DataType, TimeUnit};

use crate::error::{Error, Result};
use crate::expr::Datum;
use crate::types::PrimitiveType;
use crate::values::Literal;

/// The value at `row` of `array` as a datum of `ty`; `None` when null.
pub fn datum_at(array: &dyn Array, row: usize, ty: PrimitiveType) -> Result<Option<Datum>> {
    if row >= array.len() {
        return Err(Error::InvalidValue(format!(
            "row {row} is beyond the end of an Arrow array of {} values",
            array.len()
        )));
    }
    // A NullArray has no validity buffer: every slot is null.
    if *array.data_type() == DataType::Null || array.is_null(row) {
        return Ok(None);
    }
    let mismatch = || {
        Error::TypeMismatch(format!(
            "an Arrow {} value (row {row}) cannot be read as Iceberg type {ty}",
            array.data_type()
        ))
    };
    use PrimitiveType as P;
    let literal = match (array.data_type(), ty) {
        (DataType::Boolean, P::Boolean) => Literal::Boolean(array.as_boolean().value(row)),
        (DataType::Int32, P::Int) => Literal::Int(primitive::<Int32Type>(array, row)?),
        (DataType::Int32, P::Long) => Literal::Long(primitive::<Int32Type>(array, row)?.into()),
        (DataType::Int32, P::Date) => Literal::Date(primitive::<Int32Type>(array, row)?),
        (DataType::Date32, P::Date) => Literal::Date(primitive::<Date32Type>(array, row)?),
        (DataType::Date32, P::Int) => Literal::Int(primitive::<Date32Type>(array, row)?),
        (DataType::Int64, P::Long) => Literal::Long(primitive::<Int64Type>(array, row)?),
        (DataType::Float32, P::Float) => Literal::Float(primitive::<Float32Type>(array, row)?),
        (DataType::Float32, P::Double) => {
            Literal::Double(primitive::<Float32Type>(array, row)?.into())
        }
        (DataType::Float64, P::Double) => Literal::Double(primitive::<Float64Type>(array, row)?),
        (DataType::Decimal128(_, s), P::Decimal { scale, .. })
            if i64::from(*s) == i64::from(scale) =>
        {
            Literal::Decimal(primitive::<Decimal128Type>(array, row)?)
        }
        (DataType::Time64(TimeUnit::Microsecond), P::Time) => {
            Literal::Time(primitive::<Time64MicrosecondType>(array, row)?)
        }
        (DataType::Timestamp(TimeUnit::Microsecond, None), P::Timestamp) => {
            Literal::Timestamp(primitive::<TimestampMicrosecondType>(array, row)?)
        }
        (DataType::Timestamp(TimeUnit::Microsecond, Some(_)), P::Timestamptz) => {
            Literal::Timestamptz(primitive::<TimestampMicrosecondType>(array, row)?)
        }
        (DataType::Timestamp(TimeUnit::Nanosecond, None), P::TimestampNs) => {
            Literal::TimestampNs(primitive::<TimestampNanosecondType>(array, row)?)
        }
        (DataType::Timestamp(TimeUnit::Nanosecond, Some(_)), P::TimestamptzNs) => {
            Literal::TimestamptzNs(primitive::<TimestampNanosecondType>(array, row)?)
        }
        (DataType::Utf8, P::String) => Literal::String(array.as_string::<i32>().value(row).into()),
        (DataType::LargeUtf8, P::String) => {
            Literal::String(array.as_string::<i64>().value(row).into())
        }
        (DataType::Utf8View, P::String) => {
            Literal::String(array.as_string_view().value(row).into())
        }
        (DataType::FixedSizeBinary(16), P::Uuid) => {
            let bytes = array.as_fixed_size_binary().value(row);
            Literal::Uuid(bytes.try_into().map_err(|_| mismatch())?)
        }
        (DataType::FixedSizeBinary(n), P::Fixed(length)) if u64::try_from(*n) == Ok(length) => {
            Literal::Fixed(array.as_fixed_size_binary().value(row).to_vec())
        }
        (DataType::Binary, P::Binary) => {
            Literal::Binary(array.as_binary::<i32>().value(row).into())
        }
        (DataType::LargeBinary, P::Binary) => {
            Literal::Binary(array.as_binary::<i64>().value(row).into())
        }
        (DataType::BinaryView, P::Binary) => {
            Literal::Binary(array.as_binary_view().value(row).into())
        }
        _ => return Err(mismatch()),
    };
    // Checks ranges the Arrow type does not (decimal precision, time of day).
    Datum::new(ty, literal).map(Some).map_err(|e| {
        Error::InvalidValue(format!(
            "the Arrow {} value at row {row} is not a valid {ty}: {e}",
            array.data_type()
        ))
    })
}

fn primitive<T: arrow_array::ArrowPrimitiveType>(
    array: &dyn Array,
    row: usize,
) -> Result<T::Native> {
    array
        .as_primitive_opt::<T>()
        .map(|a| a.value(row))
        .ok_or_else(|| {
            Error::Internal(format!(
                "an Arrow array of type {} is not a {}",
                array.data_type(),
                std::any::type_name::<T>()
            ))
        })
}

/// A column of `ty` (in the decoder's Arrow type) holding `values`.
pub fn array_from_datums(ty: PrimitiveType, values: &[Option<Datum>]) -> Result<ArrayRef> {
    use PrimitiveType as P;
    fn pick<'a, T>(
        ty: PrimitiveType,
        values: &'a [Option<Datum>],
        f: impl Fn(&'a Literal) -> Option<T>,
    ) -> Result<Vec<Option<T>>> {
        values
            .iter()
            .map(|v| match v {
                None => Ok(None),
                Some(d) => f(&d.value).map(Some).ok_or_else(|| {
                    Error::TypeMismatch(format!(
                        "a {} value ({d}) cannot go into a column of type {ty}",
                        d.value.kind()
                    ))
                }),
            })
            .collect()
    }
    let utc = || -> Arc<str> { Arc::from("UTC") };
    Ok(match ty {
        P::Boolean => Arc::new(BooleanArray::from(pick(ty, values, |l| match l {
            Literal::Boolean(v) => Some(*v),
            _ => None,
        })?)),
        P::Int => Arc::new(Int32Array::from(pick(ty, values, |l| match l {
            Literal::Int(v) => Some(*v),
            _ => None,
        })?)),
        P::Long => Arc::new(Int64Array::from(pick(ty, values, |l| match l {
            Literal::Long(v) => Some(*v),
            _ => None,
        })?)),
        P::Float => Arc::new(Float32Array::from(pick(ty, values, |l| match l {
            Literal::Float(v) => Some(*v),
            _ => None,
        })?)),
        P::Double => Arc::new(Float64Array::from(pick(ty, values, |l| match l {
            Literal::Double(v) => Some(*v),
            _ => None,
        })?)),
        P::Decimal { precision, scale } => {
            let array = Decimal128Array::from(pick(ty, values, |l| match l {
                Literal::Decimal(v) => Some(*v),
                _ => None,
            })?);
            let (p, s) = (u8::try_from(precision), i8::try_from(scale));
            let (Ok(p), Ok(s)) = (p, s) else {
                return Err(Error::InvalidValue(format!(
                    "{ty} has no Arrow decimal type"
                )));
            };
            Arc::new(
                array
                    .with_precision_and_scale(p, s)
                    .map_err(|e| Error::InvalidValue(format!("{ty}: {e}")))?,
            )
        }
        P::Date => Arc::new(Date32Array::from(pick(ty, values, |l| match l {
            Literal::Date(v) => Some(*v),
            _ => None,
        })?)),
        P::Time => Arc::new(Time64MicrosecondArray::from(pick(
            ty,
            values,
            |l| match l {
                Literal::Time(v) => Some(*v),
                _ => None,
            },
        )?)),
        P::Timestamp => Arc::new(TimestampMicrosecondArray::from(pick(
            ty,
            values,
            |l| match l {
                Literal::Timestamp(v) => Some(*v),
                _ => None,
            },
        )?)),
        P::Timestamptz => Arc::new(
            TimestampMicrosecondArray::from(pick(ty, values, |l| match l {
                Literal::Timestamptz(v) => Some(*v),
                _ => None,
            })?)
            .with_timezone(utc()),
        ),
        P::TimestampNs => Arc::new(TimestampNanosecondArray::from(pick(
            ty,
            values,
            |l| match l {
                Literal::TimestampNs(v) => Some(*v),
                _ => None,
            },
        )?)),
        P::TimestamptzNs => Arc::new(
            TimestampNanosecondArray::from(pick(ty, values, |l| match l {
                Literal::TimestamptzNs(v) => Some(*v),
                _ => None,
            })?)
            .with_timezone(utc()),
        ),
        P::String => {
            let strings = pick(ty, values, |l| match l {
                Literal::String(v) => Some(v.as_str()),
                _ => None,
            })?;
            Arc::new(StringArray::from(strings))
        }
        P::Binary => {
            let bytes = pick(ty, values, |l| match l {
                Literal::Binary(v) => Some(v.as_slice()),
                _ => None,
            })?;
            Arc::new(BinaryArray::from(bytes))
        }
        P::Uuid | P::Fixed(_) => {
            let size = match ty {
                P::Fixed(n) => i32::try_from(n)
                    .map_err(|_| Error::InvalidValue(format!("{ty} is too wide for Arrow")))?,
                _ => 16,
            };
            let bytes = pick(ty, values, |l| match l {
                Literal::Uuid(v) if ty == P::Uuid => Some(v.as_slice()),
                Literal::Fixed(v) if ty != P::Uuid => Some(v.as_slice()),
                _ => None,
            })?;
            let array =
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(bytes.into_iter(), size)
                    .map_err(|e| Error::InvalidValue(format!("a {ty} column: {e}")))?;
            Arc::new(array)
        }
        P::Unknown => {
            if let Some(Some(d)) = values.iter().find(|v| v.is_some()) {
                return Err(Error::TypeMismatch(format!(
                    "a column of type unknown holds only nulls, not {d}"
                )));
            }
            Arc::new(NullArray::new(values.len()))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avro::columns::primitive_data_type;
    use arrow_array::{LargeStringArray, StringViewArray};

    fn d(ty: &str, value: Literal) -> Datum {
        Datum::new(PrimitiveType::parse(ty).unwrap(), value).unwrap()
    }

    fn every_type() -> Vec<Datum> {
        vec![
            d("boolean", Literal::Boolean(true)),
            d("int", Literal::Int(-7)),
            d("long", Literal::Long(1 << 40)),
            d("float", Literal::Float(-0.0)),
            d("double", Literal::Double(f64::NAN)),
            d("decimal(9,2)", Literal::Decimal(-12345)),
            d("decimal(38,10)", Literal::Decimal(10i128.pow(37))),
            d("date", Literal::Date(-1)),
            d("time", Literal::Time(86_399_999_999)),
            d("timestamp", Literal::Timestamp(-1)),
            d("timestamptz", Literal::Timestamptz(1_510_871_468_000_000)),
            d("timestamp_ns", Literal::TimestampNs(i64::MIN)),
            d("timestamptz_ns", Literal::TimestamptzNs(i64::MAX)),
            d("string", Literal::String("välue😀".into())),
            d("uuid", Literal::Uuid([0xF7; 16])),
            d("fixed[3]", Literal::Fixed(vec![0, 1, 255])),
            d("binary", Literal::Binary(vec![])),
        ]
    }

    #[test]
    fn every_decoded_type_round_trips() {
        for datum in every_type() {
            let values = vec![None, Some(datum.clone()), None];
            let array = array_from_datums(datum.ty, &values).unwrap();
            // The decoder's Arrow type for this Iceberg type.
            assert_eq!(
                *array.data_type(),
                primitive_data_type(datum.ty),
                "{}",
                datum.ty
            );
            assert_eq!(datum_at(array.as_ref(), 0, datum.ty).unwrap(), None);
            let read = datum_at(array.as_ref(), 1, datum.ty).unwrap().unwrap();
            assert_eq!(read.ty, datum.ty);
            assert!(read.cmp_value(&datum).is_eq(), "{} != {}", read, datum);
            assert_eq!(read.to_bytes(), datum.to_bytes());
        }
        let nulls = array_from_datums(PrimitiveType::Unknown, &[None, None]).unwrap();
        assert_eq!(
            datum_at(nulls.as_ref(), 1, PrimitiveType::Unknown).unwrap(),
            None
        );
        assert_eq!(
            datum_at(nulls.as_ref(), 1, PrimitiveType::Long).unwrap(),
            None
        );
    }

    #[test]
    fn promotions_widen() {
        let ints = Int32Array::from(vec![Some(-3)]);
        assert_eq!(
            datum_at(&ints, 0, PrimitiveType::Long)
                .unwrap()
                .unwrap()
                .value,
            Literal::Long(-3)
        );
        assert_eq!(
            datum_at(&ints, 0, PrimitiveType::Date)
                .unwrap()
                .unwrap()
                .value,
            Literal::Date(-3)
        );
        let floats = Float32Array::from(vec![Some(1.5f32)]);
        assert_eq!(
            datum_at(&floats, 0, PrimitiveType::Double)
                .unwrap()
                .unwrap()
                .value,
            Literal::Double(1.5)
        );
        let decimals = Decimal128Array::from(vec![Some(12345i128)])
            .with_precision_and_scale(9, 2)
            .unwrap();
        let wide = PrimitiveType::parse("decimal(20,2)").unwrap();
        assert_eq!(
            datum_at(&decimals, 0, wide).unwrap().unwrap().value,
            Literal::Decimal(12345)
        );
        // Another scale would change the value: refused.
        let other_scale = PrimitiveType::parse("decimal(9,3)").unwrap();
        assert!(matches!(
            datum_at(&decimals, 0, other_scale),
            Err(Error::TypeMismatch(_))
        ));
        // A narrower precision than the value needs: refused by value.
        let narrow = PrimitiveType::parse("decimal(4,2)").unwrap();
        assert!(matches!(
            datum_at(&decimals, 0, narrow),
            Err(Error::InvalidValue(_))
        ));
    }

    #[test]
    fn other_string_layouts_read_as_strings() {
        let large = LargeStringArray::from(vec![Some("ab")]);
        let view = StringViewArray::from(vec![Some("a long string beyond twelve bytes")]);
        assert_eq!(
            datum_at(&large, 0, PrimitiveType::String)
                .unwrap()
                .unwrap()
                .value,
            Literal::String("ab".into())
        );
        assert_eq!(
            datum_at(&view, 0, PrimitiveType::String)
                .unwrap()
                .unwrap()
                .value,
            Literal::String("a long string beyond twelve bytes".into())
        );
    }

    #[test]
    fn refusals_name_the_types() {
        let longs = Int64Array::from(vec![Some(1)]);
        let e = datum_at(&longs, 0, PrimitiveType::Int).unwrap_err();
        assert!(
            e.to_string().contains("Int64") && e.to_string().contains("int"),
            "{e}"
        );
        assert!(matches!(
            datum_at(&longs, 1, PrimitiveType::Long),
            Err(Error::InvalidValue(_))
        ));
        let naive = TimestampMicrosecondArray::from(vec![Some(1)]);
        assert!(datum_at(&naive, 0, PrimitiveType::Timestamptz).is_err());
        let zoned = naive.clone().with_timezone("UTC");
        assert!(datum_at(&zoned, 0, PrimitiveType::Timestamp).is_err());
        let times = Time64MicrosecondArray::from(vec![Some(crate::values::MICROS_PER_DAY)]);
        assert!(matches!(
            datum_at(&times, 0, PrimitiveType::Time),
            Err(Error::InvalidValue(_))
        ));
        let wrong = vec![Some(d("int", Literal::Int(1)))];
        assert!(matches!(
            array_from_datums(PrimitiveType::Long, &wrong),
            Err(Error::TypeMismatch(_))
        ));
    }
}
