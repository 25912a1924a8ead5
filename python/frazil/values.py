"""Single-value serialization (spec: Appendix D) and hashing (Appendix B). Being written."""
