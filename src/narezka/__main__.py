"""``python -m narezka`` runs the command-line interface."""

from narezka.cli import main

main()
