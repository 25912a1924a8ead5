//! Splitting planned files into byte ranges and packing them into combined
//! tasks, as Java's table scan does (`TableScanUtil.splitFiles` /
//! `planTasks` with `BinPacking`, Java 1.10): a splittable file with valid
//! split offsets gives one task per offset, others fixed-size pieces of the
//! target size; pieces are packed by weight `max(length + delete bytes,
//! (1 + delete files) * open-file cost)` into bins of the target size, with
//! a lookback of open bins, the largest bin leaving first.

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::Array;

use super::files::FileRef;
use super::planner::PlannedFile;
use crate::error::{Error, Result};

/// `read.split.target-size` default (128 MB).
pub const DEFAULT_TARGET_SIZE: i64 = 128 * 1024 * 1024;
/// `read.split.planning-lookback` default.
pub const DEFAULT_LOOKBACK: usize = 10;
/// `read.split.open-file-cost` default (4 MB).
pub const DEFAULT_OPEN_FILE_COST: i64 = 4 * 1024 * 1024;

/// A byte range of a planned file.
#[derive(Debug, Clone)]
pub struct SplitTask {
    pub file: PlannedFile,
    pub start: i64,
    pub length: i64,
}

#[derive(Debug, Clone, Copy)]
pub struct SplitOptions {
    pub target_size: i64,
    pub lookback: usize,
    pub open_file_cost: i64,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            target_size: DEFAULT_TARGET_SIZE,
            lookback: DEFAULT_LOOKBACK,
            open_file_cost: DEFAULT_OPEN_FILE_COST,
        }
    }
}

impl SplitOptions {
    pub fn validate(&self) -> Result<()> {
        if self.target_size <= 0 {
            return Err(Error::Validation(format!(
                "read.split.target-size must be > 0, got {}",
                self.target_size
            )));
        }
        if self.lookback == 0 {
            return Err(Error::Validation(
                "read.split.planning-lookback must be > 0".to_owned(),
            ));
        }
        if self.open_file_cost < 0 {
            return Err(Error::Validation(format!(
                "read.split.open-file-cost must be >= 0, got {}",
                self.open_file_cost
            )));
        }
        Ok(())
    }
}

fn splittable(format: &str) -> bool {
    ["parquet", "avro", "orc"]
        .iter()
        .any(|f| format.eq_ignore_ascii_case(f))
}

/// Split offsets Java trusts: strictly ascending, within the file.
fn valid_offsets(offsets: &[i64], file_size: i64) -> bool {
    !offsets.is_empty()
        && offsets[0] >= 0
        && offsets.windows(2).all(|w| w[0] < w[1])
        && *offsets.last().expect("not empty") < file_size
}

/// The byte ranges `file` is read in.
pub fn split(file: &PlannedFile, target_size: i64) -> Vec<SplitTask> {
    let data = &file.file;
    let size = data.file_size();
    let format = data.manifest.file_format.value(data.row());
    let piece = |start: i64, length: i64| SplitTask {
        file: file.clone(),
        start,
        length,
    };
    if !splittable(format) {
        return vec![piece(0, size)];
    }
    if let Some(offsets) = data.manifest.split_offsets(data.row()) {
        if valid_offsets(&offsets, size) {
            return offsets
                .iter()
                .enumerate()
                .map(|(i, &start)| {
                    let end = offsets.get(i + 1).copied().unwrap_or(size);
                    piece(start, end - start)
                })
                .collect();
        }
    }
    let mut out = Vec::new();
    let mut start = 0;
    while start < size {
        let length = target_size.min(size - start);
        out.push(piece(start, length));
        start += length;
    }
    out
}

/// The bytes a task reads besides its own range: its delete files (a DV
/// only its blob), looked up in the plan's table of delete files.
fn delete_bytes(file: &PlannedFile, delete_files: &[FileRef]) -> i64 {
    file.delete_files(delete_files)
        .map(|d| {
            let m = &d.manifest;
            let row = d.row();
            match (&m.content_size, m.is_dv(row)) {
                (Some(sizes), true) if sizes.is_valid(row) => sizes.value(row),
                _ => d.file_size(),
            }
        })
        .sum()
}

/// Java's weight of a split task in bin packing; `delete_files` is the
/// plan's table of delete files.
pub fn weight(task: &SplitTask, delete_files: &[FileRef], open_file_cost: i64) -> i64 {
    let files = 1 + task.file.deletes.len() as i64;
    (task.length + delete_bytes(&task.file, delete_files)).max(files.saturating_mul(open_file_cost))
}

/// Merges back-to-back pieces of one file that were packed into the same
/// group, in group order (Java: `TableScanUtil.mergeTasks` in
/// `BaseCombinedScanTask`, `SplitScanTask.canMerge`: the same file, and the
/// next piece starts where the last one ends).
pub fn merge_adjacent(tasks: Vec<SplitTask>) -> Vec<SplitTask> {
    let mut out: Vec<SplitTask> = Vec::with_capacity(tasks.len());
    for task in tasks {
        if let Some(last) = out.last_mut() {
            let same_file = Arc::ptr_eq(&last.file.file.manifest, &task.file.file.manifest)
                && last.file.file.row == task.file.file.row;
            if same_file && last.start + last.length == task.start {
                last.length += task.length;
                continue;
            }
        }
        out.push(task);
    }
    out
}

struct Bin<T> {
    weight: i64,
    items: Vec<T>,
}

/// Packs weighted items into bins of a target weight (Java's
/// `BinPacking.PackingIterable` with `largestBinFirst`).
pub struct Packer<T> {
    target: i64,
    lookback: usize,
    bins: VecDeque<Bin<T>>,
}

impl<T> Packer<T> {
    pub fn new(target: i64, lookback: usize) -> Self {
        Packer {
            target,
            lookback,
            bins: VecDeque::new(),
        }
    }

    /// Adds an item; returns a full bin when one leaves the window.
    pub fn push(&mut self, item: T, weight: i64) -> Option<Vec<T>> {
        let target = self.target;
        if let Some(bin) = self.bins.iter_mut().find(|b| b.weight + weight <= target) {
            bin.weight += weight;
            bin.items.push(item);
            return None;
        }
        self.bins.push_back(Bin {
            weight,
            items: vec![item],
        });
        if self.bins.len() > self.lookback {
            // The largest bin; the first of equals, as Collections.max.
            let mut largest = 0;
            for (i, bin) in self.bins.iter().enumerate() {
                if bin.weight > self.bins[largest].weight {
                    largest = i;
                }
            }
            return self.bins.remove(largest).map(|b| b.items);
        }
        None
    }

    /// The bins still open, in order.
    pub fn finish(&mut self) -> Vec<Vec<T>> {
        self.bins.drain(..).map(|b| b.items).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_must_be_ascending_and_inside_the_file() {
        assert!(valid_offsets(&[4, 100, 200], 300));
        assert!(!valid_offsets(&[4, 4, 200], 300));
        assert!(!valid_offsets(&[4, 300], 300));
        assert!(!valid_offsets(&[], 300));
        assert!(!valid_offsets(&[-1, 3], 300));
    }

    #[test]
    fn packs_like_javas_bin_packing() {
        // Worked through Java's BinPacking by hand: the first bin with room
        // takes an item; a new bin beyond the lookback pushes out the
        // heaviest open bin (the first of equals).
        let pack = |weights: &[i64], target: i64, lookback: usize| {
            let mut packer = Packer::new(target, lookback);
            let mut out = Vec::new();
            for &w in weights {
                out.extend(packer.push(w, w));
            }
            out.extend(packer.finish());
            out
        };
        assert_eq!(
            pack(&[36, 36, 36, 36, 73, 16, 35], 100, 2),
            vec![vec![73], vec![36, 36, 16], vec![36, 36], vec![35]]
        );
        assert_eq!(
            pack(&[1, 2, 3, 4, 5], 3, 1),
            vec![vec![1, 2], vec![4], vec![5], vec![3]]
        );
        assert_eq!(pack(&[5, 5, 5], 3, 5), vec![vec![5], vec![5], vec![5]]);
    }

    #[test]
    fn options_are_checked() {
        assert!(SplitOptions::default().validate().is_ok());
        let bad = SplitOptions {
            target_size: 0,
            ..SplitOptions::default()
        };
        assert!(bad.validate().is_err());
    }
}
