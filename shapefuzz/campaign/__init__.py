"""A budgeted campaign: generation on Hypothesis's engine (engine.py), one program through every
(system, config) and every oracle (evaluate.py), worker processes (workers.py), the CLI's run
(run.py), the shared example database and the progress line."""
