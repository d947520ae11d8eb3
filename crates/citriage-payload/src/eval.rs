//! Evaluation against the synthetic world (placeholder until the world layout exists).
