//! Murmur3 x86 32-bit, seed 0 (spec: Appendix B). (Placeholder; being written.)
