//! The checked-in example dashboards under `examples/k8s/` are exactly what the
//! example generator produces. Set `CITRIAGE_REGENERATE_EXAMPLES=1` to rewrite them.

use std::path::PathBuf;

#[test]
fn bundled_examples_match_the_generator() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/k8s");
    let files = citriage_app::example_data::bundled();
    assert_eq!(files.len(), 6, "three days of two datasets");
    if std::env::var_os("CITRIAGE_REGENERATE_EXAMPLES").is_some() {
        for (name, text) in &files {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }
    for (name, text) in &files {
        let on_disk = std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!(&on_disk, text, "{name} differs from the generator; regenerate with CITRIAGE_REGENERATE_EXAMPLES=1");
    }
    // The embedded copies are the same files.
    for (name, text) in citriage_app::example_data::BUNDLED {
        assert_eq!(files.iter().find(|(n, _)| n == name).map(|(_, t)| t.as_str()), Some(*text));
    }
}
