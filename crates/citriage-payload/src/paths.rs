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

/// Classifies a repository-relative path.
pub fn path_kind(path: &str) -> PathKind {
    let p = path.trim_start_matches("./").trim_start_matches('/');
    let lower = p.to_ascii_lowercase();
    let segs: Vec<&str> = lower.split('/').collect();
    let base = segs.last().copied().unwrap_or("");
    let dirs = &segs[..segs.len().saturating_sub(1)];
    let has_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
    if has_dir(&["vendor", "third_party", "third-party", "node_modules", "godeps", "_vendor"]) {
        return PathKind::Vendored;
    }
    if has_dir(&[
        ".github",
        ".tekton",
        ".gitlab",
        ".circleci",
        ".devcontainer",
        ".vscode",
        ".idea",
        ".cursor",
        ".claude",
    ]) || base.starts_with("owners")
        || matches!(
            base,
            ".coderabbit.yaml"
                | ".coderabbit.yml"
                | ".gitignore"
                | ".gitattributes"
                | ".snyk"
                | "codecov.yml"
                | ".codecov.yml"
                | "renovate.json"
                | ".golangci.yml"
                | ".golangci.yaml"
                | "license"
                | "dco"
                | "security_contacts"
        )
    {
        return PathKind::Meta;
    }
    if has_dir(&["docs", "doc", "documentation", "enhancements", "examples-docs"])
        || [".md", ".markdown", ".adoc", ".asciidoc", ".rst"].iter().any(|e| base.ends_with(e))
        || base.starts_with("readme")
        || base.starts_with("changelog")
    {
        return PathKind::Docs;
    }
    let generated_base = base.starts_with("zz_generated")
        || base.starts_with("zz_fixture")
        || base.contains("_generated.")
        || base.contains(".generated.")
        || base.ends_with(".pb.go")
        || base.ends_with(".pb.gw.go")
        || base.ends_with("_pb2.py")
        || base.ends_with(".gen.go")
        || base == "bindata.go"
        || base.ends_with(".crd.yaml")
        || base.ends_with(".crd.yml")
        || base.contains("openapi")
        || base.contains("swagger")
        || matches!(
            base,
            "go.sum"
                | "go.mod"
                | "go.work"
                | "go.work.sum"
                | "modules.txt"
                | "package-lock.json"
                | "yarn.lock"
                | "pnpm-lock.yaml"
                | "cargo.lock"
                | "gopkg.lock"
                | "poetry.lock"
                | "requirements.cachito"
        )
        || base.ends_with(".snap")
        || base.ends_with(".svg")
        || base.ends_with(".png");
    if generated_base
        || has_dir(&[
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
        ])
    {
        return PathKind::Generated;
    }
    PathKind::Product
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
