"""Templates of generated repro scripts: real modules that ruff and the tests see.

Note [repro templates] (shapefuzz/repro/common.py) says how a script is built from them.
Importing one runs nothing: blocks are functions, harnesses run only under
`if __name__ == "__main__"`."""
