//! Shell-style patterns for wheel file names: `*` matches any run of characters, `?` one
//! character, everything else itself (file names have no `/`, so no path rules are needed).

/// Whether `name` matches `pattern`.
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative matcher with one backtrack point: linear for patterns with one `*`, and
    // never exponential.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(&c) if c == '?' || c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn stars_and_question_marks() {
        assert!(matches(
            "cupy_cuda12x-*.whl",
            "cupy_cuda12x-13.4.0-cp312-cp312-manylinux_2_28_x86_64.whl"
        ));
        assert!(!matches(
            "cupy_cuda12x-*.whl",
            "cupy_cuda11x-13.4.0-cp312-cp312-manylinux_2_28_x86_64.whl"
        ));
        assert!(matches(
            "*+cu12?-*",
            "torch-2.10.0+cu128-cp312-cp312-linux_x86_64.whl"
        ));
        assert!(matches("*", ""));
        assert!(matches("a*b*c", "axxbyyc"));
        assert!(!matches("a*b*c", "axxbyy"));
        assert!(!matches("?", ""));
        assert!(matches("exact.whl", "exact.whl"));
    }
}
