"""Cases on disk: the case format with validation (corpus.py), replaying a case (replay.py),
promoting a finding into the corpus (promote.py), and the known upstream issues (known.py)."""
