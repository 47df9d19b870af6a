//! The NVIDIA driver-branch table (`data/nvidia-driver-branches.toml`): a labelled estimate of the
//! CUDA version from a kernel driver version, used only when no driver library answers.

use serde::Deserialize;

use super::parse_major_minor;

/// The table, compiled in so an estimate needs no file at run time.
const TABLE: &str = include_str!("../../data/nvidia-driver-branches.toml");

#[derive(Debug, Deserialize)]
struct Table {
    source: String,
    branches: Vec<Row>,
}

#[derive(Debug, Deserialize)]
struct Row {
    branch: u32,
    cuda: String,
    #[serde(default = "yes")]
    exact: bool,
}

fn yes() -> bool {
    true
}

/// An estimated CUDA version for a kernel driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CudaEstimate {
    /// `(major, minor)`.
    pub cuda: (u32, u32),
    /// The table row used, e.g. `R550`.
    pub branch: String,
    /// False when the true value may be higher (unlisted newer driver, uncertain row).
    pub exact: bool,
    /// Where the table comes from.
    pub source: String,
}

/// Estimates the CUDA version a driver such as `550.144.03` reports.
pub(crate) fn estimate(driver_version: &str) -> Option<CudaEstimate> {
    let major: u32 = driver_version.trim().split('.').next()?.parse().ok()?;
    // The table is part of the build and covered by a test; a parse failure means no estimate.
    let table: Table = toml::from_str(TABLE).ok()?;
    let last_branch = table.branches.iter().map(|r| r.branch).max()?;
    let row = table
        .branches
        .iter()
        .filter(|r| r.branch <= major)
        .max_by_key(|r| r.branch)?;
    Some(CudaEstimate {
        cuda: parse_major_minor(&row.cuda)?,
        branch: format!("R{}", row.branch),
        // Past the last listed branch the true value may be higher (branches are 5 apart).
        exact: row.exact && (row.branch != last_branch || major < last_branch + 5),
        source: table.source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_is_sorted() {
        let table: Table = toml::from_str(TABLE).unwrap();
        assert!(table.branches.len() > 20);
        assert!(table.branches.windows(2).all(|w| w[0].branch < w[1].branch));
        for row in &table.branches {
            assert!(parse_major_minor(&row.cuda).is_some(), "{}", row.cuda);
        }
    }

    #[test]
    fn drivers_map_to_their_branch() {
        let e = estimate("550.144.03").unwrap();
        assert_eq!(
            (e.cuda, e.branch.as_str(), e.exact),
            ((12, 4), "R550", true)
        );
        assert_eq!(estimate("565.57.01").unwrap().cuda, (12, 7));
        assert_eq!(estimate("570.86.15").unwrap().cuda, (12, 8));
        // A Windows-style 551.x driver belongs to R550.
        assert_eq!(estimate("551.61").unwrap().cuda, (12, 4));
        assert_eq!(estimate("375.74"), None);
        assert_eq!(estimate("garbage"), None);
    }

    #[test]
    fn newer_or_uncertain_branches_are_lower_bounds() {
        let e = estimate("610.10").unwrap();
        assert_eq!(e.cuda, (13, 2));
        assert!(!e.exact);
        let e = estimate("700.1.2").unwrap();
        assert_eq!((e.cuda, e.exact), ((13, 2), false));
    }
}
