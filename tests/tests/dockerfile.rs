//! The `Dockerfile` against the workspace: its one cargo command builds, with the benchmarked `release`
//! profile, binaries that exist; each final stage ships one of them on a non-root distroless base.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// Dockerfile instructions with `\` continuations joined and comments dropped.
fn instructions() -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in read("Dockerfile").lines() {
        let trimmed = line.trim();
        if current.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

/// Stages as (name, instructions), in order.
fn stages() -> Vec<(String, Vec<String>)> {
    let mut stages: Vec<(String, Vec<String>)> = Vec::new();
    for i in instructions() {
        if let Some(from) = i.strip_prefix("FROM ") {
            let words: Vec<&str> = from.split_whitespace().collect();
            let name = match words.as_slice() {
                [.., as_kw, name] if as_kw.eq_ignore_ascii_case("as") => (*name).to_owned(),
                _ => String::new(),
            };
            stages.push((name, vec![i.clone()]));
        } else if let Some(last) = stages.last_mut() {
            last.1.push(i);
        }
    }
    stages
}

/// The value of `key = "…"` in `section` of a Cargo.toml (enough for our manifests).
fn toml_string(text: &str, section: &str, key: &str) -> Option<String> {
    let mut in_section = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == section;
            continue;
        }
        if in_section
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            return Some(v.trim().trim_matches('"').to_owned());
        }
    }
    None
}

/// Binary targets of the package in `dir`: `[[bin]]` entries, else `src/main.rs` named after the package.
fn bin_targets(dir: &str) -> (String, Vec<String>) {
    let manifest = read(&format!("{dir}/Cargo.toml"));
    let package = toml_string(&manifest, "[package]", "name").expect("package name");
    let mut bins: Vec<String> = manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|section| {
            section
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with('['))
                .find_map(|l| {
                    l.split_once('=')
                        .filter(|(k, _)| k.trim() == "name")
                        .map(|(_, v)| v.trim().trim_matches('"').to_owned())
                })
        })
        .collect();
    if root().join(dir).join("src/main.rs").is_file() && !bins.contains(&package) {
        bins.push(package.clone());
    }
    (package, bins)
}

/// The `cargo build …` commands of the one RUN instruction that builds.
fn cargo_commands() -> Vec<String> {
    let runs: Vec<String> = instructions()
        .into_iter()
        .filter(|i| i.contains("cargo build"))
        .collect();
    assert_eq!(runs.len(), 1, "one RUN builds: {runs:?}");
    runs[0]
        .split("&&")
        .map(str::trim)
        .filter(|c| c.starts_with("cargo build"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn each_package_is_built_on_its_own_with_release_and_locked() {
    let commands = cargo_commands();
    assert_eq!(
        commands.len(),
        2,
        "one cargo build per binary: {commands:?}"
    );
    for ((dir, binary), cmd) in [
        ("adapter", "hypershift-adapter"),
        ("status-reporter", "status-reporter"),
    ]
    .into_iter()
    .zip(&commands)
    {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        assert!(words.contains(&"--release"), "{cmd}");
        assert!(words.contains(&"--locked"), "{cmd}");
        assert!(
            !cmd.contains("--profile"),
            "the image must use the release profile: {cmd}"
        );
        let (package, bins) = bin_targets(dir);
        assert_eq!(package, binary, "{dir}/Cargo.toml package name");
        assert!(
            bins.iter().any(|b| b == binary),
            "{dir} has no binary target {binary}: {bins:?}"
        );
        let after = |flag: &str| {
            words
                .windows(2)
                .filter(|w| w[0] == flag)
                .map(|w| w[1])
                .collect::<Vec<_>>()
        };
        assert_eq!(after("-p"), vec![package.as_str()], "{cmd}");
        assert_eq!(after("--bin"), vec![binary], "{cmd}");
        // The benchmarks build the same package the same way.
        let bench_command = format!("cargo build --release -p {package}");
        assert!(
            read("docs/benchmarks.md").contains(&bench_command),
            "docs/benchmarks.md does not measure `{bench_command}`"
        );
    }
    // The musl target is chosen per platform, for both supported architectures.
    let text = read("Dockerfile");
    for (arch, triple) in [
        ("amd64", "x86_64-unknown-linux-musl"),
        ("arm64", "aarch64-unknown-linux-musl"),
    ] {
        assert!(
            text.contains(&format!("{arch}) echo {triple}")),
            "no {triple} for {arch}"
        );
    }
    assert!(text.contains("rustup target add"));
    assert!(text.contains("--mount=type=cache"), "BuildKit cache mounts");
}

#[test]
fn final_stages_ship_one_binary_each_as_non_root() {
    let stages = stages();
    let builder = stages
        .iter()
        .find(|(_, i)| i.iter().any(|l| l.contains("cargo build")))
        .expect("a builder stage");
    assert!(
        builder.1[0].contains("rust:1.95-bookworm"),
        "{}",
        builder.1[0]
    );
    for (target, binary) in [
        ("adapter", "hypershift-adapter"),
        ("status-reporter", "status-reporter"),
    ] {
        let (_, stage) = stages
            .iter()
            .find(|(name, _)| name == target)
            .unwrap_or_else(|| panic!("no stage {target}"));
        assert!(
            stage[0].contains("gcr.io/distroless/static-debian12:nonroot"),
            "{target}: {}",
            stage[0]
        );
        let copies: Vec<&String> = stage.iter().filter(|i| i.starts_with("COPY")).collect();
        assert_eq!(copies.len(), 1, "{target}: one binary: {copies:?}");
        let dest = format!("/usr/local/bin/{binary}");
        assert!(
            copies[0].starts_with(&format!("COPY --from={} ", builder.0))
                && copies[0].ends_with(&format!("/{binary} {dest}")),
            "{target}: {}",
            copies[0]
        );
        let user = stage.iter().rfind(|i| i.starts_with("USER "));
        assert_eq!(
            user.map(String::as_str),
            Some("USER 65532:65532"),
            "{target}"
        );
        let entrypoint = stage.iter().find(|i| i.starts_with("ENTRYPOINT"));
        assert_eq!(
            entrypoint.map(String::as_str),
            Some(format!("ENTRYPOINT [\"{dest}\"]").as_str()),
            "{target}"
        );
    }
    let ignore = read(".dockerignore");
    assert!(
        ignore
            .lines()
            .any(|l| l.trim().trim_end_matches('/') == "target")
    );
    assert!(ignore.lines().any(|l| l.trim() == ".git"));
}

#[test]
fn release_profile_is_the_one_the_benchmarks_use() {
    let manifest = read("Cargo.toml");
    for (key, value) in [("lto", "true"), ("codegen-units", "1"), ("strip", "true")] {
        assert_eq!(
            toml_string(&manifest, "[profile.release]", key).as_deref(),
            Some(value),
            "[profile.release] {key}"
        );
    }
    // The benchmarks build with `cargo build --release` (docs/benchmarks.md when present, and the bench
    // binary's usage); the image must build with the same profile and no profile overrides.
    let sources: Vec<String> = [
        "docs/benchmarks.md",
        "tests/src/bin/bench-status-reporter.rs",
    ]
    .iter()
    .filter(|p| root().join(p).is_file())
    .map(|p| read(p))
    .collect();
    assert!(!sources.is_empty(), "no benchmark documentation found");
    for text in &sources {
        assert!(text.contains("cargo build --release"));
        assert!(!text.contains("--profile"));
    }
    assert!(cargo_commands().iter().all(|c| c.contains("--release")));
    assert!(
        !read("Dockerfile").contains("CARGO_PROFILE_"),
        "no profile overrides in the image build"
    );
}
