//! Rows grouped by partition: a counting sort on the partition key codes.
//!
//! Each partition field contributes an integer code per row (its value less
//! the field's minimum when the values span a small range, as transforms give:
//! days, hours, buckets; otherwise the rank of the value among the field's
//! distinct values; null after every value). The codes of a row's fields
//! combine into one code (mixed radix), and a counting sort on it gives each
//! row its group and each group its slice of the output. Groups come in
//! ascending order of their combined codes and rows keep their input order
//! within a group, so the result is the order of a stable sort on the codes.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, PrimitiveArray};
use arrow_schema::DataType;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, Result};

/// Codes spanning at most this many values are counted in a table of that
/// size; wider ones are ranked first (hashing).
const DIRECT_SPAN: u64 = 1 << 22;

/// Where each input row goes: the rows of group `g` are output rows
/// `starts[g]..starts[g + 1]`, in input order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grouping {
    /// The group of each input row.
    pub group_of_row: Vec<u32>,
    /// The first output row of each group, and the row count last.
    pub starts: Vec<usize>,
    /// The first input row of each group (its key values stand for the group).
    pub first_rows: Vec<usize>,
}

impl Grouping {
    pub fn groups(&self) -> usize {
        self.first_rows.len()
    }

    pub fn rows(&self) -> usize {
        self.group_of_row.len()
    }

    /// The input row of each output row (the indices a `take` would need).
    pub fn order(&self) -> Vec<u64> {
        let mut order = vec![0u64; self.rows()];
        let mut cursor = self.starts.clone();
        for (row, &group) in self.group_of_row.iter().enumerate() {
            let slot = &mut cursor[group as usize];
            order[*slot] = row as u64;
            *slot += 1;
        }
        order
    }
}

/// The grouping of `rows` rows by the key columns `keys` (one per partition
/// field, each `rows` long; integers or dates, nulls allowed).
pub fn group_rows(keys: &[&dyn Array], rows: usize) -> Result<Grouping> {
    if rows > u32::MAX as usize {
        return Err(Error::InvalidValue(format!(
            "partitioning: {rows} rows in one piece; at most {} are grouped at once",
            u32::MAX
        )));
    }
    let mut codes = vec![0u64; rows];
    let mut span: u64 = 1;
    for (position, key) in keys.iter().enumerate() {
        if key.len() != rows {
            return Err(Error::InvalidValue(format!(
                "partitioning: key {position} has {} values for {rows} rows",
                key.len()
            )));
        }
        add_field(*key, &mut codes, &mut span)
            .map_err(|e| Error::TypeMismatch(format!("partitioning: key {position}: {e}")))?;
    }
    if span > DIRECT_SPAN {
        span = densify(&mut codes);
    }
    Ok(count(&codes, span as usize))
}

/// A counting sort of codes below `span`.
fn count(codes: &[u64], span: usize) -> Grouping {
    let mut counts = vec![0usize; span];
    let mut first = vec![0usize; span];
    for (row, &code) in codes.iter().enumerate() {
        let slot = &mut counts[code as usize];
        if *slot == 0 {
            first[code as usize] = row;
        }
        *slot += 1;
    }
    // Reuse `counts` as the group of each code.
    let mut starts = Vec::new();
    let mut first_rows = Vec::new();
    let mut next = 0usize;
    for (code, slot) in counts.iter_mut().enumerate() {
        if *slot > 0 {
            starts.push(next);
            first_rows.push(first[code]);
            next += *slot;
            *slot = starts.len() - 1;
        }
    }
    starts.push(next);
    let group_of_row = codes.iter().map(|&c| counts[c as usize] as u32).collect();
    Grouping {
        group_of_row,
        starts,
        first_rows,
    }
}

/// Replaces each code by its rank among the distinct codes; returns their
/// number.
fn densify(codes: &mut [u64]) -> u64 {
    let distinct: FxHashSet<u64> = codes.iter().copied().collect();
    let mut sorted: Vec<u64> = distinct.into_iter().collect();
    sorted.sort_unstable();
    let rank: FxHashMap<u64, u64> = sorted
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, i as u64))
        .collect();
    for code in codes.iter_mut() {
        *code = rank[code];
    }
    sorted.len() as u64
}

/// Appends a field's code to each row's combined code (`code * width +
/// field code`, `span` growing by the factor `width`); a field's codes are
/// ordered as its values, null last.
fn add_field(
    key: &dyn Array,
    codes: &mut [u64],
    span: &mut u64,
) -> std::result::Result<(), String> {
    match key.data_type() {
        DataType::Int8 => add_integers(key.as_primitive::<Int8Type>(), codes, span),
        DataType::Int16 => add_integers(key.as_primitive::<Int16Type>(), codes, span),
        DataType::Int32 => add_integers(key.as_primitive::<Int32Type>(), codes, span),
        DataType::Int64 => add_integers(key.as_primitive::<Int64Type>(), codes, span),
        DataType::UInt8 => add_integers(key.as_primitive::<UInt8Type>(), codes, span),
        DataType::UInt16 => add_integers(key.as_primitive::<UInt16Type>(), codes, span),
        DataType::UInt32 => add_integers(key.as_primitive::<UInt32Type>(), codes, span),
        DataType::UInt64 => add_integers(key.as_primitive::<UInt64Type>(), codes, span),
        DataType::Date32 => add_integers(key.as_primitive::<Date32Type>(), codes, span),
        other => {
            return Err(format!(
                "Arrow type {other} is not an integer or date32 (encode other keys first)"
            ))
        }
    }
    Ok(())
}

/// Widens `span` by `width`; when the product is too wide, the codes so far
/// are ranked first (fewer than the rows).
fn widen(codes: &mut [u64], span: &mut u64, width: u64) {
    *span = match span.checked_mul(width).filter(|&s| s <= 1 << 62) {
        Some(s) => s,
        None => densify(codes) * width,
    };
}

fn add_integers<T>(key: &PrimitiveArray<T>, codes: &mut [u64], span: &mut u64)
where
    T: ArrowPrimitiveType,
    T::Native: Into<i128>,
{
    let values = key.values();
    let nulls = key.nulls().filter(|n| n.null_count() > 0);
    let valid = |i: usize| nulls.is_none_or(|n| n.is_valid(i));
    let mut bounds: Option<(i128, i128)> = None;
    for (i, &v) in values.iter().enumerate() {
        if valid(i) {
            let v: i128 = v.into();
            bounds = Some(match bounds {
                None => (v, v),
                Some((low, high)) => (low.min(v), high.max(v)),
            });
        }
    }
    let has_nulls = u64::from(nulls.is_some());
    let Some((low, high)) = bounds else {
        // Every value null (or none): one code, nothing to add.
        return;
    };
    let range = high - low + 1;
    if range <= i128::from(DIRECT_SPAN) {
        let range = range as u64;
        let width = range + has_nulls;
        widen(codes, span, width);
        match nulls {
            None => {
                for (code, &v) in codes.iter_mut().zip(values.iter()) {
                    *code = *code * width + (Into::<i128>::into(v) - low) as u64;
                }
            }
            Some(_) => {
                for (i, (code, &v)) in codes.iter_mut().zip(values.iter()).enumerate() {
                    let field = if valid(i) {
                        (Into::<i128>::into(v) - low) as u64
                    } else {
                        range
                    };
                    *code = *code * width + field;
                }
            }
        }
        return;
    }
    // A wide range (identity on ids, say): rank the distinct values.
    let distinct: FxHashSet<i128> = (0..values.len())
        .filter(|&i| valid(i))
        .map(|i| Into::<i128>::into(values[i]))
        .collect();
    let mut sorted: Vec<i128> = distinct.into_iter().collect();
    sorted.sort_unstable();
    let rank: FxHashMap<i128, u64> = sorted
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, i as u64))
        .collect();
    let nulls_code = sorted.len() as u64;
    let width = nulls_code + has_nulls;
    widen(codes, span, width);
    for (i, (code, &v)) in codes.iter_mut().zip(values.iter()).enumerate() {
        let field = if valid(i) {
            rank[&Into::<i128>::into(v)]
        } else {
            nulls_code
        };
        *code = *code * width + field;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, Int64Array, StringArray, UInt64Array};

    #[test]
    fn groups_by_combined_codes_in_order() {
        let day = Int32Array::from(vec![Some(5), Some(3), None, Some(5), Some(3)]);
        let bucket = Int32Array::from(vec![1, 0, 1, 1, 2]);
        let grouping = group_rows(&[&day, &bucket], 5).unwrap();
        // (3,0) (3,2) (5,1) (null,1)
        assert_eq!(grouping.group_of_row, vec![2, 0, 3, 2, 1]);
        assert_eq!(grouping.starts, vec![0, 1, 2, 4, 5]);
        assert_eq!(grouping.first_rows, vec![1, 4, 0, 2]);
        assert_eq!(grouping.order(), vec![1, 4, 0, 3, 2]);
    }

    #[test]
    fn wide_ranges_are_ranked() {
        let ids = Int64Array::from(vec![i64::MAX, i64::MIN, 0, i64::MAX]);
        let wide = UInt64Array::from(vec![u64::MAX, 0, 0, u64::MAX]);
        let grouping = group_rows(&[&ids, &wide], 4).unwrap();
        assert_eq!(grouping.group_of_row, vec![2, 0, 1, 2]);
        assert_eq!(grouping.order(), vec![1, 2, 0, 3]);
    }

    #[test]
    fn no_keys_one_group_and_no_rows_no_group() {
        let grouping = group_rows(&[], 3).unwrap();
        assert_eq!(grouping.starts, vec![0, 3]);
        let empty = Int32Array::from(Vec::<i32>::new());
        let grouping = group_rows(&[&empty], 0).unwrap();
        assert_eq!(grouping.groups(), 0);
        assert_eq!(grouping.starts, vec![0]);
    }

    #[test]
    fn bad_keys_are_refused() {
        let strings = StringArray::from(vec!["a"]);
        let err = group_rows(&[&strings], 1).unwrap_err().to_string();
        assert!(err.contains("key 0") && err.contains("Utf8"), "{err}");
        let short = Int32Array::from(vec![1]);
        let err = group_rows(&[&short], 2).unwrap_err().to_string();
        assert!(err.contains("1 values for 2 rows"), "{err}");
    }
}
