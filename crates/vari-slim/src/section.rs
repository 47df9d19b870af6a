//! Rewriting one fat-binary section in place.
//!
//! Each container keeps its offset and header; its kept entries are moved to the front of its
//! body in their original order (each entry is self-contained: its header says its length, and
//! nothing points into a container but at its start), the header's size is set to cover exactly
//! them, and every byte after them up to the container's old end is zeroed — so the section's
//! length and every other byte of the file stay as they were, and the zeros cost nothing once
//! the wheel deflates them. Readers skip zeros between containers, as they skip the linker's
//! alignment padding.

use vari_scan::{parse_fatbin_containers, FatbinEntry, FatbinError, CONTAINER_SIZE_OFFSET};

use crate::keep::Keep;

/// One entry of a rewritten section, and whether it stayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryOutcome {
    /// The entry, as it was in the fat build.
    pub entry: FatbinEntry,
    /// Whether it is in the slim build.
    pub kept: bool,
}

/// Entries are only moved by multiples of this, so that an entry aligned in the fat build stays
/// aligned (nvcc pads every entry to a multiple of 8 bytes, and a container's body has no room
/// for padding: its entries follow each other).
const ENTRY_ALIGN: usize = 8;

/// Rewrites `section` (the bytes of a `.nv_fatbin` section) to hold only what `keep` selects;
/// returns every entry with whether it stayed. On error the section is unchanged: it is parsed
/// whole before anything is written.
pub fn slim_section(section: &mut [u8], keep: &Keep) -> Result<Vec<EntryOutcome>, FatbinError> {
    let containers = parse_fatbin_containers(section)?;
    let plans: Vec<Vec<bool>> = containers.iter().map(|c| keep.select(&c.entries)).collect();
    // Checked before anything moves, so that an error leaves the section as it was.
    for (container, kept) in containers.iter().zip(&plans) {
        let mut shift = 0;
        for (entry, &stays) in container.entries.iter().zip(kept) {
            if !stays {
                shift += entry.len;
            } else if shift % ENTRY_ALIGN != 0 {
                return Err(FatbinError {
                    offset: entry.offset,
                    problem: format!(
                        "keeping this entry would move it by {shift} bytes, which breaks its \
                         {ENTRY_ALIGN}-byte alignment"
                    ),
                });
            }
        }
    }
    let mut outcomes = Vec::new();
    for (container, kept) in containers.into_iter().zip(plans) {
        let body = container.offset + container.header_len;
        let mut write = body;
        for (entry, &stays) in container.entries.iter().zip(&kept) {
            if stays {
                section.copy_within(entry.offset..entry.offset + entry.len, write);
                write += entry.len;
            }
            outcomes.push(EntryOutcome {
                entry: entry.clone(),
                kept: stays,
            });
        }
        section[write..container.end].fill(0);
        let size = (write - body) as u64;
        let at = container.offset + CONTAINER_SIZE_OFFSET;
        section[at..at + 8].copy_from_slice(&size.to_le_bytes());
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests;
