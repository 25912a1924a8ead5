//! The one error type of the Rust core. `py::errors` maps each variant to a
//! subclass of `frazil.errors.FrazilError`; nothing else does.

/// What went wrong, with enough context (type, value, file) for the user to act.
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
pub enum Error {
    /// An Iceberg type string or type JSON that does not parse.
    #[error("unknown Iceberg type: {0}")]
    UnknownType(String),
    /// A transform string that does not parse, or a bad parameter (N <= 0, W <= 0).
    #[error("invalid transform: {0}")]
    InvalidTransform(String),
    /// A transform that the spec does not define for the source type.
    #[error("transform {transform} cannot be applied to {source_type}")]
    UnsupportedTransform {
        transform: String,
        source_type: String,
    },
    /// A value whose kind does not match the Iceberg or Arrow type it was given for.
    #[error("{0}")]
    TypeMismatch(String),
    /// A value of the right kind that is out of range or malformed
    /// (a byte string of the wrong length, an unparsable date, an overflow).
    #[error("{0}")]
    InvalidValue(String),
    /// A column name that the schema does not have.
    #[error("{0}")]
    UnknownField(String),
    /// Input that frazil understood but refuses: it breaks a rule of the
    /// spec, or asks for something impossible (comparing a string with an
    /// int column, a snapshot that does not exist).
    #[error("{0}")]
    Validation(String),
    /// Input that is not readable: corrupt, truncated, of the wrong format.
    #[error("{0}")]
    InvalidData(String),
    /// A file or object that does not exist; the message names its location.
    #[error("{0}")]
    NotFound(String),
    /// Storage refused access to a location (credentials, permissions).
    #[error("{0}")]
    PermissionDenied(String),
    /// Another failure of storage (network, disk), naming the location.
    #[error("{0}")]
    Io(String),
    /// A bug in frazil; also what a caught panic becomes.
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// `error`'s message followed by its chain of causes, each reason once: a
/// library's top-level message can be generic ("error sending request"), the
/// reason (a refused certificate, a bad Avro name) further down the chain.
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let text = inner.to_string();
        // Layers often repeat their cause's message.
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = inner.source();
    }
    message
}

/// The text a panic was raised with (`panic!` payloads are `&str` or `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
