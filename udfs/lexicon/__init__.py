"""The lexicon stage: word translation lexicons (IBM model 1, dictionaries, bootstrapped from an archive's
confident page pairs), their knobs, readers of corpora and dictionaries, and the lexicon format verify-pairs and
export-bitext load. train-lexicon runs it."""
