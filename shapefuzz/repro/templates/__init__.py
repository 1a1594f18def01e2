"""Templates of generated repro scripts: real modules that ruff and the tests see (Note [repro
templates] in shapefuzz/repro/common.py). Importing one runs nothing: blocks are functions,
harnesses run only under `if __name__ == "__main__"`."""
