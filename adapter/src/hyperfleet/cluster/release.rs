//! `release`: the release image, given or built from the version and architecture.

use super::names::SpecNames;
use crate::hyperfleet::spec::{Checker, Invalid, Read, Rule, choose, quoted};

/// Repository of OpenShift release images; the tag is `<openshift_version>-<arch suffix>`.
pub const RELEASE_REPOSITORY: &str = "quay.io/openshift-release-dev/ocp-release";

/// CPU architecture of the release payload, as named by release-image tag suffixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// `x86_64` (also accepted as `amd64`).
    X86_64,
    /// `aarch64` (also accepted as `arm64`, the NodePool spelling).
    Aarch64,
    /// The multi-architecture payload.
    Multi,
}

/// Every architecture by its tag suffix.
const TAGGED: [Architecture; 3] = [
    Architecture::X86_64,
    Architecture::Aarch64,
    Architecture::Multi,
];

impl Architecture {
    /// Parses the spec value; `amd64` and `arm64` are aliases.
    pub fn parse(s: &str) -> Option<Self> {
        let aliases = [
            ("amd64", Architecture::X86_64),
            ("arm64", Architecture::Aarch64),
        ];
        Self::from_tag_suffix(s).or_else(|| choose(&aliases, s))
    }

    /// The suffix release tags carry, e.g. `4.17.0-x86_64`.
    pub fn tag_suffix(self) -> &'static str {
        match self {
            Architecture::X86_64 => "x86_64",
            Architecture::Aarch64 => "aarch64",
            Architecture::Multi => "multi",
        }
    }

    fn from_tag_suffix(s: &str) -> Option<Self> {
        TAGGED.into_iter().find(|a| a.tag_suffix() == s)
    }
}

/// Words that, after the last `-` of a version, mean the version already names an architecture.
const ARCH_WORDS: [&str; 7] = [
    "x86_64", "aarch64", "multi", "amd64", "arm64", "ppc64le", "s390x",
];

/// The release tag for `version`: `version` itself when it already ends with an architecture
/// suffix (`4.17.0-aarch64`, `4.17.0-multi`), else `<version>-<suffix>`.
pub fn release_tag(version: &str, architecture: Architecture) -> String {
    if tag_architecture_word(version).is_some() {
        version.to_owned()
    } else {
        format!("{version}-{}", architecture.tag_suffix())
    }
}

fn tag_architecture_word(version: &str) -> Option<&str> {
    let (_, last) = version.rsplit_once('-')?;
    ARCH_WORDS.contains(&last).then_some(last)
}

const IMAGE: Rule = Rule::new(1..=253, || regex!(r"^[0-9A-Za-z_]+\S+$"))
    .expecting("a release image pullspec without whitespace, starting with a letter, digit or underscore (e.g. quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64)");
const VERSION: Rule = Rule::new(5..=100, || regex!(r"^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z._-]*)?$"))
    .expecting("an OpenShift version x.y.z, optionally with a pre-release or architecture suffix (4.17.0, 4.18.0-rc.1, 4.17.0-multi)");

/// The release image (given, or built from the version and architecture) → the release
/// pullspec, and the architecture. The nested shape has no architecture key: a version's suffix
/// names it, else x86_64.
pub(super) fn release(c: &mut Checker<'_>, names: &SpecNames) -> Read<(String, Architecture)> {
    let explicit = names
        .architecture
        .and_then(|field| Some((field, c.optional(field)?)));
    let architecture = match explicit {
        None => Ok(Architecture::X86_64),
        Some((_, a)) if let Some(architecture) = Architecture::parse(a) => Ok(architecture),
        Some((field, a)) => {
            let a = quoted(a);
            c.refuse(field, format!("{a} is not supported for GCP hosted clusters: expected x86_64 (alias amd64), aarch64 (alias arm64) or multi"))
        }
    };
    let (image_field, version_field) = (names.release_image, names.version);
    let release_image = c.optional(image_field);
    let version = match release_image {
        Some(_) => c.optional(version_field),
        None => {
            let expected = format!("an OpenShift version such as 4.17.0 (or set {image_field})");
            c.required(version_field, &expected).ok()
        }
    };
    let version_ok = version.is_none_or(|v| {
        c.check(version_field, v, &VERSION)
            && version_suffix_ok(c, names, v, explicit.and(architecture.ok()))
    });
    if let Some(image) = release_image {
        let image = c.checked(image_field, image, &IMAGE)?;
        return Ok((image.to_owned(), architecture?));
    }
    let (Some(version), true) = (version, version_ok) else {
        return Err(Invalid);
    };
    let architecture = architecture?;
    let image = format!(
        "{RELEASE_REPOSITORY}:{}",
        release_tag(version, architecture)
    );
    if image.len() > *IMAGE.len.end() {
        let image = quoted(&image);
        return c.refuse(
            version_field,
            format!("makes the release image {image} longer than 253 characters"),
        );
    }
    Ok((image, architecture))
}

/// A version that already ends in an architecture word must name a tag that exists and agree
/// with an explicitly given architecture.
fn version_suffix_ok(
    c: &mut Checker<'_>,
    names: &SpecNames,
    version: &str,
    explicit: Option<Architecture>,
) -> bool {
    let Some(word) = tag_architecture_word(version) else {
        return true;
    };
    let (version_field, shown) = (names.version, quoted(version));
    let Some(tagged) = Architecture::from_tag_suffix(word) else {
        let instead = match names.architecture {
            Some(field) => format!("give the bare version and set {field}"),
            None => format!(
                "give the bare version (x86_64) or set {}",
                names.release_image
            ),
        };
        c.violation(version_field, format!("{shown} ends in '-{word}', which is not a release tag suffix for GCP: use -x86_64, -aarch64 or -multi, or {instead}"));
        return false;
    };
    let (Some(arch), Some(field)) = (explicit.filter(|a| *a != tagged), names.architecture) else {
        return true;
    };
    let (arch, tagged) = (arch.tag_suffix(), tagged.tag_suffix());
    c.violation(field, format!("is {arch} but {version_field} {shown} already names {tagged}; make them agree or drop the suffix from {version_field}"));
    false
}
