//! A hostile METADATA: a `Requires-Dist` marker nested 60,000 parentheses deep killed the
//! proxy (a stack overflow) on the first page request for its project. It is refused by the
//! marker nesting limit, logged, and every other page is still served.

use std::path::Path;

use crate::support::*;
use crate::wheels::*;

/// `deeppkg` 1.0: x86-64 level variants whose dependency marker names a variant variable inside
/// 60,000 parentheses; a non-variant wheel.
fn deep_release(dir: &Path) {
    let nested = format!(
        "filelock; {}\"x86_64 :: level :: v3\" in variant_properties{}",
        "(".repeat(60_000),
        ")".repeat(60_000)
    );
    let document = level_variants(&["v1", "v3"]);
    for level in ["v1", "v3"] {
        wheel(
            dir,
            &format!("deeppkg-1.0-py3-none-any-{level}.whl"),
            Some(&one_variant(&document, level)),
            &[&nested],
        );
    }
    wheel(dir, "deeppkg-1.0-py3-none-any.whl", None, &[&nested]);
    std::fs::write(dir.join("deeppkg-1.0-variants.json"), document).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_marker_nested_too_deep_is_logged_and_the_proxy_serves_on() {
    let (_dir, index) = upstream(&[deep_release, plainpkg_release]).await;
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let addr = proxy.local_addr();

    let page = get_json(addr, "/simple/deeppkg/").await;
    assert_eq!(page.status, 200, "{}", page.text());
    assert_logged(
        "deeppkg-1.0-py3-none-any-v3.whl: cannot evaluate the variant markers of its METADATA \
         (invalid marker `((((",
    );
    assert_logged("characters): parentheses nested 60000 deep, more than the limit of 64)");

    // The proxy lives on: the same page again, and another project.
    assert_eq!(get_json(addr, "/simple/deeppkg/").await.status, 200);
    let page = get_json(addr, "/simple/plainpkg/").await;
    assert_eq!(page.status, 200, "{}", page.text());
}
