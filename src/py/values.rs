//! Bindings for `frazil.values` (spec: Appendix B and D).
//!
//! `python/frazil/values.py` turns Python's rich values (Decimal, datetime,
//! UUID, dicts by field name) into canonical primitives, guided by the type
//! description [`describe_type`] returns; this layer only maps those
//! primitives to and from [`Literal`]:
//!
//! | Iceberg type                                   | canonical Python value          |
//! |------------------------------------------------|---------------------------------|
//! | boolean                                        | bool                            |
//! | int, long, date, time, timestamp, timestamptz  | int (days or microseconds)      |
//! | timestamp_ns, timestamptz_ns                   | int (nanoseconds)               |
//! | float, double                                  | float                           |
//! | decimal(P,S)                                   | int (the unscaled value)        |
//! | string                                         | str                             |
//! | uuid, fixed[L], binary                         | bytes                           |
//! | struct                                         | list of field values (or None)  |
//! | list                                           | list                            |
//! | map                                            | list of (key, value) tuples     |

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use super::errors::run;
use crate::error::{Error, Result};
use crate::types::{PrimitiveType, Type};
use crate::values::{self, Literal};

fn primitive(type_text: &str) -> Result<PrimitiveType> {
    let ty = Type::parse(type_text)?;
    ty.as_primitive().ok_or_else(|| {
        Error::TypeMismatch(format!(
            "type {ty} has no binary form or hash: Appendix D and B define them for primitive types only"
        ))
    })
}

fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<unprintable value>".to_owned())
}

fn wrong(obj: &Bound<'_, PyAny>, ty: &dyn std::fmt::Display, expected: &str) -> Error {
    Error::TypeMismatch(format!(
        "{} is not a valid value of type {ty}: expected {expected}",
        repr(obj)
    ))
}

/// An integer of any width, refusing bool (a subclass of int in Python).
fn integer<T: TryFrom<i128>>(obj: &Bound<'_, PyAny>, ty: &dyn std::fmt::Display) -> Result<T> {
    if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return Err(wrong(obj, ty, "an int"));
    }
    let out_of_range =
        || Error::InvalidValue(format!("{} is out of range for type {ty}", repr(obj)));
    let wide: i128 = obj.extract().map_err(|_| out_of_range())?;
    T::try_from(wide).map_err(|_| out_of_range())
}

fn bytes_of(obj: &Bound<'_, PyAny>, ty: &dyn std::fmt::Display) -> Result<Vec<u8>> {
    obj.cast::<PyBytes>()
        .map(|b| b.as_bytes().to_vec())
        .map_err(|_| wrong(obj, ty, "bytes"))
}

fn sequence<'py>(obj: &Bound<'py, PyAny>, ty: &Type) -> Result<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = obj.cast::<PyList>() {
        Ok(list.iter().collect())
    } else if let Ok(tuple) = obj.cast::<PyTuple>() {
        Ok(tuple.iter().collect())
    } else {
        Err(wrong(obj, ty, "a list"))
    }
}

fn optional(ty: &Type, obj: &Bound<'_, PyAny>) -> Result<Option<Literal>> {
    if obj.is_none() {
        Ok(None)
    } else {
        literal_from_py(ty, obj).map(Some)
    }
}

/// A canonical Python value of `ty` as a [`Literal`].
fn literal_from_py(ty: &Type, obj: &Bound<'_, PyAny>) -> Result<Literal> {
    use PrimitiveType as P;
    let primitive = match ty {
        Type::Primitive(p) => *p,
        Type::Variant | Type::Geometry { .. } | Type::Geography { .. } => {
            return Err(Error::UnknownType(format!(
                "single values of type {ty} are not supported"
            )))
        }
        Type::Struct(fields) => {
            let items = sequence(obj, ty)?;
            if items.len() != fields.len() {
                return Err(wrong(obj, ty, &format!("{} field values", fields.len())));
            }
            return fields
                .iter()
                .zip(&items)
                .map(|(field, item)| optional(&field.field_type, item))
                .collect::<Result<Vec<_>>>()
                .map(Literal::Struct);
        }
        Type::List { element, .. } => {
            return sequence(obj, ty)?
                .iter()
                .map(|item| optional(element, item))
                .collect::<Result<Vec<_>>>()
                .map(Literal::List);
        }
        Type::Map { key, value, .. } => {
            let mut entries = Vec::new();
            for pair in sequence(obj, ty)? {
                let pair = pair
                    .cast::<PyTuple>()
                    .ok()
                    .filter(|t| t.len() == 2)
                    .ok_or_else(|| wrong(&pair, ty, "(key, value) pairs"))?;
                let (k, v) = (pair.get_item(0), pair.get_item(1));
                let (Ok(k), Ok(v)) = (k, v) else {
                    return Err(wrong(pair.as_any(), ty, "(key, value) pairs"));
                };
                if k.is_none() {
                    return Err(Error::InvalidValue(format!(
                        "a key of {ty} must not be None"
                    )));
                }
                entries.push((literal_from_py(key, &k)?, optional(value, &v)?));
            }
            return Ok(Literal::Map(entries));
        }
    };
    Ok(match primitive {
        P::Boolean => match obj.cast::<PyBool>() {
            Ok(b) => Literal::Boolean(b.is_true()),
            Err(_) => return Err(wrong(obj, ty, "a bool")),
        },
        P::Int => Literal::Int(integer(obj, ty)?),
        P::Long => Literal::Long(integer(obj, ty)?),
        P::Date => Literal::Date(integer(obj, ty)?),
        P::Time => Literal::Time(integer(obj, ty)?),
        P::Timestamp => Literal::Timestamp(integer(obj, ty)?),
        P::Timestamptz => Literal::Timestamptz(integer(obj, ty)?),
        P::TimestampNs => Literal::TimestampNs(integer(obj, ty)?),
        P::TimestamptzNs => Literal::TimestamptzNs(integer(obj, ty)?),
        P::Unknown => {
            return Err(Error::InvalidValue(format!(
                "{} is not a value of type unknown: it is always null",
                repr(obj)
            )))
        }
        P::Decimal { .. } => Literal::Decimal(integer(obj, ty)?),
        P::Float | P::Double => {
            let v: f64 = obj
                .cast::<PyFloat>()
                .map(|f| f.value())
                .map_err(|_| wrong(obj, ty, "a float"))?;
            if primitive == P::Double {
                Literal::Double(v)
            } else {
                // Rounding to the nearest f32 is expected; overflowing is not.
                let narrowed = v as f32;
                if v.is_finite() && narrowed.is_infinite() {
                    return Err(Error::InvalidValue(format!(
                        "{} is out of range for type float",
                        repr(obj)
                    )));
                }
                Literal::Float(narrowed)
            }
        }
        P::String => {
            let s = obj
                .cast::<PyString>()
                .map_err(|_| wrong(obj, ty, "a str"))?;
            // A str with lone surrogates has no UTF-8 form (spec: "Primitive Types" note 3).
            Literal::String(s.to_str().map(str::to_owned).map_err(|_| {
                Error::InvalidValue(format!(
                    "{} is not a valid value of type string: it contains a lone surrogate, \
                     which has no UTF-8 form",
                    repr(obj)
                ))
            })?)
        }
        P::Uuid => {
            let bytes = bytes_of(obj, ty)?;
            Literal::Uuid(bytes.try_into().map_err(|_| wrong(obj, ty, "16 bytes"))?)
        }
        P::Fixed(_) => Literal::Fixed(bytes_of(obj, ty)?),
        P::Binary => Literal::Binary(bytes_of(obj, ty)?),
    })
}

fn optional_to_py<'py>(py: Python<'py>, value: &Option<Literal>) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Some(v) => literal_to_py(py, v),
        None => Ok(py.None().into_bound(py)),
    }
}

/// A [`Literal`] as its canonical Python value.
fn literal_to_py<'py>(py: Python<'py>, value: &Literal) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Literal::Boolean(v) => v.into_bound_py_any(py),
        Literal::Int(v) | Literal::Date(v) => v.into_bound_py_any(py),
        Literal::Long(v)
        | Literal::Time(v)
        | Literal::Timestamp(v)
        | Literal::Timestamptz(v)
        | Literal::TimestampNs(v)
        | Literal::TimestamptzNs(v) => v.into_bound_py_any(py),
        Literal::Float(v) => f64::from(*v).into_bound_py_any(py),
        Literal::Double(v) => v.into_bound_py_any(py),
        Literal::Decimal(v) => v.into_bound_py_any(py),
        Literal::String(v) => v.into_bound_py_any(py),
        Literal::Uuid(v) => Ok(PyBytes::new(py, v).into_any()),
        Literal::Fixed(v) | Literal::Binary(v) => Ok(PyBytes::new(py, v).into_any()),
        Literal::Struct(items) | Literal::List(items) => {
            let converted = items
                .iter()
                .map(|item| optional_to_py(py, item))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, converted)?.into_any())
        }
        Literal::Map(entries) => {
            let converted = entries
                .iter()
                .map(|(k, v)| {
                    let pair = [literal_to_py(py, k)?, optional_to_py(py, v)?];
                    PyTuple::new(py, pair)
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, converted)?.into_any())
        }
    }
}

/// The structure of a type as nested tuples, for `frazil.values` to walk:
/// `("int",)`, `("decimal", P, S)`, `("fixed", L)`,
/// `("struct", ((id, name, required, type), ...))`,
/// `("list", element_id, element_required, element)`,
/// `("map", key_id, key, value_id, value_required, value)`,
/// `("variant",)`, `("geometry", crs)`, `("geography", crs, algorithm)`.
pub(super) fn describe<'py>(py: Python<'py>, ty: &Type) -> PyResult<Bound<'py, PyAny>> {
    match ty {
        Type::Primitive(PrimitiveType::Decimal { precision, scale }) => {
            ("decimal", precision, scale).into_bound_py_any(py)
        }
        Type::Primitive(PrimitiveType::Fixed(length)) => ("fixed", length).into_bound_py_any(py),
        Type::Primitive(p) => (p.to_string(),).into_bound_py_any(py),
        Type::Struct(fields) => {
            let described = fields
                .iter()
                .map(|f| {
                    (
                        f.id,
                        f.name.as_str(),
                        f.required,
                        describe(py, &f.field_type)?,
                    )
                        .into_bound_py_any(py)
                })
                .collect::<PyResult<Vec<_>>>()?;
            ("struct", PyTuple::new(py, described)?).into_bound_py_any(py)
        }
        Type::List {
            element_id,
            element_required,
            element,
        } => ("list", element_id, element_required, describe(py, element)?).into_bound_py_any(py),
        Type::Map {
            key_id,
            key,
            value_id,
            value_required,
            value,
        } => (
            "map",
            key_id,
            describe(py, key)?,
            value_id,
            value_required,
            describe(py, value)?,
        )
            .into_bound_py_any(py),
        Type::Variant => ("variant",).into_bound_py_any(py),
        Type::Geometry { crs } => ("geometry", crs.as_str()).into_bound_py_any(py),
        Type::Geography { crs, algorithm } => {
            ("geography", crs.as_str(), algorithm.as_str()).into_bound_py_any(py)
        }
    }
}

#[pyfunction]
fn describe_type<'py>(py: Python<'py>, type_text: &str) -> PyResult<Bound<'py, PyAny>> {
    let ty = run(|| Type::parse(type_text))?;
    describe(py, &ty)
}

#[pyfunction]
fn value_to_bytes<'py>(
    py: Python<'py>,
    type_text: &str,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = run(|| {
        let ty = primitive(type_text)?;
        values::to_bytes(&ty, &literal_from_py(&Type::Primitive(ty), value)?)
    })?;
    Ok(PyBytes::new(py, &bytes))
}

#[pyfunction]
fn value_from_bytes<'py>(
    py: Python<'py>,
    type_text: &str,
    data: &[u8],
) -> PyResult<Bound<'py, PyAny>> {
    let literal = run(|| values::from_bytes(&primitive(type_text)?, data))?;
    literal_to_py(py, &literal)
}

/// The Appendix D JSON of a value, as JSON text.
#[pyfunction]
fn value_to_json(type_text: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    run(|| {
        let ty = Type::parse(type_text)?;
        let json = values::to_json(&ty, &literal_from_py(&ty, value)?)?;
        Ok(json.to_string())
    })
}

#[pyfunction]
fn value_from_json<'py>(
    py: Python<'py>,
    type_text: &str,
    json_text: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let literal = run(|| {
        let ty = Type::parse(type_text)?;
        let json: serde_json::Value = serde_json::from_str(json_text)
            .map_err(|e| Error::InvalidValue(format!("{json_text:?} is not valid JSON: {e}")))?;
        values::from_json(&ty, &json)
    })?;
    literal_to_py(py, &literal)
}

#[pyfunction]
fn value_hash(type_text: &str, value: &Bound<'_, PyAny>) -> PyResult<i32> {
    run(|| {
        let ty = primitive(type_text)?;
        values::hash(&ty, &literal_from_py(&Type::Primitive(ty), value)?)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(describe_type, m)?)?;
    m.add_function(wrap_pyfunction!(value_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(value_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(value_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(value_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(value_hash, m)?)?;
    Ok(())
}
