//! What a changed file is: product code, or something a payload failure can never
//! be traced to verbatim — vendored copies, generated code and manifests,
//! documentation, repository metadata and test fixtures. A symbol such as
//! `clusterNetwork` appears in every vendored copy of an API and in its generated
//! CRDs and OpenAPI specs; a match there proves nothing about the change.

use serde::{Deserialize, Serialize};

/// The kind of a changed path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PathKind {
    /// Code, scripts and manifests written by hand.
    Product,
    /// A copy of another project (`vendor/`, `third_party/`, `node_modules/`).
    Vendored,
    /// Produced by a tool (`zz_generated*`, `*.pb.go`, OpenAPI, CRD manifests,
    /// lock files, `go.sum`, fixtures under `testdata/`).
    Generated,
    /// Documentation (`docs/`, Markdown, AsciiDoc, reStructuredText).
    Docs,
    /// Repository metadata (`.github/`, `.tekton/`, `OWNERS`, bot configurations).
    Meta,
}

impl PathKind {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            PathKind::Product => "product",
            PathKind::Vendored => "vendored",
            PathKind::Generated => "generated",
            PathKind::Docs => "documentation",
            PathKind::Meta => "repository metadata",
        }
    }
}

const VENDOR_DIRS: &[&str] = &["vendor", "third_party", "third-party", "node_modules", "godeps", "_vendor"];

const META_DIRS: &[&str] =
    &[".github", ".tekton", ".gitlab", ".circleci", ".devcontainer", ".vscode", ".idea", ".cursor", ".claude"];

const META_FILES: &[&str] = &[
    ".coderabbit.yaml",
    ".coderabbit.yml",
    ".gitignore",
    ".gitattributes",
    ".snyk",
    "codecov.yml",
    ".codecov.yml",
    "renovate.json",
    ".golangci.yml",
    ".golangci.yaml",
    "license",
    "dco",
    "security_contacts",
];

const DOC_DIRS: &[&str] = &["docs", "doc", "documentation", "enhancements", "examples-docs"];

const DOC_EXTENSIONS: &[&str] = &[".md", ".markdown", ".adoc", ".asciidoc", ".rst"];

const GENERATED_PREFIXES: &[&str] = &["zz_generated", "zz_fixture"];

const GENERATED_INFIXES: &[&str] = &["_generated.", ".generated.", "openapi", "swagger"];

const GENERATED_SUFFIXES: &[&str] =
    &[".pb.go", ".pb.gw.go", "_pb2.py", ".gen.go", ".crd.yaml", ".crd.yml", ".snap", ".svg", ".png"];

/// Lock files, module files and bundled data: written by tools.
const GENERATED_FILES: &[&str] = &[
    "bindata.go",
    "go.sum",
    "go.mod",
    "go.work",
    "go.work.sum",
    "modules.txt",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "cargo.lock",
    "gopkg.lock",
    "poetry.lock",
    "requirements.cachito",
];

const GENERATED_DIRS: &[&str] = &[
    "generated",
    "zz_generated.crd-manifests",
    "zz_generated.featuregated-crd-manifests",
    "testdata",
    "__snapshots__",
    "__fixtures__",
    "openapi",
    "applyconfigurations",
    "clientset",
    "listers",
    "informers",
];

/// Classifies a repository-relative path.
pub fn path_kind(path: &str) -> PathKind {
    let p = path.trim_start_matches("./").trim_start_matches('/');
    let lower = p.to_ascii_lowercase();
    let segs: Vec<&str> = lower.split('/').collect();
    let base = segs.last().copied().unwrap_or("");
    let dirs = &segs[..segs.len().saturating_sub(1)];
    let has_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
    if has_dir(VENDOR_DIRS) {
        PathKind::Vendored
    } else if has_dir(META_DIRS) || base.starts_with("owners") || META_FILES.contains(&base) {
        PathKind::Meta
    } else if has_dir(DOC_DIRS)
        || DOC_EXTENSIONS.iter().any(|e| base.ends_with(e))
        || base.starts_with("readme")
        || base.starts_with("changelog")
    {
        PathKind::Docs
    } else if generated_name(base) || has_dir(GENERATED_DIRS) {
        PathKind::Generated
    } else {
        PathKind::Product
    }
}

/// A file name tools write: generated code, schemas, lock files, snapshots, images.
fn generated_name(base: &str) -> bool {
    GENERATED_PREFIXES.iter().any(|p| base.starts_with(p))
        || GENERATED_INFIXES.iter().any(|i| base.contains(i))
        || GENERATED_SUFFIXES.iter().any(|s| base.ends_with(s))
        || GENERATED_FILES.contains(&base)
}

/// True for paths whose lines may carry evidence of a change.
pub fn is_product(path: &str) -> bool {
    path_kind(path) == PathKind::Product
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(path_kind("vendor/github.com/openshift/api/config/v1/types_network.go"), PathKind::Vendored);
        assert_eq!(path_kind("staging/src/k8s.io/api/vendor/x/util.go"), PathKind::Vendored);
        assert_eq!(
            path_kind("operator/v1/zz_generated.crd-manifests/0000_70_network_01_networks-CustomNoUpgrade.crd.yaml"),
            PathKind::Generated
        );
        assert_eq!(path_kind("config/v1/zz_generated.deepcopy.go"), PathKind::Generated);
        assert_eq!(path_kind("openapi/generated_openapi/zz_generated.openapi.go"), PathKind::Generated);
        assert_eq!(path_kind("pkg/x/testdata/zz_fixture_TestA_deployment.yaml"), PathKind::Generated);
        assert_eq!(path_kind("go.sum"), PathKind::Generated);
        assert_eq!(path_kind("docs/content/how-to/disaster-recovery.md"), PathKind::Docs);
        assert_eq!(path_kind("README.md"), PathKind::Docs);
        assert_eq!(path_kind(".github/workflows/docs.yaml"), PathKind::Meta);
        assert_eq!(path_kind("OWNERS_ALIASES"), PathKind::Meta);
        assert_eq!(path_kind("pkg/operator/status.go"), PathKind::Product);
        assert_eq!(path_kind("cmd/cluster-authentication-operator-tests-ext/main.go"), PathKind::Product);
        assert_eq!(path_kind("test/e2e/util/util_metrics_proxy.go"), PathKind::Product);
        assert!(is_product("ci-operator/step-registry/ipi/install/install/ipi-install-install-commands.sh"));
    }
}
