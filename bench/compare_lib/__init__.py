"""Helpers of bench/compare: corpora, peer runs, rotor runs, scoring and reports."""
