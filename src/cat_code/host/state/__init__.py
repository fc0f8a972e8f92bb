"""What cat-code keeps between runs: ``$CAT_CODE_HOME`` and its files, settings, run records
(the pid-reuse-guarded process registry), the EOF memory, and checkpoints."""
