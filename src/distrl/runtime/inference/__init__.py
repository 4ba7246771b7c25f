"""Acting for many workers from one model copy: dynamic batching and the Ray inference service
(docs/design.md §2.1)."""
