//! Scan planning (spec: "Scan Planning", "Row-level Deletes", Appendix C
//! "File Scan Task Serialization"): which data files a scan of a snapshot
//! reads, with which delete files and residual filters.

pub mod arrow_plan;
pub mod delete_file_index;
pub mod evaluate;
pub mod files;
pub mod planner;
pub mod split;
pub mod task_from_json;
pub mod task_json;

pub use files::{Content, FileRef, ManifestData};
pub use planner::{
    plan, plan_all, plan_data, Columns, Layout, ManifestFile, ManifestLists, Plan, PlanStream,
    PlannedFile, ScanContext, ScanOptions, TableView,
};
