"""What runs each verb of the ``searchkit`` command: one module per verb (its parser is
``searchkit/cli/VERB.py``), its machinery imported at the top; loaded when the verb runs
(``searchkit.cli.dispatch``)."""
