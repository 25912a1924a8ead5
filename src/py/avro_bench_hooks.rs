//! Bench-only entry point (benches/bench_avro_crate.py): the hand-written
//! Avro container writer and block decoder against the `apache-avro`
//! crate's `Writer` and `Reader`, timed inside Rust on the same manifest so
//! that Python's conversions are not measured.

use std::time::Instant;

use apache_avro as avro;
use pyo3::prelude::*;

use super::errors::run;
use crate::avro::container::read_header;
use crate::avro::{Codec, ContainerWriter};
use crate::error::{Error, Result};
use crate::manifest::writer::write_manifest_using;
use crate::manifest::{read_manifest, ManifestOptions};

/// Decodes `data` with the crate's reader into its generic values; returns
/// the number of records.
fn crate_read(data: &[u8]) -> Result<usize> {
    let reader = avro::Reader::new(data).map_err(|e| Error::InvalidData(e.to_string()))?;
    let mut records = 0;
    for value in reader {
        value.map_err(|e| Error::InvalidData(e.to_string()))?;
        records += 1;
    }
    Ok(records)
}

fn time<T>(iterations: usize, mut f: impl FnMut() -> Result<T>) -> Result<f64> {
    let start = Instant::now();
    for _ in 0..iterations {
        std::hint::black_box(f()?);
    }
    Ok(start.elapsed().as_secs_f64() / iterations as f64)
}

/// For the manifest `data`, `rounds` interleaved timings (seconds per call,
/// each the mean of `iterations` calls) of: writing its entries back with
/// each container writer (`write-hand`, `write-crate`, codec `codec`) and
/// decoding it with each reader (`read-hand`, `read-crate`).
#[pyfunction]
#[pyo3(name = "_bench_avro_crate")]
fn bench_avro_crate(
    py: Python<'_>,
    data: Vec<u8>,
    codec: &str,
    rounds: usize,
    iterations: usize,
) -> PyResult<Vec<(String, f64)>> {
    py.detach(|| {
        run(|| {
            let header = read_header(&data)?;
            let meta = |key: &str| {
                header
                    .meta_str(key)
                    .map(str::to_owned)
                    .ok_or_else(|| Error::InvalidData(format!("manifest has no {key}")))
            };
            let options = ManifestOptions {
                format_version: meta("format-version")?.parse().unwrap_or(2),
                schema_json: meta("schema")?,
                spec_json: meta("partition-spec")?,
                spec_id: meta("partition-spec-id")?.parse().unwrap_or(0),
                deletes: meta("content").ok().as_deref() == Some("deletes"),
                snapshot_id: None,
                codec: Codec::parse(codec)?,
            };
            let entries: arrow_array::StructArray =
                read_manifest(&data, "bench.avro", None, None)?.into();
            let mut out = Vec::new();
            for _ in 0..rounds {
                for (label, writer) in [
                    ("write-hand", ContainerWriter::HandWritten),
                    ("write-crate", ContainerWriter::Crate),
                ] {
                    let seconds = time(iterations, || {
                        write_manifest_using(&entries, &options, writer)
                    })?;
                    out.push((label.to_owned(), seconds));
                }
                let seconds = time(iterations, || {
                    read_manifest(&data, "bench.avro", None, None)
                })?;
                out.push(("read-hand".to_owned(), seconds));
                let seconds = time(iterations, || crate_read(&data))?;
                out.push(("read-crate".to_owned(), seconds));
            }
            Ok(out)
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bench_avro_crate, m)?)
}
