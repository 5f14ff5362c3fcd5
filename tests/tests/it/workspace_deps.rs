//! The dependency lists stay true: every crate a member declares is named in the code that can
//! use it (`[dependencies]` in src/ and build.rs, `[dev-dependencies]` in tests/, benches/ and
//! src/), and every pin of the workspace is used by some member. A declared but unused
//! dependency costs build time and hides the real layering (the engine once declared rayon,
//! anyhow and serde without using them).

use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn manifest(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn table_keys(t: &toml::Table, key: &str) -> Vec<String> {
    t.get(key)
        .and_then(|v| v.as_table())
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default()
}

/// Every `.rs` file under the given folders of a member, concatenated.
fn sources(member: &Path, folders: &[&str]) -> String {
    fn walk(dir: &Path, out: &mut String) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
                out.push('\n');
            }
        }
    }
    let mut out = String::new();
    for f in folders {
        let p = member.join(f);
        if p.is_file() {
            out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
        } else {
            walk(&p, &mut out);
        }
    }
    out
}

/// The name a dependency has in Rust code: its `[lib] name` for workspace members, else the
/// package name with `-` as `_`.
fn rust_name(root: &Path, dep: &str) -> String {
    let member = root.join(dep).join("Cargo.toml");
    if member.is_file()
        && let Some(name) = manifest(&member)
            .get("lib")
            .and_then(|l| l.get("name"))
            .and_then(|n| n.as_str())
    {
        return name.to_string();
    }
    dep.replace('-', "_")
}

/// Whether the code names the crate: a path (`name::`), a `use name`, or an `extern crate`.
fn names(code: &str, krate: &str) -> bool {
    code.match_indices(krate).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = &code[i + krate.len()..];
        let starts = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        starts && (after.starts_with("::") || after.starts_with(';') || after.starts_with(" as "))
    })
}

fn members(root: &Path) -> Vec<String> {
    let ws = manifest(&root.join("Cargo.toml"));
    ws["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_declared_dependency_is_used() {
    let root = workspace_root();
    let mut unused = Vec::new();
    for member in members(&root) {
        let dir = root.join(&member);
        let m = manifest(&dir.join("Cargo.toml"));
        let lib_code = sources(&dir, &["src", "build.rs"]);
        let dev_code = lib_code.clone() + &sources(&dir, &["tests", "benches", "examples"]);
        for (table, code) in [("dependencies", &lib_code), ("dev-dependencies", &dev_code)] {
            for dep in table_keys(&m, table) {
                if !names(code, &rust_name(&root, &dep)) {
                    unused.push(format!("{member}: [{table}] {dep}"));
                }
            }
        }
    }
    assert!(
        unused.is_empty(),
        "declared but never named in the code: {unused:#?}"
    );
}

#[test]
fn every_workspace_pin_is_used_by_a_member() {
    let root = workspace_root();
    let ws = manifest(&root.join("Cargo.toml"));
    let pins: Vec<String> = ws["workspace"]["dependencies"]
        .as_table()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let used: Vec<String> = members(&root)
        .iter()
        .flat_map(|member| {
            let m = manifest(&root.join(member).join("Cargo.toml"));
            ["dependencies", "dev-dependencies", "build-dependencies"]
                .into_iter()
                .flat_map(move |t| table_keys(&m, t))
        })
        .collect();
    let unused: Vec<&String> = pins.iter().filter(|p| !used.contains(p)).collect();
    assert!(
        unused.is_empty(),
        "pinned in [workspace.dependencies] but used by no member: {unused:?}"
    );
}

#[test]
fn the_check_sees_a_use_and_misses_a_mention() {
    assert!(names("use arc_swap::ArcSwap;", "arc_swap"));
    assert!(names("let x = tch::Tensor::zeros(..);", "tch"));
    assert!(names("extern crate libc;", "libc"));
    assert!(!names("// rayon would be nice here", "rayon"));
    assert!(!names("my_serde::x()", "serde"));
}
