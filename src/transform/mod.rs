//! Partition transforms (spec: "Partition Transforms", Appendix C).
//!
//! [`Transform`] is the model: parsing and printing the transform strings,
//! the result type for a source type, and ordering properties used later by
//! projections and sort orders. [`kernels`] applies transforms to Arrow arrays.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::types::PrimitiveType;

pub mod kernels;
pub mod scalar;

/// Time granularity of the temporal transforms, coarsest last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Granularity {
    Hour,
    Day,
    Month,
    Year,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transform {
    Identity,
    Bucket(u32),
    Truncate(u32),
    Year,
    Month,
    Day,
    Hour,
    Void,
}

impl Transform {
    /// A bucket transform; `N` must be positive.
    pub fn bucket(num_buckets: i64) -> Result<Self> {
        positive_parameter("bucket", num_buckets).map(Transform::Bucket)
    }

    /// A truncate transform; `W` must be positive.
    pub fn truncate(width: i64) -> Result<Self> {
        positive_parameter("truncate", width).map(Transform::Truncate)
    }

    /// Parses an Appendix C transform string such as `"bucket[16]"` or `"day"`.
    /// Names are case-insensitive, as in Apache Iceberg Java.
    pub fn parse(text: &str) -> Result<Self> {
        let lower = text.trim().to_ascii_lowercase();
        if let Some((name, rest)) = lower.split_once('[') {
            let parameter = rest
                .strip_suffix(']')
                .and_then(|p| p.trim().parse::<i64>().ok())
                .ok_or_else(|| {
                    Error::InvalidTransform(format!(
                        "{text:?}: expected {name}[<positive integer>]"
                    ))
                })?;
            return match name.trim() {
                "bucket" => Self::bucket(parameter),
                "truncate" => Self::truncate(parameter),
                _ => Err(Error::InvalidTransform(format!(
                    "{text:?}: unknown transform"
                ))),
            };
        }
        match lower.as_str() {
            "identity" => Ok(Self::Identity),
            "year" => Ok(Self::Year),
            "month" => Ok(Self::Month),
            "day" => Ok(Self::Day),
            "hour" => Ok(Self::Hour),
            "void" => Ok(Self::Void),
            "bucket" | "truncate" => Err(Error::InvalidTransform(format!(
                "{text:?}: {lower} needs a parameter, e.g. {lower}[16]"
            ))),
            _ => Err(Error::InvalidTransform(format!(
                "{text:?}: unknown transform"
            ))),
        }
    }

    /// Whether the spec's transform table allows this transform on `source`.
    pub fn can_transform(&self, source: PrimitiveType) -> bool {
        use PrimitiveType as P;
        match self {
            Self::Identity | Self::Void => true,
            Self::Bucket(_) => !matches!(source, P::Boolean | P::Float | P::Double | P::Unknown),
            Self::Truncate(_) => {
                // The spec lists int, long, decimal and string; Java also
                // truncates binary by bytes, and so do we.
                matches!(
                    source,
                    P::Int | P::Long | P::Decimal { .. } | P::String | P::Binary
                )
            }
            Self::Year | Self::Month | Self::Day => source == P::Date || source.is_timestamp(),
            Self::Hour => source.is_timestamp(),
        }
    }

    /// The type of the partition values this transform produces from `source`.
    ///
    /// `day` yields `date`: the spec's table says `int`, and both store the
    /// same day count, but Apache Iceberg Java types day values as dates,
    /// which decides their Avro logical type in manifests, their JSON form in
    /// Appendix C (`"2021-01-01"`) and their Arrow type; frazil follows Java
    /// so that both write and read the same files.
    pub fn result_type(&self, source: PrimitiveType) -> Result<PrimitiveType> {
        if !self.can_transform(source) {
            return Err(Error::UnsupportedTransform {
                transform: self.to_string(),
                source_type: source.to_string(),
            });
        }
        Ok(match self {
            Self::Identity | Self::Truncate(_) | Self::Void => source,
            Self::Day => PrimitiveType::Date,
            Self::Bucket(_) | Self::Year | Self::Month | Self::Hour => PrimitiveType::Int,
        })
    }

    /// Whether `a <= b` implies `t(a) <= t(b)`.
    pub fn preserves_order(&self) -> bool {
        !matches!(self, Self::Bucket(_) | Self::Void)
    }

    /// Whether data ordered by this transform is also ordered by `other`.
    ///
    /// Follows Apache Iceberg Java, except for truncate: Java answers
    /// `width >= other.width` for every source type, which is right for strings
    /// and binary (a longer prefix orders the shorter one) but wrong for numbers,
    /// where truncate[W1] orders truncate[W2] only when W1 divides W2. Without a
    /// source type we answer only what holds for both.
    pub fn satisfies_order_of(&self, other: &Transform, source: Option<PrimitiveType>) -> bool {
        if self == other {
            return true;
        }
        match (self, other) {
            (Self::Identity, _) => other.preserves_order(),
            (Self::Truncate(w1), Self::Truncate(w2)) => {
                let as_prefix = w1 >= w2;
                let as_number = w2 % w1 == 0;
                match source {
                    Some(PrimitiveType::String | PrimitiveType::Binary) => as_prefix,
                    Some(_) => as_number,
                    None => as_prefix && as_number,
                }
            }
            _ => match (self.granularity(), other.granularity()) {
                (Some(mine), Some(theirs)) => mine <= theirs,
                _ => false,
            },
        }
    }

    fn granularity(&self) -> Option<Granularity> {
        match self {
            Self::Year => Some(Granularity::Year),
            Self::Month => Some(Granularity::Month),
            Self::Day => Some(Granularity::Day),
            Self::Hour => Some(Granularity::Hour),
            _ => None,
        }
    }
}

fn positive_parameter(name: &str, value: i64) -> Result<u32> {
    if value <= 0 || value > i64::from(i32::MAX) {
        return Err(Error::InvalidTransform(format!(
            "{name}[{value}]: the parameter must be a positive 32-bit integer"
        )));
    }
    Ok(value as u32)
}

impl FromStr for Transform {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Identity => f.write_str("identity"),
            Self::Bucket(n) => write!(f, "bucket[{n}]"),
            Self::Truncate(w) => write!(f, "truncate[{w}]"),
            Self::Year => f.write_str("year"),
            Self::Month => f.write_str("month"),
            Self::Day => f.write_str("day"),
            Self::Hour => f.write_str("hour"),
            Self::Void => f.write_str("void"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PrimitiveType as P;

    #[test]
    fn transform_strings_round_trip() {
        for text in [
            "identity",
            "bucket[16]",
            "truncate[4]",
            "year",
            "month",
            "day",
            "hour",
            "void",
        ] {
            assert_eq!(Transform::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(Transform::parse("BUCKET[3]").unwrap(), Transform::Bucket(3));
    }

    #[test]
    fn bad_transform_strings_are_refused() {
        for text in [
            "bucket[0]",
            "bucket[-1]",
            "truncate[0]",
            "bucket",
            "bucket[x]",
            "zorder",
            "bucket[4294967296]",
            "years[1]",
        ] {
            assert!(
                matches!(Transform::parse(text), Err(Error::InvalidTransform(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn result_types_follow_the_spec_table() {
        assert_eq!(Transform::Bucket(4).result_type(P::String).unwrap(), P::Int);
        assert_eq!(
            Transform::Truncate(4).result_type(P::Long).unwrap(),
            P::Long
        );
        assert_eq!(Transform::Day.result_type(P::Date).unwrap(), P::Date);
        assert_eq!(
            Transform::Hour.result_type(P::TimestamptzNs).unwrap(),
            P::Int
        );
        assert_eq!(
            Transform::Bucket(3).result_type(P::TimestampNs).unwrap(),
            P::Int
        );
        assert!(Transform::Truncate(3).result_type(P::TimestampNs).is_err());
        assert!(Transform::Bucket(3).result_type(P::Unknown).is_err());
        assert_eq!(
            Transform::Identity.result_type(P::Unknown).unwrap(),
            P::Unknown
        );
        assert_eq!(
            Transform::Identity.result_type(P::Double).unwrap(),
            P::Double
        );
        assert!(Transform::Hour.result_type(P::Date).is_err());
        assert!(Transform::Bucket(2).result_type(P::Float).is_err());
        assert!(Transform::Truncate(2).result_type(P::Uuid).is_err());
        assert!(Transform::Year.result_type(P::Time).is_err());
    }

    #[test]
    fn ordering_properties() {
        assert!(!Transform::Bucket(4).preserves_order());
        assert!(Transform::Day.preserves_order());
        assert!(Transform::Hour.satisfies_order_of(&Transform::Year, None));
        assert!(!Transform::Year.satisfies_order_of(&Transform::Month, None));
        assert!(Transform::Identity.satisfies_order_of(&Transform::Truncate(3), None));
        assert!(!Transform::Identity.satisfies_order_of(&Transform::Bucket(3), None));
        let (t5, t10) = (Transform::Truncate(5), Transform::Truncate(10));
        assert!(t10.satisfies_order_of(&t5, Some(P::String)));
        assert!(!t10.satisfies_order_of(&t5, Some(P::Int)));
        assert!(t5.satisfies_order_of(&t10, Some(P::Long)));
        assert!(!t5.satisfies_order_of(&t10, Some(P::String)));
        assert!(!t5.satisfies_order_of(&t10, None));
    }
}
