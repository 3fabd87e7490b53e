"""Building test sets: from ground-truth pages, and from query logs (with a review step)."""
