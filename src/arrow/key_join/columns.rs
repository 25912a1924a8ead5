//! Columns of equal length split into chunks of rows, every column cut at
//! the same rows: the shape the key join works on. A pyarrow Table's record
//! batches are such chunks already; separately chunked columns (a list of
//! ChunkedArrays) are cut at the union of their chunk boundaries, by slicing
//! (no copy).

use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use crate::error::{Error, Result};

/// Columns as aligned chunks: chunk `c` holds one array per column, all of
/// the same length, and row `r` of the columns is row `r - start(c)` of the
/// chunk that holds it.
#[derive(Clone, Debug)]
pub struct ChunkedColumns {
    names: Option<Vec<String>>,
    types: Vec<DataType>,
    chunks: Vec<Vec<ArrayRef>>,
    num_rows: usize,
}

impl ChunkedColumns {
    /// One chunk of `columns` (at least one, all of one length).
    pub fn new(columns: &[ArrayRef]) -> Result<Self> {
        let types = columns.iter().map(|c| c.data_type().clone()).collect();
        Self::from_batches(types, vec![columns.to_vec()])
    }

    /// Chunks of `types`' columns (record batches); each chunk holds one
    /// array a column, of its column's type, all of one length.
    pub fn from_batches(types: Vec<DataType>, chunks: Vec<Vec<ArrayRef>>) -> Result<Self> {
        if types.is_empty() {
            return Err(Error::Validation("no key columns given".into()));
        }
        let mut num_rows = 0usize;
        let mut kept = Vec::with_capacity(chunks.len());
        for (c, chunk) in chunks.into_iter().enumerate() {
            if chunk.len() != types.len() {
                return Err(Error::Validation(format!(
                    "chunk {c} holds {} columns, expected {}",
                    chunk.len(),
                    types.len()
                )));
            }
            let len = chunk[0].len();
            for (i, (array, ty)) in chunk.iter().zip(&types).enumerate() {
                check_type(i, ty, array.data_type())?;
                if array.len() != len {
                    return Err(Error::Validation(format!(
                        "columns of different lengths: column 0 has {len} rows, column {i} has {}",
                        array.len()
                    )));
                }
            }
            num_rows += len;
            if len > 0 {
                kept.push(chunk);
            }
        }
        Ok(Self {
            names: None,
            types,
            chunks: kept,
            num_rows,
        })
    }

    /// Columns each chunked on its own (`(type, chunks)` a column, e.g.
    /// ChunkedArrays), cut into aligned chunks at every column's chunk
    /// boundaries.
    pub fn from_columns(columns: Vec<(DataType, Vec<ArrayRef>)>) -> Result<Self> {
        if columns.is_empty() {
            return Err(Error::Validation("no key columns given".into()));
        }
        let lengths: Vec<usize> = columns
            .iter()
            .map(|(_, chunks)| chunks.iter().map(|a| a.len()).sum())
            .collect();
        if let Some(i) = lengths.iter().position(|&n| n != lengths[0]) {
            return Err(Error::Validation(format!(
                "columns of different lengths: column 0 has {} rows, column {i} has {}",
                lengths[0], lengths[i]
            )));
        }
        for (i, (ty, chunks)) in columns.iter().enumerate() {
            for chunk in chunks {
                check_type(i, ty, chunk.data_type())?;
            }
        }
        let mut bounds: Vec<usize> = columns
            .iter()
            .flat_map(|(_, chunks)| {
                chunks.iter().scan(0usize, |end, chunk| {
                    *end += chunk.len();
                    Some(*end)
                })
            })
            .filter(|&end| end > 0)
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        let cut: Vec<Vec<ArrayRef>> = columns
            .iter()
            .map(|(_, chunks)| cut_at(chunks, &bounds))
            .collect();
        let chunks = (0..bounds.len())
            .map(|c| cut.iter().map(|column| column[c].clone()).collect())
            .collect();
        let types = columns.into_iter().map(|(ty, _)| ty).collect();
        Self::from_batches(types, chunks)
    }

    /// These columns named `names` (one a column), for messages.
    pub fn with_names(mut self, names: Vec<String>) -> Result<Self> {
        if names.len() != self.types.len() {
            return Err(Error::Validation(format!(
                "{} names given for {} columns",
                names.len(),
                self.types.len()
            )));
        }
        self.names = Some(names);
        Ok(self)
    }

    pub fn names(&self) -> Option<&[String]> {
        self.names.as_deref()
    }

    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    pub fn num_columns(&self) -> usize {
        self.types.len()
    }

    pub fn num_rows(&self) -> usize {
        self.num_rows
    }

    /// The non-empty chunks, each with the row number of its first row.
    pub fn chunks(&self) -> impl Iterator<Item = (usize, &[ArrayRef])> {
        self.chunks.iter().scan(0usize, |start, chunk| {
            let first = *start;
            *start += chunk[0].len();
            Some((first, chunk.as_slice()))
        })
    }

    /// The chunk holding row `row` and the row's number in it.
    pub fn locate(&self, row: usize) -> Option<(&[ArrayRef], usize)> {
        self.chunks()
            .find(|(start, chunk)| row < start + chunk[0].len())
            .map(|(start, chunk)| (chunk, row - start))
    }

    /// The end row of each chunk.
    fn bounds(&self) -> Vec<usize> {
        self.chunks().map(|(start, c)| start + c[0].len()).collect()
    }

    /// These columns and `other` (as long) cut at the union of both's chunk
    /// boundaries, so that chunk `c` of one holds the rows of chunk `c` of
    /// the other.
    pub fn aligned(&self, other: &Self) -> Result<(Self, Self)> {
        if self.num_rows != other.num_rows {
            return Err(Error::Validation(format!(
                "{} rows and {} rows cannot be paired",
                self.num_rows, other.num_rows
            )));
        }
        let (mine, theirs) = (self.bounds(), other.bounds());
        if mine == theirs {
            return Ok((self.clone(), other.clone()));
        }
        let mut bounds = [mine, theirs].concat();
        bounds.sort_unstable();
        bounds.dedup();
        Ok((self.cut(&bounds), other.cut(&bounds)))
    }

    fn cut(&self, bounds: &[usize]) -> Self {
        let columns: Vec<Vec<ArrayRef>> = (0..self.types.len())
            .map(|i| {
                let chunks: Vec<ArrayRef> = self.chunks.iter().map(|c| c[i].clone()).collect();
                cut_at(&chunks, bounds)
            })
            .collect();
        let chunks = (0..bounds.len())
            .map(|c| columns.iter().map(|column| column[c].clone()).collect())
            .collect();
        Self {
            names: self.names.clone(),
            types: self.types.clone(),
            chunks,
            num_rows: self.num_rows,
        }
    }
}

fn check_type(column: usize, expected: &DataType, got: &DataType) -> Result<()> {
    if expected != got {
        return Err(Error::TypeMismatch(format!(
            "column {column} is {expected}, but one of its chunks is {got}"
        )));
    }
    Ok(())
}

/// `chunks` (one column) sliced into the pieces between consecutive
/// `bounds` (increasing end rows, the last the column's length, every chunk
/// end among them).
fn cut_at(chunks: &[ArrayRef], bounds: &[usize]) -> Vec<ArrayRef> {
    let mut pieces = Vec::with_capacity(bounds.len());
    let mut chunks = chunks.iter().filter(|c| !c.is_empty());
    let mut current = chunks.next();
    let (mut chunk_start, mut start) = (0usize, 0usize);
    for &end in bounds {
        let chunk = current.expect("bounds cover the column");
        pieces.push(chunk.slice(start - chunk_start, end - start));
        start = end;
        if end == chunk_start + chunk.len() {
            chunk_start = end;
            current = chunks.next();
        }
    }
    pieces
}
