//! Single-value serialization (spec: Appendix D). (Placeholder; being written.)
