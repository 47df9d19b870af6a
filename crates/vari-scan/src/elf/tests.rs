//! Naming addresses by function symbols: the borrowed names give the answers the owned ones did.

use super::*;

/// The lookup as it was with owned names: sorted by (start, end, name as text).
fn owned_name_at(ranges: &[(u64, u64, &[u8])], address: u64) -> Option<String> {
    let mut owned: Vec<(u64, u64, String)> = ranges
        .iter()
        .map(|&(s, e, n)| (s, e, String::from_utf8_lossy(n).into_owned()))
        .collect();
    owned.sort();
    let after = owned.partition_point(|&(start, _, _)| start <= address);
    owned[..after]
        .iter()
        .rev()
        .take(8)
        .find(|&&(_, end, _)| address < end)
        .map(|(_, _, name)| name.clone())
}

#[test]
fn names_agree_with_owned_names_on_overlapping_and_tied_ranges() {
    // Up to 40 ranges over 80 addresses: more than 8 start before many of them. Names that tie on
    // their range, invalid UTF-8 (shown with a replacement character, U+FFFD:
    // as text it sorts before U+FFFE, as bytes after it), nested ranges.
    let names: [&[u8]; 6] = [
        b"alpha",
        b"beta",
        b"\xff",
        b"\xef\xbf\xbe",
        b"zeta",
        b"beta",
    ];
    let mut state = 7u64;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    for _ in 0..500 {
        let ranges: Vec<(u64, u64, &[u8])> = (0..next(40))
            .map(|_| {
                // Mostly short ranges, some long ones that enclose many others.
                let start = next(64);
                let len = if next(4) == 0 { next(64) } else { next(4) };
                (start, start + 1 + len, names[next(6) as usize])
            })
            .collect();
        let functions = Functions {
            ranges: ranges.clone(),
            ifuncs: 0,
            feature_record: None,
        };
        for address in 0..90 {
            assert_eq!(
                functions.name_at(address),
                owned_name_at(&ranges, address),
                "{ranges:?} at {address}"
            );
        }
    }
}
