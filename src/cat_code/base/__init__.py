"""The floor below both `cat_code.mcp` and `cat_code.tools`: what each needs and neither owns.

Files (one atomic write, one file lock, one same-file check, bounded reads, JSON with a depth
cap), the one safe-text helper for anything untrusted that is shown, and a YAML frontmatter
parser that refuses aliases. It imports nothing of cat_code.
"""
